// Pad and HzPad: the ONNX spec examples for every mode plus hand-worked edge cases.
#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }

const Tensor& spec_x() {
  static const Tensor t = Tensor::from_floats({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  return t;
}

TEST(Pad, SpecExamplesAllModes) {
  const Tensor pads = ints({0, 2, 0, 0});
  expect_tensor_near(run_op("Pad", {spec_x(), pads, Tensor::from_floats({}, {0})}, {attr_string("mode", "constant")})[0],
                     {3, 4}, {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f});
  expect_tensor_near(run_op("Pad", {spec_x(), pads}, {attr_string("mode", "reflect")})[0], {3, 4},
                     {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f});
  expect_tensor_near(run_op("Pad", {spec_x(), pads}, {attr_string("mode", "edge")})[0], {3, 4},
                     {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
  expect_tensor_near(run_op("Pad", {spec_x(), ints({2, 1, 1, 1})}, {attr_string("mode", "wrap")}, 1, 19)[0], {6, 4},
                     {3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                      3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f});
  EXPECT_THROW(run_op("Pad", {spec_x(), pads}, {attr_string("mode", "wrap")}, 1, 18), Error);
  EXPECT_THROW(run_op("Pad", {spec_x(), pads}, {attr_string("mode", "mirror")}), Error);
}

TEST(Pad, ConstantValueAttributeFormAndAxes) {
  const Tensor x = Tensor::from_floats({1, 2}, {1, 2});
  // Opset 2: pads/value attributes.
  expect_tensor_near(run_op("Pad", {x}, {attr_ints("pads", {0, 1, 1, 0}), attr_float("value", 9)}, 1, 2)[0], {2, 3},
                     {9, 1, 2, 9, 9, 9});
  // Opset 18 axes input: pad only axis -1 by (1, 2).
  expect_tensor_near(run_op("Pad", {x, ints({1, 2}), Tensor::from_floats({}, {-1}), ints({-1})}, {}, 1, 18)[0], {1, 5},
                     {-1, 1, 2, -1, -1});
}

TEST(Pad, NegativePadsCropAndReflectFoldsRepeatedly) {
  const Tensor x = Tensor::from_floats({5}, {1, 2, 3, 4, 5});
  expect_tensor_near(run_op("Pad", {x, ints({-1, 2})}, {attr_string("mode", "reflect")})[0], {6}, {2, 3, 4, 5, 4, 3});
  expect_tensor_near(run_op("Pad", {x, ints({-2, -1})})[0], {2}, {3, 4});
  // numpy reflect of [1,2,3] by 4 on the left: ...1,2,3,2 | 1,2,3.
  const Tensor y = Tensor::from_floats({3}, {1, 2, 3});
  expect_tensor_near(run_op("Pad", {y, ints({4, 0})}, {attr_string("mode", "reflect")})[0], {7}, {1, 2, 3, 2, 1, 2, 3});
  expect_tensor_near(run_op("Pad", {y, ints({0, 4})}, {attr_string("mode", "edge")})[0], {7}, {1, 2, 3, 3, 3, 3, 3});
  EXPECT_THROW(run_op("Pad", {y, ints({-4, 0})}), Error);
}

TEST(Pad, OtherDtypes) {
  const Tensor x = Tensor::from_int64s({2, 2}, {int64_t{1} << 41, 2, 3, 4});
  const Tensor y = run_op("Pad", {x, ints({1, 0, 0, 1}), Tensor::from_int64s({}, {-7})})[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{-7, -7, -7, int64_t{1} << 41, 2, -7, 3, 4, -7}));
  const Tensor u8 = cast_tensor(Tensor::from_floats({3}, {10, 20, 30}), DType::UInt8);
  const Tensor yu = run_op("Pad", {u8, ints({1, 1})}, {attr_string("mode", "reflect")})[0];
  EXPECT_EQ(yu.dtype(), DType::UInt8);
  expect_tensor_near(yu, {5}, {20, 10, 20, 30, 20});
}

TEST(Pad, HzPadAcceptsBothForms) {
  const Tensor x = Tensor::from_floats({1, 2}, {1, 2});
  expect_tensor_near(run_op("HzPad", {x}, {attr_ints("pads", {0, 1, 0, 1}), attr_float("value", 5)}, 1, 1, "horizon")[0],
                     {1, 4}, {5, 1, 2, 5});
  expect_tensor_near(run_op("HzPad", {x, ints({0, 1, 0, 1})}, {attr_string("mode", "edge")}, 1, 1, "horizon")[0], {1, 4},
                     {1, 1, 2, 2});
}

}  // namespace
}  // namespace ptq::test
