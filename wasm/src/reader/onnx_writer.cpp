#include "reader/onnx_writer.h"

#include "core/error.h"
#include "io/pb_writer.h"

namespace ptq::reader {
namespace {

using pb::Writer;

// Field numbers of onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto).
namespace model_f { enum : uint32_t { ir_version = 1, producer_name = 2, producer_version = 3, graph = 7, opset_import = 8, metadata_props = 14 }; }
namespace graph_f { enum : uint32_t { node = 1, name = 2, initializer = 5, input = 11, output = 12, value_info = 13 }; }
namespace node_f { enum : uint32_t { input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7 }; }
namespace attr_f {
enum : uint32_t { name = 1, f = 2, i = 3, s = 4, t = 5, g = 6, floats = 7, ints = 8, strings = 9, tensors = 10, graphs = 11, type = 20, ref_attr_name = 21 };
}
namespace tensor_f { enum : uint32_t { dims = 1, data_type = 2, name = 8, raw_data = 9 }; }

// IR version 4 stopped requiring initializers to be listed among the graph inputs.
constexpr int64_t kIrInitializersNotInputs = 4;

void write_tensor(Writer& w, const Tensor& t, const std::string& name) {
  check(t.defined(), "cannot write tensor '" + name + "': it has no data");
  w.packed_varints(tensor_f::dims, t.shape());
  w.int64(tensor_f::data_type, static_cast<int64_t>(t.dtype()));
  if (!name.empty()) w.string(tensor_f::name, name);
  // Always present (even when empty) so a zero-element tensor is not mistaken for typed data.
  if (dtype_is_packed4(t.dtype())) {
    // int4 / uint4: two values per byte, low nibble first (the reader's unpack4 in reverse).
    std::vector<uint8_t> packed((static_cast<size_t>(t.numel()) + 1) / 2, 0);
    const uint8_t* v = t.data<uint8_t>();
    for (int64_t i = 0; i < t.numel(); ++i)
      packed[static_cast<size_t>(i / 2)] |= static_cast<uint8_t>((v[i] & 0x0F) << ((i % 2) ? 4 : 0));
    w.bytes(tensor_f::raw_data, packed.data(), packed.size());
    return;
  }
  w.bytes(tensor_f::raw_data, t.raw(), t.nbytes());
}

bool has_info(const ir::ValueInfo& info) {
  return info.kind != ValueKind::Dense || info.dtype != DType::Undefined || info.has_shape;
}

// A TypeProto: tensor_type (1), or sequence_type (4) / optional_type (9) around the element's type.
void write_type(Writer& type, const ir::ValueInfo& info) {
  if (info.kind != ValueKind::Dense) {
    type.message(info.kind == ValueKind::Sequence ? 4 : 9, [&](Writer& wrapper) {
      if (info.elem && has_info(*info.elem)) wrapper.message(1, [&](Writer& elem) { write_type(elem, *info.elem); });
    });
    return;
  }
  type.message(1, [&](Writer& tensor) {    // TypeProto.Tensor
    if (info.dtype != DType::Undefined) tensor.int64(1, static_cast<int64_t>(info.dtype));
    if (!info.has_shape) return;
    tensor.message(2, [&](Writer& shape) {  // TensorShapeProto
      for (size_t d = 0; d < info.dims.size(); ++d) {
        shape.message(1, [&](Writer& dim) {
          const std::string param = d < info.dim_params.size() ? info.dim_params[d] : std::string();
          if (!param.empty()) dim.string(2, param);
          else if (info.dims[d] >= 0) dim.int64(1, info.dims[d]);
        });
      }
    });
  });
}

void write_value_info(Writer& w, uint32_t field, const std::string& name, const ir::ValueInfo& info) {
  w.message(field, [&](Writer& vi) {
    vi.string(1, name);
    if (!has_info(info)) return;
    vi.message(2, [&](Writer& type) { write_type(type, info); });
  });
}

// The declared type of an initializer listed as a graph input (IR < 4) when the IR has none.
ir::ValueInfo info_of_tensor(const Tensor& t) {
  ir::ValueInfo info;
  info.dtype = t.dtype();
  info.has_shape = true;
  info.dims = t.shape();
  info.dim_params.assign(t.rank(), "");
  return info;
}

void write_graph(Writer& w, const ir::Graph& g, int64_t ir_version);

void write_attribute(Writer& w, const ir::Attribute& a, int64_t ir_version, const std::string& node_name) {
  using T = ir::AttrType;
  w.string(attr_f::name, a.name);
  switch (a.type) {
    case T::Float: w.float32(attr_f::f, a.f); break;
    case T::Int: w.int64(attr_f::i, a.i); break;
    case T::String: w.string(attr_f::s, a.s); break;
    case T::Tensor: w.message(attr_f::t, [&](Writer& t) { write_tensor(t, a.t, ""); }); break;
    case T::Graph:
      check(a.g != nullptr, "node '" + node_name + "': graph attribute '" + a.name + "' has no graph");
      w.message(attr_f::g, [&](Writer& g) { write_graph(g, *a.g, ir_version); });
      break;
    case T::Floats: w.packed_floats(attr_f::floats, a.floats); break;
    case T::Ints: w.packed_varints(attr_f::ints, a.ints); break;
    case T::Strings:
      for (const auto& s : a.strings) w.string(attr_f::strings, s);
      break;
    case T::Tensors:
      for (const auto& t : a.tensors) w.message(attr_f::tensors, [&](Writer& m) { write_tensor(m, t, ""); });
      break;
    case T::Graphs:
      for (const auto& g : a.graphs) {
        check(g != nullptr, "node '" + node_name + "': graphs attribute '" + a.name + "' has an empty entry");
        w.message(attr_f::graphs, [&](Writer& m) { write_graph(m, *g, ir_version); });
      }
      break;
    case T::Undefined: break;  // a reference-only attribute (function bodies)
    default:
      fail("node '" + node_name + "': attribute '" + a.name + "' of type " + std::to_string(static_cast<int>(a.type)) +
           " (sparse tensor / type proto) cannot be written: the IR does not keep its data");
  }
  w.int64(attr_f::type, static_cast<int64_t>(a.type));
  if (!a.ref_attr_name.empty()) w.string(attr_f::ref_attr_name, a.ref_attr_name);
}

void write_node(Writer& w, const ir::Graph& g, const ir::Node& n, int64_t ir_version) {
  auto name_of = [&](int id) { return id < 0 ? std::string() : g.value(id).name; };
  for (int in : n.inputs) w.string(node_f::input, name_of(in));
  for (int out : n.outputs) w.string(node_f::output, name_of(out));
  w.string(node_f::name, n.name);
  w.string(node_f::op_type, n.op_type);
  for (const auto& a : n.attributes)
    w.message(node_f::attribute, [&](Writer& m) { write_attribute(m, a, ir_version, n.name); });
  if (!n.domain.empty()) w.string(node_f::domain, n.domain);
}

// Initializers in value order, skipping Constant-node outputs (their producer is the node).
bool is_initializer(const ir::Value& v) { return v.initializer.has_value() && v.producer < 0; }

void write_graph(Writer& w, const ir::Graph& g, int64_t ir_version) {
  for (const auto& n : g.nodes) w.message(graph_f::node, [&](Writer& m) { write_node(m, g, n, ir_version); });
  w.string(graph_f::name, g.name);
  for (const auto& v : g.values)
    if (is_initializer(v)) w.message(graph_f::initializer, [&](Writer& m) { write_tensor(m, *v.initializer, v.name); });

  std::vector<uint8_t> listed(g.values.size(), 0);  // already written as input/output
  for (int id : g.inputs) {
    write_value_info(w, graph_f::input, g.value(id).name, g.value(id).info);
    listed[static_cast<size_t>(id)] = 1;
  }
  // Initializers that were declared graph inputs keep that declaration; IR < 4 requires it for all.
  for (size_t id = 0; id < g.values.size(); ++id) {
    const ir::Value& v = g.values[id];
    if (!is_initializer(v) || listed[id]) continue;
    if (ir_version < kIrInitializersNotInputs) {
      write_value_info(w, graph_f::input, v.name, has_info(v.info) ? v.info : info_of_tensor(*v.initializer));
    } else if (has_info(v.info)) {
      write_value_info(w, graph_f::input, v.name, v.info);
    } else {
      continue;
    }
    listed[id] = 1;
  }
  for (int id : g.outputs) {
    write_value_info(w, graph_f::output, g.value(id).name, g.value(id).info);
    listed[static_cast<size_t>(id)] = 1;
  }
  for (size_t id = 0; id < g.values.size(); ++id)
    if (!listed[id] && has_info(g.values[id].info))
      write_value_info(w, graph_f::value_info, g.values[id].name, g.values[id].info);
}

}  // namespace

std::vector<uint8_t> write_onnx(const ir::Model& model) {
  Writer w;
  w.int64(model_f::ir_version, model.ir_version);
  if (!model.producer_name.empty()) w.string(model_f::producer_name, model.producer_name);
  if (!model.producer_version.empty()) w.string(model_f::producer_version, model.producer_version);
  w.message(model_f::graph, [&](Writer& g) { write_graph(g, model.graph, model.ir_version); });
  for (const auto& o : model.opset_imports) {
    w.message(model_f::opset_import, [&](Writer& m) {
      m.string(1, o.domain);
      m.int64(2, o.version);
    });
  }
  for (const auto& entry : model.metadata) {  // no structured binding: clang 14 cannot capture one
    w.message(model_f::metadata_props, [&](Writer& m) {
      m.string(1, entry.first);
      m.string(2, entry.second);
    });
  }
  return w.take();
}

std::vector<uint8_t> write_tensor_proto(const Tensor& tensor, const std::string& name) {
  Writer w;
  write_tensor(w, tensor, name);
  return w.take();
}

}  // namespace ptq::reader
