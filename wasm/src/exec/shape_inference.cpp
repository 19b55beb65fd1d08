#include "exec/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "core/size.h"
#include "exec/registry.h"

namespace ptq::exec {
namespace {

using ir::AttrType;
using ir::Attribute;
using ir::Graph;
using ir::Node;
using ir::Value;
using ir::ValueInfo;

// A dim: known size (v >= 0), or unknown (v == -1) possibly named by a symbol carried from an input.
struct Dim {
  int64_t v = -1;
  std::string sym;
  bool known() const { return v >= 0; }
};
Dim dim(int64_t v) { return Dim{v, ""}; }

struct Shp {
  DType dtype = DType::Undefined;
  bool ranked = false;
  std::vector<Dim> d;
  size_t rank() const { return d.size(); }
  bool is_static() const {
    return ranked && std::all_of(d.begin(), d.end(), [](const Dim& x) { return x.known(); });
  }
  Shape dims() const {
    Shape s;
    for (const auto& x : d) s.push_back(x.v);
    return s;
  }
};

Shp ranked(DType t, std::vector<Dim> d) { return Shp{t, true, std::move(d)}; }
Shp ranked(DType t, const Shape& s) {
  Shp r{t, true, {}};
  for (int64_t v : s) r.d.push_back(dim(v));
  return r;
}
Shp unranked(DType t) { return Shp{t, false, {}}; }

Shp from_info(const ValueInfo& info) {
  Shp s{info.dtype, info.has_shape, {}};
  for (size_t i = 0; i < info.dims.size(); ++i) {
    Dim x = dim(info.dims[i] >= 0 ? info.dims[i] : -1);
    if (i < info.dim_params.size()) x.sym = info.dim_params[i];
    s.d.push_back(x);
  }
  return s;
}

ValueInfo to_info(const std::string& name, const Shp& s) {
  ValueInfo info;
  info.name = name;
  info.dtype = s.dtype;
  info.has_shape = s.ranked;
  for (const auto& x : s.d) {
    info.dims.push_back(x.known() ? x.v : -1);
    info.dim_params.push_back(x.known() ? "" : x.sym);
  }
  return info;
}

// The rules' int64 arithmetic on dims and attribute values, checked: an overflow throws SizeError,
// which infer_shapes catches around each rule (the outputs stay unknown; the kernel reports the size).
int64_t add(int64_t a, int64_t b) { return int64_add(a, b, "inferred dimension"); }
int64_t sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw SizeError("inferred dimension overflows 64-bit arithmetic");
  return r;
}
int64_t mul(int64_t a, int64_t b) { return int64_mul(a, b, "inferred dimension"); }
// A float size truncated to int64 (undefined beyond int64 in C++).
int64_t truncate(double v) {
  if (!(v > -9.0e18 && v < 9.0e18)) throw SizeError("inferred dimension overflows 64-bit arithmetic");
  return static_cast<int64_t>(v);
}
// A rank read from a tensor's dim (the length of a shape input): no real rank is anywhere near this.
constexpr int64_t kMaxInferredRank = 64;

Dim mul(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) return dim(mul(a.v, b.v));
  if (a.known() && a.v == 1) return b;
  if (b.known() && b.v == 1) return a;
  return Dim{};
}

// The view of one node the rules work on: input shapes (nullptr when absent) and constant inputs.
struct In {
  const Node& node;
  std::vector<const Shp*> s;
  std::vector<const Tensor*> c;
  const Shp* shape(size_t i) const { return i < s.size() ? s[i] : nullptr; }
  const Tensor* constant(size_t i) const { return i < c.size() ? c[i] : nullptr; }
  std::optional<std::vector<int64_t>> ints(size_t i) const {
    const Tensor* t = constant(i);
    if (!t) return std::nullopt;
    return t->to_int64_vector();
  }
  std::optional<std::vector<float>> floats(size_t i) const {
    const Tensor* t = constant(i);
    if (!t) return std::nullopt;
    return t->to_float_vector();
  }
  bool ranked(size_t i) const { return shape(i) && shape(i)->ranked; }
  DType dtype(size_t i) const { return shape(i) ? shape(i)->dtype : DType::Undefined; }
  int opset() const { return node.opset; }
};

using Outs = std::vector<Shp>;
using Rule = std::function<void(const In&, Outs&)>;

// Normalises an axis; nullopt when out of range (the kernel will report it).
std::optional<size_t> axis_of(int64_t a, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) return std::nullopt;
  return static_cast<size_t>(a < 0 ? a + r : a);
}

// ---- elementwise ------------------------------------------------------------------------------

void same_as_input(const In& x, Outs& o) {
  if (x.shape(0)) o[0] = *x.shape(0);
}

Rule same_with_dtype(DType t) {
  return [t](const In& x, Outs& o) {
    same_as_input(x, o);
    o[0].dtype = t;
  };
}

// Numpy multidirectional broadcasting of every present input.
Shp broadcast(const std::vector<const Shp*>& shapes) {
  Shp r = ranked(DType::Undefined, std::vector<Dim>{});
  for (const Shp* s : shapes) {
    if (!s) continue;
    if (!s->ranked) return unranked(DType::Undefined);
    if (s->rank() > r.rank()) r.d.insert(r.d.begin(), s->rank() - r.rank(), dim(1));
    const size_t off = r.rank() - s->rank();
    for (size_t i = 0; i < s->rank(); ++i) {
      Dim& a = r.d[off + i];
      const Dim& b = s->d[i];
      if (a.known() && a.v == 1) a = b;
      else if (b.known() && b.v == 1) continue;
      else if (a.known() && b.known()) a = dim(std::max(a.v, b.v));  // equal in a valid graph
      else if (b.known()) a = b;  // the unknown side must be 1 or equal
      else if (!a.known() && a.sym != b.sym) a = Dim{};
    }
  }
  return r;
}

Rule broadcast_rule(std::optional<DType> out_dtype, size_t dtype_input = 0) {
  return [out_dtype, dtype_input](const In& x, Outs& o) {
    o[0] = broadcast(x.s);
    o[0].dtype = out_dtype ? *out_dtype : x.dtype(dtype_input);
  };
}

void cast(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = static_cast<DType>(x.node.attr_int("to", 1));
}

void cast_like(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = x.dtype(1);
}

void dropout(const In& x, Outs& o) {
  same_as_input(x, o);
  if (o.size() > 1) {
    o[1] = o[0];
    o[1].dtype = x.opset() >= 10 ? DType::Bool : x.dtype(0);
  }
}

// Outputs 1.. of LayerNormalization (mean, inv std dev): input shape with axes >= axis set to 1.
void layer_norm(const In& x, Outs& o) {
  same_as_input(x, o);
  if (!x.ranked(0)) return;
  const auto axis = axis_of(x.node.attr_int("axis", -1), x.shape(0)->rank());
  if (!axis) return;
  for (size_t k = 1; k < o.size(); ++k) {
    o[k] = *x.shape(0);
    o[k].dtype = DType::Float;
    for (size_t i = *axis; i < o[k].rank(); ++i) o[k].d[i] = dim(1);
  }
}

// ---- conv and pooling --------------------------------------------------------------------------

struct Window {
  std::vector<int64_t> kernel, stride, dilation, pads;
  std::string auto_pad;
};

Window read_window(const Node& n, size_t spatial, const std::vector<int64_t>& kernel) {
  Window w;
  w.kernel = kernel;
  w.stride = n.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  w.dilation = n.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  w.pads = n.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  w.auto_pad = n.attr_string("auto_pad", "NOTSET");
  return w;
}

bool window_ok(const Window& w, size_t spatial) {
  return w.kernel.size() == spatial && w.stride.size() == spatial && w.dilation.size() == spatial &&
         w.pads.size() == 2 * spatial;
}

// Same rules as ops::resolve_forward_output (conv_common.h).
Dim forward_extent(const Window& w, size_t i, const Dim& in, bool ceil_mode) {
  if (!in.known()) return Dim{};
  const int64_t st = w.stride[i];
  if (st <= 0 || w.kernel[i] <= 0 || w.dilation[i] <= 0) return Dim{};  // invalid: the kernel reports it
  const int64_t span = add(mul(w.kernel[i] - 1, w.dilation[i]), 1);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return dim(add(in.v, st - 1) / st);
  const size_t r = w.kernel.size();
  const int64_t pb = w.auto_pad == "VALID" ? 0 : w.pads[i], pe = w.auto_pad == "VALID" ? 0 : w.pads[r + i];
  const int64_t room = sub(add(add(in.v, pb), pe), span);
  if (room < 0) return Dim{};
  int64_t out = (ceil_mode ? add(room, st - 1) / st : room / st) + 1;
  if (ceil_mode && mul(out - 1, st) >= add(in.v, pb)) --out;
  return dim(out);
}

void conv(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() < 3) return;
  const Shp &X = *x.shape(0), &W = *x.shape(1);
  const size_t sp = X.rank() - 2;
  std::vector<int64_t> kernel = x.node.attr_ints("kernel_shape");
  if (kernel.empty()) {
    if (W.rank() != X.rank() || !W.is_static()) return;
    for (size_t i = 2; i < W.rank(); ++i) kernel.push_back(W.d[i].v);
  }
  const Window w = read_window(x.node, sp, kernel);
  if (!window_ok(w, sp)) return;
  o[0] = ranked(X.dtype, {X.d[0], W.rank() > 0 ? W.d[0] : Dim{}});
  for (size_t i = 0; i < sp; ++i) o[0].d.push_back(forward_extent(w, i, X.d[2 + i], false));
}

// Same rules as resolve_transpose_output (ops/conv_transpose.cpp).
void conv_transpose(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1) || x.shape(0)->rank() < 3 || x.shape(1)->rank() != x.shape(0)->rank()) return;
  const Shp &X = *x.shape(0), &W = *x.shape(1);
  const size_t sp = X.rank() - 2;
  std::vector<int64_t> kernel = x.node.attr_ints("kernel_shape");
  if (kernel.empty()) {
    if (!W.is_static()) return;
    for (size_t i = 2; i < W.rank(); ++i) kernel.push_back(W.d[i].v);
  }
  const Window w = read_window(x.node, sp, kernel);
  if (!window_ok(w, sp)) return;
  const std::vector<int64_t> out_pad = x.node.attr_ints("output_padding", std::vector<int64_t>(sp, 0));
  std::vector<int64_t> target = x.node.attr_ints("output_shape");
  if (target.size() == sp + 2) target.erase(target.begin(), target.begin() + 2);
  if (out_pad.size() != sp || (!target.empty() && target.size() != sp)) return;
  const int64_t group = x.node.attr_int("group", 1);
  o[0] = ranked(X.dtype, {X.d[0], mul(W.d[1], dim(group))});
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < sp; ++i) {
    const Dim& in = X.d[2 + i];
    if (!target.empty()) { o[0].d.push_back(dim(target[i])); continue; }
    if (!in.known()) { o[0].d.push_back(Dim{}); continue; }
    if (same) { o[0].d.push_back(dim(mul(in.v, w.stride[i]))); continue; }
    const int64_t span = add(mul(w.kernel[i] - 1, w.dilation[i]), 1);
    const int64_t pads = w.auto_pad == "VALID" ? 0 : add(w.pads[i], w.pads[sp + i]);
    o[0].d.push_back(dim(sub(add(add(mul(w.stride[i], in.v - 1), out_pad[i]), span), pads)));
  }
}

void pool(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || x.shape(0)->rank() < 3) return;
  const Shp& X = *x.shape(0);
  const size_t sp = X.rank() - 2;
  const Window w = read_window(x.node, sp, x.node.attr_ints("kernel_shape"));
  if (!window_ok(w, sp)) return;
  const bool ceil_mode = x.node.attr_int("ceil_mode", 0) != 0;
  o[0] = ranked(X.dtype, {X.d[0], X.d[1]});
  for (size_t i = 0; i < sp; ++i) o[0].d.push_back(forward_extent(w, i, X.d[2 + i], ceil_mode));
  if (o.size() > 1) {  // MaxPool Indices
    o[1] = o[0];
    o[1].dtype = DType::Int64;
  }
}

void global_pool(const In& x, Outs& o) {
  same_as_input(x, o);
  for (size_t i = 2; i < o[0].rank(); ++i) o[0].d[i] = dim(1);
}

// ---- linear algebra ----------------------------------------------------------------------------

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

// ---- movement ----------------------------------------------------------------------------------

void concat(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  const Shp* first = nullptr;
  for (const Shp* s : x.s) {
    if (!s || !s->ranked) return;
    if (!first) first = s;
  }
  if (!first) return;
  const auto axis = axis_of(x.node.attr_int("axis", 0), first->rank());
  if (!axis) return;
  Shp r = *first;
  int64_t total = 0;
  for (const Shp* s : x.s) {
    if (s->rank() != r.rank()) return;
    total = total >= 0 && s->d[*axis].known() ? add(total, s->d[*axis].v) : -1;
    for (size_t i = 0; i < r.rank(); ++i)
      if (i != *axis && !r.d[i].known() && s->d[i].known()) r.d[i] = s->d[i];
  }
  r.d[*axis] = dim(total);
  o[0] = r;
}

void split(const In& x, Outs& o) {
  for (auto& s : o) s = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const auto axis = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!axis) return;
  std::vector<int64_t> sizes;
  if (x.opset() >= 13 && x.shape(1)) {
    auto v = x.ints(1);
    if (!v) return;
    sizes = *v;
  } else if (x.opset() < 13) {
    sizes = x.node.attr_ints("split");
  }
  if (sizes.empty()) {
    if (!X.d[*axis].known()) return;
    const int64_t n = static_cast<int64_t>(o.size()), len = X.d[*axis].v;
    if (n == 0) return;
    const int64_t chunk = (len + n - 1) / n;  // opset 18 num_outputs: the last chunk may be smaller
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, len - i * chunk)));
  }
  if (sizes.size() != o.size()) return;
  for (size_t k = 0; k < o.size(); ++k) {
    o[k] = X;
    o[k].d[*axis] = dim(sizes[k]);
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

std::optional<std::vector<int64_t>> axes_input_or_attr(const In& x, int input_since) {
  if (x.opset() >= input_since) {
    if (!x.shape(1)) return std::vector<int64_t>{};
    return x.ints(1);
  }
  return x.node.attr_ints("axes");
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

// Same clamping as the ONNX spec (and ops/slice_gather.cpp).
int64_t slice_len(int64_t n, int64_t start, int64_t end, int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = clamp(start, 0, n);
    end = clamp(end, 0, n);
    return end > start ? (end - start - 1) / step + 1 : 0;
  }
  start = clamp(start, 0, n - 1);
  end = clamp(end, -1, n - 1);
  // -step overflows for INT64_MIN: any step longer than the axis takes one element.
  const int64_t back = step < -n ? n + 1 : -step;
  return start > end ? (start - end - 1) / back + 1 : 0;
}

void slice(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (x.opset() < 10) {
    starts = x.node.attr_ints("starts");
    ends = x.node.attr_ints("ends");
    axes = x.node.attr_ints("axes");
  } else {
    auto s = x.ints(1), e = x.ints(2);
    auto a = x.shape(3) ? x.ints(3) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    auto t = x.shape(4) ? x.ints(4) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    if (!s || !e || !a || !t) {
      o[0] = ranked(X.dtype, std::vector<Dim>(X.rank()));
      // Axes not sliced keep their dims when the axes are known.
      if (a && !a->empty()) {
        o[0] = X;
        for (int64_t ax : *a)
          if (auto k = axis_of(ax, X.rank())) o[0].d[*k] = Dim{};
      }
      return;
    }
    starts = *s; ends = *e; axes = *a; steps = *t;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) return;
  Shp r = X;
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto ax = axis_of(axes[i], X.rank());
    if (!ax || steps[i] == 0) return;
    const Dim& in = X.d[*ax];
    r.d[*ax] = in.known() ? dim(slice_len(in.v, starts[i], ends[i], steps[i])) : Dim{};
  }
  o[0] = r;
}

void gather(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || !x.ranked(1)) return;
  const Shp &X = *x.shape(0), &I = *x.shape(1);
  const auto ax = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!ax) return;
  Shp r = ranked(X.dtype, std::vector<Dim>(X.d.begin(), X.d.begin() + static_cast<std::ptrdiff_t>(*ax)));
  r.d.insert(r.d.end(), I.d.begin(), I.d.end());
  r.d.insert(r.d.end(), X.d.begin() + static_cast<std::ptrdiff_t>(*ax) + 1, X.d.end());
  o[0] = r;
}

void gather_elements(const In& x, Outs& o) {
  if (x.shape(1)) o[0] = *x.shape(1);
  o[0].dtype = x.dtype(0);
}

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

void depth_to_space(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0) || x.shape(0)->rank() != 4) return;
  const int64_t b = x.node.attr_int("blocksize", 1);
  if (b <= 0) return;  // invalid: the kernel reports it
  const bool d2s = x.node.op_type.find("DepthToSpace") != std::string::npos;
  const Shp& X = *x.shape(0);
  auto scale = [&](const Dim& v, bool up) { return !v.known() ? Dim{} : dim(up ? mul(v.v, b) : v.v / b); };
  // Horizon variants may be NHWC (data_format); the ONNX ops are NCHW.
  const bool nhwc = x.node.attr_string("data_format", "NCHW") == "NHWC";
  const size_t c = nhwc ? 3 : 1, h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
  Shp r = X;
  r.d[c] = !X.d[c].known() ? Dim{} : dim(d2s ? X.d[c].v / mul(b, b) : mul(X.d[c].v, mul(b, b)));
  r.d[h] = scale(X.d[h], d2s);
  r.d[w] = scale(X.d[w], d2s);
  o[0] = r;
}

// ---- reductions and misc -----------------------------------------------------------------------

void reduce(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const int since = x.node.op_type == "ReduceSum" ? 13 : 18;
  const auto axes = axes_input_or_attr(x, since);
  if (!axes) return;
  const bool keep = x.node.attr_int("keepdims", 1) != 0;
  std::vector<bool> red(X.rank(), axes->empty());
  if (axes->empty() && x.node.attr_int("noop_with_empty_axes", 0) != 0) red.assign(X.rank(), false);
  for (int64_t a : *axes) {
    const auto ax = axis_of(a, X.rank());
    if (!ax) return;
    red[*ax] = true;
  }
  Shp r = ranked(X.dtype, std::vector<Dim>{});
  for (size_t i = 0; i < X.rank(); ++i) {
    if (!red[i]) r.d.push_back(X.d[i]);
    else if (keep) r.d.push_back(dim(1));
  }
  o[0] = r;
}

void arg_reduce(const In& x, Outs& o) {
  o[0] = unranked(DType::Int64);
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  const auto ax = axis_of(x.node.attr_int("axis", 0), X.rank());
  if (!ax) return;
  Shp r = X;
  r.dtype = DType::Int64;
  if (x.node.attr_int("keepdims", 1) != 0) r.d[*ax] = dim(1);
  else r.d.erase(r.d.begin() + static_cast<std::ptrdiff_t>(*ax));
  o[0] = r;
}

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
  const Attribute* v = x.node.attr("value");
  const DType t = v && v->type == AttrType::Tensor ? v->t.dtype() : DType::Float;
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

void resize(const In& x, Outs& o) {
  o[0] = unranked(x.dtype(0));
  if (!x.ranked(0)) return;
  const Shp& X = *x.shape(0);
  // Upsample-9 reads scales like Resize-10; HzResize11 is Resize-11 whatever its domain's opset.
  const int version = x.node.op_type == "Upsample"     ? std::min(x.opset(), 10)
                      : x.node.op_type == "HzResize11" ? 11
                                                       : std::max(x.opset(), 10);
  std::optional<std::vector<float>> scales;
  std::optional<std::vector<int64_t>> sizes;
  if (version < 9) scales = x.node.attr_floats("scales");
  else if (version < 11) scales = x.floats(1);
  else {
    if (x.shape(2)) scales = x.floats(2);
    if (x.shape(3)) sizes = x.ints(3);
    if (scales && scales->empty()) scales.reset();
    if (sizes && sizes->empty()) sizes.reset();
  }
  std::vector<int64_t> axes = version >= 18 ? x.node.attr_ints("axes") : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < X.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  Shp r = X;
  const std::string policy = version >= 18 ? x.node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (sizes && sizes->size() == axes.size() && policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i)
      if (auto ax = axis_of(axes[i], X.rank())) r.d[*ax] = dim((*sizes)[i]);
  } else if (scales && scales->size() == axes.size()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto ax = axis_of(axes[i], X.rank());
      if (!ax) return;
      // float32 product, truncated (as ops/resize.cpp and onnxruntime).
      if (X.d[*ax].known()) r.d[*ax] = dim(truncate((*scales)[i] * static_cast<float>(X.d[*ax].v)));
      else if ((*scales)[i] != 1.0f) r.d[*ax] = Dim{};
    }
  } else {
    return;  // not_larger/not_smaller or non-constant inputs: the probe may still work it out
  }
  o[0] = r;
}

void qdq_quantize(const In& x, Outs& o) {
  same_as_input(x, o);
  DType t = x.shape(2) ? x.dtype(2) : DType::UInt8;
  if (x.node.has_attr("output_dtype") && x.node.attr_int("output_dtype", 0) != 0)
    t = static_cast<DType>(x.node.attr_int("output_dtype", 0));
  o[0].dtype = t;
}

void qdq_dequantize(const In& x, Outs& o) {
  same_as_input(x, o);
  o[0].dtype = x.opset() >= 19 && x.shape(1) ? x.dtype(1) : DType::Float;
}

void where(const In& x, Outs& o) {
  o[0] = broadcast(x.s);
  o[0].dtype = x.dtype(1);
}

void filter(const In& x, Outs& o) {
  for (size_t i = 0; i < o.size() && i < x.s.size(); ++i)
    if (x.s[i]) o[i] = *x.s[i];
}

const std::unordered_map<std::string, Rule>& rules() {
  static const std::unordered_map<std::string, Rule> table = [] {
    std::unordered_map<std::string, Rule> t;
    for (const char* op :
         {"Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
          "Softplus", "Softsign", "Mish", "Gelu", "ThresholdedRelu", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs",
          "Erf", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Softmax", "LogSoftmax", "Hardmax",
          "BatchNormalization", "InstanceNormalization", "LpNormalization", "LRN", "Identity", "HzCalibration",
          "HzSwish", "HzHardSwish", "HzMish", "HzGelu", "HzRsqrt", "HzChannelShuffle", "CumSum", "Trilu",
          "ScatterND", "ScatterElements"})
      t[op] = same_as_input;
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "BitShift"})
      t[op] = broadcast_rule(std::nullopt);
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"})
      t[op] = broadcast_rule(DType::Bool);
    t["Not"] = same_with_dtype(DType::Bool);
    t["IsNaN"] = same_with_dtype(DType::Bool);
    t["IsInf"] = same_with_dtype(DType::Bool);
    t["Where"] = where;
    t["Cast"] = cast;
    t["CastLike"] = cast_like;
    t["Dropout"] = dropout;
    t["LayerNormalization"] = layer_norm;
    t["Conv"] = conv;
    t["ConvTranspose"] = conv_transpose;
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) t[op] = pool;
    for (const char* op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"}) t[op] = global_pool;
    t["Gemm"] = gemm;
    t["MatMul"] = matmul;
    t["Concat"] = concat;
    t["Split"] = split;
    t["Reshape"] = reshape;
    t["Flatten"] = flatten;
    t["Transpose"] = transpose;
    t["Squeeze"] = squeeze;
    t["Unsqueeze"] = unsqueeze;
    t["Slice"] = slice;
    t["Gather"] = gather;
    t["GatherElements"] = gather_elements;
    t["Pad"] = pad;
    t["HzPad"] = pad;
    t["Expand"] = expand;
    t["Tile"] = tile;
    for (const char* op : {"DepthToSpace", "SpaceToDepth", "HzDepthToSpace", "HzSpaceToDepth"}) t[op] = depth_to_space;
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      t[op] = reduce;
    t["ArgMax"] = arg_reduce;
    t["ArgMin"] = arg_reduce;
    t["TopK"] = topk;
    t["Shape"] = shape_op;
    t["Size"] = size_op;
    t["ConstantOfShape"] = constant_of_shape;
    t["Range"] = range;
    t["NonZero"] = nonzero;
    t["Resize"] = resize;
    t["Upsample"] = resize;
    t["HzResize11"] = resize;
    t["QuantizeLinear"] = qdq_quantize;
    t["DequantizeLinear"] = qdq_dequantize;
    t["HzFilter"] = filter;
    return t;
  }();
  return table;
}

bool standard_domain(const std::string& d) { return d.empty() || d == "ai.onnx" || d == "horizon"; }

// Constant folding and shape probing run real kernels on small data. Folding (all inputs constant)
// makes shape subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) resolve; probing (zeros
// of the inferred static input shapes) covers ops without a rule here (HzPreprocess, HzResize11...)
// with exactly the executor's own output-size logic.
constexpr int64_t kFoldLimit = 1 << 12;    // elements per folded output
constexpr int64_t kProbeLimit = 1 << 22;   // input elements a probe may allocate

std::optional<std::vector<Tensor>> run_kernel(const Node& node, const std::vector<const Tensor*>& inputs) {
  const KernelFn fn = OpRegistry::global().find(node.domain, node.op_type);
  if (!fn) return std::nullopt;
  std::vector<Tensor> outputs(node.outputs.size());
  KernelContext ctx{node, inputs, outputs, nullptr, std::vector<bool>(inputs.size(), false)};
  try {
    fn(ctx);
  } catch (const std::exception&) {
    return std::nullopt;  // a rule result (or unknown) stands; the executor reports real errors
  }
  return outputs;
}

// Element count of a static shape, or -1 when it overflows int64.
int64_t static_numel(const Shp& s) {
  int64_t n = 1;
  bool overflow = false;
  for (const Dim& d : s.d) {
    if (d.v == 0) return 0;
    overflow = overflow || __builtin_mul_overflow(n, d.v, &n);
  }
  return overflow ? -1 : n;
}

bool small_static(const Shp& s) {
  if (!s.is_static()) return false;
  const int64_t n = static_numel(s);
  return n >= 0 && n <= kFoldLimit;
}

}  // namespace

std::vector<ValueInfo> infer_shapes(const Graph& graph) {
  std::vector<Shp> shapes(graph.values.size());
  std::vector<std::optional<Tensor>> consts(graph.values.size());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& v = graph.values[id];
    if (v.initializer) {
      shapes[id] = ranked(v.initializer->dtype(), v.initializer->shape());
      consts[id] = *v.initializer;
    } else if (v.is_graph_input || v.producer < 0) {
      shapes[id] = from_info(v.info);
    }
  }
  const auto& table = rules();
  for (const Node& node : graph.nodes) {
    if (node.op_type == "Constant" && standard_domain(node.domain)) continue;  // outputs are initializers
    In in{node, {}, {}};
    for (int v : node.inputs) {
      in.s.push_back(v >= 0 ? &shapes[static_cast<size_t>(v)] : nullptr);
      in.c.push_back(v >= 0 && consts[static_cast<size_t>(v)] ? &*consts[static_cast<size_t>(v)] : nullptr);
    }
    Outs out(node.outputs.size());
    auto rule = standard_domain(node.domain) ? table.find(node.op_type) : table.end();
    const bool has_rule = rule != table.end();
    if (has_rule) {
      try {
        rule->second(in, out);
      } catch (const SizeError&) {
        out.assign(node.outputs.size(), Shp{});  // a dim overflowed int64: unknown here, the kernel reports it
      }
    }

    bool all_const = !node.inputs.empty();
    for (size_t i = 0; i < node.inputs.size(); ++i) all_const = all_const && (node.inputs[i] < 0 || in.c[i]);
    const bool outputs_small = std::all_of(out.begin(), out.end(), small_static);
    std::optional<std::vector<Tensor>> computed;
    if (all_const && standard_domain(node.domain) && node.op_type != "HzCalibration" && outputs_small) {
      computed = run_kernel(node, in.c);  // fold
    } else if (node.op_type == "Shape" && standard_domain(node.domain) && in.ranked(0) && in.shape(0)->is_static() &&
               out[0].is_static()) {
      // The rule gave the length; the values are the input dims from `start` (opset 15) on.
      const Shape s = in.shape(0)->dims();
      const int64_t r = static_cast<int64_t>(s.size());
      int64_t start = node.opset >= 15 ? node.attr_int("start", 0) : 0;
      start = std::max<int64_t>(0, std::min(r, start < 0 ? start + r : start));
      const auto first = s.begin() + static_cast<std::ptrdiff_t>(start);
      computed = std::vector<Tensor>{Tensor::from_int64s({out[0].d[0].v}, Shape(first, first + out[0].d[0].v))};
    } else if (!has_rule && standard_domain(node.domain)) {
      // Probe: zeros for every dynamic input, real data for constants.
      std::vector<Tensor> zeros;
      zeros.reserve(node.inputs.size());
      std::vector<const Tensor*> args;
      bool ok = true;
      int64_t total = 0;
      for (size_t i = 0; i < node.inputs.size() && ok; ++i) {
        if (node.inputs[i] < 0) { args.push_back(nullptr); continue; }
        if (in.c[i]) { args.push_back(in.c[i]); continue; }
        const Shp& s = *in.s[i];
        ok = s.is_static() && s.dtype != DType::Undefined && dtype_size(s.dtype) > 0;
        if (!ok) break;
        const int64_t n = static_numel(s);
        ok = n >= 0 && n <= kProbeLimit && (total += n) <= kProbeLimit;
        if (!ok) break;
        zeros.push_back(Tensor::zeros(s.dtype, s.dims()));
        args.push_back(&zeros.back());
      }
      if (ok) {
        if (auto res = run_kernel(node, args)) {
          for (size_t k = 0; k < out.size(); ++k)
            if ((*res)[k].defined()) out[k] = ranked((*res)[k].dtype(), (*res)[k].shape());
        }
      }
    }
    if (computed) {
      for (size_t k = 0; k < out.size(); ++k) {
        if (!(*computed)[k].defined()) continue;
        out[k] = ranked((*computed)[k].dtype(), (*computed)[k].shape());
        if ((*computed)[k].numel() <= kFoldLimit) consts[static_cast<size_t>(node.outputs[k])] = (*computed)[k];
      }
    }
    for (size_t k = 0; k < out.size(); ++k) {
      const int v = node.outputs[k];
      if (v < 0) continue;
      Shp& dst = shapes[static_cast<size_t>(v)];
      dst = out[k];
      // Where no rule applied, fall back to the exporter's declared value_info.
      const ValueInfo& declared = graph.value(v).info;
      if (!dst.ranked && declared.has_shape) {
        const DType t = dst.dtype;
        dst = from_info(declared);
        if (t != DType::Undefined) dst.dtype = t;
      }
      if (dst.dtype == DType::Undefined) dst.dtype = declared.dtype;
    }
  }
  std::vector<ValueInfo> result;
  result.reserve(graph.values.size());
  for (size_t id = 0; id < graph.values.size(); ++id) result.push_back(to_info(graph.values[id].name, shapes[id]));
  return result;
}

}  // namespace ptq::exec
