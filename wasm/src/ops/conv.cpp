// Conv (opset 1, 11): N-D, NCHW. Three paths, chosen per node:
//  * depthwise (one input channel per group, at most a few outputs per group, 1-D/2-D): a direct
//    kernel over a zero-padded copy of each input plane;
//  * pointwise (1x1, stride 1, no padding): GEMM straight on the NCHW planes (B = input channels);
//  * everything else: im2col per group, written directly into the GEMM's packed-B panels, so no
//    full im2col matrix is materialised (a kGemmKC x kGemmNC block at a time, L2 resident).
// Weights are the GEMM A operand (output channels = rows), packed once and cached via ctx.prepared.
#include <algorithm>
#include <vector>

#include "exec/registry.h"
#include "ops/conv_common.h"
#include "ops/gemm_kernel.h"
#include "ops/simd.h"

namespace ptq::exec {

namespace {

using ops::Spatial;
using ops::simd::V4;

struct ConvShape {
  int64_t batch = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0;
  Spatial sp;
  int64_t K() const { return Cg * sp.kernel_size(); }
};

ConvShape conv_shape(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  ConvShape s;
  ctx.check(x.rank() >= 3, "input X must have rank >= 3 (N, C, spatial...), got " + shape_str(x.shape()));
  ctx.check(w.rank() == x.rank(), "weight W rank " + std::to_string(w.rank()) + " differs from X rank " +
                                      std::to_string(x.rank()));
  s.group = ctx.node.attr_int("group", 1);
  ctx.check(s.group >= 1, "attribute 'group' must be >= 1");
  s.batch = x.dim(0);
  s.C = x.dim(1);
  s.M = w.dim(0);
  ctx.check(s.C % s.group == 0 && w.dim(1) * s.group == s.C,
            "W " + shape_str(w.shape()) + " does not match X channels " + std::to_string(s.C) + " with group " +
                std::to_string(s.group));
  ctx.check(s.M % s.group == 0, "output channels " + std::to_string(s.M) + " not divisible by group");
  s.Cg = s.C / s.group;
  s.Mg = s.M / s.group;
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.node.has_attr("kernel_shape")) {
    ctx.check(ctx.node.attr_ints("kernel_shape") == kernel,
              "attribute 'kernel_shape' does not match W shape " + shape_str(w.shape()));
  }
  s.sp = ops::read_spatial_attrs(ctx, std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()), kernel);
  ops::resolve_forward_output(ctx, s.sp);
  return s;
}

// ---- depthwise -------------------------------------------------------------------------------

// One spatial plane as 2-D (a 1-D conv is a 2-D conv with a single row).
struct Plane {
  int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
};

Plane as_plane(const Spatial& s) {
  if (s.rank() == 1) return {1, s.in[0], 1, s.out[0], 1, s.kernel[0], 1, s.stride[0], 1, s.dilation[0], 0, s.pad_begin[0]};
  return {s.in[0],     s.in[1],     s.out[0],       s.out[1],      s.kernel[0],    s.kernel[1],
          s.stride[0], s.stride[1], s.dilation[0], s.dilation[1], s.pad_begin[0], s.pad_begin[1]};
}

template <int S>
V4 load_strided(const float* p) {
  if constexpr (S == 1) {
    return ops::simd::load(p);
  } else {
    static_assert(S == 2, "vector path for strides 1 and 2");
    return __builtin_shufflevector(ops::simd::load(p), ops::simd::load(p + 4), 0, 2, 4, 6);
  }
}

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
      for (int64_t t = 0; t < taps; ++t) a0 += ops::simd::splat(w[t]) * load_strided<S>(src + q * S + off[t]);
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
    V4 a = vb + w0 * load_strided<S>(r0 + i) + w1 * load_strided<S>(r0 + i + 1) + w2 * load_strided<S>(r0 + i + 2);
    a += w3 * load_strided<S>(r1 + i) + w4 * load_strided<S>(r1 + i + 1) + w5 * load_strided<S>(r1 + i + 2);
    a += w6 * load_strided<S>(r2 + i) + w7 * load_strided<S>(r2 + i + 1) + w8 * load_strided<S>(r2 + i + 2);
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
    dst[q] = bias + w[0] * a[0] + w[1] * a[1] + w[2] * a[2] + (w[3] * b[0] + w[4] * b[1] + w[5] * b[2]) +
             (w[6] * c[0] + w[7] * c[1] + w[8] * c[2]);
  }
}

using DepthwiseRunFn = void (*)(const float*, const int64_t*, const float*, int64_t, int64_t, int64_t, int64_t,
                                float, float*);

DepthwiseRunFn pick_depthwise_run(const Plane& p) {
  if (p.kh == 3 && p.kw == 3 && p.dh == 1 && p.dw == 1 && p.sw <= 2) {
    return p.sw == 1 ? &depthwise3x3_run<1> : &depthwise3x3_run<2>;
  }
  return p.sw == 1 ? &depthwise_run<1> : p.sw == 2 ? &depthwise_run<2> : &depthwise_run<0>;
}

// Depthwise conv of single-channel planes through a zero-padded copy P of the input plane. With a
// vertical stride of 1 all output rows are computed as one flat run over P (row pitch Wp/stride
// outputs, of which the first OW are kept), which keeps small planes (7x7, 14x14) vectorised.
class Depthwise {
 public:
  explicit Depthwise(const Plane& p) : p_(p) {
    rows_ = (p.OH - 1) * p.sh + (p.kh - 1) * p.dh + 1;
    wp_ = (p.OW - 1) * p.sw + (p.kw - 1) * p.dw + 1;
    wp_ = (wp_ + p.sw - 1) / p.sw * p.sw;  // whole output steps per padded row
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      for (int64_t kx = 0; kx < p.kw; ++kx) off_.push_back(ky * p.dh * wp_ + kx * p.dw);
    }
    run_ = pick_depthwise_run(p);
  }

  // Loads input plane x into the padded buffer; then compute() any number of output channels from it.
  void load(const float* x) {
    padded_ = ops::gemm_scratch(2, static_cast<size_t>(rows_ * wp_ + 8));
    // Input rows [0, y1) and columns [0, x1) land at (pt + iy, pl + ix); everything else is zero.
    const int64_t y1 = std::max<int64_t>(0, std::min(p_.H, rows_ - p_.pt));
    const int64_t x1 = std::max<int64_t>(0, std::min(p_.W, wp_ - p_.pl));
    float* const end = padded_ + rows_ * wp_ + 8;
    float* at = padded_;
    for (int64_t iy = 0; iy < y1; ++iy) {
      float* row = padded_ + (iy + p_.pt) * wp_;
      ops::simd::fill(at, 0.0f, row + p_.pl - at);
      ops::simd::copy(row + p_.pl, x + iy * p_.W, x1);
      at = row + p_.pl + x1;
    }
    ops::simd::fill(at, 0.0f, end - at);
  }

  void compute(const float* w, float bias, float* y) const {
    const int64_t taps = p_.kh * p_.kw;
    if (p_.sh != 1) {
      for (int64_t oy = 0; oy < p_.OH; ++oy) {
        run_(padded_ + oy * p_.sh * wp_, off_.data(), w, taps, p_.sw, wp_, p_.OW, bias, y + oy * p_.OW);
      }
      return;
    }
    const int64_t pitch = wp_ / p_.sw;
    const int64_t count = (p_.OH - 1) * pitch + p_.OW;
    float* flat = ops::gemm_scratch(3, static_cast<size_t>(count));
    run_(padded_, off_.data(), w, taps, p_.sw, wp_, count, bias, flat);
    for (int64_t oy = 0; oy < p_.OH; ++oy) ops::simd::copy(y + oy * p_.OW, flat + oy * pitch, p_.OW);
  }

 private:
  Plane p_;
  int64_t rows_ = 0, wp_ = 0;
  std::vector<int64_t> off_;
  DepthwiseRunFn run_ = nullptr;
  float* padded_ = nullptr;
};

// ---- im2col into packed GEMM panels ------------------------------------------------------------

struct Im2col {
  const float* x;  // first input channel of the group
  const Spatial* sp;
  std::vector<int64_t> in_stride;  // element stride of each spatial axis in one input plane
};

// Walks output positions of one im2col row (input channel c, kernel position r) in raster order,
// tracking the input row they read from: `row` is null while the outer coordinates fall in padding.
class Im2colCursor {
 public:
  Im2colCursor(const Im2col& ic, int64_t k, int64_t n0) : s_(*ic.sp), stride_(ic.in_stride) {
    const size_t d = s_.rank();
    last_ = d - 1;
    const int64_t ks = s_.kernel_size();
    plane_ = ic.x + (k / ks) * s_.in_size();
    int64_t r = k % ks;
    for (size_t i = d; i-- > 0;) {
      offset_[i] = (r % s_.kernel[i]) * s_.dilation[i] - s_.pad_begin[i];
      r /= s_.kernel[i];
    }
    for (size_t i = d; i-- > 0;) {
      o_[i] = n0 % s_.out[i];
      n0 /= s_.out[i];
    }
    cols_ = ops::valid_range(offset_[last_], s_.stride[last_], s_.in[last_], s_.out[last_]);
    locate_row();
  }

  // Copies 8 consecutive positions with vector loads when they lie in one valid stretch of one row
  // (stride 1 or 2); returns false, without moving, otherwise.
  bool try_copy8(float* dst) {
    const int64_t ox = o_[last_], sw = s_.stride[last_];
    if (!row_ || ox < cols_.lo || ox + 8 > cols_.hi || ox + 8 > s_.out[last_]) return false;
    const float* src = row_ + ox * sw + offset_[last_];
    if (sw == 1) {
      ops::simd::store(dst, ops::simd::load(src));
      ops::simd::store(dst + 4, ops::simd::load(src + 4));
    } else if (sw == 2 && (ox + 7) * 2 + offset_[last_] + 1 < s_.in[last_]) {  // the loads read src[15]
      ops::simd::store(dst, load_strided<2>(src));
      ops::simd::store(dst + 4, load_strided<2>(src + 8));
    } else {
      return false;
    }
    advance(8);
    return true;
  }

  float next() {
    const int64_t ox = o_[last_];
    const float v = row_ && ox >= cols_.lo && ox < cols_.hi ? row_[ox * s_.stride[last_] + offset_[last_]] : 0.0f;
    advance(1);
    return v;
  }

 private:
  void advance(int64_t n) {
    o_[last_] += n;
    if (o_[last_] < s_.out[last_]) return;
    for (size_t i = last_; i > 0 && o_[i] == s_.out[i]; --i) {
      o_[i] = 0;
      ++o_[i - 1];
    }
    locate_row();
  }
  void locate_row() {
    row_ = plane_;
    for (size_t i = 0; i < last_ && row_; ++i) {
      const int64_t ii = o_[i] * s_.stride[i] + offset_[i];
      row_ = ii >= 0 && ii < s_.in[i] ? row_ + ii * stride_[i] : nullptr;
    }
  }

  const Spatial& s_;
  const std::vector<int64_t>& stride_;
  size_t last_ = 0;
  const float* plane_ = nullptr;
  const float* row_ = nullptr;
  int64_t offset_[8] = {};
  int64_t o_[8] = {};
  ops::ValidRange cols_{0, 0};
};

// GemmPackFn: im2col rows [k0, k0+kc) x positions [n0, n0+nc) straight into NR-wide panels.
void im2col_pack(const void* context, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  static_assert(ops::kGemmNR == 8, "im2col copies 8 positions per panel row");
  const Im2col& ic = *static_cast<const Im2col*>(context);
  for (int64_t k = 0; k < kc; ++k) {
    Im2colCursor cur(ic, k0 + k, n0);
    for (int64_t j = 0; j < nc; j += 8) {
      float* out = dst + (j / 8) * kc * 8 + k * 8;
      const int64_t cnt = std::min<int64_t>(8, nc - j);
      if (cnt == 8 && cur.try_copy8(out)) continue;
      for (int64_t e = 0; e < 8; ++e) out[e] = e < cnt ? cur.next() : 0.0f;
    }
  }
}

// ---- kernel -------------------------------------------------------------------------------------

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
  Tensor bias;
  if (const Tensor* b = ctx.input(2)) {
    ctx.check(b->rank() == 1 && b->dim(0) == cs.M, "bias B must have shape [" + std::to_string(cs.M) + "], got " +
                                                     shape_str(b->shape()));
    bias = ops::float_input(ctx, *b, "B");
  }
  Shape y_shape{cs.batch, cs.M};
  y_shape.insert(y_shape.end(), sp.out.begin(), sp.out.end());
  Tensor y(DType::Float, y_shape);
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
    Depthwise dw(as_plane(sp));
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
  const size_t group_floats = ops::gemm_packed_a_size(cs.Mg, K);
  const std::vector<float>& packed = ops::packed_constant(ctx, 1, local, [&](std::vector<float>& out) {
    out.resize(group_floats * static_cast<size_t>(cs.group));
    for (int64_t g = 0; g < cs.group; ++g) {
      ops::gemm_pack_a(wd + g * cs.Mg * K, K, 1, cs.Mg, K, out.data() + static_cast<size_t>(g) * group_floats);
    }
  });

  const bool pointwise = is_pointwise(sp);
  Im2col ic{nullptr, &sp, std::vector<int64_t>(sp.rank(), 1)};
  for (size_t i = sp.rank() - 1; i-- > 0;) ic.in_stride[i] = ic.in_stride[i + 1] * sp.in[i + 1];
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

void register_conv(OpRegistry& r) { r.add("", "Conv", &conv); }

}  // namespace ptq::exec
