// Det against hand-computed determinants (including one that needs a row swap) and a batch.
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::expect_tensor_near;
using test::run_op;

TEST(Linalg, Det) {
  expect_tensor_near(run_op("Det", {Tensor::from_floats({2, 2}, {1, 2, 3, 4})})[0], {}, {-2});
  // Leading zero pivot: det [[0, 1, 2], [1, 0, 3], [4, -3, 8]] = 0*(0+9) - 1*(8-12) + 2*(-3-0) = -2.
  expect_tensor_near(run_op("Det", {Tensor::from_floats({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8})})[0], {}, {-2});
  // A batch of two: identity and a singular matrix.
  expect_tensor_near(run_op("Det", {Tensor::from_floats({2, 2, 2}, {1, 0, 0, 1, 1, 2, 2, 4})})[0], {2}, {1, 0});
  EXPECT_THROW(run_op("Det", {Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6})}), Error);
  EXPECT_THROW(run_op("Det", {Tensor::from_int64s({1, 1}, {1})}), Error);
}

}  // namespace
}  // namespace ptq
