#include "exec/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "core/error.h"
#include "core/size.h"

namespace ptq::exec {
namespace {

bool is_constant_op(const ir::Node& n) { return n.op_type == "Constant" && n.domain.empty(); }

// What decides a calibration node's output: OFF is identity whatever the qtype says.
std::string calibration_state_key(const QuantConfig& c, size_t i) {
  if (!c.on[i]) return "off";
  std::string key = "on:" + (i < c.qtype.size() ? c.qtype[i] : std::string()) + ":" +
                    std::to_string(static_cast<int>(c.round)) + (c.keeps_stored_scales(i) ? ":stored" : "");
  if (const std::vector<float>* t = c.thresholds_of(i))  // the exact bits: a key per threshold override
    key.append(":t").append(reinterpret_cast<const char*>(t->data()), t->size() * sizeof(float));
  return key;
}

// Input `in` of `node` in a forward pass over `values`: a constant, or a tensor an earlier node computed.
const Tensor* computed_input(const ir::Graph& g, const std::vector<Tensor>& values, const ir::Node& node, int in) {
  if (const Tensor* c = g.constant(in)) return c;
  const Tensor* t = &values[static_cast<size_t>(in)];
  if (!t->defined()) fail("node '" + node.name + "' reads tensor '" + g.value(in).name + "', which was not computed");
  return t;
}

// Calls f(value id) for every tensor node `n` depends on: its inputs, then its implicit inputs.
template <class F>
void for_each_dependency(const ir::Node& n, F&& f) {
  for (int in : n.inputs)
    if (in >= 0) f(in);
  for (int in : n.implicit_inputs) f(in);
}

}  // namespace

// The SubgraphRunner a control-flow kernel gets: runs one of its node's subgraphs with this executor.
class Executor::BodyRunner final : public SubgraphRunner {
 public:
  BodyRunner(Executor& executor, const GraphPlan& plan, size_t node_id, const std::vector<const Tensor*>& outer,
             const QuantConfig& config)
      : executor_(executor), plan_(plan), node_id_(node_id), outer_(outer), config_(config) {}

  std::vector<Tensor> run(const ir::Graph& body, const std::vector<Tensor>& inputs) override {
    const ir::Node& node = executor_.graph_of(plan_).node(static_cast<int>(node_id_));
    for (const auto& sub : plan_.subplans[node_id_]) {
      if (sub->graph != &body) continue;
      check(inputs.size() == body.inputs.size(), "node '" + node.name + "' (" + node.op_type + "): subgraph '" +
                                                     body.name + "' declares " + std::to_string(body.inputs.size()) +
                                                     " input(s) but is run with " + std::to_string(inputs.size()));
      return executor_.run_body(*sub, inputs, outer_, config_);
    }
    fail("node '" + node.name + "' (" + node.op_type + "): the graph to run is not one of its attributes");
  }

 private:
  Executor& executor_;
  const GraphPlan& plan_;
  size_t node_id_;
  const std::vector<const Tensor*>& outer_;
  const QuantConfig& config_;
};

Executor::Executor(ir::Model model, bool allow_unsupported) : model_(std::move(model)) {
  for (const quant::CalibrationSite& site : quant::calibration_sites(model_.graph))
    calibrations_.push_back(quant::parse_calibration(site));
  quant::for_each_scope(model_.graph, [&](const ir::Graph& g, const std::string& prefix, int) {
    for (const ir::Node& node : g.nodes) node_names_.insert(prefix + node.name);
  });
  std::vector<std::pair<const OpDef*, const ir::Node*>> checks;
  build_plan(root_, model_.graph, nullptr, nullptr, unsupported_, checks);
  if (!unsupported_.empty() && !allow_unsupported) fail(unsupported_message());
  for (const auto& [def, node] : checks) def->node_check(*node);
  for (const auto& c : calibrations_) stored_qtypes_.push_back(c.qtype);
}

std::string Executor::unsupported_message() const {
  if (unsupported_.empty()) return "";
  std::string message = "the model uses " + std::to_string(unsupported_.size()) + " node(s) with unsupported ops: ";
  for (size_t i = 0; i < unsupported_.size(); ++i) {
    const UnsupportedNode& u = unsupported_[i];
    message += (i ? "; " : "") + u.op_type + " (domain '" + u.domain + "', node '" + u.node + "')";
  }
  return message;
}

void Executor::require_runnable() const {
  if (!unsupported_.empty()) fail("cannot run: " + unsupported_message());
}

void Executor::build_plan(GraphPlan& plan, const ir::Graph& g, const ir::Graph* owner_graph, const ir::Node* owner,
                          std::vector<UnsupportedNode>& unsupported,
                          std::vector<std::pair<const OpDef*, const ir::Node*>>& checks) {
  const size_t n = g.nodes.size();
  plan.graph = owner ? &g : nullptr;
  plan.kernels.assign(n, nullptr);
  plan.takes_values.assign(n, 0);
  plan.constant_inputs.assign(n, {});
  plan.prepared.assign(n, std::any());
  plan.node_calibration.assign(n, -1);
  plan.subplans.clear();
  plan.subplans.resize(n);
  // Where each name the subgraph reads from outside comes from: the owner's implicit inputs hold
  // every name its subgraphs read (ir::finalize_graph).
  plan.outer_slots.clear();
  for (int ref : g.outer_refs) {
    const std::string& name = g.value(ref).name;
    size_t slot = 0;
    while (slot < owner->implicit_inputs.size() && owner_graph->value(owner->implicit_inputs[slot]).name != name)
      ++slot;
    check(slot < owner->implicit_inputs.size(), "node '" + owner->name + "' (" + owner->op_type + "): subgraph '" +
                                                    g.name + "' reads tensor '" + name +
                                                    "', which no enclosing graph provides");
    plan.outer_slots.push_back(slot);
  }
  const OpRegistry& registry = OpRegistry::global();
  // A weight calibration node's output is one of two fixed tensors (the stored weights, or their
  // fake-quantized copy from weight_cache_), so consumers may cache data derived from it (packed
  // weights) like for a graph constant; the cache still checks the tensor's identity.
  auto stable = [&](int v) {
    if (v < 0) return false;
    if (g.constant(v)) return true;
    const int p = g.value(v).producer;
    return p >= 0 && quant::is_calibration_node(g.node(p)) && !g.node(p).inputs.empty() &&
           g.constant(g.node(p).inputs[0]) != nullptr;
  };
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = g.nodes[i];
    // Kernels write outputs[0] unchecked; a node without outputs is malformed, not a no-op.
    if (node.outputs.empty()) fail("node '" + node.name + "' (" + node.op_type + ") has no outputs");
    for (int in : node.inputs) plan.constant_inputs[i].push_back(stable(in));
    if (is_constant_op(node)) continue;
    if (quant::is_calibration_node(node)) {
      // Fake quantization and every analysis work on tensors.
      if (!node.inputs.empty() && node.inputs[0] >= 0 && g.value(node.inputs[0]).info.kind != ValueKind::Dense)
        fail("calibration node '" + node.name + "' reads '" + g.value(node.inputs[0]).name + "', a " +
             value_kind_name(g.value(node.inputs[0]).info.kind) + ": calibration nodes quantize tensors only");
      plan.node_calibration[i] = calibration_at(g, static_cast<int>(i));
      continue;
    }
    const OpDef* def = registry.find_op(node.domain, node.op_type, node.opset);
    plan.kernels[i] = def ? def->kernel : nullptr;
    plan.takes_values[i] = def && def->values ? 1 : 0;
    if (!plan.kernels[i]) unsupported.push_back({node.name, node.op_type, node.domain});
    else if (def->node_check) checks.emplace_back(def, &node);
    for (const ir::Graph* sub : node.subgraphs()) {
      plan.subplans[i].push_back(std::make_unique<GraphPlan>());
      build_plan(*plan.subplans[i].back(), *sub, &g, &node, unsupported, checks);
    }
  }
  plan.last_use.assign(g.values.size(), -1);
  for (size_t i = 0; i < n; ++i)
    for_each_dependency(g.nodes[i], [&](int in) { plan.last_use[static_cast<size_t>(in)] = static_cast<int>(i); });
}

std::vector<Tensor> Executor::run_body(const GraphPlan& plan, const std::vector<Tensor>& inputs,
                                       const std::vector<const Tensor*>& outer, const QuantConfig& config) {
  const ir::Graph& g = *plan.graph;
  std::vector<Tensor> values(g.values.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) values[static_cast<size_t>(g.inputs[i])] = inputs[i];
  for (size_t k = 0; k < g.outer_refs.size(); ++k)
    values[static_cast<size_t>(g.outer_refs[k])] = *outer[plan.outer_slots[k]];
  std::vector<uint8_t> pinned(g.values.size(), 0);
  for (int v : g.outputs) pinned[static_cast<size_t>(v)] = 1;
  NodeIo io;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    if (is_constant_op(node)) continue;
    auto input_of = [&](int in) { return computed_input(g, values, node, in); };
    run_node(plan, i, config, io, input_of, [&](int v, Tensor&& t) { values[static_cast<size_t>(v)] = std::move(t); });
    for_each_dependency(node, [&](int in) {
      if (plan.last_use[static_cast<size_t>(in)] == static_cast<int>(i) && !pinned[static_cast<size_t>(in)])
        values[static_cast<size_t>(in)] = Tensor();
    });
  }
  std::vector<Tensor> out;
  out.reserve(g.outputs.size());
  for (int v : g.outputs) {
    if (const Tensor* c = g.constant(v)) {
      out.push_back(*c);
      continue;
    }
    if (!values[static_cast<size_t>(v)].defined())
      fail("subgraph '" + g.name + "': output '" + g.value(v).name + "' was not computed");
    out.push_back(std::move(values[static_cast<size_t>(v)]));
  }
  return out;
}

int Executor::calibration_at(const ir::Graph& g, int node_id) const {
  for (size_t i = 0; i < calibrations_.size(); ++i)
    if (calibrations_[i].graph == &g && calibrations_[i].node_id == node_id) return static_cast<int>(i);
  fail("calibration node '" + g.node(node_id).name + "' is not in the model's list of calibration nodes");
}

bool Executor::names_node(const std::string& name) const { return node_names_.count(name) > 0; }

int Executor::calibration_index(const std::string& node_name) const {
  for (size_t i = 0; i < calibrations_.size(); ++i)
    if (calibrations_[i].node_name == node_name) return static_cast<int>(i);
  return -1;
}

QuantConfig Executor::stored_config() const {
  QuantConfig c;
  for (const auto& spec : calibrations_) c.on.push_back(spec.switch_on ? 1 : 0);
  c.qtype.assign(calibrations_.size(), "");
  return c;
}

QuantConfig Executor::uniform_config(bool on) const {
  QuantConfig c;
  c.on.assign(calibrations_.size(), on ? 1 : 0);
  c.qtype.assign(calibrations_.size(), "");
  return c;
}

void Executor::check_config(const QuantConfig& config) const {
  check(config.on.size() == calibrations_.size(), "quantization config has " + std::to_string(config.on.size()) +
                                                      " entries but the model has " +
                                                      std::to_string(calibrations_.size()) + " calibration nodes");
  check(config.qtype.empty() || config.qtype.size() == calibrations_.size(),
        "quantization config qtype list must be empty or have one entry per calibration node");
  check(config.thresholds.empty() || config.thresholds.size() == calibrations_.size(),
        "quantization config thresholds list must be empty or have one entry per calibration node");
}

quant::CalibrationSpec Executor::configured_spec(size_t i, const QuantConfig& config) const {
  const std::vector<float>* t = config.thresholds_of(i);
  return t ? quant::with_thresholds(calibrations_.at(i), *t) : calibrations_.at(i);
}

std::optional<quant::QType> Executor::qtype_override(int ci, const QuantConfig& config) const {
  const size_t i = static_cast<size_t>(ci);
  if (i < config.qtype.size() && !config.qtype[i].empty() && config.qtype[i] != stored_qtypes_[i].name)
    return quant::QType::parse(config.qtype[i]);
  return std::nullopt;
}

void Executor::check_input(size_t index, const Tensor& t) const {
  const ir::Value& v = graph().value(graph().inputs[index]);
  if (t.kind() != v.info.kind)
    fail("input '" + v.name + "' is declared a " + value_kind_name(v.info.kind) + " but was given a " + value_str(t));
  if (!t.is_dense()) return;
  if (v.info.dtype != DType::Undefined && v.info.dtype != t.dtype())
    fail("Unexpected data type for input: " + v.name + " , Expected: " + horizon_dtype_name(v.info.dtype) +
         ", Actual: " + horizon_dtype_name(t.dtype()) + " .");
  if (!v.info.has_shape) return;
  bool ok = v.info.dims.size() == t.rank();
  for (size_t d = 0; ok && d < t.rank(); ++d) ok = v.info.dims[d] < 0 || v.info.dims[d] == t.dim(d);
  if (!ok) {
    Shape declared(v.info.dims.begin(), v.info.dims.end());
    fail("Unexpected shape for input: " + v.name + " , Expected: " + shape_str(declared) +
         " (-1 = any), Actual: " + shape_str(t.shape()) + " .");
  }
}

Tensor Executor::run_calibration(int ci, const Tensor& input, const QuantConfig& config) {
  const size_t i = static_cast<size_t>(ci);
  if (!config.on[i]) return input;
  std::optional<quant::CalibrationSpec> recalibrated;  // a threshold override (no copy without one)
  if (const std::vector<float>* thresholds = config.thresholds_of(i))
    recalibrated = quant::with_thresholds(calibrations_[i], *thresholds);
  const quant::CalibrationSpec& spec = recalibrated ? *recalibrated : calibrations_[i];
  const std::optional<quant::QType> override_type = qtype_override(ci, config);
  const quant::QType& qtype = override_type ? *override_type : stored_qtypes_[i];
  auto compute = [&] {
    return quant::fake_quantize(
        spec, qtype, override_type ? quant::override_scales(spec, qtype, config.keeps_stored_scales(i)) : spec.scales,
        input, config.round);
  };
  if (!spec.graph->constant(spec.input_value)) return compute();
  // Weights: quantized once per (node, qtype, rounding, scales rule, thresholds) and reused by every later run.
  const std::string key = calibration_state_key(config, i) + "|" + std::to_string(ci) + "|" + qtype.name;
  auto it = weight_cache_.find(key);
  if (it == weight_cache_.end()) it = weight_cache_.emplace(key, compute()).first;
  return it->second;
}

template <class InputOf, class Store>
void Executor::run_node(const GraphPlan& plan, size_t node_id, const QuantConfig& config, NodeIo& io,
                        InputOf&& input_of, Store&& store) {
  const ir::Node& node = graph_of(plan).nodes[node_id];
  io.inputs.clear();
  for (int in : node.inputs) io.inputs.push_back(in < 0 ? nullptr : input_of(in));
  io.implicit.clear();
  for (int in : node.implicit_inputs) io.implicit.push_back(input_of(in));
  io.outputs.assign(node.outputs.size(), Tensor());
  execute_node(plan, static_cast<int>(node_id), io, config);
  for (size_t o = 0; o < io.outputs.size(); ++o)
    if (node.outputs[o] >= 0) store(node.outputs[o], std::move(io.outputs[o]));
}

void Executor::execute_node(const GraphPlan& plan, int node_id, NodeIo& io, const QuantConfig& config) {
  if (node_timer_ && &plan == &root_) {  // the main graph's nodes; a subgraph's time counts in its node's
    const auto t0 = std::chrono::steady_clock::now();
    execute_node_untimed(plan, node_id, io, config);
    node_timer_(node_id, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return;
  }
  execute_node_untimed(plan, node_id, io, config);
}

void Executor::execute_node_untimed(const GraphPlan& plan, int node_id, NodeIo& io, const QuantConfig& config) {
  const ir::Node& node = graph_of(plan).node(node_id);
  const auto& inputs = io.inputs;
  auto& outputs = io.outputs;
  const int ci = plan.node_calibration[static_cast<size_t>(node_id)];
  KernelContext ctx{node, inputs, outputs, nullptr, {}};
  BodyRunner runner(*this, plan, static_cast<size_t>(node_id), io.implicit, config);
  try {
    if (ci >= 0) {
      check(inputs[0] != nullptr, "calibration node '" + node.name + "' has no input");
      check(inputs[0]->is_dense(), "calibration node '" + node.name + "' reads a " + value_str(*inputs[0]) +
                                       ": calibration nodes quantize tensors only");
      if (calibration_probe_) calibration_probe_(ci, *inputs[0]);
      outputs[0] = run_calibration(ci, *inputs[0], config);
      return;
    }
    if (!plan.takes_values[static_cast<size_t>(node_id)])
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i] && !inputs[i]->is_dense())
          ctx.fail("input " + std::to_string(i) + " is a " + value_str(*inputs[i]) + "; the op takes tensors only");
    ctx.prepared = &plan.prepared[static_cast<size_t>(node_id)];
    ctx.constant_input = plan.constant_inputs[static_cast<size_t>(node_id)];
    if (!plan.subplans[static_cast<size_t>(node_id)].empty()) ctx.subgraphs = &runner;
    plan.kernels[static_cast<size_t>(node_id)](ctx);
  } catch (const SizeError& e) {
    // Raised by the checked size arithmetic and the memory budget (core/size.h), which do not know
    // the node.
    const std::string message = e.what();
    if (message.rfind("node '", 0) == 0) throw;
    throw SizeError("node '" + node.name + "' (" + node.op_type + "): " + message);
  }
  for (size_t o = 0; o < outputs.size(); ++o)
    if (node.outputs[o] >= 0 && !outputs[o].defined()) ctx.fail("kernel did not produce output " + std::to_string(o));
}

namespace {

// The cache is an optimisation: a run that reaches the memory budget while cached records hold
// memory is retried once without them, so a model that fits on its own never fails for the cache.
template <class Run>
RunRecord without_cache_on_budget(RunCache& cache, const Run& run) {
  try {
    return run();
  } catch (const SizeError&) {
    if (cache.empty()) throw;
    cache.clear();
    return run();
  }
}

}  // namespace

RunRecord Executor::cached_keep_all_run(const std::vector<Tensor>& inputs, const QuantConfig& config) {
  return without_cache_on_budget(run_cache_, [&] {
    if (const RunRecord* cached = run_cache_.find(inputs, config)) return *cached;
    RunRecord record = run(inputs, config, {}, true);
    run_cache_.insert(inputs, config, record);
    return record;
  });
}

RunRecord Executor::cached_keep_all_run_nearest(const std::vector<Tensor>& inputs, const QuantConfig& config,
                                                RunStats* stats) {
  check_config(config);
  return without_cache_on_budget(run_cache_, [&] { return cached_keep_all_run_nearest_once(inputs, config, stats); });
}

RunRecord Executor::cached_keep_all_run_nearest_once(const std::vector<Tensor>& inputs, const QuantConfig& config,
                                                     RunStats* stats) {
  if (const RunRecord* cached = run_cache_.find(inputs, config)) {
    if (stats) stats->nodes_skipped += static_cast<int64_t>(graph().nodes.size());
    return *cached;
  }
  const RunRecord* nearest = run_cache_.nearest(inputs, [&](const QuantConfig& c) {
    size_t distance = 0;
    for (size_t i = 0; i < calibrations_.size(); ++i)
      distance += calibration_state_key(c, i) != calibration_state_key(config, i) ? 1 : 0;
    return distance;
  });
  if (!nearest) {
    RunRecord record = run(inputs, config, {}, true, stats);
    run_cache_.insert(inputs, config, record);
    return record;
  }
  const RunRecord base = *nearest;  // the cache may drop it while the new record is inserted
  // Every tensor the nearest record holds (graph inputs included), shared where unchanged.
  std::vector<int> keep;
  for (size_t v = 0; v < base.values.size(); ++v)
    if (base.values[v].defined()) keep.push_back(static_cast<int>(v));
  RunRecord record = run_incremental(base, config, keep, stats);
  size_t added = 0;  // the tensors it shares with its base are counted there
  for (size_t v = 0; v < record.values.size(); ++v)
    if (record.values[v].defined() && !(base.values[v].defined() && base.values[v].same_view_as(record.values[v])))
      added += record.values[v].nbytes();
  run_cache_.insert(inputs, config, record, added);
  return record;
}

RunRecord Executor::run(const std::vector<Tensor>& inputs, const QuantConfig& config, const std::vector<int>& keep,
                        bool keep_all, RunStats* stats) {
  require_runnable();
  // One run keeping at most `keep_budget` bytes of a keep_all run's tensors (0 = all of them).
  auto run_keeping = [&](size_t keep_budget) {
    const ir::Graph& g = graph();
    check_config(config);
    check(inputs.size() == g.inputs.size(), "the model has " + std::to_string(g.inputs.size()) + " input(s) but " +
                                                std::to_string(inputs.size()) + " were given");
    for (size_t i = 0; i < inputs.size(); ++i) check_input(i, inputs[i]);

    std::vector<Tensor> values(g.values.size());
    const bool budgeted = keep_all && keep_budget > 0;
    std::vector<uint8_t> pinned(g.values.size(), keep_all && !budgeted ? 1 : 0);
    for (int v : keep) pinned.at(static_cast<size_t>(v)) = 1;
    for (int v : g.outputs) pinned[static_cast<size_t>(v)] = 1;
    // Graph inputs are the caller's tensors (no cost) and the root of every recomputation.
    if (keep_all)
      for (int v : g.inputs) pinned[static_cast<size_t>(v)] = 1;
    RunRecord record;
    for (size_t i = 0; i < inputs.size(); ++i) values[static_cast<size_t>(g.inputs[i])] = inputs[i];

    NodeIo io;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      if (is_constant_op(node)) continue;
      auto input_of = [&](int in) { return computed_input(g, values, node, in); };
      auto store = [&](int v, Tensor&& t) {
        if (budgeted && !pinned[static_cast<size_t>(v)]) {
          const size_t bytes = t.nbytes();
          if (record.kept_bytes + bytes <= keep_budget) {
            pinned[static_cast<size_t>(v)] = 1;
            record.kept_bytes += bytes;
          } else {
            ++record.evicted;
          }
        }
        values[static_cast<size_t>(v)] = std::move(t);
      };
      run_node(root_, i, config, io, input_of, store);
      // Release tensors whose last consumer has run (unless kept): dropping the last reference frees
      // their storage, so a run holds only the live tensors of the graph.
      for_each_dependency(node, [&](int in) {
        if (root_.last_use[static_cast<size_t>(in)] == static_cast<int>(i) && !pinned[static_cast<size_t>(in)])
          values[static_cast<size_t>(in)] = Tensor();
      });
      if (stats) ++stats->nodes_executed;
    }
    record.config = config;
    record.values.resize(g.values.size());
    for (size_t v = 0; v < values.size(); ++v)
      if (pinned[v]) record.values[v] = std::move(values[v]);
    return record;
  };
  if (!keep_all || keep_all_budget_ > 0) return run_keeping(keep_all_budget_);
  const RunStats before = stats ? *stats : RunStats{};
  try {
    return run_keeping(0);
  } catch (const SizeError&) {
    // Every tensor kept does not fit the memory budget: keep those that fit in half of what is free of
    // it (in graph order; the model's bytes and packed weights already count); run_incremental
    // recomputes the others when it needs them.
    if (stats) *stats = before;
    const uint64_t in_use = memory_in_use(), budget = memory_budget();
    return run_keeping(std::max<size_t>(1, static_cast<size_t>(budget > in_use ? (budget - in_use) / 2 : 0)));
  }
}

void Executor::recompute_base(const RunRecord& base, int value, int reader, const std::vector<uint8_t>& returned,
                              std::vector<Tensor>& cache, RunStats* stats) {
  const ir::Graph& g = graph();
  auto held = [&](int v) {
    return g.constant(v) || base.values[static_cast<size_t>(v)].defined() || cache[static_cast<size_t>(v)].defined();
  };
  // Producers to re-run: walk back from `value` through tensors neither the base nor the cache holds.
  std::vector<uint8_t> needed(g.nodes.size(), 0);
  std::vector<int> stack = {value};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (held(v)) continue;
    const int p = g.value(v).producer;
    if (p < 0) fail("incremental run: the base record lacks tensor '" + g.value(v).name + "' (run it with keep_all)");
    if (needed[static_cast<size_t>(p)]) continue;
    needed[static_cast<size_t>(p)] = 1;
    for_each_dependency(g.node(p), [&](int in) { stack.push_back(in); });
  }
  // Reads left among those producers, per tensor. A rebuilt tensor is dropped once they are done,
  // unless node `reader` or a later one reads it (the variant run drops it after its last reader) or
  // it is returned: a long rebuilt stretch then holds only its live tensors, as a forward run does,
  // instead of all of them until the variant ends.
  std::vector<int> reads(g.values.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (needed[i]) for_each_dependency(g.nodes[i], [&](int in) { ++reads[static_cast<size_t>(in)]; });
  auto release_if_done = [&](int v) {
    const size_t k = static_cast<size_t>(v);
    if (reads[k] == 0 && v != value && !returned[k] && root_.last_use[k] < reader) cache[k] = Tensor();
  };
  auto input_of = [&](int in) {
    if (const Tensor* c = g.constant(in)) return c;
    const Tensor& b = base.values[static_cast<size_t>(in)];
    return b.defined() ? &b : &cache[static_cast<size_t>(in)];
  };
  auto store = [&](int v, Tensor&& t) {
    if (!held(v)) cache[static_cast<size_t>(v)] = std::move(t);
  };
  NodeIo io;
  for (size_t i = 0; i < g.nodes.size(); ++i) {  // node order is topological
    if (!needed[i]) continue;
    const ir::Node& node = g.nodes[i];
    run_node(root_, i, base.config, io, input_of, store);
    if (stats) ++stats->nodes_recomputed;
    for_each_dependency(node, [&](int in) {
      --reads[static_cast<size_t>(in)];
      release_if_done(in);
    });
    for (int out : node.outputs)  // an output only a later node reads, or none
      if (out >= 0) release_if_done(out);
  }
}

RunRecord Executor::run_incremental(const RunRecord& base, const QuantConfig& config, const std::vector<int>& keep,
                                    RunStats* stats) {
  return incremental(base, config, keep, true, stats);
}

RunRecord Executor::run_incremental_values(const RunRecord& base, const QuantConfig& config,
                                           const std::vector<int>& values, RunStats* stats) {
  return incremental(base, config, values, false, stats);
}

std::vector<uint8_t> Executor::switched_nodes(const QuantConfig& from, const QuantConfig& to) const {
  std::vector<uint8_t> switched(graph().nodes.size(), 0);
  for (size_t ci = 0; ci < calibrations_.size(); ++ci) {
    if (calibration_state_key(from, ci) == calibration_state_key(to, ci)) continue;
    const quant::CalibrationSpec& spec = calibrations_[ci];
    // A calibration node inside a subgraph runs once per iteration or branch taken, under the
    // control-flow node that runs the subgraph: that node re-runs as one unit (§1.13).
    switched[static_cast<size_t>(spec.in_subgraph() ? spec.owner_node : spec.node_id)] = 1;
  }
  return switched;
}

RunRecord Executor::incremental(const RunRecord& base, const QuantConfig& config, const std::vector<int>& keep,
                                bool with_outputs, RunStats* stats) {
  require_runnable();
  const ir::Graph& g = graph();
  check_config(config);
  check(base.values.size() == g.values.size(), "incremental run: the base record belongs to another model");
  std::vector<Tensor> changed(g.values.size());  // defined = differs from base
  std::vector<uint8_t> wanted(g.values.size(), 0);
  for (int v : keep) wanted.at(static_cast<size_t>(v)) = 1;
  if (with_outputs)
    for (int v : g.outputs) wanted[static_cast<size_t>(v)] = 1;
  // Without the graph outputs, only the producers of the wanted values (transitively) need to run.
  std::vector<uint8_t> needed;
  if (!with_outputs) {
    needed.assign(g.nodes.size(), 0);
    std::vector<int> stack(keep.begin(), keep.end());
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      const int p = g.value(v).producer;
      if (p < 0 || needed[static_cast<size_t>(p)]) continue;
      needed[static_cast<size_t>(p)] = 1;
      for_each_dependency(g.node(p), [&](int in) { stack.push_back(in); });
    }
  }

  std::vector<Tensor> recomputed(g.values.size());  // base tensors evicted under the keep_all budget
  size_t reader = 0;  // the node whose inputs are being gathered (the node count while the record is filled)
  // The base's tensor if it is still held (nullptr when evicted and not yet recomputed).
  auto held_base = [&](int v) -> const Tensor* {
    if (const Tensor* c = g.constant(v)) return c;
    const Tensor& t = base.values[static_cast<size_t>(v)];
    if (t.defined()) return &t;
    const Tensor& r = recomputed[static_cast<size_t>(v)];
    return r.defined() ? &r : nullptr;
  };
  auto base_value = [&](int v) -> const Tensor* {
    if (const Tensor* t = held_base(v)) return t;
    recompute_base(base, v, static_cast<int>(reader), wanted, recomputed, stats);
    return &recomputed[static_cast<size_t>(v)];
  };

  auto input_of = [&](int in) {
    const Tensor& t = changed[static_cast<size_t>(in)];
    return t.defined() ? &t : base_value(in);
  };
  // Propagation stops where the recomputed tensor equals the cached one bit for bit (an evicted
  // cached tensor counts as different: rebuilding it just to compare would cost more than it saves).
  auto store = [&](int v, Tensor&& t) {
    const Tensor* cached = held_base(v);
    if (!cached || !same_bits(t, *cached)) changed[static_cast<size_t>(v)] = std::move(t);
  };
  const std::vector<uint8_t> switched = switched_nodes(base.config, config);
  NodeIo io;
  for (reader = 0; reader < g.nodes.size(); ++reader) {
    const size_t i = reader;
    const ir::Node& node = g.nodes[i];
    if (!is_constant_op(node) && (needed.empty() || needed[i])) {
      bool dirty = false;
      // A control-flow node is one unit: it re-runs when an input or a tensor its subgraphs read changed.
      for_each_dependency(node, [&](int in) { dirty = dirty || changed[static_cast<size_t>(in)].defined(); });
      dirty = dirty || switched[i];
      if (dirty) {
        run_node(root_, i, config, io, input_of, store);
        if (stats) ++stats->nodes_executed;
      } else if (stats) {
        ++stats->nodes_skipped;
      }
    }
    // Release the tensors node i read last, as a forward run does (also when it was skipped: a
    // recomputed base tensor may have been read by an earlier node only).
    for_each_dependency(node, [&](int in) {
      if (root_.last_use[static_cast<size_t>(in)] == static_cast<int>(i) && !wanted[static_cast<size_t>(in)]) {
        changed[static_cast<size_t>(in)] = Tensor();
        recomputed[static_cast<size_t>(in)] = Tensor();
      }
    });
  }
  RunRecord record;
  record.config = config;
  record.values.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (!wanted[v]) continue;
    record.values[v] = changed[v].defined() ? std::move(changed[v]) : *base_value(static_cast<int>(v));
  }
  return record;
}

std::vector<Tensor> Executor::outputs(const RunRecord& record) const {
  std::vector<Tensor> out;
  for (int v : graph().outputs) {
    const Tensor* c = graph().constant(v);
    out.push_back(c ? *c : record.values[static_cast<size_t>(v)]);
  }
  return out;
}

std::vector<Tensor> Executor::tensor_outputs(const RunRecord& record) const {
  std::vector<Tensor> out = outputs(record);
  for (size_t i = 0; i < out.size(); ++i)
    check(out[i].is_dense(), "model output '" + graph().value(graph().outputs[i]).name + "' is a " +
                                 value_kind_name(out[i].kind()) + ", not a tensor: only tensor outputs can be written");
  return out;
}

}  // namespace ptq::exec
