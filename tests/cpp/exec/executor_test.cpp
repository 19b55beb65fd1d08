#include "exec/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::attr_floats;
using ptq::test::attr_string;

namespace {

// x -> x_HzCalibration -> Relu_1 -> r -> r_HzCalibration -> Mul_2(r_cal, x) -> m -> Add_3(m, x) -> y
ir::Model two_calibration_model(const std::string& second_switch = "ON") {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.calibration("r", {attr_floats("thresholds", {2.54f}), attr_string("switch", second_switch)});
  b.node("Mul_2", "Mul", {"r_cal", "x"}, {"m"});
  b.node("Add_3", "Add", {"m", "x"}, {"y"});
  b.output("y");
  return b.model();
}

float q(float v, float threshold) {
  const float s = threshold / 127.0f;
  return std::min(std::max(std::nearbyint(v / s), -128.0f), 127.0f) * s;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

const std::vector<float> kInput = {-0.7f, 0.333f, 1.5f, 0.01f};

}  // namespace

TEST(Executor, FloatAndQuantizedRunsMatchHandComputation) {
  exec::Executor ex(two_calibration_model());
  ASSERT_EQ(ex.calibrations().size(), 2u);
  Tensor x = Tensor::from_floats({1, 4}, kInput);
  auto off = ex.outputs(ex.run({x}, ex.uniform_config(false)))[0];
  auto on = ex.outputs(ex.run({x}, ex.stored_config()))[0];
  for (size_t i = 0; i < kInput.size(); ++i) {
    const float v = kInput[i];
    EXPECT_FLOAT_EQ(off.data<float>()[i], std::max(v, 0.0f) * v + v);
    const float r = std::max(q(v, 1.27f), 0.0f);
    EXPECT_FLOAT_EQ(on.data<float>()[i], q(r, 2.54f) * v + v) << i;
  }
}

TEST(Executor, StoredConfigReadsTheSwitchAttribute) {
  exec::Executor ex(two_calibration_model("OFF"));
  auto c = ex.stored_config();
  EXPECT_EQ(c.on, (std::vector<uint8_t>{1, 0}));
}

TEST(Executor, IncrementalRunsEqualFullRunsAndSkipWork) {
  exec::Executor ex(two_calibration_model());
  Tensor x = Tensor::from_floats({1, 4}, kInput);
  exec::RunRecord base = ex.run({x}, ex.uniform_config(false), {}, true);
  for (int mask = 0; mask < 4; ++mask) {
    exec::QuantConfig c = ex.uniform_config(false);
    c.on = {static_cast<uint8_t>(mask & 1), static_cast<uint8_t>((mask >> 1) & 1)};
    for (const std::string qtype : {"", "int16"}) {
      c.qtype.assign(2, qtype);
      exec::RunStats stats;
      auto inc = ex.outputs(ex.run_incremental(base, c, {}, &stats))[0];
      auto full = ex.outputs(ex.run({x}, c))[0];
      EXPECT_TRUE(bit_equal(inc, full)) << "mask " << mask << " qtype " << qtype;
      if (mask == 2) {
        // Only r_HzCalibration changed: x_HzCalibration and Relu_1 are reused from the base run.
        EXPECT_EQ(stats.nodes_skipped, 2);
        EXPECT_EQ(stats.nodes_executed, 3);
      }
      if (mask == 0) EXPECT_EQ(stats.nodes_executed, 0);
    }
  }
}

TEST(Executor, PropagationStopsAtBitIdenticalTensors) {
  // Inputs already on the int8 grid of x_HzCalibration quantize to themselves: nothing downstream changes.
  exec::Executor ex(two_calibration_model());
  const float s = 1.27f / 127.0f;
  Tensor x = Tensor::from_floats({1, 4}, {3 * s, -5 * s, 0.0f, 7 * s});
  exec::RunRecord base = ex.run({x}, ex.uniform_config(false), {}, true);
  exec::QuantConfig c = ex.uniform_config(false);
  c.on = {1, 0};
  exec::RunStats stats;
  ex.run_incremental(base, c, {}, &stats);
  EXPECT_EQ(stats.nodes_executed, 1);  // only the calibration node itself
}

// The run cache: the same inputs (the same tensors, or equal ones: calibration samples are decoded
// anew each time) and config give the cached record; another config, other values, a full budget or
// a cleared cache run again.
TEST(Executor, RunCacheServesTheSameKeepAllRunAgain) {
  exec::Executor ex(two_calibration_model());
  const Tensor x = Tensor::from_floats({1, 4}, kInput);
  const Tensor same_values = Tensor::from_floats({1, 4}, kInput);
  std::vector<float> changed = kInput;
  changed.back() += 1.0f;
  const Tensor other_values = Tensor::from_floats({1, 4}, changed);
  const exec::QuantConfig off = ex.uniform_config(false), on = ex.stored_config();
  const exec::RunRecord first = ex.cached_keep_all_run({x}, off);
  const exec::RunRecord full = ex.run({x}, off, {}, true);
  ASSERT_EQ(first.values.size(), full.values.size());
  for (size_t v = 0; v < full.values.size(); ++v) {
    ASSERT_EQ(first.values[v].defined(), full.values[v].defined()) << v;
    if (full.values[v].defined()) EXPECT_TRUE(bit_equal(first.values[v], full.values[v])) << v;
  }
  const exec::RunRecord again = ex.cached_keep_all_run({x}, off);
  EXPECT_EQ(ex.run_cache_hits(), 1u);
  EXPECT_EQ(again.values.back().raw(), first.values.back().raw());  // the same tensors, not a re-run
  ex.cached_keep_all_run({x}, on);
  EXPECT_EQ(ex.run_cache_hits(), 1u);
  const exec::RunRecord equal = ex.cached_keep_all_run({same_values}, off);
  EXPECT_EQ(ex.run_cache_hits(), 2u);
  EXPECT_EQ(equal.values.back().raw(), first.values.back().raw());
  ex.cached_keep_all_run({other_values}, off);
  EXPECT_EQ(ex.run_cache_hits(), 2u);
  ex.cached_keep_all_run({x}, on);
  EXPECT_EQ(ex.run_cache_hits(), 3u);  // several records are held
  ex.clear_run_cache();
  ex.cached_keep_all_run({x}, off);
  EXPECT_EQ(ex.run_cache_hits(), 3u);
  ex.set_run_cache_budget(0);  // drops what is held, keeps nothing new
  ex.cached_keep_all_run({x}, off);
  ex.cached_keep_all_run({x}, off);
  EXPECT_EQ(ex.run_cache_hits(), 3u);
  // A budget for about one record: the older is dropped for the newer.
  ex.set_run_cache_budget(full.values.size() * 4 * sizeof(float) + 8);
  ex.cached_keep_all_run({x}, off);
  ex.cached_keep_all_run({x}, on);
  ex.cached_keep_all_run({x}, on);
  EXPECT_EQ(ex.run_cache_hits(), 4u);
  ex.cached_keep_all_run({x}, off);
  EXPECT_EQ(ex.run_cache_hits(), 4u);
}

TEST(Executor, ReportsAllUnsupportedOpsAtLoad) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1});
  b.node("a", "FancyOp", {"x"}, {"y"});
  b.node("b", "OtherOp", {"y"}, {"z"}, {}, "com.example");
  b.output("z");
  try {
    exec::Executor ex(b.model());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("FancyOp (domain '', node 'a')"), std::string::npos) << m;
    EXPECT_NE(m.find("OtherOp (domain 'com.example', node 'b')"), std::string::npos) << m;
  }
}

// Found by model_exec_fuzz: a node with an empty output list made its kernel write outputs[0].
TEST(Executor, RefusesANodeWithoutOutputs) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1});
  b.node("r", "Relu", {"x"}, {"y"});
  b.node("silent", "Relu", {"y"}, {});
  b.output("y");
  try {
    exec::Executor ex(b.model());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'silent' (Relu) has no outputs");
  }
}

TEST(Executor, ChecksInputDtypeAndShape) {
  exec::Executor ex(two_calibration_model());
  try {
    ex.run({Tensor::from_int64s({1, 4}, {1, 2, 3, 4})}, ex.stored_config());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "Unexpected data type for input: x , Expected: FLOAT32, Actual: INT64 .");
  }
  EXPECT_THROW(ex.run({Tensor::from_floats({1, 3}, {1, 2, 3})}, ex.stored_config()), Error);
  EXPECT_THROW(ex.run({}, ex.stored_config()), Error);
  // The executor stays usable after errors.
  EXPECT_NO_THROW(ex.run({Tensor::from_floats({1, 4}, kInput)}, ex.stored_config()));
}
