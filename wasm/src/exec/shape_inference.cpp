#include "exec/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/size.h"
#include "exec/registry.h"
#include "exec/shape_rule.h"

namespace ptq::exec {
namespace {

using ir::Graph;
using ir::Node;
using ir::Value;
using ir::ValueInfo;

using shape::Dim;
using shape::dim;
using shape::In;
using shape::Outs;
using shape::ranked;
using shape::Shp;

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

bool standard_domain(const std::string& d) { return d.empty() || d == "ai.onnx" || d == "horizon"; }

// Constant folding and shape probing run real kernels on small data. Folding (all inputs constant)
// makes shape subgraphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) resolve; probing (zeros
// of the inferred static input shapes) covers ops without a shape rule (HzPreprocess, Shrink...)
// with exactly the executor's own output-size logic.
constexpr int64_t kFoldLimit = 1 << 12;    // elements per folded output
constexpr int64_t kProbeLimit = 1 << 22;   // input elements a probe may allocate

// The entry of a node of a standard domain; ONNX ops carried in the horizon domain read as ONNX ops.
const OpDef* find_op(const OpRegistry& registry, const Node& node) {
  const OpDef* def = registry.find_op(node.domain, node.op_type, node.opset);
  if (!def && node.domain == "horizon") def = registry.find_op("", node.op_type, node.opset);
  return def;
}

std::optional<std::vector<Tensor>> run_kernel(const Node& node, const std::vector<const Tensor*>& inputs) {
  const KernelFn fn = OpRegistry::global().find(node.domain, node.op_type, node.opset);
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
  const OpRegistry& registry = OpRegistry::global();
  for (const Node& node : graph.nodes) {
    if (node.op_type == "Constant" && standard_domain(node.domain)) continue;  // outputs are initializers
    In in{node, {}, {}};
    for (int v : node.inputs) {
      in.s.push_back(v >= 0 ? &shapes[static_cast<size_t>(v)] : nullptr);
      in.c.push_back(v >= 0 && consts[static_cast<size_t>(v)] ? &*consts[static_cast<size_t>(v)] : nullptr);
    }
    Outs out(node.outputs.size());
    const OpDef* def = standard_domain(node.domain) ? find_op(registry, node) : nullptr;
    const bool has_rule = def && def->shape_rule;
    if (has_rule) {
      try {
        def->shape_rule(in, out);
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
            if ((*res)[k].defined() && (*res)[k].is_dense()) out[k] = ranked((*res)[k].dtype(), (*res)[k].shape());
        }
      }
    }
    if (computed) {
      for (size_t k = 0; k < out.size(); ++k) {
        // A sequence or optional has no static shape, and is never a constant tensor ops fold with.
        if (!(*computed)[k].defined() || !(*computed)[k].is_dense()) continue;
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
