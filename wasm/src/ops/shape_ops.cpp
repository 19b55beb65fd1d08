// Shape manipulation ops: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
// (inference), Constant, ConstantOfShape, Expand, Tile, Range, NonZero. Reshape-like ops return
// zero-copy views of their input; copies go through movement::strided_view_or_copy by element size.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

using movement::dense_strides;
using movement::int_input;
using movement::normalize_axis;

void shape_op(KernelContext& ctx) {
  const Shape& dims = ctx.required(0).shape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  // Opset 15 start/end: negative values count from the back, then clamp to [0, rank].
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(ctx.node.attr_int("start", 0));
  const int64_t end = clamp(ctx.node.attr_int("end", rank));
  const std::vector<int64_t> out(dims.begin() + start, dims.begin() + std::max(start, end));
  ctx.outputs[0] = Tensor::from_int64s({static_cast<int64_t>(out.size())}, out);
}

void size_op(KernelContext& ctx) { ctx.outputs[0] = Tensor::from_int64s({}, {ctx.required(0).numel()}); }

void reshape(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  // Opset 1 carried the target shape as an attribute; opset 5 made it an input.
  const std::vector<int64_t> target =
      ctx.opset() < 5 ? ctx.node.attr_ints("shape") : ctx.required(1).to_int64_vector();
  const bool allow_zero = ctx.node.attr_int("allowzero", 0) != 0;
  Shape shape(target.size());
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      ctx.check(i < data.rank(), "shape entry " + std::to_string(i) + " is 0 but the input has rank " +
                                     std::to_string(data.rank()));
      d = data.dim(i);
    } else if (d == -1) {
      ctx.check(infer_at < 0, "shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    } else if (d < 0) {
      ctx.fail("invalid shape entry " + std::to_string(d));
    }
    shape[i] = d;
    known = size_mul(known, d, "Reshape target element count");
  }
  if (infer_at >= 0) {
    ctx.check(known != 0 && data.numel() % known == 0,
              "cannot infer -1 when reshaping " + shape_str(data.shape()) + " to " + shape_str(target));
    shape[static_cast<size_t>(infer_at)] = data.numel() / known;
  }
  ctx.check(shape_numel(shape) == data.numel(),
            "cannot reshape " + shape_str(data.shape()) + " to " + shape_str(shape));
  ctx.outputs[0] = data.reshaped(std::move(shape));
}

void flatten(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  // Valid range is [-rank, rank]: axis == rank puts everything in the outer dim.
  int64_t axis = ctx.node.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  ctx.check(axis >= 0 && axis <= rank, "axis " + std::to_string(ctx.node.attr_int("axis", 1)) +
                                           " is out of range for rank " + std::to_string(rank));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& side = d < axis ? outer : inner;
    side = size_mul(side, data.dim(static_cast<size_t>(d)), "Flatten output dimension");
  }
  ctx.outputs[0] = data.reshaped({outer, inner});
}

// Axes from the attribute (opset < 13) or from input 1 (opset >= 13).
std::vector<int64_t> axes_arg(const KernelContext& ctx) {
  return ctx.opset() < 13 ? ctx.node.attr_ints("axes") : int_input(ctx, 1);
}

void squeeze(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  std::vector<bool> drop(data.rank(), false);
  const std::vector<int64_t> axes = axes_arg(ctx);
  if (axes.empty()) {
    for (size_t d = 0; d < data.rank(); ++d) drop[d] = data.dim(d) == 1;
  }
  for (int64_t a : axes) {
    const size_t d = static_cast<size_t>(normalize_axis(ctx, a, rank, "axes entry"));
    ctx.check(data.dim(d) == 1, "cannot squeeze axis " + std::to_string(a) + " of size " +
                                    std::to_string(data.dim(d)));
    drop[d] = true;
  }
  Shape shape;
  for (size_t d = 0; d < data.rank(); ++d) {
    if (!drop[d]) shape.push_back(data.dim(d));
  }
  ctx.outputs[0] = data.reshaped(std::move(shape));
}

void unsqueeze(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const std::vector<int64_t> axes = axes_arg(ctx);
  ctx.check(!axes.empty(), "axes is required");
  const int64_t out_rank = static_cast<int64_t>(data.rank() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    const size_t d = static_cast<size_t>(normalize_axis(ctx, a, out_rank, "axes entry"));
    ctx.check(!inserted[d], "axes contains " + std::to_string(a) + " twice");
    inserted[d] = true;
  }
  Shape shape;
  size_t next = 0;
  for (size_t d = 0; d < inserted.size(); ++d) shape.push_back(inserted[d] ? 1 : data.dim(next++));
  ctx.outputs[0] = data.reshaped(std::move(shape));
}

void identity(KernelContext& ctx) { ctx.outputs[0] = ctx.required(0); }

// Inference-mode Dropout is the identity; the optional mask is all "kept". Opset < 10 typed the mask
// like the input (ones), later opsets as bool.
void dropout(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  if (ctx.opset() >= 12 && ctx.input(2)) {
    const bool training = ctx.input(2)->numel() > 0 && ctx.input(2)->get_as_double(0) != 0.0;
    const float ratio = ctx.input(1) && ctx.input(1)->numel() ? static_cast<float>(ctx.input(1)->get_as_double(0))
                                                               : 0.5f;
    ctx.check(!training || ratio == 0.0f, "training_mode=1 (random dropout) is not supported");
  }
  if (ctx.opset() < 7) {
    ctx.check(ctx.node.attr_int("is_test", 1) != 0 || ctx.node.attr_float("ratio", 0.5f) == 0.0f,
              "is_test=0 (random dropout) is not supported");
  }
  ctx.outputs[0] = data;
  if (ctx.has_output(1)) {
    const uint8_t one = 1;
    Tensor mask = movement::filled(DType::Bool, data.shape(), &one);
    ctx.outputs[1] = ctx.opset() < 10 ? cast_tensor(mask, data.dtype()) : mask;
  }
}

void constant(KernelContext& ctx) {
  const ir::Node& n = ctx.node;
  if (const ir::Attribute* a = n.attr("value")) {
    ctx.check(a->t.defined(), "attribute 'value' holds no tensor");
    ctx.outputs[0] = a->t;
  } else if (const ir::Attribute* f = n.attr("value_float")) {
    ctx.outputs[0] = Tensor::from_floats({}, {f->f});
  } else if (const ir::Attribute* fs = n.attr("value_floats")) {
    ctx.outputs[0] = Tensor::from_floats({static_cast<int64_t>(fs->floats.size())}, fs->floats);
  } else if (const ir::Attribute* i = n.attr("value_int")) {
    ctx.outputs[0] = Tensor::from_int64s({}, {i->i});
  } else if (const ir::Attribute* is = n.attr("value_ints")) {
    ctx.outputs[0] = Tensor::from_int64s({static_cast<int64_t>(is->ints.size())}, is->ints);
  } else {
    ctx.fail("needs one of the attributes value, value_float(s), value_int(s) "
             "(sparse_value and value_string(s) are not supported)");
  }
}

void constant_of_shape(KernelContext& ctx) {
  const std::vector<int64_t> shape = ctx.required(0).to_int64_vector();
  for (int64_t d : shape)
    if (d < 0) ctx.fail("negative dimension in shape " + shape_str(shape));
  Tensor value = Tensor::from_floats({1}, {0.0f});
  if (const ir::Attribute* a = ctx.node.attr("value")) {
    ctx.check(a->t.defined() && a->t.numel() == 1, "attribute 'value' must be a one-element tensor");
    value = a->t;
  }
  ctx.outputs[0] = movement::filled(value.dtype(), shape, value.raw());
}

// Numpy broadcast of two shapes; fails naming both when incompatible.
Shape broadcast_shapes(const KernelContext& ctx, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    // The message only on failure: built for every dimension, a rank-65536 shape made it quadratic.
    if (da != db && da != 1 && db != 1) ctx.fail("shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void expand(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Shape out = broadcast_shapes(ctx, data.shape(), ctx.required(1).to_int64_vector());
  // Broadcast dims read with stride 0, so this is one strided copy (or a view when nothing grows).
  const std::vector<int64_t> in_strides = dense_strides(data.shape());
  const size_t lead = out.size() - data.rank();
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t d = 0; d < data.rank(); ++d) {
    strides[lead + d] = data.dim(d) == 1 ? 0 : in_strides[d];
  }
  ctx.outputs[0] = movement::strided_view_or_copy(data, 0, out, strides);
}

void tile(KernelContext& ctx) {
  ctx.check(ctx.opset() >= 6, "Tile-1 (tiles/axis inputs) is not supported");
  const Tensor& data = ctx.required(0);
  const std::vector<int64_t> repeats = ctx.required(1).to_int64_vector();
  ctx.check(repeats.size() == data.rank(), "repeats has " + std::to_string(repeats.size()) +
                                               " entries for an input of rank " + std::to_string(data.rank()));
  // View the output as [r0, d0, r1, d1, ...] reading the input with stride 0 on every r axis.
  const std::vector<int64_t> in_strides = dense_strides(data.shape());
  Shape view, out;
  std::vector<int64_t> strides;
  for (size_t d = 0; d < data.rank(); ++d) {
    ctx.check(repeats[d] >= 0, "negative repeat " + std::to_string(repeats[d]));
    view.insert(view.end(), {repeats[d], data.dim(d)});
    strides.insert(strides.end(), {0, in_strides[d]});
    out.push_back(size_mul(repeats[d], data.dim(d), "Tile output dimension"));
  }
  ctx.outputs[0] = movement::strided_view_or_copy(data, 0, view, strides).reshaped(out);
}

void range(KernelContext& ctx) {
  const Tensor& start_t = ctx.required(0);
  const Tensor& limit_t = ctx.required(1);
  const Tensor& delta_t = ctx.required(2);
  ctx.check(start_t.numel() == 1 && limit_t.numel() == 1 && delta_t.numel() == 1,
            "start, limit and delta must be scalars");
  ctx.check(start_t.dtype() == limit_t.dtype() && start_t.dtype() == delta_t.dtype(),
            "start, limit and delta must share one dtype");
  const bool ok = movement::with_numeric_type(start_t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T value = start_t.data<T>()[0];
    const T limit = limit_t.data<T>()[0];
    const T delta = delta_t.data<T>()[0];
    ctx.check(delta != T(0), "delta must not be zero");
    // Same count formula and running sum as onnxruntime, so float outputs match it bit for bit.
    // Integer limit - start is taken in double: in the integer type it can overflow.
    double span = 0.0;
    if constexpr (std::is_integral_v<T>) span = static_cast<double>(limit) - static_cast<double>(value);
    else span = static_cast<double>(limit - value);
    const double count = std::ceil(span / static_cast<double>(delta));
    // Compared as a double before the conversion, which is undefined beyond int64.
    if (count > 9.0e18)
      throw SizeError("Range of " + std::to_string(count) + " elements overflows 64-bit arithmetic");
    const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
    Tensor out(start_t.dtype(), {n});
    T* y = out.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      y[i] = value;
      value = static_cast<T>(value + delta);
    }
    ctx.outputs[0] = out;
  });
  ctx.check(ok, "unsupported dtype " + dtype_name(start_t.dtype()));
}

// Indices of non-zero elements as int64 [rank, count], row-major order. A scalar counts as rank 1,
// as in onnxruntime.
void nonzero(KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Shape shape = data.rank() == 0 ? Shape{1} : data.shape();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < data.numel(); ++i) {
    if (data.get_as_double(i) != 0.0) hits.push_back(i);
  }
  const int64_t count = static_cast<int64_t>(hits.size());
  Tensor out(DType::Int64, {static_cast<int64_t>(shape.size()), count});
  int64_t* y = out.mutable_data<int64_t>();
  for (int64_t k = 0; k < count; ++k) {
    int64_t flat = hits[static_cast<size_t>(k)];
    for (size_t d = shape.size(); d-- > 0;) {
      y[static_cast<int64_t>(d) * count + k] = flat % shape[d];
      flat /= shape[d];
    }
  }
  ctx.outputs[0] = out;
}

}  // namespace

namespace shape {
namespace {

void dropout(const In& x, Outs& o) {
  same_as_input(x, o);
  if (o.size() > 1) {
    o[1] = o[0];
    o[1].dtype = x.opset() >= 10 ? DType::Bool : x.dtype(0);
  }
}

void reshape(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  std::vector<int64_t> shape;
  if (x.opset() < 5) shape = x.node.attr_ints("shape");
  else if (auto v = x.ints(1)) shape = *v;
  else {
    if (x.ranked(1) && x.shape(1)->rank() == 1 && x.shape(1)->d[0].known() && x.shape(1)->d[0].v <= kMaxInferredRank)
      o[0] = ranked(x.dtype(0), std::vector<Dim>(static_cast<size_t>(x.shape(1)->d[0].v)));
    return;
  }
  const bool allowzero = x.node.attr_int("allowzero", 0) != 0;
  const Shp* X = x.ranked(0) ? x.shape(0) : nullptr;
  Shp r = ranked(x.dtype(0), std::vector<Dim>{});
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) r.d.push_back(X && i < X->rank() ? X->d[i] : Dim{});
    else if (shape[i] == -1) { infer = static_cast<int>(i); r.d.push_back(Dim{}); }
    else r.d.push_back(dim(shape[i]));
  }
  if (infer >= 0 && X && X->is_static()) {
    int64_t known = 1;
    bool all = true;
    for (size_t i = 0; i < r.rank(); ++i)
      if (static_cast<int>(i) != infer) {
        all = all && r.d[i].known();
        if (r.d[i].known()) known = mul(known, r.d[i].v);
      }
    if (all && known > 0) r.d[static_cast<size_t>(infer)] = dim(shape_numel(X->dims()) / known);
  } else if (infer >= 0 && X) {
    // A symbolic dim survives when the other output dims equal the input's other dims (e.g. batch kept).
    std::vector<Dim> rest_in, rest_out;
    for (const auto& d : X->d) if (!d.known()) rest_in.push_back(d);
    bool all_known = true;
    int64_t pin = 1, pout = 1;
    for (const auto& d : X->d) if (d.known()) pin = mul(pin, d.v);
    for (size_t i = 0; i < r.rank(); ++i)
      if (static_cast<int>(i) != infer) {
        if (r.d[i].known()) pout = mul(pout, r.d[i].v);
        else all_known = false;
      }
    if (all_known && rest_in.size() == 1 && pout > 0 && pin % pout == 0 && pin / pout == 1)
      r.d[static_cast<size_t>(infer)] = rest_in[0];
  }
  o[0] = r;
}

void flatten(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  int64_t a = x.node.attr_int("axis", 1);
  if (a < 0) a += static_cast<int64_t>(X.rank());
  if (a < 0 || a > static_cast<int64_t>(X.rank())) return;
  Dim outer = dim(1), inner = dim(1);
  for (size_t i = 0; i < X.rank(); ++i) (static_cast<int64_t>(i) < a ? outer : inner) = mul(static_cast<int64_t>(i) < a ? outer : inner, X.d[i]);
  o[0] = ranked(X.dtype, {outer, inner});
}

void squeeze(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const auto axes = axes_input_or_attr(x, 13);
  if (!axes || !x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  std::vector<bool> drop(X.rank(), false);
  if (axes->empty()) {
    for (size_t i = 0; i < X.rank(); ++i) {
      if (!X.d[i].known()) return;  // could be 1
      drop[i] = X.d[i].v == 1;
    }
  }
  for (int64_t a : *axes) {
    const auto ax = axis_of(a, X.rank());
    if (!ax) return;
    drop[*ax] = true;
  }
  Shp r = ranked(X.dtype, std::vector<Dim>{});
  for (size_t i = 0; i < X.rank(); ++i)
    if (!drop[i]) r.d.push_back(X.d[i]);
  o[0] = r;
}

void unsqueeze(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const auto axes = axes_input_or_attr(x, 13);
  if (!axes || !x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const size_t rank = X.rank() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    const auto ax = axis_of(a, rank);
    if (!ax) return;
    inserted[*ax] = true;
  }
  Shp r = ranked(X.dtype, std::vector<Dim>{});
  size_t k = 0;
  for (size_t i = 0; i < rank; ++i) r.d.push_back(inserted[i] ? dim(1) : (k < X.rank() ? X.d[k++] : Dim{}));
  o[0] = r;
}

void expand(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const auto shape = x.ints(1);
  if (!shape) return;
  const Shp target = ranked(x.dtype(0), *shape);
  o[0] = broadcast({x.shape(0), &target});
  o[0].dtype = x.dtype(0);
}

void tile(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const auto reps = x.ints(1);
  if (!x.ranked(0)) return;
  Shp r = *x.shape(0);
  for (size_t i = 0; i < r.rank(); ++i) r.d[i] = reps && i < reps->size() ? mul(r.d[i], dim((*reps)[i])) : Dim{};
  o[0] = r;
}

void shape_op(const In& x, Outs& o) {
  o[0] = unranked(DType::Int64);
  if (!x.ranked(0)) return;
  const int64_t r = static_cast<int64_t>(x.shape(0)->rank());
  auto clamp = [r](int64_t v) { return std::max<int64_t>(0, std::min(r, v < 0 ? v + r : v)); };
  const int64_t start = x.opset() >= 15 ? clamp(x.node.attr_int("start", 0)) : 0;
  const int64_t end = x.opset() >= 15 ? clamp(x.node.attr_int("end", r)) : r;
  o[0] = ranked(DType::Int64, Shape{std::max<int64_t>(0, end - start)});
}

void size_op(const In&, Outs& o) { o[0] = ranked(DType::Int64, Shape{}); }

void constant_of_shape(const In& x, Outs& o) {
  const ir::Attribute* v = x.node.attr("value");
  const DType t = v && v->type == ir::AttrType::Tensor ? v->t.dtype() : DType::Float;
  o[0] = unranked(t);
  if (auto s = x.ints(0)) o[0] = ranked(t, *s);
  else if (x.ranked(0) && x.shape(0)->rank() == 1 && x.shape(0)->d[0].known() && x.shape(0)->d[0].v <= kMaxInferredRank)
    o[0] = ranked(t, std::vector<Dim>(static_cast<size_t>(x.shape(0)->d[0].v)));
}

void range(const In& x, Outs& o) {
  o[0] = ranked(x.dtype(0), std::vector<Dim>(1));
  const Tensor *s = x.constant(0), *l = x.constant(1), *d = x.constant(2);
  if (!s || !l || !d || s->numel() != 1 || l->numel() != 1 || d->numel() != 1 || d->get_as_double(0) == 0) return;
  const double n = std::ceil((l->get_as_double(0) - s->get_as_double(0)) / d->get_as_double(0));
  o[0].d[0] = dim(std::max<int64_t>(0, truncate(n)));
}

void nonzero(const In& x, Outs& o) {
  o[0] = ranked(DType::Int64, std::vector<Dim>{x.ranked(0) ? dim(static_cast<int64_t>(x.shape(0)->rank())) : Dim{}, Dim{}});
}

}  // namespace
}  // namespace shape

void register_shape_ops(OpRegistry& r) {
  r.add("", "Shape", &shape_op).rule(shape::shape_op).meta("shape", "data");
  r.add("", "Size", &size_op).rule(shape::size_op).meta("shape", "data");
  // Reshape's shape became an input in opset 5; Squeeze's and Unsqueeze's axes in opset 13.
  r.add("", "Reshape", &reshape).versions(1, 4).rule(shape::reshape).meta("shape", "data");
  r.add("", "Reshape", &reshape).versions(5).rule(shape::reshape).meta("shape", "data shape");
  r.add("", "Flatten", &flatten).rule(shape::flatten).meta("shape", "input");
  r.add("", "Squeeze", &squeeze).versions(1, 12).rule(shape::squeeze).meta("shape", "data");
  r.add("", "Squeeze", &squeeze).versions(13).rule(shape::squeeze).meta("shape", "data axes?");
  r.add("", "Unsqueeze", &unsqueeze).versions(1, 12).rule(shape::unsqueeze).meta("shape", "data");
  r.add("", "Unsqueeze", &unsqueeze).versions(13).rule(shape::unsqueeze).meta("shape", "data axes");
  // Identity passes sequences (opset 14) and optionals (opset 16) on as they are.
  r.add("", "Identity", &identity).takes_values().rule(shape::same_as_input).meta("tensor", "input");
  // ratio and training_mode became inputs in opset 12.
  r.add("", "Dropout", &dropout).versions(1, 11).rule(shape::dropout).meta("dropout", "data");
  r.add("", "Dropout", &dropout).versions(12).rule(shape::dropout).meta("dropout", "data ratio? training_mode?");
  r.add("", "Constant", &constant).meta("data", "");
  r.add("", "ConstantOfShape", &constant_of_shape).rule(shape::constant_of_shape).meta("tensor", "input");
  r.add("", "Expand", &expand).rule(shape::expand).meta("shape", "input shape");
  r.add("", "Tile", &tile).rule(shape::tile).meta("tensor", "input repeats");
  r.add("", "Range", &range).rule(shape::range).meta("tensor", "start limit delta");
  r.add("", "NonZero", &nonzero).rule(shape::nonzero).meta("tensor", "X");
}

}  // namespace ptq::exec
