// Concat and Split, expected values by hand.
#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }

TEST(ConcatSplit, ConcatAxes) {
  const Tensor a = Tensor::from_floats({2, 1}, {1, 2});
  const Tensor b = Tensor::from_floats({2, 2}, {3, 4, 5, 6});
  expect_tensor_near(run_op("Concat", {a, b}, {attr_int("axis", 1)})[0], {2, 3}, {1, 3, 4, 2, 5, 6});
  expect_tensor_near(run_op("Concat", {a, b}, {attr_int("axis", -1)})[0], {2, 3}, {1, 3, 4, 2, 5, 6});
  const Tensor c = Tensor::from_floats({1, 2}, {7, 8});
  expect_tensor_near(run_op("Concat", {b, c}, {attr_int("axis", 0)})[0], {3, 2}, {3, 4, 5, 6, 7, 8});
  EXPECT_THROW(run_op("Concat", {a, c}, {attr_int("axis", 0)}), Error);  // [2,1] vs [1,2]
  EXPECT_THROW(run_op("Concat", {a, b}), Error);                         // axis required (opset 17)
}

TEST(ConcatSplit, ConcatInt64AndEmptyParts) {
  const Tensor a = Tensor::from_int64s({2, 0}, {});
  const Tensor b = Tensor::from_int64s({2, 2}, {int64_t{1} << 40, 2, 3, -4});
  const Tensor y = run_op("Concat", {a, b, a}, {attr_int("axis", 1)})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{int64_t{1} << 40, 2, 3, -4}));
  EXPECT_THROW(run_op("Concat", {b, Tensor::from_floats({2, 1}, {1, 2})}, {attr_int("axis", 1)}), Error);
}

TEST(ConcatSplit, SplitInputAttributeAndEqual) {
  const Tensor x = Tensor::from_floats({3, 2}, {1, 2, 3, 4, 5, 6});
  std::vector<Tensor> y = run_op("Split", {x, ints({2, 1})}, {}, 2, 13);
  expect_tensor_near(y[0], {2, 2}, {1, 2, 3, 4});
  expect_tensor_near(y[1], {1, 2}, {5, 6});
  // Splitting the leading axis gives views into the input.
  EXPECT_TRUE(y[0].shares_storage_with(x));
  y = run_op("Split", {x}, {attr_int("axis", 1), attr_ints("split", {1, 1})}, 2, 11);
  expect_tensor_near(y[0], {3, 1}, {1, 3, 5});
  expect_tensor_near(y[1], {3, 1}, {2, 4, 6});
  y = run_op("Split", {x}, {attr_int("axis", -1)}, 2, 13);  // equal split
  expect_tensor_near(y[1], {3, 1}, {2, 4, 6});
  EXPECT_THROW(run_op("Split", {x}, {}, 2, 13), Error);  // 3 rows into 2 equal parts
  EXPECT_THROW(run_op("Split", {x, ints({1, 1})}, {}, 2, 13), Error);  // sums to 2, not 3
}

TEST(ConcatSplit, SplitNumOutputsAndZeroSizes) {
  const Tensor x = Tensor::from_floats({5}, {1, 2, 3, 4, 5});
  // Opset 18 num_outputs=3 on 5 elements: ceil(5/3)=2 -> [2, 2, 1].
  std::vector<Tensor> y = run_op("Split", {x}, {attr_int("num_outputs", 3)}, 3, 18);
  expect_tensor_near(y[0], {2}, {1, 2});
  expect_tensor_near(y[1], {2}, {3, 4});
  expect_tensor_near(y[2], {1}, {5});
  y = run_op("Split", {x, ints({0, 5, 0})}, {}, 3, 13);
  EXPECT_EQ(y[0].shape(), (Shape{0}));
  expect_tensor_near(y[1], {5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(y[2].shape(), (Shape{0}));
  const Tensor b = cast_tensor(Tensor::from_floats({2, 2}, {1, 0, 0, 1}), DType::Bool);
  y = run_op("Split", {b}, {attr_int("axis", 1)}, 2, 13);
  EXPECT_EQ(y[0].dtype(), DType::Bool);
  expect_tensor_near(y[0], {2, 1}, {1, 0});
  expect_tensor_near(y[1], {2, 1}, {0, 1});
}

}  // namespace
}  // namespace ptq::test
