#include "reader/onnx.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/half.h"
#include "core/size.h"
#include "reader/external_data.h"

namespace ptq::reader {
namespace {

using pb::Field;
using pb::Reader;
using pb::WireType;

constexpr int kMaxGraphDepth = 32;  // bounds recursion on hostile files (nested subgraphs)
// The newest ONNX IR version and default-domain opset whose rules this reader and the kernels know
// (ONNX 1.18); newer ones load with a warning.
constexpr int64_t kNewestIrVersion = 11;
constexpr int64_t kNewestOpset = 23;

struct Context {
  const ReadOptions& options;
  std::vector<std::shared_ptr<const std::vector<uint8_t>>>* owned;
  std::vector<std::string>* warnings = nullptr;  // the model's load warnings (ir::Model::warnings)
};

// ---- TensorProto ------------------------------------------------------------------------------

struct TensorFields {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::string name;
  pb::Bytes raw;
  bool has_raw = false;
  std::vector<Field> typed;  // float_data/int32_data/int64_data/double_data/uint64_data fields
  std::map<std::string, std::string> external;
  int32_t data_location = 0;
  bool has_segment = false;
};

TensorFields parse_tensor_fields(pb::Bytes bytes) {
  TensorFields t;
  Reader r(bytes, "TensorProto");
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: pb::for_each_repeated(f, WireType::Varint, r, [&](uint64_t v) { t.dims.push_back(static_cast<int64_t>(v)); }); break;
      case 2: t.data_type = static_cast<int32_t>(f.varint); break;
      case 3: t.has_segment = true; break;
      case 8: t.name = f.bytes.str(); break;
      case 9: t.raw = f.bytes; t.has_raw = true; break;
      case 4: case 5: case 7: case 10: case 11: t.typed.push_back(f); break;
      case 6: break;  // string_data: string tensors are not supported; rejected by dtype below
      case 13: {
        Reader e(f.bytes, "TensorProto.external_data");
        Field ef;
        std::string key, value;
        while (e.next(ef)) {
          if (ef.number == 1) key = ef.bytes.str();
          else if (ef.number == 2) value = ef.bytes.str();
        }
        t.external[key] = value;
        break;
      }
      case 14: t.data_location = static_cast<int32_t>(f.varint); break;
      default: break;
    }
  }
  return t;
}

std::shared_ptr<std::vector<uint8_t>> new_buffer(size_t n) { return std::make_shared<std::vector<uint8_t>>(n); }

// Element payloads of typed fields, converted to the tensor's element layout.
template <class T>
void fill_typed(const TensorFields& tf, uint32_t field_number, WireType wire, Reader& r, std::vector<uint8_t>& out,
                T (*convert)(uint64_t)) {
  for (const Field& f : tf.typed) {
    if (f.number != field_number) continue;
    pb::for_each_repeated(f, wire, r, [&](uint64_t v) {
      const T x = convert(v);
      const size_t at = out.size();
      out.resize(at + sizeof(T));
      std::memcpy(out.data() + at, &x, sizeof(T));
    });
  }
}

// An external_data offset or length: decimal digits only, at most 2^63.
uint64_t parse_external_number(const std::string& text, const std::string& label, const char* key) {
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 19;
  for (char c : text) {
    if (c < '0' || c > '9') ok = false;
    else v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) throw FormatError(label + ": external data " + key + " '" + text + "' is not a byte count");
  return v;
}

// The bytes of the external file at `location`: the given files first, then options.open_external.
std::optional<pb::Bytes> external_file(const std::string& location, const ReadOptions& options) {
  if (auto file = options.external_files.find(location); file != options.external_files.end()) return file->second;
  if (options.open_external) return options.open_external(location);
  return std::nullopt;
}

// A 4-bit tensor from its packed bytes ((numel + 1) / 2 of them, element 2k in the low nibble of byte
// k, element 2k + 1 in the high one): one value per byte, int4 sign-extended.
Tensor unpack4(DType dtype, const Shape& shape, const uint8_t* p) {
  Tensor t(dtype, shape);
  uint8_t* out = t.mutable_data<uint8_t>();
  const bool is_signed = dtype == DType::Int4;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint8_t byte = p[i / 2];
    const uint8_t nibble = (i % 2) ? static_cast<uint8_t>(byte >> 4) : static_cast<uint8_t>(byte & 0x0F);
    out[i] = is_signed ? static_cast<uint8_t>(static_cast<int8_t>((nibble ^ 8) - 8)) : nibble;
  }
  return t;
}

Tensor make_tensor(const TensorFields& tf, const Context& ctx, const std::string& where) {
  const std::string label = "tensor '" + tf.name + "'" + (where.empty() ? "" : " in " + where);
  if (tf.has_segment) throw FormatError(label + ": segmented tensors are not supported");
  if (!dtype_supported(tf.data_type))
    throw Error(label + ": unsupported data type " + std::to_string(tf.data_type) +
                " (supported: float, float16, bfloat16, double, int4/8/16/32/64, uint4/8/16/32/64, bool)");
  const DType dtype = static_cast<DType>(tf.data_type);
  for (int64_t d : tf.dims)
    if (d < 0) throw FormatError(label + ": negative dimension");
  Shape shape(tf.dims.begin(), tf.dims.end());
  // Element count and byte size in 64-bit arithmetic: on wasm32 a size_t product would wrap, and a
  // shape of 2^32 + 4 floats would then "match" 16 bytes of data. Every check below compares the
  // 64-bit size with the bytes actually stored, so a size that passes fits the heap.
  int64_t numel = 0;
  uint64_t nbytes = 0;
  try {
    numel = shape_numel(shape);
  } catch (const SizeError&) {
    throw FormatError(label + ": shape too large " + shape_str(shape));
  }
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), static_cast<uint64_t>(dtype_size(dtype)), &nbytes))
    throw FormatError(label + ": shape too large " + shape_str(shape));
  // int4 / uint4: two values per byte in the file (low nibble first), one per byte in the tensor.
  const bool packed4 = dtype_is_packed4(dtype);
  if (packed4) nbytes = (static_cast<uint64_t>(numel) + 1) / 2;

  auto from_bytes = [&](const uint8_t* p, size_t size, const char* source) -> Tensor {
    if (static_cast<uint64_t>(size) != nbytes)
      throw FormatError(label + ": " + source + " holds " + std::to_string(size) + " bytes but shape " + shape_str(shape) +
                        " of " + dtype_name(dtype) + " needs " + std::to_string(nbytes));
    if (packed4) return unpack4(dtype, shape, p);
    // Zero-copy when the element alignment holds; otherwise one aligned copy (UB-free loads).
    if (reinterpret_cast<uintptr_t>(p) % dtype_size(dtype) == 0) return Tensor::view(dtype, shape, p);
    Tensor t(dtype, shape);
    if (size) std::memcpy(t.mutable_raw(), p, size);
    return t;
  };

  if (tf.data_location == 1 || !tf.external.empty()) {
    auto loc = tf.external.find("location");
    if (loc == tf.external.end()) throw FormatError(label + ": external data without a 'location'");
    check_external_location(loc->second, label);
    const std::optional<pb::Bytes> file = external_file(loc->second, ctx.options);
    if (!file)
      throw Error(label + ": its data is stored in the external file '" + loc->second +
                  "', which was not provided (open it together with the model)");
    // offset / length are decimal strings; parsed in 64 bits and compared with the file size before any
    // narrowing to size_t (32 bits in wasm).
    const uint64_t file_size = file->size;
    uint64_t offset = 0, length = file_size;
    if (auto o = tf.external.find("offset"); o != tf.external.end()) offset = parse_external_number(o->second, label, "offset");
    if (auto l = tf.external.find("length"); l != tf.external.end()) length = parse_external_number(l->second, label, "length");
    else if (offset <= file_size) length = file_size - offset;
    if (offset > file_size || length > file_size - offset)
      throw FormatError(label + ": external range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                        ") is outside '" + loc->second + "' (" + std::to_string(file->size) + " bytes)");
    return from_bytes(file->data + static_cast<size_t>(offset), static_cast<size_t>(length), "external data");
  }
  if (tf.has_raw) return from_bytes(tf.raw.data, tf.raw.size, "raw_data");
  if (numel == 0) return Tensor(dtype, shape);

  // Typed fields. A packed float_data field is itself little-endian contiguous: view it directly.
  Reader r(pb::Bytes{}, "TensorProto typed data");
  if (dtype == DType::Float && tf.typed.size() == 1 && tf.typed[0].number == 4 && tf.typed[0].wire == WireType::Bytes)
    return from_bytes(tf.typed[0].bytes.data, tf.typed[0].bytes.size, "float_data");

  auto buffer = new_buffer(0);
  std::vector<uint8_t>& out = *buffer;
  // Reserve no more than the fields can hold (each element takes at least one byte on the wire): a
  // corrupt shape claiming 2^40 elements must end in the size error below, not an allocation failure.
  size_t wire_bound = 0;
  for (const auto& f : tf.typed) wire_bound += f.wire == WireType::Bytes ? f.bytes.size : 1;
  out.reserve(static_cast<size_t>(std::min<uint64_t>(nbytes, static_cast<uint64_t>(wire_bound) * dtype_size(dtype))));
  switch (dtype) {
    case DType::Float:
      fill_typed<float>(tf, 4, WireType::Fixed32, r, out, [](uint64_t v) { float x; uint32_t b = static_cast<uint32_t>(v); std::memcpy(&x, &b, 4); return x; });
      break;
    case DType::Double:
      fill_typed<double>(tf, 10, WireType::Fixed64, r, out, [](uint64_t v) { double x; std::memcpy(&x, &v, 8); return x; });
      break;
    case DType::Int64:
      fill_typed<int64_t>(tf, 7, WireType::Varint, r, out, [](uint64_t v) { return static_cast<int64_t>(v); });
      break;
    case DType::UInt32:
      fill_typed<uint32_t>(tf, 11, WireType::Varint, r, out, [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DType::UInt64:
      fill_typed<uint64_t>(tf, 11, WireType::Varint, r, out, [](uint64_t v) { return v; });
      break;
    case DType::Int32:
      fill_typed<int32_t>(tf, 5, WireType::Varint, r, out, [](uint64_t v) { return static_cast<int32_t>(v); });
      break;
    case DType::Int16:
      fill_typed<int16_t>(tf, 5, WireType::Varint, r, out, [](uint64_t v) { return static_cast<int16_t>(v); });
      break;
    case DType::Int8:
      fill_typed<int8_t>(tf, 5, WireType::Varint, r, out, [](uint64_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::UInt16: case DType::Float16: case DType::BFloat16:
      fill_typed<uint16_t>(tf, 5, WireType::Varint, r, out, [](uint64_t v) { return static_cast<uint16_t>(v); });
      break;
    case DType::UInt8: case DType::Bool: case DType::UInt4: case DType::Int4:  // 4-bit: one packed byte each
      fill_typed<uint8_t>(tf, 5, WireType::Varint, r, out, [](uint64_t v) { return static_cast<uint8_t>(v); });
      break;
    default: throw Error(label + ": unsupported data type");
  }
  if (static_cast<uint64_t>(out.size()) != nbytes)
    throw FormatError(label + ": typed data holds " +
                      (packed4 ? std::to_string(out.size()) + " packed pairs" : std::to_string(out.size() / dtype_size(dtype)) + " elements") +
                      " but shape " + shape_str(shape) + " needs " + (packed4 ? std::to_string(nbytes) : std::to_string(numel)));
  if (packed4) return unpack4(dtype, shape, out.data());
  Tensor t(dtype, shape);
  std::memcpy(t.mutable_raw(), out.data(), out.size());
  return t;
}

// ---- ValueInfoProto ---------------------------------------------------------------------------

// A TypeProto into `info`: tensor_type (1), sequence_type (4) and optional_type (9), whose elem_type
// (field 1 of both) is a TypeProto again. A dim_value below zero is read as unknown (-1); its index
// and value go to `negative` when given.
void parse_type(pb::Bytes bytes, ir::ValueInfo& info, std::vector<std::pair<size_t, int64_t>>* negative, int depth) {
  if (depth > 16) throw FormatError("TypeProto nested deeper than 16 levels");
  Reader type(bytes, "TypeProto");
  Field tf;
  while (type.next(tf)) {
    if (tf.wire != WireType::Bytes) continue;
    if (tf.number == 4 || tf.number == 9) {
      info.kind = tf.number == 4 ? ValueKind::Sequence : ValueKind::Optional;
      auto elem = std::make_shared<ir::ValueInfo>();
      Reader wrapper(tf.bytes, tf.number == 4 ? "TypeProto.Sequence" : "TypeProto.Optional");
      Field wf;
      while (wrapper.next(wf))
        if (wf.number == 1 && wf.wire == WireType::Bytes) parse_type(wf.bytes, *elem, nullptr, depth + 1);
      info.elem = std::move(elem);
      continue;
    }
    if (tf.number != 1) continue;  // map and sparse tensor types: undeclared
    Reader tensor(tf.bytes, "TypeProto.Tensor");
    Field ef;
    while (tensor.next(ef)) {
      if (ef.number == 1) {
        info.dtype = static_cast<DType>(ef.varint);
      } else if (ef.number == 2 && ef.wire == WireType::Bytes) {
        info.has_shape = true;
        Reader shape(ef.bytes, "TensorShapeProto");
        Field sf;
        while (shape.next(sf)) {
          if (sf.number != 1 || sf.wire != WireType::Bytes) continue;
          Reader dim(sf.bytes, "TensorShapeProto.Dimension");
          Field df;
          int64_t value = -1;
          bool declared = false;
          std::string param;
          while (dim.next(df)) {
            if (df.number == 1) {
              value = static_cast<int64_t>(df.varint);
              declared = true;
            } else if (df.number == 2) param = df.bytes.str();
          }
          if (declared && value < 0) {
            if (negative) negative->emplace_back(info.dims.size(), value);
            value = -1;
          }
          info.dims.push_back(value);
          info.dim_params.push_back(param);
        }
      }
    }
  }
}

ir::ValueInfo parse_value_info(pb::Bytes bytes, std::vector<std::pair<size_t, int64_t>>* negative = nullptr) {
  ir::ValueInfo info;
  Reader r(bytes, "ValueInfoProto");
  Field f;
  while (r.next(f)) {
    if (f.number == 1) {
      info.name = f.bytes.str();
    } else if (f.number == 2 && f.wire == WireType::Bytes) {
      parse_type(f.bytes, info, negative, 0);
    }
  }
  return info;
}

// ---- Graph / Node / Attribute -----------------------------------------------------------------

std::shared_ptr<ir::Graph> parse_graph(pb::Bytes bytes, const Context& ctx, int depth);

ir::Attribute parse_attribute(pb::Bytes bytes, const Context& ctx, int depth, const std::string& node_label) {
  ir::Attribute a;
  Reader r(bytes, "AttributeProto");
  Field f;
  bool has_type = false;
  while (r.next(f)) {
    switch (f.number) {
      case 1: a.name = f.bytes.str(); break;
      case 20: a.type = static_cast<ir::AttrType>(f.varint); has_type = true; break;
      case 21: a.ref_attr_name = f.bytes.str(); break;
      case 2: a.f = pb::as_float(f); break;
      case 3: a.i = pb::as_int64(f); break;
      case 4: a.s = f.bytes.str(); break;
      case 5: a.t = make_tensor(parse_tensor_fields(f.bytes), ctx, node_label); break;
      case 6: a.g = parse_graph(f.bytes, ctx, depth + 1); break;
      case 7: pb::for_each_repeated(f, WireType::Fixed32, r, [&](uint64_t v) { Field x; x.varint = v; a.floats.push_back(pb::as_float(x)); }); break;
      case 8: pb::for_each_repeated(f, WireType::Varint, r, [&](uint64_t v) { a.ints.push_back(static_cast<int64_t>(v)); }); break;
      case 9: a.strings.push_back(f.bytes.str()); break;
      case 10: a.tensors.push_back(make_tensor(parse_tensor_fields(f.bytes), ctx, node_label)); break;
      case 11: a.graphs.push_back(parse_graph(f.bytes, ctx, depth + 1)); break;
      default: break;  // sparse tensors and type protos: kept out of the IR
    }
  }
  if (!has_type) {
    // IR < 3 files may omit `type`; infer it from the single populated field.
    if (!a.floats.empty()) a.type = ir::AttrType::Floats;
    else if (!a.ints.empty()) a.type = ir::AttrType::Ints;
    else if (!a.strings.empty()) a.type = ir::AttrType::Strings;
    else if (a.t.defined()) a.type = ir::AttrType::Tensor;
    else if (a.g) a.type = ir::AttrType::Graph;
    else if (!a.s.empty()) a.type = ir::AttrType::String;
    else if (a.i != 0) a.type = ir::AttrType::Int;
    else a.type = ir::AttrType::Float;
  }
  return a;
}

struct RawNode {
  std::vector<std::string> inputs, outputs;
  ir::Node node;
};

RawNode parse_node(pb::Bytes bytes, const Context& ctx, int depth, size_t index) {
  RawNode n;
  Reader r(bytes, "NodeProto");
  Field f;
  std::vector<pb::Bytes> attrs;
  while (r.next(f)) {
    switch (f.number) {
      case 1: n.inputs.push_back(f.bytes.str()); break;
      case 2: n.outputs.push_back(f.bytes.str()); break;
      case 3: n.node.name = f.bytes.str(); break;
      case 4: n.node.op_type = f.bytes.str(); break;
      case 7: n.node.domain = f.bytes.str(); break;
      case 5: attrs.push_back(f.bytes); break;
      default: break;
    }
  }
  if (n.node.domain == "ai.onnx") n.node.domain.clear();
  const std::string label = "node '" + (n.node.name.empty() ? n.node.op_type + "#" + std::to_string(index) : n.node.name) + "'";
  for (const auto& b : attrs) n.node.attributes.push_back(parse_attribute(b, ctx, depth, label));
  return n;
}

// The tensor a Constant node holds, from whichever value_* attribute it uses.
Tensor constant_value(const ir::Node& node) {
  for (const auto& a : node.attributes) {
    if (a.name == "value") return a.t;
    if (a.name == "value_float") return Tensor::from_floats({}, {a.f});
    if (a.name == "value_floats") return Tensor::from_floats({static_cast<int64_t>(a.floats.size())}, a.floats);
    if (a.name == "value_int") return Tensor::from_int64s({}, {a.i});
    if (a.name == "value_ints") return Tensor::from_int64s({static_cast<int64_t>(a.ints.size())}, a.ints);
  }
  throw Error("Constant node '" + node.name + "' has no supported value attribute (value, value_float(s), value_int(s))");
}

int value_id(ir::Graph& g, const std::string& name) {
  auto it = g.value_index.find(name);
  if (it != g.value_index.end()) return it->second;
  const int id = static_cast<int>(g.values.size());
  g.values.emplace_back();
  g.values.back().name = name;
  g.value_index.emplace(name, id);
  return id;
}

std::shared_ptr<ir::Graph> parse_graph(pb::Bytes bytes, const Context& ctx, int depth) {
  if (depth > kMaxGraphDepth) throw FormatError("subgraphs nested deeper than " + std::to_string(kMaxGraphDepth) + " levels");
  auto graph = std::make_shared<ir::Graph>();
  ir::Graph& g = *graph;
  Reader r(bytes, "GraphProto");
  Field f;
  std::vector<pb::Bytes> nodes, initializers, inputs, outputs, value_infos;
  while (r.next(f)) {
    switch (f.number) {
      case 1: nodes.push_back(f.bytes); break;
      case 2: g.name = f.bytes.str(); break;
      case 5: initializers.push_back(f.bytes); break;
      case 11: inputs.push_back(f.bytes); break;
      case 12: outputs.push_back(f.bytes); break;
      case 13: value_infos.push_back(f.bytes); break;
      case 15: throw Error("graph '" + g.name + "': sparse initializers are not supported");
      default: break;
    }
  }
  for (const auto& b : initializers) {
    TensorFields tf = parse_tensor_fields(b);
    const int id = value_id(g, tf.name);
    g.values[static_cast<size_t>(id)].initializer = make_tensor(tf, ctx, "graph initializers");
  }
  for (const auto& b : inputs) {
    std::vector<std::pair<size_t, int64_t>> negative;
    ir::ValueInfo info = parse_value_info(b, &negative);
    if (ctx.warnings && depth == 0)
      for (const auto& [axis, value] : negative)
        ctx.warnings->push_back("graph input '" + info.name + "' declares dimension " + std::to_string(axis) + " as " +
                                std::to_string(value) + ", which is not a size: it is treated as unknown (the calibration data decides it)");
    const int id = value_id(g, info.name);
    auto& v = g.values[static_cast<size_t>(id)];
    v.info = info;
    if (!v.initializer) {  // IR < 4 lists initializers among inputs too
      v.is_graph_input = true;
      g.inputs.push_back(id);
    }
  }
  for (const auto& b : value_infos) {
    ir::ValueInfo info = parse_value_info(b);
    const int id = value_id(g, info.name);
    g.values[static_cast<size_t>(id)].info = info;
  }
  std::vector<RawNode> raw;
  raw.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) raw.push_back(parse_node(nodes[i], ctx, depth, i));
  // Unique node names: unnamed or repeated names get "<op_type>_<index>" (the debugger keys by name).
  std::unordered_map<std::string, int> seen;
  for (size_t i = 0; i < raw.size(); ++i) {
    std::string& name = raw[i].node.name;
    if (name.empty() || seen.count(name)) {
      std::string candidate = raw[i].node.op_type + "_" + std::to_string(i);
      while (seen.count(candidate)) candidate += "_";
      name = candidate;
    }
    seen.emplace(name, 0);
  }
  for (auto& rn : raw) {
    for (const auto& in : rn.inputs) rn.node.inputs.push_back(in.empty() ? ir::kNoValue : value_id(g, in));
    for (const auto& out : rn.outputs) rn.node.outputs.push_back(out.empty() ? ir::kNoValue : value_id(g, out));
    if (rn.node.op_type == "Constant" && rn.node.domain.empty()) {
      if (rn.node.outputs.size() != 1 || rn.node.outputs[0] < 0) throw Error("Constant node '" + rn.node.name + "' must have one output");
      g.values[static_cast<size_t>(rn.node.outputs[0])].initializer = constant_value(rn.node);
    }
    g.nodes.push_back(std::move(rn.node));
  }
  for (const auto& b : outputs) {
    ir::ValueInfo info = parse_value_info(b);
    const int id = value_id(g, info.name);
    auto& v = g.values[static_cast<size_t>(id)];
    if (!v.info.has_shape && v.info.dtype == DType::Undefined) v.info = info;
    v.info.name = info.name;
    v.is_graph_output = true;
    g.outputs.push_back(id);
  }
  ir::finalize_graph(g, depth > 0);
  return graph;
}

// Each node's opset version from its domain, subgraphs included.
void resolve_opsets(const ir::Model& model, ir::Graph& graph) {
  for (auto& n : graph.nodes) {
    std::string d = n.domain;
    if (d.empty() && n.op_type.rfind("Hz", 0) == 0 && model.opset("horizon") > 0) d = "horizon";
    n.opset = static_cast<int>(model.opset(d));
    if (n.opset == 0 && !d.empty()) n.opset = 1;
    for (auto& a : n.attributes) {
      if (a.g) resolve_opsets(model, *a.g);
      for (auto& sub : a.graphs) resolve_opsets(model, *sub);
    }
  }
}

// How messages name the file: 'name', or "the model" when the caller names the file itself (the
// wasm API: the page and the CLI put the file name in front of the message).
std::string named(const std::string& file) { return file.empty() ? "the model" : "'" + file + "'"; }

// ir_version and opset versions: impossible values are errors (an opset beyond int32 would be
// truncated into a node's opset); versions newer than this reader knows are read with the newest
// rules it has, and said so in a warning.
void check_versions(ir::Model& model, const std::string& file) {
  if (model.ir_version < 0)
    throw Error(named(file) + " declares ir_version " + std::to_string(model.ir_version) + ", which is not a version");
  if (model.ir_version > kNewestIrVersion)
    model.warnings.push_back(named(file) + " declares ir_version " + std::to_string(model.ir_version) +
                             ", newer than the newest this reader knows (" + std::to_string(kNewestIrVersion) +
                             "): it is read by the IR " + std::to_string(kNewestIrVersion) + " rules");
  for (const auto& o : model.opset_imports) {
    const std::string domain = o.domain.empty() ? "ai.onnx" : o.domain;
    if (o.version < 0 || o.version > std::numeric_limits<int32_t>::max())
      throw Error(named(file) + " imports opset " + std::to_string(o.version) + " of domain '" + domain +
                  "', which is not a version");
    if (o.domain.empty() && o.version > kNewestOpset)
      model.warnings.push_back(named(file) + " imports opset " + std::to_string(o.version) +
                               " of domain 'ai.onnx', newer than the newest this reader knows (" +
                               std::to_string(kNewestOpset) + "): its ops run with the opset " +
                               std::to_string(kNewestOpset) + " rules");
  }
}

}  // namespace

ir::Model read_onnx(const uint8_t* data, size_t size, const ReadOptions& options) {
  ir::Model model;
  Context ctx{options, &model.owned_buffers, &model.warnings};
  if (size == 0) throw FormatError(named(options.file_name) + " is empty, not an ONNX model");
  try {
    Reader r(data, size, "ModelProto");
    Field f;
    pb::Bytes graph_bytes;
    bool has_graph = false;
    while (r.next(f)) {
      switch (f.number) {
        case 1: model.ir_version = pb::as_int64(f); break;
        case 2: model.producer_name = f.bytes.str(); break;
        case 3: model.producer_version = f.bytes.str(); break;
        case 7:
          if (f.wire != WireType::Bytes) r.bad("ModelProto.graph is not a message");
          graph_bytes = f.bytes;
          has_graph = true;
          break;
        case 8: {
          if (f.wire != WireType::Bytes) r.bad("opset_import is not a message");
          ir::OpsetImport o;
          Reader op(f.bytes, "OperatorSetIdProto");
          Field of;
          while (op.next(of)) {
            if (of.number == 1) o.domain = of.bytes.str();
            else if (of.number == 2) o.version = pb::as_int64(of);
          }
          if (o.domain == "ai.onnx") o.domain.clear();
          model.opset_imports.push_back(o);
          break;
        }
        case 14: {
          Reader e(f.bytes, "metadata_props");
          Field ef;
          std::string key, value;
          while (e.next(ef)) {
            if (ef.number == 1) key = ef.bytes.str();
            else if (ef.number == 2) value = ef.bytes.str();
          }
          model.metadata[key] = value;
          break;
        }
        default: break;
      }
    }
    if (!has_graph) throw Error(named(options.file_name) + " is not an ONNX model (no graph found)");
    if (model.opset_imports.empty()) model.opset_imports.push_back({"", 1});
    check_versions(model, options.file_name);
    auto g = parse_graph(graph_bytes, ctx, 0);
    model.graph = std::move(*g);
  } catch (const FormatError& e) {
    if (!starts_like_model_proto(data, size))
      throw FormatError(named(options.file_name) + " is not an ONNX model (" + e.what() + ")");
    throw FormatError(named(options.file_name) + " is not a valid ONNX model: " + e.what());
  }
  resolve_opsets(model, model.graph);
  return model;
}

Tensor read_tensor_proto(const uint8_t* data, size_t size, const ReadOptions& options, std::string* name_out) {
  ir::Model dummy;
  Context ctx{options, &dummy.owned_buffers};
  try {
    TensorFields tf = parse_tensor_fields(pb::Bytes{data, size});
    if (name_out) *name_out = tf.name;
    Tensor t = make_tensor(tf, ctx, options.file_name);
    // Views would dangle once the caller frees `data`; tensor files are small, so copy.
    return t.owned_bytes() ? t : t.clone();
  } catch (const FormatError& e) {
    throw FormatError("'" + options.file_name + "' is not a valid TensorProto: " + e.what());
  }
}

namespace {

// SequenceProto / OptionalProto: name (1), elem_type (2: 0 undefined, 1 tensor, 3 sequence, 5 optional;
// 2 sparse tensor and 4 map are not values the executor holds), tensor values (3), sequence values (5).
Tensor parse_value_proto(pb::Bytes bytes, ValueKind kind, Context& ctx, const std::string& file, std::string* name_out,
                         int depth) {
  if (depth > 2) throw FormatError("values nested deeper than an optional holding a sequence");
  const bool sequence = kind == ValueKind::Sequence;
  Reader r(bytes, sequence ? "SequenceProto" : "OptionalProto");
  Field f;
  int64_t elem_type = 0;
  std::vector<Tensor> items;
  while (r.next(f)) {
    if (f.number == 1 && name_out) {
      *name_out = f.bytes.str();
    } else if (f.number == 2) {
      elem_type = static_cast<int64_t>(f.varint);
    } else if (f.number == 3 && f.wire == WireType::Bytes) {
      Tensor t = make_tensor(parse_tensor_fields(f.bytes), ctx, file);
      items.push_back(t.owned_bytes() ? t : t.clone());
    } else if (f.number == 5 && f.wire == WireType::Bytes) {
      if (sequence) throw FormatError("a sequence of sequences is not supported");
      items.push_back(parse_value_proto(f.bytes, ValueKind::Sequence, ctx, file, nullptr, depth + 1));
    } else if (f.number == 4 || f.number == 6 || f.number == 7) {
      throw FormatError("sparse tensor, map and optional elements are not supported");
    }
  }
  if (elem_type != 0 && elem_type != 1 && elem_type != 3)
    throw FormatError("element type " + std::to_string(elem_type) + " is not supported (tensors and sequences are)");
  if (sequence) return Tensor::sequence(std::move(items), DType::Undefined);
  if (items.size() > 1) throw FormatError("an optional holds at most one value");
  return Tensor::optional(items.empty() ? Tensor() : std::move(items[0]));
}

}  // namespace

Tensor read_value_proto(const uint8_t* data, size_t size, ValueKind kind, const ReadOptions& options,
                        std::string* name_out) {
  if (kind == ValueKind::Dense) return read_tensor_proto(data, size, options, name_out);
  ir::Model dummy;
  Context ctx{options, &dummy.owned_buffers};
  try {
    return parse_value_proto(pb::Bytes{data, size}, kind, ctx, options.file_name, name_out, 0);
  } catch (const Error& e) {
    throw FormatError("'" + options.file_name + "' is not a valid " +
                      (kind == ValueKind::Sequence ? "SequenceProto" : "OptionalProto") + ": " + e.what());
  }
}

}  // namespace ptq::reader
