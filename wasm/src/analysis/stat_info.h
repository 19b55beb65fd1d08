#pragma once
// get_calibration_nodes_stat_info (§8.1): thresholds, scales and per-channel max |x| /
// smallest non-zero |x| of calibration nodes — weights from the initializer (rows = dim 0), features
// from the float model over all samples (channels = axis 1).
#include <functional>
#include <string>
#include <vector>

#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct StatInfoOptions {
  bool has_nodes = false;          // false: every calibration node (nodes_list=None)
  std::vector<std::string> nodes;  // validated; names that are not calibration nodes are left out
  // Called after each sample of the feature pass with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

struct NodeStatInfo {
  std::string node;
  std::string tensor_type;  // "weight" | "feature"
  std::string granularity;  // "per-channel" | "per-tensor" (inferred: quant_attrs bits are not public)
  std::vector<float> thresholds, scales;
  std::vector<float> max_vals;     // per row / channel: max |x|
  std::vector<float> min_nz_vals;  // per row / channel: smallest non-zero |x|, 0 when all are zero
};

struct StatInfoResult {
  std::vector<NodeStatInfo> nodes;  // weight nodes, then feature nodes, each in graph order
  std::vector<std::string> samples;
  std::vector<std::string> messages;  // what was left out and why (the feature nodes of a model that cannot run)
  bool cancelled = false;             // feature statistics are then from the samples done so far
};

StatInfoResult get_calibration_nodes_stat_info(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                               const data::CalibrationData& data, const StatInfoOptions& options);

// visualize=True: the cell strings of one node ("%.6f,..." for per-channel nodes, §8.1).
std::vector<std::string> stat_info_cells(const NodeStatInfo& info);
// The table print_info_dict logs for visualize=True (key header "Node", empty title).
std::string format_stat_info_table(const StatInfoResult& result);

// The visualize figures' curves for one tensor type ("weight" | "feature"): per node, the first
// value of Thresholds, Scales, Max_vals, Min_nz_vals (per-tensor nodes: max / smallest positive).
struct StatInfoCurves {
  std::vector<std::string> nodes;
  std::vector<double> thresholds, scales, max_vals, min_nz_vals;
};
StatInfoCurves stat_info_curves(const StatInfoResult& result, const std::string& tensor_type);

}  // namespace ptq::analysis
