#include "analysis/node_errors.h"

#include <limits>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "analysis/what_if.h"
#include "core/error.h"
#include "quant/calibration.h"

namespace ptq::analysis {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Where a node's error is measured: its first output, or (converter) the output of the first
// calibration node among the direct consumers of its outputs (outputs in order, consumers in graph
// order), as the Horizon converter picks it; `calibration` is that node's index, else -1.
struct Measured {
  int value = -1;
  int calibration = -1;
};

Measured measured_at(const exec::Executor& ex, const std::string& node, const std::vector<std::string>& outs,
                     bool converter) {
  const ir::Graph& g = ex.graph();
  Measured m;
  m.value = outs.empty() ? -1 : g.find_value(outs.front());
  if (!converter) return m;
  const int id = g.find_node(node);
  if (id < 0) return m;
  for (int out : g.node(id).outputs) {
    if (out < 0) continue;
    for (int c : g.value(out).consumers) {
      if (!quant::is_calibration_node(g.node(c)) || g.node(c).outputs.empty()) continue;
      m.value = g.node(c).outputs[0];
      m.calibration = ex.calibration_index(g.node(c).name);
      return m;
    }
  }
  return m;
}

// `metric` of value `id` over every sample's tensor flattened together (the converter's batch): the
// reference runs against the `got` runs; NaN when sizes differ or nothing is left.
float pooled_metric(const exec::Executor& ex, Metric metric, const std::vector<exec::RunRecord>& references,
                    const std::vector<exec::RunRecord>& got, int id) {
  std::vector<float> a, b;
  for (size_t k = 0; k < references.size(); ++k) {
    const Tensor x = value_of(ex, references[k], id).to_float();
    const Tensor y = value_of(ex, got[k], id).to_float();
    if (x.numel() != y.numel()) return kNaN;
    a.insert(a.end(), x.data<float>(), x.data<float>() + x.numel());
    b.insert(b.end(), y.data<float>(), y.data<float>() + y.numel());
  }
  if (a.empty()) return kNaN;
  return compute_metric(metric, a.data(), b.data(), static_cast<int64_t>(a.size()));
}

}  // namespace

NodeErrorsResult node_errors(exec::Executor& ex, const quant::CalibrationRelations& rel,
                             const data::CalibrationData& data, const NodeErrorsOptions& o) {
  const Metric metric = parse_metric(o.metric);
  NodeErrorsResult result;
  result.metric = o.metric;
  result.converter = o.converter;
  for (const auto& [node, outs] : rel.normal_nodes()) result.nodes.push_back(node);
  const std::vector<size_t> samples = o.samples.empty() ? data.select(o.data_num, o.selection) : o.samples;
  check(!samples.empty(), "There is no calibration_data.");
  const exec::QuantConfig float_config = ex.uniform_config(false);
  const exec::QuantConfig quantized = quantized_config(ex, o.config);
  std::vector<Measured> measured;
  for (const auto& [node, outs] : rel.normal_nodes()) measured.push_back(measured_at(ex, node, outs, o.converter));

  // Accumulated: one run of the whole configuration per sample (from the run cache when a what-if or an
  // earlier call left one), every node's measured tensor against the float model.
  std::vector<exec::RunRecord> references, runs;
  std::vector<std::vector<float>> accumulated(result.nodes.size());
  for (size_t s : samples) {
    result.samples.push_back(data.sample_names()[s]);
    references.push_back(ex.cached_keep_all_run_nearest(data.sample(s), float_config));
    exec::RunRecord run = ex.cached_keep_all_run_nearest(data.sample(s), quantized);
    if (o.converter) {
      runs.push_back(std::move(run));
      continue;
    }
    const std::vector<float> values = node_output_metrics(ex, rel, references.back(), run, metric);
    for (size_t n = 0; n < values.size(); ++n) accumulated[n].push_back(values[n]);
  }
  for (size_t n = 0; n < result.nodes.size(); ++n) {
    const int id = measured[n].value;
    if (!o.converter) result.accumulated.push_back(aggregate({accumulated[n]}));
    else result.accumulated.push_back(id < 0 ? kNaN : pooled_metric(ex, metric, references, runs, id));
  }
  runs.clear();

  // Own: the float model with only the node's calibration nodes as configured (and the measured
  // calibration node, when the converter's tensor is one); only the measured tensor is computed (its
  // calibration nodes, skippable ops between them and the node, the node and that calibration node).
  result.own.assign(result.nodes.size(), kNaN);
  for (size_t n = 0; n < result.nodes.size(); ++n) {
    const int id = measured[n].value;
    exec::QuantConfig own = float_config;
    own.qtype = quantized.qtype;
    own.thresholds = quantized.thresholds;
    own.round = quantized.round;
    std::vector<int> set = calibration_set(ex, rel, {result.nodes[n]});
    if (measured[n].calibration >= 0) set.push_back(measured[n].calibration);
    for (int c : set) own.on[static_cast<size_t>(c)] = quantized.on[static_cast<size_t>(c)];
    std::vector<float> values;
    std::vector<exec::RunRecord> own_runs;
    for (const exec::RunRecord& reference : references) {
      if (id < 0) break;
      exec::RunRecord run = ex.run_incremental_values(reference, own, {id});
      if (o.converter) {
        own_runs.push_back(std::move(run));
        continue;
      }
      const Tensor a = value_of(ex, reference, id).to_float();
      const Tensor b = value_of(ex, run, id).to_float();
      values.push_back(a.numel() != b.numel() ? kNaN
                                              : compute_metric(metric, a.data<float>(), b.data<float>(), a.numel()));
    }
    if (o.converter) result.own[n] = id < 0 ? kNaN : pooled_metric(ex, metric, references, own_runs, id);
    else result.own[n] = aggregate({values});
    if (o.progress && !o.progress(n + 1, result.nodes.size())) {
      result.cancelled = true;
      break;
    }
  }
  return result;
}

}  // namespace ptq::analysis
