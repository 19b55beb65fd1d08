#pragma once
// The one quantize / dequantize arithmetic of a value, shared by the HzCalibration fake-quant (§1.5,
// quant/calibration.cpp) and the QuantizeLinear / DequantizeLinear kernels (ops/qdq.cpp), so a
// Horizon model rewritten to Q/DQ by quant/hz_to_qdq runs bit-identically:
//   quantize:   q = clamp(R(x / scale) + zero_point, qmin, qmax)   float32, a true division
//   dequantize: y = (q - zero_point) · scale                         float32
// R is round half to even (Python's round, numpy's rint, ONNX's QuantizeLinear) or, for runs that ask
// for it, half away from zero. Saturation clamps to the type's [qmin, qmax]; ±inf saturate.
// NaN: quantize_value keeps it (NaN in, NaN out), so the fake-quant of a NaN is NaN and a NaN stays
// visible to the analyses. Only an integer store must choose a value: to_integer writes the zero point,
// which dequantizes to 0. (The ONNX specification leaves NaN in QuantizeLinear to integer types
// undefined; onnxruntime's CPU kernel gives qmin, the low saturation of its min/max.)
#include <algorithm>
#include <cmath>

namespace ptq::quant {

enum class RoundMode { HalfToEven, HalfAwayFromZero };

template <RoundMode R = RoundMode::HalfToEven>
inline float round_value(float v) {
  if constexpr (R == RoundMode::HalfToEven) return std::nearbyint(v);
  else return std::round(v);
}

// NaN passes through std::max / std::min as their first argument, so it comes out unchanged.
template <RoundMode R = RoundMode::HalfToEven>
inline float quantize_value(float x, float scale, float zero_point, float qmin, float qmax) {
  const float q = round_value<R>(x / scale) + zero_point;
  return std::min(std::max(q, qmin), qmax);
}

inline float dequantize_value(float q, float zero_point, float scale) { return (q - zero_point) * scale; }

// A quantized value stored in the integer type Q; NaN, which no integer holds, as the zero point.
template <class Q>
inline Q to_integer(float q, float zero_point) {
  return static_cast<Q>(std::isnan(q) ? zero_point : q);
}

// The parameters of dynamic quantization (DynamicQuantizeLinear, and a dynamic quantizer, §1.12) from
// the range [lo, hi] of the values, already widened to include 0: scale = (hi - lo) / (qmax - qmin),
// zero point = clamp(qmin - lo / scale rounded half to even, qmin, qmax). An all-zero range has
// scale 1 (the values all quantize to the zero point), as onnxruntime gives it where the
// specification's formula divides by 0.
struct DynamicParams {
  float scale, zero_point;
};
inline DynamicParams dynamic_params(float lo, float hi, float qmin, float qmax) {
  const float scale = hi > lo ? (hi - lo) / (qmax - qmin) : 1.0f;
  return {scale, std::min(std::max(std::nearbyint(qmin - lo / scale), qmin), qmax)};
}

}  // namespace ptq::quant
