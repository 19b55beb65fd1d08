#pragma once
// The GEMM's macro-kernels per instruction set (internal to gemm_kernel*.cpp). The driver in
// gemm_kernel.cpp blocks and packs the operands (4-row A panels, 8-column B panels, the layout every
// caller packs in); a macro-kernel multiplies one block of packed panels into C. The portable one
// (4x8 register tile, 4-lane vectors: SSE natively, SIMD128 in wasm) is always there; a native x86-64
// build adds kernels for AVX2 + FMA and for AVX-512 (VL), compiled with function target attributes
// (the rest of the build stays x86-64-v2) and chosen once at run time from the CPU's features.
#include <cstdint>

#include "ops/gemm_kernel.h"

namespace ptq::ops::detail {

// One block: C[mc, nc] (row stride ldc) = alpha * A.B (+ bias[row]) (+ C when load_c), A as mc/4
// panels of kc x 4 (a_stride floats apart), B as nc/8 panels of kc x 8 (b_stride apart), zero-padded.
struct GemmBlock {
  int64_t mc, nc, kc;
  const float* a;
  int64_t a_stride;
  const float* b;
  int64_t b_stride;
  float* c;
  int64_t ldc;
  float alpha;
  const float* bias;  // one value per row of the block, or null
  bool load_c;
};
using GemmMacroKernel = void (*)(const GemmBlock&);

// The products are summed in chunks of kGemmChunk in registers, the chunk sums added into the tile
// (a sum of ~sqrt(K)-term sums: several-fold less rounding error than one running sum for K in the
// hundreds to thousands, tests/cpp/ops/conv_accuracy_test.cpp). Every kernel keeps this order.
inline constexpr int64_t kGemmChunk = 32;

// The x86-64 kernels (nullptr in other builds): AVX2 + FMA with a 4x16 tile (8 ymm accumulators,
// 16 registers), AVX-512VL with an 8x16 tile (16 accumulators, 32 registers). Products are fused
// multiply-adds, so their results differ from the portable kernel's in the last bits.
GemmMacroKernel gemm_macro_kernel_avx2();
GemmMacroKernel gemm_macro_kernel_avx512();

}  // namespace ptq::ops::detail
