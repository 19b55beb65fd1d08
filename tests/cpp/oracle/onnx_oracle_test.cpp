// Oracle test: every ONNX file we can find is parsed both by libprotobuf (Debian's generated
// onnx.pb classes) and by our zero-copy reader::read_onnx, and the two must describe the same model:
// nodes (matched by name, since our reader sorts topologically and names unnamed nodes),
// attributes, initializer bytes, graph inputs/outputs/value_info, opset imports — recursively into
// subgraphs. Files our reader rejects on purpose (string/complex tensors, sparse initializers,
// external data) must be rejected with an error, never parsed into something else.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "oracle/packed4.h"
#include "reader/onnx.h"

namespace fs = std::filesystem;
using namespace ptq;

namespace {

std::vector<fs::path> model_files() {
  std::vector<fs::path> out;
  auto add_tree = [&](const fs::path& root) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return;
    for (const auto& e : fs::recursive_directory_iterator(root, ec))
      if (e.is_regular_file() && e.path().extension() == ".onnx") out.push_back(e.path());
  };
  add_tree("/usr/share/libonnx-testdata/data");
  add_tree(fs::path(PTQ_SOURCE_DIR) / ".cache/fixtures");
  add_tree(fs::path(PTQ_SOURCE_DIR) / "tests/fixtures/netron-dom");
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <class T>
std::string text(const T& v) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, std::string>) {
    out << '"' << v << '"';
  } else if constexpr (std::is_arithmetic_v<T>) {
    out << v;
  } else {
    out << '[';
    bool first = true;
    for (const auto& x : v) {
      out << (first ? "" : ", ") << text(x);
      first = false;
    }
    out << ']';
  }
  return out.str();
}

// Collects mismatches with a path prefix ("graph 'g' / node 'n' / attribute 'a'").
struct Diff {
  std::vector<std::string> errors;
  template <class A, class B>
  void eq(const A& expected, const B& actual, const std::string& where) {
    if (!(expected == actual)) errors.push_back(where + ": expected " + text(expected) + ", ours " + text(actual));
  }
  void add(const std::string& message) { errors.push_back(message); }
};

std::string norm_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// ---- what our reader is expected to reject ----------------------------------------------------

std::string tensor_rejection(const onnx::TensorProto& t) {
  if (!dtype_supported(t.data_type())) return "tensor '" + t.name() + "' of data type " + std::to_string(t.data_type());
  if (t.has_segment()) return "segmented tensor";
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) return "external data";
  for (int64_t d : t.dims())
    if (d < 0) return "negative dimension";
  return "";
}

std::string graph_rejection(const onnx::GraphProto& g);

std::string node_rejection(const onnx::NodeProto& n) {
  bool constant_value = false;
  for (const auto& a : n.attribute()) {
    if (a.has_t()) {
      if (auto r = tensor_rejection(a.t()); !r.empty()) return r;
    }
    for (const auto& t : a.tensors())
      if (auto r = tensor_rejection(t); !r.empty()) return r;
    if (a.has_g())
      if (auto r = graph_rejection(a.g()); !r.empty()) return r;
    for (const auto& sg : a.graphs())
      if (auto r = graph_rejection(sg); !r.empty()) return r;
    const std::string& name = a.name();
    if (name == "value" || name == "value_float" || name == "value_floats" || name == "value_int" || name == "value_ints")
      constant_value = true;
  }
  if (n.op_type() == "Constant" && norm_domain(n.domain()).empty() && !constant_value)
    return "Constant with a string or sparse value";
  return "";
}

std::string graph_rejection(const onnx::GraphProto& g) {
  if (g.sparse_initializer_size() > 0) return "sparse initializer";
  for (const auto& t : g.initializer())
    if (auto r = tensor_rejection(t); !r.empty()) return r;
  for (const auto& n : g.node())
    if (auto r = node_rejection(n); !r.empty()) return r;
  return "";
}

// ---- expected values from the protobuf objects ------------------------------------------------

template <class Src>
void append_narrowed(const Src& values, size_t width, std::vector<uint8_t>& out) {
  for (auto v : values) {
    const size_t at = out.size();
    out.resize(at + width);
    std::memcpy(out.data() + at, &v, width);  // little-endian: the low bytes are the element
  }
}

std::vector<uint8_t> stored_bytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return std::vector<uint8_t>(t.raw_data().begin(), t.raw_data().end());
  std::vector<uint8_t> out;
  const size_t width = dtype_size(static_cast<DType>(t.data_type()));
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: append_narrowed(t.float_data(), 4, out); break;
    case onnx::TensorProto::DOUBLE: append_narrowed(t.double_data(), 8, out); break;
    case onnx::TensorProto::INT64: append_narrowed(t.int64_data(), 8, out); break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: append_narrowed(t.uint64_data(), width, out); break;
    default: append_narrowed(t.int32_data(), width, out); break;  // int32 and all narrower types
  }
  return out;
}

// The element bytes our Tensor must hold (4-bit tensors: one element per byte).
std::vector<uint8_t> expected_bytes(const onnx::TensorProto& t) {
  std::vector<uint8_t> bytes = stored_bytes(t);
  return oracle::is_packed4(t.data_type()) ? oracle::unpack4(t.data_type(), oracle::element_count(t), bytes) : bytes;
}

void compare_tensor(const onnx::TensorProto& e, const Tensor& t, const std::string& where, Diff& diff) {
  if (!t.defined()) return diff.add(where + ": our tensor is undefined");
  diff.eq(static_cast<int>(e.data_type()), static_cast<int>(t.dtype()), where + " dtype");
  diff.eq(std::vector<int64_t>(e.dims().begin(), e.dims().end()), t.shape(), where + " dims");
  const auto bytes = expected_bytes(e);
  if (bytes.size() != t.nbytes() || (t.nbytes() && std::memcmp(bytes.data(), t.raw(), t.nbytes()) != 0))
    diff.add(where + ": data bytes differ (" + std::to_string(bytes.size()) + " expected, " + std::to_string(t.nbytes()) +
             " ours)");
}

struct ExpectedInfo {
  int dtype = 0;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> params;
};

ExpectedInfo expected_info(const onnx::ValueInfoProto& v) {
  ExpectedInfo e;
  if (!v.type().has_tensor_type()) return e;
  const auto& tt = v.type().tensor_type();
  e.dtype = tt.elem_type();
  e.has_shape = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    e.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    e.params.push_back(d.has_dim_param() ? d.dim_param() : "");
  }
  return e;
}

void compare_info(const onnx::ValueInfoProto& proto, const ir::ValueInfo& ours, const std::string& where, Diff& diff) {
  const ExpectedInfo e = expected_info(proto);
  diff.eq(e.dtype, static_cast<int>(ours.dtype), where + " dtype");
  diff.eq(e.has_shape, ours.has_shape, where + " has_shape");
  diff.eq(e.dims, ours.dims, where + " dims");
  diff.eq(e.params, ours.dim_params, where + " dim_params");
}

// Our reader's rule for unique node names: unnamed or repeated -> "<op_type>_<index>" (+ "_" while taken).
std::vector<std::string> expected_node_names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (int i = 0; i < g.node_size(); ++i) {
    std::string name = g.node(i).name();
    if (name.empty() || seen.count(name)) {
      name = g.node(i).op_type() + "_" + std::to_string(i);
      while (seen.count(name)) name += "_";
    }
    seen.insert(name);
    names.push_back(name);
  }
  return names;
}

void compare_graph(const onnx::GraphProto& e, const ir::Graph& g, const std::string& where, Diff& diff);

ir::AttrType expected_attr_type(const onnx::AttributeProto& a) {
  if (a.has_type()) return static_cast<ir::AttrType>(a.type());
  // IR < 3: inferred from the populated field, in our reader's documented priority.
  if (a.floats_size()) return ir::AttrType::Floats;
  if (a.ints_size()) return ir::AttrType::Ints;
  if (a.strings_size()) return ir::AttrType::Strings;
  if (a.has_t()) return ir::AttrType::Tensor;
  if (a.has_g()) return ir::AttrType::Graph;
  if (!a.s().empty()) return ir::AttrType::String;
  if (a.i() != 0) return ir::AttrType::Int;
  return ir::AttrType::Float;
}

void compare_attribute(const onnx::AttributeProto& e, const ir::Attribute& a, const std::string& where, Diff& diff) {
  diff.eq(e.name(), a.name, where + " name");
  diff.eq(static_cast<int>(expected_attr_type(e)), static_cast<int>(a.type), where + " type");
  uint32_t ef, af;
  const float f = e.f();
  std::memcpy(&ef, &f, 4);
  std::memcpy(&af, &a.f, 4);
  diff.eq(ef, af, where + " f (bits)");
  diff.eq(static_cast<int64_t>(e.i()), a.i, where + " i");
  diff.eq(e.s(), a.s, where + " s");
  diff.eq(std::vector<int64_t>(e.ints().begin(), e.ints().end()), a.ints, where + " ints");
  diff.eq(std::vector<std::string>(e.strings().begin(), e.strings().end()), a.strings, where + " strings");
  std::vector<uint32_t> efs, afs;
  for (float x : e.floats()) efs.push_back([&] { uint32_t u; std::memcpy(&u, &x, 4); return u; }());
  for (float x : a.floats) afs.push_back([&] { uint32_t u; std::memcpy(&u, &x, 4); return u; }());
  diff.eq(efs, afs, where + " floats (bits)");
  diff.eq(e.has_t(), a.t.defined(), where + " has t");
  if (e.has_t() && a.t.defined()) compare_tensor(e.t(), a.t, where + " t", diff);
  diff.eq(static_cast<size_t>(e.tensors_size()), a.tensors.size(), where + " tensor count");
  for (int i = 0; i < e.tensors_size() && static_cast<size_t>(i) < a.tensors.size(); ++i)
    compare_tensor(e.tensors(i), a.tensors[static_cast<size_t>(i)], where + " tensors[" + std::to_string(i) + "]", diff);
  diff.eq(e.has_g(), a.g != nullptr, where + " has g");
  if (e.has_g() && a.g) compare_graph(e.g(), *a.g, where + " g", diff);
  diff.eq(static_cast<size_t>(e.graphs_size()), a.graphs.size(), where + " graph count");
  for (int i = 0; i < e.graphs_size() && static_cast<size_t>(i) < a.graphs.size(); ++i)
    compare_graph(e.graphs(i), *a.graphs[static_cast<size_t>(i)], where + " graphs[" + std::to_string(i) + "]", diff);
}

std::string value_name(const ir::Graph& g, int id) { return id < 0 ? "" : g.value(id).name; }

// The tensor a Constant node defines, as our reader materialises it.
void compare_constant(const onnx::NodeProto& n, const ir::Graph& g, const std::string& where, Diff& diff) {
  if (n.output_size() != 1) return;
  const int id = g.find_value(n.output(0));
  if (id < 0 || !g.value(id).initializer) return diff.add(where + ": Constant output has no initializer");
  const Tensor& t = *g.value(id).initializer;
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return compare_tensor(a.t(), t, where + " value", diff);
    if (a.name() == "value_float") return diff.eq(std::vector<float>{a.f()}, t.to_float_vector(), where + " value_float");
    if (a.name() == "value_floats")
      return diff.eq(std::vector<float>(a.floats().begin(), a.floats().end()), t.to_float_vector(), where + " value_floats");
    if (a.name() == "value_int") return diff.eq(std::vector<int64_t>{a.i()}, t.to_int64_vector(), where + " value_int");
    if (a.name() == "value_ints")
      return diff.eq(std::vector<int64_t>(a.ints().begin(), a.ints().end()), t.to_int64_vector(), where + " value_ints");
  }
}

void compare_graph(const onnx::GraphProto& e, const ir::Graph& g, const std::string& where, Diff& diff) {
  const std::string at = where + " graph '" + e.name() + "'";
  diff.eq(e.name(), g.name, at + " name");
  diff.eq(static_cast<size_t>(e.node_size()), g.nodes.size(), at + " node count");
  const auto names = expected_node_names(e);
  std::set<std::string> constant_outputs;
  for (int i = 0; i < e.node_size(); ++i) {
    const onnx::NodeProto& n = e.node(i);
    const std::string nw = at + " node '" + names[static_cast<size_t>(i)] + "'";
    const int id = g.find_node(names[static_cast<size_t>(i)]);
    if (id < 0) {
      diff.add(nw + ": missing in our graph");
      continue;
    }
    const ir::Node& ours = g.node(id);
    diff.eq(n.op_type(), ours.op_type, nw + " op_type");
    diff.eq(norm_domain(n.domain()), ours.domain, nw + " domain");
    std::vector<std::string> ins, outs;
    for (int v : ours.inputs) ins.push_back(value_name(g, v));
    for (int v : ours.outputs) outs.push_back(value_name(g, v));
    diff.eq(std::vector<std::string>(n.input().begin(), n.input().end()), ins, nw + " inputs");
    diff.eq(std::vector<std::string>(n.output().begin(), n.output().end()), outs, nw + " outputs");
    diff.eq(static_cast<size_t>(n.attribute_size()), ours.attributes.size(), nw + " attribute count");
    for (int k = 0; k < n.attribute_size() && static_cast<size_t>(k) < ours.attributes.size(); ++k)
      compare_attribute(n.attribute(k), ours.attributes[static_cast<size_t>(k)], nw + " attribute '" + n.attribute(k).name() + "'", diff);
    if (n.op_type() == "Constant" && norm_domain(n.domain()).empty()) {
      compare_constant(n, g, nw, diff);
      constant_outputs.insert(n.output(0));
    }
  }

  std::set<std::string> init_names;
  for (const auto& t : e.initializer()) {
    init_names.insert(t.name());
    const int id = g.find_value(t.name());
    if (id < 0 || !g.value(id).initializer) {
      diff.add(at + " initializer '" + t.name() + "': missing");
      continue;
    }
    compare_tensor(t, *g.value(id).initializer, at + " initializer '" + t.name() + "'", diff);
  }
  size_t with_data = 0;
  for (const auto& v : g.values) with_data += v.initializer.has_value();
  std::set<std::string> all_constant = init_names;
  all_constant.insert(constant_outputs.begin(), constant_outputs.end());
  diff.eq(all_constant.size(), with_data, at + " number of constant values");

  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& v : e.input())
    if (!init_names.count(v.name())) inputs.push_back(&v);
  diff.eq(inputs.size(), g.inputs.size(), at + " input count");
  for (size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i) {
    diff.eq(inputs[i]->name(), g.value(g.inputs[i]).name, at + " input " + std::to_string(i) + " name");
    compare_info(*inputs[i], g.value(g.inputs[i]).info, at + " input '" + inputs[i]->name() + "'", diff);
  }
  diff.eq(static_cast<size_t>(e.output_size()), g.outputs.size(), at + " output count");
  for (int i = 0; i < e.output_size() && static_cast<size_t>(i) < g.outputs.size(); ++i) {
    const ir::Value& v = g.value(g.outputs[static_cast<size_t>(i)]);
    diff.eq(e.output(i).name(), v.name, at + " output " + std::to_string(i) + " name");
    compare_info(e.output(i), v.info, at + " output '" + e.output(i).name() + "'", diff);
  }
  // value_info entries that do not redeclare a graph input/output.
  std::set<std::string> io_names;
  for (const auto& v : e.input()) io_names.insert(v.name());
  for (const auto& v : e.output()) io_names.insert(v.name());
  for (const auto& vi : e.value_info()) {
    if (io_names.count(vi.name())) continue;
    const int id = g.find_value(vi.name());
    if (id < 0) {
      diff.add(at + " value_info '" + vi.name() + "': missing");
      continue;
    }
    compare_info(vi, g.value(id).info, at + " value_info '" + vi.name() + "'", diff);
  }
}

void compare_model(const onnx::ModelProto& e, const ir::Model& m, Diff& diff) {
  diff.eq(static_cast<int64_t>(e.ir_version()), m.ir_version, "ir_version");
  diff.eq(e.producer_name(), m.producer_name, "producer_name");
  diff.eq(e.producer_version(), m.producer_version, "producer_version");
  std::vector<std::string> expected_opsets, our_opsets;
  for (const auto& o : e.opset_import()) expected_opsets.push_back(norm_domain(o.domain()) + ":" + std::to_string(o.version()));
  if (expected_opsets.empty()) expected_opsets.push_back(":1");  // our reader's default for opset-less files
  for (const auto& o : m.opset_imports) our_opsets.push_back(o.domain + ":" + std::to_string(o.version));
  diff.eq(expected_opsets, our_opsets, "opset_import");
  std::map<std::string, std::string> metadata;
  for (const auto& p : e.metadata_props()) metadata[p.key()] = p.value();
  diff.eq(metadata.size(), m.metadata.size(), "metadata_props count");
  compare_graph(e.graph(), m.graph, "", diff);
  // Main-graph nodes carry their domain's opset version.
  for (const auto& n : m.graph.nodes)
    if (n.domain.empty() && n.op_type.rfind("Hz", 0) != 0) diff.eq(m.opset(""), static_cast<int64_t>(n.opset), "node '" + n.name + "' opset");
}

}  // namespace

TEST(OnnxOracle, ReaderMatchesLibprotobuf) {
  const auto files = model_files();
  ASSERT_FALSE(files.empty()) << "no ONNX files found (is libonnx-testdata installed?)";
  size_t compared = 0, rejected = 0;
  std::vector<std::string> failures;
  for (const auto& path : files) {
    const auto bytes = read_file(path);
    onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      // Not a valid protobuf: our reader must refuse it too.
      EXPECT_THROW(reader::read_onnx(bytes.data(), bytes.size()), Error) << path;
      continue;
    }
    reader::ReadOptions options;
    options.file_name = path.string();
    const std::string rejection = graph_rejection(proto.graph());
    if (!rejection.empty()) {
      ++rejected;
      try {
        reader::read_onnx(bytes.data(), bytes.size(), options);
        failures.push_back(path.string() + ": has " + rejection + " but our reader accepted it");
      } catch (const Error&) {
      }
      continue;
    }
    Diff diff;
    try {
      const ir::Model model = reader::read_onnx(bytes.data(), bytes.size(), options);
      compare_model(proto, model, diff);
    } catch (const std::exception& ex) {
      diff.add(std::string("our reader threw: ") + ex.what());
    }
    ++compared;
    if (!diff.errors.empty()) {
      std::string message = path.string() + ":";
      for (size_t i = 0; i < diff.errors.size() && i < 5; ++i) message += "\n    " + diff.errors[i];
      if (diff.errors.size() > 5) message += "\n    (" + std::to_string(diff.errors.size() - 5) + " more)";
      failures.push_back(message);
    }
  }
  std::cout << "[oracle] " << files.size() << " files: " << compared << " compared, " << rejected
            << " rejected as unsupported (string/complex/sparse/external data), " << failures.size() << " mismatching\n";
  std::string all;
  for (const auto& f : failures) all += f + "\n";
  EXPECT_TRUE(failures.empty()) << all;
}
