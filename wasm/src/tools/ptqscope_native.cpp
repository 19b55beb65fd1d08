// Native command-line runner with the same commands, flags, outputs and exit codes as the Node CLI
// (web/cli/ptqscope.mjs):
//   ptqscope run MODEL CALIBRATION_DATA --quant on|off --out DIR
// Exit codes: 0 ok, 1 internal failure, 2 bad input (command line, model or data).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/model_memory.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "io/npy.h"
#include "quant/qoperator_rewrite.h"
#include "reader/onnx.h"
#include "tools/tool_files.h"

namespace fs = std::filesystem;

namespace {

using ptq::tools::LoadedFiles;
using ptq::tools::read_calibration_folder;
using ptq::tools::read_file;

constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

constexpr const char* kRunUsage =
    "usage: ptqscope run MODEL CALIBRATION_DATA --quant on|off --out DIR\n"
    "\n"
    "  MODEL             the .onnx model (calibrated: HzCalibration nodes or Q/DQ quantizers; or a float model)\n"
    "  CALIBRATION_DATA  folder with one sub-folder per model input, one .npy per sample\n"
    "  --quant on        every calibration node as saved in the model (its stored switch and qtype)\n"
    "  --quant off       no calibration node quantizes (the float model)\n"
    "  --out DIR         writes DIR/sample_<k>/<output index>.npy; k follows the file-name order\n";

// A command-line mistake: reported with the usage text.
struct UsageError : ptq::Error {
  using ptq::Error::Error;
};

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

struct RunArgs {
  std::string model;
  std::string data;
  std::string quant;
  std::string out;
};

// Positionals plus --name value / --name=value, as web/cli/lib/args.mjs parses them.
RunArgs parse_run_args(const std::vector<std::string>& argv) {
  std::vector<std::string> positionals;
  std::map<std::string, std::string> options;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      positionals.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name != "quant" && name != "out") throw UsageError("unknown option --" + name);
    std::string value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    else if (i + 1 < argv.size()) value = argv[++i];
    else throw UsageError("option --" + name + " needs a value");
    if (!options.emplace(name, value).second) throw UsageError("option --" + name + " given twice");
  }
  for (const char* name : {"quant", "out"})
    if (!options.count(name)) throw UsageError(std::string("missing option --") + name);
  if (options["quant"] != "on" && options["quant"] != "off")
    throw UsageError("--quant must be one of on, off (got '" + options["quant"] + "')");
  if (positionals.size() != 2)
    throw UsageError("expected 2 arguments (MODEL CALIBRATION_DATA), got " + std::to_string(positionals.size()));
  return {positionals[0], positionals[1], options["quant"], options["out"]};
}

int run_command(const std::vector<std::string>& argv) {
  const RunArgs args = parse_run_args(argv);
  std::error_code ec;
  if (!fs::is_regular_file(args.model, ec)) {
    throw ptq::Error(fs::exists(args.model, ec) ? "model path is not a file: " + args.model
                                                : "model file not found: " + args.model);
  }
  // The model's bytes outlive the executor, which keeps views into them; they count against the
  // memory budget as in a wasm session (core/model_memory.h).
  const ptq::ModelReservation reservation({fs::file_size(args.model), 0});
  const std::vector<uint8_t> model_bytes = read_file(args.model);
  ptq::reader::ReadOptions options;
  options.file_name = args.model;
  ptq::ir::Model model = ptq::reader::read_onnx(model_bytes.data(), model_bytes.size(), options);
  ptq::quant::import_quantizers(model);  // QOperator and Q/DQ quantizers become calibration nodes (§1.12, §1.11)
  ptq::exec::Executor executor(std::move(model));

  const LoadedFiles files = read_calibration_folder(args.data);
  const auto data = ptq::data::CalibrationData::from_files(executor.graph(), files.entries);

  // "on" is the model as saved (stored switches and qtypes); "off" is the float model.
  const ptq::exec::QuantConfig config =
      args.quant == "on" ? executor.stored_config() : executor.uniform_config(false);
  fs::create_directories(args.out);
  for (size_t k = 0; k < data.sample_count(); ++k) {
    const auto record = executor.run(data.sample(k), config);
    const auto outputs = executor.tensor_outputs(record);
    const fs::path dir = fs::path(args.out) / ("sample_" + std::to_string(k));
    fs::create_directories(dir);
    for (size_t i = 0; i < outputs.size(); ++i)
      write_file(dir / (std::to_string(i) + ".npy"), ptq::io::write_npy(outputs[i]));
  }
  std::cout << "ptqscope run: " << data.sample_count() << " samples x " << executor.graph().outputs.size()
            << " outputs (quant " << args.quant << ", " << executor.calibrations().size()
            << " calibration nodes) -> " << args.out << "\n";
  return 0;
}

void print_top_usage(std::ostream& out) {
  out << "usage: ptqscope <command> [args]   (ptqscope <command> --help for details)\n\ncommands:\n  run\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_top_usage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? kExitBadInput : 0;
  }
  if (args[0] != "run") {
    std::cerr << "ptqscope: unknown command '" << args[0] << "'\n";
    print_top_usage(std::cerr);
    return kExitBadInput;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
      std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
    std::cout << kRunUsage;
    return 0;
  }
  try {
    return run_command(rest);
  } catch (const UsageError& e) {
    std::cerr << "ptqscope run: error: " << e.what() << "\n" << kRunUsage;
    return kExitBadInput;
  } catch (const ptq::Error& e) {  // includes FormatError: the model or data is at fault
    std::cerr << "ptqscope run: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ptqscope run: internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}
