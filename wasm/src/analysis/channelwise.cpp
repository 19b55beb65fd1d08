#include "analysis/channelwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/metrics.h"
#include "analysis/selection.h"
#include "core/error.h"

namespace ptq::analysis {

double percentile_linear(const std::vector<float>& sorted, double q) {
  const size_t n = sorted.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  // numpy: virtual index n·p + (1 − p) − 1 in float64, neighbours clipped to the data.
  const double p = q / 100.0;
  const double virtual_index = static_cast<double>(n) * p + (1.0 - p) - 1.0;
  const double previous = std::floor(virtual_index);
  const size_t lo = virtual_index <= 0 ? 0 : std::min(static_cast<size_t>(previous), n - 1);
  const size_t hi = virtual_index <= 0 ? 0 : std::min(lo + 1, n - 1);
  const double t = virtual_index - previous;
  // numpy's _lerp: b − a in the data's float32, the interpolation in float64, from the nearer end.
  const float diff = sorted[hi] - sorted[lo];
  if (t >= 0.5) return static_cast<double>(sorted[hi]) - static_cast<double>(diff) * (1.0 - t);
  return static_cast<double>(sorted[lo]) + static_cast<double>(diff) * t;
}

BoxStats box_stats(std::vector<float> values, double whis, size_t outlier_cap) {
  BoxStats s;
  s.count = static_cast<int64_t>(values.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool has_nan = std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
  if (values.empty() || has_nan) {
    s.mean = std::numeric_limits<float>::quiet_NaN();
    s.q1 = s.median = s.q3 = s.whisker_low = s.whisker_high = nan;
    return s;
  }
  s.mean = pairwise_sum(values.data(), s.count) / static_cast<float>(s.count);
  std::sort(values.begin(), values.end());
  s.q1 = percentile_linear(values, 25.0);
  s.median = percentile_linear(values, 50.0);
  s.q3 = percentile_linear(values, 75.0);
  const double iqr = s.q3 - s.q1;
  const double low = s.q1 - whis * iqr, high = s.q3 + whis * iqr;
  // matplotlib: the furthest data within the fences, but never inside the box.
  auto first_in = std::lower_bound(values.begin(), values.end(), low,
                                   [](float v, double bound) { return static_cast<double>(v) < bound; });
  auto last_in = std::upper_bound(values.begin(), values.end(), high,
                                  [](double bound, float v) { return bound < static_cast<double>(v); });
  s.whisker_low = first_in == values.end() || static_cast<double>(*first_in) > s.q1 ? s.q1 : *first_in;
  s.whisker_high = last_in == values.begin() || static_cast<double>(*(last_in - 1)) < s.q3 ? s.q3 : *(last_in - 1);
  std::vector<float> outliers;
  for (float v : values)
    if (static_cast<double>(v) < s.whisker_low || static_cast<double>(v) > s.whisker_high) outliers.push_back(v);
  s.outlier_count = static_cast<int64_t>(outliers.size());
  if (outliers.size() <= outlier_cap || outlier_cap < 2) {
    if (outliers.size() > outlier_cap) outliers.resize(outlier_cap);
    s.outliers = std::move(outliers);
    return s;
  }
  // Evenly spaced over the sorted outliers, both extremes included.
  const double stride = static_cast<double>(outliers.size() - 1) / static_cast<double>(outlier_cap - 1);
  for (size_t i = 0; i < outlier_cap; ++i)
    s.outliers.push_back(outliers[static_cast<size_t>(std::llround(static_cast<double>(i) * stride))]);
  return s;
}

namespace {

// The consumer group the original reads for axis-1 weights (Conv/ConvTranspose/HzPreprocess taking
// the calibration output as input 1); 1 when there is none (the original crashes there).
int64_t consumer_group(const ir::Graph& g, const quant::CalibrationSpec& spec) {
  for (int c : g.value(spec.output_value).consumers) {
    const ir::Node& n = g.node(c);
    const bool conv_like = n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "HzPreprocess";
    if (conv_like && n.inputs.size() > 1 && n.inputs[1] == spec.output_value) return n.attr_int("group", 1);
  }
  return 1;
}

// Weights of an axis-1 node (ConvTranspose [C_in, C_out/g, ...]) viewed as [C_in/g, C_out, ...] with
// axis 1 the output channel of the calibrater's regrouping (§1.5). The original reshapes in memory
// order instead, which mixes groups when g > 1 (docs/compatibility.md). Identity for g = 1.
Tensor weight_view(const ir::Graph& g, const quant::CalibrationSpec& spec, const Tensor& w) {
  if (spec.axis != 1 || w.rank() < 2) return w;
  const int64_t groups = consumer_group(g, spec);
  if (groups <= 1) return w;
  check(w.dim(0) % groups == 0, "weight of '" + spec.node_name + "' has " + std::to_string(w.dim(0)) +
                                    " rows, not divisible by the group count " + std::to_string(groups));
  const int64_t per_group = w.dim(0) / groups, cols = w.dim(1);
  int64_t inner = 1;
  for (size_t d = 2; d < w.rank(); ++d) inner *= w.dim(d);
  Shape shape = w.shape();
  shape[0] = per_group;
  shape[1] = cols * groups;
  Tensor out(DType::Float, shape);
  const float* src = w.data<float>();
  float* dst = out.mutable_data<float>();
  // out[i, k, r] = w[(k / cols)·per_group + i, k % cols, r]
  for (int64_t i = 0; i < per_group; ++i)
    for (int64_t k = 0; k < cols * groups; ++k) {
      const int64_t row = (k / cols) * per_group + i, col = k % cols;
      std::copy_n(src + (row * cols + col) * inner, inner, dst + (i * cols * groups + k) * inner);
    }
  return out;
}

// The flattened values of channel c along `axis` (the channel axis moved to the front, §7).
void channel_values(const Tensor& t, int64_t axis, int64_t c, std::vector<float>& values) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.dim(static_cast<size_t>(d));
  for (size_t d = static_cast<size_t>(axis) + 1; d < t.rank(); ++d) inner *= t.dim(d);
  const int64_t channels = t.dim(static_cast<size_t>(axis));
  const float* x = t.data<float>();
  values.clear();
  for (int64_t o = 0; o < outer; ++o) values.insert(values.end(), x + (o * channels + c) * inner, x + (o * channels + c + 1) * inner);
}

std::vector<BoxStats> channel_stats(const Tensor& t, int64_t axis, size_t cap) {
  std::vector<BoxStats> out;
  std::vector<float> values;
  for (int64_t c = 0; c < t.dim(static_cast<size_t>(axis)); ++c) {
    channel_values(t, axis, c, values);
    out.push_back(box_stats(values, 1.5, cap));
  }
  return out;
}

}  // namespace

ChannelHistogram channel_histogram(const Tensor& data, int64_t axis, int64_t channel, const std::vector<float>& thresholds,
                                   bool thresholds_on_axis, int bins) {
  ChannelHistogram h;
  h.channel = channel;
  std::vector<float> values;
  channel_values(data, axis, channel, values);
  h.count = static_cast<int64_t>(values.size());
  for (float v : values) {
    if (std::isnan(v)) continue;
    h.min = h.has_range ? std::min(h.min, v) : v;
    h.max = h.has_range ? std::max(h.max, v) : v;
    h.max_abs = std::max(h.max_abs, std::fabs(v));
    h.has_range = true;
  }
  // A per-tensor threshold bounds every channel; per-channel ones only mean something on their own axis.
  const size_t channels = static_cast<size_t>(data.dim(static_cast<size_t>(axis)));
  if (thresholds.size() == 1 || (thresholds_on_axis && thresholds.size() == channels)) {
    h.has_threshold = true;
    h.threshold = thresholds[thresholds.size() == 1 ? 0 : static_cast<size_t>(channel)];
  }
  h.histogram = make_histogram(values.data(), h.count, true, bins);
  h.histogram.label = "channel " + std::to_string(channel + 1);
  h.histogram.color = "#99ffbb";  // the original's colour of the data before calibration / input data
  return h;
}

namespace {

// The box plot of one calibration node's data (`values`: its weight, or its input on the sample).
ChannelwisePlot box_plot(const quant::CalibrationSpec& spec, bool weight, const Tensor& values,
                         const ChannelwiseOptions& o) {
  ChannelwisePlot p;
  p.name = spec.node_name;
  p.kind = weight ? "weight" : "activation";
  p.shape = values.shape();
  // The default activation axis 1 does not exist in a scalar or a vector (runall's node list may hold
  // such nodes, §7): a vector's channels lie along its only axis, a scalar is one channel.
  const Tensor data_tensor = values.rank() == 0 ? Tensor::view(DType::Float, {1}, values.raw()) : values;
  const int64_t rank = static_cast<int64_t>(data_tensor.rank());
  int64_t axis = o.has_axis ? o.axis : (spec.kind == quant::TensorKind::Weight ? spec.axis : rank < 2 ? 0 : 1);
  if (axis < 0) axis += rank;
  check(axis >= 0 && axis < rank, "axis " + std::to_string(o.has_axis ? o.axis : axis) + " is out of range for '" +
                                      spec.node_name + "' with data shape " + shape_str(p.shape));
  p.axis = axis;
  p.channels = channel_stats(data_tensor, axis, o.outlier_cap);
  const int64_t c = static_cast<int64_t>(p.channels.size());
  const int64_t own_axis = spec.axis < 0 ? spec.axis + rank : spec.axis;
  for (int64_t k : o.channels) {
    check(k >= 0 && k < c, "options.channels: channel " + std::to_string(k) + " is out of range for '" + spec.node_name +
                               "' (axis " + std::to_string(axis) + " of data shape " + shape_str(p.shape) + " has " +
                               std::to_string(c) + " channels)");
    p.histograms.push_back(channel_histogram(data_tensor, axis, k, spec.thresholds, axis == own_axis, o.bins));
  }
  p.figure_width = c >= 640 ? c / 5 : (c != 1 ? c / 2 : 1);
  p.rotate_labels = c >= 640;
  std::string file = spec.node_name;
  std::replace(file.begin(), file.end(), '/', '_');
  p.file_name = file + "_boxplot.png";
  return p;
}

}  // namespace

ChannelwiseResult get_channelwise_data_distribution(exec::Executor& ex, const quant::CalibrationRelations&,
                                                    const data::CalibrationData& data, const ChannelwiseOptions& o) {
  check_node_names(ex, o.nodes);
  std::vector<int> activations;  // calibration nodes whose inputs are computed (inside a subgraph: every execution, §1.13)
  for (const auto& name : o.nodes) {
    const int ci = ex.calibration_index(name);
    check(ci >= 0, name + " is not a calibration node: channel-wise distributions exist only for weight and "
                          "activation calibration nodes.");
    const auto& spec = ex.calibrations()[static_cast<size_t>(ci)];
    if (!spec.graph->constant(spec.input_value)) activations.push_back(ci);
  }
  ChannelwiseResult result;
  const size_t sample = single_sample(data, o.selection);
  result.sample = data.sample_names()[sample];
  std::vector<Tensor> observed;
  if (!activations.empty())
    observed = observe_calibration_inputs(ex, data.sample(sample), quantized_config(ex, o.config), activations);
  size_t next_activation = 0;

  for (size_t k = 0; k < o.nodes.size(); ++k) {
    const auto& spec = ex.calibrations()[static_cast<size_t>(ex.calibration_index(o.nodes[k]))];
    const Tensor* constant = spec.graph->constant(spec.input_value);
    const bool weight = constant && spec.kind == quant::TensorKind::Weight;
    const Tensor values = constant ? (weight ? weight_view(*spec.graph, spec, constant->to_float()) : constant->to_float())
                                   : observed[next_activation++];
    if (values.defined()) result.plots.push_back(box_plot(spec, weight, values, o));
    else result.not_run.push_back(spec.node_name);
    if (o.progress && !o.progress(k + 1, o.nodes.size())) {
      result.cancelled = true;
      break;
    }
  }
  return result;
}

}  // namespace ptq::analysis
