#include "analysis/channelwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;
using test::fq;

namespace {

std::vector<float> sorted(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// x [1,4,1,1] -> x_HzCalibration -> ConvTranspose_1(x_cal, wt_cal, group 2) -> t [1,2,1,2]
//   -> t_HzCalibration -> Conv_2(t_cal, wc_cal) -> c [1,3,1,1]
// wt [4,1,1,2] (C_in 4, C_out/g 1): per output channel along axis 1 (2 thresholds).
// wc [3,2,1,2]: per output channel along axis 0.
ir::Model conv_model() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4, 1, 1});
  std::vector<float> wt(8), wc(12);
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 2; ++k) wt[static_cast<size_t>(r * 2 + k)] = static_cast<float>(r * 10 + k);  // row r: {10r, 10r+1}
  std::iota(wc.begin(), wc.end(), 1.0f);
  b.initializer("wt", Tensor::from_floats({4, 1, 1, 2}, wt));
  b.initializer("wc", Tensor::from_floats({3, 2, 1, 2}, wc));
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.calibration("wt", {attr_floats("thresholds", {11.0f, 31.0f}), attr_int("axis", 1), attr_int("group", 2)});
  b.node("ConvTranspose_1", "ConvTranspose", {"x_cal", "wt_cal"}, {"t"}, {attr_int("group", 2)});
  b.calibration("t", {attr_floats("thresholds", {4.0f})});
  b.calibration("wc", {attr_floats("thresholds", {4.0f, 8.0f, 12.0f}), attr_int("axis", 0)});
  b.node("Conv_2", "Conv", {"t_cal", "wc_cal"}, {"c"});
  b.output("c");
  return b.model();
}

// conv_model with one sample.
struct ConvRun {
  exec::Executor ex{conv_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(), {{Tensor::from_floats({1, 4, 1, 1}, {0.1f, 0.2f, 0.3f, 0.4f})}}};
  analysis::ChannelwiseResult run(const analysis::ChannelwiseOptions& o) {
    return analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  }
};

// x [1,2,2] -> x_HzCalibration -> Relu_1 -> r -> r_HzCalibration -> Add_2(r_cal, x)
ir::Model relu_model() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2, 2});
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.calibration("r", {attr_floats("thresholds", {1.0f})});
  b.node("Add_2", "Add", {"r_cal", "x"}, {"y"});
  b.output("y");
  return b.model();
}

}  // namespace

TEST(Channelwise, PercentileIsNumpyLinear) {
  EXPECT_DOUBLE_EQ(analysis::percentile_linear({1, 2, 3, 4}, 25), 1.75);
  EXPECT_DOUBLE_EQ(analysis::percentile_linear({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(analysis::percentile_linear({1, 2, 3, 4}, 75), 3.25);
  EXPECT_DOUBLE_EQ(analysis::percentile_linear({7}, 25), 7.0);
  // numpy.percentile(np.float32([-0.419, -6.805, 4.692, -7.727, -2.175, 0.335]), [25, 50, 75]): the
  // neighbour difference is taken in float32 (a float64 difference gives -5.6474998593330383 for q1).
  const auto s = sorted({-0.419f, -6.805f, 4.692f, -7.727f, -2.175f, 0.335f});
  EXPECT_EQ(analysis::percentile_linear(s, 25), -5.6474997997283936);
  EXPECT_EQ(analysis::percentile_linear(s, 50), -1.2969999611377716);
  EXPECT_EQ(analysis::percentile_linear(s, 75), 0.14650000631809235);
}

TEST(Channelwise, BoxStatsLikeMatplotlib) {
  auto s = analysis::box_stats({100, 3, 1, 4, 2});
  EXPECT_EQ(s.count, 5);
  EXPECT_FLOAT_EQ(s.mean, 22.0f);
  EXPECT_DOUBLE_EQ(s.q1, 2.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.q3, 4.0);
  // IQR 2: fences [-1, 7]; whiskers at the furthest data inside them.
  EXPECT_DOUBLE_EQ(s.whisker_low, 1.0);
  EXPECT_DOUBLE_EQ(s.whisker_high, 4.0);
  EXPECT_EQ(s.outlier_count, 1);
  EXPECT_EQ(s.outliers, (std::vector<float>{100}));

  s = analysis::box_stats({-0.419f, -6.805f, 4.692f, -7.727f, -2.175f, 0.335f});
  EXPECT_FLOAT_EQ(s.mean, -2.01650023f);  // numpy.mean of the float32 data
  EXPECT_DOUBLE_EQ(s.whisker_low, static_cast<double>(-7.727f));
  EXPECT_DOUBLE_EQ(s.whisker_high, static_cast<double>(4.692f));
  EXPECT_EQ(s.outlier_count, 0);

  // whis = 0: the fences are the quartiles and no data lies on them -> whiskers clamp to the box.
  s = analysis::box_stats({1, 2, 3, 4}, 0.0);
  EXPECT_DOUBLE_EQ(s.whisker_low, 1.75);
  EXPECT_DOUBLE_EQ(s.whisker_high, 3.25);
  EXPECT_EQ(s.outliers, (std::vector<float>{1, 4}));

  // NaN poisons every statistic (numpy percentile); empty channel: NaN, count 0.
  s = analysis::box_stats({1, NAN, 3});
  EXPECT_TRUE(std::isnan(s.median) && std::isnan(s.mean) && std::isnan(s.whisker_high));
  s = analysis::box_stats({});
  EXPECT_EQ(s.count, 0);
  EXPECT_TRUE(std::isnan(s.q1));
}

TEST(Channelwise, OutliersAreAnEvenlySpacedCappedSample) {
  // 1000 zeros: IQR 0, so the 50 values 1..50 are all outliers.
  std::vector<float> v(1000, 0.0f);
  for (int i = 50; i >= 1; --i) v.push_back(static_cast<float>(i));
  const auto s = analysis::box_stats(v, 1.5, 5);
  EXPECT_EQ(s.outlier_count, 50);
  // Sorted indices round(k · 49/4) = 0, 12, 25 (24.5 rounds up), 37, 49.
  EXPECT_EQ(s.outliers, (std::vector<float>{1, 13, 26, 38, 50}));
}

TEST(Channelwise, WeightChannelsUseTheNodeAxisAndTheRegroupedView) {
  ConvRun f;
  analysis::ChannelwiseOptions o;
  o.nodes = {"wt_HzCalibration", "wc_HzCalibration"};
  auto r = f.run(o);
  ASSERT_EQ(r.plots.size(), 2u);
  // ConvTranspose [4,1,1,2], group 2 -> viewed as [2,2,1,2]; output channel 0 holds input channels 0-1
  // (rows {0,1}, {10,11}), output channel 1 input channels 2-3 ({20,21}, {30,31}).
  const auto& t = r.plots[0];
  EXPECT_EQ(t.kind, "weight");
  EXPECT_EQ(t.shape, (Shape{2, 2, 1, 2}));
  EXPECT_EQ(t.axis, 1);
  ASSERT_EQ(t.channels.size(), 2u);
  EXPECT_DOUBLE_EQ(t.channels[0].q1, 0.75);  // {0, 1, 10, 11}
  EXPECT_DOUBLE_EQ(t.channels[0].median, 5.5);
  EXPECT_DOUBLE_EQ(t.channels[0].q3, 10.25);
  EXPECT_DOUBLE_EQ(t.channels[1].median, 25.5);  // {20, 21, 30, 31}
  EXPECT_FLOAT_EQ(t.channels[1].mean, 25.5f);
  EXPECT_EQ(t.figure_width, 1);  // 2 channels: 2 // 2
  EXPECT_EQ(t.file_name, "wt_HzCalibration_boxplot.png");
  // Conv [3,2,1,2] along axis 0: channel c = {4c+1 .. 4c+4}.
  const auto& c = r.plots[1];
  ASSERT_EQ(c.channels.size(), 3u);
  EXPECT_DOUBLE_EQ(c.channels[2].median, 10.5);
  EXPECT_DOUBLE_EQ(c.channels[2].whisker_low, 9.0);
  EXPECT_DOUBLE_EQ(c.channels[2].whisker_high, 12.0);
  EXPECT_EQ(c.figure_width, 1);

  // An explicit axis applies to the same view: axis 0 of [2,2,1,2] = {0,1,20,21}, {10,11,30,31}.
  o.has_axis = true;
  o.axis = 0;
  o.nodes = {"wt_HzCalibration"};
  r = f.run(o);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[0].median, 10.5);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[1].median, 20.5);
  o.axis = -1;  // the last axis: kw, 2 channels {0,10,20,30}, {1,11,21,31}
  r = f.run(o);
  EXPECT_EQ(r.plots[0].axis, 3);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[1].median, 16.0);
  o.axis = 4;
  test::expect_error([&] { f.run(o); },
                     "axis 4 is out of range for 'wt_HzCalibration' with data shape [2, 2, 1, 2]");
}

TEST(Channelwise, ActivationsComeFromTheCalibratedModel) {
  exec::Executor ex(relu_model());
  quant::CalibrationRelations rel(ex.graph());
  const std::vector<float> x0 = {0.5f, 0.5f, 0.5f, 0.5f}, x1 = {0.333f, -0.2f, 0.014f, 1.5f};
  test::SampleSet samples(ex.graph(), {{Tensor::from_floats({1, 2, 2}, x0)}, {Tensor::from_floats({1, 2, 2}, x1)}});
  analysis::ChannelwiseOptions o;
  o.nodes = {"r_HzCalibration"};
  std::vector<size_t> calls;
  o.progress = [&](size_t done, size_t) {
    calls.push_back(done);
    return true;
  };
  const auto r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  EXPECT_EQ(r.sample, "1.npy");
  ASSERT_EQ(r.plots.size(), 1u);
  const auto& p = r.plots[0];
  EXPECT_EQ(p.kind, "activation");
  EXPECT_EQ(p.axis, 1);
  ASSERT_EQ(p.channels.size(), 2u);
  // r = relu(fq(x)): channel 0 = {0.33, 0}, channel 1 = {0.01, 1.27} (1.5 clips at 127 steps).
  EXPECT_DOUBLE_EQ(p.channels[0].median, (static_cast<double>(fq(0.333f, 1.27f)) + 0.0) / 2.0);
  EXPECT_DOUBLE_EQ(p.channels[1].whisker_high, static_cast<double>(fq(1.5f, 1.27f)));
  EXPECT_DOUBLE_EQ(p.channels[1].whisker_low, static_cast<double>(fq(0.014f, 1.27f)));
  EXPECT_EQ(calls, (std::vector<size_t>{1}));

  o.nodes = {"Relu_1"};
  test::expect_error([&] { analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o); },
                     "Relu_1 is not a calibration node: channel-wise distributions exist only for weight and activation "
                     "calibration nodes.");
}

// Activations without the default channel axis 1: a vector's channels lie along axis 0, a scalar is one
// channel (runall's node list may hold such nodes); an axis given explicitly must still exist.
TEST(Channelwise, VectorsAndScalarsWithoutAnAxisGiven) {
  test::GraphBuilder b;
  b.input("v", DType::Float, {3});
  b.calibration("v", {attr_floats("thresholds", {1.27f})});
  b.node("ReduceMax_1", "ReduceMax", {"v_cal"}, {"m"}, {attr_int("keepdims", 0)});
  b.calibration("m", {attr_floats("thresholds", {1.27f})});
  b.output("m_cal");
  exec::Executor ex(b.model());
  quant::CalibrationRelations rel(ex.graph());
  test::SampleSet samples(ex.graph(), {{Tensor::from_floats({3}, {0.5f, -0.25f, 1.0f})}});
  analysis::ChannelwiseOptions o;
  o.nodes = {"v_HzCalibration", "m_HzCalibration"};
  const auto r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  ASSERT_EQ(r.plots.size(), 2u);
  EXPECT_EQ(r.plots[0].axis, 0);
  EXPECT_EQ(r.plots[0].channels.size(), 3u);
  EXPECT_EQ(r.plots[1].shape, Shape({}));
  ASSERT_EQ(r.plots[1].channels.size(), 1u);
  EXPECT_NEAR(r.plots[1].channels[0].median, 1.0, 1e-6);
  o.axis = 1;
  o.has_axis = true;
  test::expect_error([&] { analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o); },
                     "axis 1 is out of range for 'v_HzCalibration' with data shape [3]");
}

TEST(Channelwise, ChannelHistogramsOnlyOnRequest) {
  ConvRun f;
  analysis::ChannelwiseOptions o;
  o.nodes = {"wc_HzCalibration", "wt_HzCalibration"};
  auto r = f.run(o);
  EXPECT_TRUE(r.plots[0].histograms.empty() && r.plots[1].histograms.empty());

  o.channels = {1};
  o.bins = 4;
  r = f.run(o);
  // wc channel 1 = {5, 6, 7, 8}: edges linspace(5, 8, 5) = 5, 5.75, 6.5, 7.25, 8; one value per bin
  // (8 in the closed last bin). Per-channel thresholds {4, 8, 12} on the node's own axis 0 -> 8.
  ASSERT_EQ(r.plots[0].histograms.size(), 1u);
  const auto& c = r.plots[0].histograms[0];
  EXPECT_EQ(c.channel, 1);
  EXPECT_EQ(c.count, 4);
  EXPECT_EQ(c.histogram.label, "channel 2");
  EXPECT_EQ(c.histogram.color, "#99ffbb");
  EXPECT_EQ(c.histogram.edges, (std::vector<float>{5.0f, 5.75f, 6.5f, 7.25f, 8.0f}));
  EXPECT_EQ(c.histogram.counts, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(c.histogram.zeros_excluded, 0);
  EXPECT_TRUE(c.has_range);
  EXPECT_EQ(c.min, 5.0f);
  EXPECT_EQ(c.max, 8.0f);
  EXPECT_EQ(c.max_abs, 8.0f);
  EXPECT_TRUE(c.has_threshold);
  EXPECT_EQ(c.threshold, 8.0f);
  // wt viewed as [2, 2, 1, 2] along axis 1: channel 1 = {20, 21, 30, 31}, thresholds {11, 31} -> 31.
  // Edges 20, 22.75, 25.5, 28.25, 31: counts {2, 0, 0, 2}.
  const auto& t = r.plots[1].histograms.at(0);
  EXPECT_EQ(t.histogram.counts, (std::vector<int64_t>{2, 0, 0, 2}));
  EXPECT_EQ(t.threshold, 31.0f);

  // Channel 0 of wt = {0, 1, 10, 11}: the zero is left out of the counts (§6.2) but sets min;
  // edges 1, 6, 11 -> {1}, {10, 11}.
  o.channels = {0, 0};
  o.bins = 2;
  o.nodes = {"wt_HzCalibration"};
  r = f.run(o);
  ASSERT_EQ(r.plots[0].histograms.size(), 2u);  // as requested, repeats included
  const auto& z = r.plots[0].histograms[0];
  EXPECT_EQ(z.count, 4);
  EXPECT_EQ(z.histogram.zeros_excluded, 1);
  EXPECT_EQ(z.histogram.edges, (std::vector<float>{1.0f, 6.0f, 11.0f}));
  EXPECT_EQ(z.histogram.counts, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(z.min, 0.0f);
  EXPECT_EQ(z.max, 11.0f);
  EXPECT_EQ(z.threshold, 11.0f);

  // Another axis than the node's: per-channel thresholds do not belong to these channels.
  // Axis 0 of the view: channel 1 = {10, 11, 30, 31}.
  o.has_axis = true;
  o.axis = 0;
  o.channels = {1};
  r = f.run(o);
  EXPECT_FALSE(r.plots[0].histograms[0].has_threshold);
  EXPECT_EQ(r.plots[0].histograms[0].histogram.counts, (std::vector<int64_t>{2, 2}));  // edges 10, 20.5, 31

  o.has_axis = false;
  o.nodes = {"wc_HzCalibration"};
  o.channels = {2, 3};
  test::expect_error([&] { f.run(o); },
                     "options.channels: channel 3 is out of range for 'wc_HzCalibration' (axis 0 of data shape "
                     "[3, 2, 1, 2] has 3 channels)");
}

TEST(Channelwise, ChannelHistogramDefaultBins) {
  ConvRun f;
  analysis::ChannelwiseOptions o;
  o.nodes = {"wc_HzCalibration"};
  o.channels = {2};
  const auto r = f.run(o);
  // wc channel 2 = {9, 10, 11, 12}, 1024 bins of width 3/1024: 10 lies in bin floor(1024/3) = 341
  // (edges 9.99902, 10.00195), 11 in bin floor(2048/3) = 682 (10.99805, 11.00098), 12 in the last.
  const auto& h = r.plots[0].histograms.at(0).histogram;
  ASSERT_EQ(h.edges.size(), 1025u);
  ASSERT_EQ(h.counts.size(), 1024u);
  EXPECT_EQ(h.edges.front(), 9.0f);
  EXPECT_EQ(h.edges.back(), 12.0f);
  std::vector<int64_t> expected(1024, 0);
  expected[0] = expected[341] = expected[682] = expected[1023] = 1;
  EXPECT_EQ(h.counts, expected);
}

TEST(Channelwise, ChannelHistogramOfActivationsAndOddValues) {
  exec::Executor ex(relu_model());
  quant::CalibrationRelations rel(ex.graph());
  test::SampleSet samples(ex.graph(), {{Tensor::from_floats({1, 2, 2}, {0.333f, -0.2f, 0.014f, 1.5f})}});
  analysis::ChannelwiseOptions o;
  o.nodes = {"r_HzCalibration"};
  o.channels = {0};
  const auto r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  // Channel 0 of relu(fq(x)) = {fq(0.333), 0}: one value counted, in (v - 0.5, v + 0.5) (numpy's
  // range for a single value); the per-tensor threshold 1.0 bounds every channel.
  const auto& h = r.plots[0].histograms.at(0);
  const float v = fq(0.333f, 1.27f);
  EXPECT_EQ(h.count, 2);
  EXPECT_EQ(h.histogram.zeros_excluded, 1);
  EXPECT_EQ(h.histogram.edges.front(), v - 0.5f);
  EXPECT_EQ(h.histogram.edges.back(), v + 0.5f);
  EXPECT_EQ(h.histogram.counts[512], 1);  // the middle bin
  EXPECT_EQ(h.min, 0.0f);
  EXPECT_EQ(h.max, v);
  EXPECT_EQ(h.max_abs, v);
  EXPECT_EQ(h.threshold, 1.0f);

  // NaN / inf: left out of the counts (non_finite); NaN skipped by min/max/max_abs, inf kept.
  const Tensor t = Tensor::from_floats({2, 3}, {NAN, 0.0f, 2.0f, INFINITY, -1.0f, 3.0f});
  auto a = analysis::channel_histogram(t, 0, 0, {}, true, 4);
  EXPECT_EQ(a.count, 3);
  EXPECT_EQ(a.histogram.non_finite, 1);
  EXPECT_EQ(a.histogram.zeros_excluded, 1);
  EXPECT_EQ(a.histogram.edges, (std::vector<float>{1.5f, 1.75f, 2.0f, 2.25f, 2.5f}));
  EXPECT_EQ(a.histogram.counts, (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(a.min, 0.0f);
  EXPECT_EQ(a.max, 2.0f);
  EXPECT_FALSE(a.has_threshold);
  a = analysis::channel_histogram(t, 0, 1, {0.5f, 4.0f}, true, 4);
  EXPECT_EQ(a.min, -1.0f);
  EXPECT_EQ(a.max, INFINITY);
  EXPECT_EQ(a.max_abs, INFINITY);
  EXPECT_EQ(a.histogram.counts, (std::vector<int64_t>{1, 0, 0, 1}));  // edges -1, 0, 1, 2, 3
  EXPECT_EQ(a.threshold, 4.0f);
  EXPECT_FALSE(analysis::channel_histogram(t, 0, 1, {0.5f, 4.0f}, false, 4).has_threshold);
  EXPECT_FALSE(analysis::channel_histogram(t, 0, 1, {0.5f, 4.0f, 1.0f}, true, 4).has_threshold);
  // Axis 1: channel 2 = {2, 3}.
  a = analysis::channel_histogram(t, 1, 2, {}, false, 1);
  EXPECT_EQ(a.histogram.counts, (std::vector<int64_t>{2}));
  // All NaN: no range.
  EXPECT_FALSE(analysis::channel_histogram(Tensor::from_floats({1, 2}, {NAN, NAN}), 0, 0, {}, true, 4).has_range);
}
