// Native forward-pass timer for scripts/bench-executor: ptq_bench MODEL INPUT.npy... [--warmup N] [--runs N]
// Prints one JSON line {"median_ms", "min_ms", "runs"} (float model: every calibration node OFF).
// ptq_bench --sweep activation|node|weight MODEL CALIBRATION_DATA_DIR: times a full sensitivity sweep
// (cosine, data_num 1) instead, with --profile giving the per-op time summed over the sweep.
// --conv accurate|fast|fastest: the convolution mode (ops/conv_winograd.h; default accurate: no
// Winograd; fast: Winograd F(2x2, 3x3); fastest: F(4x4, 3x3) as well).
// --simd portable|avx2|avx512: the GEMM's instruction set (native x86-64 builds; default: the best the
// CPU has).
// --profile: also prints, on stderr, the time per op type (and the slowest nodes) summed over the runs.
// ptq_bench --gemm MxNxK: times the GEMM alone (A packed once like conv weights, B read from a plain
// row-major matrix like a 1x1 convolution's input), the host's GEMM peak for docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sensitivity.h"
#include "core/error.h"
#include "data/calibration_data.h"
#include "quant/relations.h"
#include "exec/executor.h"
#include "io/npy.h"
#include "exec/shape_inference.h"
#include "ops/conv_winograd.h"
#include "ops/gemm_kernel.h"
#include "reader/onnx.h"
#include "tools/tool_files.h"

namespace {
using ptq::tools::read_file;

// Per op type (and the 40 slowest nodes): ms per run, share of the total.
void print_profile(const ptq::ir::Graph& g, const std::vector<double>& node_ms, int runs) {
  std::map<std::string, std::pair<double, int>> by_type;
  double total = 0;
  for (size_t i = 0; i < node_ms.size(); ++i) {
    auto& [ms, count] = by_type[g.nodes[i].op_type];
    ms += node_ms[i] / runs;
    ++count;
    total += node_ms[i] / runs;
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [type, entry] : by_type) rows.emplace_back(entry.first, type + " x" + std::to_string(entry.second));
  std::sort(rows.rbegin(), rows.rend());
  std::fprintf(stderr, "profile: %.2f ms per run in nodes\n", total);
  for (const auto& [ms, name] : rows) std::fprintf(stderr, "  %8.2f ms %5.1f%%  %s\n", ms, 100 * ms / total, name.c_str());
  const std::vector<ptq::ir::ValueInfo> infos = ptq::exec::infer_shapes(g);
  std::vector<size_t> order(node_ms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return node_ms[a] > node_ms[b]; });
  std::fprintf(stderr, "slowest nodes:\n");
  for (size_t k = 0; k < order.size() && k < 40; ++k) {
    const auto& node = g.nodes[order[k]];
    std::string shapes;
    for (int v : node.inputs) {
      if (v < 0) continue;
      shapes += " [";
      for (size_t d = 0; d < infos[static_cast<size_t>(v)].dims.size(); ++d)
        shapes += (d ? "," : "") + std::to_string(infos[static_cast<size_t>(v)].dims[d]);
      shapes += "]";
    }
    std::fprintf(stderr, "  %8.2f ms  %s %s%s\n", node_ms[order[k]] / runs, node.op_type.c_str(), node.name.c_str(), shapes.c_str());
  }
}

// Times one full sensitivity sweep (cosine, data_num 1); with `profile`, the per-op time summed over
// it and its floor: the sum over nodes of (executions in the sweep x the node's forward time).
int run_sweep(ptq::exec::Executor& executor, const std::string& data_dir, const std::string& sweep, bool profile) {
  const ptq::tools::LoadedFiles files = ptq::tools::read_calibration_folder(data_dir);
  const auto data = ptq::data::CalibrationData::from_files(executor.graph(), files.entries);
  const ptq::quant::CalibrationRelations relations(executor.graph());
  ptq::analysis::SensitivityOptions sopt;
  sopt.node_type = sweep;
  std::vector<double> node_ms(executor.graph().nodes.size(), 0.0), forward_ms(node_ms.size(), 0.0);
  std::vector<int> calls(node_ms.size(), 0);
  std::optional<ptq::exec::Executor::ScopedNodeTimer> sweep_timer;
  if (profile) {
    // Each node's time in a plain forward pass (after a warm-up), then the sweep's per-node totals.
    const auto sample = data.sample(data.sample_count() - 1);
    executor.run(sample, executor.uniform_config(false));
    {
      ptq::exec::Executor::ScopedNodeTimer timer(executor, [&](int node, double ms) { forward_ms[static_cast<size_t>(node)] += ms; });
      executor.run(sample, executor.uniform_config(false));
    }
    sweep_timer.emplace(executor, [&](int node, double ms) {
      node_ms[static_cast<size_t>(node)] += ms;
      ++calls[static_cast<size_t>(node)];
    });
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = ptq::analysis::get_sensitivity_of_nodes(executor, relations, data, sopt);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (profile) {
    print_profile(executor.graph(), node_ms, 1);
    double floor = 0, forward = 0;
    for (size_t i = 0; i < calls.size(); ++i) floor += calls[i] * forward_ms[i], forward += forward_ms[i];
    std::fprintf(stderr, "forward %.1f ms; sweep floor (executions x forward time) %.1f ms\n", forward, floor);
  }
  std::printf("{\"sweep\": \"%s\", \"items\": %zu, \"ms\": %.1f}\n", sweep.c_str(), result.rows.size(), ms);
  return 0;
}

// C[M,N] = A[M,K] B[K,N] with A pre-packed and B row-major: median time and GFLOP/s (2 per multiply-add).
int run_gemm(const std::string& dims, int warmup, int runs) {
  int64_t m = 0, n = 0, k = 0;
  if (std::sscanf(dims.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 || m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "ptq_bench: --gemm expects MxNxK, got '%s'\n", dims.c_str());
    return 2;
  }
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
  std::vector<float> packed(ptq::ops::gemm_packed_a_size(m, k));
  ptq::ops::gemm_pack_a(a.data(), k, 1, m, k, packed.data());
  std::vector<double> times;
  for (int i = 0; i < warmup + runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ptq::ops::gemm(m, n, k, ptq::ops::GemmOperand::packed(packed.data()), ptq::ops::GemmOperand::strided(b.data(), n, 1),
                   c.data(), n);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i >= warmup) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("{\"gemm\": \"%s\", \"median_ms\": %.4f, \"gflops\": %.2f, \"runs\": %d}\n", dims.c_str(), median,
              2.0 * static_cast<double>(m * n * k) / median / 1e6, runs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> positional;
    int warmup = 3, runs = 10;
    bool profile = false;
    std::string sweep, gemm;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--warmup" && i + 1 < argc) warmup = std::stoi(argv[++i]);
      else if (a == "--runs" && i + 1 < argc) runs = std::stoi(argv[++i]);
      else if (a == "--profile") profile = true;
      else if (a == "--sweep" && i + 1 < argc) sweep = argv[++i];
      else if (a == "--gemm" && i + 1 < argc) gemm = argv[++i];
      else if (a == "--conv" && i + 1 < argc) ptq::ops::set_winograd_mode(ptq::ops::parse_winograd_mode(argv[++i]));
      else if (a == "--simd" && i + 1 < argc) ptq::ops::set_gemm_isa(argv[++i]);
      else positional.push_back(a);
    }
    if (!gemm.empty()) return run_gemm(gemm, warmup, runs);
    if (positional.size() < 2) {
      std::fprintf(stderr, "usage: ptq_bench MODEL INPUT.npy... [--warmup N] [--runs N]\n");
      return 2;
    }
    const std::vector<uint8_t> bytes = read_file(positional[0]);  // outlives the executor (views)
    ptq::reader::ReadOptions options;
    options.file_name = positional[0];
    ptq::exec::Executor executor(ptq::reader::read_onnx(bytes.data(), bytes.size(), options));
    if (!sweep.empty()) return run_sweep(executor, positional[1], sweep, profile);
    std::vector<ptq::Tensor> inputs;
    for (size_t i = 1; i < positional.size(); ++i) {
      const std::vector<uint8_t> npy = read_file(positional[i]);
      inputs.push_back(ptq::io::read_npy(npy.data(), npy.size(), positional[i]));
    }
    const ptq::exec::QuantConfig config = executor.uniform_config(false);
    std::vector<double> node_ms(executor.graph().nodes.size(), 0.0);
    std::vector<double> times;
    for (int i = 0; i < warmup + runs; ++i) {
      if (profile && i == warmup) executor.set_node_timer([&](int node, double ms) { node_ms[static_cast<size_t>(node)] += ms; });
      const auto t0 = std::chrono::steady_clock::now();
      executor.run(inputs, config);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup) times.push_back(ms);
    }
    if (profile) print_profile(executor.graph(), node_ms, runs);
    std::sort(times.begin(), times.end());
    std::printf("{\"median_ms\": %.3f, \"min_ms\": %.3f, \"runs\": %d}\n", times[times.size() / 2], times[0], runs);
    return 0;
  } catch (const ptq::Error& e) {
    std::fprintf(stderr, "ptq_bench: %s\n", e.what());
    return 2;
  }
}
