#include "quant/qdq_import.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/fake_quant.h"
#include "quant/graph_edit.h"
#include "quant/param_layout.h"

namespace ptq::quant {
namespace {

constexpr const char* kHorizonDomain = "horizon";
constexpr int64_t kHorizonOpset = 1;
constexpr size_t kNamesShown = 8;  // nodes named in one warning before "and N more"

bool qdq_domain(const ir::Node& n) { return n.domain.empty() || n.domain == "com.microsoft"; }

// The qtype of an integer zero-point / weight type, or "" when the type is not one we quantize to.
std::string qtype_of(DType t) {
  switch (t) {
    case DType::Int4: return "int4";
    case DType::UInt4: return "uint4";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    default: return "";
  }
}

// One quantizer's parameters, read from a QuantizeLinear or DequantizeLinear node.
struct Params {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;  // empty: absent (0)
  DType type = DType::UInt8;         // the quantized type
  int64_t axis = 1;                  // meaningful only when per_axis
  bool per_axis = false;             // per axis or blocked
  int64_t block = 0;                 // > 0: blocked (opset 21 block_size), the scale tensor's shape below
  Shape scale_shape;
};

bool same(const Params& a, const Params& b) {
  auto zps = [](const Params& p) {
    return p.zero_points.empty() ? std::vector<int64_t>(p.scales.size(), 0) : p.zero_points;
  };
  return a.scales == b.scales && zps(a) == zps(b) && a.type == b.type && a.per_axis == b.per_axis &&
         (!a.per_axis || a.axis == b.axis) && a.block == b.block && (a.block == 0 || a.scale_shape == b.scale_shape);
}

class Importer {
 public:
  // Rewrites `graph`: the model's main graph, or one of its subgraphs (`subgraph`), whose quantizers
  // become calibration nodes of that subgraph (§1.13).
  Importer(ir::Model& model, ir::Graph& graph, bool subgraph)
      : model_(model), g_(graph), subgraph_(subgraph), names_(g_) {
    for (const auto& n : g_.nodes) node_names_.insert(n.name);
  }

  QdqImportSummary run() {
    const size_t count = g_.nodes.size();
    replacements_.assign(count, std::nullopt);
    // QuantizeLinear -> the DequantizeLinear nodes reading its output.
    std::map<int, std::vector<int>> pairs;
    std::vector<int> weight_dqs;
    for (size_t i = 0; i < count; ++i) {
      const ir::Node& n = g_.nodes[i];
      if (!is_dequantize_linear(n) || n.inputs.empty() || n.inputs[0] < 0) continue;
      const int x = n.inputs[0];
      const int p = g_.value(x).producer;
      if (p >= 0 && is_quantize_linear(g_.node(p))) pairs[p].push_back(static_cast<int>(i));
      else if (g_.constant(x)) weight_dqs.push_back(static_cast<int>(i));
      // A DequantizeLinear of a computed integer tensor (an integer model input): runs as is.
    }
    for (const auto& [q, dqs] : pairs) import_pair(q, dqs);
    for (int dq : weight_dqs) import_weight(dq);
    for (size_t i = 0; i < count; ++i) {
      const ir::Node& n = g_.nodes[i];
      if (is_quantize_linear(n) && !replacements_[i] && !pairs.count(static_cast<int>(i)))
        leave(n.name, "its output is not dequantized (an integer-only operator reads it)");
    }
    if (!changed_) {
      report();
      return summary_;
    }
    std::vector<ir::Node> nodes;
    for (size_t i = 0; i < count; ++i) {
      if (!replacements_[i]) {
        nodes.push_back(std::move(g_.nodes[i]));
        continue;
      }
      for (auto& r : *replacements_[i]) nodes.push_back(std::move(r));
    }
    g_.nodes = std::move(nodes);
    ir::finalize_graph(g_, subgraph_);
    if (model_.opset(kHorizonDomain) == 0) edit::set_opset(model_, kHorizonDomain, kHorizonOpset);
    report();
    return summary_;
  }

 private:
  const Tensor* constant(int v) const { return edit::constant_through_identity(g_, v); }

  // The parameters of Q/DQ node `n`, or a reason they cannot be mapped. `input_type` is the quantized
  // type a DequantizeLinear without a zero point has (its input's); a QuantizeLinear's comes from its
  // zero point or `output_dtype` (uint8 without either).
  std::optional<Params> params(const ir::Node& n, std::string& why, DType input_type = DType::Undefined) {
    if (!qdq_domain(n)) {
      why = "domain '" + n.domain + "' is neither ai.onnx nor com.microsoft";
      return std::nullopt;
    }
    if (n.inputs.size() < 2 || n.inputs[1] < 0) {
      why = "it has no scale input";
      return std::nullopt;
    }
    const Tensor* scale = constant(n.inputs[1]);
    if (!scale) {
      why = "its scale is not a constant";
      return std::nullopt;
    }
    if (scale->dtype() != DType::Float) {
      why = "its scale is " + dtype_name(scale->dtype()) + " (float32 scales are mapped)";
      return std::nullopt;
    }
    Params p;
    p.block = n.opset >= 21 ? n.attr_int("block_size", 0) : 0;  // as the kernels read it (ops/qdq.cpp)
    check(p.block >= 0, n.op_type + " '" + n.name + "': attribute 'block_size' is " + std::to_string(p.block) +
                            " (a block size is positive, or 0 for no blocks)");
    if (p.block > 0) {
      check(scale->rank() >= 1, n.op_type + " '" + n.name + "': blocked quantization (block_size " +
                                    std::to_string(p.block) + ") needs a scale of the input's rank, got a scalar");
      p.scale_shape = scale->shape();
    }
    p.scales = scale->to_float_vector();
    for (float s : p.scales)
      if (!(std::isfinite(s) && s > 0.0f)) {
        why = "its scale holds " + std::to_string(s) + ", not a positive finite number";
        return std::nullopt;
      }
    const bool has_zp = n.inputs.size() > 2 && n.inputs[2] >= 0;
    if (has_zp) {
      const Tensor* zp = constant(n.inputs[2]);
      if (!zp) {
        why = "its zero point is not a constant";
        return std::nullopt;
      }
      check(p.block == 0 || zp->shape() == scale->shape(), n.op_type + " '" + n.name + "': its zero point " +
                                                               shape_str(zp->shape()) + " and its blocked scale " +
                                                               shape_str(scale->shape()) + " differ in shape");
      if (zp->numel() != scale->numel()) {
        why = "its zero point has " + std::to_string(zp->numel()) + " values for " + std::to_string(scale->numel()) +
              " scales";
        return std::nullopt;
      }
      p.type = zp->dtype();
      p.zero_points = zp->to_int64_vector();
    } else if (is_dequantize_linear(n)) {
      p.type = input_type;  // output_dtype of a DequantizeLinear is its float output's type
    } else if (const int64_t requested = n.attr_int("output_dtype", 0); requested != 0) {
      p.type = static_cast<DType>(requested);
    }
    if (qtype_of(p.type).empty()) {
      why = "its quantized type is " +
            (dtype_supported(static_cast<int32_t>(p.type)) ? dtype_name(p.type)
                                                           : "ONNX type " + std::to_string(static_cast<int>(p.type))) +
            " (int4, uint4, int8, uint8, int16 and uint16 are mapped)";
      return std::nullopt;
    }
    p.per_axis = p.scales.size() > 1 || p.block > 0;
    p.axis = n.attr_int("axis", 1);
    return p;
  }

  // Normalises a per-axis or blocked parameter set's axis against the quantized tensor's rank (when
  // known; a blocked scale has that rank itself) and checks a blocked scale's shape: the tensor's,
  // with ceil(D / block_size) along the axis. A blocked scale that does not fit is an error (the
  // model breaks the operator's definition); other mismatches leave the node as it is.
  bool check_axis(Params& p, int value, const ir::Node& n, std::string& why) {
    if (!p.per_axis) return true;
    const Tensor* t = g_.constant(value);
    const ir::ValueInfo& info = g_.value(value).info;
    const bool known =
        t || (info.has_shape && std::all_of(info.dims.begin(), info.dims.end(), [](int64_t d) { return d >= 0; }));
    int64_t rank = t ? static_cast<int64_t>(t->rank()) : (info.has_shape ? static_cast<int64_t>(info.dims.size()) : -1);
    const std::string where = n.op_type + " '" + n.name + "'";
    if (p.block > 0) {
      const int64_t scale_rank = static_cast<int64_t>(p.scale_shape.size());
      check(rank < 0 || rank == scale_rank, where + ": its blocked scale " + shape_str(p.scale_shape) + " has rank " +
                                                std::to_string(scale_rank) + ", its input rank " +
                                                std::to_string(rank));
      rank = scale_rank;
    }
    if (rank < 0) return true;  // checked when it runs (calibration.cpp channel_map)
    if (p.axis < -rank || p.axis >= rank) {
      why = "axis " + std::to_string(p.axis) + " is out of range for rank " + std::to_string(rank);
      check(p.block == 0, where + ": " + why);
      return false;
    }
    if (p.axis < 0) p.axis += rank;
    if (p.block > 0 && known) {
      const Shape shape = t ? t->shape() : Shape(info.dims.begin(), info.dims.end());
      const Shape expected = blocked_param_shape(shape, p.axis, p.block);
      check(p.scale_shape == expected, where + ": its blocked scale " + shape_str(p.scale_shape) +
                                           " does not fit its input " + shape_str(shape) + " with block_size " +
                                           std::to_string(p.block) + " along axis " + std::to_string(p.axis) +
                                           " (expected " + shape_str(expected) + ": the input's shape with ceil(" +
                                           std::to_string(shape[static_cast<size_t>(p.axis)]) + " / " +
                                           std::to_string(p.block) + ") along the axis)");
    }
    return true;
  }

  // A ConvTranspose weight's scales are indexed by output channel (axis 1) in the calibration node.
  bool conv_transpose_ok(const Params& p, int out_value, bool weight, std::string& why) {
    if (!weight || !p.per_axis) return true;
    for (int c : g_.value(out_value).consumers)
      if (g_.node(c).op_type == "ConvTranspose" && p.axis != 1) {
        why = "a ConvTranspose weight quantized along axis " + std::to_string(p.axis) + " (axis 1 is mapped)";
        return false;
      }
    return true;
  }

  // The calibration node's name: the quantized tensor's, unless a node already has that name.
  std::string calibration_name(const std::string& tensor) {
    std::string name = tensor;
    for (int k = 1; node_names_.count(name); ++k) name = tensor + "_" + std::to_string(k);
    node_names_.insert(name);
    return name;
  }

  ir::Node calibration_node(const std::string& name, const std::string& tensor, int input, int output, const Params& p,
                            bool weight, std::vector<std::string> sources) {
    std::vector<ir::Attribute> attrs;
    attrs.push_back(edit::attr_string("qtype", qtype_of(p.type)));
    attrs.push_back(edit::attr_string("switch", "ON"));
    attrs.push_back(edit::attr_int("constant", 2));
    attrs.push_back(edit::attr_floats("scales", p.scales));
    attrs.push_back(edit::attr_ints("zero_point", p.zero_points.empty() ? std::vector<int64_t>(1, 0) : p.zero_points));
    if (p.per_axis) attrs.push_back(edit::attr_int("axis", p.axis));
    if (p.block > 0) attrs.push_back(edit::attr_int("block_size", p.block));
    ir::Attribute info;
    info.name = "info_strings";
    info.type = ir::AttrType::Strings;
    info.strings = {weight ? "weight" : "feature"};
    attrs.push_back(std::move(info));
    ir::Attribute qdq;
    qdq.name = "qdq_nodes";
    qdq.type = ir::AttrType::Strings;
    qdq.strings = std::move(sources);
    attrs.push_back(std::move(qdq));
    attrs.push_back(edit::attr_string("qdq_tensor", tensor));
    const int64_t opset = model_.opset(kHorizonDomain) ? model_.opset(kHorizonDomain) : kHorizonOpset;
    return edit::make_node(name, "HzCalibration", kHorizonDomain, {input}, {output}, std::move(attrs),
                           static_cast<int>(opset));
  }

  void import_pair(int q, const std::vector<int>& dqs) {
    const ir::Node& qn = g_.node(q);
    const std::string where = "QuantizeLinear '" + qn.name + "'";
    if (qn.inputs.empty() || qn.inputs[0] < 0 || qn.outputs.empty() || qn.outputs[0] < 0)
      return leave(qn.name, "it has no input or output");
    const int x = qn.inputs[0], qv = qn.outputs[0];
    const ir::Value& quantized = g_.value(qv);
    if (quantized.is_graph_output) return leave(qn.name, "its integer output is a graph output");
    for (int c : quantized.consumers)
      if (std::find(dqs.begin(), dqs.end(), c) == dqs.end())
        return leave(qn.name,
                     "its integer output is also read by '" + g_.node(c).name + "' (" + g_.node(c).op_type + ")");
    std::string why;
    std::optional<Params> p = params(qn, why);
    if (!p) return leave(qn.name, why);
    if (qn.opset >= 19 && qn.attr_int("saturate", 1) != 1) return leave(qn.name, "attribute 'saturate' is 0");
    if (!check_axis(*p, x, qn, why)) return leave(qn.name, why);
    const bool weight = g_.constant(x) != nullptr;
    if (weight && g_.constant(x)->dtype() != DType::Float)
      return leave(qn.name, "it quantizes a " + dtype_name(g_.constant(x)->dtype()) + " constant (float32 is mapped)");
    std::vector<std::string> sources = {qn.name};
    for (int d : dqs) {
      const ir::Node& dn = g_.node(d);
      std::optional<Params> dp = params(dn, why, p->type);
      if (!dp) return leave(dn.name, why);
      if (!check_axis(*dp, x, dn, why)) return leave(dn.name, why);
      if (!same(*p, *dp)) return leave(dn.name, "its scale, zero point or axis differ from those of " + where);
      const int64_t out_type = dn.opset >= 21 ? dn.attr_int("output_dtype", 0) : 0;
      if (out_type != 0 && out_type != static_cast<int64_t>(DType::Float))
        return leave(dn.name, "it outputs ONNX type " + std::to_string(out_type) + " (float32 is mapped)");
      if (dn.outputs.empty() || dn.outputs[0] < 0) return leave(dn.name, "it has no output");
      if (!conv_transpose_ok(*p, dn.outputs[0], weight, why)) return leave(dn.name, why);
      sources.push_back(dn.name);
    }
    const int y = g_.node(dqs[0]).outputs[0];
    std::vector<ir::Node> nodes = {
        calibration_node(calibration_name(g_.value(x).name), g_.value(x).name, x, y, *p, weight, sources)};
    replacements_[static_cast<size_t>(q)] = std::move(nodes);
    replacements_[static_cast<size_t>(dqs[0])] = std::vector<ir::Node>{};
    for (size_t k = 1; k < dqs.size(); ++k) {
      const ir::Node& dn = g_.node(dqs[k]);
      replacements_[static_cast<size_t>(dqs[k])] = std::vector<ir::Node>{
          edit::make_node(dn.name, "Identity", "", {y}, {dn.outputs[0]}, {}, static_cast<int>(model_.opset("")))};
    }
    (weight ? summary_.weights : summary_.activations)++;
    changed_ = true;
  }

  void import_weight(int d) {
    const ir::Node& dn = g_.node(d);
    const int w = dn.inputs[0];
    const Tensor stored = *g_.constant(w);  // shares the data; the pointer dies when values grow
    std::string why;
    if (dn.outputs.empty() || dn.outputs[0] < 0) return leave(dn.name, "it has no output");
    const int y = dn.outputs[0];
    if (!qdq_domain(dn)) return leave(dn.name, "domain '" + dn.domain + "' is neither ai.onnx nor com.microsoft");
    const int64_t out_type = dn.opset >= 21 ? dn.attr_int("output_dtype", 0) : 0;
    if (out_type != 0 && out_type != static_cast<int64_t>(DType::Float))
      return leave(dn.name, "it outputs ONNX type " + std::to_string(out_type) + " (float32 is mapped)");
    const bool bias = stored.dtype() == DType::Int32;
    std::optional<Params> p;
    if (bias) {
      // int32 (a bias): parameters as for a quantizer, the type being the input's.
      Params b;
      const Tensor* scale = dn.inputs.size() > 1 && dn.inputs[1] >= 0 ? constant(dn.inputs[1]) : nullptr;
      if (!scale || scale->dtype() != DType::Float) return leave(dn.name, "its scale is not a float32 constant");
      if (dn.opset >= 21 && dn.attr_int("block_size", 0) != 0)
        return leave(dn.name, "blocked quantization of an int32 input is not mapped");
      b.scales = scale->to_float_vector();
      b.per_axis = b.scales.size() > 1;
      b.axis = dn.attr_int("axis", 1);
      if (dn.inputs.size() > 2 && dn.inputs[2] >= 0) {
        const Tensor* zp = constant(dn.inputs[2]);
        if (!zp) return leave(dn.name, "its zero point is not a constant");
        b.zero_points = zp->to_int64_vector();
        if (std::any_of(b.zero_points.begin(), b.zero_points.end(), [](int64_t z) { return z != 0; }))
          return leave(dn.name, "an int32 input needs a zero point of 0");
      }
      p = b;
    } else {
      p = params(dn, why, stored.dtype());
      if (!p) return leave(dn.name, why);
      if (p->type != stored.dtype())
        return leave(dn.name,
                     "its zero point is " + dtype_name(p->type) + " but its input is " + dtype_name(stored.dtype()));
    }
    if (!check_axis(*p, w, dn, why)) return leave(dn.name, why);
    if (!conv_transpose_ok(*p, y, !bias, why)) return leave(dn.name, why);
    std::optional<Tensor> values = dequantize(stored, *p, why);
    if (!values) return leave(dn.name, why);
    const std::string tensor = g_.value(w).name;
    const int dequantized = edit::add_initializer(g_, names_.fresh(tensor + "_dequantized"), std::move(*values));
    if (bias) {
      // Folded: the float values feed the consumers directly.
      replacements_[static_cast<size_t>(d)] = std::vector<ir::Node>{
          edit::make_node(dn.name, "Identity", "", {dequantized}, {y}, {}, static_cast<int>(model_.opset("")))};
      summary_.folded++;
    } else {
      replacements_[static_cast<size_t>(d)] = std::vector<ir::Node>{
          calibration_node(calibration_name(tensor), tensor, dequantized, y, *p, true, {dn.name})};
      summary_.weights++;
    }
    changed_ = true;
  }

  // (q - zp) * s in float32 (quant/fake_quant.h), as DequantizeLinear computes it: exact up to the
  // product, the values being at most 16-bit integers, or int32 with a zero point of 0.
  static std::optional<Tensor> dequantize(const Tensor& q, const Params& p, std::string& why) {
    const std::vector<int64_t> v = q.to_int64_vector();
    std::vector<float> out(v.size());
    const ParamLayout layout = p.per_axis ? axis_layout(q.shape(), p.axis, p.block) : per_tensor_layout(q.numel());
    if (layout.count() != static_cast<int64_t>(p.scales.size())) {
      why = std::to_string(p.scales.size()) + " scales for " + std::to_string(layout.channels) +
            " channels along axis " + std::to_string(p.axis) + " of " + shape_str(q.shape());
      return std::nullopt;
    }
    for_each_param_run(layout, [&](int64_t offset, int64_t k, int64_t step) {
      for (int64_t i = 0; i < layout.inner; ++i, k += step) {
        const size_t e = static_cast<size_t>(offset + i), c = static_cast<size_t>(k);
        const int64_t zp = p.zero_points.empty() ? 0 : p.zero_points[c];
        out[e] = dequantize_value(static_cast<float>(v[e]), static_cast<float>(zp), p.scales[c]);
      }
    });
    return Tensor::from_floats(q.shape(), out);
  }

  void leave(const std::string& node, const std::string& why) {
    left_.push_back("'" + node + "': " + why);
    summary_.left++;
  }

  void report() {
    if (left_.empty()) return;
    std::string text =
        "QuantizeLinear/DequantizeLinear nodes kept as they are (not switchable quantizers: they stay "
        "quantized in every run, the float reference included): ";
    for (size_t i = 0; i < left_.size() && i < kNamesShown; ++i) text += (i ? "; " : "") + left_[i];
    if (left_.size() > kNamesShown) text += "; and " + std::to_string(left_.size() - kNamesShown) + " more";
    model_.warnings.push_back(text);
  }

  ir::Model& model_;
  ir::Graph& g_;
  bool subgraph_;
  edit::NameSet names_;
  std::set<std::string> node_names_;
  std::vector<std::optional<std::vector<ir::Node>>> replacements_;
  std::vector<std::string> left_;
  QdqImportSummary summary_;
  bool changed_ = false;
};

}  // namespace

bool is_quantize_linear(const ir::Node& n) { return n.op_type == "QuantizeLinear"; }
bool is_dequantize_linear(const ir::Node& n) { return n.op_type == "DequantizeLinear"; }

namespace {

bool has_qdq_nodes(const ir::Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [](const ir::Node& n) { return is_quantize_linear(n) || is_dequantize_linear(n); });
}

void add_to(QdqImportSummary& total, const QdqImportSummary& part) {
  total.activations += part.activations;
  total.weights += part.weights;
  total.folded += part.folded;
  total.left += part.left;
}

// The subgraphs of `g`'s nodes at any depth, innermost first: a subgraph is finalized before the graph
// holding it, whose node reads what it reads from outside (ir::finalize_graph).
void import_subgraphs(ir::Model& model, ir::Graph& g, QdqImportSummary& total) {
  for (ir::Node& node : g.nodes)
    for (ir::Attribute& a : node.attributes) {
      std::vector<ir::Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (const auto& sub : a.graphs) subs.push_back(sub.get());
      for (ir::Graph* sub : subs) {
        import_subgraphs(model, *sub, total);
        if (has_qdq_nodes(*sub)) add_to(total, Importer(model, *sub, true).run());
      }
    }
}

}  // namespace

QdqImportSummary import_qdq(ir::Model& model) {
  QdqImportSummary total;
  import_subgraphs(model, model.graph, total);
  if (has_qdq_nodes(model.graph)) add_to(total, Importer(model, model.graph, false).run());
  return total;
}

}  // namespace ptq::quant
