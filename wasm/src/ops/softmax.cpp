// Softmax, LogSoftmax and Hardmax. Softmax and LogSoftmax are computed in float32 with the row max subtracted first so large logits do
// not overflow. Before opset 13 the input is coerced to 2-D at `axis` (default 1) and normalised
// over all trailing dims; from opset 13 on only the single `axis` (default -1) is normalised.
#include <algorithm>
#include <cmath>
#include <vector>

#include "exec/registry.h"

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

// One contiguous row of n values.
template <bool Log>
void softmax_row(const float* __restrict x, float* __restrict y, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
  float sum = 0.0f;
  if constexpr (Log) {
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - m);
    // (x - max) - log(sum): folding max and log(sum) into one shift first would round it at the
    // magnitude of max and lose the small log term for large logits.
    const float log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    for (int64_t i = 0; i < n; ++i) sum += (y[i] = std::exp(x[i] - m));
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// n rows of `inner` values each, normalised down the columns; loops run along the contiguous
// inner dimension so they vectorise.
template <bool Log>
void softmax_columns(const float* __restrict x, float* __restrict y, int64_t n, int64_t inner,
                     std::vector<float>& m, std::vector<float>& sum) {
  std::copy(x, x + inner, m.begin());
  for (int64_t r = 1; r < n; ++r)
    for (int64_t j = 0; j < inner; ++j) m[j] = std::max(m[j], x[r * inner + j]);
  std::fill(sum.begin(), sum.end(), 0.0f);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < inner; ++j) {
      const float e = std::exp(x[r * inner + j] - m[j]);
      if constexpr (!Log) y[r * inner + j] = e;
      sum[j] += e;
    }
  }
  if constexpr (Log) {
    for (int64_t j = 0; j < inner; ++j) sum[j] = std::log(sum[j]);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = (x[r * inner + j] - m[j]) - sum[j];
  } else {
    for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0f / sum[j];
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < inner; ++j) y[r * inner + j] *= sum[j];
  }
}

template <bool Log>
void softmax_kernel(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const DType dt = x0.dtype();
  ctx.check(dt == DType::Float || dt == DType::Double || dt == DType::Float16 || dt == DType::BFloat16,
            "unsupported input dtype " + dtype_name(dt));
  const Tensor x = x0.to_float();
  const SoftmaxLayout l = softmax_layout(ctx, x.shape());
  Tensor y(DType::Float, x.shape());
  if (x.numel() > 0) {
    const float* src = x.data<float>();
    float* dst = y.mutable_data<float>();
    const int64_t block = l.n * l.inner;
    if (l.inner == 1) {
      for (int64_t o = 0; o < l.outer; ++o) softmax_row<Log>(src + o * block, dst + o * block, l.n);
    } else {
      std::vector<float> m(static_cast<size_t>(l.inner)), sum(static_cast<size_t>(l.inner));
      for (int64_t o = 0; o < l.outer; ++o)
        softmax_columns<Log>(src + o * block, dst + o * block, l.n, l.inner, m, sum);
    }
  }
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

}  // namespace

void register_softmax(OpRegistry& r) {
  r.add("", "Softmax", &softmax_kernel<false>);
  r.add("", "LogSoftmax", &softmax_kernel<true>);
  r.add("", "Hardmax", &hardmax_kernel);
}

}  // namespace ptq::exec
