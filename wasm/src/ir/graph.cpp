#include "ir/graph.h"

#include <algorithm>
#include <queue>

#include "core/error.h"

namespace ptq::ir {

const Attribute* Node::attr(std::string_view n) const {
  for (const auto& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

std::vector<const Graph*> Node::subgraphs() const {
  std::vector<const Graph*> out;
  for (const auto& a : attributes) {
    if (a.g) out.push_back(a.g.get());
    for (const auto& g : a.graphs)
      if (g) out.push_back(g.get());
  }
  return out;
}

int64_t Node::attr_int(std::string_view n, int64_t fallback) const {
  const Attribute* a = attr(n);
  if (!a) return fallback;
  check(a->type == AttrType::Int, "node '" + name + "': attribute '" + std::string(n) + "' is not an int");
  return a->i;
}

float Node::attr_float(std::string_view n, float fallback) const {
  const Attribute* a = attr(n);
  if (!a) return fallback;
  if (a->type == AttrType::Int) return static_cast<float>(a->i);
  check(a->type == AttrType::Float, "node '" + name + "': attribute '" + std::string(n) + "' is not a float");
  return a->f;
}

std::string Node::attr_string(std::string_view n, const std::string& fallback) const {
  const Attribute* a = attr(n);
  if (!a) return fallback;
  check(a->type == AttrType::String, "node '" + name + "': attribute '" + std::string(n) + "' is not a string");
  return a->s;
}

std::vector<int64_t> Node::attr_ints(std::string_view n, const std::vector<int64_t>& fallback) const {
  const Attribute* a = attr(n);
  if (!a) return fallback;
  check(a->type == AttrType::Ints || a->type == AttrType::Int,
        "node '" + name + "': attribute '" + std::string(n) + "' is not a list of ints");
  if (a->type == AttrType::Int) return {a->i};
  return a->ints;
}

std::vector<float> Node::attr_floats(std::string_view n, const std::vector<float>& fallback) const {
  const Attribute* a = attr(n);
  if (!a) return fallback;
  check(a->type == AttrType::Floats || a->type == AttrType::Float,
        "node '" + name + "': attribute '" + std::string(n) + "' is not a list of floats");
  if (a->type == AttrType::Float) return {a->f};
  return a->floats;
}

std::vector<std::string> Node::attr_strings(std::string_view n) const {
  const Attribute* a = attr(n);
  if (!a) return {};
  if (a->type == AttrType::String) return {a->s};
  return a->strings;
}

int Graph::find_value(std::string_view n) const {
  auto it = value_index.find(std::string(n));
  return it == value_index.end() ? -1 : it->second;
}

int Graph::find_node(std::string_view n) const {
  auto it = node_index.find(std::string(n));
  return it == node_index.end() ? -1 : it->second;
}

const ptq::Tensor* Graph::constant(int value_id) const {
  if (value_id < 0) return nullptr;
  const auto& v = values[static_cast<size_t>(value_id)];
  return v.initializer ? &*v.initializer : nullptr;
}

int64_t Model::opset(std::string_view domain) const {
  for (const auto& o : opset_imports) {
    if (o.domain == domain || (domain.empty() && o.domain == "ai.onnx")) return o.version;
  }
  return 0;
}

void finalize_graph(Graph& graph, bool subgraph) {
  const size_t n = graph.nodes.size();
  // What each node's subgraphs read from this scope (or, in a subgraph, from further out).
  for (auto& node : graph.nodes) {
    node.implicit_inputs.clear();
    for (const Graph* sub : node.subgraphs()) {
      for (int ref : sub->outer_refs) {
        const std::string& name = sub->value(ref).name;
        auto it = graph.value_index.find(name);
        int id;
        if (it != graph.value_index.end()) {
          id = it->second;
        } else {
          id = static_cast<int>(graph.values.size());
          graph.values.emplace_back();
          graph.values.back().name = name;
          graph.value_index.emplace(name, id);
        }
        if (std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), id) == node.implicit_inputs.end())
          node.implicit_inputs.push_back(id);
      }
    }
  }
  // Which node produces each value (before sorting).
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (int out : graph.nodes[i].outputs) {
      if (out < 0) continue;
      auto& p = producer[static_cast<size_t>(out)];
      check(p < 0, "tensor '" + graph.values[static_cast<size_t>(out)].name + "' is produced by two nodes ('" +
                       (p >= 0 ? graph.nodes[static_cast<size_t>(p)].name : "") + "' and '" + graph.nodes[i].name + "')");
      p = static_cast<int>(i);
    }
  }
  // A graph output must name a tensor something provides (a subgraph may pass an outer one through).
  if (!subgraph)
    for (int out : graph.outputs) {
      const auto& v = graph.values[static_cast<size_t>(out)];
      check(producer[static_cast<size_t>(out)] >= 0 || v.is_graph_input || v.initializer.has_value(),
            "graph output '" + v.name + "' names a tensor that no node, graph input or initializer provides");
    }
  // Kahn's algorithm with a min-heap on the original index: stable topological order.
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> successors(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    for (const auto* list : {&node.inputs, &node.implicit_inputs}) {
      for (int in : *list) {
        if (in < 0) continue;
        const auto& v = graph.values[static_cast<size_t>(in)];
        const int p = producer[static_cast<size_t>(in)];
        if (p < 0) {
          check(subgraph || v.is_graph_input || v.initializer.has_value(),
                "node '" + node.name + "' (" + node.op_type + ") reads tensor '" + v.name + "'" +
                    (list == &node.inputs ? "" : " in a subgraph") +
                    ", which no node, graph input or initializer provides");
          continue;
        }
        successors[static_cast<size_t>(p)].push_back(static_cast<int>(i));
        ++indegree[i];
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : successors[static_cast<size_t>(i)])
      if (--indegree[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] > 0) fail("the graph has a cycle through node '" + graph.nodes[i].name + "'");
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(graph.nodes[static_cast<size_t>(i)]));
  graph.nodes = std::move(sorted);

  graph.node_index.clear();
  for (auto& v : graph.values) {
    v.producer = -1;
    v.consumers.clear();
  }
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    check(graph.node_index.emplace(node.name, static_cast<int>(i)).second,
          "two nodes are named '" + node.name + "'");
    for (int in : node.inputs)
      if (in >= 0) graph.values[static_cast<size_t>(in)].consumers.push_back(static_cast<int>(i));
    for (int out : node.outputs)
      if (out >= 0) graph.values[static_cast<size_t>(out)].producer = static_cast<int>(i);
  }
  graph.value_index.clear();
  for (size_t i = 0; i < graph.values.size(); ++i) graph.value_index[graph.values[i].name] = static_cast<int>(i);
  graph.outer_refs.clear();
  if (subgraph) {
    std::vector<uint8_t> read(graph.values.size(), 0);
    for (const Node& node : graph.nodes)
      for (const auto* list : {&node.inputs, &node.implicit_inputs})
        for (int in : *list)
          if (in >= 0) read[static_cast<size_t>(in)] = 1;
    for (int out : graph.outputs) read[static_cast<size_t>(out)] = 1;
    for (size_t i = 0; i < graph.values.size(); ++i) {
      const Value& v = graph.values[i];
      if (read[i] && v.producer < 0 && !v.is_graph_input && !v.initializer) graph.outer_refs.push_back(static_cast<int>(i));
    }
  }
}

}  // namespace ptq::ir
