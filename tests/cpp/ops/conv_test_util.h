#pragma once
// Helpers for the compute-heavy op tests (conv, conv_transpose, matmul, pool, gemm_kernel):
// seeded random data, tolerance comparison, and a runner for Debian's ONNX single-node test cases
// (/usr/share/libonnx-testdata/data/node/<case>: model.onnx + test_data_set_*/{input,output}_N.pb).
#include <gtest/gtest.h>

#include <any>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/conv_winograd.h"
#include "reader/onnx.h"

namespace ptq::test {

// Sets the process-wide Winograd mode for a scope and restores the previous one.
class ScopedWinogradMode {
 public:
  explicit ScopedWinogradMode(ops::WinogradMode mode) : previous_(ops::winograd_mode()) { ops::set_winograd_mode(mode); }
  ~ScopedWinogradMode() { ops::set_winograd_mode(previous_); }
  ScopedWinogradMode(const ScopedWinogradMode&) = delete;
  ScopedWinogradMode& operator=(const ScopedWinogradMode&) = delete;

 private:
  ops::WinogradMode previous_;
};

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// |got - want| <= atol + rtol * |want| element-wise; reports the first few mismatches.
inline ::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                            float rtol = 1e-4f, float atol = 1e-5f) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
    const bool same_inf = std::isinf(want[i]) && got[i] == want[i];
    if (both_nan || same_inf || std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])) continue;
    if (bad++ < 5) msg << " [" << i << "] got " << got[i] << " want " << want[i] << ";";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ:" << msg.str();
}

inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline const char* kNodeTestRoot = "/usr/share/libonnx-testdata/data/node";

// Runs one single-node ONNX test case through the registered kernel (inputs flagged non-constant,
// with a fresh `prepared` slot) and compares every output's dtype, shape and values.
// Returns "" on success, "skip" when the test data is not installed, else a description.
inline std::string run_node_case(const std::string& name, float rtol = 1e-4f, float atol = 1e-5f) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(kNodeTestRoot) / name;
  if (!fs::exists(dir / "model.onnx")) return "skip";
  const std::vector<uint8_t> model_bytes = read_file_bytes(dir / "model.onnx");
  const ir::Model model = reader::read_onnx(model_bytes.data(), model_bytes.size());
  const ir::Graph& g = model.graph;
  if (g.nodes.size() != 1) return name + ": expected one node, got " + std::to_string(g.nodes.size());
  const ir::Node& node = g.nodes[0];
  exec::KernelFn fn = exec::OpRegistry::global().find(node.domain, node.op_type);
  if (!fn) return name + ": no kernel for " + node.op_type;
  std::ostringstream problems;
  int sets = 0;
  for (int set = 0; fs::exists(dir / ("test_data_set_" + std::to_string(set))); ++set, ++sets) {
    const fs::path data = dir / ("test_data_set_" + std::to_string(set));
    std::vector<std::vector<uint8_t>> buffers;  // read_tensor_proto may return views into these
    std::vector<Tensor> values(g.values.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      buffers.push_back(read_file_bytes(data / ("input_" + std::to_string(i) + ".pb")));
      values[static_cast<size_t>(g.inputs[i])] = reader::read_tensor_proto(buffers.back().data(), buffers.back().size());
    }
    std::vector<const Tensor*> inputs;
    std::vector<bool> constant;
    for (int id : node.inputs) {
      const Tensor* t = nullptr;
      if (id >= 0) t = g.value(id).initializer ? &*g.value(id).initializer : &values[static_cast<size_t>(id)];
      inputs.push_back(t);
      constant.push_back(id >= 0 && g.value(id).initializer.has_value());
    }
    std::vector<Tensor> outputs(node.outputs.size());
    std::any prepared;
    exec::KernelContext ctx{node, inputs, outputs, &prepared, constant};
    try {
      fn(ctx);
    } catch (const std::exception& e) {
      return name + ": kernel threw: " + e.what();
    }
    for (size_t j = 0; j < g.outputs.size(); ++j) {
      const std::vector<uint8_t> bytes = read_file_bytes(data / ("output_" + std::to_string(j) + ".pb"));
      const Tensor want = reader::read_tensor_proto(bytes.data(), bytes.size());
      size_t slot = 0;
      while (slot < node.outputs.size() && node.outputs[slot] != g.outputs[j]) ++slot;
      if (slot == node.outputs.size()) return name + ": graph output not produced by the node";
      const Tensor& got = outputs[slot];
      if (got.dtype() != want.dtype()) {
        problems << " output " << j << " dtype " << dtype_name(got.dtype()) << " want " << dtype_name(want.dtype());
        continue;
      }
      if (got.shape() != want.shape()) {
        problems << " output " << j << " shape " << shape_str(got.shape()) << " want " << shape_str(want.shape());
        continue;
      }
      auto r = all_close(got.to_float_vector(), want.to_float_vector(), rtol, atol);
      if (!r) problems << " output " << j << ": " << r.message();
    }
  }
  if (sets == 0) return name + ": no test_data_set";
  const std::string p = problems.str();
  return p.empty() ? "" : name + ":" + p;
}

// Expects every listed case to pass; skips only when the whole test-data package is absent.
inline void expect_node_cases(const std::vector<std::string>& names) {
  if (!std::filesystem::exists(kNodeTestRoot)) GTEST_SKIP() << kNodeTestRoot << " not installed";
  for (const std::string& n : names) EXPECT_EQ(run_node_case(n), "") << n;
}

}  // namespace ptq::test
