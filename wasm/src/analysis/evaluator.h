#pragma once
// Scoring configurations on the model outputs against the float model, from incremental runs: the
// engine of the searches (fix, cause hints, calibration methods). Per output the metric of each
// sample, averaged over the samples, then over the outputs (§3.3).
#include <vector>

#include "analysis/metrics.h"
#include "exec/executor.h"

namespace ptq::analysis {

class Evaluator {
 public:
  // `compared`: the value ids of the compared outputs (§1.10).
  Evaluator(exec::Executor& executor, const std::vector<int>& compared, Metric metric);

  // Adds a sample: its float reference run and its run under `base` (the current state).
  void add_sample(const std::vector<Tensor>& inputs, const exec::QuantConfig& base);
  bool empty() const { return current_.empty(); }

  // The metric of the current state.
  float current_score() const { return score(current_); }
  // The metric of `config`; its runs are kept as the candidate next state (accept() makes it current).
  float evaluate(const exec::QuantConfig& config);
  void accept();
  // The metric of `config` without keeping its runs (only the outputs are computed).
  float peek(const exec::QuantConfig& config);
  // Every metric of all_metrics() for `config`, the same way.
  std::vector<float> peek_all(const exec::QuantConfig& config);
  size_t evaluations() const { return evaluations_; }

 private:
  float score(const std::vector<exec::RunRecord>& runs) const { return scores(runs, {metric_})[0]; }
  std::vector<float> scores(const std::vector<exec::RunRecord>& runs, const std::vector<Metric>& metrics) const;
  std::vector<exec::RunRecord> outputs_of(const exec::QuantConfig& config);

  exec::Executor& ex_;
  std::vector<int> compared_;
  Metric metric_;
  std::vector<int> keep_;  // every computed tensor: an accepted trial is the base of the next one
  std::vector<exec::RunRecord> references_, current_, trial_;
  size_t evaluations_ = 0;
};

}  // namespace ptq::analysis
