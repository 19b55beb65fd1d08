#include "analysis/stat_info.h"

#include <gtest/gtest.h>

#include "analysis_test_util.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;

namespace {

// x [1,2,1,2] -> x_HzCalibration -> Conv_1(x_cal, w_cal) -> c -> c_HzCalibration (per channel) -> Relu_2
// w [2,2,1,1] = {{0.5, -0.25}, {0, 0}}: c channel 0 = 0.5·x0 − 0.25·x1, channel 1 = 0.
ir::Model model() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2, 1, 2});
  b.initializer("w", Tensor::from_floats({2, 2, 1, 1}, {0.5f, -0.25f, 0.0f, 0.0f}));
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.calibration("w", {attr_floats("thresholds", {0.5f, 1.0f}), attr_int("axis", 0)});
  b.node("Conv_1", "Conv", {"x_cal", "w_cal"}, {"c"});
  b.calibration("c", {attr_floats("thresholds", {3.0f, 4.0f}), attr_int("axis", 1)});
  b.node("Relu_2", "Relu", {"c_cal"}, {"y"});
  b.output("y");
  return b.model();
}

struct Fixture {
  exec::Executor ex{model()};
  quant::CalibrationRelations rel{ex.graph()};
  // Sample 0: x channel 0 = {1, -2}, channel 1 = {0, 0.5}; sample 1: {0, 0}, {3, -0.1}.
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 2, 1, 2}, {1.0f, -2.0f, 0.0f, 0.5f})},
                           {Tensor::from_floats({1, 2, 1, 2}, {0.0f, 0.0f, 3.0f, -0.1f})}}};
};

}  // namespace

TEST(StatInfo, WeightsThenFeaturesOverAllSamples) {
  Fixture f;
  const auto r = analysis::get_calibration_nodes_stat_info(f.ex, f.rel, f.samples.data(), {});
  EXPECT_EQ(r.samples, (std::vector<std::string>{"0.npy", "1.npy"}));
  ASSERT_EQ(r.nodes.size(), 3u);
  const auto& w = r.nodes[0];
  EXPECT_EQ(w.node, "w_HzCalibration");
  EXPECT_EQ(w.tensor_type, "weight");
  EXPECT_EQ(w.granularity, "per-channel");
  EXPECT_EQ(w.thresholds, (std::vector<float>{0.5f, 1.0f}));
  EXPECT_EQ(w.scales, (std::vector<float>{0.5f / 127.0f, 1.0f / 127.0f}));
  EXPECT_EQ(w.max_vals, (std::vector<float>{0.5f, 0.0f}));
  EXPECT_EQ(w.min_nz_vals, (std::vector<float>{0.25f, 0.0f}));  // an all-zero row gives 0

  // x over both samples (float model): channel 0 {1,-2,0,0}, channel 1 {0,0.5,3,-0.1}.
  const auto& x = r.nodes[1];
  EXPECT_EQ(x.node, "x_HzCalibration");
  EXPECT_EQ(x.tensor_type, "feature");
  EXPECT_EQ(x.granularity, "per-tensor");
  EXPECT_EQ(x.max_vals, (std::vector<float>{2.0f, 3.0f}));
  EXPECT_EQ(x.min_nz_vals, (std::vector<float>{1.0f, 0.1f}));
  // c channel 0 = {0.5, -1.125} and {-0.75, 0.025}; channel 1 all zero.
  const auto& c = r.nodes[2];
  EXPECT_EQ(c.granularity, "per-channel");
  ASSERT_EQ(c.max_vals.size(), 2u);
  EXPECT_FLOAT_EQ(c.max_vals[0], 1.125f);
  EXPECT_FLOAT_EQ(c.min_nz_vals[0], 0.025f);
  EXPECT_EQ(c.max_vals[1], 0.0f);
  EXPECT_EQ(c.min_nz_vals[1], 0.0f);
}

TEST(StatInfo, VisualizeTableAndCurves) {
  Fixture f;
  const auto r = analysis::get_calibration_nodes_stat_info(f.ex, f.rel, f.samples.data(), {});
  // Produced by re-running print_info_dict's rules on the original's visualize strings.
  const std::string expected =
      "\n"
      "=======================================================================================================\n"
      "Node             Tensor_type  Granularity  Thresholds    Scales        Max_vals      Min_nz_vals       \n"
      "-------------------------------------------------------------------------------------------------------\n"
      "w_HzCalibration  weight       per-channel  0.500000,...  0.003937,...  0.500000,...  2.500000e-01,...  \n"
      "x_HzCalibration  feature      per-tensor   1.000000      0.007874      3.000000      1.000000e-01      \n"
      "c_HzCalibration  feature      per-channel  3.000000,...  0.023622,...  1.125000,...  2.500000e-02,...  ";
  EXPECT_EQ(analysis::format_stat_info_table(r), expected);

  const auto feature = analysis::stat_info_curves(r, "feature");
  EXPECT_EQ(feature.nodes, (std::vector<std::string>{"x_HzCalibration", "c_HzCalibration"}));
  EXPECT_DOUBLE_EQ(feature.max_vals[0], 3.0);                            // per-tensor: max over channels
  EXPECT_DOUBLE_EQ(feature.min_nz_vals[0], static_cast<double>(0.1f));  // per-tensor: smallest positive
  EXPECT_DOUBLE_EQ(feature.thresholds[1], 3.0);                         // per-channel: the first value
  const auto weight = analysis::stat_info_curves(r, "weight");
  EXPECT_EQ(weight.nodes, (std::vector<std::string>{"w_HzCalibration"}));
  EXPECT_DOUBLE_EQ(weight.scales[0], static_cast<double>(0.5f / 127.0f));
}

TEST(StatInfo, NodeSelectionAndCancel) {
  Fixture f;
  analysis::StatInfoOptions o;
  o.has_nodes = true;
  o.nodes = {"Conv_1", "c_HzCalibration"};  // a normal node is silently left out, as in the original
  size_t calls = 0;
  o.progress = [&](size_t, size_t total) {
    EXPECT_EQ(total, 2u);
    return ++calls < 1;
  };
  const auto r = analysis::get_calibration_nodes_stat_info(f.ex, f.rel, f.samples.data(), o);
  EXPECT_TRUE(r.cancelled);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].node, "c_HzCalibration");
  EXPECT_EQ(r.nodes[0].max_vals, (std::vector<float>{1.125f, 0.0f}));  // sample 0 only: {0.5, -1.125}
  EXPECT_EQ(r.nodes[0].min_nz_vals, (std::vector<float>{0.5f, 0.0f}));
  o.nodes = {"nope"};
  test::expect_error([&] { analysis::get_calibration_nodes_stat_info(f.ex, f.rel, f.samples.data(), o); },
                     "nope does not exist in the model.");
}
