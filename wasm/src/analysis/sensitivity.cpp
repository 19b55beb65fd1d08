#include "analysis/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/selection.h"
#include "core/error.h"
#include "core/size.h"

namespace ptq::analysis {

std::vector<SensitivityItem> sensitivity_items(const exec::Executor& ex, const quant::CalibrationRelations& rel,
                                               const SensitivityOptions& o) {
  const auto& cals = ex.calibrations();
  std::vector<SensitivityItem> items;
  if (o.has_interested) {
    for (const auto& names : o.interested) {
      check_node_names(ex, names);
      items.push_back({join(names, "+"), calibration_set(ex, rel, names)});
    }
    return items;
  }
  if (o.node_type == "node") {
    for (const auto& name : rel.node_items()) items.push_back({name, calibration_set(ex, rel, {name})});
  } else if (o.node_type == "weight" || o.node_type == "activation") {
    const auto kind = o.node_type == "weight" ? quant::TensorKind::Weight : quant::TensorKind::Feature;
    for (size_t i = 0; i < cals.size(); ++i)
      if (cals[i].kind == kind) items.push_back({cals[i].node_name, {static_cast<int>(i)}});
  } else if (o.node_type == "tae") {
    for (const auto& name : rel.tae_nodes()) items.push_back({name, {ex.calibration_index(name)}});
  } else {
    fail("node_type:" + o.node_type + " is unavailable.");
  }
  return items;
}

const std::vector<std::string>& node_types() {
  static const std::vector<std::string> types = {"node", "weight", "activation", "tae"};
  return types;
}

bool ranks_before(Metric first, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  return higher_is_better(first) ? a < b : a > b;
}

void sort_rows(std::vector<SensitivityRow>& rows, Metric first) {
  std::stable_sort(rows.begin(), rows.end(), [first](const SensitivityRow& a, const SensitivityRow& b) {
    return ranks_before(first, a.values[0], b.values[0]);
  });
}

namespace {

// Per metric -> per compared tensor -> per sample: one item's metric values.
using ItemValues = std::vector<std::vector<std::vector<float>>>;

// The keep-all base runs of samples [first, end) (and, for leave-one-out, their float references):
// at least one, and more while the tensors they hold stay within `budget` bytes (counted against the
// memory budget, so a base run the executor's run cache already holds adds nothing). The run cache
// serves the same base runs to the next part of a split sweep while they fit in it.
struct SampleBlock {
  std::vector<exec::RunRecord> bases, references;
  size_t end = 0;
};

SampleBlock next_block(exec::Executor& ex, const data::CalibrationData& data, const std::vector<size_t>& sample_ids,
                       size_t first, size_t budget, const exec::QuantConfig& base_config,
                       const exec::QuantConfig* reference_config, const std::vector<int>& compared) {
  SampleBlock block;
  const uint64_t before = memory_in_use();
  for (block.end = first; block.end < sample_ids.size(); ++block.end) {
    if (!block.bases.empty() && memory_in_use() >= before + budget) break;
    const std::vector<Tensor> inputs = data.sample(sample_ids[block.end]);
    block.bases.push_back(ex.cached_keep_all_run(inputs, base_config));
    if (reference_config) block.references.push_back(ex.run(inputs, *reference_config, compared));
  }
  return block;
}

// Adds the metric values of `config` on the block's samples to `values`.
void add_values(exec::Executor& ex, const std::vector<exec::RunRecord>& bases, const std::vector<exec::RunRecord>& refs,
                const exec::QuantConfig& config, const std::vector<int>& compared, const std::vector<Metric>& metrics,
                ItemValues& values) {
  for (size_t s = 0; s < bases.size(); ++s) {
    exec::RunRecord variant = ex.run_incremental(bases[s], config, compared);
    for (size_t t = 0; t < compared.size(); ++t) {
      const Tensor a = value_of(ex, refs[s], compared[t]).to_float();
      const Tensor b = value_of(ex, variant, compared[t]).to_float();
      for (size_t m = 0; m < metrics.size(); ++m)
        values[m][t].push_back(compute_metric(metrics[m], a.data<float>(), b.data<float>(), a.numel()));
    }
  }
}

// The finished row of `item`: its aggregated values and the columns of its node type.
SensitivityRow item_row(const exec::Executor& ex, const quant::CalibrationRelations& rel, const SensitivityOptions& o,
                        const exec::QuantConfig& quantized, const SensitivityItem& item, const ItemValues& values) {
  SensitivityRow row;
  row.item = item.key;
  for (const auto& per_metric : values) row.values.push_back(aggregate(per_metric));
  if (o.node_type != "node") {
    auto it = rel.cali_normal_map().find(item.key);
    if (it != rel.cali_normal_map().end()) row.node = it->second;
  }
  if (o.node_type == "activation" && item.calibrations.size() == 1) {
    const auto& spec = ex.calibrations()[static_cast<size_t>(item.calibrations[0])];
    if (!spec.thresholds.empty()) {
      row.has_threshold = true;
      const float t = *std::max_element(spec.thresholds.begin(), spec.thresholds.end());
      row.threshold = std::nearbyint(static_cast<double>(t) * 1e5) / 1e5;
    }
    const std::string& override_qtype = quantized.qtype[static_cast<size_t>(item.calibrations[0])];
    row.qtype = override_qtype.empty() ? spec.qtype.name : override_qtype;
  }
  return row;
}

}  // namespace

SensitivityResult get_sensitivity_of_nodes(exec::Executor& ex, const quant::CalibrationRelations& rel,
                                           const data::CalibrationData& data, const SensitivityOptions& o) {
  check(!o.metrics.empty(), "metrics contain unavailable method: (none)");
  std::vector<Metric> metrics;
  for (const auto& m : o.metrics) metrics.push_back(parse_metric(m));
  const auto& types = node_types();
  if (!o.has_interested && std::find(types.begin(), types.end(), o.node_type) == types.end())
    fail("node_type:" + o.node_type + " is unavailable.");
  check_node_names(ex, o.output_nodes);

  SensitivityResult result;
  result.node_type = o.node_type;
  result.metrics = o.metrics;
  if (o.output_nodes.empty()) {
    result.compared_tensors = rel.model_outputs();
  } else {
    for (const auto& n : o.output_nodes) {
      auto outs = rel.node_outputs(n);
      check(!outs.empty(), "output_node '" + n + "' is not a node with calibrated inputs; its outputs cannot be compared");
      result.compared_tensors.insert(result.compared_tensors.end(), outs.begin(), outs.end());
    }
  }
  const std::vector<int> compared = value_ids(ex.graph(), result.compared_tensors);
  const std::vector<size_t> sample_ids = o.samples.empty() ? data.select(o.data_num, o.selection) : o.samples;
  for (size_t s : sample_ids) result.samples.push_back(data.sample_names()[s]);

  std::vector<SensitivityItem> items = sensitivity_items(ex, rel, o);
  const size_t begin = std::min(o.item_begin, items.size());
  const size_t end = std::min(o.item_end, items.size());

  const exec::QuantConfig float_config = ex.uniform_config(false);
  const exec::QuantConfig quantized = quantized_config(ex, o.config);
  const exec::QuantConfig base_config = o.leave_one_out ? quantized : float_config;
  // Samples go in blocks whose base runs take about o.sample_block_bytes together, so memory does not
  // grow with the sample count; each item's values are gathered over the blocks and its row is finished
  // (and streamed) in the last one. The metric values per item and sample are all that is kept.
  // Progress counts (item, sample) evaluations, so it advances (and can cancel) in every block.
  std::vector<ItemValues> values(end - begin,
                                 ItemValues(metrics.size(), std::vector<std::vector<float>>(compared.size())));
  const size_t evaluations = (end - begin) * sample_ids.size();
  size_t evaluated = 0;
  for (size_t first = 0; first < sample_ids.size() && !result.cancelled;) {
    const SampleBlock block = next_block(ex, data, sample_ids, first, o.sample_block_bytes, base_config,
                                         o.leave_one_out ? &float_config : nullptr, compared);
    first = block.end;
    const std::vector<exec::RunRecord>& refs = o.leave_one_out ? block.references : block.bases;
    for (size_t k = begin; k < end && !result.cancelled; ++k) {
      const SensitivityItem& item = items[k];
      // Sensitivity: the float model with the item's set ON (qtypes of the quantized model); leave-one-out:
      // the quantized model with the item's set OFF.
      const exec::QuantConfig config = o.leave_one_out ? blacklist_config(quantized, item.calibrations)
                                                       : whitelist_config(ex, quantized, item.calibrations);
      add_values(ex, block.bases, refs, config, compared, metrics, values[k - begin]);
      evaluated += block.bases.size();
      if (first == sample_ids.size()) {
        result.rows.push_back(item_row(ex, rel, o, quantized, item, values[k - begin]));
        if (o.on_row) o.on_row(result.rows.back());
      }
      if (o.progress && !o.progress(evaluated, evaluations)) result.cancelled = true;
    }
  }
  sort_rows(result.rows, metrics[0]);
  return result;
}

}  // namespace ptq::analysis
