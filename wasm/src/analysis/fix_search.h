#pragma once
// Automatic fix search: the smallest set of nodes to raise (to int16, to float, ...) so that the model
// outputs meet a target such as "cosine-similarity>=0.999" (mean over outputs and the chosen samples,
// aggregated as §3.3). Candidates are ranked by an existing sweep (node sensitivity, or leave-one-out:
// the gain of restoring each node in the quantized model) or given in order; they are added one at a
// time with the most preferred action, then raised to the next actions, each step evaluated
// incrementally from the previous accepted state; once the target holds every chosen node is pruned
// whose removal (or a more preferred action) keeps it. Actions only ever raise precision: a calibration
// node already at the action's precision or above stays as it is.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

// "<metric><op><bound>", op one of >=, >, <=, < in the metric's better direction.
struct FixTarget {
  Metric metric = Metric::Cosine;
  std::string op = ">=";
  double bound = 0.999;
  bool holds(float value) const;  // NaN never holds
  std::string text() const;       // canonical spelling, e.g. "cosine-similarity>=0.999"
};
// Throws ptq::Error "target '<text>': ..." naming what is wrong.
FixTarget parse_fix_target(const std::string& text);

// Actions on a node: "threshold" (its activation calibration nodes re-calibrated by minimum
// quantization MSE on the tuning samples, §13.2), "float" (calibration nodes switched OFF) or a qtype
// name ("int16": ON with it); quant/precision.h orders them.
// Checks the preference list (non-empty, known actions, no repeats, least to most precise). Throws
// naming `field` ("options.prefer").
void check_prefer(const std::vector<std::string>& prefer, const std::string& field);

struct FixOptions {
  FixTarget target;
  std::vector<std::string> prefer = {"int16", "float"};  // least to most precise
  size_t max_nodes = 0;                                  // 0 = no limit
  // "sensitivity" | "leave_one_out" (ranked by that sweep of the target's metric) | "own_error" (each
  // node's own error, node_errors, largest loss first) | "list" (`candidate_nodes`, in the order given).
  std::string candidates = "sensitivity";
  std::vector<std::string> candidate_nodes;
  // At most this many samples (0 = all), split into tuning and held-out samples (§13.4): the target is
  // judged on the tuning samples and reported on the held-out ones.
  size_t data_num = 4;
  data::SampleSelection selection = data::SampleSelection::Last;
  // Called after every ranking item and every evaluation: phase "rank" | "add" | "escalate" | "prune" |
  // "without" (each chosen node taken out of the final choice, measured once the target is reached),
  // the node, the action tried ("" while ranking, "removed" in prune), the metric (NaN while ranking),
  // whether the step entered the path, done / total of the phase. Return false to cancel.
  struct Event {
    std::string phase, node, action;
    float value = 0.0f;
    bool accepted = false;
    size_t done = 0, total = 0;
  };
  std::function<bool(const Event&)> progress;
  // Whether the threshold action may re-calibrate calibration node i (the chosen export can carry its
  // thresholds); unset = every node.
  std::function<bool(size_t)> threshold_allowed;
  // Asked before every evaluation (and after every ranking item): true stops the search at once. The
  // result is then marked `cancelled` and holds the evaluations done so far; it is not a fix.
  std::function<bool()> cancel;
};

struct FixStep {
  std::string phase;   // "add" | "escalate" | "prune"
  std::string node;
  std::string action;  // the node's action after the step ("removed" when pruned away)
  float value = 0.0f;  // the target metric after the step
};

struct FixChoice {
  std::string node;
  std::string action;
  // The target metric of the final choice with this node alone back in its starting state: what the
  // node contributes (NaN when not measured: the target was not reached, or the search was cancelled).
  float without = std::numeric_limits<float>::quiet_NaN();
};

struct FixResult {
  FixTarget target;
  std::vector<std::string> prefer;
  std::string candidates;
  size_t max_nodes = 0;
  std::vector<std::string> samples;       // the tuning samples
  std::vector<std::string> held_out;      // the held-out samples (empty: none)
  float held_out_start = 0.0f, held_out_final = 0.0f;  // the target metric on them (when there are any)
  bool held_out_met = false;
  std::vector<std::string> warnings;      // e.g. the held-out samples miss the target
  std::vector<std::string> ranking;       // candidate nodes in the order tried
  std::vector<float> ranking_values;      // the ranking sweep's metric per candidate (NaN for "list")
  float start = 0.0f;                     // the base configuration's metric
  bool reached = false;
  float final_value = 0.0f;
  std::vector<FixStep> steps;             // the accepted path
  std::vector<std::string> pruned;        // chosen nodes removed again by pruning
  std::vector<FixChoice> nodes;           // the final choice, in the order chosen
  exec::QuantConfig config;               // the base with the final choice applied
  std::string message;                    // why the target was not reached / already held
  size_t evaluations = 0;
  bool cancelled = false;
};

// `base`: the configuration to fix (the stored one, or a configuration document's).
FixResult find_fix(exec::Executor& executor, const quant::CalibrationRelations& relations,
                   const data::CalibrationData& data, const exec::QuantConfig& base, const FixOptions& options);

// `base` with every choice applied, raising only (the order of `choices` does not matter). A
// "threshold" choice sets `thresholds[i]` (the re-calibrated thresholds of calibration node i; empty:
// not available) on the node's activation calibration nodes at their base state; a more precise
// action replaces them (its qtype at the stored thresholds).
exec::QuantConfig apply_fix_choices(const exec::Executor& executor, const quant::CalibrationRelations& relations,
                                    const exec::QuantConfig& base, const std::vector<FixChoice>& choices,
                                    const std::vector<std::vector<float>>& thresholds = {});

}  // namespace ptq::analysis
