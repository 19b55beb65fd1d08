#include "analysis/what_if.h"

#include <functional>
#include <limits>

#include "analysis/output_metrics.h"
#include "analysis/recalibrate.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

namespace {

// `metric` of value `id` in `got` against `ref`; NaN when the sizes differ.
float metric_of(const exec::Executor& ex, const exec::RunRecord& ref, const exec::RunRecord& got, int id, Metric metric) {
  const Tensor a = value_of(ex, ref, id).to_float();
  const Tensor b = value_of(ex, got, id).to_float();
  if (a.numel() != b.numel()) return std::numeric_limits<float>::quiet_NaN();
  return compute_metric(metric, a.data<float>(), b.data<float>(), a.numel());
}

}  // namespace

std::vector<float> node_output_metrics(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                       const exec::RunRecord& float_run, const exec::RunRecord& quantized_run,
                                       Metric metric) {
  std::vector<float> out;
  for (const auto& [node, outs] : rel.normal_nodes()) {
    const int id = outs.empty() ? -1 : ex.graph().find_value(outs.front());
    out.push_back(id < 0 ? std::numeric_limits<float>::quiet_NaN() : metric_of(ex, float_run, quantized_run, id, metric));
  }
  return out;
}

WhatIfResult what_if(exec::Executor& ex, const quant::CalibrationRelations& rel, const data::CalibrationData& data,
                     const WhatIfOptions& o) {
  const Metric node_metric = parse_metric(o.metric);
  WhatIfResult result;
  result.metric = o.metric;
  result.outputs = rel.model_outputs();
  for (const auto& [node, outs] : rel.normal_nodes()) result.nodes.push_back(node);
  result.node_count = static_cast<int64_t>(ex.graph().nodes.size());
  const std::vector<int> compared = value_ids(ex.graph(), result.outputs);
  const std::vector<size_t> chosen = data.select(o.data_num, o.selection);
  check(!chosen.empty(), "There is no calibration_data.");
  const SampleSplit split = o.held_out ? split_samples(chosen) : SampleSplit{chosen, {}};
  const std::vector<size_t>& samples = split.tune;
  result.split = o.held_out;
  const exec::QuantConfig float_config = ex.uniform_config(false);
  const exec::QuantConfig quantized = quantized_config(ex, o.config);

  // Sample s's float and configured runs (from the run cache), the compared outputs added to `into`,
  // and `per_node` called with the runs.
  auto measure = [&](size_t s, OutputMetrics& into, const std::function<void(const exec::RunRecord&, const exec::RunRecord&)>& per_node) {
    exec::RunStats stats;
    const exec::RunRecord reference = ex.cached_keep_all_run_nearest(data.sample(s), float_config, &stats);
    const exec::RunRecord run = ex.cached_keep_all_run_nearest(data.sample(s), quantized, &stats);
    result.nodes_executed += stats.nodes_executed + stats.nodes_recomputed;
    for (size_t t = 0; t < compared.size(); ++t)
      into.add(t, value_of(ex, reference, compared[t]), value_of(ex, run, compared[t]));
    if (per_node) per_node(reference, run);
  };
  OutputMetrics outputs(compared.size());
  std::vector<std::vector<float>> nodes(result.nodes.size());  // [node][sample]
  for (size_t k = 0; k < samples.size(); ++k) {
    result.samples.push_back(data.sample_names()[samples[k]]);
    measure(samples[k], outputs, [&](const exec::RunRecord& reference, const exec::RunRecord& run) {
      const std::vector<float> per_node = node_output_metrics(ex, rel, reference, run, node_metric);
      for (size_t n = 0; n < per_node.size(); ++n) nodes[n].push_back(per_node[n]);
    });
    if (o.progress && !o.progress(k + 1, samples.size())) {
      result.cancelled = true;
      break;
    }
  }
  result.output_metrics = outputs.per_output();
  result.mean = outputs.mean();
  for (const auto& v : nodes) result.node_values.push_back(aggregate({v}));
  // The held-out samples: the outputs' metrics only.
  OutputMetrics held(compared.size());
  for (size_t s : result.cancelled ? std::vector<size_t>{} : split.held_out) {
    result.held_out_samples.push_back(data.sample_names()[s]);
    measure(s, held, {});
  }
  if (!result.held_out_samples.empty()) result.held_out_mean = held.mean();
  return result;
}

}  // namespace ptq::analysis
