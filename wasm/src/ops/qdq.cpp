// QuantizeLinear / DequantizeLinear (opsets 10, 13, 19, 21): per-tensor, per-axis (13+) and blocked
// (21, `block_size`) scales (quant/param_layout.h); integer types int4/uint4 (held one per byte)/int8/
// uint8/int16/uint16 (plus int32 input to DequantizeLinear). float8 types have no ptq::Tensor dtype.
//   Q:  y = saturate(round_half_even(x / scale) + zero_point)   (NaN: the zero point)
//   DQ: y = (x - zero_point) * scale
// Both per value by quant/fake_quant.h, the arithmetic of the HzCalibration fake-quant too, so a
// Horizon model rewritten by hz_to_qdq runs bit-identically.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "quant/fake_quant.h"
#include "quant/param_layout.h"

namespace ptq::exec {
namespace {

using quant::ParamLayout;

// The parameter layout of x (quant/param_layout.h), its scale's shape checked against it.
ParamLayout param_layout(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  const bool scalar = scale.rank() == 0 || (scale.rank() == 1 && scale.numel() == 1);
  const int64_t block = ctx.opset() >= 21 ? ctx.node.attr_int("block_size", 0) : 0;
  ctx.check(block >= 0, "attribute 'block_size' must be >= 0");
  if (scalar && block == 0) return quant::per_tensor_layout(x.numel());  // one run over the whole tensor
  ctx.check(ctx.opset() >= 13, "scale must be a scalar before opset 13 (per-axis needs opset 13), got " +
                                   shape_str(scale.shape()));
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.node.attr_int("axis", 1);
  ctx.check(axis >= -rank && axis < rank, "attribute 'axis' " + std::to_string(axis) + " is out of range for input " +
                                              shape_str(x.shape()));
  if (axis < 0) axis += rank;
  const ParamLayout p = quant::axis_layout(x.shape(), axis, block);
  if (block == 0) {
    ctx.check(scale.rank() == 1 && scale.dim(0) == p.channels,
              "per-axis scale " + shape_str(scale.shape()) + " must be 1-D with " + std::to_string(p.channels) +
                  " elements (input " + shape_str(x.shape()) + ", axis " + std::to_string(axis) + ")");
    return p;
  }
  const Shape expected = quant::blocked_param_shape(x.shape(), axis, block);
  ctx.check(scale.shape() == expected, "blocked scale " + shape_str(scale.shape()) + " must have shape " +
                                           shape_str(expected) + " (block_size " + std::to_string(block) + ")");
  return p;
}

// Zero points as int64 (0 when absent), checked against the scale's shape.
std::vector<int64_t> zero_points(const KernelContext& ctx, const Tensor* zp, const Tensor& scale) {
  if (!zp) return std::vector<int64_t>(static_cast<size_t>(scale.numel()), 0);
  ctx.check(zp->numel() == scale.numel(), "zero point " + shape_str(zp->shape()) + " does not match scale " +
                                              shape_str(scale.shape()));
  return zp->to_int64_vector();
}

bool is_quantized_type(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16 || dtype_is_packed4(t);
}

// The integer range of a quantized type (int4 / uint4 are held one per byte, core/dtype.h).
void type_range(DType t, float& qmin, float& qmax) {
  switch (t) {
    case DType::Int4: qmin = -8.0f, qmax = 7.0f; return;
    case DType::UInt4: qmin = 0.0f, qmax = 15.0f; return;
    case DType::Int8: qmin = -128.0f, qmax = 127.0f; return;
    case DType::UInt8: qmin = 0.0f, qmax = 255.0f; return;
    case DType::Int16: qmin = -32768.0f, qmax = 32767.0f; return;
    default: qmin = 0.0f, qmax = 65535.0f; return;
  }
}

template <class Q>
void quantize_as(const ParamLayout& p, DType type, const float* x, const std::vector<float>& scale,
                 const std::vector<int64_t>& zp, Q* y) {
  float qmin = 0.0f, qmax = 0.0f;
  type_range(type, qmin, qmax);
  quant::for_each_param_run(p, [&](int64_t offset, int64_t k, int64_t step) {
    for (int64_t i = 0; i < p.inner; ++i, k += step) {
      const float s = scale[static_cast<size_t>(k)];
      const float z = static_cast<float>(zp[static_cast<size_t>(k)]);
      y[offset + i] = quant::to_integer<Q>(quant::quantize_value(x[offset + i], s, z, qmin, qmax), z);
    }
  });
}

void quantize_linear(KernelContext& ctx) {
  const Tensor& x_in = ctx.required(0);
  const Tensor& scale_in = ctx.required(1);
  const Tensor* zp = ctx.input(2);
  ctx.check(x_in.dtype() == DType::Float || x_in.dtype() == DType::Float16 || x_in.dtype() == DType::BFloat16 ||
                x_in.dtype() == DType::Double || x_in.dtype() == DType::Int32,
            "unsupported input dtype " + dtype_name(x_in.dtype()));
  DType out = zp ? zp->dtype() : DType::UInt8;
  const int64_t requested = ctx.opset() >= 21 ? ctx.node.attr_int("output_dtype", 0) : 0;
  if (requested != 0) {
    if (zp)
      ctx.check(static_cast<int64_t>(zp->dtype()) == requested, "attribute 'output_dtype' " + std::to_string(requested) +
                                                                     " differs from the zero point's dtype " +
                                                                     dtype_name(zp->dtype()));
    out = static_cast<DType>(requested);
  }
  ctx.check(is_quantized_type(out), "unsupported output type (zero point / 'output_dtype'): only int4, uint4, int8, "
                                    "uint8, int16 and uint16 are supported");
  const Tensor x = x_in.to_float();
  const ParamLayout p = param_layout(ctx, x, scale_in);
  const std::vector<float> scale = scale_in.to_float_vector();
  const std::vector<int64_t> z = zero_points(ctx, zp, scale_in);
  Tensor y(out, x.shape());
  const float* xd = x.data<float>();
  switch (out) {
    case DType::Int8:
    case DType::Int4: quantize_as(p, out, xd, scale, z, y.mutable_data<int8_t>()); break;
    case DType::UInt8:
    case DType::UInt4: quantize_as(p, out, xd, scale, z, y.mutable_data<uint8_t>()); break;
    case DType::Int16: quantize_as(p, out, xd, scale, z, y.mutable_data<int16_t>()); break;
    default: quantize_as(p, out, xd, scale, z, y.mutable_data<uint16_t>()); break;
  }
  ctx.outputs[0] = y;
}

template <class Q>
void dequantize_as(const ParamLayout& p, const Q* x, const std::vector<float>& scale, const std::vector<int64_t>& zp,
                   float* y) {
  // Exact in float32: x and the zero point share an integer type of at most 16 bits, or x is int32
  // with a zero point of 0.
  quant::for_each_param_run(p, [&](int64_t offset, int64_t k, int64_t step) {
    for (int64_t i = 0; i < p.inner; ++i, k += step)
      y[offset + i] = quant::dequantize_value(static_cast<float>(x[offset + i]),
                                              static_cast<float>(zp[static_cast<size_t>(k)]),
                                              scale[static_cast<size_t>(k)]);
  });
}

void dequantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& scale_in = ctx.required(1);
  const Tensor* zp = ctx.input(2);
  ctx.check(is_quantized_type(x.dtype()) || x.dtype() == DType::Int32,
            "unsupported input dtype " + dtype_name(x.dtype()) + " (int4, uint4, int8, uint8, int16, uint16, int32 are supported)");
  ctx.check(!zp || zp->dtype() == x.dtype(), "zero point dtype " + (zp ? dtype_name(zp->dtype()) : std::string()) +
                                                 " differs from the input's " + dtype_name(x.dtype()));
  const ParamLayout p = param_layout(ctx, x, scale_in);
  const std::vector<float> scale = scale_in.to_float_vector();
  const std::vector<int64_t> z = zero_points(ctx, zp, scale_in);
  if (x.dtype() == DType::Int32)
    ctx.check(std::all_of(z.begin(), z.end(), [](int64_t v) { return v == 0; }), "int32 input needs a zero point of 0");
  Tensor y(DType::Float, x.shape());
  float* yd = y.mutable_data<float>();
  switch (x.dtype()) {
    case DType::Int8:
    case DType::Int4: dequantize_as(p, x.data<int8_t>(), scale, z, yd); break;
    case DType::UInt8:
    case DType::UInt4: dequantize_as(p, x.data<uint8_t>(), scale, z, yd); break;
    case DType::Int16: dequantize_as(p, x.data<int16_t>(), scale, z, yd); break;
    case DType::UInt16: dequantize_as(p, x.data<uint16_t>(), scale, z, yd); break;
    default: dequantize_as(p, x.data<int32_t>(), scale, z, yd); break;
  }
  // Opset 19+: the output has the scale's type (float16 / bfloat16 scales give such outputs).
  const DType out = ctx.opset() >= 19 ? scale_in.dtype() : DType::Float;
  ctx.outputs[0] = out == DType::Float ? y : cast_tensor(y, out);
}

// DynamicQuantizeLinear: uint8 quantization of x with its own range (widened to include 0), the
// parameters as quant::dynamic_params gives them (an all-zero x: scale 1, zero point 0, y 0), y as
// QuantizeLinear.
void dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  ctx.check(x.dtype() == DType::Float, "unsupported input dtype " + dtype_name(x.dtype()) + " (float32 only)");
  const float* xs = x.data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    ctx.check(std::isfinite(xs[i]), "input holds a non-finite value at element " + std::to_string(i));
    lo = std::min(lo, xs[i]);
    hi = std::max(hi, xs[i]);
  }
  const auto [scale, zp] = quant::dynamic_params(lo, hi, 0.0f, 255.0f);
  Tensor y(DType::UInt8, x.shape());
  uint8_t* q = y.mutable_data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    q[i] = quant::to_integer<uint8_t>(quant::quantize_value(xs[i], scale, zp, 0.0f, 255.0f), zp);
  ctx.outputs[0] = y;
  if (ctx.has_output(1)) ctx.outputs[1] = Tensor::from_floats({}, {scale});
  if (ctx.has_output(2)) {
    Tensor z(DType::UInt8, {});
    z.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    ctx.outputs[2] = z;
  }
}

}  // namespace

namespace shape {
namespace {

void qdq_quantize(const In& x, Outs& o) {
  same_as_input(x, o);
  DType t = x.shape(2) ? x.dtype(2) : DType::UInt8;
  if (x.node.has_attr("output_dtype") && x.node.attr_int("output_dtype", 0) != 0)
    t = static_cast<DType>(x.node.attr_int("output_dtype", 0));
  o[0].dtype = t;
}

void qdq_dequantize(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = x.opset() >= 19 && x.shape(1) ? x.dtype(1) : DType::Float;
}

}  // namespace
}  // namespace shape

void register_qdq(OpRegistry& r) {
  r.add("", "DynamicQuantizeLinear", &dynamic_quantize_linear).meta("quantization", "x");
  r.add("", "QuantizeLinear", &quantize_linear)
      .rule(shape::qdq_quantize)
      .meta("quantization", "x y_scale y_zero_point?");
  r.add("", "DequantizeLinear", &dequantize_linear)
      .rule(shape::qdq_dequantize)
      .meta("quantization", "x x_scale x_zero_point?");
}

}  // namespace ptq::exec
