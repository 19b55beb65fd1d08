#include "quant/relations.h"

#include <algorithm>

#include "core/error.h"
#include "quant/calibration.h"

namespace ptq::quant {
namespace {

bool is_calibration(const ir::Node& n) { return is_calibration_node(n); }

bool is_filter(const ir::Node& n) { return n.op_type == "HzFilter"; }

}  // namespace

const std::vector<RelationRulesInfo>& relation_rules() {
  static const std::vector<std::string> kOlder = {"MaxPool", "GlobalMaxPool", "Relu",  "Reshape", "Transpose",
                                                  "ReduceMax", "Split",       "Slice", "Gather",  "ScatterND"};
  static const std::vector<RelationRulesInfo> rules = [] {
    std::vector<std::string> newer = kOlder;
    newer.insert(newer.begin() + 3, "Clip");  // hmct's list: Clip after Relu
    return std::vector<RelationRulesInfo>{
        {RelationRules::HorizonNn, "horizon_nn",
         "horizon_nn's relation finder (the original debugger's documented behaviour): does not look through Clip", kOlder},
        {RelationRules::Hmct, "hmct",
         "hmct's relation finder (newer toolchains): also looks through Clip, so a node after HzCalibration -> Clip "
         "(ReLU6) has that calibration node",
         newer},
    };
  }();
  return rules;
}

const RelationRulesInfo& relation_rules_info(RelationRules rules) {
  for (const RelationRulesInfo& r : relation_rules())
    if (r.rules == rules) return r;
  fail("unknown relation rules");
}

RelationRules parse_relation_rules(const std::string& name) {
  std::string names;
  for (const RelationRulesInfo& r : relation_rules()) {
    if (r.name == name) return r.rules;
    names += (names.empty() ? "'" : ", '") + r.name + "'";
  }
  fail("unknown relation rules '" + name + "' (expected " + names + ")");
}

bool CalibrationRelations::is_skippable(const std::string& op_type, RelationRules rules) {
  const std::vector<std::string>& ops = relation_rules_info(rules).skippable;
  return std::find(ops.begin(), ops.end(), op_type) != ops.end();
}

// Index-less search through a skippable producer: the first calibration node among its distinct
// producers in input order, else recurse into the first skippable producer (whatever it returns).
int CalibrationRelations::search_skippable(const ir::Graph& graph, int node_id, RelationRules rules) {
  const ir::Node& node = graph.node(node_id);
  std::vector<int> producers;
  const size_t count = node.op_type == "ScatterND" ? std::min<size_t>(1, node.inputs.size()) : node.inputs.size();
  for (size_t i = 0; i < count; ++i) {
    const int v = node.inputs[i];
    if (v < 0) continue;
    const int p = graph.value(v).producer;
    if (p >= 0 && std::find(producers.begin(), producers.end(), p) == producers.end()) producers.push_back(p);
  }
  for (int p : producers)
    if (is_calibration(graph.node(p))) return p;
  for (int p : producers)
    if (is_skippable(graph.node(p).op_type, rules)) return search_skippable(graph, p, rules);
  return -1;
}

int CalibrationRelations::input_calibration(const ir::Graph& graph, int node_id, size_t index, RelationRules rules) {
  const ir::Node& node = graph.node(node_id);
  bool has_producer = false;
  for (int v : node.inputs) has_producer = has_producer || (v >= 0 && graph.value(v).producer >= 0);
  if (!has_producer || index >= node.inputs.size() || node.inputs[index] < 0) return -1;
  const int p = graph.value(node.inputs[index]).producer;
  if (p < 0) return -1;
  if (is_calibration(graph.node(p))) return p;
  if (is_skippable(graph.node(p).op_type, rules)) return search_skippable(graph, p, rules);
  return -1;
}

CalibrationRelations::CalibrationRelations(const ir::Graph& graph, RelationRules rules) : rules_(rules) {
  for_each_scope(graph, [&](const ir::Graph& g, const std::string& prefix, int owner) { relate(g, prefix, owner < 0); });
  for (int v : graph.outputs) {
    const int p = graph.value(v).producer;
    if (p >= 0 && is_filter(graph.node(p))) {
      for (int in : graph.node(p).inputs)
        if (in >= 0) model_outputs_.push_back(graph.value(in).name);
    } else {
      model_outputs_.push_back(graph.value(v).name);
    }
  }
}

// A subgraph reads calibrated tensors of its enclosing graphs by name (outer_refs), but §1.9 relates a
// node to the calibration nodes feeding it within its own graph, as the original does in the main graph.
void CalibrationRelations::relate(const ir::Graph& graph, const std::string& prefix, bool main) {
  std::set<std::string> calibration_names;
  for (const auto& n : graph.nodes)
    if (is_calibration(n)) calibration_names.insert(prefix + n.name);

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (is_calibration(node)) continue;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int c = input_calibration(graph, static_cast<int>(i), k, rules_);
      if (c < 0) continue;
      node_to_cali_[prefix + node.name].insert(prefix + graph.node(c).name);
      cali_to_node_[prefix + graph.node(c).name].insert(prefix + node.name);
    }
  }
  // Normal nodes: the original tests for the substring "_HzCalibration" in the calibration names;
  // we test for real calibration nodes, which agrees on toolchain output and also works for models
  // whose calibration nodes are named otherwise (docs/compatibility.md).
  for (const auto& node : graph.nodes) {
    if (is_calibration(node) || is_filter(node)) continue;
    const auto set = calibration_by_node(prefix + node.name);
    const bool calibrated = std::any_of(set.begin(), set.end(), [&](const std::string& s) { return calibration_names.count(s) > 0; });
    if (!calibrated) continue;
    node_items_.push_back(prefix + node.name);
    if (!main) continue;
    std::vector<std::string> outs;
    for (int v : node.outputs)
      if (v >= 0) outs.push_back(graph.value(v).name);
    normal_nodes_.emplace_back(node.name, outs);
  }
  for (const auto& node : graph.nodes) {
    if (!is_calibration(node) || node.outputs.empty() || node.outputs[0] < 0) continue;
    std::string joined;
    bool feeds_compute = false;
    // A consumer once per input slot reading this output (the original appends a node's name for each
    // of its inputs): Mul(x, x) gives "Mul_1;Mul_1".
    for (int c : graph.value(node.outputs[0]).consumers) {
      const ir::Node& consumer = graph.node(c);
      if (is_calibration(consumer)) continue;
      joined += (joined.empty() ? "" : ";") + prefix + consumer.name;
      const std::string& t = consumer.op_type;
      feeds_compute = feeds_compute || t == "Conv" || t == "MatMul" || t == "Gemm" || t == "ConvTranspose";
    }
    if (!joined.empty()) cali_normal_map_[prefix + node.name] = joined;
    const bool feature = node.inputs.empty() || node.inputs[0] < 0 || !graph.constant(node.inputs[0]);
    if (feature && feeds_compute) tae_nodes_.push_back(prefix + node.name);
  }
}

std::set<std::string> CalibrationRelations::calibration_by_node(const std::string& name) const {
  auto it = node_to_cali_.find(name);
  if (it != node_to_cali_.end()) return it->second;
  return {name};
}

std::vector<std::string> CalibrationRelations::node_outputs(const std::string& name) const {
  for (const auto& [n, outs] : normal_nodes_)
    if (n == name) return outs;
  return {};
}

}  // namespace ptq::quant
