// Executor::cached_keep_all_run_nearest and run_incremental_values: the same tensors as full runs,
// computing only what the change reaches / what the requested values need.
#include <gtest/gtest.h>

#include <cstring>

#include "analysis/analysis_test_util.h"
#include "exec/executor.h"

using namespace ptq;

namespace {

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

TEST(ExecutorNearest, DerivesFromTheClosestCachedConfiguration) {
  exec::Executor ex(test::relu_mul_add_model());
  // Off x's int8 grid (step 0.01), so switching x's calibration node changes every later tensor.
  const std::vector<Tensor> x = {Tensor::from_floats({1, 4}, {0.503f, -0.2f, 0.917f, 0.334f})};
  const size_t w = static_cast<size_t>(ex.calibration_index("w_HzCalibration"));
  const size_t cx = static_cast<size_t>(ex.calibration_index("x_HzCalibration"));
  exec::RunStats first;
  ex.cached_keep_all_run_nearest(x, ex.stored_config(), &first);
  EXPECT_EQ(first.nodes_executed, 6);  // 3 calibration nodes + Relu, Mul, Add

  exec::QuantConfig c = ex.stored_config();
  c.qtype[w] = "int16";
  exec::RunStats toggle;
  const exec::RunRecord r = ex.cached_keep_all_run_nearest(x, c, &toggle);
  EXPECT_EQ(toggle.nodes_executed, 2);  // w's calibration node and Mul_2
  const exec::RunRecord full = ex.run(x, c, {}, true);
  for (const char* name : {"r", "y1", "y2", "x_cal", "w_cal", "r_cal"}) {
    const size_t v = static_cast<size_t>(ex.graph().find_value(name));
    ASSERT_TRUE(r.values[v].defined()) << name;
    EXPECT_TRUE(same(r.values[v], full.values[v])) << name;
  }
  // From there, x OFF: x's cone (x_cal, Relu_1, r_cal, Mul_2, Add_3) but not w_cal.
  c.on[cx] = 0;
  exec::RunStats second;
  const exec::RunRecord r2 = ex.cached_keep_all_run_nearest(x, c, &second);
  EXPECT_EQ(second.nodes_executed, 5);
  const exec::RunRecord full2 = ex.run(x, c);
  EXPECT_TRUE(same(ex.outputs(r2)[0], ex.outputs(full2)[0]));
  EXPECT_TRUE(same(ex.outputs(r2)[1], ex.outputs(full2)[1]));
}

TEST(ExecutorNearest, IncrementalValuesRunOnlyTheirProducers) {
  exec::Executor ex(test::relu_mul_add_model());
  const std::vector<Tensor> x = {Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})};
  const exec::RunRecord base = ex.run(x, ex.uniform_config(false), {}, true);
  exec::QuantConfig c = ex.uniform_config(false);
  c.on[static_cast<size_t>(ex.calibration_index("x_HzCalibration"))] = 1;
  const int r = ex.graph().find_value("r");
  exec::RunStats stats;
  const exec::RunRecord got = ex.run_incremental_values(base, c, {r}, &stats);
  EXPECT_EQ(stats.nodes_executed, 2);  // x_cal and Relu_1; not r_cal, Mul_2, Add_3
  EXPECT_TRUE(same(got.values[static_cast<size_t>(r)], ex.run(x, c, {r}).values[static_cast<size_t>(r)]));
  EXPECT_FALSE(got.values[static_cast<size_t>(ex.graph().find_value("y2"))].defined());
}
