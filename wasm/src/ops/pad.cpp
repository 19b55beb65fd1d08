// Pad (opset 1/2 attributes, opset 11+ inputs, opset 18 axes, opset 19 wrap) and Horizon HzPad.
// Each axis gets a table output index -> input index (-1 = constant), so every mode is one gather
// by element size; the unpadded middle of each innermost row is a memcpy.
#include <algorithm>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/shape_util.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

PadMode parse_mode(const KernelContext& ctx, int opset) {
  const std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap" && opset >= 19) return PadMode::Wrap;
  ctx.fail("unsupported mode '" + mode + "'");
}

// Input index read by output index o of an axis of size dim padded by `before` (negative = crop).
int64_t source_index(int64_t o, int64_t before, int64_t dim, PadMode mode) {
  const int64_t i = o - before;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return i < 0 ? 0 : dim - 1;
    case PadMode::Wrap: return ((i % dim) + dim) % dim;
    case PadMode::Reflect: {
      if (dim == 1) return 0;
      // numpy 'reflect' (edge not repeated), folding as often as the pad requires.
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

struct PadArgs {
  std::vector<int64_t> pads;  // [begin_0..begin_{r-1}, end_0..end_{r-1}] over all axes
  Tensor value;               // one element of the data dtype
  PadMode mode = PadMode::Constant;
};

// The constant as one element of `dtype` (attribute floats are cast like ONNX Cast).
Tensor constant_element(DType dtype, const Tensor* given, float fallback) {
  if (given && given->numel() > 0) return cast_tensor(given->reshaped({1}), dtype);
  return cast_tensor(Tensor::from_floats({1}, {fallback}), dtype);
}

PadArgs read_args(const KernelContext& ctx, bool input_form, int opset) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.rank());
  PadArgs a;
  a.mode = parse_mode(ctx, opset);
  std::vector<int64_t> raw;
  std::vector<int64_t> axes;
  if (input_form) {
    raw = ctx.required(1).to_int64_vector();
    const Tensor* cv = ctx.input(2);
    ctx.check(!cv || cv->dtype() == data.dtype(), "constant_value dtype differs from data dtype");
    a.value = constant_element(data.dtype(), cv, 0.0f);
    axes = movement::int_input(ctx, 3);
  } else {
    raw = ctx.node.has_attr("pads") ? ctx.node.attr_ints("pads") : ctx.node.attr_ints("paddings");
    a.value = constant_element(data.dtype(), nullptr, ctx.node.attr_float("value", 0.0f));
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  ctx.check(raw.size() == 2 * axes.size(), "pads has " + std::to_string(raw.size()) + " entries, expected " +
                                               std::to_string(2 * axes.size()));
  a.pads.assign(static_cast<size_t>(2 * rank), 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t d = static_cast<size_t>(movement::normalize_axis(ctx, axes[i], rank, "axes entry"));
    a.pads[d] = raw[i];
    a.pads[d + static_cast<size_t>(rank)] = raw[i + n];
  }
  return a;
}

template <class T>
void pad_rows(const T* src, T* dst, const Shape& in_shape, const Shape& out_shape,
              const std::vector<std::vector<int64_t>>& maps, int64_t before, T value) {
  const size_t rank = out_shape.size();
  const std::vector<int64_t> in_strides = movement::dense_strides(in_shape);
  const size_t last = rank - 1;
  const int64_t out_len = out_shape[last];
  const std::vector<int64_t>& row_map = maps[last];
  // Output indices [before, before + dim) of a row read the input row 1:1: copy them with memcpy.
  const int64_t run_begin = std::clamp<int64_t>(before, 0, out_len);
  const int64_t run_end = std::clamp<int64_t>(before + in_shape[last], run_begin, out_len);
  const int64_t rows = shape_numel(out_shape) / std::max<int64_t>(out_len, 1);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t r = 0; r < rows && out_len > 0; ++r) {
    T* out_row = dst + r * out_len;
    int64_t base = 0;
    bool constant_row = false;
    for (size_t d = 0; d < last; ++d) {
      const int64_t i = maps[d][static_cast<size_t>(pos[d])];
      if (i < 0) constant_row = true;
      base += i * in_strides[d];
    }
    if (constant_row) {
      std::fill_n(out_row, out_len, value);
    } else {
      const T* in_row = src + base;
      for (int64_t o = 0; o < run_begin; ++o) {
        const int64_t i = row_map[static_cast<size_t>(o)];
        out_row[o] = i < 0 ? value : in_row[i];
      }
      if (run_end > run_begin) {
        std::memcpy(out_row + run_begin, in_row + row_map[static_cast<size_t>(run_begin)],
                    static_cast<size_t>(run_end - run_begin) * sizeof(T));
      }
      for (int64_t o = run_end; o < out_len; ++o) {
        const int64_t i = row_map[static_cast<size_t>(o)];
        out_row[o] = i < 0 ? value : in_row[i];
      }
    }
    for (size_t d = last; d-- > 0;) {
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
}

void pad_impl(KernelContext& ctx, bool input_form, int opset) {
  const Tensor& data = ctx.required(0);
  const PadArgs a = read_args(ctx, input_form, opset);
  const size_t rank = data.rank();
  Shape out_shape(rank);
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t before = a.pads[d], after = a.pads[d + rank], dim = data.dim(d);
    // |pad| < 2^62 keeps every index computed from it (o - before, the reflect period) inside int64.
    constexpr int64_t kLimit = int64_t{1} << 62;
    for (int64_t p : {before, after})
      ctx.check(p > -kLimit && p < kLimit, "pad " + std::to_string(p) + " on axis " + std::to_string(d) + " is out of range");
    out_shape[d] = int64_add(int64_add(dim, before, "padded axis size"), after, "padded axis size");
    ctx.check(out_shape[d] >= 0, "pads shrink axis " + std::to_string(d) + " below zero");
    ctx.check(a.mode != PadMode::Wrap || (before >= 0 && after >= 0), "negative pads are not supported with mode wrap");
    ctx.check(a.mode == PadMode::Constant || dim > 0 || out_shape[d] == 0,
              "cannot pad an empty axis " + std::to_string(d) + " in a non-constant mode");
  }
  // The output first: its size check (SizeError) comes before the per-axis index tables, which an
  // empty axis elsewhere would otherwise let grow to any length.
  Tensor out = rank == 0 ? Tensor() : Tensor(data.dtype(), out_shape);
  if (rank > 0 && out.numel() == 0) {
    ctx.outputs[0] = out;
    return;
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t before = a.pads[d], dim = data.dim(d);
    maps[d].resize(allocation_count(out_shape[d], sizeof(int64_t), "the index table of a padded axis"));
    for (int64_t o = 0; o < out_shape[d]; ++o) maps[d][static_cast<size_t>(o)] = source_index(o, before, dim, a.mode);
  }
  if (rank == 0) {
    ctx.outputs[0] = data;
    return;
  }
  movement::with_element_type(dtype_size(data.dtype()), [&](auto tag) {
    using T = decltype(tag);
    pad_rows(data.data<T>(), out.mutable_data<T>(), data.shape(), out_shape, maps, a.pads[rank - 1], a.value.data<T>()[0]);
  });
  ctx.outputs[0] = out;
}

void pad(KernelContext& ctx) { pad_impl(ctx, ctx.opset() >= 11, ctx.opset()); }

// HzPad: Pad semantics; pads come from input 1 when it is present, else from the attributes.
void hz_pad(KernelContext& ctx) { pad_impl(ctx, ctx.input(1) != nullptr, 19); }

}  // namespace

namespace shape {
namespace {

void pad(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  std::vector<int64_t> pads;
  if (x.opset() < 11 && x.node.op_type == "Pad") pads = x.node.attr_ints("pads", x.node.attr_ints("paddings"));
  else if (x.shape(1)) {
    auto p = x.ints(1);
    if (!p) { o[0] = ranked(X.dtype, std::vector<Dim>(X.rank())); return; }
    pads = *p;
  } else {
    pads = x.node.attr_ints("pads");  // HzPad without the pads input
  }
  std::vector<int64_t> axes;
  if (x.shape(3)) {
    auto a = x.ints(3);
    if (!a) return;
    axes = *a;
  } else {
    for (size_t i = 0; i < X.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size()) return;
  Shp r = X;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto ax = axis_of(axes[i], X.rank());
    if (!ax) return;
    if (r.d[*ax].known()) r.d[*ax] = dim(add(add(r.d[*ax].v, pads[i]), pads[axes.size() + i]));
  }
  o[0] = r;
}

}  // namespace
}  // namespace shape

void register_pad(OpRegistry& r) {
  // The pads became an input in opset 11, axes were added in 18.
  r.add("", "Pad", &pad).versions(1, 10).rule(shape::pad).meta("tensor", "data");
  r.add("", "Pad", &pad).versions(11, 17).rule(shape::pad).meta("tensor", "data pads constant_value?");
  r.add("", "Pad", &pad).versions(18).rule(shape::pad).meta("tensor", "data pads constant_value? axes?");
  r.add("horizon", "HzPad", &hz_pad).rule(shape::pad).meta("tensor", "data pads?");
}

}  // namespace ptq::exec
