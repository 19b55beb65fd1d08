#pragma once
// get_channelwise_data_distribution (reference §7): matplotlib box-plot statistics per channel of a
// weight (original values) or of an activation calibration node's input (calibrated model, one
// sample). Percentiles follow numpy's default linear method; whiskers are matplotlib's (furthest
// data within 1.5·IQR, clamped to the box); outliers are returned as a capped, evenly spaced sample
// of the sorted outliers plus their total count.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::analysis {

struct BoxStats {
  int64_t count = 0;
  float mean = 0.0f;           // numpy mean of float32 data (float32, pairwise sum)
  double q1 = 0.0, median = 0.0, q3 = 0.0;
  double whisker_low = 0.0, whisker_high = 0.0;
  int64_t outlier_count = 0;
  std::vector<float> outliers;  // ascending; at most the cap, always including both extremes
};

// Statistics of one channel's values (any order). NaN anywhere makes every statistic NaN, as numpy's
// percentile does. An empty channel gives NaN statistics and count 0.
BoxStats box_stats(std::vector<float> values, double whis = 1.5, size_t outlier_cap = 200);

// numpy.percentile(sorted, q) with the default linear method, on ascending float32 data.
double percentile_linear(const std::vector<float>& sorted, double q);

struct ChannelwiseOptions {
  std::vector<std::string> nodes;  // weight / activation calibration node names
  bool has_axis = false;           // false: the node's axis attribute (weights) or 1 (activations)
  int64_t axis = 1;
  size_t outlier_cap = 200;
  data::SampleSelection selection = data::SampleSelection::Last;
  // Called after each name with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

struct ChannelwisePlot {
  std::string name;
  std::string kind;       // "weight" | "activation"
  Shape shape;            // shape of the data the channels were taken from (weights: §6.3 regrouped view)
  int64_t axis = 1;       // channel axis used (normalised, >= 0)
  std::vector<BoxStats> channels;
  std::string file_name;  // "<name with / -> _>_boxplot.png"
  int64_t figure_width = 1;    // inches (§7): C >= 640: C // 5, C >= 2: C // 2, else 1; height 8
  bool rotate_labels = false;  // x tick labels rotated 90° when C >= 640
};

struct ChannelwiseResult {
  std::string sample;
  std::vector<ChannelwisePlot> plots;
  bool cancelled = false;
};

ChannelwiseResult get_channelwise_data_distribution(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                                    const data::CalibrationData& data, const ChannelwiseOptions& options);

}  // namespace ptq::analysis
