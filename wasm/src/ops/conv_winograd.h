#pragma once
// 3x3, stride-1, undilated 2-D convolution by Winograd's minimal filtering F(4x4, 3x3) (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016; the transform used by ncnn and NNPACK).
// A 4x4 output tile needs 36 multiplies per (input, output channel) pair instead of 144: the weights
// and each 6x6 input tile are transformed, multiplied element-wise — done as 36 GEMMs
// [M x C] . [C x tiles], one per tile position, on the existing GEMM kernel — and transformed back.
// F(2x2, 3x3) needs 16 multiplies per 2x2 tile (36 per 4x4 area, 2.25x fewer than direct).
// Accuracy (measured against a double-precision direct convolution, in units of Σ|w·x| of each
// output; tests/cpp/ops/conv_accuracy_test.cpp): the error is dominated by the float32 sums over the
// input channels in the transformed domain, where the terms are larger than the output they cancel
// to. F(2x2) (transform coefficients 0, ±1, ±1/2) is 1.1-2.3x im2col + GEMM's error per problem: in
// float32 no cheap change reaches im2col's (summing its products in double gets within 1.4x, with
// its output transform in double too below it, at more than the time Winograd saves), so it is not
// the default. F(4x4) (points 0, ±1, ±2, ∞: coefficients up to 8) is 12-35x above im2col, and 2-2.3x
// onnxruntime's error end to end on deep networks. The weight transforms are computed in double and
// rounded once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/conv_common.h"

namespace ptq::ops {

struct Winograd3x3Shape {
  int64_t C = 0, M = 0;             // input / output channels (of one group)
  int64_t H = 0, W = 0;             // input plane
  int64_t out_h = 0, out_w = 0;     // output plane
  int64_t pad_top = 0, pad_left = 0;
};

// Which 3x3 convolutions run by Winograd (process-wide; one wasm instance per worker):
//   Accurate (default): none: im2col + GEMM, pointwise GEMM and depthwise, each within im2col +
//         GEMM's error bound (the float accuracy budget, docs/compatibility.md);
//   Fast: F(2x2) on 3x3 stride-1 convolutions (1.1-2.3x im2col's error per kernel, still within the
//         end-to-end budget against onnxruntime on every measured model);
//   Fastest: F(4x4) as well, on planes of at least 16 of its tiles (12-35x im2col's error per
//         kernel, outside the end-to-end budget).
enum class WinogradMode { Accurate, Fast, Fastest };
void set_winograd_mode(WinogradMode mode);
WinogradMode winograd_mode();
// The modes by name, the default first, each with what it trades (the CLI's --conv values and the
// page's setting read them from describe()).
struct ConvolutionModeInfo {
  const char* name;
  WinogradMode mode;
  const char* doc;
};
const std::vector<ConvolutionModeInfo>& convolution_modes();
// A name of convolution_modes() -> its mode; throws ptq::Error naming the valid values otherwise.
WinogradMode parse_winograd_mode(const std::string& name);

// Which Winograd variant a convolution uses, if any: none in Accurate mode; otherwise 2-D, 3x3,
// stride 1, dilation 1, enough channels for the GEMMs; in Fastest mode F(4x4) on planes of at least
// 16 of its tiles; otherwise F(2x2) on planes of at least 4 of its tiles.
enum class WinogradKind { None, F4x4, F2x2 };
WinogradKind winograd_kind(const Spatial& sp, int64_t Cg, int64_t Mg);

// Floats of the transformed, GEMM-packed weights of one group (36 or 16 packed [M x C] matrices).
size_t winograd_packed_size(WinogradKind kind, int64_t M, int64_t C);
// w: [M][C][3][3] of one group -> dst (winograd_packed_size floats).
void winograd_pack_weights(WinogradKind kind, const float* w, int64_t M, int64_t C, float* dst);

// y[M][out_h][out_w] = conv(x[C][H][W], weights packed by winograd_pack_weights) + bias[M] (or none).
void winograd_conv3x3(WinogradKind kind, const Winograd3x3Shape& s, const float* x, const float* packed,
                      const float* bias, float* y);

}  // namespace ptq::ops
