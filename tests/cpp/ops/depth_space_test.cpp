// DepthToSpace / SpaceToDepth / Hz variants / HzChannelShuffle. Small cases by hand; a larger one
// against the ONNX index formulas written out directly (not via reshape/transpose).
#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

Tensor iota(Shape shape) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_floats(std::move(shape), v);
}

TEST(DepthSpace, DepthToSpaceSmallByHand) {
  // 8 channels, blocksize 2 -> 2 channels of 2x2.
  // DCR: out channel c, block (bh,bw) reads channel (bh*2+bw)*2 + c.
  expect_tensor_near(run_op("DepthToSpace", {iota({1, 8, 1, 1})}, {attr_int("blocksize", 2)})[0], {1, 2, 2, 2},
                     {0, 2, 4, 6, 1, 3, 5, 7});
  // CRD: out channel c, block (bh,bw) reads channel c*4 + bh*2 + bw.
  expect_tensor_near(
      run_op("DepthToSpace", {iota({1, 8, 1, 1})}, {attr_int("blocksize", 2), attr_string("mode", "CRD")}, 1, 13)[0],
      {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_THROW(run_op("DepthToSpace", {iota({1, 6, 1, 1})}, {attr_int("blocksize", 2)}), Error);
}

TEST(DepthSpace, DepthToSpaceMatchesIndexFormula) {
  const int64_t n = 2, c = 3, b = 2, h = 3, w = 5, C = c * b * b;
  const Tensor x = iota({n, C, h, w});
  for (const char* mode : {"DCR", "CRD"}) {
    const Tensor y = run_op("DepthToSpace", {x}, {attr_int("blocksize", b), attr_string("mode", mode)}, 1, 13)[0];
    ASSERT_EQ(y.shape(), (Shape{n, c, h * b, w * b}));
    const float* out = y.data<float>();
    const bool dcr = std::string(mode) == "DCR";
    for (int64_t in = 0; in < n; ++in)
      for (int64_t ic = 0; ic < c; ++ic)
        for (int64_t oy = 0; oy < h * b; ++oy)
          for (int64_t ox = 0; ox < w * b; ++ox) {
            const int64_t bh = oy % b, bw = ox % b;
            const int64_t src_c = dcr ? (bh * b + bw) * c + ic : ic * b * b + bh * b + bw;
            const float want = static_cast<float>(((in * C + src_c) * h + oy / b) * w + ox / b);
            ASSERT_EQ(out[((in * c + ic) * h * b + oy) * w * b + ox], want) << mode;
          }
  }
}

TEST(DepthSpace, SpaceToDepthInvertsDCR) {
  // [[1,2],[3,4]] -> 4 channels of 1x1.
  expect_tensor_near(run_op("SpaceToDepth", {Tensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4})}, {attr_int("blocksize", 2)})[0],
                     {1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor x = iota({2, 12, 3, 4});
  const Tensor d = run_op("DepthToSpace", {x}, {attr_int("blocksize", 2)})[0];
  const Tensor back = run_op("SpaceToDepth", {d}, {attr_int("blocksize", 2)})[0];
  expect_tensor_near(back, x.shape(), x.to_float_vector());
  EXPECT_THROW(run_op("SpaceToDepth", {iota({1, 1, 3, 2})}, {attr_int("blocksize", 2)}), Error);
}

TEST(DepthSpace, HorizonVariants) {
  const Tensor y = run_op("HzDepthToSpace", {iota({1, 8, 1, 1})}, {attr_int("blocksize", 2)}, 1, 1, "horizon")[0];
  expect_tensor_near(y, {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
  const Tensor z = run_op("HzSpaceToDepth", {y}, {attr_int("block_size", 2)}, 1, 1, "horizon")[0];
  expect_tensor_near(z, {1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(DepthSpace, HzChannelShuffle) {
  // 6 channels, group 2: [0 1 2 | 3 4 5] -> [0 3 1 4 2 5] (torch.channel_shuffle).
  Tensor y = run_op("HzChannelShuffle", {iota({1, 6, 1, 1})}, {attr_int("group", 2)}, 1, 1, "horizon")[0];
  expect_tensor_near(y, {1, 6, 1, 1}, {0, 3, 1, 4, 2, 5});
  // group 3 with 2x1 spatial: channel c holds {2c, 2c+1}; order [0 2 4 1 3 5].
  y = run_op("HzChannelShuffle", {iota({1, 6, 2, 1})}, {attr_int("group", 3)}, 1, 1, "horizon")[0];
  expect_tensor_near(y, {1, 6, 2, 1}, {0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11});
  // NHWC: channels last.
  y = run_op("HzChannelShuffle", {iota({1, 1, 1, 6})}, {attr_int("group", 2), attr_string("data_format", "NHWC")}, 1, 1,
             "horizon")[0];
  expect_tensor_near(y, {1, 1, 1, 6}, {0, 3, 1, 4, 2, 5});
  // Two outputs: shuffle then split the channels in half.
  const std::vector<Tensor> parts = run_op("HzChannelShuffle", {iota({1, 6, 1, 1})}, {attr_int("group", 2)}, 2, 1, "horizon");
  expect_tensor_near(parts[0], {1, 3, 1, 1}, {0, 3, 1});
  expect_tensor_near(parts[1], {1, 3, 1, 1}, {4, 2, 5});
  EXPECT_THROW(run_op("HzChannelShuffle", {iota({1, 6, 1, 1})}, {attr_int("group", 4)}, 1, 1, "horizon"), Error);
}

}  // namespace
}  // namespace ptq::test
