#include "quant/relations.h"

#include <gtest/gtest.h>

#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::attr_floats;

namespace {

// x -> x_HzCalibration -> Conv_1(w_HzCalibration) -> Relu_2 -> MaxPool_3 -> [y_HzCalibration] -> Conv_4
//                                                               \-> Reshape_5 -> Gemm_6 (no calibration on its input)
// Conv_4 output -> Add_7 (with Relu_2 output) ; graph output from HzFilter_8(Add_7 out, Gemm out)
ir::Graph sample_graph() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 4, 4});
  b.initializer("w", Tensor::from_floats({1, 1, 1, 1}, {1.0f}));
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.calibration("w", {attr_floats("thresholds", {1.0f})});
  b.node("Conv_1", "Conv", {"x_cal", "w_cal"}, {"c1"});
  b.node("Relu_2", "Relu", {"c1"}, {"r2"});
  b.node("MaxPool_3", "MaxPool", {"r2"}, {"m3"});
  b.calibration("m3", {attr_floats("thresholds", {1.0f})});
  b.node("Conv_4", "Conv", {"m3_cal", "w_cal"}, {"c4"});
  b.node("Reshape_5", "Reshape", {"m3", "shape"}, {"s5"});
  b.initializer("shape", Tensor::from_int64s({2}, {1, -1}));
  b.node("Gemm_6", "Gemm", {"s5", "w"}, {"g6"});
  b.node("Add_7", "Add", {"c4", "r2"}, {"a7"});
  b.node("HzFilter_8", "HzFilter", {"a7", "g6"}, {"f8"}, {}, "horizon");
  b.output("f8");
  return b.graph();
}

}  // namespace

TEST(Relations, InputCalibrationFollowsSkippableOps) {
  ir::Graph g = sample_graph();
  quant::CalibrationRelations r(g);
  auto& n2c = r.node_to_calibration();
  EXPECT_EQ(n2c.at("Conv_1"), (std::set<std::string>{"x_HzCalibration", "w_HzCalibration"}));
  EXPECT_EQ(n2c.at("Conv_4"), (std::set<std::string>{"m3_HzCalibration", "w_HzCalibration"}));
  // Reshape_5 reads MaxPool_3 (skippable) -> Relu_2 (skippable) -> Conv_1 (not calibration, not skippable): none.
  EXPECT_EQ(n2c.count("Reshape_5"), 0u);
  EXPECT_EQ(n2c.count("Relu_2"), 0u);
  // get_calibration_by_node falls back to the name itself.
  EXPECT_EQ(r.calibration_by_node("m3_HzCalibration"), (std::set<std::string>{"m3_HzCalibration"}));
  EXPECT_EQ(r.calibration_by_node("Relu_2"), (std::set<std::string>{"Relu_2"}));
  EXPECT_EQ(r.calibration_to_node().at("w_HzCalibration"), (std::set<std::string>{"Conv_1", "Conv_4"}));
}

TEST(Relations, SkippableChainReachesCalibration) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.node("Reshape_2", "Reshape", {"r", "shape"}, {"s"});
  b.initializer("shape", Tensor::from_int64s({2}, {1, -1}));
  b.node("Neg_3", "Neg", {"s"}, {"n"});
  b.output("n");
  quant::CalibrationRelations r(b.graph());
  EXPECT_EQ(r.node_to_calibration().at("Neg_3"), (std::set<std::string>{"x_HzCalibration"}));
  EXPECT_EQ(r.node_to_calibration().at("Reshape_2"), (std::set<std::string>{"x_HzCalibration"}));
  EXPECT_EQ(r.node_to_calibration().at("Relu_1"), (std::set<std::string>{"x_HzCalibration"}));
}

TEST(Relations, NormalNodesCaliMapTaeAndOutputs) {
  ir::Graph g = sample_graph();
  quant::CalibrationRelations r(g);
  std::vector<std::string> names;
  for (const auto& [n, outs] : r.normal_nodes()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"Conv_1", "Conv_4"}));
  EXPECT_EQ(r.node_outputs("Conv_4"), (std::vector<std::string>{"c4"}));
  EXPECT_TRUE(r.node_outputs("Relu_2").empty());
  EXPECT_EQ(r.cali_normal_map().at("w_HzCalibration"), "Conv_1;Conv_4");
  EXPECT_EQ(r.cali_normal_map().at("x_HzCalibration"), "Conv_1");
  EXPECT_EQ(r.tae_nodes(), (std::vector<std::string>{"x_HzCalibration", "m3_HzCalibration"}));
  EXPECT_EQ(r.model_outputs(), (std::vector<std::string>{"a7", "g6"}));
}

// The original appends a consumer's name once per input of it that reads the calibration node's output.
TEST(Relations, NodeColumnRepeatsAConsumerPerInputSlot) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.0f})});
  b.node("Mul_1", "Mul", {"x_cal", "x_cal"}, {"m"});
  b.node("Add_2", "Add", {"x_cal", "m"}, {"y"});
  b.output("y");
  const quant::CalibrationRelations r(b.graph());
  EXPECT_EQ(r.cali_normal_map().at("x_HzCalibration"), "Mul_1;Mul_1;Add_2");
}
