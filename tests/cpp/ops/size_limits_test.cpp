// Every kernel family with attributes or shape inputs chosen so that an output or an intermediate
// buffer exceeds what one buffer of a 4 GB WebAssembly heap can hold, or so that a size overflows
// int64: each must end in a SizeError (or a plain error naming the attribute) before allocating,
// never in a wrapped size and a write outside the buffer. Run natively under ASan/UBSan and in the
// wasm build, where size_t has 32 bits. Through the executor the error names the node.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/size.h"
#include "exec/executor.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

namespace ptq::test {
namespace {

constexpr int64_t kBillion = 1000000000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }
Tensor ones(Shape shape) {
  Tensor t = Tensor::zeros(DType::Float, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = 1.0f;
  return t;
}

TEST(SizeLimits, ConvHugePadsMakeAnOutputLargerThanTheHeap) {
  // pads 1e9 on a 1x1 plane with a 1x1 kernel: output 2000000001 x 2000000001 floats (~14.5 EiB).
  EXPECT_THROW(run_op("Conv", {ones({1, 1, 1, 1}), ones({1, 1, 1, 1})},
                      {attr_ints("pads", {kBillion, kBillion, kBillion, kBillion})}),
               SizeError);
  // 2 input channels: the im2col/GEMM path instead of the depthwise one.
  EXPECT_THROW(run_op("Conv", {ones({1, 2, 2, 2}), ones({4, 2, 1, 1})}, {attr_ints("pads", {0, kBillion, 0, kBillion})}),
               SizeError);
}

TEST(SizeLimits, ConvHugePadsWithHugeStridesOverflowThePaddedPlaneNotTheOutput) {
  // Output 3x3 only, but the depthwise path's zero-padded plane would be ~2e9 x 2e9 floats.
  EXPECT_THROW(run_op("Conv", {ones({1, 1, 1, 1}), ones({1, 1, 1, 1})},
                      {attr_ints("pads", {kBillion, kBillion, kBillion, kBillion}), attr_ints("strides", {kBillion, kBillion})}),
               SizeError);
  // Pads near int64 max overflow the padded input size itself.
  EXPECT_THROW(run_op("Conv", {ones({1, 1, 1, 1}), ones({1, 1, 1, 1})},
                      {attr_ints("pads", {kInt64Max, 0, kInt64Max, 0})}),
               SizeError);
  // Dilations overflow the dilated kernel extent.
  EXPECT_THROW(run_op("Conv", {ones({1, 1, 4, 4}), ones({1, 1, 3, 3})}, {attr_ints("dilations", {kInt64Max, 1})}),
               SizeError);
}

TEST(SizeLimits, ConvTransposeHugeStridesOrOutputShape) {
  EXPECT_THROW(run_op("ConvTranspose", {ones({1, 1, 3, 3}), ones({1, 1, 1, 1})}, {attr_ints("strides", {kBillion, kBillion})}),
               SizeError);
  EXPECT_THROW(run_op("ConvTranspose", {ones({1, 1, 3, 3}), ones({1, 1, 1, 1})},
                      {attr_ints("strides", {kInt64Max / 2, 1})}),
               SizeError);
  EXPECT_THROW(run_op("ConvTranspose", {ones({1, 1, 1, 1}), ones({1, 1, 1, 1})},
                      {attr_ints("output_shape", {int64_t{1} << 20, int64_t{1} << 20})}),
               SizeError);
}

TEST(SizeLimits, PoolingHugeKernelPadsAndStrides) {
  // Output 2x2 but the padded plane is ~1e9 x 1e9.
  EXPECT_THROW(run_op("MaxPool", {ones({1, 1, 2, 2})},
                      {attr_ints("kernel_shape", {kBillion, kBillion}), attr_ints("pads", {kBillion, kBillion, kBillion, kBillion}),
                       attr_ints("strides", {kBillion, kBillion})}),
               SizeError);
  EXPECT_THROW(run_op("AveragePool", {ones({1, 1, 2, 2})},
                      {attr_ints("kernel_shape", {1, 1}), attr_ints("pads", {kBillion, kBillion, kBillion, kBillion})}),
               SizeError);
  // A kernel of 2^40 x 2^40 taps: the kernel size overflows int64.
  EXPECT_THROW(run_op("AveragePool", {ones({1, 1, 2, 2})},
                      {attr_ints("kernel_shape", {int64_t{1} << 40, int64_t{1} << 40}),
                       attr_ints("pads", {int64_t{1} << 40, int64_t{1} << 40, 0, 0})}),
               SizeError);
}

TEST(SizeLimits, PadToAHugeShape) {
  EXPECT_THROW(run_op("Pad", {ones({2, 2}), ints({kBillion, kBillion, kBillion, kBillion})}), SizeError);
  // One axis only, but 4e9 floats.
  EXPECT_THROW(run_op("Pad", {ones({1, 2}), ints({0, 0, 0, 4 * kBillion})}), SizeError);
  EXPECT_THROW(run_op("Pad", {ones({2}), ints({kInt64Max, kInt64Max})}), Error);
  // An empty axis elsewhere: an empty output, no index table for the huge axis.
  EXPECT_EQ(run_op("Pad", {Tensor::zeros(DType::Float, {0, 2}), ints({0, 0, 0, 4 * kBillion})})[0].shape(),
            (Shape{0, 4 * kBillion + 2}));
}

TEST(SizeLimits, ExpandAndTileToHugeShapes) {
  // 2^40 floats.
  EXPECT_THROW(run_op("Expand", {ones({1, 1}), ints({int64_t{1} << 20, int64_t{1} << 20})}), SizeError);
  EXPECT_THROW(run_op("Expand", {ones({1}), ints({kInt64Max, kInt64Max})}), SizeError);
  // 2^31 floats = 8 GiB: wrapped to 0 bytes in a 32-bit size_t.
  EXPECT_THROW(run_op("Expand", {ones({1}), ints({int64_t{1} << 31})}), SizeError);
  EXPECT_THROW(run_op("Tile", {ones({2, 2}), ints({kBillion, kBillion})}), SizeError);
  EXPECT_THROW(run_op("Tile", {ones({2}), ints({kInt64Max})}), SizeError);
  EXPECT_THROW(run_op("ConstantOfShape", {ints({int64_t{1} << 31, 2})}), SizeError);
}

TEST(SizeLimits, ReshapeRangeAndFlattenCountsAreChecked) {
  // -1 inferred against a product that overflows int64.
  EXPECT_THROW(run_op("Reshape", {ones({4}), ints({-1, int64_t{1} << 40, int64_t{1} << 40})}), SizeError);
  // Range of 1e19 elements (the count does not fit int64) and of 2^31 floats.
  EXPECT_THROW(run_op("Range", {Tensor::from_floats({}, {0}), Tensor::from_floats({}, {1e19f}), Tensor::from_floats({}, {1})}),
               SizeError);
  EXPECT_THROW(run_op("Range", {Tensor::from_floats({}, {0}), Tensor::from_floats({}, {2147483648.0f}), Tensor::from_floats({}, {1})}),
               SizeError);
  // int64 limit - start overflowed before: INT64_MAX - (-1).
  EXPECT_THROW(run_op("Range", {Tensor::from_int64s({}, {-1}), Tensor::from_int64s({}, {kInt64Max}), Tensor::from_int64s({}, {1})}),
               SizeError);
  // Flatten of an empty tensor whose other dims multiply past int64.
  EXPECT_THROW(run_op("Flatten", {Tensor::zeros(DType::Float, {int64_t{1} << 40, int64_t{1} << 40, 0})}, {attr_int("axis", 2)}),
               SizeError);
}

TEST(SizeLimits, ResizeHugeScalesAndSizes) {
  const Tensor x = ones({1, 1, 2, 2});
  EXPECT_THROW(run_op("Resize", {x, Tensor(), Tensor::from_floats({4}, {1, 1, 1e9f, 1e9f})}), SizeError);
  EXPECT_THROW(run_op("Resize", {x, Tensor(), Tensor::from_floats({4}, {1, 1, 1e30f, 1})}), SizeError);
  EXPECT_THROW(run_op("Resize", {x, Tensor(), Tensor(), ints({1, 1, 5 * kBillion, 1})}), SizeError);
  EXPECT_THROW(run_op("Resize", {x, Tensor(), Tensor(), ints({1, 1, kBillion, kBillion})}, {attr_string("mode", "linear")}),
               SizeError);
}

TEST(SizeLimits, ConcatSplitAndDepthToSpace) {
  EXPECT_THROW(run_op("Concat", {Tensor::zeros(DType::Float, {0, kInt64Max}), Tensor::zeros(DType::Float, {0, kInt64Max})},
                      {attr_int("axis", 1)}),
               SizeError);
  // Split lengths whose sum wraps to the axis size.
  EXPECT_THROW(run_op("Split", {ones({2}), ints({kInt64Max, kInt64Max, 4})}, {}, 3), SizeError);
  EXPECT_THROW(run_op("DepthToSpace", {ones({1, 4, 1, 1})}, {attr_int("blocksize", int64_t{1} << 32)}), SizeError);
  EXPECT_THROW(run_op("SpaceToDepth", {Tensor::zeros(DType::Float, {1, 1, 0, 0})}, {attr_int("blocksize", int64_t{1} << 32)}),
               SizeError);
}

TEST(SizeLimits, BroadcastMatMulAndGatherOutputs) {
  // Each input is small; the broadcast output is 2^40 floats.
  EXPECT_THROW(run_op("Add", {Tensor::zeros(DType::Float, {1 << 20, 1}), Tensor::zeros(DType::Float, {1, 1 << 20})}),
               SizeError);
  EXPECT_THROW(run_op("MatMul", {Tensor::zeros(DType::Float, {1 << 16, 1}), Tensor::zeros(DType::Float, {1, 1 << 16})}),
               SizeError);
  // 2^16 indices into rows of 2^15 floats, twice: 2^32 floats.
  EXPECT_THROW(run_op("Gather", {Tensor::zeros(DType::Float, {1, 1 << 16}), Tensor::zeros(DType::Int64, {1 << 16, 2})}, {}),
               SizeError);
}

TEST(SizeLimits, SliceWithExtremeStepsStaysInBounds) {
  const Tensor x = Tensor::from_floats({5}, {1, 2, 3, 4, 5});
  // Step INT64_MIN from the end takes the last element only; INT64_MAX from the start the first only.
  expect_tensor_near(run_op("Slice", {x, ints({-1}), ints({std::numeric_limits<int64_t>::min()}), ints({0}),
                                      ints({std::numeric_limits<int64_t>::min()})})[0],
                     {1}, {5});
  expect_tensor_near(run_op("Slice", {x, ints({0}), ints({kInt64Max}), ints({0}), ints({kInt64Max})})[0], {1}, {1});
  expect_tensor_near(run_op("Slice", {x, ints({1}), ints({kInt64Max}), ints({0}), ints({3})})[0], {2}, {2, 5});
}

TEST(SizeLimits, TheExecutorNamesTheNodeAndTheSize) {
  GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 1, 1});
  b.initializer("w", ones({1, 1, 1, 1}));
  b.node("big_conv", "Conv", {"x", "w"}, {"y"}, {attr_ints("pads", {kBillion, kBillion, kBillion, kBillion})});
  b.output("y");
  exec::Executor ex(b.model());
  try {
    ex.run({ones({1, 1, 1, 1})}, ex.uniform_config(false));
    FAIL() << "no error";
  } catch (const SizeError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("node 'big_conv' (Conv): ", 0), 0u) << m;
    EXPECT_NE(m.find("[1, 1, 2000000001, 2000000001]"), std::string::npos) << m;
    // 2000000001^2 * 4 = 16000000016000000004 bytes.
    EXPECT_NE(m.find("16000000016000000004 bytes"), std::string::npos) << m;
  }
}

// A negative target dimension reached the shape count as a plain error, which the executor passed on
// without the node's name ("negative dimension in shape [-5, 1, 2, 2]").
TEST(SizeLimits, TheExecutorNamesTheNodeOfANegativeExpandShape) {
  GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 2, 2});
  b.initializer("shape", ints({-5, 1, 1, 1}));
  b.node("neg_expand", "Expand", {"x", "shape"}, {"y"});
  b.output("y");
  exec::Executor ex(b.model());
  try {
    ex.run({ones({1, 1, 2, 2})}, ex.uniform_config(false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'neg_expand' (Expand): negative dimension in shape [-5, 1, 2, 2]");
  }
}

}  // namespace
}  // namespace ptq::test
