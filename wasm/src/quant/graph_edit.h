#pragma once
// Helpers for the passes that rewrite a model (calibrate, hz_to_qdq): fresh names, new values and
// initializers, attributes and opset imports. Nodes are collected per insertion point and the graph
// is re-finalised once at the end (finalize_graph keeps the given order when it is topological).
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace ptq::quant::edit {

// Names not yet used by any value or node of a graph (ONNX shares one namespace per kind; keeping
// new names distinct from both avoids confusing tools that key edges and nodes alike).
class NameSet {
 public:
  explicit NameSet(const ir::Graph& g) {
    for (const auto& v : g.values) used_.insert(v.name);
    for (const auto& n : g.nodes) used_.insert(n.name);
  }
  // `base` if unused, else base_1, base_2, ...
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  // Marks `name` as used (a name taken on purpose, e.g. one a node already has but no value does).
  void use(const std::string& name) { used_.insert(name); }

 private:
  std::unordered_set<std::string> used_;
};

inline int add_value(ir::Graph& g, const std::string& name, const ir::ValueInfo* info = nullptr) {
  const int id = static_cast<int>(g.values.size());
  g.values.emplace_back();
  ir::Value& v = g.values.back();
  v.name = name;
  if (info) {
    v.info = *info;
    v.info.name = name;
  }
  g.value_index[name] = id;
  return id;
}

inline int add_initializer(ir::Graph& g, const std::string& name, Tensor t) {
  const int id = add_value(g, name);
  g.values[static_cast<size_t>(id)].initializer = std::move(t);
  return id;
}

inline ir::Attribute attr_int(const std::string& name, int64_t v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::Int;
  a.i = v;
  return a;
}
inline ir::Attribute attr_ints(const std::string& name, std::vector<int64_t> v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::Ints;
  a.ints = std::move(v);
  return a;
}
inline ir::Attribute attr_string(const std::string& name, const std::string& v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::String;
  a.s = v;
  return a;
}
inline ir::Attribute attr_floats(const std::string& name, std::vector<float> v) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::Floats;
  a.floats = std::move(v);
  return a;
}

inline ir::Node make_node(std::string name, std::string op_type, std::string domain, std::vector<int> inputs,
                          std::vector<int> outputs, std::vector<ir::Attribute> attributes = {}, int opset = 0) {
  ir::Node n;
  n.name = std::move(name);
  n.op_type = std::move(op_type);
  n.domain = std::move(domain);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attributes);
  n.opset = opset;
  return n;
}

// Sets (or adds) the opset version of `domain`.
inline void set_opset(ir::Model& m, const std::string& domain, int64_t version) {
  for (auto& o : m.opset_imports)
    if (o.domain == domain) {
      o.version = version;
      return;
    }
  m.opset_imports.push_back({domain, version});
}

inline void remove_opset(ir::Model& m, const std::string& domain) {
  std::vector<ir::OpsetImport> kept;
  for (const auto& o : m.opset_imports)
    if (o.domain != domain) kept.push_back(o);
  m.opset_imports = std::move(kept);
}

// The constant behind value `v`: an initializer, a Constant's output, or an Identity chain of one
// (torch's exporter shares equal zero-point buffers through Identity nodes), or nullptr.
inline const Tensor* constant_through_identity(const ir::Graph& g, int v) {
  for (int depth = 0; v >= 0 && depth < 16; ++depth) {
    if (const Tensor* t = g.constant(v)) return t;
    const int p = g.value(v).producer;
    if (p < 0 || g.node(p).op_type != "Identity" || g.node(p).inputs.empty()) return nullptr;
    v = g.node(p).inputs[0];
  }
  return nullptr;
}

// Rebuilds the node list with `before[i]` inserted ahead of original node i, then re-finalises.
inline void insert_nodes(ir::Graph& g, std::vector<std::vector<ir::Node>> before) {
  std::vector<ir::Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (i < before.size())
      for (auto& n : before[i]) nodes.push_back(std::move(n));
    nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  ir::finalize_graph(g);
}

}  // namespace ptq::quant::edit
