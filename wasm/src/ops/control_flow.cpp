// Control flow: If, Loop and Scan. Their subgraph attributes run through the executor running the node
// (KernelContext::run_subgraph), so a body's nodes are the same kernels, under the same quantization
// configuration and memory budget, and read the enclosing graphs' tensors by name. Data is moved by
// byte size, so every fixed-size dtype works. Each op's structure (branch and body inputs and outputs
// against the node's) is checked when the model is loaded (OpDef::check), naming the node.
#include <cstring>
#include <string>
#include <vector>

#include "core/size.h"
#include "exec/registry.h"
#include "ops/movement_util.h"

namespace ptq::exec {
namespace {

// A loop that has run this many iterations is stopped with an error rather than left to run on: a
// condition that never turns false (or a huge trip count) would otherwise hang the page.
constexpr int64_t kMaxIterations = int64_t{1} << 20;

[[noreturn]] void node_fail(const ir::Node& node, const std::string& message) {
  throw Error("node '" + node.name + "' (" + node.op_type + "): " + message);
}

const ir::Graph& graph_attribute(const ir::Node& node, const std::string& name) {
  const ir::Attribute* a = node.attr(name);
  if (!a || !a->g) node_fail(node, "graph attribute '" + name + "' is missing");
  return *a->g;
}

std::string subgraph_label(const ir::Graph& g, const std::string& attribute) {
  return attribute + (g.name.empty() ? "" : " '" + g.name + "'");
}

std::string count(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

bool scalar_bool(const KernelContext& ctx, const Tensor& t, const std::string& what) {
  ctx.check(t.dtype() == DType::Bool && t.numel() == 1,
            what + " must be one bool, got " + dtype_name(t.dtype()) + " " + shape_str(t.shape()));
  return t.get_as_int64(0) != 0;
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::Bool, {});
  *t.mutable_data<uint8_t>() = v ? 1 : 0;
  return t;
}

size_t element_size(const KernelContext& ctx, const Tensor& t, const std::string& what) {
  const size_t size = dtype_size(t.dtype());
  ctx.check(size > 0, what + " is a " + value_str(t) + ", which a scan cannot slice or stack");
  return size;
}

// Stacks `parts` (same dtype and shape) along a new axis `axis` of the result; part t lands at index
// t, or at count-1-t when `reverse`. With no parts, the result has shape `empty_shape`.
Tensor stack(const KernelContext& ctx, const std::vector<Tensor>& parts, int64_t axis, bool reverse,
             const std::string& what, DType empty_dtype, const Shape& empty_shape) {
  if (parts.empty()) return Tensor::zeros(empty_dtype == DType::Undefined ? DType::Float : empty_dtype, empty_shape);
  const Tensor& first = parts[0];
  const size_t esize = element_size(ctx, first, what);
  for (size_t t = 1; t < parts.size(); ++t)
    ctx.check(parts[t].dtype() == first.dtype() && parts[t].shape() == first.shape(),
              what + ": iteration " + std::to_string(t) + " gives " + dtype_name(parts[t].dtype()) + " " +
                  shape_str(parts[t].shape()) + ", iteration 0 gave " + dtype_name(first.dtype()) + " " +
                  shape_str(first.shape()) + " (scan outputs must keep their dtype and shape)");
  const int64_t n = static_cast<int64_t>(parts.size());
  Shape shape = first.shape();
  shape.insert(shape.begin() + axis, n);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(first.rank()); ++d) {
    int64_t& part = d < axis ? outer : inner;
    part = size_mul(part, first.dim(static_cast<size_t>(d)), "a scan output's size");
  }
  size_mul(size_mul(outer, inner, "a scan output's size"), n, "a scan output's size");
  Tensor out(first.dtype(), shape);
  const size_t row = static_cast<size_t>(inner) * esize;
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t t = 0; t < n; ++t) {
    const auto* src = static_cast<const uint8_t*>(parts[static_cast<size_t>(t)].raw());
    const int64_t at = reverse ? n - 1 - t : t;
    for (int64_t o = 0; o < outer; ++o)
      if (row) std::memcpy(dst + (static_cast<size_t>(o * n + at)) * row, src + static_cast<size_t>(o) * row, row);
  }
  return out;
}

// Slice `index` of `t` along `axis`, that axis removed.
Tensor slice_at(const KernelContext& ctx, const Tensor& t, int64_t axis, int64_t index, const std::string& what) {
  const size_t esize = element_size(ctx, t, what);
  Shape shape = t.shape();
  const int64_t n = shape[static_cast<size_t>(axis)];
  shape.erase(shape.begin() + axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(t.rank()); ++d) {
    if (d < axis) outer *= t.dim(static_cast<size_t>(d));
    if (d > axis) inner *= t.dim(static_cast<size_t>(d));
  }
  if (outer == 1) return Tensor::alias(t, shape, static_cast<size_t>(index * inner) * esize);  // contiguous: no copy
  Tensor out(t.dtype(), shape);
  const size_t row = static_cast<size_t>(inner) * esize;
  const auto* src = static_cast<const uint8_t*>(t.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    if (row) std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>(o * n + index) * row, row);
  return out;
}

// The shape a scan output has after zero iterations: the body's declared slice shape (when static)
// with a 0 inserted at `axis`; [0] when the body does not declare it.
Shape empty_scan_shape(const ir::Value& body_output, int64_t axis) {
  const ir::ValueInfo& info = body_output.info;
  bool known = info.has_shape;
  for (int64_t d : info.dims) known = known && d >= 0;
  if (!known || axis > static_cast<int64_t>(info.dims.size())) return {0};
  Shape s(info.dims.begin(), info.dims.end());
  s.insert(s.begin() + axis, 0);
  return s;
}

// ---- If ----------------------------------------------------------------------------------------

void check_if(const ir::Node& node) {
  if (node.inputs.size() != 1 || node.inputs[0] < 0) node_fail(node, "needs exactly one input, 'cond'");
  for (const char* name : {"then_branch", "else_branch"}) {
    const ir::Graph& branch = graph_attribute(node, name);
    if (!branch.inputs.empty())
      node_fail(node, subgraph_label(branch, name) + " declares " + count(branch.inputs.size(), "input") +
                          "; a branch takes none");
    if (branch.outputs.size() != node.outputs.size())
      node_fail(node, subgraph_label(branch, name) + " has " + count(branch.outputs.size(), "output") +
                          " but the node has " + count(node.outputs.size(), "output"));
  }
}

// The branch's outputs may differ in shape from the other branch's (opset 11 on).
void if_op(KernelContext& ctx) {
  const bool cond = scalar_bool(ctx, ctx.required(0), "input 'cond'");
  std::vector<Tensor> out = ctx.run_subgraph(ctx.graph_attr(cond ? "then_branch" : "else_branch"), {});
  for (size_t i = 0; i < out.size() && i < ctx.outputs.size(); ++i) ctx.outputs[i] = std::move(out[i]);
}

// ---- Loop --------------------------------------------------------------------------------------

void check_loop(const ir::Node& node) {
  const ir::Graph& body = graph_attribute(node, "body");
  if (node.inputs.size() < 2) node_fail(node, "needs inputs 'M' and 'cond' (either may be empty)");
  const size_t n = node.inputs.size() - 2;
  if (body.inputs.size() != n + 2)
    node_fail(node, subgraph_label(body, "body") + " declares " + count(body.inputs.size(), "input") + "; with " +
                        count(n, "loop-carried value") + " it needs " + std::to_string(n + 2) +
                        " (iteration number, condition, the loop-carried values)");
  if (node.outputs.size() < n)
    node_fail(node, "has " + count(node.outputs.size(), "output") + " but " + count(n, "loop-carried value"));
  const size_t k = node.outputs.size() - n;
  if (body.outputs.size() != 1 + n + k)
    node_fail(node, subgraph_label(body, "body") + " declares " + count(body.outputs.size(), "output") +
                        "; the node needs " + std::to_string(1 + n + k) + " (condition, " +
                        count(n, "loop-carried value") + ", " + count(k, "scan output") + ")");
  for (size_t i = 0; i < n; ++i)
    if (node.inputs[2 + i] < 0) node_fail(node, "loop-carried input " + std::to_string(i) + " is empty");
}

// for (i = 0; i < M && cond; ++i) { cond, carried..., scans... = body(i, cond, carried...) }. As
// onnxruntime, the body's condition output ends the loop whether or not the node has a 'cond' input.
void loop(KernelContext& ctx) {
  const ir::Graph& body = ctx.graph_attr("body");
  const size_t n = ctx.input_count() - 2, k = ctx.outputs.size() - n;
  const Tensor* m = ctx.input(0);
  const Tensor* cond_in = ctx.input(1);
  int64_t trips = -1;  // none
  if (m) {
    ctx.check(m->dtype() == DType::Int64 && m->numel() == 1,
              "input 'M' must be one int64, got " + dtype_name(m->dtype()) + " " + shape_str(m->shape()));
    trips = std::max<int64_t>(0, m->get_as_int64(0));
  }
  bool cond = cond_in ? scalar_bool(ctx, *cond_in, "input 'cond'") : true;
  std::vector<Tensor> carried;
  for (size_t i = 0; i < n; ++i) carried.push_back(ctx.required(2 + i));
  std::vector<std::vector<Tensor>> scans(k);
  int64_t i = 0;
  for (; (trips < 0 || i < trips) && cond; ++i) {
    ctx.check(i < kMaxIterations,
              "stopped after " + std::to_string(kMaxIterations) + " iterations (the most a loop may run here)");
    std::vector<Tensor> in;
    in.reserve(n + 2);
    in.push_back(Tensor::from_int64s({}, {i}));
    in.push_back(bool_scalar(cond));
    for (auto& c : carried) in.push_back(std::move(c));
    std::vector<Tensor> out = ctx.run_subgraph(body, in);
    cond = scalar_bool(ctx, out[0], "the body's condition output");
    for (size_t j = 0; j < n; ++j) carried[j] = std::move(out[1 + j]);
    for (size_t j = 0; j < k; ++j) scans[j].push_back(std::move(out[1 + n + j]));
  }
  for (size_t j = 0; j < n; ++j) ctx.outputs[j] = std::move(carried[j]);
  for (size_t j = 0; j < k; ++j) {
    if (!ctx.has_output(n + j)) continue;
    const ir::Value& declared = body.value(body.outputs[1 + n + j]);
    ctx.outputs[n + j] = stack(ctx, scans[j], 0, false, "scan output " + std::to_string(j), declared.info.dtype,
                               empty_scan_shape(declared, 0));
    scans[j].clear();
  }
}

// ---- Scan --------------------------------------------------------------------------------------

// Opset 8 has a leading batch axis on every input and output and an optional 'sequence_lens' input.
size_t scan_first_state(const ir::Node& node) { return node.opset < 9 ? 1 : 0; }

void check_scan(const ir::Node& node) {
  const ir::Graph& body = graph_attribute(node, "body");
  const int64_t m = node.attr_int("num_scan_inputs", -1);
  const size_t first = scan_first_state(node);
  if (m < 1 || static_cast<size_t>(m) + first > node.inputs.size())
    node_fail(node, "attribute 'num_scan_inputs' must be between 1 and the number of inputs, got " + std::to_string(m));
  const size_t states = node.inputs.size() - first - static_cast<size_t>(m);
  if (body.inputs.size() != node.inputs.size() - first)
    node_fail(node, subgraph_label(body, "body") + " declares " + count(body.inputs.size(), "input") +
                        "; the node has " + count(states, "state") + " and " +
                        count(static_cast<size_t>(m), "scan input"));
  if (node.outputs.size() < states)
    node_fail(node, "has " + count(node.outputs.size(), "output") + " but " + count(states, "state"));
  if (body.outputs.size() != node.outputs.size())
    node_fail(node, subgraph_label(body, "body") + " declares " + count(body.outputs.size(), "output") +
                        " but the node has " + count(node.outputs.size(), "output"));
  const size_t k = node.outputs.size() - states;
  auto check_list = [&](const char* name, size_t expected) {
    const ir::Attribute* a = node.attr(name);
    if (a && a->ints.size() != expected)
      node_fail(node, "attribute '" + std::string(name) + "' has " + std::to_string(a->ints.size()) +
                          " entries; it needs " + std::to_string(expected));
  };
  if (node.opset < 9) {
    check_list("directions", static_cast<size_t>(m));
  } else {
    check_list("scan_input_axes", static_cast<size_t>(m));
    check_list("scan_input_directions", static_cast<size_t>(m));
    check_list("scan_output_axes", k);
    check_list("scan_output_directions", k);
  }
  for (size_t i = first; i < node.inputs.size(); ++i)
    if (node.inputs[i] < 0) node_fail(node, "input " + std::to_string(i) + " is empty");
}

std::vector<int64_t> flags(const KernelContext& ctx, const char* name, size_t n) {
  std::vector<int64_t> v = ctx.node.attr_ints(name);
  if (v.empty()) v.assign(n, 0);
  for (int64_t x : v)
    ctx.check(x == 0 || x == 1,
              "attribute '" + std::string(name) + "' holds " + std::to_string(x) + "; entries are 0 or 1");
  return v;
}

struct ScanSpec {
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

// One scan: `states` then `inputs` (scanned along in_axes) through the body; returns the final states
// then the scan outputs.
std::vector<Tensor> run_scan(KernelContext& ctx, const ir::Graph& body, std::vector<Tensor> states,
                             const std::vector<const Tensor*>& inputs, const ScanSpec& spec) {
  const size_t k = body.outputs.size() - states.size();
  int64_t length = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const int64_t axis =
        movement::normalize_axis(ctx, spec.in_axes[j], static_cast<int64_t>(inputs[j]->rank()), "scan_input_axes");
    axes.push_back(axis);
    const int64_t len = inputs[j]->dim(static_cast<size_t>(axis));
    ctx.check(length < 0 || len == length, "scan input " + std::to_string(j) + " has " + std::to_string(len) +
                                               " steps along its scan axis, scan input 0 has " +
                                               std::to_string(length));
    length = len;
  }
  ctx.check(length <= kMaxIterations,
            "scans " + std::to_string(length) + " steps; at most " + std::to_string(kMaxIterations) + " are supported");
  std::vector<std::vector<Tensor>> scans(k);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> in = std::move(states);
    for (size_t j = 0; j < inputs.size(); ++j)
      in.push_back(
          slice_at(ctx, *inputs[j], axes[j], spec.in_dirs[j] ? length - 1 - t : t, "scan input " + std::to_string(j)));
    std::vector<Tensor> out = ctx.run_subgraph(body, in);
    states.assign(std::make_move_iterator(out.begin()),
                  std::make_move_iterator(out.end() - static_cast<std::ptrdiff_t>(k)));
    for (size_t j = 0; j < k; ++j) scans[j].push_back(std::move(out[out.size() - k + j]));
  }
  std::vector<Tensor> result = std::move(states);  // the initial states when nothing was scanned
  for (size_t j = 0; j < k; ++j) {
    const ir::Value& declared = body.value(body.outputs[body.outputs.size() - k + j]);
    const int64_t slice_rank =
        scans[j].empty() ? static_cast<int64_t>(declared.info.dims.size()) : static_cast<int64_t>(scans[j][0].rank());
    const int64_t axis = movement::normalize_axis(ctx, spec.out_axes[j], slice_rank + 1, "scan_output_axes");
    result.push_back(stack(ctx, scans[j], axis, spec.out_dirs[j] != 0, "scan output " + std::to_string(j),
                           declared.info.dtype, empty_scan_shape(declared, axis)));
  }
  return result;
}

void scan(KernelContext& ctx) {
  const ir::Graph& body = ctx.graph_attr("body");
  const size_t first = scan_first_state(ctx.node);
  const size_t m = static_cast<size_t>(ctx.node.attr_int("num_scan_inputs", 0));
  const size_t n = ctx.input_count() - first - m, k = ctx.outputs.size() - n;
  ScanSpec spec;
  std::vector<Tensor> states;
  for (size_t i = 0; i < n; ++i) states.push_back(ctx.required(first + i));
  std::vector<const Tensor*> inputs;
  for (size_t j = 0; j < m; ++j) inputs.push_back(&ctx.required(first + n + j));
  if (ctx.opset() >= 9) {
    spec.in_axes = ctx.node.attr_ints("scan_input_axes", std::vector<int64_t>(m, 0));
    spec.in_dirs = flags(ctx, "scan_input_directions", m);
    spec.out_axes = ctx.node.attr_ints("scan_output_axes", std::vector<int64_t>(k, 0));
    spec.out_dirs = flags(ctx, "scan_output_directions", k);
    std::vector<Tensor> out = run_scan(ctx, body, std::move(states), inputs, spec);
    for (size_t i = 0; i < n + k; ++i) ctx.outputs[i] = std::move(out[i]);
    return;
  }
  // Opset 8: every input has a leading batch axis; each batch entry is one scan along axis 1.
  spec.in_axes.assign(m, 0);
  spec.in_dirs = flags(ctx, "directions", m);
  spec.out_axes.assign(k, 0);
  spec.out_dirs.assign(k, 0);
  int64_t batch = -1;
  for (size_t i = first; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.required(i);
    ctx.check(t.rank() >= 1 + (i >= first + n ? 1 : 0), "input " + std::to_string(i) + " lacks the batch axis");
    ctx.check(batch < 0 || t.dim(0) == batch, "input " + std::to_string(i) + " has batch size " +
                                                  std::to_string(t.dim(0)) + ", input " + std::to_string(first) +
                                                  " has " + std::to_string(batch));
    batch = t.dim(0);
  }
  if (const Tensor* lens = ctx.input(0)) {
    const int64_t steps = inputs.empty() ? 0 : inputs[0]->dim(1);
    for (int64_t b = 0; b < lens->numel(); ++b)
      ctx.check(lens->get_as_int64(b) == steps, "'sequence_lens' shorter than the scan axis are not supported");
  }
  std::vector<std::vector<Tensor>> per_output(n + k);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> batch_states;
    for (const Tensor& s : states) batch_states.push_back(slice_at(ctx, s, 0, b, "state"));
    std::vector<Tensor> batch_inputs;
    for (const Tensor* in : inputs) batch_inputs.push_back(slice_at(ctx, *in, 0, b, "scan input"));
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : batch_inputs) ptrs.push_back(&t);
    std::vector<Tensor> out = run_scan(ctx, body, batch_states, ptrs, spec);
    for (size_t i = 0; i < n + k; ++i) per_output[i].push_back(std::move(out[i]));
  }
  for (size_t i = 0; i < n + k; ++i) {
    const ir::Value& declared = body.value(body.outputs[i]);
    ctx.outputs[i] = stack(ctx, per_output[i], 0, false, "output " + std::to_string(i), declared.info.dtype, {0});
  }
}

// Outputs are known only when the body has run (a branch or an iteration count decides them): the
// shape inference leaves them to the model's declared value_info.
void run_time_shaped(const shape::In&, shape::Outs&) {}

}  // namespace

void register_control_flow(OpRegistry& r) {
  // If's branches and Loop's carried values may be sequences or optionals; Scan's are tensors.
  r.add("", "If", if_op).takes_values().check(check_if).rule(run_time_shaped).meta("", "cond");
  r.add("", "Loop", loop).takes_values().check(check_loop).rule(run_time_shaped).meta("", "M? cond? v_initial...");
  r.add("", "Scan", scan)
      .versions(1, 8)
      .check(check_scan)
      .rule(run_time_shaped)
      .meta("", "sequence_lens? initial_state_and_scan_inputs...");
  r.add("", "Scan", scan)
      .versions(9)
      .check(check_scan)
      .rule(run_time_shaped)
      .meta("", "initial_state_and_scan_inputs...");
}

}  // namespace ptq::exec
