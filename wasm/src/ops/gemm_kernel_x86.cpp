// The GEMM's x86-64 macro-kernels (gemm_kernel_isa.h): AVX2 + FMA and AVX-512VL, on the same packed
// panels as the portable kernel. Each function carries its instruction set as a target attribute, so
// this file builds with the rest of the core for x86-64-v2 and nothing here runs unless the CPU has
// the instructions (gemm_kernel.cpp checks before choosing a kernel). Only the native x86-64 build
// has them; elsewhere the two getters return nullptr.
#include "ops/gemm_kernel_isa.h"

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>

#include <algorithm>

namespace ptq::ops::detail {
namespace {

constexpr int64_t MR = kGemmMR, NR = kGemmNR;
static_assert(NR == 8, "one B panel row is one 8-float ymm vector");

// One tile of MP A panels x NP B panels ((4 MP) x (8 NP) of C; the top-left mr x nr of it valid):
// the products of each chunk of kGemmChunk depths summed in registers by fused multiply-adds, the
// chunk sums added into the tile's totals, then C = alpha * total + bias + C as the portable kernel's
// epilogue does. always_inline with AVX2 + FMA: the callers below add their own instruction sets
// (AVX-512VL gives the 8x16 tile 32 vector registers).
template <int MP, int NP>
[[gnu::always_inline, gnu::target("avx2,fma")]] inline void fma_tile(const GemmBlock& g, const float* a, const float* b,
                                                                     float* c, const float* bias, int64_t mr,
                                                                     int64_t nr) {
  constexpr int R = MP * MR;
  __m256 total[R][NP];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NP; ++j) total[r][j] = _mm256_setzero_ps();
  for (int64_t k0 = 0; k0 < g.kc; k0 += kGemmChunk) {
    const int64_t k1 = std::min(g.kc, k0 + kGemmChunk);
    __m256 acc[R][NP];
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; ++k) {
      __m256 bv[NP];
      for (int j = 0; j < NP; ++j) bv[j] = _mm256_loadu_ps(b + j * g.b_stride + k * NR);
      for (int p = 0; p < MP; ++p) {
        const float* ak = a + p * g.a_stride + k * MR;
        for (int r = 0; r < MR; ++r) {
          const __m256 av = _mm256_broadcast_ss(ak + r);
          for (int j = 0; j < NP; ++j) acc[p * MR + r][j] = _mm256_fmadd_ps(av, bv[j], acc[p * MR + r][j]);
        }
      }
    }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < NP; ++j) total[r][j] = _mm256_add_ps(total[r][j], acc[r][j]);
  }
  const __m256 alpha = _mm256_set1_ps(g.alpha);
  if (mr == R && nr == NP * NR) {
    for (int r = 0; r < R; ++r) {
      float* row = c + r * g.ldc;
      for (int j = 0; j < NP; ++j) {
        __m256 v = total[r][j];
        if (g.alpha != 1.0f) v = _mm256_mul_ps(v, alpha);  // x * 1 is x: skipped, as the portable kernel does
        if (bias) v = _mm256_add_ps(v, _mm256_set1_ps(bias[r]));
        if (g.load_c) v = _mm256_add_ps(v, _mm256_loadu_ps(row + j * NR));
        _mm256_storeu_ps(row + j * NR, v);
      }
    }
    return;
  }
  alignas(32) float tmp[R][NP * NR];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NP; ++j) _mm256_store_ps(&tmp[r][j * NR], _mm256_mul_ps(total[r][j], alpha));
  for (int64_t r = 0; r < mr; ++r) {
    float* row = c + r * g.ldc;
    const float bv = bias ? bias[r] : 0.0f;
    for (int64_t j = 0; j < nr; ++j) row[j] = tmp[r][j] + bv + (g.load_c ? row[j] : 0.0f);
  }
}

// The tiles of one block, MP x NP panels at a time; the edges with as few panels as they need.
template <int MP, int NP>
[[gnu::always_inline, gnu::target("avx2,fma")]] inline void fma_macro(const GemmBlock& g) {
  for (int64_t i = 0; i < g.mc; i += MP * MR) {
    const int64_t mr = std::min<int64_t>(MP * MR, g.mc - i);
    const float* a = g.a + (i / MR) * g.a_stride;
    const float* bias = g.bias ? g.bias + i : nullptr;
    for (int64_t j = 0; j < g.nc; j += NP * NR) {
      const int64_t nr = std::min<int64_t>(NP * NR, g.nc - j);
      const float* b = g.b + (j / NR) * g.b_stride;
      float* c = g.c + i * g.ldc + j;
      const bool all_rows = mr > (MP - 1) * MR, all_cols = nr > (NP - 1) * NR;
      if (all_rows && all_cols) {
        fma_tile<MP, NP>(g, a, b, c, bias, mr, nr);
      } else if constexpr (MP > 1 && NP > 1) {
        if (all_rows) fma_tile<MP, 1>(g, a, b, c, bias, mr, nr);
        else if (all_cols) fma_tile<1, NP>(g, a, b, c, bias, mr, nr);
        else fma_tile<1, 1>(g, a, b, c, bias, mr, nr);
      } else if constexpr (MP > 1) {
        fma_tile<1, NP>(g, a, b, c, bias, mr, nr);
      } else if constexpr (NP > 1) {
        fma_tile<MP, 1>(g, a, b, c, bias, mr, nr);
      }
    }
  }
}

// AVX2 has 16 vector registers: a 4x16 tile (8 accumulators; the chunk totals spill, touched once
// per chunk). AVX-512VL encodes 32: an 8x16 tile, half the loads per product.
[[gnu::target("avx2,fma")]] void macro_avx2(const GemmBlock& g) { fma_macro<1, 2>(g); }
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void macro_avx512(const GemmBlock& g) { fma_macro<2, 2>(g); }

}  // namespace

GemmMacroKernel gemm_macro_kernel_avx2() { return &macro_avx2; }
GemmMacroKernel gemm_macro_kernel_avx512() { return &macro_avx512; }

}  // namespace ptq::ops::detail

#else

namespace ptq::ops::detail {
GemmMacroKernel gemm_macro_kernel_avx2() { return nullptr; }
GemmMacroKernel gemm_macro_kernel_avx512() { return nullptr; }
}  // namespace ptq::ops::detail

#endif
