// Native forward-pass timer for scripts/bench-executor: ptq_bench MODEL INPUT.npy... [--warmup N] [--runs N]
// Prints one JSON line {"median_ms", "min_ms", "runs"} (float model: every calibration node OFF).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "exec/executor.h"
#include "io/npy.h"
#include "reader/onnx.h"

namespace {
std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ptq::Error("cannot open '" + path + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> positional;
    int warmup = 3, runs = 10;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--warmup" && i + 1 < argc) warmup = std::stoi(argv[++i]);
      else if (a == "--runs" && i + 1 < argc) runs = std::stoi(argv[++i]);
      else positional.push_back(a);
    }
    if (positional.size() < 2) {
      std::fprintf(stderr, "usage: ptq_bench MODEL INPUT.npy... [--warmup N] [--runs N]\n");
      return 2;
    }
    const std::vector<uint8_t> bytes = read_file(positional[0]);
    ptq::reader::ReadOptions options;
    options.file_name = positional[0];
    ptq::exec::Executor executor(ptq::reader::read_onnx(bytes.data(), bytes.size(), options));
    std::vector<ptq::Tensor> inputs;
    for (size_t i = 1; i < positional.size(); ++i) {
      const std::vector<uint8_t> npy = read_file(positional[i]);
      inputs.push_back(ptq::io::read_npy(npy.data(), npy.size(), positional[i]));
    }
    const ptq::exec::QuantConfig config = executor.uniform_config(false);
    std::vector<double> times;
    for (int i = 0; i < warmup + runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      executor.run(inputs, config);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::printf("{\"median_ms\": %.3f, \"min_ms\": %.3f, \"runs\": %d}\n", times[times.size() / 2], times[0], runs);
    return 0;
  } catch (const ptq::Error& e) {
    std::fprintf(stderr, "ptq_bench: %s\n", e.what());
    return 2;
  }
}
