#pragma once
// Helpers of the 8-bit integer ops (MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv):
// zero points, scales, and the requantization of exact int64 accumulators to uint8/int8.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "exec/kernel.h"

namespace ptq::ops {

inline bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// A zero point input: a scalar, or `count` values when count > 0 (per row / column / channel);
// absent means 0. Returned with max(count, 1) entries. It must share its operand's dtype.
inline std::vector<int64_t> zero_points(const exec::KernelContext& ctx, size_t index, DType dtype, int64_t count,
                                        const char* what) {
  const auto n = static_cast<size_t>(std::max<int64_t>(count, 1));
  const Tensor* z = ctx.input(index);
  if (!z) return std::vector<int64_t>(n, 0);
  ctx.check(z->dtype() == dtype, std::string(what) + " dtype " + dtype_name(z->dtype()) + " differs from its operand's " +
                                     dtype_name(dtype));
  ctx.check(z->numel() == 1 || (count > 0 && z->rank() == 1 && z->dim(0) == count),
            std::string(what) + " must be a scalar" + (count > 0 ? " or hold " + std::to_string(count) + " values" : "") +
                ", got " + shape_str(z->shape()));
  const std::vector<int64_t> v = z->to_int64_vector();
  return z->numel() == 1 ? std::vector<int64_t>(n, v[0]) : v;
}

// Positive finite float32 scales: a scalar, or `count` values when count > 0. Returned with
// max(count, 1) entries.
inline std::vector<float> scales(const exec::KernelContext& ctx, size_t index, int64_t count, const char* what) {
  const Tensor& t = ctx.required(index);
  ctx.check(t.dtype() == DType::Float && (t.numel() == 1 || (count > 0 && t.rank() == 1 && t.dim(0) == count)),
            std::string(what) + " must be a float32 scalar" +
                (count > 0 ? " or hold " + std::to_string(count) + " values" : ""));
  std::vector<float> v(t.data<float>(), t.data<float>() + t.numel());
  for (float f : v) ctx.check(f > 0 && std::isfinite(f), std::string(what) + " must be positive and finite");
  if (v.size() == 1) v.assign(static_cast<size_t>(std::max<int64_t>(count, 1)), v[0]);
  return v;
}

// y[i] = saturate(round_half_even(float(acc[i]) * multiplier(i)) + y_zero_point) in the zero
// point's 8-bit type (input `zp_index`, a scalar), the float32 arithmetic onnxruntime uses.
template <class Multiplier>
Tensor requantize(const exec::KernelContext& ctx, const std::vector<int64_t>& acc, const Shape& shape, size_t zp_index,
                  Multiplier multiplier) {
  const Tensor& yz = ctx.required(zp_index);
  ctx.check(is_8bit(yz.dtype()) && yz.numel() == 1, "y_zero_point must be a uint8 or int8 scalar");
  const double zp = static_cast<double>(yz.get_as_int64(0));
  const bool u8 = yz.dtype() == DType::UInt8;
  const double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  Tensor y(yz.dtype(), shape);
  for (size_t i = 0; i < acc.size(); ++i) {
    const double q = std::clamp(std::nearbyint(static_cast<float>(acc[i]) * multiplier(i)) + zp, lo, hi);
    if (u8) y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(q);
    else y.mutable_data<int8_t>()[i] = static_cast<int8_t>(q);
  }
  return y;
}

}  // namespace ptq::ops
