#pragma once
// Builds small ir::Models in code for the calibration and QDQ tests.
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ptq::test {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.ir_version = 8;
    model_.producer_name = "ptqscope-test";
    model_.opset_imports = {{"", opset}};
    opset_ = static_cast<int>(opset);
  }

  ModelBuilder& opset(const std::string& domain, int64_t version) {
    model_.opset_imports.push_back({domain, version});
    return *this;
  }
  ModelBuilder& input(const std::string& name, DType dtype, std::vector<int64_t> dims) {
    ir::Value& v = value(name);
    v.is_graph_input = true;
    v.info.dtype = dtype;
    v.info.has_shape = true;
    v.info.dims = dims;
    v.info.dim_params.assign(dims.size(), "");
    model_.graph.inputs.push_back(id(name));
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, Tensor t) {
    value(name).initializer = std::move(t);
    return *this;
  }
  ModelBuilder& node(const std::string& op, const std::string& name, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, std::vector<ir::Attribute> attrs = {},
                     const std::string& domain = "") {
    ir::Node n;
    n.name = name;
    n.op_type = op;
    n.domain = domain;
    n.opset = domain.empty() ? opset_ : 1;
    for (const auto& in : inputs) n.inputs.push_back(in.empty() ? ir::kNoValue : (value(in), id(in)));
    for (const auto& out : outputs) n.outputs.push_back((value(out), id(out)));
    n.attributes = std::move(attrs);
    model_.graph.nodes.push_back(std::move(n));
    return *this;
  }
  ModelBuilder& output(const std::string& name) {
    value(name).is_graph_output = true;
    model_.graph.outputs.push_back(id(name));
    return *this;
  }
  ir::Model build() {
    ir::finalize_graph(model_.graph);
    return model_;
  }

 private:
  ir::Value& value(const std::string& name) {
    auto& g = model_.graph;
    auto it = g.value_index.find(name);
    if (it == g.value_index.end()) {
      it = g.value_index.emplace(name, static_cast<int>(g.values.size())).first;
      g.values.emplace_back();
      g.values.back().name = name;
    }
    return g.values[static_cast<size_t>(it->second)];
  }
  int id(const std::string& name) const { return model_.graph.value_index.at(name); }

  ir::Model model_;
  int opset_ = 13;
};

}  // namespace ptq::test
