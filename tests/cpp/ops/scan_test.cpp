// CumSum: hand-worked sums over each axis, exclusive / reverse, integer wrap-around.
#include <cstdint>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;
using test::floats;
using test::int64s;

TEST(Scan, CumSumAxesAndModes) {
  const Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor_near(run_op("CumSum", {x, int64s({}, {0})})[0], {2, 3}, {1, 2, 3, 5, 7, 9});
  expect_tensor_near(run_op("CumSum", {x, int64s({}, {-1})})[0], {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_tensor_near(run_op("CumSum", {x, int64s({}, {1})}, {attr_int("exclusive", 1)})[0], {2, 3},
                     {0, 1, 3, 0, 4, 9});
  expect_tensor_near(run_op("CumSum", {x, int64s({}, {1})}, {attr_int("reverse", 1)})[0], {2, 3},
                     {6, 5, 3, 15, 11, 6});
  expect_tensor_near(run_op("CumSum", {x, int64s({}, {1})}, {attr_int("reverse", 1), attr_int("exclusive", 1)})[0],
                     {2, 3}, {5, 3, 0, 11, 6, 0});
  EXPECT_THROW(run_op("CumSum", {x, int64s({}, {2})}), Error);
  EXPECT_THROW(run_op("CumSum", {x, int64s({2}, {0, 1})}), Error);
}

TEST(Scan, CumSumInt64Wraps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const Tensor y = run_op("CumSum", {int64s({2}, {big, 1}), int64s({}, {0})})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{big, std::numeric_limits<int64_t>::min()}));
}

}  // namespace
}  // namespace ptq
