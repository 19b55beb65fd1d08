// Softmax / LogSoftmax. softmax([1,2,3]) = [0.09003057, 0.24472847, 0.66524096] (ONNX example);
// log of those is [-2.40760596, -1.40760596, -0.40760596].
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;

TEST(Softmax, SpecExample) {
  expect_tensor_near(run_op("Softmax", {Tensor::from_floats({1, 3}, {-1, 0, 1})})[0], {1, 3},
                     {0.09003057f, 0.24472847f, 0.66524096f});
  expect_tensor_near(run_op("LogSoftmax", {Tensor::from_floats({1, 3}, {-1, 0, 1})})[0], {1, 3},
                     {-2.40760596f, -1.40760596f, -0.40760596f});
}

TEST(Softmax, LargeNumbersDoNotOverflow) {
  // Shift-invariance: [10000, 10001, 10002] behaves like [0, 1, 2].
  expect_tensor_near(run_op("Softmax", {Tensor::from_floats({1, 3}, {10000, 10001, 10002})})[0], {1, 3},
                     {0.09003057f, 0.24472847f, 0.66524096f});
  expect_tensor_near(run_op("LogSoftmax", {Tensor::from_floats({1, 3}, {10000, 10001, 10002})})[0], {1, 3},
                     {-2.40760596f, -1.40760596f, -0.40760596f});
}

TEST(Softmax, Opset13SingleAxis) {
  // [2,3] normalised down axis 0: column pairs (0,1), (1,1), (2,0).
  // softmax([0,1]) = [0.26894142, 0.73105858]
  auto y = run_op("Softmax", {Tensor::from_floats({2, 3}, {0, 1, 2, 1, 1, 0})}, {attr_int("axis", 0)}, 1, 13);
  expect_tensor_near(y[0], {2, 3}, {0.26894142f, 0.5f, 0.88079708f, 0.73105858f, 0.5f, 0.11920292f});
}

TEST(Softmax, Opset11CoercesTo2D) {
  // [1,2,2] at axis 1 (default before 13): all four values form one row.
  const Tensor x = Tensor::from_floats({1, 2, 2}, {0, 0, 0, 0});
  expect_tensor_near(run_op("Softmax", {x}, {}, 1, 11)[0], {1, 2, 2}, {0.25f, 0.25f, 0.25f, 0.25f});
  // The same input at opset 13 (axis -1) normalises pairs.
  expect_tensor_near(run_op("Softmax", {x}, {}, 1, 13)[0], {1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
  // LogSoftmax opset 1 with axis=0 over [2,2]: one row of 4 -> log(1/4) each.
  expect_tensor_near(run_op("LogSoftmax", {Tensor::from_floats({2, 2}, {3, 3, 3, 3})}, {attr_int("axis", 0)}, 1, 1)[0],
                     {2, 2}, {-1.38629436f, -1.38629436f, -1.38629436f, -1.38629436f});
}

TEST(Softmax, MiddleAxisAndNegativeAxis) {
  // [1,2,2] over axis 1 == axis -2: pairs (x[0,0,j], x[0,1,j]).
  const Tensor x = Tensor::from_floats({1, 2, 2}, {0, 5, 1, 5});
  const std::vector<float> expect = {0.26894142f, 0.5f, 0.73105858f, 0.5f};
  expect_tensor_near(run_op("Softmax", {x}, {attr_int("axis", 1)}, 1, 13)[0], {1, 2, 2}, expect);
  expect_tensor_near(run_op("Softmax", {x}, {attr_int("axis", -2)}, 1, 13)[0], {1, 2, 2}, expect);
  EXPECT_THROW(run_op("Softmax", {x}, {attr_int("axis", 3)}, 1, 13), Error);
}

TEST(Softmax, HardmaxFirstMaximum) {
  // Ties pick the first maximum; axis -1 (opset 13).
  const Tensor x = Tensor::from_floats({2, 3}, {1, 3, 3, -1, -2, -3});
  expect_tensor_near(run_op("Hardmax", {x})[0], {2, 3}, {0, 1, 0, 1, 0, 0});
  expect_tensor_near(run_op("Hardmax", {x}, {attr_int("axis", 0)})[0], {2, 3}, {1, 1, 1, 0, 0, 0});
  // Before opset 13 the input is coerced to 2-D at axis (default 1): one hot over all trailing dims.
  expect_tensor_near(run_op("Hardmax", {Tensor::from_floats({1, 2, 2}, {1, 4, 2, 3})}, {}, 1, 11)[0], {1, 2, 2},
                     {0, 1, 0, 0});
}

TEST(Softmax, NegativeLogLikelihoodAndCrossEntropyLoss) {
  // Log-probabilities [[-1, -2], [-3, -4]], targets [1, 0]: losses [2, 3].
  const Tensor lp = Tensor::from_floats({2, 2}, {-1, -2, -3, -4});
  const Tensor target = Tensor::from_int64s({2}, {1, 0});
  const auto reduce = [](const char* r) { return std::vector<ir::Attribute>{test::attr_string("reduction", r)}; };
  expect_tensor_near(run_op("NegativeLogLikelihoodLoss", {lp, target}, reduce("none"))[0], {2}, {2, 3});
  expect_tensor_near(run_op("NegativeLogLikelihoodLoss", {lp, target}, reduce("sum"))[0], {}, {5});
  expect_tensor_near(run_op("NegativeLogLikelihoodLoss", {lp, target})[0], {}, {2.5f});
  // Class weights [1, 3]: losses [6, 3], the mean divides by the weights 3 + 1.
  expect_tensor_near(run_op("NegativeLogLikelihoodLoss", {lp, target, Tensor::from_floats({2}, {1, 3})})[0], {},
                     {9.0f / 4});
  // ignore_index 1 drops the first target from the sum and from the mean's count.
  expect_tensor_near(run_op("NegativeLogLikelihoodLoss", {lp, target}, {attr_int("ignore_index", 1)})[0], {}, {3});
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {lp, Tensor::from_int64s({2}, {2, 0})}), Error);
  EXPECT_THROW(run_op("NegativeLogLikelihoodLoss", {lp, target}, reduce("max")), Error);
  // Cross entropy of equal scores over 2 classes is log 2; log_prob is log(1/2) everywhere.
  const auto sce =
      run_op("SoftmaxCrossEntropyLoss", {Tensor::from_floats({1, 2}, {5, 5}), Tensor::from_int64s({1}, {0})}, {}, 2);
  expect_tensor_near(sce[0], {}, {0.69314718f});
  expect_tensor_near(sce[1], {1, 2}, {-0.69314718f, -0.69314718f});
}

}  // namespace
}  // namespace ptq
