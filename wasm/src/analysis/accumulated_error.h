#pragma once
// plot_acc_error (§5): per variant model, the metric of every output tensor of every normal
// node with calibrated inputs (graph order) against the float model, on one sample. Each model set of
// §5.3 becomes one figure; the variants run incrementally from a keep_all float run of the sample.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

// A quantize_node / non_quantize_node argument as the Python API takes it: None, a name, or a list
// whose elements are names or lists of names.
struct NodeArgument {
  struct Element {
    std::vector<std::string> names;
    bool is_list = false;  // a sub-list (makes the argument "nested", §5.3)
  };
  bool is_none = true;
  bool is_list = false;  // false with !is_none: a single name
  std::vector<Element> elements;

  static NodeArgument none() { return {}; }
  static NodeArgument name(const std::string& n) { return {false, false, {{{n}, false}}}; }
  static NodeArgument list(const std::vector<std::string>& names);
  static NodeArgument nested(const std::vector<std::vector<std::string>>& lists);

  std::vector<std::string> flatten() const;  // §5.2 flatten (None contributes nothing here)
  bool is_nested() const;
};

struct AccErrorCurve {
  std::string name;               // legend label (§5.3)
  std::vector<std::string> x;     // compared tensors (x position = index)
  std::vector<float> y;           // metric per tensor, or its running mean in average mode
  size_t position = 0;            // among the curves of all figures of the full plan
};

struct AccErrorOptions {
  NodeArgument quantize_node;
  NodeArgument non_quantize_node;
  std::string metric = "cosine-similarity";
  bool average_mode = false;
  // The one sample (§2.3: the original uses the lexicographically last file).
  data::SampleSelection selection = data::SampleSelection::Last;
  // The quantized model (docs/config-schema.md): a request's configuration; unset = as stored.
  std::optional<exec::QuantConfig> config;
  // Only these curves: positions among the curves of all figures (figure order, legend order, as
  // acc_error_outline lists them), ascending. Unset = every curve. Each curve is independent work, so a
  // sweep is split by curves (docs/wasm-api.md).
  std::optional<std::vector<size_t>> curves;
  // Called after each computed curve with it and (done, total) over the curves of this call; return
  // false to cancel.
  std::function<bool(const AccErrorCurve&, size_t, size_t)> on_curve;
};

struct AccErrorFigure {
  std::string prefix;             // title, e.g. "weight_activation_quantized_separately"
  std::string metric;
  bool average_mode = false;
  std::vector<AccErrorCurve> curves;
  // "<prefix>_<metric>.png" or "average_<prefix>_<metric>.png" (§5.5).
  std::string file_name() const;
};

struct AccErrorResult {
  std::string sample;                  // file name of the sample used
  // In the order of §5.3; with options.curves only the computed curves, and only figures with one.
  std::vector<AccErrorFigure> figures;
  std::vector<std::string> messages;    // the original's log lines, plus notes on unknown names
  bool cancelled = false;
};

// Validates the arguments as §5.2 does (both-empty and special-word errors). Throws ptq::Error.
void check_acc_error_arguments(const AccErrorOptions& options);

// The figures and curve labels plot_acc_error would compute (no curve data, nothing is run), with the
// planning messages. Validates the arguments as plot_acc_error does.
AccErrorResult acc_error_outline(const exec::Executor& executor, const quant::CalibrationRelations& relations,
                                 const AccErrorOptions& options);

AccErrorResult plot_acc_error(exec::Executor& executor, const quant::CalibrationRelations& relations,
                              const data::CalibrationData& data, const AccErrorOptions& options);

// y'_k = (y_0 + … + y_k) / (k + 1) summed in double as Python does, except that +inf values are left
// out of the mean (the original deletes them before averaging); +inf while no finite value was seen.
std::vector<float> running_mean(const std::vector<float>& values);

}  // namespace ptq::analysis
