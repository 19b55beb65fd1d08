// Oracle test for reader::write_onnx: what we write is parsed by libprotobuf (Debian's generated
// onnx.pb classes) and must say exactly what the IR we wrote from says — nodes in order with their
// attributes, initializers with their bytes, inputs/outputs/value_info, opsets — recursively into
// subgraphs. Independent of our own reader for the written side.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "oracle/packed4.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

namespace fs = std::filesystem;
using namespace ptq;

namespace {

std::vector<uint8_t> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

struct Errors {
  std::vector<std::string> list;
  void check(bool ok, const std::string& what) {
    if (!ok) list.push_back(what);
  }
};

void compare_tensor(const onnx::TensorProto& p, const Tensor& t, const std::string& where, Errors& e) {
  e.check(p.data_type() == static_cast<int>(t.dtype()), where + ": data_type");
  e.check(std::vector<int64_t>(p.dims().begin(), p.dims().end()) == t.shape(), where + ": dims");
  e.check(p.has_raw_data(), where + ": no raw_data");
  // 4-bit tensors are written packed (two elements per byte) and held one element per byte.
  std::vector<uint8_t> raw(p.raw_data().begin(), p.raw_data().end());
  if (oracle::is_packed4(p.data_type())) raw = oracle::unpack4(p.data_type(), oracle::element_count(p), raw);
  e.check(raw.size() == t.nbytes() && (t.nbytes() == 0 || std::memcmp(raw.data(), t.raw(), t.nbytes()) == 0),
          where + ": raw_data bytes");
}

void compare_info(const onnx::ValueInfoProto& p, const ir::Value& v, const std::string& where, Errors& e) {
  e.check(p.name() == v.name, where + ": name");
  const ir::ValueInfo& info = v.info;
  if (info.dtype == DType::Undefined && !info.has_shape) return;
  const auto& tt = p.type().tensor_type();
  e.check(tt.elem_type() == static_cast<int>(info.dtype), where + ": elem_type");
  e.check(tt.has_shape() == info.has_shape, where + ": has_shape");
  if (!info.has_shape) return;
  e.check(tt.shape().dim_size() == static_cast<int>(info.dims.size()), where + ": rank");
  for (int d = 0; d < tt.shape().dim_size() && d < static_cast<int>(info.dims.size()); ++d) {
    const auto& dim = tt.shape().dim(d);
    const std::string& param = info.dim_params[static_cast<size_t>(d)];
    if (!param.empty()) e.check(dim.dim_param() == param, where + ": dim_param " + std::to_string(d));
    else if (info.dims[static_cast<size_t>(d)] >= 0) e.check(dim.dim_value() == info.dims[static_cast<size_t>(d)], where + ": dim " + std::to_string(d));
    else e.check(!dim.has_dim_value() && !dim.has_dim_param(), where + ": unknown dim " + std::to_string(d));
  }
}

void compare_graph(const onnx::GraphProto& p, const ir::Graph& g, const std::string& where, Errors& e);

void compare_attribute(const onnx::AttributeProto& p, const ir::Attribute& a, const std::string& where, Errors& e) {
  e.check(p.name() == a.name, where + ": name");
  e.check(static_cast<int>(p.type()) == static_cast<int>(a.type), where + ": type");
  using T = ir::AttrType;
  switch (a.type) {
    case T::Float: {
      const float f = p.f();
      e.check(std::memcmp(&a.f, &f, 4) == 0, where + ": f");
      break;
    }
    case T::Int: e.check(p.i() == a.i, where + ": i"); break;
    case T::String: e.check(p.s() == a.s, where + ": s"); break;
    case T::Floats:
      e.check(p.floats_size() == static_cast<int>(a.floats.size()) &&
                  std::memcmp(p.floats().data(), a.floats.data(), 4 * a.floats.size()) == 0,
              where + ": floats");
      break;
    case T::Ints: e.check(std::vector<int64_t>(p.ints().begin(), p.ints().end()) == a.ints, where + ": ints"); break;
    case T::Strings: e.check(std::vector<std::string>(p.strings().begin(), p.strings().end()) == a.strings, where + ": strings"); break;
    case T::Tensor: compare_tensor(p.t(), a.t, where + " tensor", e); break;
    case T::Tensors:
      e.check(p.tensors_size() == static_cast<int>(a.tensors.size()), where + ": tensor count");
      for (int i = 0; i < p.tensors_size() && i < static_cast<int>(a.tensors.size()); ++i)
        compare_tensor(p.tensors(i), a.tensors[static_cast<size_t>(i)], where + " tensor", e);
      break;
    case T::Graph: compare_graph(p.g(), *a.g, where + " / graph", e); break;
    case T::Graphs:
      e.check(p.graphs_size() == static_cast<int>(a.graphs.size()), where + ": graph count");
      for (int i = 0; i < p.graphs_size() && i < static_cast<int>(a.graphs.size()); ++i)
        compare_graph(p.graphs(i), *a.graphs[static_cast<size_t>(i)], where + " / graph", e);
      break;
    default: break;
  }
}

void compare_graph(const onnx::GraphProto& p, const ir::Graph& g, const std::string& where, Errors& e) {
  e.check(p.name() == g.name, where + ": graph name");
  e.check(p.node_size() == static_cast<int>(g.nodes.size()), where + ": node count");
  auto name = [&](int id) { return id < 0 ? std::string() : g.value(id).name; };
  for (int i = 0; i < p.node_size() && i < static_cast<int>(g.nodes.size()); ++i) {
    const auto& pn = p.node(i);
    const ir::Node& n = g.nodes[static_cast<size_t>(i)];
    const std::string at = where + " / node " + n.name;
    e.check(pn.name() == n.name && pn.op_type() == n.op_type && pn.domain() == n.domain, at + ": name/op/domain");
    std::vector<std::string> ins, outs;
    for (int v : n.inputs) ins.push_back(name(v));
    for (int v : n.outputs) outs.push_back(name(v));
    e.check(std::vector<std::string>(pn.input().begin(), pn.input().end()) == ins, at + ": inputs");
    e.check(std::vector<std::string>(pn.output().begin(), pn.output().end()) == outs, at + ": outputs");
    e.check(pn.attribute_size() == static_cast<int>(n.attributes.size()), at + ": attribute count");
    for (int k = 0; k < pn.attribute_size() && k < static_cast<int>(n.attributes.size()); ++k)
      compare_attribute(pn.attribute(k), n.attributes[static_cast<size_t>(k)], at + " / attribute " + pn.attribute(k).name(), e);
  }
  // Initializers: every IR initializer that is not a Constant output, once, with its bytes.
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : p.initializer()) {
    e.check(!inits.count(t.name()), where + ": initializer '" + t.name() + "' written twice");
    inits[t.name()] = &t;
  }
  size_t expected_inits = 0;
  for (const auto& v : g.values) {
    if (!v.initializer || v.producer >= 0) {
      e.check(!inits.count(v.name), where + ": '" + v.name + "' must not be an initializer");
      continue;
    }
    ++expected_inits;
    auto it = inits.find(v.name);
    e.check(it != inits.end(), where + ": initializer '" + v.name + "' missing");
    if (it != inits.end()) compare_tensor(*it->second, *v.initializer, where + " / initializer " + v.name, e);
  }
  e.check(inits.size() == expected_inits, where + ": initializer count");
  // Declared inputs start with the graph inputs in order; outputs are the graph outputs in order.
  e.check(p.input_size() >= static_cast<int>(g.inputs.size()), where + ": input count");
  for (size_t i = 0; i < g.inputs.size() && static_cast<int>(i) < p.input_size(); ++i)
    compare_info(p.input(static_cast<int>(i)), g.value(g.inputs[i]), where + " / input", e);
  for (int i = static_cast<int>(g.inputs.size()); i < p.input_size(); ++i)
    e.check(inits.count(p.input(i).name()) > 0, where + ": extra input '" + p.input(i).name() + "' is not an initializer");
  e.check(p.output_size() == static_cast<int>(g.outputs.size()), where + ": output count");
  for (size_t i = 0; i < g.outputs.size() && static_cast<int>(i) < p.output_size(); ++i)
    compare_info(p.output(static_cast<int>(i)), g.value(g.outputs[i]), where + " / output", e);
  for (const auto& vi : p.value_info()) {
    const int id = g.find_value(vi.name());
    e.check(id >= 0, where + ": value_info for unknown '" + vi.name() + "'");
    if (id >= 0) compare_info(vi, g.value(id), where + " / value_info", e);
  }
}

std::vector<fs::path> model_files() {
  std::vector<fs::path> out;
  for (const auto& root : {fs::path("/usr/share/libonnx-testdata/data"), fs::path(PTQ_SOURCE_DIR) / ".cache/fixtures",
                              fs::path(PTQ_SOURCE_DIR) / "tests/fixtures/netron-dom"}) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& f : fs::recursive_directory_iterator(root, ec))
      if (f.is_regular_file() && f.path().extension() == ".onnx") out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(OnnxWriterOracle, LibprotobufReadsWhatWeWrote) {
  size_t checked = 0;
  for (const auto& path : model_files()) {
    const auto bytes = file_bytes(path);
    ir::Model model;
    try {
      model = reader::read_onnx(bytes.data(), bytes.size());
    } catch (const Error&) {
      continue;  // rejected by the reader (covered by the reader oracle)
    }
    std::vector<uint8_t> written;
    try {
      written = reader::write_onnx(model);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be written"), std::string::npos) << path << ": " << e.what();
      continue;
    }
    onnx::ModelProto p;
    ASSERT_TRUE(p.ParseFromArray(written.data(), static_cast<int>(written.size()))) << path;
    Errors e;
    e.check(p.ir_version() == model.ir_version, "ir_version");
    e.check(p.producer_name() == model.producer_name && p.producer_version() == model.producer_version, "producer");
    e.check(p.opset_import_size() == static_cast<int>(model.opset_imports.size()), "opset count");
    for (int i = 0; i < p.opset_import_size() && i < static_cast<int>(model.opset_imports.size()); ++i)
      e.check(p.opset_import(i).domain() == model.opset_imports[static_cast<size_t>(i)].domain &&
                  p.opset_import(i).version() == model.opset_imports[static_cast<size_t>(i)].version,
              "opset " + std::to_string(i));
    std::map<std::string, std::string> metadata;
    for (const auto& kv : p.metadata_props()) metadata[kv.key()] = kv.value();
    e.check(metadata == model.metadata, "metadata");
    compare_graph(p.graph(), model.graph, "graph", e);
    EXPECT_TRUE(e.list.empty()) << path << ":\n  " << (e.list.empty() ? "" : e.list.front()) << " (+"
                                << (e.list.empty() ? 0 : e.list.size() - 1) << " more)";
    ++checked;
  }
  EXPECT_GT(checked, 700u);
}
