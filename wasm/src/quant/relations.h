#pragma once
// Node <-> calibration-node relations of the original debugger (§1.9) and the compared
// outputs of §1.10. Everything the analyses select ("which calibration nodes does item X switch?")
// is answered here, once per model.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ptq::quant {

// Which toolchain's relation finder the relations follow (§1.9): the two differ only in the op types
// looked through. horizon_nn (the older package, the default) does not look through Clip; hmct (the
// newer one) does, so on ReLU6 networks a node after `HzCalibration -> Clip` has that calibration node.
enum class RelationRules { HorizonNn, Hmct };

struct RelationRulesInfo {
  RelationRules rules;
  std::string name;                    // what describe(), Session.setRelations and the CLI's --relations take
  std::string doc;                     // one line for help texts and forms
  std::vector<std::string> skippable;  // the op types looked through
};

// The rules, the default first.
const std::vector<RelationRulesInfo>& relation_rules();
const RelationRulesInfo& relation_rules_info(RelationRules rules);
// A name of relation_rules() -> its rules; throws ptq::Error naming the valid names otherwise.
RelationRules parse_relation_rules(const std::string& name);

class CalibrationRelations {
 public:
  // `graph` is a model's main graph; nodes inside its subgraphs (If branches, Loop and Scan bodies, any
  // depth) are related within their own graph and go by their qualified names (§1.13).
  explicit CalibrationRelations(const ir::Graph& graph, RelationRules rules = RelationRules::HorizonNn);

  RelationRules rules() const { return rules_; }

  // Op types looked through when searching a node's input calibration node.
  static bool is_skippable(const std::string& op_type, RelationRules rules = RelationRules::HorizonNn);

  // The calibration node feeding input `index` of node `node_id` of `graph` (§1.9 steps 1–4), or -1.
  static int input_calibration(const ir::Graph& graph, int node_id, size_t index,
                               RelationRules rules = RelationRules::HorizonNn);
  // node name -> names of its input calibration nodes (only for nodes that have some).
  const std::map<std::string, std::set<std::string>>& node_to_calibration() const { return node_to_cali_; }
  const std::map<std::string, std::set<std::string>>& calibration_to_node() const { return cali_to_node_; }
  // node_to_calibration[name] if present, else {name} itself (selects a calibration node by its name).
  std::set<std::string> calibration_by_node(const std::string& name) const;
  // Normal nodes of the main graph with calibrated inputs, graph order, with their output tensor names
  // (node_output_dict): the nodes whose tensors the analyses compare.
  const std::vector<std::pair<std::string, std::vector<std::string>>>& normal_nodes() const { return normal_nodes_; }
  // The node items of a sweep (§3.1): normal_nodes(), then the normal nodes with calibrated inputs
  // inside subgraphs (qualified names, for_each_scope order), whose tensors live in their subgraph.
  const std::vector<std::string>& node_items() const { return node_items_; }
  // Calibration node -> direct non-calibration consumers joined with ';' in graph order, a consumer once
  // per input slot that reads the calibration node's output (Mul(x, x) -> "Mul_1;Mul_1"), as the original.
  const std::map<std::string, std::string>& cali_normal_map() const { return cali_normal_map_; }
  // Feature calibration nodes with a direct Conv/MatMul/Gemm/ConvTranspose consumer, graph order
  // (subgraphs' after the main graph's).
  const std::vector<std::string>& tae_nodes() const { return tae_nodes_; }
  // Default compared tensors: graph outputs, with HzFilter outputs replaced by the filter's inputs.
  const std::vector<std::string>& model_outputs() const { return model_outputs_; }
  // Output tensors of a normal node (for output_node); empty when `name` is not a normal node.
  std::vector<std::string> node_outputs(const std::string& name) const;

 private:
  static int search_skippable(const ir::Graph& graph, int node_id, RelationRules rules);
  // Relates the nodes of one graph, named with `prefix` in front.
  void relate(const ir::Graph& graph, const std::string& prefix, bool main);

  std::map<std::string, std::set<std::string>> node_to_cali_, cali_to_node_;
  std::vector<std::pair<std::string, std::vector<std::string>>> normal_nodes_;
  std::map<std::string, std::string> cali_normal_map_;
  std::vector<std::string> node_items_;
  std::vector<std::string> tae_nodes_;
  std::vector<std::string> model_outputs_;
  RelationRules rules_;
};

}  // namespace ptq::quant
