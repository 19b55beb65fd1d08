#pragma once
// Single-precision GEMM, C[M,N] = alpha * A[M,K] * B[K,N] (+ row bias) (+ C), single threaded.
//
// Design (see docs performance notes A1/A6): a 4x8 register tile (8 f32x4 accumulators, which fit
// the 15 usable XMM registers V8 has on x64; 6x8 spills there) over operands packed into panels:
//   A panels: kGemmMR rows, stored k-major (for each k, MR consecutive values), zero-padded rows;
//   B panels: kGemmNR columns, stored k-major (for each k, NR consecutive values), zero-padded cols.
// The driver blocks over N (kGemmNC columns of packed B stay in L2) and K (kGemmKC deep, so one A
// panel slice stays in L1). Constant operands (conv weights, MatMul initialisers) are packed once
// over the full depth K with pack_a/pack_b and cached by the caller; other operands are packed per
// block from a strided view, or by a caller-supplied callback (im2col writes panels directly).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ptq::ops {

inline constexpr int64_t kGemmMR = 4;
inline constexpr int64_t kGemmNR = 8;
inline constexpr int64_t kGemmKC = 256;
inline constexpr int64_t kGemmNC = 256;  // multiple of kGemmNR
inline constexpr int64_t kGemmMC = 128;  // multiple of kGemmMR

// Packs B[k0:k0+kc, n0:n0+nc] into NR-column panels: panel j at dst + j*kc*NR, row k at +k*NR.
// Columns beyond nc in the last panel must be written as zeros.
using GemmPackFn = void (*)(const void* context, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst);

struct GemmOperand {
  enum class Kind { Strided, Packed, Callback };
  Kind kind = Kind::Strided;
  const float* data = nullptr;  // Strided: element (r, c) at data[r*rs + c*cs]; Packed: pack_a/pack_b output
  int64_t rs = 0;
  int64_t cs = 0;
  GemmPackFn pack = nullptr;  // Callback (B only)
  const void* context = nullptr;

  static GemmOperand strided(const float* data, int64_t rs, int64_t cs) {
    GemmOperand o;
    o.data = data; o.rs = rs; o.cs = cs;
    return o;
  }
  static GemmOperand packed(const float* data) {
    GemmOperand o;
    o.kind = Kind::Packed; o.data = data;
    return o;
  }
  static GemmOperand callback(GemmPackFn fn, const void* context) {
    GemmOperand o;
    o.kind = Kind::Callback; o.pack = fn; o.context = context;
    return o;
  }
};

// Floats needed by pack_a / pack_b for the full matrix.
size_t gemm_packed_a_size(int64_t M, int64_t K);
size_t gemm_packed_b_size(int64_t K, int64_t N);
// Full-depth packing of a strided matrix (element (r, c) at src[r*rs + c*cs]).
void gemm_pack_a(const float* src, int64_t rs, int64_t cs, int64_t M, int64_t K, float* dst);
void gemm_pack_b(const float* src, int64_t rs, int64_t cs, int64_t K, int64_t N, float* dst);

struct GemmEpilogue {
  float alpha = 1.0f;
  const float* row_bias = nullptr;  // added once per row of C (conv bias), or null
  bool accumulate = false;          // add to the existing contents of C
};

// C (row stride ldc) = alpha * A.B + row_bias + (accumulate ? C : 0).
void gemm(int64_t M, int64_t N, int64_t K, const GemmOperand& a, const GemmOperand& b, float* c, int64_t ldc,
          const GemmEpilogue& epilogue = {});

// The instruction set of the GEMM's kernels (gemm_kernel_isa.h). The portable kernel runs everywhere
// (the wasm build has only it); a native x86-64 build also has AVX2 + FMA and AVX-512 kernels and uses
// the best the CPU has. Their fused multiply-adds round differently: results agree within float error,
// not bit for bit.
enum class GemmIsa { Portable, Avx2, Avx512 };
GemmIsa gemm_isa();                   // the one in use
std::vector<GemmIsa> gemm_isas();     // those this build and CPU can use, portable first
const char* gemm_isa_name(GemmIsa);   // "portable", "avx2", "avx512"
// Uses the named one from now on (a native face's setting); a ptq::Error naming the available ones
// when this build or CPU lacks it.
void set_gemm_isa(const std::string& name);

// Grow-only per-thread scratch buffers (slot 0..7; 0-1 gemm, 2 conv, 3 conv_transpose, 4-6 winograd), reused across calls to avoid a malloc (and on
// glibc an mmap + page faults) per kernel invocation. Contents are unspecified on return.
float* gemm_scratch(int slot, size_t floats);

}  // namespace ptq::ops
