#include "analysis/evaluator.h"

#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

Evaluator::Evaluator(exec::Executor& ex, const std::vector<int>& compared, Metric metric)
    : ex_(ex), compared_(compared), metric_(metric) {
  const ir::Graph& g = ex.graph();
  for (int v : g.inputs) keep_.push_back(v);
  for (const auto& node : g.nodes)
    for (int v : node.outputs)
      if (v >= 0 && !g.constant(v)) keep_.push_back(v);
}

void Evaluator::add_sample(const std::vector<Tensor>& inputs, const exec::QuantConfig& base) {
  references_.push_back(ex_.cached_keep_all_run(inputs, ex_.uniform_config(false)));
  current_.push_back(ex_.cached_keep_all_run(inputs, base));
}

std::vector<float> Evaluator::scores(const std::vector<exec::RunRecord>& runs,
                                     const std::vector<Metric>& metrics) const {
  // [metric][output][sample]
  std::vector<std::vector<std::vector<float>>> values(metrics.size(),
                                                      std::vector<std::vector<float>>(compared_.size()));
  for (size_t s = 0; s < runs.size(); ++s)
    for (size_t t = 0; t < compared_.size(); ++t) {
      const Tensor ref = value_of(ex_, references_[s], compared_[t]).to_float();
      const Tensor got = value_of(ex_, runs[s], compared_[t]).to_float();
      check(ref.numel() == got.numel(),
            "model output '" + ex_.graph().value(compared_[t]).name + "' changes its size under quantization");
      for (size_t m = 0; m < metrics.size(); ++m)
        values[m][t].push_back(compute_metric(metrics[m], ref.data<float>(), got.data<float>(), ref.numel()));
    }
  std::vector<float> out;
  for (const auto& v : values) out.push_back(aggregate(v));
  return out;
}

float Evaluator::evaluate(const exec::QuantConfig& config) {
  trial_.clear();
  for (const auto& base : current_) trial_.push_back(ex_.run_incremental(base, config, keep_));
  ++evaluations_;
  return score(trial_);
}

void Evaluator::accept() {
  current_ = std::move(trial_);
  trial_.clear();
}

std::vector<exec::RunRecord> Evaluator::outputs_of(const exec::QuantConfig& config) {
  std::vector<exec::RunRecord> runs;
  for (const auto& base : current_) runs.push_back(ex_.run_incremental(base, config, compared_));
  ++evaluations_;
  return runs;
}

float Evaluator::peek(const exec::QuantConfig& config) { return score(outputs_of(config)); }

std::vector<float> Evaluator::peek_all(const exec::QuantConfig& config) {
  return scores(outputs_of(config), all_metrics());
}

}  // namespace ptq::analysis
