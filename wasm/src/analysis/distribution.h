#pragma once
// plot_distribution (§6): per name, histograms of an activation calibration node's input
// (calibrated model) with its threshold, of a weight before/after fake quantization (our kernel, not
// the original's buggy helper of §6.3), or of a node's outputs float vs calibrated plus the error.
// One sample; the calibrated run is an incremental re-run from a keep_all float run.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

// numpy.histogram(data, bins, range=(min, max)) as matplotlib's hist calls it: float32 bin edges
// (linspace), half-open bins, the last one closed; range (v - 0.5, v + 0.5) when min == max and
// (0, 1) when nothing is counted.
struct Histogram {
  std::string label;   // legend label, e.g. "Before calibration"
  std::string color;   // the original's colour, e.g. "#99ffbb"
  std::vector<float> edges;     // bins + 1
  std::vector<int64_t> counts;  // bins
  int64_t zeros_excluded = 0;   // exact zeros left out (all histograms but the error one, §6.2)
  int64_t non_finite = 0;       // NaN / ±inf left out (matplotlib rejects an infinite range)
};

Histogram make_histogram(const float* data, int64_t n, bool exclude_zeros, int bins = 1024);

struct DistributionPlot {
  std::string name;     // the requested node name
  std::string kind;     // "activation" | "weight" | "node_output"
  std::string tensor;   // node_output: the output tensor; activation: the input; weight: the initializer
  std::string title;    // as the original's, including "\ncosine-similarity:<value>"
  std::string file_name;  // "<kind>_<name>.png" with '/' -> '_' (§6.2)
  std::vector<Histogram> histograms;  // drawing order
  bool has_threshold = false;
  float threshold = 0.0f;  // activation: max(thresholds), drawn as a red dashed line
  float max_abs = 0.0f;    // blue marker at (max |data|, 0) of the first histogram's data (incl. zeros)
  bool has_cosine = false;
  float cosine = 0.0f;     // cosine similarity before/after over all elements (incl. zeros)
};

struct DistributionOptions {
  std::vector<std::string> nodes;  // names of nodes of the model (validated)
  int bins = 1024;
  data::SampleSelection selection = data::SampleSelection::Last;
  // The quantized model (docs/config-schema.md): a request's configuration; unset = as stored.
  std::optional<exec::QuantConfig> config;
  // Called after each name with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

struct DistributionResult {
  std::string sample;
  std::vector<DistributionPlot> plots;
  // Activation calibration nodes the sample never ran (inside a branch it does not take, §1.13): not
  // plotted, in request order.
  std::vector<std::string> not_run;
  bool cancelled = false;
};

DistributionResult plot_distribution(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                     const data::CalibrationData& data, const DistributionOptions& options);

// numpy's str() of a float32 scalar: shortest round-trip digits ("0.99812", "1e-05", "1.0").
std::string numpy_float32_str(float v);

}  // namespace ptq::analysis
