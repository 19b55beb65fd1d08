#pragma once
// Calibration methods compared for the whole model (§13.3): from the calibrated model and its samples
// alone, every activation threshold is chosen again by each method (max, percentiles, KL, minimum
// MSE), per tensor and per channel, from the float model's values on the tuning samples; each
// setting's output metrics are measured on the tuning and held-out samples, as Horizon's model-wise
// search does, and the best setting is named overall and among those each toolchain can express.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/threshold_methods.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct CalibrationMethodsOptions {
  size_t data_num = 4;  // at most; split into tuning and held-out samples (§13.4)
  data::SampleSelection selection = data::SampleSelection::Last;
  std::string metric = "cosine-similarity";  // ranks the settings (on the tuning samples)
  std::vector<double> percentiles = {99.99, 99.995, 99.999};
  bool per_channel = true;        // also every method per channel
  std::string toolchain = "any";  // "any" | "horizon" | "onnxruntime" | "rknn": the best among what it expresses
  std::optional<exec::QuantConfig> config;  // the configuration compared on; unset = as stored
  std::function<bool(size_t, size_t)> progress;
};

// The toolchains whose model-wide calibration settings the comparison names, and whether each can
// express a method: horizon (calibration_type max / kl, max_percentile, per_channel), onnxruntime
// (calibrate_method MinMax / Percentile / Entropy, per tensor), rknn (quantized_algorithm normal /
// kl_divergence / mmse, per tensor).
const std::vector<std::string>& calibration_toolchains();
bool toolchain_expresses(const std::string& toolchain, const quant::ThresholdMethod& method);

struct CalibrationSetting {
  std::string label;    // "as calibrated", "max", "percentile 99.99 per channel", ...
  bool stored = false;  // the model's own thresholds
  quant::ThresholdMethod method;
  std::vector<float> tune, held_out;    // [all_metrics()] mean over outputs; held_out empty without held-out samples
  std::vector<std::string> toolchains;  // those that can express it
};

struct CalibrationMethodsResult {
  std::string metric, toolchain;
  std::vector<std::string> tune_samples, held_out_samples;
  std::vector<CalibrationSetting> settings;  // the stored one first, then per method (per tensor, per channel)
  std::vector<std::string> skipped;          // settings left out, with why
  int best = -1;                             // index into settings (by `metric` on the tuning samples)
  std::vector<std::pair<std::string, int>> best_by_toolchain;  // per toolchain its best setting (-1: none)
  // The best setting as thresholds per calibration node (empty: kept), for the configuration.
  std::vector<std::vector<float>> best_thresholds;
  std::vector<uint8_t> best_targets;  // 1 for the calibration nodes the best setting re-calibrated
  // E.g. the best setting on the tuning samples measures worse than the model as calibrated on the
  // held-out ones: it may not hold on other data.
  std::vector<std::string> warnings;
  size_t evaluations = 0;
  bool cancelled = false;
};

CalibrationMethodsResult compare_calibration_methods(exec::Executor& executor,
                                                     const quant::CalibrationRelations& relations,
                                                     const data::CalibrationData& data,
                                                     const CalibrationMethodsOptions& options);

}  // namespace ptq::analysis
