#pragma once
// Cause hints (§13.1): why a quantizer loses accuracy, and the cheapest cure, measured. For every
// calibration node the evidence a run sees on the tuning samples (its thresholds and levels, the
// histogram of what it reads, the share clipped, the levels used and the values rounded to zero, the
// ranges of its channels and of the branches that meet in front of it, whether the data is one-sided,
// and the own / accumulated error of the node it feeds); decision rules with documented cut-offs
// name causes from a fixed vocabulary; each cause's cure is applied alone to the configuration and
// measured on the model outputs (tuning and held-out samples); the hints whose cure recovers enough
// of the loss are ranked by that effect.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

// The cause vocabulary, in the order the rules are checked.
struct CauseInfo {
  std::string name, doc, rule, cure;
};
const std::vector<CauseInfo>& causes();

// The cut-offs of the decision rules (§13.1; docs/explain.md gives the measurements behind them).
struct ExplainRules {
  double clipped = 1e-3;         // clipping: share of the values beyond the quantizer's range
  double occupied = 1.0 / 16.0;  // coarse-resolution: 99.99th percentile of |x| over the threshold, at most
  double channel_spread = 16.0;  // channel-spread: largest channel range over the median one, at least
  double branch_ratio = 16.0;    // range-mismatch: largest branch range over the smallest, at least
  double negative = 0.0;         // one-sided: share of negative values, at most
  double inherited = 0.1;        // inherited: own loss over accumulated loss, below
};
const ExplainRules& explain_rules();

struct ExplainOptions {
  size_t data_num = 4;  // 0 = all samples; split into tuning and held-out samples (§13.4)
  data::SampleSelection selection = data::SampleSelection::Last;
  std::string metric = "cosine-similarity";  // of the effects (model outputs) and the node errors
  double min_recovery = 0.02;                // a hint's cure must recover at least this share of the output loss
  size_t inherited_top = 5;                  // inherited: only the nodes with the largest accumulated loss, this many
  std::optional<exec::QuantConfig> config;   // the configuration to explain; unset = as stored
  // Called after each step with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

// The data of a histogram: counts of equal bins over [lo, hi].
struct HistogramData {
  double lo = 0.0, hi = 0.0;
  std::vector<double> counts;
};

struct BranchRange {
  std::string tensor;
  double max_abs = 0.0;
};

// What a run shows of one calibration node (on the tuning samples).
struct NodeEvidence {
  std::string calibration_node, node, kind, qtype;  // node: the first normal node it feeds ("" when none)
  bool asymmetric = false, per_channel = false;
  std::vector<float> thresholds, scales;
  double range_lo = 0.0, range_hi = 0.0;  // what the quantizer represents (the widest channel's, per channel)
  int64_t values = 0;
  double data_min = 0.0, data_max = 0.0, p9999 = 0.0;  // p9999: the 99.99th percentile of |x|
  double clipped = 0.0, occupied = 0.0, levels_used = 0.0, zero_rounded = 0.0, negative = 0.0;
  int64_t channels = 1;
  std::vector<double> channel_max_abs;  // per channel along the node's axis (empty without channels)
  double channel_spread = 0.0;          // largest channel max |x| over the median (0: not applicable)
  std::string branch_op;                // Concat / Add / Mul / Sum in front of the quantizer, or ""
  std::vector<BranchRange> branches;
  double branch_ratio = 0.0;             // largest branch max |x| over the smallest (0: no branches)
  bool branch_along_axis = false;        // a Concat along the quantizer's channel axis
  float own = 0.0f, accumulated = 0.0f;  // of `node` (NaN when there is none)
  HistogramData histogram;               // signed, 128 bins over the values seen
  std::vector<std::string> causes;       // rules that fired
};

struct HintEffect {
  float before = 0.0f, after = 0.0f;  // the metric on the tuning samples without and with the cure
  float recovered = 0.0f;             // share of the loss the cure recovers (loss: §13.1)
  bool has_held_out = false;
  float held_out_before = 0.0f, held_out_after = 0.0f;
};

// A cure as a configuration intent (docs/config-schema.md): node, action and, for a threshold, the
// thresholds measured (`value`) and how they were chosen (`method`, `per_channel`; informational).
struct HintSuggestion {
  std::string node, action;
  std::vector<float> value;
  std::string method;
  bool per_channel = false;
  std::string text;  // in words, e.g. "threshold 2.13 (mse)"
};

struct Hint {
  std::string calibration_node, node, cause;
  HintSuggestion suggestion;
  HintEffect effect;
};

struct ExplainResult {
  std::string metric;
  std::vector<std::string> tune_samples, held_out_samples;
  float start = 0.0f, start_held_out = 0.0f;
  bool has_held_out = false;
  std::vector<NodeEvidence> evidence;  // every calibration node that quantizes (ON, integer), model order
  std::vector<Hint> hints;             // ranked: largest recovery first
  size_t evaluations = 0;
  bool cancelled = false;
};

ExplainResult explain(exec::Executor& executor, const quant::CalibrationRelations& relations,
                      const data::CalibrationData& data, const ExplainOptions& options);

// The loss of a metric value (§13.1): 1 − cosine, mse / mre / chebyshev themselves, 10^(−sqnr/10).
double metric_loss(Metric metric, double value);

}  // namespace ptq::analysis
