// The 8-bit integer convolutions: ConvInteger (int32 output) and QLinearConv (requantized 8-bit
// output). Direct convolution with exact int64 accumulation of (x - x_zero_point) * (w -
// w_zero_point); padding contributes nothing (onnxruntime pads with the zero point). The geometry
// (group, strides, dilations, pads, auto_pad) is Conv's (ops::conv_shape).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"
#include "ops/quant_int.h"

namespace ptq::exec {
namespace {

// acc[n, m, out...] = Σ (x - zx) * (w[m] - zw[m]) over the group's channels and the kernel.
std::vector<int64_t> integer_conv(const KernelContext& ctx, const Tensor& x, const Tensor& w, size_t x_zp, size_t w_zp,
                                  ops::ConvShape& cs) {
  ctx.check(ops::is_8bit(x.dtype()) && ops::is_8bit(w.dtype()),
            "x and w must be uint8 or int8, got " + dtype_name(x.dtype()) + " and " + dtype_name(w.dtype()));
  cs = ops::conv_shape(ctx, x, w);
  const int64_t zx = ops::zero_points(ctx, x_zp, x.dtype(), 0, "x_zero_point")[0];
  const std::vector<int64_t> zw = ops::zero_points(ctx, w_zp, w.dtype(), cs.M, "w_zero_point");
  const std::vector<int64_t> xv = x.to_int64_vector(), wv = w.to_int64_vector();
  const ops::Spatial& s = cs.sp;
  const size_t r = s.rank();
  const int64_t in_size = s.in_size(), out_size = s.out_size(), ksize = s.kernel_size();
  std::vector<int64_t> acc(static_cast<size_t>(cs.batch * cs.M * out_size), 0);
  std::vector<int64_t> o(r), k(r);
  for (int64_t n = 0; n < cs.batch; ++n) {
    for (int64_t m = 0; m < cs.M; ++m) {
      const int64_t g = m / cs.Mg;
      for (int64_t op = 0; op < out_size; ++op) {
        for (size_t d = r, rest = static_cast<size_t>(op); d-- > 0;) {
          o[d] = static_cast<int64_t>(rest % static_cast<size_t>(s.out[d]));
          rest /= static_cast<size_t>(s.out[d]);
        }
        int64_t sum = 0;
        for (int64_t kp = 0; kp < ksize; ++kp) {
          int64_t in_off = 0;
          bool inside = true;
          for (size_t d = r, rest = static_cast<size_t>(kp); d-- > 0;) {
            k[d] = static_cast<int64_t>(rest % static_cast<size_t>(s.kernel[d]));
            rest /= static_cast<size_t>(s.kernel[d]);
          }
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t at = o[d] * s.stride[d] - s.pad_begin[d] + k[d] * s.dilation[d];
            inside = at >= 0 && at < s.in[d];
            in_off = in_off * s.in[d] + at;
          }
          if (!inside) continue;
          for (int64_t c = 0; c < cs.Cg; ++c) {
            const int64_t xi = (n * cs.C + g * cs.Cg + c) * in_size + in_off;
            const int64_t wi = (m * cs.Cg + c) * ksize + kp;
            sum += (xv[static_cast<size_t>(xi)] - zx) * (wv[static_cast<size_t>(wi)] - zw[static_cast<size_t>(m)]);
          }
        }
        acc[static_cast<size_t>((n * cs.M + m) * out_size + op)] = sum;
      }
    }
  }
  return acc;
}

Shape output_shape(const ops::ConvShape& cs) {
  Shape shape{cs.batch, cs.M};
  shape.insert(shape.end(), cs.sp.out.begin(), cs.sp.out.end());
  return shape;
}

void conv_integer(KernelContext& ctx) {
  ops::ConvShape cs;
  const std::vector<int64_t> acc = integer_conv(ctx, ctx.required(0), ctx.required(1), 2, 3, cs);
  ctx.outputs[0] = cast_tensor(Tensor::from_int64s(output_shape(cs), acc), DType::Int32);
}

// QLinearConv: y = saturate(round((acc + B[m]) * x_scale * w_scale[m] / y_scale) + y_zero_point),
// the multiplier formed in float32 as onnxruntime does, rounding half to even.
void qlinear_conv(KernelContext& ctx) {
  ops::ConvShape cs;
  const std::vector<int64_t> acc = integer_conv(ctx, ctx.required(0), ctx.required(3), 2, 5, cs);
  const float xs = ops::scales(ctx, 1, 0, "x_scale")[0], ys = ops::scales(ctx, 6, 0, "y_scale")[0];
  const std::vector<float> ws = ops::scales(ctx, 4, cs.M, "w_scale");
  std::vector<int64_t> bias(static_cast<size_t>(cs.M), 0);
  if (const Tensor* b = ctx.input(8)) {
    ctx.check(b->dtype() == DType::Int32 && b->rank() == 1 && b->dim(0) == cs.M,
              "B must be an int32 tensor of " + std::to_string(cs.M) + " values");
    bias = b->to_int64_vector();
  }
  const int64_t out_size = cs.sp.out_size();
  std::vector<int64_t> biased = acc;
  for (size_t i = 0; i < biased.size(); ++i)
    biased[i] += bias[static_cast<size_t>((static_cast<int64_t>(i) / out_size) % cs.M)];
  ctx.outputs[0] = ops::requantize(ctx, biased, output_shape(cs), 7, [&](size_t i) {
    return xs * ws[static_cast<size_t>((static_cast<int64_t>(i) / out_size) % cs.M)] / ys;
  });
}

}  // namespace

void register_conv_integer(OpRegistry& r) {
  r.add("", "ConvInteger", &conv_integer).meta("layer", "x w x_zero_point? w_zero_point?");
  r.add("", "QLinearConv", &qlinear_conv)
      .meta("layer", "x x_scale x_zero_point w w_scale w_zero_point y_scale y_zero_point B?");
}

}  // namespace ptq::exec
