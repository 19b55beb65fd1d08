// Unique: the distinct elements (or, with `axis`, distinct slices along the axis) of X, sorted
// ascending (lexicographically for slices; the default) or in order of first occurrence, with the
// index of each one's first occurrence, the inverse mapping and the counts.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

void unique(KernelContext& ctx) {
  const Tensor& x0 = ctx.required(0);
  const int64_t sorted = ctx.node.attr_int("sorted", 1);
  ctx.check(sorted == 0 || sorted == 1, "attribute 'sorted' must be 0 or 1, got " + std::to_string(sorted));
  const bool has_axis = ctx.node.has_attr("axis");
  const Tensor x = has_axis ? x0 : Tensor::alias(x0, Shape{x0.numel()});
  const auto axis = has_axis ? static_cast<size_t>(movement::normalize_axis(ctx, ctx.node.attr_int("axis", 0),
                                                                           static_cast<int64_t>(x.rank())))
                             : size_t{0};
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d < axis) outer *= x.dim(d);
    if (d > axis) inner *= x.dim(d);
  }
  const int64_t items = x.dim(axis);
  // Items in ascending order (stable, so equal items keep their original order).
  std::vector<int64_t> order(static_cast<size_t>(items));
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> cmp_cache;
  const bool ok = movement::with_numeric_type(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* v = x.data<T>();
    auto compare = [&](int64_t a, int64_t b) {  // <0, 0, >0 over the two slices, element by element
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T p = v[(o * items + a) * inner + i], q = v[(o * items + b) * inner + i];
          if (p < q) return -1;
          if (q < p) return 1;
        }
      return 0;
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    cmp_cache.assign(order.size(), 0);  // 1 where an item differs from the one sorted before it
    for (size_t k = 1; k < order.size(); ++k) cmp_cache[k] = compare(order[k - 1], order[k]) != 0;
  });
  ctx.check(ok, "unsupported input dtype " + dtype_name(x0.dtype()));
  // Groups of equal items in sorted order; first[g] is the group's earliest item.
  std::vector<int64_t> group_of(static_cast<size_t>(items)), first, count;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp_cache[k]) {
      first.push_back(order[k]);
      count.push_back(0);
    }
    group_of[static_cast<size_t>(order[k])] = static_cast<int64_t>(first.size()) - 1;
    ++count.back();
  }
  const auto groups = static_cast<int64_t>(first.size());
  // Output position of each group: sorted order, or by first occurrence.
  std::vector<int64_t> pos(static_cast<size_t>(groups));
  std::iota(pos.begin(), pos.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(static_cast<size_t>(groups));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)]; });
    for (int64_t p = 0; p < groups; ++p) pos[static_cast<size_t>(by_first[static_cast<size_t>(p)])] = p;
  }
  std::vector<int64_t> indices(static_cast<size_t>(groups)), counts(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    indices[static_cast<size_t>(pos[static_cast<size_t>(g)])] = first[static_cast<size_t>(g)];
    counts[static_cast<size_t>(pos[static_cast<size_t>(g)])] = count[static_cast<size_t>(g)];
  }
  std::vector<int64_t> inverse(static_cast<size_t>(items));
  for (int64_t i = 0; i < items; ++i)
    inverse[static_cast<size_t>(i)] = pos[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
  Shape y_shape = x.shape();
  y_shape[axis] = groups;
  Tensor y(x.dtype(), y_shape);
  const size_t block = static_cast<size_t>(inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.mutable_raw());
  for (int64_t o = 0; o < outer && block; ++o)
    for (int64_t p = 0; p < groups; ++p)
      std::memcpy(dst + static_cast<size_t>(o * groups + p) * block,
                  src + static_cast<size_t>(o * items + indices[static_cast<size_t>(p)]) * block, block);
  ctx.outputs[0] = y;
  const Shape g{groups}, n{items};
  if (ctx.has_output(1)) ctx.outputs[1] = Tensor::from_int64s(g, indices);
  if (ctx.has_output(2)) ctx.outputs[2] = Tensor::from_int64s(n, inverse);
  if (ctx.has_output(3)) ctx.outputs[3] = Tensor::from_int64s(g, counts);
}

}  // namespace

void register_unique(OpRegistry& r) { r.add("", "Unique", &unique).meta("", "X"); }

}  // namespace ptq::exec
