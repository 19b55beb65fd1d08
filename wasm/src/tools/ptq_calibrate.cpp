// ptq_calibrate: float ONNX model + calibration_data/ folder -> Horizon-format calibrated model
// (HzCalibration nodes, calibrate/calibrate.h), optionally also its QuantizeLinear/DequantizeLinear
// rewrite for plain onnxruntime (quant/hz_to_qdq.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "calibrate/calibrate.h"
#include "core/error.h"
#include "data/calibration_data.h"
#include "io/pb_wire.h"
#include "ops/gemm_kernel.h"
#include "quant/calibration.h"
#include "quant/hz_to_qdq.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"
#include "tools/tool_files.h"

namespace fs = std::filesystem;
using namespace ptq;

namespace {

constexpr const char* kUsage =
    "usage: ptq_calibrate FLOAT_MODEL CALIBRATION_DATA_DIR OUT_MODEL [--method max|percentile|kl]\n"
    "                     [--percentile 99.99] [--int16 name,name] [--qdq OUT_QDQ_MODEL] [--simd NAME]\n"
    "  CALIBRATION_DATA_DIR holds one folder per model input with one .npy file per sample.\n"
    "  --simd portable (default) | avx2 | avx512: the GEMM kernel of the float runs. The portable one\n"
    "  gives the same bytes on every CPU and in the wasm build (ptqscope calibrate); the others fuse\n"
    "  multiply-adds, so thresholds can move in the last bits from one CPU to another.\n"
    "  --int16 takes calibration node names (<tensor>_HzCalibration), tensor names or node names.\n";

using tools::read_file;

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  check(static_cast<bool>(out), "cannot write '" + path.string() + "'");
}

// The external-data files the top-level initializers name (TensorProto.external_data "location").
std::vector<std::string> external_locations(const std::vector<uint8_t>& model) {
  std::vector<std::string> out;
  pb::Reader m(model.data(), model.size(), "ModelProto");
  pb::Field f;
  while (m.next(f)) {
    if (f.number != 7 || f.wire != pb::WireType::Bytes) continue;
    pb::Reader g(f.bytes, "GraphProto");
    pb::Field gf;
    while (g.next(gf)) {
      if (gf.number != 5 || gf.wire != pb::WireType::Bytes) continue;
      pb::Reader t(gf.bytes, "TensorProto");
      pb::Field tf;
      while (t.next(tf)) {
        if (tf.number != 13 || tf.wire != pb::WireType::Bytes) continue;
        pb::Reader e(tf.bytes, "StringStringEntryProto");
        pb::Field ef;
        std::string key, value;
        while (e.next(ef)) {
          if (ef.number == 1) key = ef.bytes.str();
          else if (ef.number == 2) value = ef.bytes.str();
        }
        if (key == "location" && std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
      }
    }
  }
  return out;
}

struct Args {
  std::string model, data_dir, out, qdq;
  // The calibrated bytes are a function of the model and the samples only, not of the CPU.
  std::string simd = "portable";
  quant::CalibrateOptions options;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      check(i + 1 < argc, "option " + arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--method") {
      a.options.method = quant::parse_activation_method(value());
    } else if (arg == "--percentile") {
      const std::string v = value();
      size_t used = 0;
      try {
        a.options.percentile = std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      check(used == v.size() && used > 0, "--percentile expects a number, got '" + v + "'");
    } else if (arg == "--int16") {
      for (auto& n : split_names(value())) a.options.int16.push_back(n);
    } else if (arg == "--qdq") {
      a.qdq = value();
    } else if (arg == "--simd") {
      a.simd = value();
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      check(arg.rfind("--", 0) != 0, "unknown option " + arg);
      positional.push_back(arg);
    }
  }
  check(positional.size() == 3, "expected FLOAT_MODEL CALIBRATION_DATA_DIR OUT_MODEL, got " +
                                    std::to_string(positional.size()) + " positional argument(s)");
  a.model = positional[0];
  a.data_dir = positional[1];
  a.out = positional[2];
  ops::set_gemm_isa(a.simd);  // names the instruction sets there are when this one is not
  return a;
}

int run(const Args& a) {
  const std::vector<uint8_t> model_bytes = read_file(a.model);
  reader::ReadOptions read_options;
  read_options.file_name = a.model;
  std::list<std::vector<uint8_t>> buffers;  // keeps external data and .npy bytes alive (views)
  for (const auto& location : external_locations(model_bytes)) {
    buffers.push_back(read_file(fs::path(a.model).parent_path() / location));
    read_options.external_files[location] = pb::Bytes{buffers.back().data(), buffers.back().size()};
  }
  const ir::Model float_model = reader::read_onnx(model_bytes.data(), model_bytes.size(), read_options);

  // Like the CLI and the page: every non-hidden file under the folder (a .DS_Store is not a sample).
  const tools::LoadedFiles files = tools::read_calibration_folder(a.data_dir);
  const data::CalibrationData data = data::CalibrationData::from_files(float_model.graph, files.entries);

  const ir::Model calibrated = quant::calibrate(float_model, data.all_samples(), a.options);
  write_file(a.out, reader::write_onnx(calibrated));
  const quant::CalibrationCounts counts = quant::count_calibration_nodes(calibrated.graph);
  std::printf("%s: %zu activation and %zu weight calibration nodes from %zu sample(s)\n", a.out.c_str(),
              counts.activations, counts.weights, data.sample_count());
  if (!a.qdq.empty()) {
    write_file(a.qdq, reader::write_onnx(quant::hz_to_qdq(calibrated)));
    std::printf("%s: QuantizeLinear/DequantizeLinear model\n", a.qdq.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "ptq_calibrate: %s\n%s", e.what(), kUsage);
    return 2;
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptq_calibrate: error: %s\n", e.what());
    return 1;
  }
}
