#include "analysis/node_errors.h"

#include <limits>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "analysis/what_if.h"
#include "core/error.h"

namespace ptq::analysis {

NodeErrorsResult node_errors(exec::Executor& ex, const quant::CalibrationRelations& rel,
                             const data::CalibrationData& data, const NodeErrorsOptions& o) {
  const Metric metric = parse_metric(o.metric);
  NodeErrorsResult result;
  result.metric = o.metric;
  for (const auto& [node, outs] : rel.normal_nodes()) result.nodes.push_back(node);
  const std::vector<size_t> samples = data.select(o.data_num, o.selection);
  check(!samples.empty(), "There is no calibration_data.");
  const exec::QuantConfig float_config = ex.uniform_config(false);
  const exec::QuantConfig quantized = quantized_config(ex, o.config);

  // Accumulated: one run of the whole configuration per sample (from the run cache when a what-if or an
  // earlier call left one), every node's first output against the float model.
  std::vector<exec::RunRecord> references;
  std::vector<std::vector<float>> accumulated(result.nodes.size());
  for (size_t s : samples) {
    result.samples.push_back(data.sample_names()[s]);
    references.push_back(ex.cached_keep_all_run_nearest(data.sample(s), float_config));
    const exec::RunRecord run = ex.cached_keep_all_run_nearest(data.sample(s), quantized);
    const std::vector<float> values = node_output_metrics(ex, rel, references.back(), run, metric);
    for (size_t n = 0; n < values.size(); ++n) accumulated[n].push_back(values[n]);
  }
  for (const auto& v : accumulated) result.accumulated.push_back(aggregate({v}));

  // Own: the float model with only the node's calibration nodes as configured; only the node's own
  // output is computed (its calibration nodes, skippable ops between them and the node, and the node).
  result.own.assign(result.nodes.size(), std::numeric_limits<float>::quiet_NaN());
  for (size_t n = 0; n < result.nodes.size(); ++n) {
    const auto& outs = rel.normal_nodes()[n].second;
    const int id = outs.empty() ? -1 : ex.graph().find_value(outs.front());
    exec::QuantConfig own = float_config;
    own.qtype = quantized.qtype;
    own.round = quantized.round;
    for (int c : calibration_set(ex, rel, {result.nodes[n]})) own.on[static_cast<size_t>(c)] = quantized.on[static_cast<size_t>(c)];
    std::vector<float> values;
    for (const exec::RunRecord& reference : references) {
      if (id < 0) break;
      const exec::RunRecord run = ex.run_incremental_values(reference, own, {id});
      const Tensor a = value_of(ex, reference, id).to_float();
      const Tensor b = value_of(ex, run, id).to_float();
      values.push_back(a.numel() != b.numel() ? std::numeric_limits<float>::quiet_NaN()
                                              : compute_metric(metric, a.data<float>(), b.data<float>(), a.numel()));
    }
    result.own[n] = aggregate({values});
    if (o.progress && !o.progress(n + 1, result.nodes.size())) {
      result.cancelled = true;
      break;
    }
  }
  return result;
}

}  // namespace ptq::analysis
