// Gemm (opset 1..13) and MatMul (opset 1..13), on the packed GEMM kernel. A constant B operand
// (a Linear layer's weight) is packed once and cached via ctx.prepared. The 8-bit integer forms
// MatMulInteger and QLinearMatMul accumulate exactly in int64.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"
#include "ops/gemm_kernel.h"
#include "ops/quant_int.h"

namespace ptq::exec {

namespace {

// Strides of a row-major [rows, cols] matrix read as (r, c), optionally transposed.
struct View {
  int64_t rs, cs;
};
View matrix_view(int64_t cols, bool transposed) { return transposed ? View{1, cols} : View{cols, 1}; }

// B operand of one or more row-major K x N matrices (`count` of them, `stride` floats apart):
// packed from the cache when B is a graph constant, strided otherwise.
struct BOperand {
  ops::PackedConstant local;
  const std::vector<float>* packed = nullptr;
  const float* data = nullptr;
  View view{};
  int64_t K = 0, N = 0, stride = 0;

  BOperand(KernelContext& ctx, size_t index, const float* b, View v, int64_t K_, int64_t N_, int64_t count,
           int64_t stride_)
      : data(b), view(v), K(K_), N(N_), stride(stride_) {
    const bool constant = index < ctx.constant_input.size() && ctx.constant_input[index] && ctx.prepared;
    if (!constant) return;
    const size_t each = ops::gemm_packed_b_size(K, N);
    packed = &ops::packed_constant(ctx, index, local, [&](std::vector<float>& out) {
      out.resize(each * static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) {
        ops::gemm_pack_b(b + i * stride, view.rs, view.cs, K, N, out.data() + static_cast<size_t>(i) * each);
      }
    });
  }
  ops::GemmOperand operand(int64_t i) const {
    if (packed) return ops::GemmOperand::packed(packed->data() + static_cast<size_t>(i) * ops::gemm_packed_b_size(K, N));
    return ops::GemmOperand::strided(data + i * stride, view.rs, view.cs);
  }
};

void gemm_op(KernelContext& ctx) {
  const Tensor& a_in = ctx.required(0);
  const Tensor& b_in = ctx.required(1);
  ctx.check(a_in.rank() == 2 && b_in.rank() == 2, "A and B must be 2-D, got " + shape_str(a_in.shape()) + " and " +
                                                      shape_str(b_in.shape()));
  ctx.check(a_in.dtype() == b_in.dtype(), "A and B dtypes differ");
  const bool ta = ctx.node.attr_int("transA", 0) != 0;
  const bool tb = ctx.node.attr_int("transB", 0) != 0;
  const float alpha = ctx.node.attr_float("alpha", 1.0f);
  const float beta = ctx.node.attr_float("beta", 1.0f);
  const int64_t M = a_in.dim(ta ? 1 : 0), K = a_in.dim(ta ? 0 : 1);
  const int64_t N = b_in.dim(tb ? 0 : 1);
  ctx.check(b_in.dim(tb ? 1 : 0) == K, "inner dimensions differ: A " + shape_str(a_in.shape()) + (ta ? "^T" : "") +
                                           ", B " + shape_str(b_in.shape()) + (tb ? "^T" : ""));
  const Tensor a = ops::float_input(ctx, a_in, "A");
  const Tensor b = ops::float_input(ctx, b_in, "B");
  Tensor y(DType::Float, {M, N});
  float* yd = y.mutable_data<float>();
  ops::GemmEpilogue ep;
  ep.alpha = alpha;
  // beta == 0 skips C entirely (as onnxruntime does), so a non-finite C does not turn into NaN.
  const Tensor* c_in = ctx.input(2);
  if (c_in && beta != 0.0f) {
    ctx.check(c_in->rank() <= 2, "C must have rank <= 2, got " + shape_str(c_in->shape()));
    const Tensor c = ops::float_input(ctx, *c_in, "C");
    // Unidirectional broadcast of C to [M, N].
    const int64_t cm = c.rank() == 2 ? c.dim(0) : 1;
    const int64_t cn = c.rank() >= 1 ? c.dim(c.rank() - 1) : 1;
    ctx.check((cm == 1 || cm == M) && (cn == 1 || cn == N),
              "C " + shape_str(c.shape()) + " is not broadcastable to [" + std::to_string(M) + ", " +
                  std::to_string(N) + "]");
    const float* cd = c.data<float>();
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) yd[i * N + j] = beta * cd[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
    }
    ep.accumulate = true;
  }
  const View av = matrix_view(ta ? M : K, ta);
  const BOperand bop(ctx, 1, b.data<float>(), matrix_view(tb ? K : N, tb), K, N, 1, 0);
  ops::gemm(M, N, K, ops::GemmOperand::strided(a.data<float>(), av.rs, av.cs), bop.operand(0), yd, N, ep);
  ctx.outputs[0] = ops::to_dtype(y, a_in.dtype());
}

// numpy matmul shapes: 1-D operands are promoted (and the added dim removed again), batch dims
// broadcast. a_step / b_step: the matrix index step of A / B per batch axis (0 = broadcast).
struct MatmulShape {
  int64_t M = 0, K = 0, N = 0;
  Shape a_batch, b_batch, batch, y_shape;
  std::vector<int64_t> a_step, b_step;

  // f(t, ai, bi) for every output matrix t with the indices of its A and B matrices.
  template <class F>
  void for_each_matrix(F&& f) const {
    std::vector<int64_t> idx(batch.size(), 0);
    const int64_t total = shape_numel(batch);
    for (int64_t t = 0; t < total; ++t) {
      int64_t ai = 0, bi = 0;
      for (size_t i = 0; i < batch.size(); ++i) {
        ai += idx[i] * a_step[i];
        bi += idx[i] * b_step[i];
      }
      f(t, ai, bi);
      for (size_t i = batch.size(); i-- > 0;) {
        if (++idx[i] < batch[i]) break;
        idx[i] = 0;
      }
    }
  }
};

MatmulShape matmul_shape(const KernelContext& ctx, const Tensor& a_in, const Tensor& b_in) {
  ctx.check(a_in.rank() >= 1 && b_in.rank() >= 1, "MatMul operands must have rank >= 1");
  Shape as = a_in.shape(), bs = b_in.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  MatmulShape m;
  m.M = as[as.size() - 2];
  m.K = as.back();
  m.N = bs.back();
  ctx.check(bs[bs.size() - 2] == m.K, "inner dimensions differ: " + shape_str(a_in.shape()) + " x " +
                                          shape_str(b_in.shape()));
  m.a_batch = Shape(as.begin(), as.end() - 2);
  m.b_batch = Shape(bs.begin(), bs.end() - 2);
  const size_t br = std::max(m.a_batch.size(), m.b_batch.size());
  m.batch.assign(br, 0);
  m.a_step.assign(br, 0);
  m.b_step.assign(br, 0);
  int64_t a_acc = 1, b_acc = 1;
  for (size_t i = br; i-- > 0;) {
    const size_t ai = i + m.a_batch.size(), bi = i + m.b_batch.size();  // index + size - br, unsigned-safe
    const int64_t ad = ai >= br ? m.a_batch[ai - br] : 1;
    const int64_t bd = bi >= br ? m.b_batch[bi - br] : 1;
    if (ad != bd && ad != 1 && bd != 1)  // the message only on failure (it is as long as the shapes)
      ctx.fail("batch dimensions of " + shape_str(a_in.shape()) + " and " + shape_str(b_in.shape()) + " do not broadcast");
    m.batch[i] = std::max(ad, bd);
    if (ad == 0 || bd == 0) m.batch[i] = 0;
    m.a_step[i] = ad == 1 ? 0 : a_acc;
    m.b_step[i] = bd == 1 ? 0 : b_acc;
    a_acc *= ad;
    b_acc *= bd;
  }
  m.y_shape = m.batch;
  if (!a_vec) m.y_shape.push_back(m.M);
  if (!b_vec) m.y_shape.push_back(m.N);
  return m;
}

void matmul(KernelContext& ctx) {
  const Tensor& a_in = ctx.required(0);
  const Tensor& b_in = ctx.required(1);
  ctx.check(a_in.dtype() == b_in.dtype(), "A and B dtypes differ");
  const MatmulShape ms = matmul_shape(ctx, a_in, b_in);
  const int64_t M = ms.M, K = ms.K, N = ms.N;
  const Tensor a = ops::float_input(ctx, a_in, "A");
  const Tensor b = ops::float_input(ctx, b_in, "B");
  Tensor y(DType::Float, ms.y_shape);
  float* yd = y.mutable_data<float>();
  const float* ad = a.data<float>();
  const int64_t b_count = shape_numel(ms.b_batch);
  const BOperand bop(ctx, 1, b.data<float>(), View{N, 1}, K, N, b_count, K * N);

  if (b_count == 1) {
    // Every A matrix meets the same B: one GEMM over all A rows (A is contiguous row-major).
    const int64_t rows = shape_numel(ms.batch) * M;
    if (shape_numel(ms.a_batch) == shape_numel(ms.batch)) {
      ops::gemm(rows, N, K, ops::GemmOperand::strided(ad, K, 1), bop.operand(0), yd, N);
    } else {  // A itself broadcast (batch comes from B dims of size 1): repeat it
      for (int64_t i = 0; i < shape_numel(ms.batch); ++i) {
        ops::gemm(M, N, K, ops::GemmOperand::strided(ad, K, 1), bop.operand(0), yd + i * M * N, N);
      }
    }
    ctx.outputs[0] = ops::to_dtype(y, a_in.dtype());
    return;
  }
  ms.for_each_matrix([&](int64_t t, int64_t ai, int64_t bi) {
    ops::gemm(M, N, K, ops::GemmOperand::strided(ad + ai * M * K, K, 1), bop.operand(bi), yd + t * M * N, N);
  });
  ctx.outputs[0] = ops::to_dtype(y, a_in.dtype());
}

// (A - a_zero_point) x (B - b_zero_point) in exact int64 arithmetic, numpy matmul shapes.
std::vector<int64_t> integer_matmul(const KernelContext& ctx, const Tensor& a, const Tensor& b, size_t a_zp,
                                    size_t b_zp, MatmulShape& ms) {
  ctx.check(ops::is_8bit(a.dtype()) && ops::is_8bit(b.dtype()), "A and B must be uint8 or int8, got " + dtype_name(a.dtype()) +
                                                          " and " + dtype_name(b.dtype()));
  ms = matmul_shape(ctx, a, b);
  const int64_t M = ms.M, K = ms.K, N = ms.N;
  const std::vector<int64_t> za = ops::zero_points(ctx, a_zp, a.dtype(), M, "a_zero_point");
  const std::vector<int64_t> zb = ops::zero_points(ctx, b_zp, b.dtype(), N, "b_zero_point");
  const std::vector<int64_t> av = a.to_int64_vector(), bv = b.to_int64_vector();
  std::vector<int64_t> y(static_cast<size_t>(shape_numel(ms.y_shape)), 0);
  ms.for_each_matrix([&](int64_t t, int64_t ai, int64_t bi) {
    const int64_t* am = av.data() + ai * M * K;
    const int64_t* bm = bv.data() + bi * K * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (am[i * K + k] - za[static_cast<size_t>(i)]) * (bm[k * N + j] - zb[static_cast<size_t>(j)]);
        y[static_cast<size_t>((t * M + i) * N + j)] = acc;
      }
  });
  return y;
}

// MatMulInteger: int32 (A - a_zero_point) x (B - b_zero_point).
void matmul_integer(KernelContext& ctx) {
  MatmulShape ms;
  const std::vector<int64_t> acc = integer_matmul(ctx, ctx.required(0), ctx.required(1), 2, 3, ms);
  ctx.outputs[0] = cast_tensor(Tensor::from_int64s(ms.y_shape, acc), DType::Int32);
}

// QLinearMatMul: y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point), acc the
// exact product of the zero-point-corrected operands; per-tensor scales.
void qlinear_matmul(KernelContext& ctx) {
  const float multiplier = ops::scales(ctx, 1, 0, "a_scale")[0] * ops::scales(ctx, 4, 0, "b_scale")[0] /
                           ops::scales(ctx, 6, 0, "y_scale")[0];
  MatmulShape ms;
  const std::vector<int64_t> acc = integer_matmul(ctx, ctx.required(0), ctx.required(3), 2, 5, ms);
  ctx.outputs[0] = ops::requantize(ctx, acc, ms.y_shape, 7, [multiplier](size_t) { return multiplier; });
}

}  // namespace

namespace shape {
namespace {

void gemm(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() != 2 || x.shape(1)->rank() != 2) return;
  const bool ta = x.node.attr_int("transA", 0) != 0, tb = x.node.attr_int("transB", 0) != 0;
  o[0] = ranked(x.dtype(0), {x.shape(0)->d[ta ? 1 : 0], x.shape(1)->d[tb ? 0 : 1]});
}

void matmul(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() == 0 || x.shape(1)->rank() == 0) return;
  Shp a = *x.shape(0), b = *x.shape(1);
  const bool a1 = a.rank() == 1, b1 = b.rank() == 1;
  if (a1) a.d.insert(a.d.begin(), dim(1));
  if (b1) b.d.push_back(dim(1));
  Shp ba = a, bb = b;
  ba.d.resize(a.rank() - 2);
  bb.d.resize(b.rank() - 2);
  Shp r = broadcast({&ba, &bb});
  r.dtype = x.dtype(0);
  if (!a1) r.d.push_back(a.d[a.rank() - 2]);
  if (!b1) r.d.push_back(b.d[b.rank() - 1]);
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_matmul(OpRegistry& r) {
  r.add("", "Gemm", &gemm_op).rule(shape::gemm).meta("layer", "A B C?");
  r.add("", "MatMul", &matmul).rule(shape::matmul).meta("layer", "A B");
  r.add("", "MatMulInteger", &matmul_integer).meta("layer", "A B a_zero_point? b_zero_point?");
  r.add("", "QLinearMatMul", &qlinear_matmul)
      .meta("layer", "a a_scale a_zero_point b b_scale b_zero_point y_scale y_zero_point");
  // Shown by the viewers, not executed.
  r.add("com.microsoft", "Attention", nullptr).meta("layer", "");
  r.add("com.microsoft", "MultiHeadAttention", nullptr).meta("layer", "");
}

}  // namespace ptq::exec
