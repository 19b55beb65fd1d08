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
inline V4 exp(V4 x) {
  const V4 hi = splat(88.3762626647950f), lo = splat(-87.3365478515625f);
  x = select(x > hi, hi, x);
  x = select(x < lo, lo, x);
  const V4 magic = splat(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  V4 n = (x * splat(1.44269504088896341f) + magic) - magic;
  const V4 r = (x - n * splat(0.693359375f)) - n * splat(-2.12194440e-4f);
  V4 p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * (r * r) + r + splat(1.0f);
  n = select(n == n, n, splat(0.0f));  // NaN lanes: p is NaN already; keep the conversion defined
  const V4i e = (__builtin_convertvector(n, V4i) + 127) << 23;
  return p * (V4)e;
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
