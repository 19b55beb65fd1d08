#pragma once
// The contract between static shape inference (exec/shape_inference.h) and one op's shape rule. A rule
// reads the inferred shapes of its node's inputs (and the values of constant ones) and assigns the
// shapes and dtypes of the outputs it can work out; what it leaves unknown stays unknown (or comes from
// running the kernel on zeros). Rules live beside their kernels in ops/<family>.cpp and are registered
// with them (exec/registry.h).
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace ptq::exec::shape {

// A dim: known size (v >= 0), or unknown (v == -1) possibly named by a symbol carried from an input.
struct Dim {
  int64_t v = -1;
  std::string sym;
  bool known() const { return v >= 0; }
};
inline Dim dim(int64_t v) { return Dim{v, ""}; }

// An inferred shape: dtype (Undefined = unknown), whether the rank is known, and the dims.
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

inline Shp ranked(DType t, std::vector<Dim> d) { return Shp{t, true, std::move(d)}; }
inline Shp ranked(DType t, const Shape& s) {
  Shp r{t, true, {}};
  for (int64_t v : s) r.d.push_back(dim(v));
  return r;
}
inline Shp unranked(DType t) { return Shp{t, false, {}}; }

// The view of one node a rule works on: input shapes (nullptr when absent) and constant inputs.
struct In {
  const ir::Node& node;
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

// One entry per node output, all unknown when the rule is called.
using Outs = std::vector<Shp>;
// A rule may throw SizeError when a dim overflows int64 (its outputs then stay unknown).
using Rule = std::function<void(const In&, Outs&)>;

}  // namespace ptq::exec::shape
