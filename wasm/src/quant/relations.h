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

class CalibrationRelations {
 public:
  explicit CalibrationRelations(const ir::Graph& graph);

  // Op types looked through when searching a node's input calibration node.
  static bool is_skippable(const std::string& op_type);

  // The calibration node feeding input `index` of `node_id` (§1.9 steps 1–4), or -1.
  int input_calibration(int node_id, size_t index) const;
  // node name -> names of its input calibration nodes (only for nodes that have some).
  const std::map<std::string, std::set<std::string>>& node_to_calibration() const { return node_to_cali_; }
  const std::map<std::string, std::set<std::string>>& calibration_to_node() const { return cali_to_node_; }
  // node_to_calibration[name] if present, else {name} itself (selects a calibration node by its name).
  std::set<std::string> calibration_by_node(const std::string& name) const;
  // Normal nodes with calibrated inputs, graph order, with their output tensor names (node_output_dict).
  const std::vector<std::pair<std::string, std::vector<std::string>>>& normal_nodes() const { return normal_nodes_; }
  // Calibration node -> direct non-calibration consumers joined with ';' in graph order.
  const std::map<std::string, std::string>& cali_normal_map() const { return cali_normal_map_; }
  // Feature calibration nodes with a direct Conv/MatMul/Gemm/ConvTranspose consumer, graph order.
  const std::vector<std::string>& tae_nodes() const { return tae_nodes_; }
  // Default compared tensors: graph outputs, with HzFilter outputs replaced by the filter's inputs.
  const std::vector<std::string>& model_outputs() const { return model_outputs_; }
  // Output tensors of a normal node (for output_node); empty when `name` is not a normal node.
  std::vector<std::string> node_outputs(const std::string& name) const;

 private:
  int search_skippable(int node_id) const;

  const ir::Graph& graph_;
  std::map<std::string, std::set<std::string>> node_to_cali_, cali_to_node_;
  std::vector<std::pair<std::string, std::vector<std::string>>> normal_nodes_;
  std::map<std::string, std::string> cali_normal_map_;
  std::vector<std::string> tae_nodes_;
  std::vector<std::string> model_outputs_;
};

}  // namespace ptq::quant
