// CumSum: hand-worked sums over each axis, exclusive / reverse, integer wrap-around.
#include <cstdint>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;

Tensor f(Shape s, std::vector<float> v) { return Tensor::from_floats(std::move(s), v); }
Tensor i64(Shape s, std::vector<int64_t> v) { return Tensor::from_int64s(std::move(s), v); }

TEST(Scan, CumSumAxesAndModes) {
  const Tensor x = f({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor_near(run_op("CumSum", {x, i64({}, {0})})[0], {2, 3}, {1, 2, 3, 5, 7, 9});
  expect_tensor_near(run_op("CumSum", {x, i64({}, {-1})})[0], {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_tensor_near(run_op("CumSum", {x, i64({}, {1})}, {attr_int("exclusive", 1)})[0], {2, 3},
                     {0, 1, 3, 0, 4, 9});
  expect_tensor_near(run_op("CumSum", {x, i64({}, {1})}, {attr_int("reverse", 1)})[0], {2, 3},
                     {6, 5, 3, 15, 11, 6});
  expect_tensor_near(run_op("CumSum", {x, i64({}, {1})}, {attr_int("reverse", 1), attr_int("exclusive", 1)})[0],
                     {2, 3}, {5, 3, 0, 11, 6, 0});
  EXPECT_THROW(run_op("CumSum", {x, i64({}, {2})}), Error);
  EXPECT_THROW(run_op("CumSum", {x, i64({2}, {0, 1})}), Error);
}

TEST(Scan, CumSumInt64Wraps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const Tensor y = run_op("CumSum", {i64({2}, {big, 1}), i64({}, {0})})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{big, std::numeric_limits<int64_t>::min()}));
}

}  // namespace
}  // namespace ptq
