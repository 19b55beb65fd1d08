// Transpose. The copy itself is movement::permute: dims that stay adjacent are merged first, so the
// common 4-D permutations reduce to a row memcpy (e.g. [0,1,3,2] on W=1) or a batched 2-D tiled
// transpose (NCHW <-> NHWC: [0,2,3,1] / [0,3,1,2]); identity permutations return a view.
#include "exec/registry.h"
#include "ops/movement_util.h"
#include "ops/shape_util.h"

namespace ptq::exec {
namespace {

void transpose(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (!ctx.node.has_attr("perm")) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);  // default: reverse the dims
  }
  ctx.check(static_cast<int64_t>(perm.size()) == rank,
            "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(perm.size(), false);
  for (int64_t& p : perm) {
    p = movement::normalize_axis(ctx, p, rank, "perm entry");
    ctx.check(!seen[static_cast<size_t>(p)], "perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
  }
  ctx.outputs[0] = movement::permute(data, perm);
}

}  // namespace

namespace shape {
namespace {

void transpose(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  std::vector<int64_t> perm = x.node.attr_ints("perm");
  if (perm.empty())
    for (size_t i = X.rank(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != X.rank()) return;
  Shp r = ranked(X.dtype, std::vector<Dim>{});
  for (int64_t p : perm) {
    const auto a = axis_of(p, X.rank());
    if (!a) return;
    r.d.push_back(X.d[*a]);
  }
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_transpose(OpRegistry& r) {
  r.add("", "Transpose", &transpose).rule(shape::transpose).meta("shape", "data");
}

}  // namespace ptq::exec
