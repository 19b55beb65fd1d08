#pragma once
// Runs a loaded model, one sample at a time, under a quantization configuration, and re-runs
// variants incrementally from a cached run: a node is recomputed only if one of its inputs differs
// from the cached run (dirty propagation starting at the calibration nodes whose state changed),
// and propagation stops wherever a recomputed output is bit-identical to the cached one.
#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exec/registry.h"
#include "exec/run_cache.h"
#include "exec/run_record.h"
#include "ir/graph.h"
#include "quant/calibration.h"

namespace ptq::exec {

class Executor {
 public:
  // Takes ownership of the model; the model's byte buffer must outlive the executor (views).
  // Throws one ptq::Error listing every unsupported op (type, domain, node name) before any compute;
  // with `allow_unsupported` the model loads in a limited state instead: the graph, the calibration
  // nodes and the stored weights are there, and every run fails with that list (require_runnable).
  explicit Executor(ir::Model model, bool allow_unsupported = false);
  // Its calibration specs and plans point into its model: an executor stays where it was made.
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // A node whose op has no kernel (in the main graph or a subgraph).
  struct UnsupportedNode {
    std::string node, op_type, domain;
  };
  // Every such node, in graph order; empty when the model can run.
  const std::vector<UnsupportedNode>& unsupported_nodes() const { return unsupported_; }
  bool runnable() const { return unsupported_.empty(); }
  // "the model uses N node(s) with unsupported ops: Op (domain 'd', node 'n'); ..." ("" when runnable).
  std::string unsupported_message() const;
  // Fails with "cannot run: " + unsupported_message() when the model has unsupported ops.
  void require_runnable() const;

  const ir::Model& model() const { return model_; }
  const ir::Graph& graph() const { return model_.graph; }
  const std::vector<quant::CalibrationSpec>& calibrations() const { return calibrations_; }
  int calibration_index(const std::string& node_name) const;  // -1 when absent
  // Whether `name` names a node of the main graph or, by its qualified name (§1.13), of a subgraph at
  // any depth: the names an analysis or a configuration accepts.
  bool names_node(const std::string& name) const;

  // Configurations: as stored in the file (switch attribute), all ON, all OFF (the float model).
  QuantConfig stored_config() const;
  QuantConfig uniform_config(bool on) const;
  // Calibration node i as `config` runs it: as stored, or with the configuration's thresholds
  // (quant::with_thresholds). Its qtype is the stored one; a qtype override derives scales from it.
  quant::CalibrationSpec configured_spec(size_t i, const QuantConfig& config) const;

  // Byte budget for the tensors a keep_all run keeps besides graph inputs, outputs and `keep`
  // (0, the default: all of them, or when they do not fit the memory budget (core/size.h) those that
  // fit in half of it). Tensors are kept in graph order while they fit; the rest are
  // released as in a normal run. run_incremental recomputes an evicted base tensor (from the nearest
  // kept ones, under the base's config) only when it needs its value, holding the tensors rebuilt on
  // the way only while a later node reads them (as a forward run does), and treats a recomputed node
  // whose cached output was evicted as changed instead of comparing bits. Sizes are counted as
  // nbytes per tensor, so zero-copy views (Reshape...) count in full: the budget is an upper bound.
  void set_keep_all_budget(size_t bytes) { keep_all_budget_ = bytes; }
  size_t keep_all_budget() const { return keep_all_budget_; }

  // Validates inputs (count, dtype, shape vs the model's declared input) and runs the whole graph.
  // `keep` lists value ids to keep in the record besides graph outputs; keep_all keeps everything.
  RunRecord run(const std::vector<Tensor>& inputs, const QuantConfig& config, const std::vector<int>& keep = {},
                bool keep_all = false, RunStats* stats = nullptr);

  // A keep_all run of `inputs` under `config`, reused while the run cache (RunCache) holds it:
  // records are held up to the run cache budget, the least recently used dropped first; 0 disables
  // the cache.
  RunRecord cached_keep_all_run(const std::vector<Tensor>& inputs, const QuantConfig& config);
  // The same, but on a miss the record is derived from the cached record of the same inputs whose
  // configuration differs in the fewest calibration nodes (run_incremental keeping every tensor, so
  // only what the differing calibration nodes reach is recomputed); a full keep_all run when no record
  // of these inputs is cached. What-if toggles: each configuration is one change away from the last.
  // Both retry once with an empty cache when a run reaches the memory budget (core/size.h).
  RunRecord cached_keep_all_run_nearest(const std::vector<Tensor>& inputs, const QuantConfig& config,
                                        RunStats* stats = nullptr);
  void set_run_cache_budget(size_t bytes) { run_cache_.set_budget(bytes); }
  void clear_run_cache() { run_cache_.clear(); }
  size_t run_cache_hits() const { return run_cache_.hits(); }
  static constexpr size_t kDefaultRunCacheBudget = size_t{256} << 20;

  // Re-runs `config` starting from `base` (a keep_all record of the same sample): only nodes
  // downstream of calibration nodes whose state differs are recomputed. Returns the requested values
  // (graph outputs + keep), each either recomputed or shared with `base`.
  RunRecord run_incremental(const RunRecord& base, const QuantConfig& config, const std::vector<int>& keep,
                            RunStats* stats = nullptr);
  // Like run_incremental, but returns only `values` (graph outputs are not added) and runs only the
  // nodes they depend on: e.g. one node's output with its own inputs quantized, without its cone.
  RunRecord run_incremental_values(const RunRecord& base, const QuantConfig& config, const std::vector<int>& values,
                                   RunStats* stats = nullptr);

  // Profiling hook (ptq_bench --profile, Session.profile): called after every executed node with its
  // wall time. ScopedNodeTimer installs one for a scope and removes it on exit, exceptions included.
  using NodeTimer = std::function<void(int node_id, double ms)>;
  void set_node_timer(NodeTimer timer) { node_timer_ = std::move(timer); }
  class ScopedNodeTimer {
   public:
    ScopedNodeTimer(Executor& executor, NodeTimer timer) : executor_(executor) {
      executor_.set_node_timer(std::move(timer));
    }
    ~ScopedNodeTimer() { executor_.set_node_timer(nullptr); }
    ScopedNodeTimer(const ScopedNodeTimer&) = delete;
    ScopedNodeTimer& operator=(const ScopedNodeTimer&) = delete;

   private:
    Executor& executor_;
  };

  // Observation hook of the analyses that read calibration nodes' inputs (stat info, distribution):
  // called with every execution of a calibration node in a run, in the main graph once, inside a
  // subgraph once per iteration or branch taken (§1.13). Incremental runs skip what they reuse, so
  // observers use run(). ScopedCalibrationProbe installs one for a scope.
  using CalibrationProbe = std::function<void(int calibration, const Tensor& input)>;
  class ScopedCalibrationProbe {
   public:
    ScopedCalibrationProbe(Executor& executor, CalibrationProbe probe) : executor_(executor) {
      executor_.calibration_probe_ = std::move(probe);
    }
    ~ScopedCalibrationProbe() { executor_.calibration_probe_ = nullptr; }
    ScopedCalibrationProbe(const ScopedCalibrationProbe&) = delete;
    ScopedCalibrationProbe& operator=(const ScopedCalibrationProbe&) = delete;

   private:
    Executor& executor_;
  };

  // Graph outputs of a record, in graph output order.
  std::vector<Tensor> outputs(const RunRecord& record) const;
  // The same for the faces that hand outputs on as arrays (run, .npy files): an output that is a
  // sequence or an optional is an error naming it.
  std::vector<Tensor> tensor_outputs(const RunRecord& record) const;

  // Checks one input tensor against the graph input `index` (dtype and static dims).
  void check_input(size_t index, const Tensor& t) const;

 private:
  RunRecord cached_keep_all_run_nearest_once(const std::vector<Tensor>& inputs, const QuantConfig& config,
                                             RunStats* stats);
  // Scratch of one node loop: the node's input pointers (its slots, then its implicit inputs: what its
  // subgraphs read from this scope) and outputs, reused from node to node.
  struct NodeIo {
    std::vector<const Tensor*> inputs;
    std::vector<const Tensor*> implicit;
    std::vector<Tensor> outputs;
  };
  // The executable form of one graph: the model's main graph (root_) or a subgraph an If, Loop or Scan
  // node runs (built once at load, recursively, so a body's errors are load errors).
  struct GraphPlan {
    const ir::Graph* graph = nullptr;   // nullptr for the main graph (model_.graph)
    std::vector<KernelFn> kernels;      // per node (nullptr for Constant: precomputed)
    std::vector<uint8_t> takes_values;  // per node: its op takes sequences and optionals
    std::vector<std::vector<bool>> constant_inputs;
    mutable std::vector<std::any> prepared;  // per node kernel caches (packed weights)
    std::vector<int> node_calibration;       // node id -> calibration index or -1
    std::vector<int> last_use;               // value id -> last node reading it (for release)
    std::vector<size_t> outer_slots;         // per graph->outer_refs: slot in the owner's implicit inputs
    std::vector<std::vector<std::unique_ptr<GraphPlan>>> subplans;  // per node, in Node::subgraphs() order
  };
  class BodyRunner;
  const ir::Graph& graph_of(const GraphPlan& plan) const { return plan.graph ? *plan.graph : model_.graph; }
  // Fills `plan` for graph `g`; `owner` is the node whose attribute `g` is (in `owner_graph`), or null.
  void build_plan(GraphPlan& plan, const ir::Graph& g, const ir::Graph* owner_graph, const ir::Node* owner,
                  std::vector<UnsupportedNode>& unsupported,
                  std::vector<std::pair<const OpDef*, const ir::Node*>>& checks);
  // Runs subgraph `plan` once: its inputs bound to `inputs`, its outer_refs to `outer` (the owner node's
  // implicit inputs); returns its outputs.
  std::vector<Tensor> run_body(const GraphPlan& plan, const std::vector<Tensor>& inputs,
                               const std::vector<const Tensor*>& outer, const QuantConfig& config);
  // The step every node loop makes: gathers node `node_id`'s inputs through `input_of(value id)`
  // (absent inputs are nullptr), runs the node under `config`, then hands each output that has a
  // value id to `store(value id, Tensor&&)`.
  template <class InputOf, class Store>
  void run_node(const GraphPlan& plan, size_t node_id, const QuantConfig& config, NodeIo& io, InputOf&& input_of,
                Store&& store);
  void execute_node(const GraphPlan& plan, int node_id, NodeIo& io, const QuantConfig& config);
  void execute_node_untimed(const GraphPlan& plan, int node_id, NodeIo& io, const QuantConfig& config);
  Tensor run_calibration(int cali_index, const Tensor& input, const QuantConfig& config);
  int calibration_at(const ir::Graph& g, int node_id) const;  // the index of a calibration node of `g`
  // The qtype `config` gives calibration node `cali_index` when it differs from the stored one.
  std::optional<quant::QType> qtype_override(int cali_index, const QuantConfig& config) const;
  // Rebuilds base tensor `value` (evicted from `base`) into `cache` for node `reader` (the node count
  // when the run returns it), re-running its producers back to tensors that `base` or `cache` still
  // hold. Of the tensors rebuilt on the way, `cache` keeps those node `reader` or a later node reads
  // and those `returned` marks; the others are released once rebuilt producers no longer read them.
  void recompute_base(const RunRecord& base, int value, int reader, const std::vector<uint8_t>& returned,
                      std::vector<Tensor>& cache, RunStats* stats);
  RunRecord incremental(const RunRecord& base, const QuantConfig& config, const std::vector<int>& keep,
                        bool with_outputs, RunStats* stats);
  void check_config(const QuantConfig& config) const;
  // Per main-graph node: 1 where a calibration node whose state differs between `from` and `to` is,
  // or the control-flow node holding it.
  std::vector<uint8_t> switched_nodes(const QuantConfig& from, const QuantConfig& to) const;

  ir::Model model_;
  GraphPlan root_;
  std::vector<UnsupportedNode> unsupported_;  // nodes without a kernel (allow_unsupported)
  std::vector<quant::CalibrationSpec> calibrations_;
  std::vector<quant::QType> stored_qtypes_;
  std::set<std::string> node_names_;  // every node at any depth, subgraphs' by qualified name
  // Fake-quantized weights, computed once per (calibration node, qtype name, round mode).
  std::map<std::string, Tensor> weight_cache_;
  size_t keep_all_budget_ = 0;
  NodeTimer node_timer_;
  CalibrationProbe calibration_probe_;
  RunCache run_cache_{kDefaultRunCacheBudget};
};

}  // namespace ptq::exec
