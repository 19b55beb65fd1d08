#include "ops/gemm_kernel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/size.h"
#include "ops/gemm_kernel_isa.h"
#include "ops/simd.h"

namespace ptq::ops {

namespace {

using detail::GemmBlock;
using detail::kGemmChunk;
using simd::V4;

constexpr int64_t MR = kGemmMR;
constexpr int64_t NR = kGemmNR;
static_assert(MR == 4 && NR == 8, "micro_kernel is written for a 4x8 tile");
static_assert(kGemmNC % NR == 0 && kGemmMC % MR == 0, "block sizes must be whole panels");

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

struct Tile {
  V4 v[MR][2];
};

// The products are summed in chunks of kGemmChunk (gemm_kernel_isa.h): the register accumulators sum
// kGemmChunk products and are then added to the tile, so each output is a sum of sums (~sqrt(K) terms
// each instead of K in one running sum); with the kc blocks added into C as a third level, the rounding
// error of a K-term dot product drops several-fold for K in the hundreds to thousands (conv layers of
// 64-512 channels; tests/cpp/ops/conv_accuracy_test.cpp), for a few percent of the loop's time.

// Where a finished tile goes: c = alpha*acc + bias[r] + (load_c ? c : 0), the valid mr x nr part.
struct TileOut {
  float* c;
  int64_t ldc;
  float alpha;
  const float* bias;  // one value per row of the tile, or null
  bool load_c;
};

// One row of a full tile, 8 columns: the expression order of the partial tiles' scalar store below.
inline void store_row(V4 lo, V4 hi, float* row, const TileOut& o, int64_t r) {
  if (o.alpha != 1.0f) {  // x * 1 is x: skipping it leaves every value unchanged
    const V4 va = simd::splat(o.alpha);
    lo *= va;
    hi *= va;
  }
  if (o.bias) {
    const V4 vb = simd::splat(o.bias[r]);
    lo += vb;
    hi += vb;
  }
  if (o.load_c) {
    lo += simd::load(row);
    hi += simd::load(row + 4);
  }
  simd::store(row, lo);
  simd::store(row + 4, hi);
}

// The hot loop: acc[4][8] = a(k, 0:4) x b(k, 0:8) summed over kc steps, in chunks of kGemmChunk.
// A full tile (full = true) is stored into C from registers here; a partial one goes to `t` for
// store_partial_tile.
__attribute__((noinline)) void micro_kernel_impl(int64_t kc, const float* a, const float* b, bool full,
                                                 const TileOut& out, Tile& t) {
  V4 t00{}, t01{}, t10{}, t11{}, t20{}, t21{}, t30{}, t31{};
  for (int64_t k0 = 0; k0 < kc; k0 += kGemmChunk) {
    const int64_t k1 = std::min(kc, k0 + kGemmChunk);
    V4 c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{};
    for (int64_t k = k0; k < k1; ++k) {
      const V4 b0 = simd::load(b);
      const V4 b1 = simd::load(b + 4);
      const V4 a0 = simd::splat(a[0]);
      const V4 a1 = simd::splat(a[1]);
      const V4 a2 = simd::splat(a[2]);
      const V4 a3 = simd::splat(a[3]);
      c00 += a0 * b0; c01 += a0 * b1;
      c10 += a1 * b0; c11 += a1 * b1;
      c20 += a2 * b0; c21 += a2 * b1;
      c30 += a3 * b0; c31 += a3 * b1;
      a += MR;
      b += NR;
    }
    t00 += c00; t01 += c01;
    t10 += c10; t11 += c11;
    t20 += c20; t21 += c21;
    t30 += c30; t31 += c31;
  }
  if (full) {
    store_row(t00, t01, out.c, out, 0);
    store_row(t10, t11, out.c + out.ldc, out, 1);
    store_row(t20, t21, out.c + 2 * out.ldc, out, 2);
    store_row(t30, t31, out.c + 3 * out.ldc, out, 3);
    return;
  }
  t.v[0][0] = t00; t.v[0][1] = t01;
  t.v[1][0] = t10; t.v[1][1] = t11;
  t.v[2][0] = t20; t.v[2][1] = t21;
  t.v[3][0] = t30; t.v[3][1] = t31;
}

// Called through a pointer in (mutable) memory so that neither the compiler nor Binaryen's inliner
// (which ignores noinline) folds it into a long-running caller: V8 tiers up a wasm function only
// between calls (no on-stack replacement), so the hot loop must be its own, often-called function.
using MicroKernelFn = void (*)(int64_t, const float*, const float*, bool, const TileOut&, Tile&);
MicroKernelFn volatile micro_kernel = &micro_kernel_impl;

// Writes the valid mr x nr part of a partial tile (the edges of C).
void store_partial_tile(const Tile& t, int64_t mr, int64_t nr, const TileOut& o) {
  const V4 va = simd::splat(o.alpha);
  alignas(16) float tmp[MR][NR];
  for (int64_t r = 0; r < MR; ++r) {
    simd::store(&tmp[r][0], t.v[r][0] * va);
    simd::store(&tmp[r][4], t.v[r][1] * va);
  }
  for (int64_t r = 0; r < mr; ++r) {
    float* row = o.c + r * o.ldc;
    const float b = o.bias ? o.bias[r] : 0.0f;
    for (int64_t j = 0; j < nr; ++j) row[j] = tmp[r][j] + b + (o.load_c ? row[j] : 0.0f);
  }
}

// Packs rows [m0, m0+mc) x depth [k0, k0+kc) of a strided A into MR-row panels of stride kc*MR.
void pack_a_block(const float* src, int64_t rs, int64_t cs, int64_t m0, int64_t mc, int64_t k0, int64_t kc,
                  float* dst) {
  for (int64_t i = 0; i < mc; i += MR) {
    const int64_t rows = std::min(MR, mc - i);
    float* panel = dst + (i / MR) * kc * MR;
    for (int64_t r = 0; r < MR; ++r) {
      if (r >= rows) {
        for (int64_t k = 0; k < kc; ++k) panel[k * MR + r] = 0.0f;
        continue;
      }
      const float* s = src + (m0 + i + r) * rs + k0 * cs;
      for (int64_t k = 0; k < kc; ++k) panel[k * MR + r] = s[k * cs];
    }
  }
}

// Packs depth [k0, k0+kc) x columns [n0, n0+nc) of a strided B into NR-column panels of stride kc*NR.
void pack_b_block(const float* src, int64_t rs, int64_t cs, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                  float* dst) {
  for (int64_t j = 0; j < nc; j += NR) {
    const int64_t cols = std::min(NR, nc - j);
    float* panel = dst + (j / NR) * kc * NR;
    const float* s = src + k0 * rs + (n0 + j) * cs;
    if (cols == NR && cs == 1) {
      for (int64_t k = 0; k < kc; ++k) {
        simd::store(panel + k * NR, simd::load(s + k * rs));
        simd::store(panel + k * NR + 4, simd::load(s + k * rs + 4));
      }
      continue;
    }
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t c = 0; c < NR; ++c) panel[k * NR + c] = c < cols ? s[k * rs + c * cs] : 0.0f;
    }
  }
}

// The portable macro-kernel: the block's 4x8 tiles.
void macro_kernel_portable(const GemmBlock& g) {
  Tile t;
  for (int64_t i = 0; i < g.mc; i += MR) {
    const float* ap = g.a + (i / MR) * g.a_stride;
    const int64_t mr = std::min(MR, g.mc - i);
    for (int64_t j = 0; j < g.nc; j += NR) {
      const TileOut out{g.c + i * g.ldc + j, g.ldc, g.alpha, g.bias ? g.bias + i : nullptr, g.load_c};
      const int64_t nr = std::min(NR, g.nc - j);
      const bool full = mr == MR && nr == NR;
      micro_kernel(g.kc, ap, g.b + (j / NR) * g.b_stride, full, out, t);
      if (!full) store_partial_tile(t, mr, nr, out);
    }
  }
}

detail::GemmMacroKernel macro_kernel_of(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Avx2: return detail::gemm_macro_kernel_avx2();
    case GemmIsa::Avx512: return detail::gemm_macro_kernel_avx512();
    case GemmIsa::Portable: break;
  }
  return &macro_kernel_portable;
}

// Whether this build has the kernel of `isa` and the CPU its instructions (the operating system's
// support for the wider registers included: libgcc's feature bits check XCR0).
bool isa_supported(GemmIsa isa) {
  if (isa == GemmIsa::Portable) return true;
  if (macro_kernel_of(isa) == &macro_kernel_portable || !macro_kernel_of(isa)) return false;
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == GemmIsa::Avx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

GemmIsa best_isa() {
  for (GemmIsa isa : {GemmIsa::Avx512, GemmIsa::Avx2})
    if (isa_supported(isa)) return isa;
  return GemmIsa::Portable;
}

// The instruction set the GEMM uses: one for the process (the worker threads of the native addon
// each set the same one).
std::atomic<GemmIsa>& selected_isa() {
  static std::atomic<GemmIsa> isa{best_isa()};
  return isa;
}

// Where the kc x (MR or NR) panels of one block live: first panel and distance between panels.
struct PanelBlock {
  const float* data;
  int64_t stride;
};

void fill_without_product(int64_t M, int64_t N, float* c, int64_t ldc, const GemmEpilogue& ep) {
  for (int64_t i = 0; i < M; ++i) {
    const float b = ep.row_bias ? ep.row_bias[i] : 0.0f;
    for (int64_t j = 0; j < N; ++j) c[i * ldc + j] = b + (ep.accumulate ? c[i * ldc + j] : 0.0f);
  }
}

}  // namespace

namespace {
// A scratch buffer whose bytes count against the memory budget (core/size.h) while it is held.
struct ScratchBuffer {
  std::vector<float> data;
  ~ScratchBuffer() { release_memory(data.size() * sizeof(float)); }
};
}  // namespace

float* gemm_scratch(int slot, size_t floats) {
  thread_local std::array<ScratchBuffer, 8> buffers;
  std::vector<float>& buf = buffers.at(static_cast<size_t>(slot)).data;
  if (buf.size() < floats) {
    release_memory(buf.size() * sizeof(float));
    buf.clear();
    buf.shrink_to_fit();
    reserve_memory(static_cast<uint64_t>(floats) * sizeof(float), "a scratch buffer of " + std::to_string(floats) + " floats");
    try {
      buf.resize(floats);
    } catch (...) {
      release_memory(static_cast<uint64_t>(floats) * sizeof(float));
      throw;
    }
  }
  return buf.data();
}

GemmIsa gemm_isa() { return selected_isa().load(); }

std::vector<GemmIsa> gemm_isas() {
  std::vector<GemmIsa> out;
  for (GemmIsa isa : {GemmIsa::Portable, GemmIsa::Avx2, GemmIsa::Avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Avx2: return "avx2";
    case GemmIsa::Avx512: return "avx512";
    case GemmIsa::Portable: break;
  }
  return "portable";
}

void set_gemm_isa(const std::string& name) {
  std::string names;
  for (GemmIsa isa : gemm_isas()) {
    if (name == gemm_isa_name(isa)) {
      selected_isa().store(isa);
      return;
    }
    names += std::string(names.empty() ? "" : ", ") + "'" + gemm_isa_name(isa) + "'";
  }
  fail("unknown or unavailable GEMM instruction set '" + name + "' (this build and CPU have " + names + ")");
}

size_t gemm_packed_a_size(int64_t M, int64_t K) { return static_cast<size_t>(round_up(M, MR) * K); }
size_t gemm_packed_b_size(int64_t K, int64_t N) { return static_cast<size_t>(round_up(N, NR) * K); }

void gemm_pack_a(const float* src, int64_t rs, int64_t cs, int64_t M, int64_t K, float* dst) {
  pack_a_block(src, rs, cs, 0, M, 0, K, dst);
}

void gemm_pack_b(const float* src, int64_t rs, int64_t cs, int64_t K, int64_t N, float* dst) {
  pack_b_block(src, rs, cs, 0, K, 0, N, dst);
}

void gemm(int64_t M, int64_t N, int64_t K, const GemmOperand& a, const GemmOperand& b, float* c, int64_t ldc,
          const GemmEpilogue& ep) {
  check(a.kind != GemmOperand::Kind::Callback, "gemm: callback packing is only supported for B");
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    fill_without_product(M, N, c, ldc, ep);
    return;
  }
  const detail::GemmMacroKernel macro_kernel = macro_kernel_of(selected_isa().load(std::memory_order_relaxed));
  const bool a_packed = a.kind == GemmOperand::Kind::Packed;
  float* a_buf = a_packed ? nullptr : gemm_scratch(0, static_cast<size_t>(kGemmMC * kGemmKC));
  float* b_buf =
      b.kind == GemmOperand::Kind::Packed ? nullptr : gemm_scratch(1, static_cast<size_t>(kGemmNC * kGemmKC));

  // Equal K blocks (576 -> 2 x 288, not 256 + 256 + 64): a thin last block costs a full pass over C.
  const int64_t kblocks = (K + kGemmKC - 1) / kGemmKC;
  const int64_t kstep = (K + kblocks - 1) / kblocks;
  for (int64_t n0 = 0; n0 < N; n0 += kGemmNC) {
    const int64_t nc = std::min(kGemmNC, N - n0);
    for (int64_t k0 = 0; k0 < K; k0 += kstep) {
      const int64_t kc = std::min(kstep, K - k0);
      PanelBlock bp{b_buf, kc * NR};
      switch (b.kind) {
        case GemmOperand::Kind::Packed: bp = {b.data + (n0 / NR) * K * NR + k0 * NR, K * NR}; break;
        case GemmOperand::Kind::Strided: pack_b_block(b.data, b.rs, b.cs, k0, kc, n0, nc, b_buf); break;
        case GemmOperand::Kind::Callback: b.pack(b.context, k0, kc, n0, nc, b_buf); break;
      }
      const bool first = k0 == 0;
      for (int64_t m0 = 0; m0 < M; m0 += kGemmMC) {
        const int64_t mc = std::min(kGemmMC, M - m0);
        PanelBlock ap{a_buf, kc * MR};
        if (a_packed) {
          ap = {a.data + (m0 / MR) * K * MR + k0 * MR, K * MR};
        } else {
          pack_a_block(a.data, a.rs, a.cs, m0, mc, k0, kc, a_buf);
        }
        macro_kernel(GemmBlock{mc, nc, kc, ap.data, ap.stride, bp.data, bp.stride, c + m0 * ldc + n0, ldc, ep.alpha,
                               first && ep.row_bias ? ep.row_bias + m0 : nullptr, !first || ep.accumulate});
      }
    }
  }
}

}  // namespace ptq::ops
