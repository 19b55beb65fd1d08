#include "schema/graph_json.h"

#include <algorithm>

#include "exec/shape_inference.h"
#include "io/json_writer.h"
#include "quant/calibration.h"

namespace ptq::schema {
namespace {

constexpr int64_t kInlineValues = 16;  // constants up to this many elements are written out in full

const char* attr_type_name(ir::AttrType t) {
  switch (t) {
    case ir::AttrType::SparseTensor: return "sparse_tensor";
    case ir::AttrType::SparseTensors: return "sparse_tensors";
    case ir::AttrType::TypeProto: return "type_proto";
    case ir::AttrType::TypeProtos: return "type_protos";
    default: return "undefined";
  }
}

bool is_numeric(DType t) { return t != DType::Undefined && t != DType::String && dtype_size(t) > 0; }
bool is_integer(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16 || t == DType::Int32 ||
         t == DType::Int64 || t == DType::UInt32 || t == DType::UInt64 || dtype_is_packed4(t);
}

void write_values(io::JsonWriter& w, const Tensor& t) {
  w.key("values").begin_array();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DType::Bool) w.value(t.get_as_int64(i) != 0);
    else if (is_integer(t.dtype())) w.value(t.get_as_int64(i));
    else if (t.dtype() == DType::Double) w.value(t.get_as_double(i));
    else w.value_float32(static_cast<float>(t.get_as_double(i)));
  }
  w.end_array();
}

// {"dtype","dims"} plus "values" for small numeric tensors.
void write_tensor_summary(io::JsonWriter& w, const Tensor& t) {
  w.begin_object().field("dtype", dtype_name(t.dtype()));
  w.key("dims").begin_array();
  for (int64_t d : t.shape()) w.value(d);
  w.end_array();
  if (is_numeric(t.dtype()) && t.numel() <= kInlineValues) write_values(w, t);
  w.end_object();
}

void write_dims(io::JsonWriter& w, const ir::ValueInfo& info) {
  if (!info.has_shape) { w.null(); return; }
  w.begin_array();
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (i < info.dim_params.size() && !info.dim_params[i].empty()) w.value(info.dim_params[i]);
    else w.value(info.dims[i]);
  }
  w.end_array();
}

void write_dtype(io::JsonWriter& w, DType t) {
  if (t == DType::Undefined) w.null();
  else w.value(dtype_name(t));
}

// Where a graph stands: the model's relations and the prefix of its nodes' qualified names (§1.13,
// quant::for_each_scope): "" for the main graph, "<node>/<attribute>/" per enclosing node.
struct Scope {
  const quant::CalibrationRelations& relations;
  std::string prefix;
};

std::vector<ir::ValueInfo> write_graph(io::JsonWriter& w, const ir::Graph& graph, const Scope& scope);

// {"graph": {...}} for a subgraph attribute.
void write_subgraph(io::JsonWriter& w, const std::shared_ptr<ir::Graph>& g, const Scope& scope) {
  w.begin_object().key("graph");
  if (g) {
    w.begin_object();
    write_graph(w, *g, scope);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
}

// `scope` is the scope of the attribute's subgraphs, if it has any.
void write_attribute(io::JsonWriter& w, const ir::Attribute& a, const Scope& scope) {
  using T = ir::AttrType;
  switch (a.type) {
    case T::Float: w.value_float32(a.f); break;
    case T::Int: w.value(a.i); break;
    case T::String: w.value(a.s); break;
    case T::Tensor: write_tensor_summary(w, a.t); break;
    case T::Graph: write_subgraph(w, a.g, scope); break;
    case T::Floats:
      w.begin_array();
      for (float f : a.floats) w.value_float32(f);
      w.end_array();
      break;
    case T::Ints:
      w.begin_array();
      for (int64_t i : a.ints) w.value(i);
      w.end_array();
      break;
    case T::Strings: w.string_array(a.strings); break;
    case T::Tensors:
      w.begin_array();
      for (const auto& t : a.tensors) write_tensor_summary(w, t);
      w.end_array();
      break;
    case T::Graphs:
      w.begin_array();
      for (const auto& g : a.graphs) write_subgraph(w, g, scope);
      w.end_array();
      break;
    default:  // kept visible rather than dropped: the viewer shows that the attribute exists
      w.begin_object().field("unsupported", attr_type_name(a.type)).end_object();
  }
}

// The attributes of node `node` of a graph in `scope`.
void write_attributes(io::JsonWriter& w, const std::string& node, const std::vector<ir::Attribute>& attributes,
                      const Scope& scope) {
  w.begin_object();
  for (const auto& a : attributes) {
    w.key(a.name);
    write_attribute(w, a, {scope.relations, scope.prefix + node + "/" + a.name + "/"});
  }
  w.end_object();
}

// A name of `scope` without its prefix: the relations name a subgraph's nodes by qualified name, the
// graph document by their names within their own graph.
std::string local_name(const Scope& scope, const std::string& qualified) { return qualified.substr(scope.prefix.size()); }

void write_calibration(io::JsonWriter& w, const ir::Graph& graph, int node_id, const Scope& scope) {
  const quant::CalibrationSpec spec = quant::parse_calibration(graph, node_id);
  const quant::CalibrationRelations& rel = scope.relations;
  w.begin_object().field("item", scope.prefix + spec.node_name);
  const std::string kind = spec.kind_name();
  w.key("kind");
  if (kind.empty()) w.null();
  else w.value(kind);
  w.field("qtype", spec.qtype.name).field("switch", spec.switch_on ? "ON" : "OFF").field("axis", spec.axis);
  w.key("thresholds").begin_array();
  for (float f : spec.thresholds) w.value_float32(f);
  w.end_array().key("scales").begin_array();
  for (float f : spec.scales) w.value_float32(f);
  w.end_array().key("zero_points").begin_array();
  for (int64_t z : spec.zero_points) w.value(z);
  w.end_array();
  w.field("asymmetric", spec.asymmetric).field("constant", spec.constant).field("group", spec.group);
  if (spec.block_size > 0) w.field("block_size", spec.block_size);
  // cali_normal_map joins consumer names with ';' (the original's format), a consumer once per input slot
  // that reads the tensor; split for the viewer, each consumer once.
  w.key("consumers").begin_array();
  auto it = rel.cali_normal_map().find(scope.prefix + spec.node_name);
  if (it != rel.cali_normal_map().end()) {
    size_t start = 0;
    const std::string& joined = it->second;
    std::string previous;
    while (start <= joined.size()) {
      const size_t end = std::min(joined.find(';', start), joined.size());
      const std::string name = joined.substr(start, end - start);
      if (!name.empty() && name != previous) w.value(local_name(scope, name));
      previous = name;
      start = end + 1;
    }
  }
  w.end_array();
  w.key("tensor");
  if (spec.input_value >= 0) w.value(graph.value(spec.input_value).name);
  else w.null();
  // A quantizer read from a Q/DQ model (§1.11): the QuantizeLinear/DequantizeLinear nodes it replaced.
  w.key("qdq_nodes").begin_array();
  for (const auto& n : spec.qdq_nodes) w.value(n);
  w.end_array();
  w.end_object();
}

void write_value_ref(io::JsonWriter& w, const ir::Graph& graph, const std::vector<ir::ValueInfo>& shapes, int id) {
  w.begin_object().field("name", graph.value(id).name).key("dtype");
  write_dtype(w, shapes[static_cast<size_t>(id)].dtype);
  w.key("dims");
  write_dims(w, shapes[static_cast<size_t>(id)]);
  w.end_object();
}

void write_value_names(io::JsonWriter& w, const ir::Graph& graph, const std::vector<int>& ids) {
  w.begin_array();
  for (int id : ids) w.value(id >= 0 ? graph.value(id).name : std::string());
  w.end_array();
}

// Returns the inferred shapes (by value id).
std::vector<ir::ValueInfo> write_graph(io::JsonWriter& w, const ir::Graph& graph, const Scope& scope) {
  const std::vector<ir::ValueInfo> shapes = exec::infer_shapes(graph);
  w.field("name", graph.name);
  w.key("inputs").begin_array();
  for (int id : graph.inputs) write_value_ref(w, graph, shapes, id);
  w.end_array().key("outputs").begin_array();
  for (int id : graph.outputs) write_value_ref(w, graph, shapes, id);
  w.end_array();

  w.key("nodes").begin_array();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    w.begin_object().field("name", node.name).field("op_type", node.op_type).field("domain", node.domain);
    w.key("inputs");
    write_value_names(w, graph, node.inputs);
    w.key("outputs");
    write_value_names(w, graph, node.outputs);
    w.key("attributes");
    write_attributes(w, node.name, node.attributes, scope);
    w.key("calibration");
    if (quant::is_calibration_node(node)) write_calibration(w, graph, static_cast<int>(n), scope);
    else w.null();
    // §1.9 get_calibration_by_node, so viewers and runall's node path need no second implementation.
    w.key("input_calibrations").begin_array();
    const auto& sets = scope.relations.node_to_calibration();
    if (auto it = sets.find(scope.prefix + node.name); it != sets.end())
      for (const auto& c : it->second) w.value(local_name(scope, c));
    w.end_array();
    w.end_object();
  }
  w.end_array();

  w.key("values").begin_object();
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const ir::Value& v = graph.values[id];
    w.key(v.name).begin_object().key("dtype");
    write_dtype(w, shapes[id].dtype);
    w.key("dims");
    write_dims(w, shapes[id]);
    // "initializer": a graph initializer; "constant": also a Constant node's output (producer set).
    w.field("initializer", v.initializer.has_value() && v.producer < 0).field("constant", v.initializer.has_value());
    if (v.initializer && is_numeric(v.initializer->dtype()) && v.initializer->numel() <= kInlineValues)
      write_values(w, *v.initializer);
    w.key("producer");
    if (v.producer >= 0) w.value(graph.node(v.producer).name);
    else w.null();
    w.key("consumers").begin_array();
    int last = -1;  // Value::consumers lists a node once per input slot; the schema lists it once
    for (int c : v.consumers) {
      if (c == last) continue;
      w.value(graph.node(c).name);
      last = c;
    }
    w.end_array().end_object();
  }
  w.end_object();
  return shapes;
}

// The file's nodes a load-time pass replaced (§1.12), as the file holds them.
void write_file_nodes(io::JsonWriter& w, const quant::FileProvenance& file, const quant::CalibrationRelations& relations) {
  w.key("file_nodes").begin_array();
  for (const quant::FileNode& f : file.nodes) {
    w.begin_object().field("name", f.name).field("op_type", f.op_type).field("domain", f.domain);
    w.key("inputs").string_array(f.inputs);
    w.key("outputs").string_array(f.outputs);
    w.key("attributes");
    write_attributes(w, f.name, f.attributes, {relations, ""});
    w.key("became").string_array(f.became);
    w.key("quantizers").begin_object();
    for (const auto& [tensor, node] : f.quantizers) w.field(tensor, node);
    w.end_object().key("stands");
    if (f.stands.empty()) w.null();
    else w.value(f.stands);
    w.end_object();
  }
  w.end_array();
}

// Their tensors that the loaded graph no longer holds as the file did: constants, integer tensors (dims
// those of the loaded tensor of the same shape) and tensors it no longer has.
void write_file_values(io::JsonWriter& w, const ir::Model& model, const quant::FileProvenance& file,
                       const std::vector<ir::ValueInfo>& shapes) {
  const ir::Graph& g = model.graph;
  w.key("file_values").begin_object();
  for (const quant::FileTensor& t : file.tensors) {
    if (!t.constant && t.shape_of.empty() && g.find_value(t.name) >= 0) continue;
    w.key(t.name).begin_object().key("dtype");
    write_dtype(w, t.dtype);
    w.key("dims");
    const int like = t.shape_of.empty() ? -1 : g.find_value(t.shape_of);
    if (t.has_dims) {
      w.begin_array();
      for (int64_t d : t.dims) w.value(d);
      w.end_array();
    } else if (like >= 0) {
      write_dims(w, shapes[static_cast<size_t>(like)]);
    } else {
      w.null();
    }
    w.field("initializer", t.initializer).field("constant", t.constant);
    if (t.values && is_numeric(t.values->dtype())) write_values(w, *t.values);
    w.end_object();
  }
  w.end_object();
}

}  // namespace

std::string graph_json(const ir::Model& model, const quant::CalibrationRelations& relations,
                       const quant::FileProvenance& file) {
  io::JsonWriter w;
  w.begin_object().field("schema", "ptqscope.graph").field("version", 1);
  w.field("ir_version", model.ir_version).field("producer_name", model.producer_name);
  w.field("producer_version", model.producer_version);
  // The relation rules (§1.9) of input_calibrations and consumers, when not the default.
  if (relations.rules() != quant::relation_rules().front().rules)
    w.field("relations", quant::relation_rules_info(relations.rules()).name);
  w.key("opset_imports").begin_array();
  for (const auto& o : model.opset_imports) w.begin_object().field("domain", o.domain).field("version", o.version).end_object();
  w.end_array();
  const std::vector<ir::ValueInfo> shapes = write_graph(w, model.graph, {relations, ""});
  write_file_nodes(w, file, relations);
  write_file_values(w, model, file, shapes);
  w.end_object();
  return w.str();
}

}  // namespace ptq::schema
