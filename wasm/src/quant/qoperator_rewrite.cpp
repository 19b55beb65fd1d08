#include "quant/qoperator_rewrite.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "quant/calibration.h"
#include "quant/fake_quant.h"
#include "quant/graph_edit.h"
#include "quant/qdq_import.h"

namespace ptq::quant {
namespace {

constexpr size_t kNamesShown = 8;  // nodes named in one warning before "and N more"
constexpr const char* kMicrosoft = "com.microsoft";
constexpr const char* kQuantizedSuffix = "_quantized";  // what onnxruntime's quantizer appends

// Thrown by a rule's checks (which all run before it emits anything): the node is kept as it is.
struct Unmapped {
  std::string why;
};

void require(bool ok, const std::string& why) {
  if (!ok) throw Unmapped{why};
}

bool quantized_type(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16;
}

// A quantized tensor as a QOperator node reads or writes it: the integer value and its parameters
// (value ids of constants; `zp` -1 when absent, then made explicit as a zero of `type` on emission).
struct Operand {
  int value = -1;
  int scale = -1;
  int zp = -1;
  DType type = DType::Undefined;
  bool per_axis = false;
  int64_t axis = 0;
  size_t channels = 1;  // scale count
};

class Rewriter;
struct Rule;
using RuleFn = void (*)(Rewriter&, const ir::Node&, const Rule&);

// One QOperator operator: where it is matched, the float operator it becomes, the attributes that
// float operator takes from it (any other attribute makes the node unmapped) and the rewrite.
struct Rule {
  const char* domain;
  const char* op_type;
  const char* float_op;
  std::vector<std::string> attributes;
  RuleFn apply;
};

class Rewriter {
 public:
  explicit Rewriter(ir::Model& model) : model_(model), g_(model.graph), names_(g_) {
    for (const auto& n : g_.nodes) node_names_.insert(n.name);
    for (const auto& v : g_.values) file_names_.push_back(v.name);
  }

  QOperatorRewriteSummary run(const std::vector<Rule>& rules, const std::vector<Rule>& passthrough);

  // ---- checks (throw Unmapped; no graph change) ----

  int input(const ir::Node& n, size_t i) const { return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue; }

  const Tensor* constant(int v) const { return edit::constant_through_identity(g_, v); }

  // The quantized operand (x, scale, zero point) at inputs (x, s, z) of `n`; `per_axis` allows a
  // 1-D scale, one per slice along `axis` (negative: from the end, the rank being known).
  Operand operand(const ir::Node& n, size_t x, size_t s, size_t z, const std::string& what, bool per_axis = false,
                  int64_t axis = 0) const {
    return operand_of(input(n, x), input(n, s), input(n, z), what, per_axis, axis);
  }

  // The same from value ids (the scale and zero point being those of another node, e.g. a weight's).
  Operand operand_of(int value, int scale, int zero_point, const std::string& what, bool per_axis = false,
                     int64_t axis = 0) const {
    Operand o;
    o.value = value;
    require(o.value >= 0, "it has no input '" + what + "'");
    scale_of(scale, what, per_axis, o);
    zero_point_of(zero_point, what, o);
    if (o.per_axis) {
      const int64_t rank = rank_of(o.value);
      if (axis < 0) {
        require(rank >= 0, "the rank of '" + what + "' (quantized per axis) is not known");
        axis += rank;
      }
      require(rank < 0 || (axis >= 0 && axis < rank), "'" + what + "' has rank " + std::to_string(rank));
      o.axis = axis;
    }
    if (o.type == DType::Undefined) o.type = stored_type(o.value);
    require(o.type != DType::Undefined,
            "the integer type of '" + what + "' is not known (no zero point, no declared type)");
    require(quantized_type(o.type),
            "'" + what + "' is " + dtype_name(o.type) + " (int8, uint8, int16, uint16 are mapped)");
    const DType stored = stored_type(o.value);
    require(stored == DType::Undefined || stored == o.type,
            "'" + what + "' is " + dtype_name(stored) + " but its zero point is " + dtype_name(o.type));
    return o;
  }

  // The quantized output of `n` (its output `out`, scale and zero point at inputs s and z); a
  // missing zero point gives the inputs' type (`like`), as onnxruntime's operators constrain it.
  Operand output(const ir::Node& n, size_t out, size_t s, size_t z, DType like) const {
    Operand o;
    require(out < n.outputs.size() && n.outputs[out] >= 0, "it has no output");
    o.value = n.outputs[out];
    scale_of(input(n, s), "output", false, o);
    zero_point_of(input(n, z), "output", o);
    if (o.type == DType::Undefined) o.type = like;
    require(quantized_type(o.type), "its output is " + dtype_name(o.type) + " (int8, uint8, int16, uint16 are mapped)");
    for (size_t k = 0; k < n.outputs.size(); ++k)
      require(k == out || n.outputs[k] < 0 ||
                  (g_.value(n.outputs[k]).consumers.empty() && !g_.value(n.outputs[k]).is_graph_output),
              "its output " + std::to_string(k) + " is read");
    return o;
  }

  void attributes(const ir::Node& n, const Rule& rule) const {
    for (const auto& a : n.attributes)
      require(std::find(rule.attributes.begin(), rule.attributes.end(), a.name) != rule.attributes.end(),
              "attribute '" + a.name + "' is not mapped");
  }

  // The quantization parameters of an integer tensor, when its producer (a QuantizeLinear or a
  // rewritten QOperator node) is known; nullptr otherwise.
  const Operand* known(int v) const {
    auto it = known_.find(v);
    return it == known_.end() ? nullptr : &it->second;
  }

  // ---- emission (no check fails past this point) ----

  // The float value of `o`: a DequantizeLinear of it (one per value and parameters).
  int dequantize(const Operand& o) {
    const int zp = zero_point(o);
    const auto key = std::make_tuple(o.value, o.scale, zp, o.per_axis ? o.axis : -1000);
    auto it = dequantized_.find(key);
    if (it == dequantized_.end()) {
      const std::string base = g_.value(o.value).name;
      const int y = edit::add_value(g_, names_.fresh(base + "_dequantized"));
      std::vector<ir::Attribute> attrs;
      if (o.per_axis) attrs.push_back(edit::attr_int("axis", o.axis));
      const std::string name = names_.fresh(base + "_DequantizeLinear");
      emit(edit::make_node(name, "DequantizeLinear", "", {o.value, o.scale, zp}, {y}, std::move(attrs), qdq_opset(o)));
      it = dequantized_.emplace(key, std::make_pair(y, name)).first;
    }
    note_quantizer(o.value, it->second.second, o.type, it->second.first);
    return it->second.first;
  }

  // A new float value for the float operator writing integer tensor `v`: named as the tensor without
  // "_quantized"; else with the integer tensor's own name (renamed "<name>_quantized") unless it is
  // a graph output; else "<name>_float".
  int float_output(int v) {
    const std::string name = g_.value(v).name;
    const std::string suffix = kQuantizedSuffix;
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string stripped = name.substr(0, name.size() - suffix.size());
      // Tensor names only: a node may have the same name (ONNX keeps the two apart).
      if (g_.find_value(stripped) < 0) {
        names_.use(stripped);
        return edit::add_value(g_, stripped);
      }
    }
    if (!g_.value(v).is_graph_output) {
      const std::string renamed = names_.fresh(name + suffix);
      g_.values[static_cast<size_t>(v)].name = renamed;
      g_.value_index[renamed] = v;
      return edit::add_value(g_, name);
    }
    return edit::add_value(g_, names_.fresh(name + "_float"));
  }

  // QuantizeLinear of float value `y` into `out`'s integer tensor (named after node `n`).
  void quantize(const ir::Node& n, int y, const Operand& out) {
    const int zp = zero_point(out);
    const std::string name = names_.fresh(n.name + "_QuantizeLinear");
    emit(edit::make_node(name, "QuantizeLinear", "", {y, out.scale, zp}, {out.value}, {}, qdq_opset(out)));
    note_quantizer(out.value, name, out.type, y);
    Operand known = out;
    known.zp = zp;
    known_[out.value] = known;
  }

  // The float operator `op` of QOperator node `n` (keeping its name) on `inputs`, then the quantizer of
  // its output `y`. An output whose zero point is its type's minimum (a real range [0, max]) gets a
  // Relu first: onnxruntime's quantizer fuses a ReLU that follows an operator into that operator's
  // output range this way. Quantized, the Relu changes nothing (the quantizer clamps below at 0);
  // with the quantizer OFF it keeps the ReLU of the float model.
  void finish(const ir::Node& n, const std::string& op, const std::vector<int>& inputs,
              std::vector<ir::Attribute> attrs, const Operand& y) {
    const int yf = float_output(y.value);
    int result = yf;
    if (zero_point_is_qmin(y)) result = edit::add_value(g_, names_.fresh(n.name + "_output"));
    emit(edit::make_node(n.name, op, "", inputs, {result}, std::move(attrs), onnx_opset()));
    if (result != yf)
      emit(edit::make_node(names_.fresh(n.name + "_Relu"), "Relu", "", {result}, {yf}, {}, onnx_opset()));
    quantize(n, yf, y);
  }

  // The float output of DynamicQuantizeLinear node `d` (id `d_id`) as a dynamic calibration node on
  // its input (one per DynamicQuantizeLinear): named after the input tensor, `qdq_nodes` naming `d`.
  int dynamically_quantized(int d_id) {
    const ir::Node& d = g_.node(d_id);
    if (auto it = dynamic_.find(d_id); it != dynamic_.end()) {
      note_quantizer(d.outputs[0], it->second.second, DType::UInt8, d.inputs[0]);
      return it->second.first;
    }
    const std::string tensor = g_.value(d.inputs[0]).name;
    std::string name = tensor;
    for (int k = 1; node_names_.count(name); ++k) name = tensor + "_" + std::to_string(k);
    node_names_.insert(name);
    const int y = edit::add_value(g_, names_.fresh(tensor + "_dequantized"));
    ir::Attribute info, sources;
    info.name = "info_strings";
    info.type = ir::AttrType::Strings;
    info.strings = {"feature"};
    sources.name = "qdq_nodes";
    sources.type = ir::AttrType::Strings;
    sources.strings = {d.name};
    if (model_.opset("horizon") == 0) edit::set_opset(model_, "horizon", 1);
    emit(edit::make_node(name, "HzCalibration", "horizon", {d.inputs[0]}, {y},
                         {edit::attr_string("qtype", "uint8"), edit::attr_string("switch", "ON"),
                          edit::attr_int("dynamic", 1), info, sources},
                         static_cast<int>(model_.opset("horizon"))));
    dynamic_[d_id] = {y, name};
    note_quantizer(d.outputs[0], name, DType::UInt8, d.inputs[0]);
    // The DynamicQuantizeLinear of the file stands for this calibration node.
    FileNode f = file_node(d);
    f.became = {name};
    f.quantizers = {{file_names_[static_cast<size_t>(d.outputs[0])], name}};
    pending_records_.push_back({static_cast<size_t>(d_id), std::move(f), values_of(d)});
    return y;
  }

  // Node `id` is replaced by the node being rewritten (dropped when the loop reaches it); `maybe`
  // nodes are dropped once nothing reads their outputs any more.
  // Both are recorded as file nodes that became `into` (the float operator being emitted).
  void replaces(int id, const std::string& into) {
    removed_.insert(id);
    record_folded(id, into);
  }
  void maybe_unused(int id, const std::string& into) {
    unused_candidates_.insert(g_.node(id).name);
    record_folded(id, into);
  }

  // A float initializer (folded constants, e.g. a dequantized int32 bias).
  int initializer(const std::string& base, Tensor t) {
    return edit::add_initializer(g_, names_.fresh(base), std::move(t));
  }

  void emit(ir::Node n) { pending_.push_back(std::move(n)); }
  int onnx_opset() const { return static_cast<int>(model_.opset("")); }
  ir::Graph& graph() { return g_; }

  void record(int v, const Operand& o) { known_[v] = o; }

  // ---- provenance: what the file held (§1.12), for viewers that draw the model as the file holds it ----

  // A rewritten node of the file (`index` in the file's node order) with the values it reads and writes.
  struct Record {
    size_t index;
    FileNode node;
    std::vector<int> values;
  };

  FileNode file_node(const ir::Node& n) const {
    FileNode f;
    f.name = n.name;
    f.op_type = n.op_type;
    f.domain = n.domain;
    for (int v : n.inputs) f.inputs.push_back(v >= 0 ? file_names_[static_cast<size_t>(v)] : std::string());
    for (int v : n.outputs) f.outputs.push_back(v >= 0 ? file_names_[static_cast<size_t>(v)] : std::string());
    f.attributes = n.attributes;
    return f;
  }

  static std::vector<int> values_of(const ir::Node& n) {
    std::vector<int> ids = n.inputs;
    ids.insert(ids.end(), n.outputs.begin(), n.outputs.end());
    return ids;
  }

  // The rule being applied quantizes (or dequantizes) the file's integer tensor `v` with node `node`;
  // the tensor has type `type` and the shape of the loaded graph's value `like`.
  void note_quantizer(int v, const std::string& node, DType type, int like) {
    pending_quantizers_.emplace_back(v, node);
    tensor_info_[v] = {type, g_.value(like).name};
  }

  // Node `id` of the file is folded into the float operator `into` (a Cast and a Mul of a dynamic
  // chain) or dropped once nothing reads it.
  void record_folded(int id, const std::string& into) {
    FileNode f = file_node(g_.node(id));
    f.became = {into};
    pending_records_.push_back({static_cast<size_t>(id), std::move(f), values_of(g_.node(id))});
  }

  // The rule applied to node `index` succeeded: it and the nodes it folded are file nodes.
  void commit(size_t index, const ir::Node& n) {
    Record r{index, file_node(n), values_of(n)};
    // Nodes made for a folded node (a DynamicQuantizeLinear's calibration node) are that node's.
    auto folded_into = [&](const std::string& name) {
      return std::any_of(pending_records_.begin(), pending_records_.end(), [&](const Record& e) {
        return std::find(e.node.became.begin(), e.node.became.end(), name) != e.node.became.end();
      });
    };
    for (const auto& p : pending_)
      if (p.name == n.name || !folded_into(p.name)) r.node.became.push_back(p.name);
    for (const auto& [v, node] : pending_quantizers_) {
      const std::string& tensor = file_names_[static_cast<size_t>(v)];
      const bool seen = std::any_of(r.node.quantizers.begin(), r.node.quantizers.end(),
                                    [&](const auto& q) { return q.first == tensor; });
      if (!seen) r.node.quantizers.emplace_back(tensor, node);
    }
    records_.push_back(std::move(r));
    for (auto& extra : pending_records_) records_.push_back(std::move(extra));
    forget_pending();
  }

  void forget_pending() {
    pending_.clear();
    pending_quantizers_.clear();
    pending_records_.clear();
  }

  // The file's tensor `id` as the file holds it (read before anything is rewritten: the values of
  // the file keep their ids; only names change).
  FileTensor file_tensor(int id) const {
    FileTensor t;
    t.name = file_names_[static_cast<size_t>(id)];
    const ir::Value& v = g_.value(id);
    if (const Tensor* c = g_.constant(id)) {
      t.dtype = c->dtype();
      t.has_dims = true;
      t.dims = c->shape();
      t.constant = true;
      t.initializer = v.producer < 0;
      if (c->numel() <= kFileTensorValues) t.values = c->clone();  // owned: the file's bytes may go
    } else if (auto it = tensor_info_.find(id); it != tensor_info_.end()) {
      t.dtype = it->second.first;
      t.shape_of = it->second.second;
    } else {
      t.dtype = v.info.dtype;
      t.has_dims = v.info.has_shape;
      t.dims = v.info.dims;
    }
    return t;
  }

  // The records in file order (a node recorded twice, e.g. a DynamicQuantizeLinear feeding two
  // integer operators, once) and the tensors they read and write, into the summary.
  void keep_provenance() {
    std::stable_sort(records_.begin(), records_.end(),
                     [](const Record& a, const Record& b) { return a.index < b.index; });
    std::set<size_t> nodes_seen;
    std::set<int> values_seen;
    for (auto& r : records_) {
      if (!nodes_seen.insert(r.index).second) continue;
      for (int v : r.values)
        if (v >= 0 && values_seen.insert(v).second) summary_.file.tensors.push_back(file_tensor(v));
      summary_.file.nodes.push_back(std::move(r.node));
    }
  }

 private:
  void scale_of(int scale, const std::string& what, bool per_axis, Operand& o) const {
    o.scale = scale;
    require(o.scale >= 0, "it has no scale for '" + what + "'");
    const Tensor* t = constant(o.scale);
    require(t != nullptr, "the scale of '" + what + "' ('" + g_.value(o.scale).name + "') is not a constant");
    require(t->dtype() == DType::Float,
            "the scale of '" + what + "' is " + dtype_name(t->dtype()) + " (float32 is mapped)");
    require(t->rank() <= 1, "the scale of '" + what + "' has rank " + std::to_string(t->rank()));
    o.channels = static_cast<size_t>(t->numel());
    require(o.channels >= 1, "the scale of '" + what + "' is empty");
    require(o.channels == 1 || per_axis,
            "the scale of '" + what + "' has " + std::to_string(o.channels) + " values (a scalar is mapped here)");
    o.per_axis = o.channels > 1;
    for (float v : t->to_float_vector())
      require(std::isfinite(v) && v > 0.0f, "the scale of '" + what + "' holds " + std::to_string(v));
  }

  void zero_point_of(int zero_point, const std::string& what, Operand& o) const {
    o.zp = zero_point;
    if (o.zp < 0) return;
    const Tensor* t = constant(o.zp);
    require(t != nullptr, "the zero point of '" + what + "' ('" + g_.value(o.zp).name + "') is not a constant");
    require(t->numel() == 1 || static_cast<size_t>(t->numel()) == o.channels,
            "the zero point of '" + what + "' has " + std::to_string(t->numel()) + " values for " +
                std::to_string(o.channels) + " scales");
    o.type = t->dtype();
  }

  int64_t rank_of(int v) const {
    if (const Tensor* t = g_.constant(v)) return static_cast<int64_t>(t->rank());
    const ir::ValueInfo& info = g_.value(v).info;
    return info.has_shape ? static_cast<int64_t>(info.dims.size()) : -1;
  }

  DType stored_type(int v) const {
    if (const Tensor* t = g_.constant(v)) return t->dtype();
    if (const Operand* k = known(v)) return k->type;
    return g_.value(v).info.dtype;
  }

  // An explicit zero point of the operand's shape and type (a zero when absent, one per channel when
  // a single zero point goes with per-axis scales).
  int zero_point(const Operand& o) {
    const Tensor* t = o.zp >= 0 ? constant(o.zp) : nullptr;
    if (t && static_cast<size_t>(t->numel()) == o.channels) return o.zp;
    const auto key = std::make_tuple(o.zp, o.type, o.channels);
    if (auto it = zero_points_.find(key); it != zero_points_.end()) return it->second;
    const int64_t value = t ? t->to_int64_vector()[0] : 0;
    const Shape shape = o.per_axis ? Shape{static_cast<int64_t>(o.channels)} : Shape{};
    const Tensor zp = cast_tensor(Tensor::from_int64s(shape, std::vector<int64_t>(o.channels, value)), o.type);
    const std::string base = o.zp >= 0 ? g_.value(o.zp).name + "_per_axis" : "zero_point_" + dtype_name(o.type);
    const int id = initializer(base, zp);
    zero_points_[key] = id;
    return id;
  }

  bool zero_point_is_qmin(const Operand& o) const {
    const Tensor* t = o.zp >= 0 ? constant(o.zp) : nullptr;
    const std::vector<int64_t> zps = t ? t->to_int64_vector() : std::vector<int64_t>(1, 0);
    const int64_t qmin = o.type == DType::Int8 ? -128 : o.type == DType::Int16 ? -32768 : 0;
    return std::all_of(zps.begin(), zps.end(), [&](int64_t z) { return z == qmin; });
  }

  int qdq_opset(const Operand& o) const { return o.per_axis ? std::max(onnx_opset(), 13) : onnx_opset(); }

  // Drops the candidates (a DynamicQuantizeLinear, the Mul of its scale) nothing reads any more.
  void drop_unused(std::vector<ir::Node>& nodes) {
    for (bool again = true; again;) {
      again = false;
      std::set<int> read;
      for (const auto& n : nodes) read.insert(n.inputs.begin(), n.inputs.end());
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (!unused_candidates_.count(nodes[i].name)) continue;
        const bool used = std::any_of(nodes[i].outputs.begin(), nodes[i].outputs.end(),
                                      [&](int v) { return v >= 0 && (read.count(v) || g_.value(v).is_graph_output); });
        if (used) continue;
        nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
        again = true;
        break;
      }
    }
  }

  void leave(const ir::Node& n, const std::string& why) {
    left_.push_back("'" + n.name + "' (" + n.op_type + "): " + why);
    summary_.left++;
  }

  ir::Model& model_;
  ir::Graph& g_;
  edit::NameSet names_;
  std::map<int, Operand> known_;
  std::map<std::tuple<int, int, int, int64_t>, std::pair<int, std::string>> dequantized_;  // -> value, its node
  std::map<std::tuple<int, DType, size_t>, int> zero_points_;
  std::map<int, std::pair<int, std::string>> dynamic_;  // DynamicQuantizeLinear id -> calibration output, name
  std::set<int> removed_;
  std::set<std::string> unused_candidates_;
  std::set<std::string> node_names_;
  std::vector<ir::Node> pending_;
  std::vector<std::string> file_names_;                          // value id -> its name in the file
  std::vector<Record> records_;                                  // file nodes of the rules applied so far
  std::vector<Record> pending_records_;                          // nodes the rule being applied folds
  std::vector<std::pair<int, std::string>> pending_quantizers_;  // (file value, Q/DQ or calibration node)
  std::map<int, std::pair<DType, std::string>> tensor_info_;     // file value -> its type, a value of its shape
  std::vector<std::string> left_;
  QOperatorRewriteSummary summary_;
};

// ---- the rules --------------------------------------------------------------------------------

std::vector<ir::Attribute> copied(const ir::Node& n, const std::vector<std::string>& skip = {}) {
  std::vector<ir::Attribute> out;
  for (const auto& a : n.attributes)
    if (std::find(skip.begin(), skip.end(), a.name) == skip.end()) out.push_back(a);
  return out;
}

// QLinearConv (ai.onnx; x x_scale x_zp w w_scale w_zp y_scale y_zp B?): Conv of the dequantized x and
// w (per output channel when w_scale has M values) and the int32 bias folded to B · x_scale · w_scale
// (float32, per channel), quantized with y_scale / y_zp.
void rewrite_conv(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  const Operand x = r.operand(n, 0, 1, 2, "x");
  const Operand w = r.operand(n, 3, 4, 5, "w", true, 0);
  const Operand y = r.output(n, 0, 6, 7, x.type);
  std::optional<Tensor> bias;
  if (const int b = r.input(n, 8); b >= 0) {
    const Tensor* t = r.constant(b);
    require(t != nullptr, "its bias is not a constant");
    require(t->dtype() == DType::Int32 && t->rank() == 1, "its bias is not a 1-D int32 tensor");
    require(
        w.channels == 1 || static_cast<size_t>(t->numel()) == w.channels,
        "its bias has " + std::to_string(t->numel()) + " values for " + std::to_string(w.channels) + " weight scales");
    const float xs = r.constant(x.scale)->to_float_vector()[0];
    const std::vector<float> ws = r.constant(w.scale)->to_float_vector();
    const std::vector<int64_t> q = t->to_int64_vector();
    std::vector<float> values(q.size());
    for (size_t m = 0; m < q.size(); ++m)
      values[m] = dequantize_value(static_cast<float>(q[m]), 0.0f, xs * ws[ws.size() == 1 ? 0 : m]);
    bias = Tensor::from_floats(t->shape(), values);
  }
  std::vector<int> inputs = {r.dequantize(x), r.dequantize(w)};
  if (bias) inputs.push_back(r.initializer(r.graph().value(n.inputs[8]).name + "_dequantized", std::move(*bias)));
  r.finish(n, rule.float_op, inputs, copied(n), y);
}

// QLinearMatMul (ai.onnx; a a_scale a_zp b b_scale b_zp y_scale y_zp): MatMul of the dequantized a and
// b (per column, the last axis, when b_scale has N values).
void rewrite_matmul(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  const Operand a = r.operand(n, 0, 1, 2, "a");
  const Operand b = r.operand(n, 3, 4, 5, "b", true, -1);
  const Operand y = r.output(n, 0, 6, 7, a.type);
  r.finish(n, rule.float_op, {r.dequantize(a), r.dequantize(b)}, {}, y);
}

// com.microsoft QLinearAdd / QLinearMul (A A_scale A_zp? B B_scale B_zp? C_scale C_zp?): Add / Mul
// of the dequantized inputs (broadcasting as the float operator), quantized with C_scale / C_zp.
void rewrite_binary(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  const Operand a = r.operand(n, 0, 1, 2, "A");
  const Operand b = r.operand(n, 3, 4, 5, "B");
  const Operand c = r.output(n, 0, 6, 7, a.type);
  r.finish(n, rule.float_op, {r.dequantize(a), r.dequantize(b)}, {}, c);
}

// com.microsoft QLinearConcat (Y_scale Y_zp, then X X_scale X_zp per input; axis): Concat of the
// dequantized inputs along axis, quantized with Y_scale / Y_zp (an input whose parameters differ
// from the output's is re-quantized, as onnxruntime does).
void rewrite_concat(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  require(n.has_attr("axis"), "it has no attribute 'axis'");
  require(n.inputs.size() >= 5 && (n.inputs.size() - 2) % 3 == 0,
          "it has " + std::to_string(n.inputs.size()) + " inputs (Y_scale, Y_zero_point and triples expected)");
  std::vector<Operand> xs;
  for (size_t i = 2; i < n.inputs.size(); i += 3)
    xs.push_back(r.operand(n, i, i + 1, i + 2, "input " + std::to_string((i - 2) / 3)));
  const Operand y = r.output(n, 0, 0, 1, xs[0].type);
  std::vector<int> inputs;
  for (const auto& x : xs) inputs.push_back(r.dequantize(x));
  r.finish(n, rule.float_op, inputs, copied(n), y);
}

// com.microsoft QLinearSigmoid / QLinearLeakyRelu / QLinearAveragePool / QLinearGlobalAveragePool
// (X X_scale X_zp? Y_scale Y_zp?): the float operator on the dequantized input with the node's
// attributes; `channels_last` (pools) must be 0 (NCHW), the float operators' layout.
void rewrite_unary(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  require(n.attr_int("channels_last", 0) == 0,
          "attribute 'channels_last' is " + std::to_string(n.attr_int("channels_last", 0)) + " (0, NCHW, is mapped)");
  const Operand x = r.operand(n, 0, 1, 2, "X");
  const Operand y = r.output(n, 0, 3, 4, x.type);
  r.finish(n, rule.float_op, {r.dequantize(x)}, copied(n, {"channels_last"}), y);
}

// ConvInteger / MatMulInteger fed by DynamicQuantizeLinear, as onnxruntime's dynamic quantization
// writes them:
//   x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp);  Mul(x_scale, w_scale) -> s
//   ConvInteger / MatMulInteger(x_q, w_q, x_zp, w_zp) -> Cast(float) -> Mul(·, s) -> y
// becomes  x -> dynamic calibration node -> Conv / MatMul(·, DequantizeLinear(w_q, w_scale, w_zp)) -> y
// (the float operator keeps the integer node's name; the Cast and the Mul are replaced, the scale Mul
// and the DynamicQuantizeLinear dropped once nothing else reads them). w_scale: a scalar, or one per
// column of a MatMulInteger's 2-D weight.
void rewrite_integer(Rewriter& r, const ir::Node& n, const Rule& rule) {
  r.attributes(n, rule);
  const ir::Graph& g = r.graph();
  const int x = r.input(n, 0);
  require(x >= 0, "it has no input");
  const int d_id = g.value(x).producer;
  require(d_id >= 0 && g.node(d_id).op_type == "DynamicQuantizeLinear" && g.node(d_id).domain.empty(),
          "its input is not a DynamicQuantizeLinear's output");
  const ir::Node& d = g.node(d_id);
  require(d.outputs.size() == 3 && d.outputs[1] >= 0 && d.outputs[2] >= 0,
          "its DynamicQuantizeLinear has no scale or zero point output");
  require(r.input(n, 2) == d.outputs[2], "its input zero point is not its DynamicQuantizeLinear's");
  // int32 result -> Cast(to float) -> Mul(·, s) with s = Mul(x_scale, w_scale).
  auto single_consumer = [&](int v, const char* op, const std::string& what) {
    require(v >= 0 && !g.value(v).is_graph_output && g.value(v).consumers.size() == 1 &&
                g.node(g.value(v).consumers[0]).op_type == op,
            what + " is not read by one " + op + " alone");
    return g.value(v).consumers[0];
  };
  const int cast_id = single_consumer(n.outputs.empty() ? -1 : n.outputs[0], "Cast", "its int32 output");
  require(g.node(cast_id).attr_int("to", 0) == static_cast<int64_t>(DType::Float), "its Cast is not to float32");
  const int mul_id = single_consumer(g.node(cast_id).outputs[0], "Mul", "its Cast's output");
  const ir::Node& mul = g.node(mul_id);
  require(mul.inputs.size() == 2 && mul.outputs.size() == 1, "its Mul does not have two inputs");
  const int s = mul.inputs[0] == g.node(cast_id).outputs[0] ? mul.inputs[1] : mul.inputs[0];
  const int s_id = g.value(s).producer;
  require(s_id >= 0 && g.node(s_id).op_type == "Mul" && g.node(s_id).inputs.size() == 2,
          "its result is not scaled by a Mul of the input's and the weight's scales");
  const ir::Node& smul = g.node(s_id);
  const int w_scale = smul.inputs[0] == d.outputs[1]   ? smul.inputs[1]
                      : smul.inputs[1] == d.outputs[1] ? smul.inputs[0]
                                                       : -1;
  require(w_scale >= 0, "its result is not scaled by the DynamicQuantizeLinear's scale");
  const int w = r.input(n, 1);
  require(w >= 0 && r.constant(w) != nullptr, "its weight is not a constant");
  const bool matmul = n.op_type == "MatMulInteger";
  const Operand wq = r.operand_of(w, w_scale, r.input(n, 3), "weight", matmul, -1);
  require(!wq.per_axis || r.constant(w)->rank() == 2, "a per-column weight scale needs a 2-D weight");
  require(!wq.per_axis || static_cast<int64_t>(wq.channels) == r.constant(w)->dim(1),
          "its weight scale has " + std::to_string(wq.channels) + " values for " +
              std::to_string(r.constant(w)->dim(1)) + " columns");
  // Emission.
  const int xf = r.dynamically_quantized(d_id);
  const int wf = r.dequantize(wq);
  r.emit(edit::make_node(n.name, rule.float_op, "", {xf, wf}, {mul.outputs[0]}, copied(n), r.onnx_opset()));
  r.replaces(cast_id, n.name);
  r.replaces(mul_id, n.name);
  r.maybe_unused(s_id, n.name);
  r.maybe_unused(d_id, n.name);
}

// An ai.onnx operator that moves or selects the integers of a quantized tensor (MaxPool, Reshape,
// Transpose, ...), as onnxruntime's QOperator models run them between QLinear nodes: the same
// operator on the dequantized tensor, quantized again with the input's parameters. Dequantization is
// increasing and element-wise, so this is exact: ON gives the original integers' values.
void rewrite_passthrough(Rewriter& r, const ir::Node& n, const Rule& rule) {
  (void)rule;
  const Operand* in = r.known(r.input(n, 0));
  if (!in) return;  // not a quantized tensor: the node is left alone (no warning)
  require(n.op_type != "Resize" || n.attr_string("mode", "nearest") == "nearest",
          "attribute 'mode' is '" + n.attr_string("mode", "nearest") + "' (nearest moves integers exactly)");
  // Every output is a quantized tensor of the input's parameters, but MaxPool's Indices (int64).
  const size_t data_outputs = n.op_type == "MaxPool" ? 1 : n.outputs.size();
  std::vector<Operand> outs;
  for (size_t k = 0; k < data_outputs && k < n.outputs.size(); ++k) {
    Operand o = *in;
    o.value = n.outputs[k];
    outs.push_back(o);
  }
  std::vector<int> inputs = n.inputs;
  inputs[0] = r.dequantize(*in);
  std::vector<int> outputs = n.outputs;
  for (size_t k = 0; k < outs.size(); ++k)
    if (outs[k].value >= 0) outputs[k] = r.float_output(outs[k].value);
  r.emit(edit::make_node(n.name, n.op_type, "", inputs, outputs, n.attributes, n.opset));
  for (size_t k = 0; k < outs.size(); ++k)
    if (outs[k].value >= 0) r.quantize(n, outputs[k], outs[k]);
}

const std::vector<Rule>& rules() {
  static const std::vector<std::string> conv_attrs = {"auto_pad",     "dilations", "group",
                                                      "kernel_shape", "pads",      "strides"};
  static const std::vector<std::string> pool_attrs = {"auto_pad",     "ceil_mode", "channels_last", "count_include_pad",
                                                      "kernel_shape", "pads",      "strides"};
  static const std::vector<Rule> table = {
      {"", "QLinearConv", "Conv", conv_attrs, &rewrite_conv},
      {kMicrosoft, "QLinearConv", "Conv", conv_attrs, &rewrite_conv},
      {"", "QLinearMatMul", "MatMul", {}, &rewrite_matmul},
      {kMicrosoft, "QLinearAdd", "Add", {}, &rewrite_binary},
      {kMicrosoft, "QLinearMul", "Mul", {}, &rewrite_binary},
      {kMicrosoft, "QLinearConcat", "Concat", {"axis"}, &rewrite_concat},
      {kMicrosoft, "QLinearSigmoid", "Sigmoid", {}, &rewrite_unary},
      {kMicrosoft, "QLinearLeakyRelu", "LeakyRelu", {"alpha"}, &rewrite_unary},
      {kMicrosoft, "QLinearAveragePool", "AveragePool", pool_attrs, &rewrite_unary},
      {kMicrosoft, "QLinearGlobalAveragePool", "GlobalAveragePool", {"channels_last"}, &rewrite_unary},
      {"", "ConvInteger", "Conv", conv_attrs, &rewrite_integer},
      {"", "MatMulInteger", "MatMul", {}, &rewrite_integer},
  };
  return table;
}

// Operators that move integers of a quantized tensor (input 0) without arithmetic.
const std::vector<Rule>& passthrough_rules() {
  static const std::vector<Rule> table = [] {
    std::vector<Rule> t;
    for (const char* op : {"MaxPool", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather",
                           "Split", "Identity", "DepthToSpace", "SpaceToDepth", "Resize", "Expand", "Tile"})
      t.push_back({"", op, op, {}, &rewrite_passthrough});
    return t;
  }();
  return table;
}

// QOperator-looking operators without a rule: named in the warning instead of passing silently.
bool looks_quantized(const ir::Node& n) {
  static const std::set<std::string> others = {"QGemm",
                                               "QAttention",
                                               "DynamicQuantizeMatMul",
                                               "MatMulIntegerToFloat",
                                               "QEmbedLayerNormalization",
                                               "DynamicQuantizeLSTM",
                                               "QOrderedMatMul",
                                               "ConvInteger",
                                               "MatMulInteger"};
  return n.op_type.rfind("QLinear", 0) == 0 || others.count(n.op_type) > 0;
}

QOperatorRewriteSummary Rewriter::run(const std::vector<Rule>& table, const std::vector<Rule>& passthrough) {
  // The parameters of the integer tensors QuantizeLinear nodes write (what pass-through operators
  // and consumers read).
  for (const auto& n : g_.nodes) {
    if (!is_quantize_linear(n) || n.outputs.empty() || n.outputs[0] < 0) continue;
    try {
      Operand o = output(n, 0, 1, 2, DType::UInt8);
      known_[o.value] = o;
    } catch (const Unmapped&) {
    }
  }
  std::vector<ir::Node> nodes;
  bool changed = false;
  const size_t count = g_.nodes.size();
  for (size_t i = 0; i < count; ++i) {
    if (removed_.count(static_cast<int>(i))) continue;
    const ir::Node n = g_.nodes[i];  // a copy: emission may grow the graph's vectors
    auto matches = [&](const Rule& rule) { return rule.op_type == n.op_type && rule.domain == n.domain; };
    const Rule* rule = nullptr;
    for (const auto& r : table)
      if (matches(r)) rule = &r;
    const bool pass = !rule && std::any_of(passthrough.begin(), passthrough.end(), matches);
    if (pass) rule = &*std::find_if(passthrough.begin(), passthrough.end(), matches);
    if (!rule) {
      if (looks_quantized(n)) leave(n, "no rewrite rule for this operator");
      nodes.push_back(g_.nodes[i]);  // a copy: rules read earlier nodes
      continue;
    }
    forget_pending();
    try {
      rule->apply(*this, n, *rule);
    } catch (const Unmapped& u) {
      leave(n, u.why);
      forget_pending();
    }
    if (pending_.empty()) {
      nodes.push_back(g_.nodes[i]);  // a copy: rules read earlier nodes
      continue;
    }
    for (const auto& p : pending_) nodes.push_back(p);
    commit(i, n);
    if (!pass) summary_.rewritten++;
    changed = true;
  }
  if (changed) {
    keep_provenance();
    drop_unused(nodes);
    g_.nodes = std::move(nodes);
    ir::finalize_graph(g_);
  }
  if (!left_.empty()) {
    std::string text =
        "QOperator nodes kept as they are (no switchable quantizers: they stay quantized in every "
        "run, the float reference included): ";
    for (size_t i = 0; i < left_.size() && i < kNamesShown; ++i) text += (i ? "; " : "") + left_[i];
    if (left_.size() > kNamesShown) text += "; and " + std::to_string(left_.size() - kNamesShown) + " more";
    model_.warnings.push_back(text);
  }
  return summary_;
}

// QOperator nodes inside If branches and Loop/Scan bodies: the analyses address a quantizer by its
// tensors in the main graph, so these stay as they are.
void subgraph_qoperators(const ir::Graph& g, std::vector<std::string>& found) {
  for (const ir::Node& n : g.nodes)
    for (const ir::Graph* sub : n.subgraphs()) {
      for (const ir::Node& inner : sub->nodes)
        if (looks_quantized(inner))
          found.push_back("'" + inner.name + "' (" + inner.op_type + ") in subgraph '" + sub->name + "' of node '" +
                          n.name + "'");
      subgraph_qoperators(*sub, found);
    }
}

}  // namespace

QOperatorRewriteSummary rewrite_qoperators(ir::Model& model) {
  std::vector<std::string> inside;
  subgraph_qoperators(model.graph, inside);
  if (!inside.empty()) {
    std::string text =
        "QOperator nodes inside subgraphs kept as they are (no switchable quantizers: they stay "
        "quantized in every run, the float reference included): ";
    for (size_t i = 0; i < inside.size() && i < kNamesShown; ++i) text += (i ? "; " : "") + inside[i];
    if (inside.size() > kNamesShown) text += "; and " + std::to_string(inside.size() - kNamesShown) + " more";
    model.warnings.push_back(text);
  }
  const auto& nodes = model.graph.nodes;
  if (std::none_of(nodes.begin(), nodes.end(), [](const ir::Node& n) { return looks_quantized(n); })) return {};
  return Rewriter(model).run(rules(), passthrough_rules());
}

namespace {

// The loaded graph's node file node `f` stands for: its output's quantizer, else the node of its own
// name it became (its float operator), else another node it became that is left; "" when none is.
std::string stands_for(const FileNode& f, const ir::Graph& g) {
  for (const auto& [tensor, node] : f.quantizers)
    if (!f.outputs.empty() && tensor == f.outputs[0]) return node;
  const bool own = std::find(f.became.begin(), f.became.end(), f.name) != f.became.end();
  if (own && g.find_node(f.name) >= 0) return f.name;
  for (const auto& b : f.became)
    if (g.find_node(b) >= 0) return b;
  return "";
}

// After the Q/DQ import: each file node's quantizers named by their calibration nodes (a Q/DQ node
// the rewrite made is now part of one, `qdq_nodes`), and the node each file node stands for.
void resolve_file_nodes(const ir::Model& model, FileProvenance& file) {
  const ir::Graph& g = model.graph;
  std::map<std::string, std::string> calibration_of;  // Q/DQ node or calibration node -> calibration node
  for (const auto& n : g.nodes) {
    if (!is_calibration_node(n)) continue;
    calibration_of[n.name] = n.name;
    for (const auto& q : n.attr_strings("qdq_nodes")) calibration_of.emplace(q, n.name);
  }
  for (auto& f : file.nodes) {
    std::vector<std::pair<std::string, std::string>> resolved;
    for (const auto& [tensor, node] : f.quantizers)
      if (auto it = calibration_of.find(node); it != calibration_of.end()) resolved.emplace_back(tensor, it->second);
    f.quantizers = std::move(resolved);
    f.stands = stands_for(f, g);
  }
}

}  // namespace

FileProvenance import_quantizers(ir::Model& model) {
  FileProvenance file = rewrite_qoperators(model).file;
  import_qdq(model);
  resolve_file_nodes(model, file);
  return file;
}

}  // namespace ptq::quant
