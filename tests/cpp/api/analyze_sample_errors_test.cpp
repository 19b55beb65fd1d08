// An error a calibration sample causes while an analysis runs (an out-of-range Gather index in the
// data) names that sample's file; errors that no sample causes are returned unchanged.
#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"
#include "api/analyze.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;

namespace {

// ids [2] (int64) -> Gather(table [4, 3], ids) -> g -> calibration -> Mul by w -> out
ir::Model gather_model() {
  test::GraphBuilder b;
  b.input("ids", DType::Int64, {2});
  b.initializer("table", Tensor::from_floats({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  b.initializer("w", Tensor::from_floats({1, 3}, {0.5f, -1.0f, 2.0f}));
  b.node("Gather_0", "Gather", {"table", "ids"}, {"g"}, {attr_int("axis", 0)});
  b.calibration("g", {attr_floats("thresholds", {12.0f})});
  b.calibration("w", {attr_floats("thresholds", {2.0f})});
  b.node("Mul_1", "Mul", {"g_cal", "w_cal"}, {"out"});
  b.output("out");
  return b.model();
}

std::string error_of(const api::Context& c, const std::string& request) {
  try {
    api::analyze(c, request);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AnalyzeSampleErrors, AnOutOfRangeIndexNamesTheSampleFile) {
  exec::Executor ex{gather_model()};
  quant::CalibrationRelations rel{ex.graph()};
  // Sample 1 (ids/1.npy) indexes row 9 of a 4-row table.
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_int64s({2}, {0, 3})}, {Tensor::from_int64s({2}, {1, 9})}, {Tensor::from_int64s({2}, {2, 2})}}};
  const api::Context c{ex, rel, &samples.data()};
  for (const char* request : {R"({"analysis":"sensitivity","options":{"data_num":3}})", R"({"analysis":"stat_info"})"}) {
    const std::string m = error_of(c, request);
    EXPECT_EQ(m.rfind("node 'Gather_0' (Gather): ", 0), 0u) << m;
    EXPECT_NE(m.find("index 9 is out of range"), std::string::npos) << m;
    EXPECT_NE(m.find("(calibration sample ids/1.npy)"), std::string::npos) << m;
  }
  // An option error is not a sample's: unchanged.
  const std::string m = error_of(c, R"({"analysis":"distribution","options":{"nodes_list":["nope"]}})");
  EXPECT_EQ(m.find("calibration sample"), std::string::npos) << m;
  EXPECT_NE(m.find("nope"), std::string::npos) << m;
}

}  // namespace
