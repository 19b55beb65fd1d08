// TopK: k from the attribute (opset 1) or input 1 (opset >= 10); largest / sorted from opset 11.
// Values keep the input dtype (gathered by element size), indices are int64. Equal values keep the
// lower index first; NaN ranks above every number (as torch.topk and numpy's sort order do).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "exec/registry.h"
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// Selects, per (outer, inner) line along the axis, the k best positions into `picked`.
template <class T>
void select_topk(const T* keys, int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest,
                 std::vector<int64_t>& picked) {
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::vector<T> line(static_cast<size_t>(dim));
  // Strict weak order: "a before b". NaN counts as the largest value.
  auto before = [&](int64_t a, int64_t b) {
    const T va = line[static_cast<size_t>(a)], vb = line[static_cast<size_t>(b)];
    const bool na = is_nan(va), nb = is_nan(vb);
    if (na || nb) {
      if (na && nb) return a < b;
      return largest ? na : nb;
    }
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = keys + o * dim * inner + i;
      for (int64_t j = 0; j < dim; ++j) line[static_cast<size_t>(j)] = base[j * inner];
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      int64_t* dst = picked.data() + (o * k) * inner + i;
      for (int64_t j = 0; j < k; ++j) dst[j * inner] = order[static_cast<size_t>(j)];
    }
  }
}

void topk(KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(x.rank());
  ctx.check(rank > 0, "input must have rank >= 1");
  const size_t axis = static_cast<size_t>(movement::normalize_axis(ctx, ctx.node.attr_int("axis", -1), rank));
  int64_t k = 0;
  if (ctx.opset() < 10) {
    ctx.check(ctx.node.has_attr("k"), "attribute 'k' is required");
    k = ctx.node.attr_int("k", 0);
  } else {
    const Tensor& kt = ctx.required(1);
    ctx.check(kt.numel() == 1, "k must hold exactly one value");
    k = kt.get_as_int64(0);
  }
  const int64_t dim = x.dim(axis);
  ctx.check(k >= 0 && k <= dim, "k " + std::to_string(k) + " is out of range for axis size " + std::to_string(dim));
  const bool largest = ctx.opset() < 11 || ctx.node.attr_int("largest", 1) != 0;
  // sorted=0 leaves the order unspecified; returning sorted results is a valid choice.

  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d < axis) outer *= x.dim(d);
    if (d > axis) inner *= x.dim(d);
  }
  Shape out_shape = x.shape();
  out_shape[axis] = k;
  std::vector<int64_t> picked(static_cast<size_t>(outer * k * inner));
  if (k > 0 && outer * inner > 0) {
    const bool native = movement::with_numeric_type(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      select_topk(x.data<T>(), outer, dim, inner, k, largest, picked);
    });
    if (!native) {
      ctx.check(x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16,
                "unsupported dtype " + dtype_name(x.dtype()));
      const std::vector<float> keys = x.to_float_vector();
      select_topk(keys.data(), outer, dim, inner, k, largest, picked);
    }
  }
  Tensor values(x.dtype(), out_shape);
  movement::with_element_type(dtype_size(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = values.mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * k + j) * inner + i;
          dst[at] = src[(o * dim + picked[static_cast<size_t>(at)]) * inner + i];
        }
      }
    }
  });
  ctx.outputs[0] = values;
  if (ctx.has_output(1)) ctx.outputs[1] = Tensor::from_int64s(out_shape, picked);
}

}  // namespace

namespace shape {
namespace {

void topk(const In& x, Outs& o) {
  for (auto& s : o) s = unranked(x.dtype(0));
  if (o.size() > 1) o[1].dtype = DType::Int64;
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const auto ax = axis_of(x.node.attr_int("axis", -1), X.rank());
  if (!ax) return;
  Dim k;
  if (x.opset() < 10) k = dim(x.node.attr_int("k", -1));
  else if (auto v = x.ints(1); v && v->size() == 1) k = dim((*v)[0]);
  for (size_t i = 0; i < o.size(); ++i) {
    const DType t = o[i].dtype;
    o[i] = X;
    o[i].dtype = t;
    o[i].d[*ax] = k;
  }
}

}  // namespace
}  // namespace shape

void register_topk(OpRegistry& r) {
  // k became an input in opset 10.
  r.add("", "TopK", &topk).versions(1, 9).rule(shape::topk).meta("tensor", "X");
  r.add("", "TopK", &topk).versions(10).rule(shape::topk).meta("tensor", "X K");
}

}  // namespace ptq::exec
