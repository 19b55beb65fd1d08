// Strict HzCalibration checks: a `switch` other than ON/OFF, unusable scales, scales / thresholds
// counts that disagree, and a model without any calibration node are an error or a warning naming
// the node and the attribute, never silently read one way.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"
#include "quant/calibration.h"

using namespace ptq;
using ptq::test::attr_floats;
using ptq::test::attr_int;
using ptq::test::attr_ints;
using ptq::test::attr_string;
using ptq::test::attr_strings;

namespace {

// x -> x_HzCalibration(attrs) -> x_cal -> Relu -> y
ir::Model model_with(std::vector<ir::Attribute> attrs) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2});
  b.calibration("x", std::move(attrs));
  b.node("relu", "Relu", {"x_cal"}, {"y"});
  b.output("y");
  return b.model();
}

std::string parse_error(const ir::Model& m) {
  try {
    quant::parse_calibration(m.graph, 0);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST(CalibrationChecks, SwitchMustBeOnOrOff) {
  EXPECT_TRUE(quant::parse_calibration(model_with({attr_floats("thresholds", {1}), attr_string("switch", "ON")}).graph, 0).switch_on);
  EXPECT_FALSE(quant::parse_calibration(model_with({attr_floats("thresholds", {1}), attr_string("switch", "OFF")}).graph, 0).switch_on);
  // Was read as ON: anything but "OFF".
  for (const char* bad : {"on", "Off", "", "1"}) {
    const std::string m = parse_error(model_with({attr_floats("thresholds", {1}), attr_string("switch", bad)}));
    EXPECT_TRUE(contains(m, "calibration node 'x_HzCalibration': attribute 'switch' is '" + std::string(bad) +
                                "'; expected \"ON\" or \"OFF\""))
        << m;
  }
}

TEST(CalibrationChecks, UnusableScalesThatTheThresholdsOverrideAreAWarning) {
  for (float bad : {kNaN, 0.0f, -1.0f}) {
    const ir::Model m = model_with({attr_floats("thresholds", {1.27f}), attr_floats("scales", {bad})});
    const quant::CalibrationSpec spec = quant::parse_calibration(m.graph, 0);
    EXPECT_FLOAT_EQ(spec.scales[0], 0.01f);  // derived from the threshold: 1.27 / 127
    ASSERT_EQ(spec.warnings.size(), 1u);
    EXPECT_TRUE(contains(spec.warnings[0], "calibration node 'x_HzCalibration': attribute 'scales' holds")) << spec.warnings[0];
    EXPECT_TRUE(contains(spec.warnings[0], "not a positive finite number; it is ignored")) << spec.warnings[0];
    EXPECT_EQ(quant::model_warnings(m), spec.warnings);
  }
}

TEST(CalibrationChecks, ScalesAndThresholdsCountsThatDisagreeAreAWarning) {
  const ir::Model m = model_with({attr_floats("thresholds", {1.27f, 2.54f}), attr_floats("scales", {0.01f, 0.02f, 0.03f})});
  const quant::CalibrationSpec spec = quant::parse_calibration(m.graph, 0);
  EXPECT_EQ(spec.scales.size(), 2u);
  ASSERT_EQ(spec.warnings.size(), 1u);
  EXPECT_TRUE(contains(spec.warnings[0], "attribute 'scales' has 3 values but 'thresholds' has 2")) << spec.warnings[0];
  // constant=2: the scales are primary, the thresholds are the ones ignored.
  const ir::Model c2 = model_with({attr_int("constant", 2), attr_floats("thresholds", {1.27f}), attr_floats("scales", {0.01f, 0.02f})});
  const quant::CalibrationSpec spec2 = quant::parse_calibration(c2.graph, 0);
  ASSERT_EQ(spec2.warnings.size(), 1u);
  EXPECT_TRUE(contains(spec2.warnings[0], "attribute 'thresholds' has 1 values but 'scales' has 2")) << spec2.warnings[0];
  // Matching counts (and asymmetric [fmin, fmax] with one scale) are silent.
  EXPECT_TRUE(quant::parse_calibration(model_with({attr_floats("thresholds", {1.27f}), attr_floats("scales", {0.01f})}).graph, 0)
                  .warnings.empty());
}

TEST(CalibrationChecks, UsedScalesThatAreNaNOrZeroAreErrorsNamingTheAttribute) {
  const std::string from_scales = parse_error(model_with({attr_int("constant", 2), attr_floats("scales", {0.5f, kNaN})}));
  EXPECT_TRUE(contains(from_scales, "calibration node 'x_HzCalibration': scale nan (from attribute 'scales', index 1)")) << from_scales;
  const std::string no_thresholds = parse_error(model_with({attr_floats("scales", {0.0f})}));
  EXPECT_TRUE(contains(no_thresholds, "(from attribute 'scales', index 0) is not a positive finite number")) << no_thresholds;
  const std::string from_thresholds = parse_error(model_with({attr_floats("thresholds", {1.0f, 0.0f})}));
  EXPECT_TRUE(contains(from_thresholds, "(from attribute 'thresholds', index 1) is not a positive finite number")) << from_thresholds;
}

TEST(CalibrationChecks, AModelWithoutCalibrationNodesIsAWarning) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2});
  b.node("relu", "Relu", {"x"}, {"y"});
  b.output("y");
  ir::Model m = b.model();
  m.warnings.push_back("a reader warning");
  const std::vector<std::string> w = quant::model_warnings(m);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "a reader warning");
  EXPECT_TRUE(contains(w[1], "the model has no HzCalibration node")) << w[1];
  EXPECT_TRUE(quant::model_warnings(model_with({attr_floats("thresholds", {1})})).empty());
}

// A Q/DQ quantizer's one zero point for per-channel scales holds for every channel (libc++'s
// vector::assign given an element of the same vector read it after freeing it: garbage zero points
// in the wasm build).
TEST(CalibrationChecks, OneZeroPointForPerChannelScalesHoldsForEveryChannel) {
  const ir::Model m = model_with({attr_strings("qdq_nodes", {"q", "dq"}), attr_int("constant", 2), attr_string("qtype", "uint8"),
                                  attr_ints("zero_point", {7}), attr_floats("scales", {0.01f, 0.02f, 0.04f, 0.08f, 0.16f})});
  const quant::CalibrationSpec s = quant::parse_calibration(m.graph, 0);
  EXPECT_EQ(s.zero_points, (std::vector<int64_t>{7, 7, 7, 7, 7}));
}
