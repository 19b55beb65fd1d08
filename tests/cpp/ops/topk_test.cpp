// TopK: ONNX spec example plus hand-worked ties, NaN, dtypes and opset forms.
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor k_of(int64_t k) { return Tensor::from_int64s({1}, {k}); }

TEST(TopK, SpecExampleLargestAndSmallest) {
  const Tensor x = Tensor::from_floats({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  std::vector<Tensor> y = run_op("TopK", {x, k_of(3)}, {attr_int("axis", 1)}, 2, 11);
  expect_tensor_near(y[0], {3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9});
  EXPECT_EQ(y[1].dtype(), DType::Int64);
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1}));
  y = run_op("TopK", {x, k_of(3)}, {attr_int("largest", 0)}, 2, 11);
  expect_tensor_near(y[0], {3, 3}, {0, 1, 2, 4, 5, 6, 8, 9, 10});
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  // axis 0 (negative): best rows per column.
  y = run_op("TopK", {x, k_of(1)}, {attr_int("axis", -2)}, 2, 11);
  expect_tensor_near(y[0], {1, 4}, {8, 9, 10, 11});
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{2, 2, 2, 2}));
}

TEST(TopK, TiesKeepLowerIndexFirst) {
  const Tensor x = Tensor::from_floats({5}, {1, 3, 3, 2, 3});
  std::vector<Tensor> y = run_op("TopK", {x, k_of(3)}, {}, 2, 11);
  expect_tensor_near(y[0], {3}, {3, 3, 3});
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{1, 2, 4}));
  y = run_op("TopK", {Tensor::from_floats({4}, {2, 1, 1, 3}), k_of(2)}, {attr_int("largest", 0)}, 2, 11);
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{1, 2}));
}

TEST(TopK, NaNRanksHighest) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> y = run_op("TopK", {Tensor::from_floats({3}, {1, nan, 3}), k_of(2)}, {}, 2, 11);
  EXPECT_TRUE(std::isnan(y[0].data<float>()[0]));
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{1, 2}));
  y = run_op("TopK", {Tensor::from_floats({3}, {1, nan, 3}), k_of(2)}, {attr_int("largest", 0)}, 2, 11);
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{0, 2}));
}

TEST(TopK, DtypesAndOpsetForms) {
  const Tensor x = Tensor::from_int64s({4}, {int64_t{1} << 60, -5, (int64_t{1} << 60) + 1, 7});
  std::vector<Tensor> y = run_op("TopK", {x, k_of(2)}, {}, 2, 11);
  EXPECT_EQ(y[0].dtype(), DType::Int64);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{(int64_t{1} << 60) + 1, int64_t{1} << 60}));
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{2, 0}));
  const Tensor h = cast_tensor(Tensor::from_floats({3}, {0.5f, -2, 4}), DType::Float16);
  y = run_op("TopK", {h, k_of(1)}, {}, 2, 11);
  EXPECT_EQ(y[0].dtype(), DType::Float16);
  expect_tensor_near(y[0], {1}, {4});
  // Opset 1: k attribute, always largest.
  y = run_op("TopK", {Tensor::from_floats({3}, {5, 9, 1})}, {attr_int("k", 2)}, 2, 1);
  expect_tensor_near(y[0], {2}, {9, 5});
  EXPECT_EQ(run_op("TopK", {Tensor::from_floats({3}, {5, 9, 1}), k_of(0)}, {}, 2, 11)[0].shape(), (Shape{0}));
  EXPECT_THROW(run_op("TopK", {Tensor::from_floats({3}, {5, 9, 1}), k_of(4)}, {}, 2, 11), Error);
}

}  // namespace
}  // namespace ptq::test
