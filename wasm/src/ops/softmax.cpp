// Softmax, LogSoftmax, Hardmax, and the losses on (log-)probabilities NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss. Softmax and LogSoftmax subtract the row max first so large logits do not
// overflow, and compute in double whatever the storage type. Before opset 13 the input is coerced to
// 2-D at `axis` (default 1) and normalised over all trailing dims; from opset 13 on only the single
// `axis` (default -1) is normalised.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/conv_common.h"  // is_float_like

namespace ptq::exec {
namespace {

// The tensor seen as [outer, n, inner] with normalisation over n.
struct SoftmaxLayout {
  int64_t outer = 1, n = 1, inner = 1;
};

SoftmaxLayout softmax_layout(const KernelContext& ctx, const Shape& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  const bool coerce_2d = ctx.opset() < 13;
  int64_t axis = ctx.node.attr_int("axis", coerce_2d ? 1 : -1);
  if (rank == 0) return {};  // a scalar normalises to itself
  if (axis < 0) axis += rank;
  ctx.check(axis >= 0 && axis < rank, "attribute 'axis' out of range for rank " + std::to_string(rank));
  SoftmaxLayout l;
  for (int64_t d = 0; d < axis; ++d) l.outer *= shape[static_cast<size_t>(d)];
  if (coerce_2d) {
    for (int64_t d = axis; d < rank; ++d) l.n *= shape[static_cast<size_t>(d)];
  } else {
    l.n = shape[static_cast<size_t>(axis)];
    for (int64_t d = axis + 1; d < rank; ++d) l.inner *= shape[static_cast<size_t>(d)];
  }
  return l;
}

// One contiguous row of n values. The max is subtracted, exponentiated and summed in double (the
// shifted logits are exact there, and the sum of n terms rounds once): within about one float32 ulp
// of the exact result, where float32 shifts and a float32 running sum are tens of ulps off for
// 1000 classes (tests/js/float64_reference_ops.test.mjs).
template <bool Log, class T>
void softmax_row(const T* __restrict x, T* __restrict y, int64_t n) {
  const double m = *std::max_element(x, x + n);
  double sum = 0.0;
  if constexpr (Log) {
    for (int64_t i = 0; i < n; ++i) sum += std::exp(double(x[i]) - m);
    // (x - max) - log(sum): folding max and log(sum) into one shift first would round it at the
    // magnitude of max and lose the small log term for large logits.
    const double log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((double(x[i]) - m) - log_sum);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(double(x[i]) - m);
      y[i] = static_cast<T>(e);
      sum += e;
    }
    const double inv = 1.0 / sum;
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(double(y[i]) * inv);
  }
}

// n rows of `inner` values each, normalised down the columns; loops run along the contiguous
// inner dimension. The same double arithmetic as softmax_row.
template <bool Log, class T>
void softmax_columns(const T* __restrict x, T* __restrict y, int64_t n, int64_t inner, std::vector<double>& m,
                     std::vector<double>& sum) {
  std::copy(x, x + inner, m.begin());
  for (int64_t r = 1; r < n; ++r)
    for (int64_t j = 0; j < inner; ++j) m[j] = std::max(m[j], double(x[r * inner + j]));
  std::fill(sum.begin(), sum.end(), 0.0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < inner; ++j) {
      const double e = std::exp(double(x[r * inner + j]) - m[j]);
      if constexpr (!Log) y[r * inner + j] = static_cast<T>(e);
      sum[j] += e;
    }
  }
  if constexpr (Log) {
    for (int64_t j = 0; j < inner; ++j) sum[j] = std::log(sum[j]);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = static_cast<T>((double(x[r * inner + j]) - m[j]) - sum[j]);
  } else {
    for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0 / sum[j];
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = static_cast<T>(double(y[r * inner + j]) * sum[j]);
  }
}

template <bool Log, class T>
void softmax_all(const SoftmaxLayout& l, const T* src, T* dst) {
  const int64_t block = l.n * l.inner;
  if (l.inner == 1) {
    for (int64_t o = 0; o < l.outer; ++o) softmax_row<Log>(src + o * block, dst + o * block, l.n);
  } else {
    std::vector<double> m(static_cast<size_t>(l.inner)), sum(static_cast<size_t>(l.inner));
    for (int64_t o = 0; o < l.outer; ++o) softmax_columns<Log>(src + o * block, dst + o * block, l.n, l.inner, m, sum);
  }
}

// float32 (half types widened to it and cast back) or float64 storage; double arithmetic either way.
template <bool Log>
void softmax_kernel(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const DType dt = x0.dtype();
  ctx.check(dt == DType::Float || dt == DType::Double || dt == DType::Float16 || dt == DType::BFloat16,
            "unsupported input dtype " + dtype_name(dt));
  const SoftmaxLayout l = softmax_layout(ctx, x0.shape());
  if (dt == DType::Double) {
    Tensor y(DType::Double, x0.shape());
    if (x0.numel() > 0) softmax_all<Log>(l, x0.data<double>(), y.mutable_data<double>());
    ctx.outputs[0] = y;
    return;
  }
  const Tensor x = x0.to_float();
  Tensor y(DType::Float, x.shape());
  if (x.numel() > 0) softmax_all<Log>(l, x.data<float>(), y.mutable_data<float>());
  ctx.outputs[0] = dt == DType::Float ? y : cast_tensor(y, dt);
}

// Hardmax: 1 at the first maximum along the normalised axis (the same layout as Softmax), 0
// elsewhere. Compared in double, which holds every supported input type exactly.
void hardmax_kernel(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const DType dt = x0.dtype();
  ctx.check(dt == DType::Float || dt == DType::Double || dt == DType::Float16 || dt == DType::BFloat16,
            "unsupported input dtype " + dtype_name(dt));
  const Tensor x = cast_tensor(x0, DType::Double);
  const SoftmaxLayout l = softmax_layout(ctx, x.shape());
  Tensor y = Tensor::zeros(DType::Double, x.shape());
  const double* src = x.data<double>();
  double* dst = y.mutable_data<double>();
  const int64_t block = l.n * l.inner;
  for (int64_t o = 0; o < l.outer && x.numel() > 0; ++o) {
    for (int64_t j = 0; j < l.inner; ++j) {
      const double* col = src + o * block + j;
      int64_t best = 0;
      for (int64_t r = 1; r < l.n; ++r)
        if (col[r * l.inner] > col[best * l.inner]) best = r;
      dst[o * block + best * l.inner + j] = 1.0;
    }
  }
  ctx.outputs[0] = cast_tensor(y, dt);
}

// The loss of log-probabilities lp [N, C, inner] (double) at the target classes (input
// `target_index`, [N, inner] int32/int64), optionally weighted per class (input `weight_index`),
// with ignore_index and reduction none / sum / mean (mean divides by the summed weights of the
// targets not ignored). Returned in `dtype`.
Tensor nll_loss(const KernelContext& ctx, const std::vector<double>& lp, const Shape& shape, size_t target_index,
                size_t weight_index, DType dtype) {
  const int64_t n = shape[0], c = shape[1], inner = shape_numel(Shape(shape.begin() + 2, shape.end()));
  const Tensor& target_t = ctx.required(target_index);
  Shape target_shape = shape;
  target_shape.erase(target_shape.begin() + 1);
  ctx.check((target_t.dtype() == DType::Int64 || target_t.dtype() == DType::Int32) && target_t.shape() == target_shape,
            "target must be an int32/int64 tensor of shape " + shape_str(target_shape) + ", got " +
                dtype_name(target_t.dtype()) + " " + shape_str(target_t.shape()));
  const std::vector<int64_t> target = target_t.to_int64_vector();
  std::vector<double> weight(static_cast<size_t>(c), 1.0);
  if (const Tensor* w = ctx.input(weight_index)) {
    ctx.check(ops::is_float_like(w->dtype()) && w->rank() == 1 && w->dim(0) == c,
              "weight must be a 1-D float tensor of C = " + std::to_string(c) + " values");
    const Tensor wd = cast_tensor(*w, DType::Double);
    weight.assign(wd.data<double>(), wd.data<double>() + c);
  }
  const std::string reduction = ctx.node.attr_string("reduction", "mean");
  ctx.check(reduction == "none" || reduction == "sum" || reduction == "mean",
            "unsupported reduction '" + reduction + "'");
  const bool has_ignore = ctx.node.has_attr("ignore_index");
  const int64_t ignore = ctx.node.attr_int("ignore_index", 0);
  Tensor loss(DType::Double, target_shape);
  double* l = loss.mutable_data<double>();
  double total = 0, weights = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = b * inner + i;
      const int64_t t = target[static_cast<size_t>(k)];
      if (has_ignore && t == ignore) {
        l[k] = 0;
        continue;
      }
      ctx.check(t >= 0 && t < c, "target " + std::to_string(t) + " is outside the " + std::to_string(c) + " classes");
      const double w = weight[static_cast<size_t>(t)];
      l[k] = -lp[static_cast<size_t>((b * c + t) * inner + i)] * w;
      total += l[k];
      weights += w;
    }
  }
  if (reduction == "none") return cast_tensor(loss, dtype);
  Tensor r(DType::Double, {});
  r.mutable_data<double>()[0] = reduction == "sum" ? total : total / weights;
  return cast_tensor(r, dtype);
}

Tensor loss_input(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.required(i);
  ctx.check(ops::is_float_like(t.dtype()), std::string(what) + " has unsupported dtype " + dtype_name(t.dtype()));
  ctx.check(t.rank() >= 2, std::string(what) + " must be [N, C, ...], got " + shape_str(t.shape()));
  return cast_tensor(t, DType::Double);
}

// NegativeLogLikelihoodLoss: input holds log-probabilities [N, C, d...].
void nll_loss_kernel(KernelContext& ctx) {
  const Tensor x = loss_input(ctx, 0, "input");
  const std::vector<double> lp(x.data<double>(), x.data<double>() + x.numel());
  ctx.outputs[0] = nll_loss(ctx, lp, x.shape(), 1, 2, ctx.required(0).dtype());
}

// SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of log_softmax(scores) over the class axis 1
// (computed in double with the max subtracted); the optional second output is that log_prob.
void softmax_cross_entropy_kernel(KernelContext& ctx) {
  const Tensor x = loss_input(ctx, 0, "scores");
  const int64_t n = x.dim(0), c = x.dim(1), inner = shape_numel(Shape(x.shape().begin() + 2, x.shape().end()));
  const double* s = x.data<double>();
  std::vector<double> lp(static_cast<size_t>(x.numel()));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < inner && c > 0; ++i) {
      const double* col = s + b * c * inner + i;
      double m = col[0];
      for (int64_t k = 1; k < c; ++k) m = std::max(m, col[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < c; ++k) sum += std::exp(col[k * inner] - m);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < c; ++k) lp[static_cast<size_t>((b * c + k) * inner + i)] = (col[k * inner] - m) - log_sum;
    }
  }
  const DType dt = ctx.required(0).dtype();
  ctx.outputs[0] = nll_loss(ctx, lp, x.shape(), 1, 2, dt);
  if (ctx.has_output(1)) {
    Tensor log_prob(DType::Double, x.shape());
    std::copy(lp.begin(), lp.end(), log_prob.mutable_data<double>());
    ctx.outputs[1] = cast_tensor(log_prob, dt);
  }
}

}  // namespace

void register_softmax(OpRegistry& r) {
  r.add("", "Softmax", &softmax_kernel<false>).rule(shape::same_as_input).meta("activation", "input");
  r.add("", "LogSoftmax", &softmax_kernel<true>).rule(shape::same_as_input).meta("activation", "input");
  r.add("", "Hardmax", &hardmax_kernel).rule(shape::same_as_input).meta("activation", "input");
  r.add("", "NegativeLogLikelihoodLoss", &nll_loss_kernel).meta("", "input target weight?");
  r.add("", "SoftmaxCrossEntropyLoss", &softmax_cross_entropy_kernel).meta("", "scores labels weights?");
}

}  // namespace ptq::exec
