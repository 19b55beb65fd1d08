// Normalisation ops. Batch/InstanceNormalization use the ONNX examples; the other expected values
// are hand computations (mean, population variance, 1/sqrt(var + eps)) noted beside each case.
#include <cmath>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_float;
using test::attr_int;
using test::expect_tensor_near;
using test::run_op;

Tensor f(Shape s, std::vector<float> v) { return Tensor::from_floats(std::move(s), v); }

TEST(BatchNorm, SpecExampleInference) {
  // y = s * (x - mean) / sqrt(var + 1e-5) + bias per channel.
  auto y = run_op("BatchNormalization", {f({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}), f({2}, {1, 1.5f}), f({2}, {0, 1}),
                                         f({2}, {0, 3}), f({2}, {1, 1.5f})},
                  {}, 1, 15);
  expect_tensor_near(y[0], {1, 2, 1, 3}, {-0.999995f, 0, 0.999995f, -0.22474079f, 1, 2.22474079f});
}

TEST(BatchNorm, Rank2AndOldOpsets) {
  // [N=2, C=2], epsilon 0: channel 0 -> (x - 1) / 2, channel 1 -> 3x + 1.
  const std::vector<Tensor> in = {f({2, 2}, {1, 0, 5, 2}), f({2}, {1, 3}), f({2}, {0, 1}), f({2}, {1, 0}),
                                  f({2}, {4, 1})};
  for (int opset : {6, 7, 9, 14}) {
    SCOPED_TRACE(opset);
    expect_tensor_near(run_op("BatchNormalization", in, {attr_float("epsilon", 0)}, 1, opset)[0], {2, 2},
                       {0, 1, 2, 7});
  }
}

TEST(BatchNorm, SpatialZeroUsesPerElementParameters) {
  // Opset 7 spatial=0: parameters have shape [C, W] = [1, 2]. y = (x - mean) * s / sqrt(var).
  auto y = run_op("BatchNormalization",
                  {f({1, 1, 2}, {2, 4}), f({1, 2}, {1, 2}), f({1, 2}, {0, 0}), f({1, 2}, {0, 2}), f({1, 2}, {1, 4})},
                  {attr_int("spatial", 0), attr_float("epsilon", 0)}, 1, 7);
  expect_tensor_near(y[0], {1, 1, 2}, {2, 2});
}

TEST(BatchNorm, TrainingModeOutputsRunningStatistics) {
  // One channel, values {1,3,5,7}: batch mean 4, population variance 5.
  // running_mean = 0 * 0.9 + 4 * 0.1 = 0.4; running_var = 1 * 0.9 + 5 * 0.1 = 1.4.
  auto y = run_op("BatchNormalization", {f({2, 1, 1, 2}, {1, 3, 5, 7}), f({1}, {1}), f({1}, {0}), f({1}, {0}), f({1}, {1})},
                  {attr_int("training_mode", 1)}, 3, 15);
  expect_tensor_near(y[0], {2, 1, 1, 2}, {-1.34163944f, -0.44721315f, 0.44721315f, 1.34163944f});
  expect_tensor_near(y[1], {1}, {0.4f});
  expect_tensor_near(y[2], {1}, {1.4f});
}

TEST(BatchNorm, ParameterShapeMismatchRejected) {
  EXPECT_THROW(run_op("BatchNormalization", {f({1, 2, 1}, {1, 2}), f({3}, {1, 1, 1}), f({2}, {0, 0}), f({2}, {0, 0}),
                                             f({2}, {1, 1})}),
               Error);
}

TEST(InstanceNorm, SpecExample) {
  // Per (n, c) over the 3 spatial values: means 0 and 3, variance 2/3 for both.
  auto y = run_op("InstanceNormalization", {f({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}), f({2}, {1, 1.5f}), f({2}, {0, 1})},
                  {}, 1, 6);
  expect_tensor_near(y[0], {1, 2, 1, 3}, {-1.22473569f, 0, 1.22473569f, -0.83710353f, 1, 2.83710353f});
}

TEST(LayerNorm, LastAxisWithBiasAndStatistics) {
  // Rows [1,2,3] (mean 2, var 2/3) and [2,4,6] (mean 4, var 8/3); B = [0, 0, 1].
  auto y = run_op("LayerNormalization", {f({2, 3}, {1, 2, 3, 2, 4, 6}), f({3}, {1, 1, 1}), f({3}, {0, 0, 1})}, {}, 3, 17);
  expect_tensor_near(y[0], {2, 3}, {-1.22473569f, 0, 2.22473569f, -1.22474258f, 0, 2.22474258f});
  expect_tensor_near(y[1], {2, 1}, {2, 4});
  expect_tensor_near(y[2], {2, 1}, {1.22473569f, 0.61237129f});
}

TEST(LayerNorm, AxisZeroBroadcastsScaleAndOmitsBias) {
  // All six values: mean 3, var 8/3; Scale [3] = [1,2,3] broadcasts over the normalised [2,3].
  auto y = run_op("LayerNormalization", {f({2, 3}, {1, 2, 3, 2, 4, 6}), f({3}, {1, 2, 3})}, {attr_int("axis", 0)}, 1, 17);
  expect_tensor_near(y[0], {2, 3}, {-1.22474258f, -1.22474258f, 0, -0.61237129f, 1.22474258f, 5.51134159f});
  EXPECT_THROW(run_op("LayerNormalization", {f({2, 3}, {1, 2, 3, 2, 4, 6}), f({2}, {1, 2})}, {}, 1, 17), Error);
}

TEST(LayerNorm, EpsilonAndNegativeAxis) {
  // [1, 2, 2] with axis -2 normalises all four: mean 1.5, var 1.25, eps 0.75 -> 1/sqrt(2) = 0.70710678.
  auto y = run_op("LayerNormalization", {f({1, 2, 2}, {0, 1, 2, 3}), f({2, 2}, {1, 1, 1, 1})},
                  {attr_int("axis", -2), attr_float("epsilon", 0.75f)}, 3, 17);
  expect_tensor_near(y[0], {1, 2, 2}, {-1.06066017f, -0.35355339f, 0.35355339f, 1.06066017f});
  expect_tensor_near(y[1], {1, 1, 1}, {1.5f});
  expect_tensor_near(y[2], {1, 1, 1}, {0.70710678f});
}

TEST(LpNorm, P2P1AndZeroVector) {
  expect_tensor_near(run_op("LpNormalization", {f({2, 2}, {3, 4, 0, 0})}, {}, 1, 1)[0], {2, 2}, {0.6f, 0.8f, 0, 0});
  expect_tensor_near(run_op("LpNormalization", {f({1, 2}, {1, -3})}, {attr_int("p", 1)}, 1, 1)[0], {1, 2},
                     {0.25f, -0.75f});
  // axis 0: columns (3,4) and (1,1).
  expect_tensor_near(run_op("LpNormalization", {f({2, 2}, {3, 1, 4, 1})}, {attr_int("axis", 0)}, 1, 1)[0], {2, 2},
                     {0.6f, 0.70710678f, 0.8f, 0.70710678f});
  EXPECT_THROW(run_op("LpNormalization", {f({2}, {1, 2})}, {attr_int("p", 3)}, 1, 1), Error);
}

TEST(Norm, LrnHandWorked) {
  // size 3 over C = 3 at one pixel: channel 0 sums x0^2 + x1^2, channel 1 all three, channel 2
  // x1^2 + x2^2. alpha 3, beta 1, bias 1: y = x / (1 + 3 / 3 * sum).
  const Tensor x = f({1, 3, 1, 1}, {1, 2, 3});
  expect_tensor_near(run_op("LRN", {x}, {attr_int("size", 3), attr_float("alpha", 3), attr_float("beta", 1),
                                         attr_float("bias", 1)})[0],
                     {1, 3, 1, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14});
  EXPECT_THROW(run_op("LRN", {x}), Error);  // size is required
}

TEST(Norm, MeanVarianceNormalization) {
  // axes [1]: each row normalised; row [1, 3] has mean 2 and std 1 -> [-1, 1].
  const Tensor x = f({2, 2}, {1, 3, 10, 10});
  expect_tensor_near(run_op("MeanVarianceNormalization", {x}, {test::attr_ints("axes", {-1})})[0], {2, 2},
                     {-1, 1, 0, 0});
  // Default axes [0, 2, 3]: per channel over N, H, W.
  const Tensor y = f({2, 2, 1, 1}, {0, 5, 4, 5});
  expect_tensor_near(run_op("MeanVarianceNormalization", {y})[0], {2, 2, 1, 1}, {-1, 0, 1, 0});
  EXPECT_THROW(run_op("MeanVarianceNormalization", {x}), Error);  // default axes need rank 4
}

}  // namespace
}  // namespace ptq
