#pragma once
// get_sensitivity_of_nodes (§3) and the leave-one-out view: for every item, the compared
// tensors of a variant model against the float model, each variant run incrementally from a cached
// run of the same sample (only what its changed calibration nodes reach is recomputed).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct SensitivityRow;

struct SensitivityOptions {
  std::string node_type = "node";                 // node | weight | activation | tae
  std::vector<std::string> metrics = {"cosine-similarity"};
  std::vector<std::string> output_nodes;          // empty: the model outputs (§1.10)
  size_t data_num = 1;                            // 0 = all samples
  std::vector<size_t> samples;                    // when not empty: these samples instead of data_num / selection
  data::SampleSelection selection = data::SampleSelection::Last;
  // interested_nodes: each item is one name or several (switched together, key "A+B").
  bool has_interested = false;
  std::vector<std::vector<std::string>> interested;
  // Leave-one-out: the calibrated model (as saved) with only the item's calibration set OFF.
  bool leave_one_out = false;
  // The quantized model (docs/config-schema.md): a request's configuration; unset = as stored.
  std::optional<exec::QuantConfig> config;
  // Compute only items [item_begin, item_end) of the candidate list (splitting across workers).
  size_t item_begin = 0;
  size_t item_end = static_cast<size_t>(-1);
  // Bytes of base runs held at once: the samples go in blocks whose base runs take about this much
  // (at least one sample per block), so that memory does not grow with the sample count.
  size_t sample_block_bytes = exec::Executor::kDefaultRunCacheBudget;
  // Called after each item of each sample block with (done, total) counted in (item, sample)
  // evaluations, total = items × samples; return false to cancel.
  std::function<bool(size_t, size_t)> progress;
  // Called with each finished row (in the last sample block, before that `progress` call; the
  // reference stays valid until then), for per-item events (api/analyze).
  std::function<void(const SensitivityRow&)> on_row;
};

struct SensitivityRow {
  std::string item;
  std::vector<float> values;  // one per metric, in options order
  std::string node;           // cali_normal_map column (weight/activation/tae)
  bool has_threshold = false;
  double threshold = 0.0;     // activation: round(max(thresholds), 5)
  std::string qtype;          // activation
};

struct SensitivityResult {
  std::string node_type;
  std::vector<std::string> metrics;
  std::vector<std::string> compared_tensors;
  std::vector<std::string> samples;  // file names of the samples used
  std::vector<SensitivityRow> rows;  // sorted: most sensitive first, NaN last (§3.4)
  bool cancelled = false;
};

// Candidate items (graph order) and each one's calibration ON-set, for node_type/interested.
struct SensitivityItem {
  std::string key;
  std::vector<int> calibrations;  // indices into Executor::calibrations()
};
std::vector<SensitivityItem> sensitivity_items(const exec::Executor& executor, const quant::CalibrationRelations& relations,
                                               const SensitivityOptions& options);

SensitivityResult get_sensitivity_of_nodes(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                           const data::CalibrationData& data, const SensitivityOptions& options);

// The node types of a sweep (§3.1): normal nodes, weight / activation calibration nodes, tae nodes.
const std::vector<std::string>& node_types();

// §3.4: whether a row whose first metric is `a` ranks before one with `b` (most sensitive first:
// ascending where higher is better, descending where lower is better; NaN last).
bool ranks_before(Metric first, double a, double b);
// Stable sort by ranks_before on the first metric (ties keep the sweep order).
void sort_rows(std::vector<SensitivityRow>& rows, Metric first);

}  // namespace ptq::analysis
