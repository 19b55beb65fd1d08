#include "ops/movement_util.h"

#include <algorithm>

namespace ptq::exec::movement {

int64_t normalize_axis(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    ctx.fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
             std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  // A shape with a zero dimension may have other dimensions of any size: its strides are never used
  // to address memory, so they may wrap (defined behaviour through __builtin_mul_overflow).
  for (size_t d = shape.size(); d-- > 1;) __builtin_mul_overflow(strides[d], shape[d], &strides[d - 1]);
  return strides;
}

std::vector<int64_t> int_input(const KernelContext& ctx, size_t index) {
  const Tensor* t = ctx.input(index);
  if (!t) return {};
  if (t->dtype() != DType::Int64 && t->dtype() != DType::Int32) {
    ctx.fail("input " + std::to_string(index) + " must be int64 or int32, got " + dtype_name(t->dtype()));
  }
  return t->to_int64_vector();
}

std::vector<int64_t> checked_indices(const KernelContext& ctx, const Tensor& indices, int64_t dim) {
  ctx.check(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
            "indices must be int64 or int32, got " + dtype_name(indices.dtype()));
  std::vector<int64_t> idx = indices.to_int64_vector();
  for (int64_t& v : idx) v = checked_index(ctx, v, dim);
  return idx;
}

namespace {

struct Layout {
  Shape shape;
  std::vector<int64_t> src, dst;
};

// Drops unit dims and merges neighbours that are contiguous in both source and destination, so a
// 4-D slice of whole rows becomes a single memcpy and NCHW->NHWC becomes a batched 2-D transpose.
Layout coalesce(const Shape& shape, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  Layout l;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!l.shape.empty() && l.src.back() == src[d] * shape[d] && l.dst.back() == dst[d] * shape[d]) {
      l.shape.back() *= shape[d];
      l.src.back() = src[d];
      l.dst.back() = dst[d];
    } else {
      l.shape.push_back(shape[d]);
      l.src.push_back(src[d]);
      l.dst.push_back(dst[d]);
    }
  }
  return l;
}

// Copies a K x L plane where the source is contiguous along K and the destination along L, in
// square tiles so both sides stay in cache (the NCHW <-> NHWC case).
template <class T>
void tiled_plane(const T* src, T* dst, int64_t k_len, int64_t dst_k_stride, int64_t l_len, int64_t src_l_stride) {
  constexpr int64_t kTile = 16;
  for (int64_t k0 = 0; k0 < k_len; k0 += kTile) {
    const int64_t k1 = std::min(k_len, k0 + kTile);
    for (int64_t l0 = 0; l0 < l_len; l0 += kTile) {
      const int64_t l1 = std::min(l_len, l0 + kTile);
      for (int64_t k = k0; k < k1; ++k) {
        T* d = dst + k * dst_k_stride;
        const T* s = src + k;
        for (int64_t l = l0; l < l1; ++l) d[l] = s[l * src_l_stride];
      }
    }
  }
}

template <class T>
void copy_typed(const T* src, T* dst, const Layout& l) {
  const size_t n = l.shape.size();
  if (n == 0) {
    *dst = *src;
    return;
  }
  const size_t last = n - 1;
  const int64_t len = l.shape[last], ss = l.src[last], ds = l.dst[last];
  size_t tile_dim = n;  // n = none
  if (ss != 1 && ds == 1) {
    for (size_t k = 0; k < last; ++k) {
      if (l.src[k] == 1) tile_dim = k;
    }
  }
  std::vector<int64_t> idx(n, 0);
  int64_t so = 0, dof = 0;
  for (;;) {
    if (tile_dim < n) {
      tiled_plane(src + so, dst + dof, l.shape[tile_dim], l.dst[tile_dim], len, ss);
    } else if (ss == 1 && ds == 1) {
      std::memcpy(dst + dof, src + so, static_cast<size_t>(len) * sizeof(T));
    } else {
      const T* s = src + so;
      T* d = dst + dof;
      for (int64_t i = 0; i < len; ++i) d[i * ds] = s[i * ss];
    }
    // Odometer over every dim except the innermost (and the tiled one).
    int64_t d = static_cast<int64_t>(last) - 1;
    for (; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      if (u == tile_dim) continue;
      if (++idx[u] < l.shape[u]) {
        so += l.src[u];
        dof += l.dst[u];
        break;
      }
      so -= l.src[u] * (l.shape[u] - 1);
      dof -= l.dst[u] * (l.shape[u] - 1);
      idx[u] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace

void strided_copy(const void* src, int64_t src_offset, const std::vector<int64_t>& src_strides, void* dst,
                  int64_t dst_offset, const std::vector<int64_t>& dst_strides, const Shape& shape,
                  size_t elem_size) {
  if (shape_numel(shape) == 0) return;
  const Layout l = coalesce(shape, src_strides, dst_strides);
  with_element_type(elem_size, [&](auto tag) {
    using T = decltype(tag);
    copy_typed(static_cast<const T*>(src) + src_offset, static_cast<T*>(dst) + dst_offset, l);
  });
}

Tensor strided_view_or_copy(const Tensor& src, int64_t offset, const Shape& shape,
                            const std::vector<int64_t>& strides) {
  const size_t esize = dtype_size(src.dtype());
  if (shape_numel(shape) > 0) {
    const Layout l = coalesce(shape, strides, dense_strides(shape));
    if (l.shape.empty() || (l.shape.size() == 1 && l.src[0] == 1)) {
      return Tensor::alias(src, shape, static_cast<size_t>(offset) * esize);
    }
  }
  Tensor out(src.dtype(), shape);
  strided_copy(src.raw(), offset, strides, out.mutable_raw(), 0, dense_strides(shape), shape, esize);
  return out;
}

Tensor permute(const Tensor& input, const std::vector<int64_t>& perm) {
  const size_t rank = input.rank();
  check(perm.size() == rank, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                                 std::to_string(rank));
  const std::vector<int64_t> in_strides = dense_strides(input.shape());
  std::vector<bool> seen(rank, false);
  Shape shape(rank);
  std::vector<int64_t> strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t p = perm[d];
    check(p >= 0 && p < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(p)],
          "perm is not a permutation of 0.." + std::to_string(rank ? rank - 1 : 0));
    seen[static_cast<size_t>(p)] = true;
    shape[d] = input.dim(static_cast<size_t>(p));
    strides[d] = in_strides[static_cast<size_t>(p)];
  }
  return strided_view_or_copy(input, 0, shape, strides);
}

Tensor filled(DType dtype, const Shape& shape, const void* element) {
  Tensor out(dtype, shape);
  with_element_type(dtype_size(dtype), [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, element, sizeof(T));
    std::fill_n(out.mutable_data<T>(), out.numel(), v);
  });
  return out;
}

}  // namespace ptq::exec::movement
