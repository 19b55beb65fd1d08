// Tensors built from an index pattern: Trilu (keep a triangle of the last two dims), EyeLike (ones
// on a diagonal) and OneHot (the on value where an index points, the off value elsewhere). Elements
// are copied by their byte size, so any dtype works.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

// A scalar int64 input (rank 0 or one element); `fallback` when absent.
int64_t scalar_int_input(const KernelContext& ctx, size_t index, const char* what, int64_t fallback) {
  const Tensor* t = ctx.input(index);
  if (!t) return fallback;
  ctx.check(t->dtype() == DType::Int64 && t->numel() == 1,
            std::string("input '") + what + "' must be a single int64, got " + dtype_name(t->dtype()) + " " +
                shape_str(t->shape()));
  return t->data<int64_t>()[0];
}

// Trilu: for each matrix in the last two dims, keeps elements with j - i >= k (upper, the default)
// or j - i <= k (lower) and zeroes the rest.
void trilu(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() >= 2, "input must have rank >= 2, got " + shape_str(x.shape()));
  const int64_t k = scalar_int_input(ctx, 1, "k", 0);
  const int64_t upper = ctx.node.attr_int("upper", 1);
  ctx.check(upper == 0 || upper == 1, "attribute 'upper' must be 0 or 1, got " + std::to_string(upper));
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  Tensor out = Tensor::zeros(x.dtype(), x.shape());
  const size_t esize = dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  const int64_t matrices = rows * cols != 0 ? x.numel() / (rows * cols) : 0;
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      // Kept columns of row i: [max(0, i + k), cols) for upper, [0, min(cols, i + k + 1)) for lower.
      const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      if (hi <= lo) continue;
      const size_t at = static_cast<size_t>((m * rows + i) * cols + lo) * esize;
      std::memcpy(dst + at, src + at, static_cast<size_t>(hi - lo) * esize);
    }
  }
  ctx.outputs[0] = out;
}

// The bytes of the value 1 in `dtype` (as cast_tensor converts it).
std::vector<uint8_t> one_in(DType dtype) {
  const Tensor one = cast_tensor(Tensor::from_floats({1}, {1.0f}), dtype);
  const auto* p = static_cast<const uint8_t*>(one.raw());
  return std::vector<uint8_t>(p, p + dtype_size(dtype));
}

// EyeLike: a 2-D tensor of the input's shape, dtype `dtype` (default the input's), ones at
// j - i == k and zeros elsewhere.
void eye_like(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.rank() == 2, "input must be 2-D, got " + shape_str(x.shape()));
  DType dtype = x.dtype();
  if (ctx.node.has_attr("dtype")) {
    const int64_t d = ctx.node.attr_int("dtype", 0);
    ctx.check(d > 0 && d <= INT32_MAX && dtype_supported(static_cast<int32_t>(d)) &&
                  dtype_size(static_cast<DType>(d)) > 0,
              "unsupported value " + std::to_string(d) + " of attribute 'dtype'");
    dtype = static_cast<DType>(d);
  }
  ctx.check(dtype_size(dtype) > 0, "unsupported dtype " + dtype_name(dtype));
  const int64_t k = ctx.node.attr_int("k", 0);
  const int64_t rows = x.dim(0), cols = x.dim(1);
  Tensor out = Tensor::zeros(dtype, x.shape());
  const std::vector<uint8_t> one = one_in(dtype);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t i = 0; i < rows; ++i) {
    // Compared without forming i + k, which could overflow for an extreme k.
    if (k < -i || k >= cols - i) continue;
    std::memcpy(dst + static_cast<size_t>(i * cols + i + k) * one.size(), one.data(), one.size());
  }
  ctx.outputs[0] = out;
}

// OneHot: output rank = indices rank + 1, the new axis (default -1) of length depth. Indices of any
// numeric type are truncated to integers; negative ones count from depth; values outside
// [-depth, depth) give a row of off values (ONNX spec). values = [off, on] sets the output dtype.
void one_hot(KernelContext& ctx) {
  const Tensor& indices = ctx.required(0);
  const Tensor& depth_t = ctx.required(1);
  const Tensor& values = ctx.required(2);
  ctx.check(depth_t.numel() == 1, "depth must hold one value, got shape " + shape_str(depth_t.shape()));
  ctx.check(values.numel() == 2 && values.rank() == 1, "values must be [off_value, on_value], got shape " +
                                                           shape_str(values.shape()));
  ctx.check(dtype_size(indices.dtype()) > 0 && indices.dtype() != DType::Bool,
            "unsupported indices dtype " + dtype_name(indices.dtype()));
  const double depth_d = depth_t.get_as_double(0);
  ctx.check(depth_d >= 1 && depth_d < 9.0e15, "depth must be a positive number, got " + std::to_string(depth_d));
  const auto depth = static_cast<int64_t>(depth_d);
  const int64_t r = static_cast<int64_t>(indices.rank());
  const auto axis = static_cast<size_t>(movement::normalize_axis(ctx, ctx.node.attr_int("axis", -1), r + 1));
  Shape shape = indices.shape();
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < indices.rank(); ++d) (d < axis ? outer : inner) *= indices.dim(d);
  const size_t esize = dtype_size(values.dtype());
  const auto* off = static_cast<const uint8_t*>(values.raw());
  const uint8_t* on = off + esize;
  Tensor out = movement::filled(values.dtype(), shape, off);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double v = std::trunc(indices.get_as_double(o * inner + i));
      if (!(v >= static_cast<double>(-depth) && v < static_cast<double>(depth))) continue;
      const auto at = static_cast<int64_t>(v) + (v < 0 ? depth : 0);
      std::memcpy(dst + static_cast<size_t>((o * depth + at) * inner + i) * esize, on, esize);
    }
  }
  ctx.outputs[0] = out;
}

}  // namespace

void register_index_fill(OpRegistry& r) {
  r.add("", "Trilu", &trilu).rule(shape::same_as_input).meta("", "input k?");
  r.add("", "EyeLike", &eye_like).meta("", "input");
  r.add("", "OneHot", &one_hot).meta("tensor", "indices depth values");
}

}  // namespace ptq::exec
