#pragma once
// Builds small ir::Graphs in tests: nodes refer to tensors by name; unknown names become values.
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ptq::test {

class GraphBuilder {
 public:
  int value(const std::string& name) {
    auto it = graph_.value_index.find(name);
    if (it != graph_.value_index.end()) return it->second;
    const int id = static_cast<int>(graph_.values.size());
    graph_.values.emplace_back();
    graph_.values.back().name = name;
    graph_.value_index[name] = id;
    return id;
  }
  GraphBuilder& input(const std::string& name, DType dtype, std::vector<int64_t> dims) {
    const int id = value(name);
    auto& v = graph_.values[static_cast<size_t>(id)];
    v.is_graph_input = true;
    v.info.name = name;
    v.info.dtype = dtype;
    v.info.dims = std::move(dims);
    v.info.has_shape = true;
    graph_.inputs.push_back(id);
    return *this;
  }
  GraphBuilder& initializer(const std::string& name, Tensor t) {
    graph_.values[static_cast<size_t>(value(name))].initializer = std::move(t);
    return *this;
  }
  GraphBuilder& node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, std::vector<ir::Attribute> attrs = {},
                     const std::string& domain = "") {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    n.domain = domain;
    n.opset = domain.empty() ? 17 : 1;
    for (const auto& i : inputs) n.inputs.push_back(i.empty() ? ir::kNoValue : value(i));
    for (const auto& o : outputs) n.outputs.push_back(value(o));
    n.attributes = std::move(attrs);
    graph_.nodes.push_back(std::move(n));
    return *this;
  }
  // A feature/weight HzCalibration node named "<in>_HzCalibration" writing "<in>_cal".
  GraphBuilder& calibration(const std::string& in, std::vector<ir::Attribute> attrs) {
    return node(in + "_HzCalibration", "HzCalibration", {in}, {in + "_cal"}, std::move(attrs), "horizon");
  }
  GraphBuilder& output(const std::string& name) {
    const int id = value(name);
    graph_.values[static_cast<size_t>(id)].is_graph_output = true;
    graph_.outputs.push_back(id);
    return *this;
  }
  ir::Graph graph() {
    ir::Graph g = graph_;
    ir::finalize_graph(g);
    return g;
  }
  // The graph as a subgraph attribute (If branch, Loop/Scan body): names nothing inside provides are
  // read from the enclosing graphs.
  std::shared_ptr<ir::Graph> subgraph(const std::string& name = "body") {
    auto g = std::make_shared<ir::Graph>(graph_);
    g->name = name;
    ir::finalize_graph(*g, true);
    return g;
  }
  ir::Model model() {
    ir::Model m;
    m.opset_imports = {{"", 17}, {"horizon", 1}};
    m.graph = graph();
    return m;
  }

 private:
  ir::Graph graph_;
};

}  // namespace ptq::test
