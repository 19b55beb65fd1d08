#include "analysis/sensitivity_analysis.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/selection.h"
#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;
using test::attr_string;

namespace {

// test::relu_mul_add_model() (analysis_test_util.h).
ir::Model model() { return test::relu_mul_add_model(); }

struct Fixture {
  exec::Executor ex{model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})},
                           {Tensor::from_floats({1, 4}, {-1.0f, 0.7f, 0.01f, 0.6f})},
                           {Tensor::from_floats({1, 4}, {0.2f, 0.2f, -0.4f, 1.3f})}}};

  // A configuration spelled out by calibration node name: ON set (others OFF) and qtype overrides.
  exec::QuantConfig config(const std::vector<std::string>& on, const std::vector<std::string>& int16 = {}) const {
    exec::QuantConfig c = ex.uniform_config(false);
    for (const auto& n : on) c.on[static_cast<size_t>(ex.calibration_index(n))] = 1;
    for (const auto& n : int16) c.qtype[static_cast<size_t>(ex.calibration_index(n))] = "int16";
    return c;
  }

  // Brute force, full runs without any cache: §3.3 aggregation of cosine over outputs and samples.
  float cosine(const exec::QuantConfig& c, const std::vector<size_t>& sample_ids) {
    std::vector<std::vector<float>> per_output(2);
    for (size_t s : sample_ids) {
      const auto ref = ex.outputs(ex.run(samples.data().sample(s), ex.uniform_config(false)));
      const auto got = ex.outputs(ex.run(samples.data().sample(s), c));
      for (size_t o = 0; o < 2; ++o)
        per_output[o].push_back(analysis::compute_metric(analysis::Metric::Cosine, ref[o].data<float>(), got[o].data<float>(), 4));
    }
    return analysis::aggregate(per_output);
  }
};

const std::vector<std::string> kAll = {"x_HzCalibration", "w_HzCalibration", "r_HzCalibration"};

}  // namespace

TEST(SensitivityAnalysis, CumulativeAndPerNodeCurves) {
  Fixture f;
  analysis::SensitivityAnalysisOptions o;
  o.sensitive_nodes = {"Mul_2", "Relu_1"};
  o.data_num = 2;
  const auto r = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  EXPECT_FALSE(r.ranked);
  EXPECT_EQ(r.samples, (std::vector<std::string>{"1.npy", "2.npy"}));
  EXPECT_EQ(r.x, (std::vector<std::string>{"none", "Mul_2", "Relu_1"}));
  const std::vector<size_t> s = {1, 2};
  ASSERT_EQ(r.cumulative.size(), 3u);
  EXPECT_EQ(r.cumulative[0], f.cosine(f.config(kAll), s));                  // the calibrated model
  EXPECT_EQ(r.cumulative[1], f.cosine(f.config({"x_HzCalibration"}), s));   // Mul_2's r, w taken out
  EXPECT_EQ(r.cumulative[2], f.cosine(f.config({}), s));                    // then Relu_1's x as well
  EXPECT_NEAR(r.cumulative[2], 1.0f, 1e-6);
  ASSERT_EQ(r.per_node.size(), 2u);
  EXPECT_EQ(r.per_node[0], f.cosine(f.config({"w_HzCalibration", "r_HzCalibration"}), s));
  EXPECT_EQ(r.per_node[1], f.cosine(f.config({"x_HzCalibration"}), s));
  EXPECT_EQ(r.messages, (std::vector<std::string>{"Start analyzing node sensitivity..."}));
}

TEST(SensitivityAnalysis, Int16InsteadOfSwitchingOff) {
  Fixture f;
  analysis::SensitivityAnalysisOptions o;
  o.sensitive_nodes = {"Mul_2"};
  o.qtype = "int16";
  const auto r = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.samples, (std::vector<std::string>{"2.npy"}));
  ASSERT_EQ(r.cumulative.size(), 2u);
  // Mul_2's r (already int16) and w become int16; x stays int8.
  EXPECT_EQ(r.cumulative[1], f.cosine(f.config(kAll, {"w_HzCalibration", "r_HzCalibration"}), {2}));
  // The configuration behind it: switches as stored, qtype overridden (float32 switches off instead).
  const int w = f.ex.calibration_index("w_HzCalibration");
  exec::QuantConfig c = analysis::blacklist_config(f.ex.stored_config(), {w}, "int16");
  EXPECT_EQ(c.on, f.ex.stored_config().on);
  EXPECT_EQ(c.qtype[static_cast<size_t>(w)], "int16");
  c = analysis::blacklist_config(f.ex.stored_config(), {w}, "float32");
  EXPECT_EQ(c.on[static_cast<size_t>(w)], 0);
  EXPECT_EQ(c.qtype[static_cast<size_t>(w)], "");
  o.qtype = "int7x";
  EXPECT_THROW(analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o), Error);
}

TEST(SensitivityAnalysis, RanksNodesWhenNoneAreGiven) {
  Fixture f;
  analysis::SensitivityAnalysisOptions o;
  o.data_num = 0;  // all samples
  o.pick_threshold = 2.0;
  std::vector<std::pair<size_t, size_t>> calls;
  o.progress = [&](size_t done, size_t total) {
    calls.emplace_back(done, total);
    return true;
  };
  const auto r = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  EXPECT_TRUE(r.ranked);
  ASSERT_EQ(r.ranking.size(), 3u);
  // Every node picked, most sensitive (lowest cosine) first, each per-node point = its ranking value.
  ASSERT_EQ(r.x.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.x[i + 1], r.ranking[i].item);
    EXPECT_EQ(r.per_node[i], r.ranking[i].values[0]);
    if (i) {
      EXPECT_LE(r.ranking[i - 1].values[0], r.ranking[i].values[0]);
    }
  }
  EXPECT_EQ(r.messages, (std::vector<std::string>{"Start analyzing node sensitivity...",
                                                  "Unspecified sensitive node, start calculating node sensitivity...",
                                                  "Analyzing nodes that sensitivity less than 2.0."}));
  // Progress: the ranking sweep (3 nodes, counted in (node, sample) evaluations), then the analysis
  // (3 nodes).
  const size_t n = r.samples.size();
  EXPECT_EQ(calls, (std::vector<std::pair<size_t, size_t>>{{n, 3 * n}, {2 * n, 3 * n}, {3 * n, 3 * n}, {1, 3}, {2, 3}, {3, 3}}));

  // A threshold below every cosine picks nothing: the curve is the "none" point alone.
  o.pick_threshold = 0.5;
  o.progress = nullptr;
  const auto none = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(none.x, (std::vector<std::string>{"none"}));
  EXPECT_EQ(none.cumulative.size(), 1u);
  EXPECT_EQ(none.messages.back(), "Analyzing nodes that sensitivity less than 0.5.");
}

TEST(SensitivityAnalysis, ValidationAndCancel) {
  Fixture f;
  analysis::SensitivityAnalysisOptions o;
  o.sensitive_nodes = {"Mul_2", "nope"};
  test::expect_error([&] { analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o); }, "nope does not exist in the model.");
  o.sensitive_nodes = {"Mul_2", "Relu_1"};
  o.progress = [](size_t, size_t) { return false; };
  const auto r = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.x, (std::vector<std::string>{"none", "Mul_2"}));
}

// A Horizon node with constant = 2 re-quantized to int16 (§1.4, §8.2): the original's IR returns its stored
// scales whatever the qtype, so the int8 step stays and only the clamp widens ("stored", the default);
// "derived" gives the step of the new type, as the toolchain re-calibrates an int16 node (what-if, fix).
TEST(SensitivityAnalysis, Int16OfAConstant2NodeKeepsItsStoredStep) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("scales", {0.5f}), test::attr_int("constant", 2)});
  b.node("Relu_1", "Relu", {"x_cal"}, {"y"});
  b.output("y");
  exec::Executor ex{b.model()};
  const quant::CalibrationRelations rel{ex.graph()};
  const test::SampleSet samples{ex.graph(), {{Tensor::from_floats({1, 4}, {100.3f, -0.2f, 30.1f, 7.7f})}}};
  const auto output = [&](const exec::QuantConfig& c) {
    const Tensor y = ex.outputs(ex.run(samples.data().sample(0), c))[0];
    return std::vector<float>(y.data<float>(), y.data<float>() + 4);
  };
  exec::QuantConfig int16 = ex.stored_config();
  int16.qtype[0] = "int16";
  exec::QuantConfig stored = int16;
  stored.stored_scales = {1};
  // int8 as stored: round(x / 0.5) = 201 -> clamped to 127 (63.5), 0, 60 (30), 15 (7.5).
  EXPECT_EQ(output(ex.stored_config()), (std::vector<float>{63.5f, 0.0f, 30.0f, 7.5f}));
  // int16 with the stored step: 201 is inside [-32768, 32767]: 100.5; the others as int8.
  EXPECT_EQ(output(stored), (std::vector<float>{100.5f, 0.0f, 30.0f, 7.5f}));
  // int16 derived: the threshold 0.5 * 127 = 63.5 over 32767 levels, step 63.5 / 32767 = 0.0019379...,
  // so 100.3 saturates at 63.5 and the others are within half a step of x.
  const std::vector<float> derived = output(int16);
  const float step = 63.5f / 32767.0f;
  EXPECT_FLOAT_EQ(derived[0], 32767.0f * step);
  EXPECT_NEAR(derived[2], 30.1f, step / 2);
  EXPECT_NEAR(derived[3], 7.7f, step / 2);

  // sensitivity_analysis -q int16: the cumulative point of Relu_1 is that run's cosine against the float
  // outputs [100.3, 0, 30.1, 7.7] (the per-sample cosine of §3.3, one sample and one output).
  const float x[4] = {100.3f, 0.0f, 30.1f, 7.7f};
  const auto cosine = [&](const std::vector<float>& y) {
    return analysis::compute_metric(analysis::Metric::Cosine, x, y.data(), 4);
  };
  analysis::SensitivityAnalysisOptions o;
  o.sensitive_nodes = {"Relu_1"};
  o.qtype = "int16";
  const auto r = analysis::sensitivity_analysis(ex, rel, samples.data(), o);
  ASSERT_EQ(r.cumulative.size(), 2u);
  EXPECT_EQ(r.cumulative[0], cosine({63.5f, 0.0f, 30.0f, 7.5f}));
  EXPECT_EQ(r.cumulative[1], cosine({100.5f, 0.0f, 30.0f, 7.5f}));
  o.stored_scales = false;
  EXPECT_EQ(analysis::sensitivity_analysis(ex, rel, samples.data(), o).cumulative[1], cosine(derived));
}
