// Conv (opset 1, 11): N-D, NCHW. Three paths, chosen per node:
//  * depthwise (one input channel per group, at most a few outputs per group, 1-D/2-D): a direct
//    kernel over a zero-padded copy of each input plane;
//  * pointwise (1x1, stride 1, no padding): GEMM straight on the NCHW planes (B = input channels);
//  * 3x3 stride 1 with enough channels and tiles, in the opt-in fast modes only: Winograd F(2x2, 3x3),
//    or F(4x4, 3x3) on large planes (ops/conv_winograd.h: their float error exceeds im2col's);
//  * everything else: im2col per group, written directly into the GEMM's packed-B panels, so no
//    full im2col matrix is materialised (a kGemmKC x kGemmNC block at a time, L2 resident).
// Weights are the GEMM A operand (output channels = rows), packed once and cached via ctx.prepared.
#include <algorithm>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"
#include "ops/conv_winograd.h"
#include "ops/gemm_kernel.h"
#include "ops/simd.h"

namespace ptq::exec {

namespace {

using ops::Plane2D;
using ops::ConvShape;
using ops::conv_shape;
using ops::Spatial;
using ops::simd::load_every;
using ops::simd::V4;

// ---- depthwise -------------------------------------------------------------------------------

// dst[q] = bias + sum_t w[t] * src[q*stride + off[t]] for q in [0, count): the depthwise inner loop
// over a zero-padded plane, so no bounds checks. S is the compile-time stride (1, 2) or 0 for the
// scalar loop. With S = 2 the vector loads read one element past the last sample; the padded plane
// has slack for it. Taps and weights are copied to locals so stores to dst cannot alias them.
template <int S>
void depthwise_run(const float* src, const int64_t* off_in, const float* w_in, int64_t taps, int64_t stride,
                   int64_t /*pitch*/, int64_t count, float bias, float* dst) {
  constexpr int64_t kLocal = 64;
  int64_t off_local[kLocal];
  float w_local[kLocal];
  const bool local = taps <= kLocal;
  if (local) {
    std::copy(off_in, off_in + taps, off_local);
    std::copy(w_in, w_in + taps, w_local);
  }
  const int64_t* off = local ? off_local : off_in;
  const float* w = local ? w_local : w_in;
  int64_t q = 0;
  if constexpr (S != 0) {
    for (; q + 4 <= count; q += 4) {
      V4 a0 = ops::simd::splat(bias);
      for (int64_t t = 0; t < taps; ++t) a0 += ops::simd::splat(w[t]) * load_every<S>(src + q * S + off[t]);
      ops::simd::store(dst + q, a0);
    }
  }
  for (; q < count; ++q) {
    float acc = bias;
    for (int64_t t = 0; t < taps; ++t) acc += w[t] * src[q * stride + off[t]];
    dst[q] = acc;
  }
}

// The common 3x3, dilation 1 case: weights held in registers (9 weight vectors, bias, accumulator
// and a load stay within the 15 XMM registers V8 has on x64), loads at constant offsets from 3 rows.
template <int S>
void depthwise3x3_run(const float* src, const int64_t* /*off*/, const float* w, int64_t /*taps*/,
                      int64_t /*stride*/, int64_t pitch, int64_t count, float bias, float* dst) {
  using ops::simd::splat;
  const V4 w0 = splat(w[0]), w1 = splat(w[1]), w2 = splat(w[2]), w3 = splat(w[3]), w4 = splat(w[4]),
           w5 = splat(w[5]), w6 = splat(w[6]), w7 = splat(w[7]), w8 = splat(w[8]), vb = splat(bias);
  const float* r0 = src;
  const float* r1 = src + pitch;
  const float* r2 = src + 2 * pitch;
  auto four = [&](int64_t i) {
    V4 a = vb + w0 * load_every<S>(r0 + i) + w1 * load_every<S>(r0 + i + 1) + w2 * load_every<S>(r0 + i + 2);
    a += w3 * load_every<S>(r1 + i) + w4 * load_every<S>(r1 + i + 1) + w5 * load_every<S>(r1 + i + 2);
    a += w6 * load_every<S>(r2 + i) + w7 * load_every<S>(r2 + i + 1) + w8 * load_every<S>(r2 + i + 2);
    return a;
  };
  // One group of 4 outputs at a time, stored before the next group's loads: dst may alias src as
  // far as the compiler knows, so this keeps the loads of consecutive groups from being hoisted
  // together (which made V8 spill).
  int64_t q = 0;
  for (; q + 4 <= count; q += 4) ops::simd::store(dst + q, four(q * S));
  for (; q < count; ++q) {
    const float* a = r0 + q * S;
    const float* b = r1 + q * S;
    const float* c = r2 + q * S;
    float acc = bias + w[0] * a[0] + w[1] * a[1] + w[2] * a[2];  // same association as the vector lanes
    acc += w[3] * b[0] + w[4] * b[1] + w[5] * b[2];
    acc += w[6] * c[0] + w[7] * c[1] + w[8] * c[2];
    dst[q] = acc;
  }
}

using DepthwiseRunFn = void (*)(const float*, const int64_t*, const float*, int64_t, int64_t, int64_t, int64_t,
                                float, float*);

DepthwiseRunFn pick_depthwise_run(const Plane2D& p) {
  if (p.kh == 3 && p.kw == 3 && p.dh == 1 && p.dw == 1 && p.sw <= 2) {
    return p.sw == 1 ? &depthwise3x3_run<1> : &depthwise3x3_run<2>;
  }
  return p.sw == 1 ? &depthwise_run<1> : p.sw == 2 ? &depthwise_run<2> : &depthwise_run<0>;
}

// Depthwise conv of single-channel planes over a zero-padded copy of the input plane.
class Depthwise {
 public:
  explicit Depthwise(const Plane2D& p) : plane_(p, 2, 3), run_(pick_depthwise_run(p)) {}

  // Loads an input plane; then compute() any number of output channels from it.
  void load(const float* x) { plane_.load(x, 0.0f); }

  void compute(const float* w, float bias, float* y) const {
    const Plane2D& p = plane_.geometry();
    const std::vector<int64_t>& taps = plane_.tap_offsets();
    plane_.for_each_run(y, [&](const float* base, int64_t count, float* dst) {
      run_(base, taps.data(), w, static_cast<int64_t>(taps.size()), p.sw, plane_.pitch(), count, bias, dst);
    });
  }

 private:
  ops::PaddedPlane plane_;
  DepthwiseRunFn run_;
};

// ---- im2col into packed GEMM panels ------------------------------------------------------------

// Per kernel position r: the input offset of output 0 along each axis, and the outputs whose
// sample along the last axis is in bounds. Computed once per conv call (no divisions per row).
struct KernelTap {
  int64_t offset[8];
  ops::ValidRange cols;
};

struct Im2col {
  const float* x;  // first input channel of the group
  const Spatial* sp;
  std::vector<int64_t> in_stride;  // element stride of each spatial axis in one input plane
  std::vector<KernelTap> taps;     // one per kernel position

  explicit Im2col(const Spatial& s) : x(nullptr), sp(&s), in_stride(s.rank(), 1) {
    const size_t d = s.rank();
    for (size_t i = d - 1; i-- > 0;) in_stride[i] = in_stride[i + 1] * s.in[i + 1];
    taps.resize(static_cast<size_t>(s.kernel_size()));
    for (size_t t = 0; t < taps.size(); ++t) {
      int64_t r = static_cast<int64_t>(t);
      for (size_t i = d; i-- > 0;) {
        taps[t].offset[i] = (r % s.kernel[i]) * s.dilation[i] - s.pad_begin[i];
        r /= s.kernel[i];
      }
      taps[t].cols = ops::valid_range(taps[t].offset[d - 1], s.stride[d - 1], s.in[d - 1], s.out[d - 1]);
    }
  }
};

// Row (channel plane, kernel tap) of the im2col matrix for the nc output positions starting at
// coordinates o0, built one output-row segment at a time: a zero fill, a copy (or a strided gather)
// of the in-bounds stretch, and another zero fill.
void im2col_row(const Im2col& ic, const float* plane, const KernelTap& tap, const int64_t* o0, int64_t nc,
                float* row) {
  const Spatial& s = *ic.sp;
  const size_t last = s.rank() - 1;
  const int64_t OW = s.out[last], sw = s.stride[last];
  int64_t o[8];
  std::copy(o0, o0 + s.rank(), o);
  for (int64_t done = 0; done < nc;) {
    const int64_t ox0 = o[last];
    const int64_t len = std::min(OW - ox0, nc - done);
    float* dst = row + done;
    const float* src = plane;
    for (size_t i = 0; i < last && src; ++i) {
      const int64_t ii = o[i] * s.stride[i] + tap.offset[i];
      src = ii >= 0 && ii < s.in[i] ? src + ii * ic.in_stride[i] : nullptr;
    }
    // In-bounds outputs of this segment: [a, b), relative to ox0.
    const int64_t a = src ? std::clamp(tap.cols.lo, ox0, ox0 + len) - ox0 : len;
    const int64_t b = src ? std::clamp(tap.cols.hi, ox0 + a, ox0 + len) - ox0 : len;
    ops::simd::fill(dst, 0.0f, a);
    if (b > a) {
      const float* s0 = src + (ox0 + a) * sw + tap.offset[last];
      if (sw == 1) {
        ops::simd::copy(dst + a, s0, b - a);
      } else {
        int64_t j = 0;
        if (sw == 2) {
          // Every other sample, 4 at a time. The group's second load reads one float past its last
          // sample, so the last group stays scalar: no read beyond the plane's final sample.
          for (; j + 4 < b - a; j += 4) ops::simd::store(dst + a + j, load_every<2>(s0 + 2 * j));
        }
        for (; j < b - a; ++j) dst[a + j] = s0[j * sw];
      }
    }
    ops::simd::fill(dst + b, 0.0f, len - b);
    done += len;
    o[last] += len;
    for (size_t i = last; i > 0 && o[i] == s.out[i]; --i) {
      o[i] = 0;
      ++o[i - 1];
    }
  }
}

// GemmPackFn: im2col rows [k0, k0+kc) x positions [n0, n0+nc) into NR-wide panels.
void im2col_pack(const void* context, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  static_assert(ops::kGemmNR == 8, "im2col copies 8 positions per panel row");
  const Im2col& ic = *static_cast<const Im2col*>(context);
  const Spatial& s = *ic.sp;
  int64_t o0[8];
  for (size_t i = s.rank(); i-- > 0;) {
    o0[i] = n0 % s.out[i];
    n0 /= s.out[i];
  }
  const int64_t padded = (nc + 7) / 8 * 8;
  float* row = ops::gemm_scratch(2, static_cast<size_t>(padded));
  ops::simd::fill(row + nc, 0.0f, padded - nc);
  const int64_t ks = static_cast<int64_t>(ic.taps.size()), plane_size = s.in_size();
  int64_t c = k0 / ks, r = k0 % ks;
  for (int64_t k = 0; k < kc; ++k) {
    im2col_row(ic, ic.x + c * plane_size, ic.taps[static_cast<size_t>(r)], o0, nc, row);
    for (int64_t j = 0; j < padded; j += 8) ops::simd::copy(dst + (j / 8) * kc * 8 + k * 8, row + j, 8);
    if (++r == ks) {
      r = 0;
      ++c;
    }
  }
}

// ---- kernel -------------------------------------------------------------------------------------

// 3x3 stride-1 convolutions (most of a ResNet / YOLO backbone) by Winograd F(4x4, 3x3) or, on small
// planes, F(2x2, 3x3), per group.
void conv_winograd(KernelContext& ctx, const ConvShape& cs, ops::WinogradKind kind, const float* xd, const float* wd,
                   const float* bd, float* yd, ops::PackedConstant& local) {
  const Spatial& sp = cs.sp;
  const size_t group_floats = ops::winograd_packed_size(kind, cs.Mg, cs.Cg);
  const std::vector<float>& packed = ops::packed_constant(
      ctx, 1, local,
      [&](std::vector<float>& out) {
        out.resize(group_floats * static_cast<size_t>(cs.group));
        for (int64_t g = 0; g < cs.group; ++g)
          ops::winograd_pack_weights(kind, wd + g * cs.Mg * cs.K(), cs.Mg, cs.Cg,
                                     out.data() + static_cast<size_t>(g) * group_floats);
      },
      kind == ops::WinogradKind::F2x2 ? ops::kPackedWinograd2 : ops::kPackedWinograd4);
  ops::Winograd3x3Shape ws;
  ws.C = cs.Cg, ws.M = cs.Mg, ws.H = sp.in[0], ws.W = sp.in[1], ws.out_h = sp.out[0], ws.out_w = sp.out[1];
  ws.pad_top = sp.pad_begin[0], ws.pad_left = sp.pad_begin[1];
  const int64_t in_size = sp.in_size(), out_size = sp.out_size();
  for (int64_t n = 0; n < cs.batch; ++n)
    for (int64_t g = 0; g < cs.group; ++g)
      ops::winograd_conv3x3(kind, ws, xd + (n * cs.C + g * cs.Cg) * in_size,
                            packed.data() + static_cast<size_t>(g) * group_floats, bd ? bd + g * cs.Mg : nullptr,
                            yd + (n * cs.M + g * cs.Mg) * out_size);
}

bool is_pointwise(const Spatial& s) {
  for (size_t i = 0; i < s.rank(); ++i) {
    if (s.kernel[i] != 1 || s.stride[i] != 1 || s.pad_begin[i] != 0 || s.pad_end[i] != 0) return false;
  }
  return true;
}

void conv(KernelContext& ctx) {
  const Tensor& x_in = ctx.required(0);
  const Tensor& w_in = ctx.required(1);
  ctx.check(x_in.dtype() == w_in.dtype(), "X and W dtypes differ");
  const ConvShape cs = conv_shape(ctx, x_in, w_in);
  ctx.check(cs.sp.rank() <= 8, "more than 8 spatial dimensions");
  const Spatial& sp = cs.sp;
  const Tensor x = ops::float_input(ctx, x_in, "X");
  const Tensor w = ops::float_input(ctx, w_in, "W");
  const Tensor bias = ops::optional_bias(ctx, cs.M);
  Tensor y = ops::conv_output(cs.batch, cs.M, sp.out);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  const float* bd = bias.defined() ? bias.data<float>() : nullptr;
  float* yd = y.mutable_data<float>();
  const int64_t in_size = sp.in_size(), out_size = sp.out_size(), K = cs.K();
  if (y.numel() == 0) {
    ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
    return;
  }

  // With many outputs per input plane (a grayscale stem conv, say) the GEMM's register tile reuses
  // each loaded input better than one direct pass per output channel.
  if (cs.Cg == 1 && cs.Mg < 8 && sp.rank() <= 2) {
    Depthwise dw(ops::as_plane(sp));
    const int64_t ks = sp.kernel_size();
    for (int64_t n = 0; n < cs.batch; ++n) {
      for (int64_t g = 0; g < cs.group; ++g) {
        dw.load(xd + (n * cs.C + g) * in_size);
        for (int64_t m = g * cs.Mg; m < (g + 1) * cs.Mg; ++m) {
          dw.compute(wd + m * ks, bd ? bd[m] : 0.0f, yd + (n * cs.M + m) * out_size);
        }
      }
    }
    ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
    return;
  }

  ops::PackedConstant local;
  if (const ops::WinogradKind kind = ops::winograd_kind(sp, cs.Cg, cs.Mg); kind != ops::WinogradKind::None) {
    conv_winograd(ctx, cs, kind, xd, wd, bd, yd, local);
    ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
    return;
  }
  const size_t group_floats = ops::gemm_packed_a_size(cs.Mg, K);
  const std::vector<float>& packed = ops::packed_constant(ctx, 1, local, [&](std::vector<float>& out) {
    out.resize(group_floats * static_cast<size_t>(cs.group));
    for (int64_t g = 0; g < cs.group; ++g) {
      ops::gemm_pack_a(wd + g * cs.Mg * K, K, 1, cs.Mg, K, out.data() + static_cast<size_t>(g) * group_floats);
    }
  });

  const bool pointwise = is_pointwise(sp);
  Im2col ic(sp);
  for (int64_t n = 0; n < cs.batch; ++n) {
    for (int64_t g = 0; g < cs.group; ++g) {
      const float* xg = xd + (n * cs.C + g * cs.Cg) * in_size;
      ic.x = xg;
      const ops::GemmOperand b =
          pointwise ? ops::GemmOperand::strided(xg, in_size, 1) : ops::GemmOperand::callback(&im2col_pack, &ic);
      ops::GemmEpilogue ep;
      ep.row_bias = bd ? bd + g * cs.Mg : nullptr;
      ops::gemm(cs.Mg, out_size, K, ops::GemmOperand::packed(packed.data() + static_cast<size_t>(g) * group_floats),
                b, yd + (n * cs.M + g * cs.Mg) * out_size, out_size, ep);
    }
  }
  ctx.outputs[0] = ops::to_dtype(y, x_in.dtype());
}

}  // namespace

namespace shape {
namespace {

void conv(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() < 3) return;
  const Shp &X = *x.shape(0), &W = *x.shape(1);
  const size_t sp = X.rank() - 2;
  std::vector<int64_t> kernel = x.node.attr_ints("kernel_shape");
  if (kernel.empty()) {
    if (W.rank() != X.rank() || !W.is_static()) return;
    for (size_t i = 2; i < W.rank(); ++i) kernel.push_back(W.d[i].v);
  }
  const Window w = read_window(x.node, sp, kernel);
  if (!window_ok(w, sp)) return;
  o[0] = ranked(X.dtype, {X.d[0], W.rank() > 0 ? W.d[0] : Dim{}});
  for (size_t i = 0; i < sp; ++i) o[0].d.push_back(forward_extent(w, i, X.d[2 + i], false));
}

}  // namespace
}  // namespace shape

void register_conv(OpRegistry& r) { r.add("", "Conv", &conv).rule(shape::conv).meta("layer", "X W B?"); }

}  // namespace ptq::exec
