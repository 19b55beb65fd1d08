// Elementwise math ops. Expected values are worked by hand (exact cases) or standard constants.
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::expect_tensor_near;
using test::run_op;

Tensor f(Shape s, std::vector<float> v) { return Tensor::from_floats(std::move(s), v); }

TEST(Unary, ExpLogSqrtReciprocal) {
  expect_tensor_near(run_op("Exp", {f({3}, {-1, 0, 1})})[0], {3}, {0.36787944f, 1, 2.71828183f});
  expect_tensor_near(run_op("Log", {f({2}, {1, 10})})[0], {2}, {0, 2.30258509f});
  expect_tensor_near(run_op("Sqrt", {f({3}, {1, 4, 9})})[0], {3}, {1, 2, 3});
  expect_tensor_near(run_op("Reciprocal", {f({2}, {-4, 2})})[0], {2}, {-0.25f, 0.5f});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_tensor_near(run_op("Sqrt", {f({1}, {-1})})[0], {1}, {nan});
}

TEST(Unary, NegAbsFloatAndInt64) {
  expect_tensor_near(run_op("Neg", {f({2}, {-4, 2})})[0], {2}, {4, -2});
  expect_tensor_near(run_op("Abs", {f({3}, {-1.5f, 0, 2})})[0], {3}, {1.5f, 0, 2});
  auto n = run_op("Neg", {Tensor::from_int64s({3}, {5, -7, 0})});
  EXPECT_EQ(n[0].dtype(), DType::Int64);
  EXPECT_EQ(n[0].to_int64_vector(), (std::vector<int64_t>{-5, 7, 0}));
  auto a = run_op("Abs", {Tensor::from_int64s({3}, {5, -7, 0})});
  EXPECT_EQ(a[0].to_int64_vector(), (std::vector<int64_t>{5, 7, 0}));
}

TEST(Unary, Erf) {
  // erf(0.5) = 0.5204998778, erf(-1) = -0.8427007929
  expect_tensor_near(run_op("Erf", {f({3}, {0, 0.5f, -1})})[0], {3}, {0, 0.52049988f, -0.84270079f});
}

TEST(Unary, FloorCeilSpecExamples) {
  expect_tensor_near(run_op("Floor", {f({3}, {-1.5f, 1.2f, 2})})[0], {3}, {-2, 1, 2});
  expect_tensor_near(run_op("Ceil", {f({2}, {-1.5f, 1.2f})})[0], {2}, {-1, 2});
}

TEST(Unary, RoundHalfToEven) {
  // ONNX Round example.
  auto y = run_op("Round", {f({15}, {0.1f, 0.5f, 0.9f, 1.2f, 1.5f, 1.8f, 2.3f, 2.5f, 2.7f, -1.1f, -1.5f, -1.9f,
                                      -2.2f, -2.5f, -2.8f})});
  expect_tensor_near(y[0], {15}, {0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3});
}

TEST(Unary, SinCos) {
  const float pi = 3.14159265f;
  expect_tensor_near(run_op("Sin", {f({3}, {0, pi / 2, pi / 6})})[0], {3}, {0, 1, 0.5f}, 1e-5f);
  expect_tensor_near(run_op("Cos", {f({3}, {0, pi / 3, pi})})[0], {3}, {1, 0.5f, -1}, 1e-5f);
}

TEST(Unary, Sign) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_tensor_near(run_op("Sign", {f({5}, {-5, 0, 3.5f, -0.0f, nan})})[0], {5}, {-1, 0, 1, 0, nan});
  EXPECT_EQ(run_op("Sign", {Tensor::from_int64s({3}, {-9, 0, 4})})[0].to_int64_vector(),
            (std::vector<int64_t>{-1, 0, 1}));
}

TEST(Unary, DoubleAndHalfKeepTheirDtype) {
  auto d = run_op("Exp", {cast_tensor(f({1}, {1}), DType::Double)});
  EXPECT_EQ(d[0].dtype(), DType::Double);
  EXPECT_DOUBLE_EQ(d[0].data<double>()[0], std::exp(1.0));
  auto h = run_op("Sqrt", {cast_tensor(f({2}, {4, 0.25f}), DType::Float16)});
  EXPECT_EQ(h[0].dtype(), DType::Float16);
  expect_tensor_near(h[0], {2}, {2, 0.5f});
}

TEST(Unary, RejectsIntegersForFloatOps) {
  EXPECT_THROW(run_op("Exp", {Tensor::from_int64s({1}, {1})}), Error);
  EXPECT_THROW(run_op("Neg", {Tensor(DType::UInt8, {1})}), Error);
}

TEST(Unary, EmptyTensor) {
  auto y = run_op("Exp", {Tensor(DType::Float, {0, 3})});
  EXPECT_EQ(y[0].shape(), (Shape{0, 3}));
}

TEST(Unary, TrigonometricAndHyperbolic) {
  // Standard values: tan(pi/4) = 1, asin(0.5) = pi/6, acos(0.5) = pi/3, atan(1) = pi/4,
  // sinh(1) = 1.17520119, cosh(1) = 1.54308063, asinh(1) = 0.88137359, acosh(2) = 1.31695790,
  // atanh(0.5) = 0.54930614.
  expect_tensor_near(run_op("Tan", {f({2}, {0, 0.78539816f})})[0], {2}, {0, 1});
  expect_tensor_near(run_op("Asin", {f({2}, {0.5f, -1})})[0], {2}, {0.52359878f, -1.57079633f});
  expect_tensor_near(run_op("Acos", {f({2}, {0.5f, 1})})[0], {2}, {1.04719755f, 0});
  expect_tensor_near(run_op("Atan", {f({2}, {1, -1})})[0], {2}, {0.78539816f, -0.78539816f});
  expect_tensor_near(run_op("Sinh", {f({2}, {1, 0})})[0], {2}, {1.17520119f, 0});
  expect_tensor_near(run_op("Cosh", {f({2}, {1, 0})})[0], {2}, {1.54308063f, 1});
  expect_tensor_near(run_op("Asinh", {f({1}, {1})})[0], {1}, {0.88137359f});
  expect_tensor_near(run_op("Acosh", {f({1}, {2})})[0], {1}, {1.3169579f});
  expect_tensor_near(run_op("Atanh", {f({1}, {0.5f})})[0], {1}, {0.54930614f});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_tensor_near(run_op("Asin", {f({1}, {2})})[0], {1}, {nan});  // outside the domain
  EXPECT_THROW(run_op("Tan", {Tensor::from_int64s({1}, {1})}), Error);
}

TEST(Unary, IsNaNIsInf) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = f({4}, {1, inf, -inf, nan});
  const Tensor n = run_op("IsNaN", {x})[0];
  EXPECT_EQ(n.dtype(), DType::Bool);
  EXPECT_EQ(n.to_int64_vector(), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(run_op("IsInf", {x})[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(run_op("IsInf", {x}, {test::attr_int("detect_negative", 0)})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(run_op("IsInf", {x}, {test::attr_int("detect_positive", 0)})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_THROW(run_op("IsInf", {x}, {test::attr_int("detect_positive", 2)}), Error);
}

}  // namespace
}  // namespace ptq
