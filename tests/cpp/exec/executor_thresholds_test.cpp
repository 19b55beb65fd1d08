// A configuration's threshold override runs the calibration node as if it had been calibrated with
// those thresholds: the oracle is the same model with the thresholds stored in its attributes.
#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"
#include "exec/executor.h"
#include "graph_builder.h"

using namespace ptq;

namespace {

// x -> x_HzCalibration -> Mul(w) -> y with the given x thresholds (and a per-channel weight).
ir::Model model(const std::vector<float>& x_thresholds) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.initializer("w", Tensor::from_floats({1, 4}, {0.3f, -0.7f, 1.1f, 0.05f}));
  b.calibration("x", {test::attr_floats("thresholds", x_thresholds)});
  b.calibration("w", {test::attr_floats("thresholds", {1.1f})});
  b.node("Mul_1", "Mul", {"x_cal", "w_cal"}, {"y"});
  b.output("y");
  return b.model();
}

std::vector<float> output(exec::Executor& ex, const exec::QuantConfig& c, const Tensor& x) {
  return ex.outputs(ex.run({x}, c))[0].to_float_vector();
}

}  // namespace

TEST(ExecutorThresholds, OverrideRunsAsTheStoredThresholds) {
  const Tensor x = Tensor::from_floats({1, 4}, {0.5f, -1.9f, 0.77f, 2.4f});
  exec::Executor stored(model({0.8f}));
  exec::Executor ex(model({2.54f}));
  exec::QuantConfig c = ex.stored_config();
  c.thresholds.assign(2, {});
  c.thresholds[0] = {0.8f};
  EXPECT_EQ(output(ex, c, x), output(stored, stored.stored_config(), x));
  EXPECT_NE(output(ex, c, x), output(ex, ex.stored_config(), x));
  // A weight's override (per tensor instead of per channel) is cached under its own key.
  exec::QuantConfig w = ex.stored_config();
  w.thresholds.assign(2, {});
  w.thresholds[1] = {0.2f};
  const std::vector<float> clipped = output(ex, w, x);
  EXPECT_NE(clipped, output(ex, ex.stored_config(), x));
  EXPECT_EQ(output(ex, w, x), clipped);
  // Incremental runs and the run cache tell an override from the stored state.
  const exec::RunRecord base = ex.cached_keep_all_run({x}, ex.stored_config());
  EXPECT_EQ(ex.outputs(ex.run_incremental(base, c, {}))[0].to_float_vector(),
            output(stored, stored.stored_config(), x));
  EXPECT_EQ(ex.outputs(ex.cached_keep_all_run_nearest({x}, c))[0].to_float_vector(),
            output(stored, stored.stored_config(), x));
  EXPECT_FALSE(exec::same_state(c, ex.stored_config()));
  exec::QuantConfig again = ex.stored_config();
  again.thresholds.assign(2, {});
  EXPECT_TRUE(exec::same_state(again, ex.stored_config()));  // empty entries are the stored state
}
