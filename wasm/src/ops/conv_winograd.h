#pragma once
// 3x3, stride-1, undilated 2-D convolution by Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016; the transform used by ncnn and NNPACK).
// A 4x4 output tile needs 36 multiplies per (input, output channel) pair instead of 144: the weights
// and each 6x6 input tile are transformed, multiplied element-wise — done as 36 GEMMs
// [M x C] . [C x tiles], one per tile position, on the existing GEMM kernel — and transformed back.
// Small planes (7x7, 10x10) use F(2x2, 3x3) instead: 16 multiplies per 2x2 tile (36 per 4x4 area).
// The transforms use the interpolation points 0, ±1, ±2, ∞; the weight transform is computed in
// double, so the extra rounding against im2col + GEMM stays at a few float32 ulps of Σ|w·x|.
#include <cstddef>
#include <cstdint>

#include "ops/conv_common.h"

namespace ptq::ops {

struct Winograd3x3Shape {
  int64_t C = 0, M = 0;             // input / output channels (of one group)
  int64_t H = 0, W = 0;             // input plane
  int64_t out_h = 0, out_w = 0;     // output plane
  int64_t pad_top = 0, pad_left = 0;
};

// Which Winograd variant a convolution uses, if any: 2-D, 3x3, stride 1, dilation 1, enough channels
// for the GEMMs; F(4x4) on planes of at least 16 of its tiles, F(2x2) on smaller ones (at least 4 of
// its tiles), where F(4x4)'s GEMMs would have too few columns.
enum class WinogradKind { None, F4x4, F2x2 };
WinogradKind winograd_kind(const Spatial& sp, int64_t Cg, int64_t Mg);
// Process-wide switch for benchmarks (ptq_bench --no-winograd compares against im2col + GEMM).
void set_winograd_enabled(bool enabled);

// Floats of the transformed, GEMM-packed weights of one group (36 or 16 packed [M x C] matrices).
size_t winograd_packed_size(WinogradKind kind, int64_t M, int64_t C);
// w: [M][C][3][3] of one group -> dst (winograd_packed_size floats).
void winograd_pack_weights(WinogradKind kind, const float* w, int64_t M, int64_t C, float* dst);

// y[M][out_h][out_w] = conv(x[C][H][W], weights packed by winograd_pack_weights) + bias[M] (or none).
void winograd_conv3x3(WinogradKind kind, const Winograd3x3Shape& s, const float* x, const float* packed,
                      const float* bias, float* y);

}  // namespace ptq::ops
