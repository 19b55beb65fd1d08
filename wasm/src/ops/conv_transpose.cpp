// ConvTranspose (opset 1, 11): N-D, NCHW, via GEMM + col2im. Per group g and a block of input
// positions: col[Mg*ks, nb] = W_g^T[Mg*ks, Cg] . X_g[Cg, nb], then every col row (output channel m,
// kernel position r) is scattered-added into Y at o = i*stride - pad_begin + r*dilation.
// W_g^T is packed once (cached via ctx.prepared when W is a graph constant).
#include <algorithm>
#include <vector>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"
#include "ops/gemm_kernel.h"

namespace ptq::exec {

namespace {

using ops::Spatial;

struct TransposeShape {
  int64_t batch = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0;
  Spatial sp;  // `in` = X spatial dims, `out` = Y spatial dims
  int64_t rows() const { return Mg * sp.kernel_size(); }  // col rows per group
};

// Output size and pads per the ONNX spec: with output_shape (or SAME_* auto_pad, whose target is
// in*stride) the total padding is derived from the target and split with the odd pixel at the
// beginning except for SAME_UPPER. A negative total (target larger than the natural size) is
// clamped to zero as onnxruntime does: the extra outputs at the end only receive the bias.
void resolve_transpose_output(const KernelContext& ctx, Spatial& s) {
  const size_t rank = s.rank();
  std::vector<int64_t> out_pad = ctx.node.attr_ints("output_padding", std::vector<int64_t>(rank, 0));
  ctx.check(out_pad.size() == rank, "attribute 'output_padding' must have one value per spatial axis");
  std::vector<int64_t> target = ctx.node.attr_ints("output_shape");
  if (target.size() == rank + 2) target.erase(target.begin(), target.begin() + 2);  // [N, C, ...] form
  ctx.check(target.empty() || target.size() == rank, "attribute 'output_shape' must have one value per spatial axis");
  const ops::AutoPad mode = ops::parse_auto_pad(ctx);
  const bool same = mode == ops::AutoPad::SameUpper || mode == ops::AutoPad::SameLower;
  s.out.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    ctx.check(out_pad[i] >= 0, "attribute 'output_padding' must be >= 0");
    const char* what = "ConvTranspose output size";
    const int64_t natural =
        size_add(size_add(size_mul(s.stride[i], std::max<int64_t>(0, s.in[i] - 1), what), out_pad[i], what), s.span(i), what) -
        (s.in[i] == 0 ? s.stride[i] : 0);
    if (!target.empty() || same) {
      s.out[i] = target.empty() ? size_mul(s.in[i], s.stride[i], what) : target[i];
      ctx.check(s.out[i] >= 0, "attribute 'output_shape' has a negative size " + std::to_string(s.out[i]));
      const int64_t total = std::max<int64_t>(0, natural - s.out[i]);
      s.pad_begin[i] = mode == ops::AutoPad::SameUpper ? total / 2 : total - total / 2;
      s.pad_end[i] = total - s.pad_begin[i];
    } else {
      if (mode == ops::AutoPad::Valid) s.pad_begin[i] = s.pad_end[i] = 0;
      s.out[i] = natural - s.pad_begin[i] - s.pad_end[i];
    }
    ctx.check(s.out[i] >= 0, "computed output size " + std::to_string(s.out[i]) + " is negative on spatial axis " +
                                 std::to_string(i));
  }
}

TransposeShape transpose_shape(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  TransposeShape s;
  ctx.check(x.rank() <= 10, "more than 8 spatial dimensions");
  s.group = ops::check_conv_operands(ctx, x, w);
  s.batch = x.dim(0);
  s.C = x.dim(1);
  ctx.check(w.dim(0) == s.C, "W " + shape_str(w.shape()) + " first dim must equal X channels " + std::to_string(s.C));
  ctx.check(s.C % s.group == 0, "input channels not divisible by group");
  s.Cg = s.C / s.group;
  s.Mg = w.dim(1);
  s.M = size_mul(s.Mg, s.group, "output channels (W dim 1 x group)");
  s.sp = ops::read_conv_window(ctx, x, w);
  resolve_transpose_output(ctx, s.sp);
  return s;
}

// Adds col row `r` (output channel m = r / ks, kernel position r % ks), covering input positions
// [n0, n0+nb), into the output planes of the group.
void col2im_row(const Spatial& s, const std::vector<int64_t>& out_stride, int64_t r, int64_t n0, int64_t nb,
                const float* col, float* y) {
  const size_t d = s.rank(), last = d - 1;
  const int64_t ks = s.kernel_size();
  float* plane = y + (r / ks) * s.out_size();
  int64_t rem = r % ks;
  int64_t offset[8];
  for (size_t i = d; i-- > 0;) {
    offset[i] = (rem % s.kernel[i]) * s.dilation[i] - s.pad_begin[i];
    rem /= s.kernel[i];
  }
  const int64_t IW = s.in[last], sw = s.stride[last];
  const ops::ValidRange cols = ops::valid_range(offset[last], sw, s.out[last], IW);
  int64_t i_pos[8];
  int64_t p = n0;
  for (size_t i = d; i-- > 0;) {
    i_pos[i] = p % s.in[i];
    p /= s.in[i];
  }
  for (int64_t done = 0; done < nb;) {
    const int64_t ix0 = i_pos[last];
    const int64_t len = std::min(IW - ix0, nb - done);
    float* dst = plane;
    for (size_t i = 0; i < last && dst; ++i) {
      const int64_t o = i_pos[i] * s.stride[i] + offset[i];
      dst = o >= 0 && o < s.out[i] ? dst + o * out_stride[i] : nullptr;
    }
    if (dst) {
      const int64_t a = std::clamp(cols.lo, ix0, ix0 + len), b = std::clamp(cols.hi, a, ix0 + len);
      float* d0 = dst + offset[last];
      const float* src = col + done - ix0;
      for (int64_t ix = a; ix < b; ++ix) d0[ix * sw] += src[ix];
    }
    done += len;
    i_pos[last] += len;
    for (size_t i = last; i > 0 && i_pos[i] == s.in[i]; --i) {
      i_pos[i] = 0;
      ++i_pos[i - 1];
    }
  }
}

void conv_transpose(KernelContext& ctx) {
  const Tensor& x_in = ctx.required(0);
  const Tensor& w_in = ctx.required(1);
  ctx.check(x_in.dtype() == w_in.dtype(), "X and W dtypes differ");
  const TransposeShape ts = transpose_shape(ctx, x_in, w_in);
  const Spatial& sp = ts.sp;
  const Tensor x = ops::float_input(ctx, x_in, "X");
  const Tensor w = ops::float_input(ctx, w_in, "W");
  const Tensor bias = ops::optional_bias(ctx, ts.M);
  Tensor y = ops::conv_output(ts.batch, ts.M, sp.out);
  float* yd = y.mutable_data<float>();
  const int64_t in_size = sp.in_size(), out_size = sp.out_size(), rows = ts.rows();
  for (int64_t c = 0; c < ts.batch * ts.M; ++c) {
    std::fill(yd + c * out_size, yd + (c + 1) * out_size, bias.defined() ? bias.data<float>()[c % ts.M] : 0.0f);
  }

  // A operand of group g: W_g^T, element (r, c) at w[(g*Cg + c) * rows + r].
  const float* wd = w.data<float>();
  ops::PackedConstant local;
  const size_t group_floats = ops::gemm_packed_a_size(rows, ts.Cg);
  const std::vector<float>& packed = ops::packed_constant(ctx, 1, local, [&](std::vector<float>& out) {
    out.resize(group_floats * static_cast<size_t>(ts.group));
    for (int64_t g = 0; g < ts.group; ++g) {
      ops::gemm_pack_a(wd + g * ts.Cg * rows, 1, rows, rows, ts.Cg, out.data() + static_cast<size_t>(g) * group_floats);
    }
  });

  std::vector<int64_t> out_stride(sp.rank(), 1);
  for (size_t i = sp.rank() - 1; i-- > 0;) out_stride[i] = out_stride[i + 1] * sp.out[i + 1];
  // Input positions per block: keep the col block around 1 MB.
  const int64_t nb_max = std::max<int64_t>(ops::kGemmNR, (262144 / std::max<int64_t>(rows, 1)) / 8 * 8);
  const float* xd = x.data<float>();
  for (int64_t n = 0; n < ts.batch; ++n) {
    for (int64_t g = 0; g < ts.group; ++g) {
      const float* xg = xd + (n * ts.C + g * ts.Cg) * in_size;
      float* yg = yd + (n * ts.M + g * ts.Mg) * out_size;
      const ops::GemmOperand a = ops::GemmOperand::packed(packed.data() + static_cast<size_t>(g) * group_floats);
      for (int64_t n0 = 0; n0 < in_size; n0 += nb_max) {
        const int64_t nb = std::min(nb_max, in_size - n0);
        float* col = ops::gemm_scratch(3, allocation_count(rows, nb, sizeof(float), "the column buffer"));
        ops::gemm(rows, nb, ts.Cg, a, ops::GemmOperand::strided(xg + n0, in_size, 1), col, nb);
        for (int64_t r = 0; r < rows; ++r) col2im_row(sp, out_stride, r, n0, nb, col + r * nb, yg);
      }
    }
  }
  ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
}

}  // namespace

namespace shape {
namespace {

// Same rules as resolve_transpose_output (ops/conv_transpose.cpp).
void conv_transpose(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() < 3 || x.shape(1)->rank() != x.shape(0)->rank()) return;
  const Shp &X = *x.shape(0), &W = *x.shape(1);
  const size_t sp = X.rank() - 2;
  std::vector<int64_t> kernel = x.node.attr_ints("kernel_shape");
  if (kernel.empty()) {
    if (!W.is_static()) return;
    for (size_t i = 2; i < W.rank(); ++i) kernel.push_back(W.d[i].v);
  }
  const Window w = read_window(x.node, sp, kernel);
  if (!window_ok(w, sp)) return;
  const std::vector<int64_t> out_pad = x.node.attr_ints("output_padding", std::vector<int64_t>(sp, 0));
  std::vector<int64_t> target = x.node.attr_ints("output_shape");
  if (target.size() == sp + 2) target.erase(target.begin(), target.begin() + 2);
  if (out_pad.size() != sp || (!target.empty() && target.size() != sp)) return;
  const int64_t group = x.node.attr_int("group", 1);
  o[0] = ranked(X.dtype, {X.d[0], mul(W.d[1], dim(group))});
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < sp; ++i) {
    const Dim& in = X.d[2 + i];
    if (!target.empty()) { o[0].d.push_back(dim(target[i])); continue; }
    if (!in.known()) { o[0].d.push_back(Dim{}); continue; }
    if (same) { o[0].d.push_back(dim(mul(in.v, w.stride[i]))); continue; }
    const int64_t span = add(mul(w.kernel[i] - 1, w.dilation[i]), 1);
    const int64_t pads = w.auto_pad == "VALID" ? 0 : add(w.pads[i], w.pads[sp + i]);
    o[0].d.push_back(dim(sub(add(add(mul(w.stride[i], in.v - 1), out_pad[i]), span), pads)));
  }
}

}  // namespace
}  // namespace shape

void register_conv_transpose(OpRegistry& r) {
  r.add("", "ConvTranspose", &conv_transpose).rule(shape::conv_transpose).meta("layer", "X W B?");
}

}  // namespace ptq::exec
