#pragma once
// Portable 4 x float32 vectors via the GCC/Clang vector extension: g++ lowers them to SSE, clang
// with -msimd128 to wasm f32x4 (a splat of a loaded scalar becomes v128.load32_splat). One source
// for both targets instead of intrinsics plus a scalar fallback.
#include <cstdint>
#include <cstring>

namespace ptq::ops::simd {

typedef float V4 __attribute__((vector_size(16)));
typedef int32_t V4i __attribute__((vector_size(16)));  // also the type of a V4 comparison

// memcpy keeps unaligned access and strict aliasing well-defined; both compilers emit one load/store.
inline V4 load(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, V4 v) { std::memcpy(p, &v, sizeof(v)); }
inline V4 splat(float x) { return V4{x, x, x, x}; }

// Elements p[0], p[S], p[2S], p[3S] for S = 1 or 2. With S = 2 this reads p[7], one element past
// the last one used: callers keep a float of slack after their data.
template <int S>
inline V4 load_every(const float* p) {
  static_assert(S == 1 || S == 2, "strides 1 and 2 only");
  if constexpr (S == 1) {
    return load(p);
  } else {
    return __builtin_shufflevector(load(p), load(p + 4), 0, 2, 4, 6);
  }
}

// b > a ? b : a, so a NaN in b is skipped (onnxruntime's MaxPool rule): one maxps natively and
// f32x4.pmax in wasm (pmax(a, b) = a < b ? b : a), where a plain select would take 3 instructions.
inline V4 max_skip_nan(V4 a, V4 b) {
#ifdef __wasm_simd128__
  return __builtin_wasm_pmax_f32x4(a, b);
#else
  return b > a ? b : a;
#endif
}

// mask ? a : b per lane (mask lanes all ones or all zeros, as comparisons give).
inline V4 select(V4i mask, V4 a, V4 b) { return (V4)((mask & (V4i)a) | (~mask & (V4i)b)); }

// e^x per lane, float32: Cephes' expf (range reduction by ln 2 split in two, degree-6 polynomial,
// exponent by bit construction), within ~1 ulp of std::exp on [-87.3, 88.4]; inputs beyond are
// clamped there (so the result saturates at ~1.2e-38 / ~2.4e38 instead of 0 / inf); NaN stays NaN.
// The constants come from memory (exp_constants(), defined out of line so the compiler cannot fold
// them back): V8 otherwise rebuilds each v128 constant inside the loop, which made this 2x slower.
struct ExpConstants {
  V4 hi, lo, log2e, magic, ln2_hi, ln2_lo, p0, p1, p2, p3, p4, p5, one;
};
const ExpConstants& exp_constants();

inline V4 exp(V4 x, const ExpConstants& k) {
  x = select(x > k.hi, k.hi, x);
  x = select(x < k.lo, k.lo, x);
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer n and leaves n in the low mantissa bits, so the
  // scale 2^n is built by integer arithmetic on those bits (no float -> int conversion).
  const V4 shifted = x * k.log2e + k.magic;
  const V4 n = shifted - k.magic;
  const V4 r = (x - n * k.ln2_hi) - n * k.ln2_lo;
  V4 p = k.p0;
  p = p * r + k.p1;
  p = p * r + k.p2;
  p = p * r + k.p3;
  p = p * r + k.p4;
  p = p * r + k.p5;
  p = p * (r * r) + r + k.one;
  // NaN lanes: p is NaN and stays NaN whatever the scale's bits.
  const V4i scale = ((V4i)shifted - (V4i)k.magic + 127) << 23;
  return p * (V4)scale;
}

// Short copies / fills inline: in wasm, std::copy / std::fill become calls to libc memcpy / memset,
// whose per-call cost dominates for rows of a few dozen floats (depthwise padding, 7x7 planes).
inline void copy(float* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) store(dst + i, load(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}
inline void fill(float* dst, float value, int64_t n) {
  const V4 v = splat(value);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) store(dst + i, v);
  for (; i < n; ++i) dst[i] = value;
}

}  // namespace ptq::ops::simd
