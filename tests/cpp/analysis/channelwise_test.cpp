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
  exec::Executor ex(conv_model());
  quant::CalibrationRelations rel(ex.graph());
  test::SampleSet samples(ex.graph(), {{Tensor::from_floats({1, 4, 1, 1}, {0.1f, 0.2f, 0.3f, 0.4f})}});
  analysis::ChannelwiseOptions o;
  o.nodes = {"wt_HzCalibration", "wc_HzCalibration"};
  auto r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
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
  r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[0].median, 10.5);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[1].median, 20.5);
  o.axis = -1;  // the last axis: kw, 2 channels {0,10,20,30}, {1,11,21,31}
  r = analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o);
  EXPECT_EQ(r.plots[0].axis, 3);
  EXPECT_DOUBLE_EQ(r.plots[0].channels[1].median, 16.0);
  o.axis = 4;
  test::expect_error([&] { analysis::get_channelwise_data_distribution(ex, rel, samples.data(), o); },
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
