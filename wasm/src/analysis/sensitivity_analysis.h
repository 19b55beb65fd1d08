#pragma once
// sensitivity_analysis (§8.2): the partial-quantization curve. Baseline "none" = the
// calibrated model; then for each sensitive node n, the calibrated model with n and every earlier
// sensitive node taken out of int8 (switched off = "float32", or re-quantized to e.g. "int16"), plus
// the per-node point "float model with only n quantized". Cosine similarity of the model outputs
// aggregated as §3.3; every variant runs incrementally from keep_all runs of each sample.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sensitivity.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct SensitivityAnalysisOptions {
  double pick_threshold = 0.999;
  size_t data_num = 1;  // 0 = all samples
  data::SampleSelection selection = data::SampleSelection::Last;
  // Empty: ranked by get_sensitivity_of_nodes (node_type "node", cosine) and picked with
  // cosine <= pick_threshold, most sensitive first.
  std::vector<std::string> sensitive_nodes;
  // What the sensitive nodes become in the cumulative curve: "float32" switches their calibration
  // nodes off (the original); another qtype ("int16") keeps them on with that type.
  std::string qtype = "float32";
  // The scales of a re-quantized Horizon node with constant = 2 (§1.4, option override_scales): true
  // ("stored") keeps them, as the original's IR does (the int8 step, a wider clamp); false ("derived")
  // derives them for the new type, as the toolchain re-calibrates a node and the what-if and fix do.
  bool stored_scales = true;
  // The quantized model (docs/config-schema.md): a request's configuration; unset = as stored.
  std::optional<exec::QuantConfig> config;
  // Called with (done, total): first over the ranking sweep (when it runs), then over the sensitive
  // nodes. Return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

struct SensitivityAnalysisResult {
  std::vector<std::string> x;    // "none", then the sensitive nodes
  std::vector<float> cumulative;  // per x: "partial quantization cumulative error" (red line)
  std::vector<float> per_node;    // per sensitive node (x[1..]): "per-node quantization sensitivity"
  std::string qtype;
  std::vector<std::string> samples;
  bool ranked = false;                 // sensitive nodes were picked from a ranking
  std::vector<SensitivityRow> ranking;  // that ranking (sorted, cosine), when ranked
  std::vector<std::string> messages;    // the original's log lines
  bool cancelled = false;
};

SensitivityAnalysisResult sensitivity_analysis(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                               const data::CalibrationData& data, const SensitivityAnalysisOptions& options);

}  // namespace ptq::analysis
