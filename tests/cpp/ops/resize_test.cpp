// Resize / Upsample / HzResize11. Expected values are worked out by hand from the coordinate
// formulas (each case notes its input coordinates) or taken from the ONNX test cases.
#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }
Tensor floats(std::vector<float> v) { return Tensor::from_floats({static_cast<int64_t>(v.size())}, v); }

const Tensor& x2x2() {
  static const Tensor t = Tensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4});
  return t;
}
const Tensor& x2x4() {
  static const Tensor t = Tensor::from_floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  return t;
}
const Tensor& line4() {
  static const Tensor t = Tensor::from_floats({4}, {1, 2, 3, 4});
  return t;
}

// Resize at opset 13 with the given scales (or sizes when scales is empty).
Tensor resize(const Tensor& x, std::vector<float> scales, std::vector<int64_t> sizes, std::vector<ir::Attribute> attrs,
              int opset = 13, const Tensor& roi = Tensor()) {
  std::vector<Tensor> in{x, roi, scales.empty() ? Tensor() : floats(scales)};
  if (!sizes.empty()) in.push_back(ints(sizes));
  return run_op("Resize", in, std::move(attrs), 1, opset)[0];
}

TEST(Resize, NearestHalfPixelUpAndDown) {
  // W scale 3: x=(o+.5)/3-.5 = -.33,0,.33,.67,1,1.33 -> 0,0,0,1,1,1 (round_prefer_floor).
  expect_tensor_near(resize(x2x2(), {1, 1, 2, 3}, {}, {attr_string("mode", "nearest")}), {1, 1, 4, 6},
                     {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  // 2x4 by 0.6 -> 1x2: H x=.33 -> 0; W x=.33 -> 0, x=2 -> 2.
  expect_tensor_near(resize(x2x4(), {1, 1, 0.6f, 0.6f}, {}, {}), {1, 1, 1, 2}, {1, 3});
}

TEST(Resize, NearestModesOn1D) {
  auto run = [](const char* coord, const char* nearest) {
    return resize(line4(), {}, {8}, {attr_string("coordinate_transformation_mode", coord), attr_string("nearest_mode", nearest)});
  };
  // half_pixel: x = -.25,.25,.75,1.25,1.75,2.25,2.75,3.25; ceil -> 0,1,1,2,2,3,3,4->3.
  expect_tensor_near(run("half_pixel", "ceil"), {8}, {1, 2, 2, 3, 3, 4, 4, 4});
  // asymmetric: x = 0,.5,1,...,3.5; round_prefer_ceil takes ties up, round_prefer_floor down.
  expect_tensor_near(run("asymmetric", "round_prefer_ceil"), {8}, {1, 2, 2, 3, 3, 4, 4, 4});
  expect_tensor_near(run("asymmetric", "round_prefer_floor"), {8}, {1, 1, 2, 2, 3, 3, 4, 4});
  // align_corners: x = 3o/7 = 0,.43,.86,1.29,1.71,2.14,2.57,3; floor.
  expect_tensor_near(run("align_corners", "floor"), {8}, {1, 1, 1, 2, 2, 3, 3, 4});
  // tf_half_pixel_for_nn: x = (o+.5)/2 = .25,.75,...; round_prefer_floor -> 0,1,1,2,2,3,3,4->3.
  expect_tensor_near(run("tf_half_pixel_for_nn", "round_prefer_floor"), {8}, {1, 2, 2, 3, 3, 4, 4, 4});
}

TEST(Resize, NearestIntegerUpsampleFastPathAnyDtype) {
  // asymmetric + floor with integer scales (PyTorch nn.Upsample): output i reads i / f.
  const std::vector<ir::Attribute> a{attr_string("coordinate_transformation_mode", "asymmetric"),
                                     attr_string("nearest_mode", "floor")};
  const Tensor i64 = Tensor::from_int64s({1, 1, 2, 2}, {int64_t{1} << 42, 2, 3, -4});
  const Tensor y = resize(i64, {1, 1, 2, 3}, {}, a);
  EXPECT_EQ(y.dtype(), DType::Int64);
  const int64_t big = int64_t{1} << 42;
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{big, big, big, 2, 2, 2, big, big, big, 2, 2, 2,
                                                       3, 3, 3, -4, -4, -4, 3, 3, 3, -4, -4, -4}));
  const Tensor u8 = cast_tensor(x2x2(), DType::UInt8);
  const Tensor yu = resize(u8, {1, 2, 1, 2}, {}, a);
  EXPECT_EQ(yu.dtype(), DType::UInt8);
  expect_tensor_near(yu, {1, 2, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4, 1, 1, 2, 2, 3, 3, 4, 4});
  // Same scales with round_prefer_floor are NOT i / 3 (x = 2/3 rounds to 1): the general path.
  expect_tensor_near(resize(line4(), {3}, {}, {attr_string("coordinate_transformation_mode", "asymmetric")}), {12},
                     {1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4});
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  // half_pixel x = -.25,.25,.75,1.25 -> clamp -> weights give 1,1.25,1.75,2 per row; rows likewise.
  expect_tensor_near(resize(x2x2(), {1, 1, 2, 2}, {}, {attr_string("mode", "linear")}), {1, 1, 4, 4},
                     {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
  // align_corners: x = o/3 on both axes; value = 1 + x + 2y.
  const float t = 1.0f / 3, u = 2.0f / 3;
  expect_tensor_near(resize(x2x2(), {1, 1, 2, 2}, {}, {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "align_corners")}),
                     {1, 1, 4, 4},
                     {1, 1 + t, 1 + u, 2, 1 + 2 * t, 1 + 3 * t, 1 + 4 * t, 1 + 5 * t,
                      1 + 2 * u, 1 + 2 * u + t, 1 + 2 * u + u, 2 + 2 * u, 3, 3 + t, 3 + u, 4});
  // ONNX test: downsampling by scales uses length_resized = 0.6 * 4 = 2.4, so x = 3/1.4 = 2.142857.
  expect_tensor_near(resize(x2x4(), {1, 1, 0.6f, 0.6f}, {}, {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "align_corners")}),
                     {1, 1, 1, 2}, {1, 3.142857f});
  // pytorch_half_pixel with a length-1 output axis samples x = 0.
  expect_tensor_near(resize(x2x4(), {}, {1, 1, 1, 4}, {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "pytorch_half_pixel")}),
                     {1, 1, 1, 4}, {1, 2, 3, 4});
}

TEST(Resize, CubicAndExcludeOutside) {
  // half_pixel x2 on [1,2,3,4]: x = -.25,.25,.75,1.25,...; A=-0.75, fraction .75 gives weights
  // c = (-0.03515625, 0.26171875, 0.87890625, -0.10546875) (by hand from the Keys polynomial).
  // o=0 (x=-.25): taps -2..1 clamp to [1,1,1,2] -> 1 + c3 = 0.89453125.
  // o=2 (x=.75): taps -1..2 -> [1,1,2,3] -> 1.66796875.
  // o=3 (x=1.25, fraction .25 = reversed weights): taps 0..3 -> 2.296875; o=4 (x=1.75): 2.703125
  // (A=-0.75 does not reproduce straight lines exactly, unlike A=-0.5).
  const Tensor y = resize(line4(), {2}, {}, {attr_string("mode", "cubic")});
  ASSERT_EQ(y.shape(), (Shape{8}));
  EXPECT_NEAR(y.data<float>()[0], 0.89453125f, 1e-6);
  EXPECT_NEAR(y.data<float>()[2], 1.66796875f, 1e-6);
  EXPECT_NEAR(y.data<float>()[3], 2.296875f, 1e-6);
  EXPECT_NEAR(y.data<float>()[4], 2.703125f, 1e-6);
  // exclude_outside drops tap -1 and renormalises: (c1*1 + c2*2 + c3*3) / (c1+c2+c3) = 1.703125/1.03515625.
  const Tensor z = resize(line4(), {2}, {}, {attr_string("mode", "cubic"), attr_int("exclude_outside", 1)});
  EXPECT_NEAR(z.data<float>()[2], 1.703125f / 1.03515625f, 1e-6);
  EXPECT_NEAR(z.data<float>()[3], 2.296875f, 1e-6);  // all taps inside: unchanged
}

TEST(Resize, TfCropAndResizeWithExtrapolation) {
  std::vector<float> v(16);
  for (size_t i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  const Tensor x = Tensor::from_floats({1, 1, 4, 4}, v);
  const std::vector<ir::Attribute> a{attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "tf_crop_and_resize")};
  // roi H .4-.6, W .6-.8: y = 1.2,1.5,1.8, x = 1.8,2.1,2.4; value = 1 + 4y + x.
  expect_tensor_near(resize(x, {}, {1, 1, 3, 3}, a, 13, floats({0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f})), {1, 1, 3, 3},
                     {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f});
  // roi ends 1.2/1.7: y = 1.2,2.4,3.6(out), x = 1.8,3.45(out),5.1(out) -> extrapolation 10.
  std::vector<ir::Attribute> b = a;
  b.push_back(attr_float("extrapolation_value", 10));
  expect_tensor_near(resize(x, {}, {1, 1, 3, 3}, b, 13, floats({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f})), {1, 1, 3, 3},
                     {7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10});
  b[0] = attr_string("mode", "nearest");  // same coordinates, nearest: (1.2,1.8)->(1,2)=7, (2.4,1.8)->(2,2)=11
  expect_tensor_near(resize(x, {}, {1, 1, 3, 3}, b, 13, floats({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f})), {1, 1, 3, 3},
                     {7, 10, 10, 11, 10, 10, 10, 10, 10});
}

TEST(Resize, Opset18AxesAndKeepAspectRatio) {
  auto run = [](const char* policy) {
    return run_op("Resize", {x2x2(), Tensor(), Tensor(), ints({7, 8})},
                  {attr_ints("axes", {2, 3}), attr_string("keep_aspect_ratio_policy", policy)}, 1, 18)[0];
  };
  // not_larger: scale min(3.5, 4) = 3.5 -> 7x7; x = (o+.5)/3.5-.5 = -.36,-.07,.21,.5,.79,1.07,1.36
  // -> 0,0,0,0,1,1,1 (the .5 tie goes to floor).
  const Tensor a = run("not_larger");
  ASSERT_EQ(a.shape(), (Shape{1, 1, 7, 7}));
  const std::vector<int> m7{0, 0, 0, 0, 1, 1, 1};
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 7; ++c) EXPECT_EQ(a.data<float>()[r * 7 + c], 1 + m7[r] * 2 + m7[c]);
  // not_smaller: scale 4 -> 8x8; x = (o+.5)/4-.5 -> 0,0,0,0,1,1,1,1.
  EXPECT_EQ(run("not_smaller").shape(), (Shape{1, 1, 8, 8}));
  // axes with scales: only W doubles.
  expect_tensor_near(run_op("Resize", {x2x2(), Tensor(), floats({2})}, {attr_ints("axes", {-1})}, 1, 18)[0], {1, 1, 2, 4},
                     {1, 1, 2, 2, 3, 3, 4, 4});
  EXPECT_THROW(run_op("Resize", {x2x2(), Tensor(), floats({1, 1, 2, 2})}, {attr_int("antialias", 1), attr_string("mode", "linear")}, 1, 18),
               Error);
}

TEST(Resize, Opset10AndUpsample) {
  // Resize-10 / Upsample nearest: asymmetric, truncation when upsampling, ceil when downsampling.
  expect_tensor_near(run_op("Resize", {line4(), floats({2})}, {}, 1, 10)[0], {8}, {1, 1, 2, 2, 3, 3, 4, 4});
  expect_tensor_near(run_op("Resize", {line4(), floats({0.5f})}, {}, 1, 10)[0], {2}, {1, 3});  // x = 0, 2
  expect_tensor_near(run_op("Upsample", {x2x2(), floats({1, 1, 2, 2})}, {}, 1, 9)[0], {1, 1, 4, 4},
                     {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Upsample-7: scales attribute; linear asymmetric x = o/2 = 0,.5,1,1.5(->clamped pair 1,1).
  expect_tensor_near(run_op("Upsample", {line4()}, {attr_floats("scales", {2}), attr_string("mode", "linear")}, 1, 7)[0], {8},
                     {1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4});
}

TEST(Resize, DtypesIdentityAndErrors) {
  // float16 linear computes in float and returns float16.
  const Tensor h = cast_tensor(x2x2(), DType::Float16);
  const Tensor y = resize(h, {1, 1, 2, 2}, {}, {attr_string("mode", "linear")});
  EXPECT_EQ(y.dtype(), DType::Float16);
  expect_tensor_near(y, {1, 1, 4, 4}, {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
  EXPECT_THROW(resize(Tensor::from_int64s({2}, {1, 2}), {2}, {}, {attr_string("mode", "linear")}), Error);
  // Scale 1 everywhere: the input itself.
  EXPECT_TRUE(resize(x2x2(), {1, 1, 1, 1}, {}, {attr_string("mode", "cubic")}).shares_storage_with(x2x2()));
  EXPECT_THROW(resize(x2x2(), {1, 1, 2, 2}, {1, 1, 4, 4}, {}), Error);  // both scales and sizes
  EXPECT_THROW(resize(x2x2(), {1, 2}, {}, {}), Error);                  // wrong scales length
  EXPECT_THROW(resize(x2x2(), {1, 1, 2, 2}, {}, {attr_string("coordinate_transformation_mode", "bogus")}), Error);
}

TEST(Resize, HzResize11IsResize11) {
  const Tensor y = run_op("HzResize11", {x2x2(), Tensor(), floats({1, 1, 2, 2})}, {attr_string("mode", "linear")}, 1, 1,
                          "horizon")[0];
  expect_tensor_near(y, {1, 1, 4, 4}, {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
}

}  // namespace
}  // namespace ptq::test
