#include "analysis/accumulated_error.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/metrics.h"
#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using analysis::NodeArgument;
using test::attr_floats;
using test::attr_string;
using test::fq;

namespace {

// x -> x_HzCalibration -> Relu_1 -> r -> r_HzCalibration (int16) -> Mul_2(r_cal, w_cal) -> y1
//                                    \-> Add_3(r, x) -> y2
//      x_cal -> Greater_4(x_cal, 0) -> gt (bool)
// Normal nodes (x axis): Relu_1 [r], Mul_2 [y1], Add_3 [y2], Greater_4 [gt].
const std::vector<float>& kW = test::relu_mul_add_weights();

// The shared Relu/Mul/Add model (analysis_test_util.h, weights kW) plus a Greater on x_cal.
ir::Model model() {
  test::GraphBuilder b;
  test::add_relu_mul_add(b);
  b.initializer("zero", Tensor::from_floats({1}, {0.0f}));
  b.node("Greater_4", "Greater", {"x_cal", "zero"}, {"gt"});
  b.output("gt");
  return b.model();
}

const std::vector<std::vector<float>> kSamples = {{0.5f, 0.1f, -0.2f, 0.9f}, {0.004f, -0.5f, 0.333f, 1.5f}};

struct Fixture {
  exec::Executor ex{model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(), {{Tensor::from_floats({1, 4}, kSamples[0])}, {Tensor::from_floats({1, 4}, kSamples[1])}}};
};

// The four x-axis tensors of the model computed by hand with the given calibration nodes ON.
std::vector<std::vector<float>> by_hand(const std::vector<float>& x, bool qx, bool qw, bool qr) {
  std::vector<float> r(4), y1(4), y2(4), gt(4);
  for (size_t i = 0; i < 4; ++i) {
    const float xin = qx ? fq(x[i], 1.27f) : x[i];
    r[i] = std::max(xin, 0.0f);
    const float rc = qr ? fq(r[i], 2.0f, 16) : r[i];
    y1[i] = rc * (qw ? fq(kW[i], 1.1f) : kW[i]);
    y2[i] = r[i] + x[i];
    gt[i] = xin > 0.0f ? 1.0f : 0.0f;
  }
  return {r, y1, y2, gt};
}

std::vector<float> curve_by_hand(analysis::Metric m, bool qx, bool qw, bool qr, size_t sample = 1) {
  const auto ref = by_hand(kSamples[sample], false, false, false);
  const auto got = by_hand(kSamples[sample], qx, qw, qr);
  std::vector<float> y;
  for (size_t t = 0; t < ref.size(); ++t) y.push_back(analysis::compute_metric(m, ref[t].data(), got[t].data(), 4));
  return y;
}

void expect_curve(const analysis::AccErrorCurve& c, const std::string& name, const std::vector<float>& y) {
  EXPECT_EQ(c.name, name);
  EXPECT_EQ(c.x, (std::vector<std::string>{"r", "y1", "y2", "gt"}));
  ASSERT_EQ(c.y.size(), y.size()) << name;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) EXPECT_TRUE(std::isnan(c.y[i])) << name << " " << i;
    else EXPECT_FLOAT_EQ(c.y[i], y[i]) << name << " " << i;
  }
}

std::vector<std::string> curve_names(const analysis::AccErrorFigure& f) {
  std::vector<std::string> names;
  for (const auto& c : f.curves) names.push_back(c.name);
  return names;
}

}  // namespace

TEST(AccumulatedError, ArgumentErrors) {
  Fixture f;
  analysis::AccErrorOptions o;
  auto run = [&] { analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o); };
  test::expect_error(run, "'quantize_node' and 'non_quantize_node' are both NONE.");
  o.quantize_node = NodeArgument::list({});
  o.non_quantize_node = NodeArgument::nested({{}});  // flattens to nothing as well
  test::expect_error(run, "'quantize_node' and 'non_quantize_node' are both NONE.");
  o.quantize_node = NodeArgument::list({"Mul_2"});
  o.non_quantize_node = NodeArgument::nested({{"Relu_1"}, {"Add_3", "activation"}});
  test::expect_error(run, "Cannot set 'non_quantize_node' to 'weight' or 'activation'.");
  o.non_quantize_node = NodeArgument::name("weight");
  test::expect_error(run, "Cannot set 'non_quantize_node' to 'weight' or 'activation'.");
  o.non_quantize_node = NodeArgument::none();
  o.metric = "cosine";
  test::expect_error(run, "metrics contain unavailable method: cosine");
  // None flattens to [None] (one element): None with [] is accepted and draws nothing.
  o.metric = "mse";
  o.quantize_node = NodeArgument::none();
  o.non_quantize_node = NodeArgument::list({});
  EXPECT_TRUE(analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o).figures.empty());
}

TEST(AccumulatedError, WeightAndActivationSeparately) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.quantize_node = NodeArgument::list({"activation", "weight"});
  const auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.sample, "1.npy");  // the lexicographically last file
  ASSERT_EQ(r.figures.size(), 1u);
  const auto& fig = r.figures[0];
  EXPECT_EQ(fig.prefix, "weight_activation_quantized_separately");
  EXPECT_EQ(fig.file_name(), "weight_activation_quantized_separately_cosine-similarity.png");
  ASSERT_EQ(fig.curves.size(), 3u);
  const auto m = analysis::Metric::Cosine;
  expect_curve(fig.curves[0], "weight_activation_calibrated", curve_by_hand(m, true, true, true));
  expect_curve(fig.curves[1], "only_activation_calibrated", curve_by_hand(m, true, false, true));
  expect_curve(fig.curves[2], "only_weight_calibrated", curve_by_hand(m, false, true, false));
  // gt: float {1,0,1,1}, calibrated {0,0,1,1} (0.004 rounds to 0): cosine 2 / (sqrt(3)·sqrt(2)).
  EXPECT_NEAR(fig.curves[0].y[3], 2.0 / std::sqrt(6.0), 1e-6);
  EXPECT_EQ(r.messages, (std::vector<std::string>{"Start ploting accumulate error...", "Quantify weight and activation separately!"}));
}

TEST(AccumulatedError, WeightOnlyAndActivationOnly) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.metric = "mse";
  o.quantize_node = NodeArgument::name("weight");
  auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].prefix, "weight_quantized");
  EXPECT_EQ(curve_names(r.figures[0]), (std::vector<std::string>{"weight_activation_calibrated", "only_weight_calibrated"}));
  expect_curve(r.figures[0].curves[1], "only_weight_calibrated", curve_by_hand(analysis::Metric::Mse, false, true, false));
  // gt of the calibrated model: one flipped entry of four -> mse 0.25.
  EXPECT_FLOAT_EQ(r.figures[0].curves[0].y[3], 0.25f);
  EXPECT_EQ(r.messages.back(), "Only quantizing weights without quantizing activation !");

  // Special words mixed with names: only the special-word branch runs for quantize_node.
  o.quantize_node = NodeArgument::list({"Mul_2", "activation"});
  r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].prefix, "activation_quantized");
  EXPECT_EQ(curve_names(r.figures[0]), (std::vector<std::string>{"weight_activation_calibrated", "only_activation_calibrated"}));
  EXPECT_EQ(r.messages.back(), "Only quantizing activation without quantizing weight !");
}

TEST(AccumulatedError, QuantizeNodeLists) {
  Fixture f;
  analysis::AccErrorOptions o;
  const auto m = analysis::Metric::Cosine;
  // Nested: the calibrated model, then the float model with each sub-list's calibration sets ON.
  o.quantize_node = NodeArgument::nested({{"Mul_2"}, {"Relu_1", "Add_3"}});
  auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].prefix, "quantize_node_accumulate_err_of_partial_qmodel");
  ASSERT_EQ(r.figures[0].curves.size(), 3u);
  expect_curve(r.figures[0].curves[0], "default calibrated model", curve_by_hand(m, true, true, true));
  expect_curve(r.figures[0].curves[1], "partial_qmodel_0", curve_by_hand(m, false, true, true));  // Mul_2: r_cal, w_cal
  expect_curve(r.figures[0].curves[2], "partial_qmodel_1", curve_by_hand(m, true, false, false));  // x_cal
  EXPECT_EQ(r.messages.back(), "Only the nodes you set are quantized, and the remaining nodes are not quantized.");

  // Flat: one curve per name, duplicates dropped, first-occurrence order kept; a calibration node's
  // name selects itself.
  o.quantize_node = NodeArgument::list({"Mul_2", "w_HzCalibration", "Mul_2"});
  r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].prefix, "quantize_node_accumulate_err_of_node");
  ASSERT_EQ(r.figures[0].curves.size(), 2u);
  expect_curve(r.figures[0].curves[0], "Mul_2", curve_by_hand(m, false, true, true));
  expect_curve(r.figures[0].curves[1], "w_HzCalibration", curve_by_hand(m, false, true, false));
}

TEST(AccumulatedError, NonQuantizeNodeListsAndBothArguments) {
  Fixture f;
  analysis::AccErrorOptions o;
  const auto m = analysis::Metric::Mre;
  o.metric = "mre";
  o.quantize_node = NodeArgument::list({"Relu_1"});
  o.non_quantize_node = NodeArgument::list({"Mul_2", "Relu_1"});
  auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 2u);
  EXPECT_EQ(r.figures[0].prefix, "quantize_node_accumulate_err_of_node");
  expect_curve(r.figures[0].curves[0], "Relu_1", curve_by_hand(m, true, false, false));
  // Calibrated model with the name's calibration set OFF.
  EXPECT_EQ(r.figures[1].prefix, "non_quantize_node_accumulate_err_of_node");
  ASSERT_EQ(r.figures[1].curves.size(), 2u);
  expect_curve(r.figures[1].curves[0], "Mul_2", curve_by_hand(m, true, false, false));
  expect_curve(r.figures[1].curves[1], "Relu_1", curve_by_hand(m, false, true, true));
  EXPECT_EQ(r.messages.back(), "Do not quantify the nodes you set, and quantify the rest of the nodes.");

  o.quantize_node = NodeArgument::none();
  o.non_quantize_node = NodeArgument::nested({{"Mul_2"}, {"Mul_2", "Relu_1"}});
  r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].prefix, "non_quantize_node_accumulate_err_of_partial_qmodel");
  ASSERT_EQ(r.figures[0].curves.size(), 3u);
  expect_curve(r.figures[0].curves[0], "default calibrated model", curve_by_hand(m, true, true, true));
  expect_curve(r.figures[0].curves[1], "partial_qmodel_0", curve_by_hand(m, true, false, false));
  expect_curve(r.figures[0].curves[2], "partial_qmodel_1", curve_by_hand(m, false, false, false));
}

TEST(AccumulatedError, InfinityIsKeptInPlace) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.metric = "sqnr";
  // An unknown name selects nothing: its model is the float model, sqnr = +inf everywhere.
  o.quantize_node = NodeArgument::list({"nope", "x_HzCalibration"});
  auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.figures.size(), 1u);
  const auto& unknown = r.figures[0].curves[0];
  ASSERT_EQ(unknown.y.size(), 4u);
  for (float v : unknown.y) EXPECT_TRUE(std::isinf(v) && v > 0);
  EXPECT_NE(std::find_if(r.messages.begin(), r.messages.end(), [](const std::string& m) { return m.find("'nope'") == 0; }),
            r.messages.end());
  // Only x quantized: every tensor differs, each point at its own index.
  expect_curve(r.figures[0].curves[1], "x_HzCalibration", curve_by_hand(analysis::Metric::Sqnr, true, false, false));

  // Average mode: +inf points are left out of the running mean (the original deletes them).
  o.average_mode = true;
  o.quantize_node = NodeArgument::list({"w_HzCalibration"});
  r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  const auto plain = curve_by_hand(analysis::Metric::Sqnr, false, true, false);  // only y1 finite
  ASSERT_TRUE(std::isinf(plain[0]) && std::isfinite(plain[1]) && std::isinf(plain[2]) && std::isinf(plain[3]));
  const auto& avg = r.figures[0].curves[0];
  EXPECT_EQ(r.figures[0].file_name(), "average_quantize_node_accumulate_err_of_node_sqnr.png");
  EXPECT_TRUE(std::isinf(avg.y[0]));
  EXPECT_FLOAT_EQ(avg.y[1], plain[1]);
  EXPECT_FLOAT_EQ(avg.y[2], plain[1]);
  EXPECT_FLOAT_EQ(avg.y[3], plain[1]);
}

TEST(AccumulatedError, RunningMean) {
  // The documented example: [1.0, 0.9, 0.9, 0.8] -> [1.0, 0.95, 0.9333…, 0.9].
  const auto m = analysis::running_mean({1.0f, 0.9f, 0.9f, 0.8f});
  ASSERT_EQ(m.size(), 4u);
  EXPECT_FLOAT_EQ(m[0], 1.0f);
  EXPECT_FLOAT_EQ(m[1], 0.95f);
  EXPECT_FLOAT_EQ(m[2], 2.8f / 3.0f);
  EXPECT_FLOAT_EQ(m[3], 0.9f);
  const float inf = INFINITY;
  const auto w = analysis::running_mean({inf, 2.0f, inf, 4.0f, -inf});
  EXPECT_TRUE(std::isinf(w[0]));
  EXPECT_FLOAT_EQ(w[1], 2.0f);
  EXPECT_FLOAT_EQ(w[2], 2.0f);
  EXPECT_FLOAT_EQ(w[3], 3.0f);
  EXPECT_TRUE(std::isinf(w[4]) && w[4] < 0);  // -inf is a value like the original keeps it
  const auto n = analysis::running_mean({1.0f, NAN, 3.0f});
  EXPECT_FLOAT_EQ(n[0], 1.0f);
  EXPECT_TRUE(std::isnan(n[1]) && std::isnan(n[2]));
}

TEST(AccumulatedError, SampleSelectionAndCancel) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.quantize_node = NodeArgument::list({"weight", "activation"});
  o.selection = data::SampleSelection::First;
  std::vector<std::pair<size_t, size_t>> calls;
  o.on_curve = [&](const analysis::AccErrorCurve& curve, size_t done, size_t total) {
    EXPECT_EQ(curve.position, done - 1);
    calls.emplace_back(done, total);
    return done < 2;
  };
  const auto r = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.sample, "0.npy");
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(calls, (std::vector<std::pair<size_t, size_t>>{{1, 3}, {2, 3}}));
  ASSERT_EQ(r.figures.size(), 1u);
  ASSERT_EQ(r.figures[0].curves.size(), 2u);
  expect_curve(r.figures[0].curves[1], "only_activation_calibrated", curve_by_hand(analysis::Metric::Cosine, true, false, true, 0));
}

// A subset of curves (the items of a split sweep) computes exactly those curves of the full run, keeps
// their positions and drops figures left empty; the outline lists the full plan without running.
TEST(AccumulatedError, CurveSubsetEqualsTheFullRunsCurves) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.quantize_node = NodeArgument::list({"weight", "activation"});
  o.non_quantize_node = NodeArgument::list({"Mul_2", "Relu_1"});
  const auto outline = analysis::acc_error_outline(f.ex, f.rel, o);
  ASSERT_EQ(outline.figures.size(), 2u);
  ASSERT_EQ(outline.figures[1].curves.size(), 2u);
  EXPECT_EQ(outline.figures[1].curves[1].name, "Relu_1");
  EXPECT_EQ(outline.figures[1].curves[1].position, 4u);
  EXPECT_TRUE(outline.figures[1].curves[1].y.empty());
  const auto full = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(full.messages, outline.messages);
  o.curves = std::vector<size_t>{2, 4};
  const auto part = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(part.figures.size(), 2u);
  ASSERT_EQ(part.figures[0].curves.size(), 1u);
  ASSERT_EQ(part.figures[1].curves.size(), 1u);
  const analysis::AccErrorCurve& only_weight = part.figures[0].curves[0];
  EXPECT_EQ(only_weight.position, 2u);
  expect_curve(only_weight, "only_weight_calibrated", full.figures[0].curves[2].y);
  expect_curve(part.figures[1].curves[0], "Relu_1", full.figures[1].curves[1].y);
  o.curves = std::vector<size_t>{3};
  const auto second_only = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(second_only.figures.size(), 1u);
  EXPECT_EQ(second_only.figures[0].prefix, "non_quantize_node_accumulate_err_of_node");
  o.curves = std::vector<size_t>{5};
  test::expect_error([&] { analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o); },
                     "acc_error: curve position 5 is out of range (5 curves)");
}
