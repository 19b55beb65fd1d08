#include "analysis/distribution.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/metrics.h"
#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;
using test::fq;

namespace {

void expect_histogram(const analysis::Histogram& h, const std::vector<float>& edges, const std::vector<int64_t>& counts) {
  ASSERT_EQ(h.edges.size(), edges.size());
  for (size_t i = 0; i < edges.size(); ++i) EXPECT_FLOAT_EQ(h.edges[i], edges[i]) << i;
  EXPECT_EQ(h.counts, counts);
}

// x -> x_HzCalibration -> /blk/MatMul(x_cal, w_cal) -> y -> Relu_2 -> r -> r_HzCalibration -> Add_3(r_cal, x)
// w [2, 2] per-channel along axis 0, r per-channel along axis 1 (thresholds 0.6 / 0.8).
const std::vector<float> kW = {0.5f, 0.25f, 1.0f, 0.3f};
const std::vector<float> kX = {0.7f, 0.3f};  // the last sample

ir::Model model() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2});
  b.initializer("w", Tensor::from_floats({2, 2}, kW));
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.calibration("w", {attr_floats("thresholds", {0.5f, 1.0f}), attr_int("axis", 0)});
  b.node("/blk/MatMul", "MatMul", {"x_cal", "w_cal"}, {"/blk/MatMul_output_0"});
  b.node("Relu_2", "Relu", {"/blk/MatMul_output_0"}, {"r"});
  b.calibration("r", {attr_floats("thresholds", {0.6f, 0.8f}), attr_int("axis", 1)});
  b.node("Add_3", "Add", {"r_cal", "x"}, {"out"});
  b.output("out");
  return b.model();
}

struct Fixture {
  exec::Executor ex{model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(), {{Tensor::from_floats({1, 2}, {-0.1f, 0.2f})}, {Tensor::from_floats({1, 2}, kX)}}};
};

// Weights after the kernel's fake quantization, by hand: row 0 step 0.5/127, row 1 step 1/127.
// 0.25 / (0.5/127) = 63.5 rounds half to even to 64.
std::vector<float> quantized_w() { return {fq(kW[0], 0.5f), fq(kW[1], 0.5f), fq(kW[2], 1.0f), fq(kW[3], 1.0f)}; }

// y = x · w ([1,2] x [2,2]).
std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w) {
  return {x[0] * w[0] + x[1] * w[2], x[0] * w[1] + x[1] * w[3]};
}

}  // namespace

TEST(Distribution, HistogramLikeNumpy) {
  // Zeros excluded; half-open bins, the last one closed.
  const std::vector<float> a = {1, 2, 2, 3, 0};
  auto h = analysis::make_histogram(a.data(), 5, true, 4);
  expect_histogram(h, {1, 1.5f, 2, 2.5f, 3}, {1, 0, 2, 1});
  EXPECT_EQ(h.zeros_excluded, 1);
  // Zeros kept (the error histogram).
  const std::vector<float> b = {-1, -0.5f, 0, 0.25f, 0.5f, 1};
  expect_histogram(analysis::make_histogram(b.data(), 6, false, 4), {-1, -0.5f, 0, 0.5f, 1}, {1, 1, 2, 2});
  // A single value: range (v - 0.5, v + 0.5).
  const std::vector<float> c = {5, 5};
  expect_histogram(analysis::make_histogram(c.data(), 2, true, 4), {4.5f, 4.75f, 5, 5.25f, 5.5f}, {0, 0, 2, 0});
  // Nothing to count: range (0, 1).
  const std::vector<float> d = {0, 0};
  expect_histogram(analysis::make_histogram(d.data(), 2, true, 2), {0, 0.5f, 1}, {0, 0});
  // Non-finite values are left out (matplotlib refuses an infinite range).
  const std::vector<float> e = {INFINITY, 1, NAN, 2};
  h = analysis::make_histogram(e.data(), 4, true, 2);
  expect_histogram(h, {1, 1.5f, 2}, {1, 1});
  EXPECT_EQ(h.non_finite, 2);
  // Float32 edges: numpy.histogram(np.float32([-0.49, -0.59, -0.26, 0.6, 0.73]), 4) = [2, 1, 0, 2]; the
  // second edge float32(-0.59 + 0.33) equals -0.26f, so -0.26 opens bin 1 (float64 edges would put it
  // in bin 0: [3, 0, 0, 2]).
  const std::vector<float> f = {-0.49f, -0.59f, -0.26f, 0.6f, 0.73f};
  h = analysis::make_histogram(f.data(), 5, true, 4);
  EXPECT_EQ(h.counts, (std::vector<int64_t>{2, 1, 0, 2}));
  EXPECT_EQ(h.edges[1], -0.26f);
  // Data on the edges: numpy gives [1, 1, 1, 0, 0, 1] for [0.1, 0.2, 0.3, 0.7] in 6 bins.
  const std::vector<float> g = {0.1f, 0.2f, 0.3f, 0.7f};
  EXPECT_EQ(analysis::make_histogram(g.data(), 4, true, 6).counts, (std::vector<int64_t>{1, 1, 1, 0, 0, 1}));
}

TEST(Distribution, NumpyFloat32Str) {
  EXPECT_EQ(analysis::numpy_float32_str(0.99812f), "0.99812");
  EXPECT_EQ(analysis::numpy_float32_str(1e-5f), "1e-05");
  EXPECT_EQ(analysis::numpy_float32_str(1.5e-5f), "1.5e-05");
  EXPECT_EQ(analysis::numpy_float32_str(1e-4f), "1e-04");  // float32(1e-4) is just below 1e-4
  EXPECT_EQ(analysis::numpy_float32_str(123.0f), "123.0");
  EXPECT_EQ(analysis::numpy_float32_str(1e10f), "10000000000.0");
  EXPECT_EQ(analysis::numpy_float32_str(9.9e15f), "9900000000000000.0");
  EXPECT_EQ(analysis::numpy_float32_str(1e16f), "1e+16");
  EXPECT_EQ(analysis::numpy_float32_str(-0.5f), "-0.5");
  EXPECT_EQ(analysis::numpy_float32_str(1.0f), "1.0");
  EXPECT_EQ(analysis::numpy_float32_str(0.0f), "0.0");
  EXPECT_EQ(analysis::numpy_float32_str(NAN), "nan");
}

TEST(Distribution, ActivationWeightAndNodeOutputBranches) {
  Fixture f;
  analysis::DistributionOptions o;
  o.nodes = {"r_HzCalibration", "w_HzCalibration", "/blk/MatMul", "x_HzCalibration"};
  const auto r = analysis::plot_distribution(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.sample, "1.npy");
  ASSERT_EQ(r.plots.size(), 4u);
  const std::vector<float> xq = {fq(kX[0], 1.27f), fq(kX[1], 1.27f)};
  const std::vector<float> y_float = matmul(kX, kW), y_cal = matmul(xq, quantized_w());

  // Activation: r_HzCalibration's input in the calibrated model = relu(xq · wq) (both positive).
  const auto& act = r.plots[0];
  EXPECT_EQ(act.kind, "activation");
  EXPECT_EQ(act.tensor, "r");
  EXPECT_EQ(act.title, "r_HzCalibration activation distribution");
  EXPECT_EQ(act.file_name, "activation_r_HzCalibration.png");
  ASSERT_EQ(act.histograms.size(), 1u);
  EXPECT_EQ(act.histograms[0].label, "Input data distribution");
  EXPECT_EQ(act.histograms[0].color, "#99ffbb");
  EXPECT_NEAR(act.histograms[0].edges.front(), y_cal[1], 1e-6);
  EXPECT_NEAR(act.histograms[0].edges.back(), y_cal[0], 1e-6);
  EXPECT_EQ(act.histograms[0].counts.size(), 1024u);
  EXPECT_EQ(act.histograms[0].counts.front(), 1);
  EXPECT_EQ(act.histograms[0].counts.back(), 1);
  EXPECT_TRUE(act.has_threshold);
  EXPECT_FLOAT_EQ(act.threshold, 0.8f);  // max of the thresholds
  EXPECT_NEAR(act.max_abs, y_cal[0], 1e-6);
  EXPECT_FALSE(act.has_cosine);

  // Weight: before = w, after = our kernel's fake quantization, cosine over all elements.
  const auto& wp = r.plots[1];
  EXPECT_EQ(wp.kind, "weight");
  EXPECT_EQ(wp.tensor, "w");
  EXPECT_EQ(wp.file_name, "weight_w_HzCalibration.png");
  ASSERT_EQ(wp.histograms.size(), 2u);
  EXPECT_EQ(wp.histograms[0].label, "Before calibration");
  EXPECT_EQ(wp.histograms[1].label, "After calibration");
  EXPECT_EQ(wp.histograms[1].color, "#FA8072");
  EXPECT_FLOAT_EQ(wp.histograms[0].edges.front(), 0.25f);
  EXPECT_FLOAT_EQ(wp.histograms[1].edges.front(), 64.0f * 0.5f / 127.0f);
  EXPECT_FLOAT_EQ(wp.histograms[1].edges.back(), 1.0f);
  const auto wq = quantized_w();
  const float cos_w = analysis::compute_metric(analysis::Metric::Cosine, kW.data(), wq.data(), 4);
  EXPECT_FLOAT_EQ(wp.cosine, cos_w);
  EXPECT_EQ(wp.title, "w_HzCalibration weight distribution\ncosine-similarity:" + analysis::numpy_float32_str(wp.cosine));
  EXPECT_FLOAT_EQ(wp.max_abs, 1.0f);
  EXPECT_FALSE(wp.has_threshold);

  // Node output: float vs calibrated, plus the error histogram (zeros kept); '/' -> '_' in the file name.
  const auto& np = r.plots[2];
  EXPECT_EQ(np.kind, "node_output");
  EXPECT_EQ(np.tensor, "/blk/MatMul_output_0");
  EXPECT_EQ(np.file_name, "node_output_:_blk_MatMul_output_0_of__blk_MatMul.png");
  EXPECT_EQ(np.title.substr(0, np.title.find('\n')), "/blk/MatMul output:/blk/MatMul_output_0 distribution");
  ASSERT_EQ(np.histograms.size(), 3u);
  EXPECT_EQ(np.histograms[2].label, "Quantization error distribution");
  EXPECT_EQ(np.histograms[2].color, "#33A1C9");
  EXPECT_NEAR(np.histograms[0].edges.front(), y_float[1], 1e-6);
  EXPECT_NEAR(np.histograms[1].edges.back(), y_cal[0], 1e-6);
  const float e0 = y_float[0] - y_cal[0], e1 = y_float[1] - y_cal[1];
  EXPECT_NEAR(np.histograms[2].edges.front(), std::min(e0, e1), 1e-6);
  EXPECT_NEAR(np.histograms[2].edges.back(), std::max(e0, e1), 1e-6);
  EXPECT_NEAR(np.cosine, analysis::compute_metric(analysis::Metric::Cosine, y_float.data(), y_cal.data(), 2), 1e-6);
  EXPECT_NEAR(np.max_abs, y_float[0], 1e-6);

  // x_HzCalibration's input is the graph input itself.
  EXPECT_EQ(r.plots[3].kind, "activation");
  EXPECT_FLOAT_EQ(r.plots[3].histograms[0].edges.front(), kX[1]);
  EXPECT_FLOAT_EQ(r.plots[3].histograms[0].edges.back(), kX[0]);
  EXPECT_FLOAT_EQ(r.plots[3].threshold, 1.27f);
}

TEST(Distribution, NamesAreValidatedAndProgressCancels) {
  Fixture f;
  analysis::DistributionOptions o;
  o.nodes = {"Relu_2", "nope"};
  test::expect_error([&] { analysis::plot_distribution(f.ex, f.rel, f.samples.data(), o); }, "nope does not exist in the model.");
  o.nodes = {"Relu_2", "Add_3"};
  o.progress = [](size_t, size_t) { return false; };
  const auto r = analysis::plot_distribution(f.ex, f.rel, f.samples.data(), o);
  EXPECT_TRUE(r.cancelled);
  ASSERT_EQ(r.plots.size(), 1u);
  EXPECT_EQ(r.plots[0].file_name, "node_output_:r_of_Relu_2.png");
}
