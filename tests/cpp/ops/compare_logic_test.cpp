// Comparisons, boolean logic and Where. Truth tables and the ONNX Where example, by hand.
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::run_op;

Tensor bools(Shape s, const std::vector<int>& v) {
  Tensor t(DType::Bool, std::move(s));
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
  return t;
}
Tensor int32s(Shape s, const std::vector<int32_t>& v) {
  Tensor t(DType::Int32, std::move(s));
  std::copy(v.begin(), v.end(), t.mutable_data<int32_t>());
  return t;
}
std::vector<int> bits(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::Bool);
  std::vector<int> r;
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.data<uint8_t>()[i]);
  return r;
}

TEST(Compare, FloatComparisons) {
  const Tensor a = Tensor::from_floats({4}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_floats({4}, {2, 2, 2, 2});
  EXPECT_EQ(bits(run_op("Equal", {a, b})[0]), (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(bits(run_op("Less", {a, b})[0]), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(bits(run_op("Greater", {a, b})[0]), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(bits(run_op("LessOrEqual", {a, b})[0]), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(bits(run_op("GreaterOrEqual", {a, b})[0]), (std::vector<int>{0, 1, 1, 1}));
}

TEST(Compare, IntegerTypesAndBroadcast) {
  // [2,3] vs [3]
  auto e = run_op("Equal", {int32s({2, 3}, {1, 2, 3, 3, 2, 1}), int32s({3}, {1, 2, 1})});
  EXPECT_EQ(e[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(bits(e[0]), (std::vector<int>{1, 1, 0, 0, 1, 1}));
  auto g = run_op("Greater", {Tensor::from_int64s({3}, {-5, 0, 9}), Tensor::from_int64s({}, {0})});
  EXPECT_EQ(bits(g[0]), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(bits(run_op("Equal", {bools({2}, {1, 0}), bools({2}, {1, 1})})[0]), (std::vector<int>{1, 0}));
  EXPECT_THROW(run_op("Less", {int32s({1}, {1}), Tensor::from_int64s({1}, {1})}), Error);
}

TEST(Logic, TruthTablesWithBroadcast) {
  const Tensor a = bools({2, 2}, {0, 0, 1, 1});
  const Tensor b = bools({2}, {0, 1});
  EXPECT_EQ(bits(run_op("And", {a, b})[0]), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(bits(run_op("Or", {a, b})[0]), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(bits(run_op("Xor", {a, b})[0]), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(bits(run_op("Not", {a})[0]), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_THROW(run_op("And", {Tensor::from_floats({1}, {1}), Tensor::from_floats({1}, {1})}), Error);
}

TEST(Where, SpecExample) {
  auto y = run_op("Where", {bools({2, 2}, {1, 0, 1, 1}), Tensor::from_floats({2, 2}, {1, 2, 3, 4}),
                            Tensor::from_floats({2, 2}, {9, 8, 7, 6})});
  test::expect_tensor_near(y[0], {2, 2}, {1, 8, 3, 4});
  auto l = run_op("Where", {bools({2, 2}, {1, 0, 1, 1}), Tensor::from_int64s({2, 2}, {1, 2, 3, 4}),
                            Tensor::from_int64s({2, 2}, {9, 8, 7, 6})});
  EXPECT_EQ(l[0].dtype(), DType::Int64);
  EXPECT_EQ(l[0].to_int64_vector(), (std::vector<int64_t>{1, 8, 3, 4}));
}

TEST(Where, BroadcastsAllThreeInputs) {
  // cond [2,1], x [1,3], y scalar -> [2,3]
  auto y = run_op("Where", {bools({2, 1}, {1, 0}), int32s({1, 3}, {1, 2, 3}), int32s({}, {-1})});
  EXPECT_EQ(y[0].dtype(), DType::Int32);
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  EXPECT_THROW(run_op("Where", {bools({2}, {1, 0}), int32s({2}, {1, 2}), Tensor::from_int64s({2}, {1, 2})}), Error);
  EXPECT_THROW(run_op("Where", {bools({3}, {1, 0, 1}), int32s({2}, {1, 2}), int32s({2}, {1, 2})}), Error);
}

}  // namespace
}  // namespace ptq
