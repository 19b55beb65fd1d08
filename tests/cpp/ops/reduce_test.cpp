// Reductions and ArgMax/ArgMin, using the ONNX operator examples' data and hand sums.
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::attr_ints;
using test::expect_tensor_near;
using test::run_op;

// ONNX ReduceMean/Max/Min example data, shape [3,2,2].
const Tensor kExample = Tensor::from_floats({3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2});
// 1..12, shape [3,2,2] (ReduceSum/Prod/L2/SumSquare examples).
const Tensor kSeq = Tensor::from_floats({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});

TEST(Reduce, MeanMaxMinOverMiddleAxis) {
  const std::vector<ir::Attribute> a = {attr_ints("axes", {1}), attr_int("keepdims", 1)};
  expect_tensor_near(run_op("ReduceMean", {kExample}, a, 1, 13)[0], {3, 1, 2}, {12.5f, 1.5f, 35, 1.5f, 57.5f, 1.5f});
  expect_tensor_near(run_op("ReduceMax", {kExample}, a, 1, 13)[0], {3, 1, 2}, {20, 2, 40, 2, 60, 2});
  expect_tensor_near(run_op("ReduceMin", {kExample}, a, 1, 13)[0], {3, 1, 2}, {5, 1, 30, 1, 55, 1});
}

TEST(Reduce, DefaultAxesReduceEverything) {
  // (5+1+20+2+30+1+40+2+55+1+60+2) / 12 = 219 / 12 = 18.25
  expect_tensor_near(run_op("ReduceMean", {kExample}, {}, 1, 13)[0], {1, 1, 1}, {18.25f});
  expect_tensor_near(run_op("ReduceMean", {kExample}, {attr_int("keepdims", 0)}, 1, 13)[0], {}, {18.25f});
  expect_tensor_near(run_op("ReduceProd", {kSeq}, {}, 1, 13)[0], {1, 1, 1}, {479001600.0f});
}

TEST(Reduce, SumAxesInputFromOpset13) {
  const Tensor axes = Tensor::from_int64s({1}, {1});
  expect_tensor_near(run_op("ReduceSum", {kSeq, axes}, {}, 1, 13)[0], {3, 1, 2}, {4, 6, 12, 14, 20, 22});
  expect_tensor_near(run_op("ReduceSum", {kSeq, axes}, {attr_int("keepdims", 0)}, 1, 13)[0], {3, 2},
                     {4, 6, 12, 14, 20, 22});
  expect_tensor_near(run_op("ReduceSum", {kSeq, Tensor::from_int64s({1}, {-2})}, {}, 1, 13)[0], {3, 1, 2},
                     {4, 6, 12, 14, 20, 22});
  // Absent or empty axes: reduce all (78), unless noop_with_empty_axes.
  expect_tensor_near(run_op("ReduceSum", {kSeq}, {}, 1, 13)[0], {1, 1, 1}, {78});
  expect_tensor_near(run_op("ReduceSum", {kSeq, Tensor::from_int64s({0}, {})}, {}, 1, 13)[0], {1, 1, 1}, {78});
  auto noop = run_op("ReduceSum", {kSeq, Tensor::from_int64s({0}, {})}, {attr_int("noop_with_empty_axes", 1)}, 1, 13);
  expect_tensor_near(noop[0], {3, 2, 2}, kSeq.to_float_vector());
  // Before opset 13 axes is an attribute.
  expect_tensor_near(run_op("ReduceSum", {kSeq}, {attr_ints("axes", {0, 2}), attr_int("keepdims", 0)}, 1, 11)[0], {2},
                     {1 + 2 + 5 + 6 + 9 + 10, 3 + 4 + 7 + 8 + 11 + 12});
}

TEST(Reduce, AxesInputFromOpset18ForTheOthers) {
  const Tensor axes = Tensor::from_int64s({1}, {1});
  expect_tensor_near(run_op("ReduceMax", {kExample, axes}, {}, 1, 18)[0], {3, 1, 2}, {20, 2, 40, 2, 60, 2});
  EXPECT_THROW(run_op("ReduceMax", {kExample}, {attr_ints("axes", {1})}, 1, 18), Error);
  EXPECT_THROW(run_op("ReduceMean", {kExample, axes}, {}, 1, 13), Error);
}

TEST(Reduce, ProdL2SumSquare) {
  const std::vector<ir::Attribute> a1 = {attr_ints("axes", {1})};
  expect_tensor_near(run_op("ReduceProd", {kSeq}, a1, 1, 13)[0], {3, 1, 2}, {3, 8, 35, 48, 99, 120});
  expect_tensor_near(run_op("ReduceSumSquare", {kSeq}, a1, 1, 13)[0], {3, 1, 2}, {10, 20, 74, 100, 202, 244});
  // Over the last axis: sqrt(1+4), sqrt(9+16), sqrt(25+36), ...
  auto l2 = run_op("ReduceL2", {kSeq}, {attr_ints("axes", {2}), attr_int("keepdims", 0)}, 1, 13);
  expect_tensor_near(l2[0], {3, 2},
                     {std::sqrt(5.0f), 5, std::sqrt(61.0f), std::sqrt(113.0f), std::sqrt(181.0f), std::sqrt(265.0f)});
}

TEST(Reduce, NonAdjacentAxes) {
  // x[a,b,c] = 6a + 2b + c over [2,3,2]; summing a and c gives 8b + 14.
  Tensor x(DType::Float, {2, 3, 2});
  for (int i = 0; i < 12; ++i) x.mutable_data<float>()[i] = static_cast<float>(i);
  expect_tensor_near(run_op("ReduceSum", {x}, {attr_ints("axes", {0, 2}), attr_int("keepdims", 0)}, 1, 11)[0], {3},
                     {14, 22, 30});
  // Mean over the same axes: (8b + 14) / 4.
  expect_tensor_near(run_op("ReduceMean", {x}, {attr_ints("axes", {2, 0})}, 1, 13)[0], {1, 3, 1}, {3.5f, 5.5f, 7.5f});
}

TEST(Reduce, Int64ShapeArithmetic) {
  const Tensor s = Tensor::from_int64s({4}, {2, 3, 4, 5});
  auto p = run_op("ReduceProd", {s}, {attr_int("keepdims", 0)}, 1, 13);
  EXPECT_EQ(p[0].dtype(), DType::Int64);
  EXPECT_EQ(p[0].to_int64_vector(), (std::vector<int64_t>{120}));
  auto m = run_op("ReduceMax", {s}, {attr_int("keepdims", 1)}, 1, 13);
  EXPECT_EQ(m[0].to_int64_vector(), (std::vector<int64_t>{5}));
}

TEST(Reduce, BadAxisRejected) {
  EXPECT_THROW(run_op("ReduceMean", {kSeq}, {attr_ints("axes", {3})}, 1, 13), Error);
}

TEST(ArgMax, SpecExamples) {
  const Tensor x = Tensor::from_floats({2, 2}, {2, 1, 3, 10});
  auto a0 = run_op("ArgMax", {x}, {}, 1, 13);  // default axis 0, keepdims
  EXPECT_EQ(a0[0].dtype(), DType::Int64);
  EXPECT_EQ(a0[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(a0[0].to_int64_vector(), (std::vector<int64_t>{1, 1}));
  auto a1 = run_op("ArgMax", {x}, {attr_int("axis", 1), attr_int("keepdims", 0)}, 1, 13);
  EXPECT_EQ(a1[0].shape(), (Shape{2}));
  EXPECT_EQ(a1[0].to_int64_vector(), (std::vector<int64_t>{0, 1}));
  auto m1 = run_op("ArgMin", {x}, {attr_int("axis", -1)}, 1, 13);
  EXPECT_EQ(m1[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(m1[0].to_int64_vector(), (std::vector<int64_t>{1, 0}));
}

TEST(ArgMax, SelectLastIndexOnTies) {
  const Tensor x = Tensor::from_floats({2, 2}, {2, 2, 3, 10});
  const std::vector<ir::Attribute> a = {attr_int("axis", 1), attr_int("keepdims", 1)};
  EXPECT_EQ(run_op("ArgMax", {x}, a, 1, 13)[0].to_int64_vector(), (std::vector<int64_t>{0, 1}));
  auto last = a;
  last.push_back(attr_int("select_last_index", 1));
  EXPECT_EQ(run_op("ArgMax", {x}, last, 1, 13)[0].to_int64_vector(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(run_op("ArgMin", {x}, last, 1, 13)[0].to_int64_vector(), (std::vector<int64_t>{1, 0}));
}

TEST(ArgMax, MiddleAxisOfInt64) {
  // [1,3,2]: columns (4,9,9) and (7,-1,7) along axis 1.
  const Tensor x = Tensor::from_int64s({1, 3, 2}, {4, 7, 9, -1, 9, 7});
  EXPECT_EQ(run_op("ArgMax", {x}, {attr_int("axis", 1), attr_int("keepdims", 0)}, 1, 13)[0].to_int64_vector(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run_op("ArgMin", {x}, {attr_int("axis", 1), attr_int("keepdims", 0)}, 1, 13)[0].to_int64_vector(),
            (std::vector<int64_t>{0, 1}));
}

TEST(Reduce, L1LogSumLogSumExp) {
  const Tensor x = Tensor::from_floats({2, 2}, {1, -2, 3, -4});
  expect_tensor_near(run_op("ReduceL1", {x}, {attr_ints("axes", {1})}, 1, 13)[0], {2, 1}, {3, 7});
  expect_tensor_near(run_op("ReduceLogSum", {Tensor::from_floats({3}, {1, 2, 4})}, {}, 1, 13)[0], {1},
                     {std::log(7.0f)});
  // log(e^1000 + e^1000) = 1000 + log 2 without overflow; log(e^0 + e^-inf) = 0.
  const float inf = std::numeric_limits<float>::infinity();
  expect_tensor_near(run_op("ReduceLogSumExp", {Tensor::from_floats({2, 2}, {1000, 1000, 0, -inf})},
                            {attr_ints("axes", {1}), attr_int("keepdims", 0)}, 1, 13)[0],
                     {2}, {1000.6931472f, 0});
  expect_tensor_near(run_op("ReduceLogSumExp", {Tensor::from_floats({3}, {1, 2, 3})}, {}, 1, 18)[0], {1},
                     {3.40760596f});  // log(e + e^2 + e^3)
}

}  // namespace
}  // namespace ptq
