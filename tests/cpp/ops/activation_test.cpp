// Activations, including the Horizon fused ones. Expected values are by hand from the formulas
// (constants: e^-1 = 0.36787944, sigmoid(1) = 0.73105858, tanh(1) = 0.76159416) or ONNX examples.
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_float;
using test::attr_string;
using test::expect_tensor_near;
using test::run_op;

Tensor f(Shape s, std::vector<float> v) { return Tensor::from_floats(std::move(s), v); }
const Tensor kM101 = Tensor::from_floats({3}, {-1, 0, 1});

TEST(Activation, Relu) {
  expect_tensor_near(run_op("Relu", {f({4}, {-1, 0, 2, -0.5f})})[0], {4}, {0, 0, 2, 0});
  Tensor i8(DType::Int8, {3});
  const int8_t v[3] = {-5, 0, 7};
  std::copy(v, v + 3, i8.mutable_data<int8_t>());
  auto y = run_op("Relu", {i8}, {}, 1, 14);
  EXPECT_EQ(y[0].dtype(), DType::Int8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 0, 7}));
}

TEST(Activation, LeakyReluSpecExampleAndDefault) {
  expect_tensor_near(run_op("LeakyRelu", {kM101}, {attr_float("alpha", 0.1f)})[0], {3}, {-0.1f, 0, 1});
  expect_tensor_near(run_op("LeakyRelu", {f({1}, {-3})})[0], {1}, {-0.03f});
}

TEST(Activation, PReluPerChannelSlope) {
  // x [1,2,1,2]; slope [2,1,1] = {0.5, 0.25} applies per channel.
  auto y = run_op("PRelu", {f({1, 2, 1, 2}, {-1, 2, -3, 4}), f({2, 1, 1}, {0.5f, 0.25f})});
  expect_tensor_near(y[0], {1, 2, 1, 2}, {-0.5f, 2, -0.75f, 4});
}

TEST(Activation, PReluTrailingSlopeAndBadShape) {
  auto y = run_op("PRelu", {f({2, 2}, {-1, -1, 3, -2}), f({2}, {0.1f, 0.2f})});
  expect_tensor_near(y[0], {2, 2}, {-0.1f, -0.2f, 3, -0.4f});
  // The slope must broadcast to x, not enlarge it.
  EXPECT_THROW(run_op("PRelu", {f({2}, {1, 2}), f({3, 2}, {1, 2, 3, 4, 5, 6})}), Error);
}

TEST(Activation, EluSelu) {
  // Elu alpha=2: 2*(e^-1 - 1) = -1.26424112. Selu alpha=2 gamma=3: 3*2*(e^-1 - 1) = -3.79272335.
  expect_tensor_near(run_op("Elu", {kM101}, {attr_float("alpha", 2)})[0], {3}, {-1.26424112f, 0, 1});
  expect_tensor_near(run_op("Selu", {kM101}, {attr_float("alpha", 2), attr_float("gamma", 3)})[0], {3},
                     {-3.79272335f, 0, 3});
  // Default Selu: gamma * alpha * (e^-1 - 1) = 1.0507 * 1.6733 * -0.63212056 = -1.11133074
  expect_tensor_near(run_op("Selu", {kM101})[0], {3}, {-1.11133074f, 0, 1.05070102f});
}

TEST(Activation, ClipInputsOpset11Plus) {
  const Tensor x = f({5}, {-2, -1, 0, 1, 2});
  expect_tensor_near(run_op("Clip", {x, f({}, {-1}), f({}, {1})})[0], {5}, {-1, -1, 0, 1, 1});
  expect_tensor_near(run_op("Clip", {x, f({}, {0})})[0], {5}, {0, 0, 0, 1, 2});
  expect_tensor_near(run_op("Clip", {x, Tensor(), f({}, {0.5f})})[0], {5}, {-2, -1, 0, 0.5f, 0.5f});
  expect_tensor_near(run_op("Clip", {x})[0], {5}, {-2, -1, 0, 1, 2});
  // min > max: every element becomes max.
  expect_tensor_near(run_op("Clip", {x, f({}, {2}), f({}, {1})})[0], {5}, {1, 1, 1, 1, 1});
}

TEST(Activation, ClipAttributesBeforeOpset11) {
  const Tensor x = f({4}, {-7, -1, 3, 9});
  expect_tensor_near(run_op("Clip", {x}, {attr_float("min", -2), attr_float("max", 4)}, 1, 6)[0], {4},
                     {-2, -1, 3, 4});
  expect_tensor_near(run_op("Clip", {x}, {attr_float("max", 0)}, 1, 6)[0], {4}, {-7, -1, 0, 0});
}

TEST(Activation, ClipInt8) {
  Tensor x(DType::Int8, {3}), lo(DType::Int8, {});
  const int8_t v[3] = {-100, 5, 100};
  std::copy(v, v + 3, x.mutable_data<int8_t>());
  lo.mutable_data<int8_t>()[0] = 0;
  auto y = run_op("Clip", {x, lo}, {}, 1, 13);
  EXPECT_EQ(y[0].dtype(), DType::Int8);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 5, 100}));
}

TEST(Activation, SigmoidTanh) {
  expect_tensor_near(run_op("Sigmoid", {kM101})[0], {3}, {0.26894142f, 0.5f, 0.73105858f});
  expect_tensor_near(run_op("Tanh", {kM101})[0], {3}, {-0.76159416f, 0, 0.76159416f});
  // No overflow for large magnitudes.
  expect_tensor_near(run_op("Sigmoid", {f({2}, {-100, 100})})[0], {2}, {0, 1});
}

// The float32 Sigmoid runs on a vector exp: against the double-precision formula over a dense sweep
// of [-90, 90] (plus the specials) it stays within 4 ulps (or 1e-37 absolute where the exact value
// underflows), whatever the tensor length (tail elements take the same path).
TEST(Activation, SigmoidFloat32WithinFourUlpsOfExact) {
  std::vector<float> x;
  for (int i = -90000; i <= 90000; ++i) x.push_back(static_cast<float>(i) * 1e-3f);
  x.push_back(1e-30f);
  const size_t n = x.size();  // odd: exercises the tail
  ASSERT_NE(n % 4, 0u);
  const std::vector<float> y = run_op("Sigmoid", {f({static_cast<int64_t>(n)}, x)})[0].to_float_vector();
  for (size_t i = 0; i < n; ++i) {
    const double exact = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
    const double ulp = std::max(std::fabs(exact) * 1.1920929e-7, 1e-37);
    ASSERT_LE(std::fabs(y[i] - exact), 4 * ulp) << "x = " << x[i];
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> s = run_op("Sigmoid", {f({3}, {inf, -inf, std::nanf("")})})[0].to_float_vector();
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_LT(s[1], 1e-37f);
  EXPECT_TRUE(std::isnan(s[2]));
  // Swish (HzSwish) shares it: x * sigmoid(x).
  const std::vector<float> w = run_op("HzSwish", {f({2}, {1.0f, -2.0f})}, {}, 1, 1, "horizon")[0].to_float_vector();
  EXPECT_NEAR(w[0], 0.73105858f, 1e-7f);
  EXPECT_NEAR(w[1], -2.0f * 0.11920292f, 1e-7f);
}

TEST(Activation, HardSigmoidHardSwish) {
  expect_tensor_near(run_op("HardSigmoid", {kM101}, {attr_float("alpha", 0.5f), attr_float("beta", 0.6f)})[0], {3},
                     {0.1f, 0.6f, 1});
  // x * clip(x/6 + 0.5, 0, 1)
  const Tensor x = f({5}, {-4, -1, 0, 1, 4});
  expect_tensor_near(run_op("HardSwish", {x})[0], {5}, {0, -1.0f / 3, 0, 2.0f / 3, 4});
  expect_tensor_near(run_op("HzHardSwish", {x}, {}, 1, 1, "horizon")[0], {5}, {0, -1.0f / 3, 0, 2.0f / 3, 4});
}

TEST(Activation, SoftplusMish) {
  // softplus(-1) = ln(1 + e^-1) = 0.31326169; softplus(1) = 1.31326169
  expect_tensor_near(run_op("Softplus", {kM101})[0], {3}, {0.31326169f, 0.69314718f, 1.31326169f});
  expect_tensor_near(run_op("Softplus", {f({2}, {100, -100})})[0], {2}, {100, 0});
  // mish(x) = x * tanh(softplus(x))
  expect_tensor_near(run_op("Mish", {kM101})[0], {3}, {-0.30340146f, 0, 0.86509839f});
  expect_tensor_near(run_op("HzMish", {kM101}, {}, 1, 1, "horizon")[0], {3}, {-0.30340146f, 0, 0.86509839f});
}

TEST(Activation, GeluExactAndTanh) {
  const Tensor x = f({4}, {-1, 0, 1, 2});
  // 0.5 x (1 + erf(x / sqrt 2))
  const std::vector<float> exact = {-0.15865525f, 0, 0.84134475f, 1.95449974f};
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  const std::vector<float> approx = {-0.15880801f, 0, 0.84119199f, 1.95459769f};
  expect_tensor_near(run_op("Gelu", {x}, {}, 1, 20)[0], {4}, exact);
  expect_tensor_near(run_op("Gelu", {x}, {attr_string("approximate", "tanh")}, 1, 20)[0], {4}, approx);
  expect_tensor_near(run_op("HzGelu", {x}, {}, 1, 1, "horizon")[0], {4}, exact);
  expect_tensor_near(run_op("HzGelu", {x}, {attr_string("approximate", "tanh")}, 1, 1, "horizon")[0], {4}, approx);
  EXPECT_THROW(run_op("Gelu", {x}, {attr_string("approximate", "fast")}, 1, 20), Error);
}

TEST(Activation, HorizonSwishRsqrt) {
  expect_tensor_near(run_op("HzSwish", {kM101}, {}, 1, 1, "horizon")[0], {3}, {-0.26894142f, 0, 0.73105858f});
  expect_tensor_near(run_op("HzRsqrt", {f({2}, {4, 0.25f})}, {}, 1, 1, "horizon")[0], {2}, {0.5f, 2});
  // Older models carry Hz ops with an empty domain; the registry maps them to "horizon".
  expect_tensor_near(run_op("HzSwish", {kM101}, {}, 1, 1, "")[0], {3}, {-0.26894142f, 0, 0.73105858f});
}

TEST(Activation, SoftsignShrinkThresholdedReluCelu) {
  expect_tensor_near(run_op("Softsign", {f({3}, {-3, 0, 1})})[0], {3}, {-0.75f, 0, 0.5f});
  // Shrink lambd 1.5, bias 1: x < -1.5 -> x + 1, x > 1.5 -> x - 1, else 0.
  expect_tensor_near(run_op("Shrink", {f({5}, {-2, -1.5f, 0, 1.5f, 2})}, {attr_float("lambd", 1.5f), attr_float("bias", 1)})[0],
                     {5}, {-1, 0, 0, 0, 1});
  expect_tensor_near(run_op("ThresholdedRelu", {f({3}, {0.5f, 1, 2})})[0], {3}, {0, 0, 2});
  expect_tensor_near(run_op("ThresholdedRelu", {f({3}, {0.5f, 1, 2})}, {attr_float("alpha", 0.25f)})[0], {3},
                     {0.5f, 1, 2});
  // Celu alpha 2: x <= 0 -> 2 * (exp(x / 2) - 1); celu(-2) = 2 * (e^-1 - 1) = -1.26424112.
  expect_tensor_near(run_op("Celu", {f({3}, {-2, 0, 3})}, {attr_float("alpha", 2)})[0], {3}, {-1.26424112f, 0, 3});
  EXPECT_THROW(run_op("Celu", {f({1}, {1})}, {attr_float("alpha", 0)}), Error);
}

}  // namespace
}  // namespace ptq
