#include "config/qdq_export.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/error.h"
#include "quant/calibration.h"
#include "quant/fake_quant.h"
#include "quant/graph_edit.h"
#include "quant/hz_to_qdq.h"
#include "quant/param_layout.h"
#include "quant/qdq_import.h"
#include "quant/qoperator_rewrite.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

namespace ptq::quant {
namespace {

constexpr const char* kMicrosoft = "com.microsoft";
constexpr int64_t kSixteenBitOpset = 21;  // ai.onnx QuantizeLinear/DequantizeLinear take int16/uint16 from here

DType integer_dtype(const QType& q) {
  if (q.name == "int4") return DType::Int4;
  if (q.name == "uint4") return DType::UInt4;
  if (q.name == "int8") return DType::Int8;
  if (q.name == "uint8") return DType::UInt8;
  if (q.name == "int16") return DType::Int16;
  if (q.name == "uint16") return DType::UInt16;
  fail("qdq-onnx: qtype '" + q.name + "' has no QuantizeLinear form here (int4, uint4, int8, uint8, int16 and uint16 are written)");
}

// An integer tensor of `dtype` holding `values` (already within the type's range).
Tensor integer_tensor(DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
      case DType::Int8:
      case DType::Int4: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(values[i]); break;
      case DType::UInt8:
      case DType::UInt4: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(values[i]); break;
      case DType::Int16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(values[i]); break;
      case DType::UInt16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(values[i]); break;
      default: fail("qdq-onnx: internal: integer tensor of " + dtype_name(dtype));
    }
  }
  return t;
}

// Is a value of this name read by a node of a subgraph (an If/Loop body reads outer tensors by name)?
bool read_in_subgraph(const ir::Graph& g, const std::string& name, bool nested = false) {
  for (const auto& n : g.nodes) {
    if (nested)
      for (int in : n.inputs)
        if (in >= 0 && g.value(in).name == name) return true;
    for (const auto& a : n.attributes) {
      if (a.g && read_in_subgraph(*a.g, name, true)) return true;
      for (const auto& sub : a.graphs)
        if (sub && read_in_subgraph(*sub, name, true)) return true;
    }
  }
  return false;
}

// One zero point per channel (derive_zero_points gives a symmetric quantizer's single 0).
std::vector<int64_t> per_channel(const std::vector<int64_t>& zps, size_t channels) {
  if (zps.size() != 1 || channels <= 1) return zps;
  return std::vector<int64_t>(channels, zps[0]);
}

// The configuration's state of one quantizer, when it differs from the stored one.
struct Change {
  const CalibrationSpec* spec = nullptr;  // as the configuration runs it
  size_t index = 0;                       // of the calibration node
  bool off = false;
  QType qtype;
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  const Tensor* dequantized = nullptr;  // a weight stored as integers: its float values (executor's)
  std::string tensor;                   // the quantized tensor's name in the file
};

class Writer {
 public:
  explicit Writer(ir::Model& model) : m_(model), g_(model.graph), names_(g_) {}

  void apply(const Change& c) {
    const CalibrationSpec& spec = *c.spec;
    std::vector<int> nodes;
    for (const auto& name : spec.qdq_nodes) {
      const int id = g_.find_node(name);
      check(id >= 0, "qdq-onnx: quantizer '" + spec.node_name + "': node '" + name + "' is not in the model's main graph");
      nodes.push_back(id);
    }
    const bool pair = is_quantize_linear(g_.node(nodes[0]));
    if (c.off) return pair ? remove_pair(nodes) : remove_weight(nodes[0], c);
    requantize(nodes, pair, c);
  }

  // Drops removed nodes and initializers nothing reads any more (those the edits freed).
  void finish() {
    std::vector<ir::Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!removed_.count(static_cast<int>(i))) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
    ir::finalize_graph(g_);
    // Identity/Constant chains that fed only removed parameters (torch shares zero points that way).
    for (bool again = true; again;) {
      std::vector<uint8_t> dead(g_.nodes.size(), 0);
      again = false;
      for (size_t i = 0; i < g_.nodes.size(); ++i) {
        const ir::Node& n = g_.nodes[i];
        if (n.op_type != "Identity" && n.op_type != "Constant") continue;
        dead[i] = std::all_of(n.outputs.begin(), n.outputs.end(), [&](int o) {
          return o < 0 || (g_.value(o).consumers.empty() && !g_.value(o).is_graph_output && freed_.count(g_.value(o).name));
        });
        if (!dead[i]) continue;
        again = true;
        for (int in : n.inputs)
          if (in >= 0) freed_.insert(g_.value(in).name);
      }
      if (!again) break;
      std::vector<ir::Node> live;
      for (size_t i = 0; i < g_.nodes.size(); ++i)
        if (!dead[i]) live.push_back(std::move(g_.nodes[i]));
      g_.nodes = std::move(live);
      ir::finalize_graph(g_);
    }
    for (auto& v : g_.values) {
      if (!freed_.count(v.name) || !v.consumers.empty() || v.is_graph_output || v.is_graph_input || v.producer >= 0) continue;
      if (v.initializer) v.initializer.reset();
      v.info = ir::ValueInfo{};
      v.info.name = v.name;
    }
    for (auto& v : g_.values)
      if (v.producer < 0 && !v.initializer && !v.is_graph_input && v.consumers.empty() && !v.is_graph_output) {
        v.info = ir::ValueInfo{};
        v.info.name = v.name;
      }
  }

 private:
  void free_inputs(const ir::Node& n, size_t from) {
    for (size_t k = from; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0) freed_.insert(g_.value(n.inputs[k]).name);
  }

  // Every main-graph reader of `from` reads `to`; a graph output (or a subgraph's read) keeps its
  // name through an Identity named `keep_name`.
  void rewire(int from, int to, const std::string& keep_name, int& removed_node) {
    const ir::Value& v = g_.value(from);
    // Every node, not the value's consumer list: an earlier removal may have rewired readers to it.
    for (auto& n : g_.nodes)
      for (int& in : n.inputs)
        if (in == from) in = to;
    if (v.is_graph_output || read_in_subgraph(g_, v.name)) {
      g_.nodes[static_cast<size_t>(removed_node)] =
          edit::make_node(keep_name, "Identity", "", {to}, {from}, {}, static_cast<int>(m_.opset("")));
      return;  // the node is replaced, not removed
    }
    removed_.insert(removed_node);
  }

  void remove_pair(const std::vector<int>& nodes) {
    const ir::Node& q = g_.node(nodes[0]);
    const int x = q.inputs[0];
    free_inputs(q, 1);
    removed_.insert(nodes[0]);
    freed_.insert(g_.value(q.outputs[0]).name);
    for (size_t k = 1; k < nodes.size(); ++k) {
      int d = nodes[k];
      const ir::Node& dq = g_.node(d);
      free_inputs(dq, 0);
      const int y = dq.outputs[0];
      const std::string name = dq.name;
      rewire(y, x, name, d);
    }
  }

  void remove_weight(int d, const Change& c) {
    const ir::Node& dq = g_.node(d);
    check(c.dequantized != nullptr, "qdq-onnx: quantizer '" + c.spec->node_name + "' has no constant weight values");
    free_inputs(dq, 0);
    // The DequantizeLinear's output becomes the initializer of the dequantized values.
    ir::Value& y = g_.values[static_cast<size_t>(dq.outputs[0])];
    y.initializer = *c.dequantized;
    // The writer lists an initializer with a declared type among the graph inputs (as the reader
    // found those): this one is not an input.
    y.info = ir::ValueInfo{};
    y.info.name = y.name;
    removed_.insert(d);
  }

  void requantize(const std::vector<int>& nodes, bool pair, const Change& c) {
    const CalibrationSpec& spec = *c.spec;
    const std::string base = c.tensor;
    // A blocked quantizer keeps its parameter tensor's shape (the stored scale's), per axis 1-D.
    Shape pshape = spec.scales.size() > 1 ? Shape{static_cast<int64_t>(c.scales.size())} : Shape{};
    if (spec.block_size > 0) {
      const Tensor* stored = edit::constant_through_identity(g_, g_.node(nodes[0]).inputs[1]);
      check(stored != nullptr, "qdq-onnx: quantizer '" + spec.node_name + "': its blocked scale is not a constant");
      pshape = stored->shape();
    }
    const DType zdtype = integer_dtype(c.qtype);
    const int s = edit::add_initializer(g_, names_.fresh(base + "_" + c.qtype.name + "_scale"), Tensor::from_floats(pshape, c.scales));
    const int z = edit::add_initializer(g_, names_.fresh(base + "_" + c.qtype.name + "_zero_point"), integer_tensor(zdtype, pshape, c.zero_points));
    const bool sixteen = zdtype == DType::Int16 || zdtype == DType::UInt16;
    if (!pair) {
      check(c.dequantized != nullptr, "qdq-onnx: quantizer '" + spec.node_name + "' has no constant weight values");
      // A weight stored as integers: stored again in the new type.
      const ir::Node& dq = g_.node(nodes[0]);
      free_inputs(dq, 0);
      const Tensor& w = *c.dequantized;
      const std::vector<float> v = w.to_float_vector();
      std::vector<int64_t> q(v.size());
      const ParamLayout layout =
          c.scales.size() > 1 || spec.block_size > 0 ? axis_layout(w.shape(), spec.axis, spec.block_size) : per_tensor_layout(w.numel());
      const float qmin = static_cast<float>(c.qtype.qmin()), qmax = static_cast<float>(c.qtype.qmax());
      for_each_param_run(layout, [&](int64_t offset, int64_t k, int64_t step) {
        for (int64_t i = 0; i < layout.inner; ++i, k += step) {
          const size_t e = static_cast<size_t>(offset + i), ch = static_cast<size_t>(k);
          q[e] = static_cast<int64_t>(quantize_value(v[e], c.scales[ch], static_cast<float>(c.zero_points[ch]), qmin, qmax));
        }
      });
      const int wq = edit::add_initializer(g_, names_.fresh(base + "_" + c.qtype.name), integer_tensor(zdtype, w.shape(), q));
      g_.nodes[static_cast<size_t>(nodes[0])].inputs[0] = wq;
    }
    for (int id : nodes) {
      ir::Node& n = g_.nodes[static_cast<size_t>(id)];
      if (pair) free_inputs(n, 1);
      n.inputs.resize(3);
      n.inputs[1] = s;
      n.inputs[2] = z;
      // Only `axis` and `block_size` (the parameters keep their shape) keep their meaning:
      // output_dtype / saturate describe the old pair.
      std::vector<ir::Attribute> attrs;
      bool has_axis = false;
      for (auto& a : n.attributes)
        if (a.name == "axis" || a.name == "block_size") {
          has_axis = has_axis || a.name == "axis";
          attrs.push_back(std::move(a));
        }
      if (c.scales.size() > 1 && !has_axis) {  // a per-tensor quantizer given per-channel thresholds
        ir::Attribute axis;
        axis.name = "axis";
        axis.type = ir::AttrType::Int;
        axis.i = spec.axis;
        attrs.push_back(std::move(axis));
      }
      n.attributes = std::move(attrs);
      if (sixteen && n.domain.empty() && m_.opset("") < kSixteenBitOpset) {
        n.domain = kMicrosoft;
        if (m_.opset(kMicrosoft) == 0) edit::set_opset(m_, kMicrosoft, 1);
      }
    }
  }

  ir::Model& m_;
  ir::Graph& g_;
  edit::NameSet names_;
  std::set<int> removed_;
  std::set<std::string> freed_;  // values an edited node stopped reading
};

// The quantizers of an imported model, by the name of their first Q/DQ node.
std::map<std::string, CalibrationSpec> imported_quantizers(const ir::Model& m) {
  std::map<std::string, CalibrationSpec> out;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i)
    if (is_calibration_node(m.graph.nodes[i])) {
      CalibrationSpec spec = parse_calibration(m.graph, static_cast<int>(i));
      if (!spec.qdq_nodes.empty()) out[spec.qdq_nodes[0]] = std::move(spec);
    }
  return out;
}

// A Horizon calibrated model has no quantizers of its own in Q/DQ form: the configuration goes into
// its HzCalibration nodes (calibrated-onnx, which checks that they hold it), and that model is
// written as QuantizeLinear/DequantizeLinear pairs (quant/hz_to_qdq.h, what `calibrate --qdq` writes,
// which our executor runs bit-identically to the HzCalibration nodes).
std::vector<uint8_t> horizon_in_qdq_form(const exec::Executor& ex, const ExportInput& in, const uint8_t* model,
                                         size_t size) {
  const std::vector<uint8_t> calibrated = export_calibrated_onnx(ex, in, model, size);
  ir::Model m = hz_to_qdq(reader::read_onnx(calibrated.data(), calibrated.size()));
  std::string changes;
  const auto& cals = ex.calibrations();
  for (size_t i = 0; i < cals.size(); ++i) {
    const bool on = in.config.on[i] != 0;
    const std::string& qname = i < in.config.qtype.size() && !in.config.qtype[i].empty() ? in.config.qtype[i] : cals[i].qtype.name;
    if (on == cals[i].switch_on && qname == cals[i].qtype.name) continue;
    changes += (changes.empty() ? " " : ", ") + cals[i].node_name + " " + (on ? qname : "float");
  }
  m.metadata["ptqscope"] = "Horizon calibrated model in its Q/DQ form, configuration applied by " + in.tool + ":" +
                           (changes.empty() ? " none (the model as stored)" : changes);
  return reader::write_onnx(m);
}

}  // namespace

std::vector<uint8_t> export_qdq_onnx(const exec::Executor& ex, const ExportInput& in, const uint8_t* model, size_t size) {
  const auto& cals = ex.calibrations();
  check(in.config.on.size() == cals.size(), "export: the configuration has " + std::to_string(in.config.on.size()) +
                                                " calibration entries, the model " + std::to_string(cals.size()));
  // ONNX QuantizeLinear rounds half to even: no Q/DQ model computes the other rounding.
  check(in.config.round == RoundMode::HalfToEven,
        "qdq-onnx: the configuration rounds half away from zero (its round), which no QuantizeLinear computes: ONNX "
        "rounds half to even");
  check(!cals.empty(), "qdq-onnx: the model has no calibration nodes or QuantizeLinear/DequantizeLinear quantizers");
  if (std::none_of(cals.begin(), cals.end(), [](const CalibrationSpec& s) { return s.affine; }))
    return horizon_in_qdq_form(ex, in, model, size);
  // A dynamically quantized model (§1.12) has quantizers whose scale each run computes: no
  // QuantizeLinear/DequantizeLinear form holds them.
  for (const CalibrationSpec& spec : cals)
    check(!spec.dynamic,
          "qdq-onnx: '" + spec.node_name + "' is a dynamic quantizer (a DynamicQuantizeLinear, its scale computed at run "
          "time), which no QuantizeLinear/DequantizeLinear model holds; ort-json or ort-python write this "
          "configuration as onnxruntime quantizer arguments (nodes kept in float, per-tensor types) for "
          "quantizing the float model again");
  // Each quantizer as the configuration runs it (new thresholds give it new scales and zero points).
  std::vector<CalibrationSpec> configured;
  for (size_t i = 0; i < cals.size(); ++i) configured.push_back(ex.configured_spec(i, in.config));
  std::vector<Change> changes;
  for (size_t i = 0; i < cals.size(); ++i) {
    const CalibrationSpec& spec = configured[i];
    const bool on = in.config.on[i] != 0;
    const std::string& qname = i < in.config.qtype.size() && !in.config.qtype[i].empty() ? in.config.qtype[i] : spec.qtype.name;
    const bool rethresholded = in.config.thresholds_of(i) != nullptr;
    if (on == spec.switch_on && qname == spec.qtype.name && !rethresholded) continue;
    check(spec.affine, "qdq-onnx: calibration node '" + spec.node_name +
                           "' is an HzCalibration node, not a QuantizeLinear/DequantizeLinear quantizer of the model; "
                           "calibrated-onnx writes its state");
    Change c;
    c.spec = &spec;
    c.index = i;
    c.off = !on;
    c.qtype = QType::parse(qname);
    if (on) {
      integer_dtype(c.qtype);
      c.scales = derive_scales(spec, c.qtype);
      c.zero_points = derive_zero_points(spec, c.qtype, c.scales);
      c.zero_points = per_channel(c.zero_points, c.scales.size());
    }
    c.dequantized = spec.graph->constant(spec.input_value);
    c.tensor = qdq_tensor_of(ex, spec);
    if (c.tensor.empty()) c.tensor = spec.node_name;
    changes.push_back(std::move(c));
  }

  // A QOperator model (§1.12) is written in its Q/DQ form: the rewrite its load made (the same names),
  // whose QuantizeLinear/DequantizeLinear nodes the quantizers name.
  ir::Model m = reader::read_onnx(model, size);
  const bool qoperator = rewrite_qoperators(m).rewritten > 0;
  Writer writer(m);
  for (const auto& c : changes) writer.apply(c);
  writer.finish();
  std::string note = "configuration applied by " + in.tool + ":";
  if (changes.empty()) note += qoperator ? " none (the QOperator model in its Q/DQ form)" : " none (the model as stored)";
  else if (qoperator) note = "QOperator model in its Q/DQ form, " + note;
  for (size_t k = 0; k < changes.size(); ++k)
    note += (k ? ", " : " ") + changes[k].tensor + " " + (changes[k].off ? "float" : changes[k].qtype.name) +
            (!changes[k].off && changes[k].spec->thresholds != cals[changes[k].index].thresholds ? " (new range)" : "");
  m.metadata["ptqscope"] = note;
  std::vector<uint8_t> out = reader::write_onnx(m);

  // Read back and import again: every quantizer must hold the state the executor simulated, and no
  // Q/DQ node may be left unmapped that was mapped before.
  ir::Model original = reader::read_onnx(model, size);
  rewrite_qoperators(original);
  const QdqImportSummary before = import_qdq(original);
  ir::Model written = reader::read_onnx(out.data(), out.size());
  rewrite_qoperators(written);
  const QdqImportSummary after = import_qdq(written);
  check(after.left == before.left, "qdq-onnx: internal: the written model has " + std::to_string(after.left) +
                                       " unmapped Q/DQ nodes, the original " + std::to_string(before.left));
  const std::map<std::string, CalibrationSpec> back = imported_quantizers(written);
  for (size_t i = 0; i < cals.size(); ++i) {
    const CalibrationSpec& spec = configured[i];
    if (!spec.affine) continue;
    auto it = back.find(spec.qdq_nodes[0]);
    const bool on = in.config.on[i] != 0;
    check(on == (it != back.end()), "qdq-onnx: internal: quantizer '" + spec.node_name + "' is " +
                                        (on ? "missing from" : "still in") + " the written model");
    if (!on) continue;
    const std::string& qname = i < in.config.qtype.size() && !in.config.qtype[i].empty() ? in.config.qtype[i] : spec.qtype.name;
    const QType q = QType::parse(qname);
    std::vector<float> scales = derive_scales(spec, q);
    std::vector<int64_t> zps = derive_zero_points(spec, q, scales);
    zps = per_channel(zps, scales.size());
    const std::vector<int64_t> got = per_channel(it->second.zero_points, scales.size());
    const CalibrationSpec& b = it->second;
    check(b.qtype.name == qname && b.scales == scales && got == zps,
          "qdq-onnx: internal: quantizer '" + spec.node_name + "' does not read back as " + qname + " (read " +
              b.qtype.name + ", " + std::to_string(b.scales.size()) + " scales" +
              (b.scales.size() == scales.size() && !scales.empty() && b.scales[0] != scales[0]
                   ? " differing from " + std::to_string(scales[0]) + " at " + std::to_string(b.scales[0])
                   : "") +
              ", " + std::to_string(got.size()) + " zero points" +
              (got.size() == zps.size() && got != zps ? " differing" : "") + ")");
  }
  return out;
}

}  // namespace ptq::quant
