// Checked size arithmetic (core/size.h) and the tensor allocation check built on it: sizes are
// computed in 64 bits and anything one buffer of a 4 GB WebAssembly heap cannot hold is a SizeError
// before any allocation (in wasm32, where size_t has 32 bits, these sizes used to wrap).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/size.h"
#include "core/size_test_util.h"
#include "core/tensor.h"

using namespace ptq;
using test::size_error_of;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

TEST(Size, CheckedProductsAndSums) {
  EXPECT_EQ(size_mul(3, 5, "x"), 15);
  EXPECT_EQ(size_mul(0, kMax, "x"), 0);
  EXPECT_EQ(size_add(kMax - 1, 1, "x"), kMax);
  EXPECT_THROW(size_mul(int64_t{1} << 32, int64_t{1} << 31, "x"), SizeError);
  EXPECT_THROW(size_add(kMax, 1, "x"), SizeError);
  EXPECT_THROW(size_mul(-1, 2, "x"), SizeError);  // never a size
  EXPECT_EQ(int64_add(-5, 3, "x"), -2);
  EXPECT_THROW(int64_add(std::numeric_limits<int64_t>::min(), -1, "x"), SizeError);
  EXPECT_THROW(int64_mul(kMax, -2, "x"), SizeError);
  const std::string m = size_error_of([] { size_mul(int64_t{4000000000}, int64_t{4000000000}, "the thing"); });
  EXPECT_NE(m.find("the thing"), std::string::npos) << m;
  EXPECT_NE(m.find("4000000000 x 4000000000"), std::string::npos) << m;
}

TEST(Size, AllocationCountStopsAtWhatOneHeapBufferMayHold) {
  // 2^30 floats = 4 GiB: one element more than fits (the limit is 4 GiB - 64 KiB).
  EXPECT_EQ(allocation_count(1000, sizeof(float), "x"), size_t{1000});
  EXPECT_EQ(allocation_count(static_cast<int64_t>(kMaxAllocationBytes / 4), 4, "x"), kMaxAllocationBytes / 4);
  EXPECT_THROW(allocation_count(static_cast<int64_t>(kMaxAllocationBytes / 4) + 1, 4, "x"), SizeError);
  EXPECT_THROW(allocation_count(int64_t{1} << 30, sizeof(float), "x"), SizeError);
  EXPECT_THROW(allocation_count(-1, 1, "x"), SizeError);
  // The product form checks the product first (2^40 x 2^40 overflows int64).
  EXPECT_THROW(allocation_count(int64_t{1} << 40, int64_t{1} << 40, 4, "x"), SizeError);
  const std::string m = size_error_of([] { allocation_count(int64_t{1} << 32, 4, "the buffer"); });
  // 2^34 bytes = 17179869184 = 16 GiB.
  EXPECT_NE(m.find("the buffer needs 17179869184 bytes (16.0 GiB)"), std::string::npos) << m;
  EXPECT_NE(m.find("4294901760 bytes"), std::string::npos) << m;
}

TEST(Size, ByteSizeText) {
  EXPECT_EQ(byte_size_str(100), "100 bytes");
  EXPECT_EQ(byte_size_str(1536), "1536 bytes (1.5 KiB)");
  EXPECT_EQ(byte_size_str(uint64_t{3} << 30), "3221225472 bytes (3.0 GiB)");
}

TEST(Size, ShapeNumelIsCheckedInSixtyFourBits) {
  EXPECT_EQ(shape_numel({1 << 20, 1 << 20, 1 << 20}), int64_t{1} << 60);
  EXPECT_THROW(shape_numel({int64_t{1} << 32, int64_t{1} << 32}), SizeError);
  // A zero anywhere makes an empty shape, whatever the other dims multiply to.
  EXPECT_EQ(shape_numel({int64_t{1} << 40, int64_t{1} << 40, 0}), 0);
  EXPECT_EQ(shape_numel({0, kMax, kMax}), 0);
}

TEST(Size, TensorLargerThanTheHeapIsASizeErrorNamingShapeAndBytes) {
  // 2^31 x 2 float32 = 2^34 bytes: on wasm32 size_t(2^32) * 4 wrapped to 0 and the tensor got a
  // 64-byte block; now it is refused before allocating.
  const std::string m = size_error_of([] { Tensor t(DType::Float, {int64_t{1} << 31, 2}); });
  EXPECT_NE(m.find("float32 tensor of shape [2147483648, 2] needs 17179869184 bytes (16.0 GiB)"), std::string::npos) << m;
  // int64 overflow of the element count itself.
  EXPECT_THROW(Tensor(DType::Float, {int64_t{1} << 40, int64_t{1} << 40}), SizeError);
  EXPECT_THROW(Tensor::zeros(DType::Int64, {int64_t{1} << 29}), SizeError);  // 4 GiB of int64
  // Just inside the limit in elements, but not in bytes for a wider type.
  EXPECT_THROW(Tensor(DType::Double, {int64_t{1} << 29}), SizeError);
  // Empty tensors with huge other dims are fine.
  EXPECT_EQ(Tensor(DType::Float, {0, int64_t{1} << 40}).numel(), 0);
}

TEST(Size, AliasOfAHugeShapeIsRefused) {
  const Tensor base = Tensor::from_floats({4}, {1, 2, 3, 4});
  // 2^30 + 1 floats would wrap to 4 bytes in a 32-bit size_t.
  EXPECT_THROW(Tensor::alias(base, {(int64_t{1} << 30) + 1}), Error);
  EXPECT_THROW(Tensor::alias(base, {int64_t{1} << 62}), Error);
  EXPECT_EQ(Tensor::alias(base, {2}, 8).data<float>()[0], 3.0f);
}
