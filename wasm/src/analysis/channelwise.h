#pragma once
// get_channelwise_data_distribution (§7): matplotlib box-plot statistics per channel of a
// weight (original values) or of an activation calibration node's input (calibrated model, one
// sample). Percentiles follow numpy's default linear method; whiskers are matplotlib's (furthest
// data within 1.5·IQR, clamped to the box); outliers are returned as a capped, evenly spaced sample
// of the sorted outliers plus their total count. On request, the full histogram of chosen channels
// (the §6 binning of plot_distribution) for a click-through from a box to its data.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/distribution.h"
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
  // Channels (0-based, along the axis used) whose histogram each plot also carries; empty: none,
  // so a default result stays small (a histogram is `bins` counts per channel).
  std::vector<int64_t> channels;
  int bins = 1024;
  data::SampleSelection selection = data::SampleSelection::Last;
  // The quantized model (docs/config-schema.md): a request's configuration; unset = as stored.
  std::optional<exec::QuantConfig> config;
  // Called after each name with (done, total); return false to cancel.
  std::function<bool(size_t, size_t)> progress;
};

// One channel's values as plot_distribution shows a tensor (§6.2: zeros and non-finite values left
// out of the counts), with its range and the calibration threshold that applies to it.
struct ChannelHistogram {
  int64_t channel = 0;   // 0-based (the box plot's x label is channel + 1)
  int64_t count = 0;     // elements of the channel, zeros and non-finite included
  bool has_range = false;        // false when every value is NaN (or the channel is empty)
  float min = 0.0f, max = 0.0f;  // NaN skipped, ±inf kept
  float max_abs = 0.0f;          // max |x|, NaN skipped (plot_distribution's marker)
  bool has_threshold = false;
  float threshold = 0.0f;  // thresholds[channel] of a per-channel node on this axis, or the one per-tensor threshold
  Histogram histogram;     // label "channel <channel + 1>"
};

// The histogram of channel `channel` of `data` along `axis` (which the caller has checked);
// thresholds: the node's (per-tensor: 1, per-channel on `axis`: one per channel, else ignored).
ChannelHistogram channel_histogram(const Tensor& data, int64_t axis, int64_t channel, const std::vector<float>& thresholds,
                                   bool thresholds_on_axis, int bins = 1024);

struct ChannelwisePlot {
  std::string name;
  std::string kind;       // "weight" | "activation"
  Shape shape;            // shape of the data the channels were taken from (weights: §6.3 regrouped view)
  int64_t axis = 1;       // channel axis used (normalised, >= 0)
  std::vector<BoxStats> channels;
  std::vector<ChannelHistogram> histograms;  // options.channels, in that order
  std::string file_name;  // "<name with / -> _>_boxplot.png"
  int64_t figure_width = 1;    // inches (§7): C >= 640: C // 5, C >= 2: C // 2, else 1; height 8
  bool rotate_labels = false;  // x tick labels rotated 90° when C >= 640
};

struct ChannelwiseResult {
  std::string sample;
  std::vector<ChannelwisePlot> plots;
  // Activation calibration nodes the sample never ran (inside a branch it does not take, §1.13): not
  // plotted, in request order.
  std::vector<std::string> not_run;
  bool cancelled = false;
};

ChannelwiseResult get_channelwise_data_distribution(exec::Executor& executor, const quant::CalibrationRelations& relations,
                                                    const data::CalibrationData& data, const ChannelwiseOptions& options);

}  // namespace ptq::analysis
