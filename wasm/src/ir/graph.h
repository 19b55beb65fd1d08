#pragma once
// The graph IR: immutable after load. Values (tensors) and nodes are indexed by int ids; nodes are
// stored in topological order. Initializer tensors stay views into the model bytes where possible.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace ptq::ir {

struct Graph;

enum class AttrType : int32_t {
  Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5,
  Floats = 6, Ints = 7, Strings = 8, Tensors = 9, Graphs = 10,
  SparseTensor = 11, SparseTensors = 12, TypeProto = 13, TypeProtos = 14,
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::Undefined;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  ptq::Tensor t;
  std::vector<ptq::Tensor> tensors;
  std::shared_ptr<Graph> g;                 // parsed subgraph (GRAPH)
  std::vector<std::shared_ptr<Graph>> graphs;
  std::string ref_attr_name;                // for function bodies; unused otherwise
};

constexpr int kNoValue = -1;  // an absent optional input ("" in ONNX)

struct Node {
  std::string name;     // unique: the reader names unnamed nodes "<op_type>_<index>"
  std::string op_type;
  std::string domain;   // "" for ai.onnx; "horizon" for Hz ops
  std::vector<int> inputs;   // value ids; kNoValue for ""
  std::vector<int> outputs;  // value ids; kNoValue for ""
  // Tensors of this node's graph that its subgraph attributes (If branches, Loop/Scan bodies, at any
  // depth) read by name from the enclosing scope: dependencies like inputs, without a slot. Set by
  // finalize_graph; a value appears once.
  std::vector<int> implicit_inputs;
  std::vector<Attribute> attributes;
  int opset = 0;        // opset version of this node's domain, from the model's opset_import

  const Attribute* attr(std::string_view name) const;
  // The subgraphs of its attributes (GRAPH and GRAPHS), in attribute order.
  std::vector<const Graph*> subgraphs() const;
  bool has_attr(std::string_view name) const { return attr(name) != nullptr; }
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(std::string_view name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(std::string_view name, const std::vector<float>& fallback = {}) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
};

struct ValueInfo {
  std::string name;
  // What the TypeProto declares: a tensor (dtype and shape below), a sequence or an optional (dtype
  // Undefined, no shape; `elem` is the element's type). Map and sparse types read as an undeclared tensor.
  ValueKind kind = ValueKind::Dense;
  std::shared_ptr<const ValueInfo> elem;
  DType dtype = DType::Undefined;     // from value_info / graph input/output, if declared
  std::vector<int64_t> dims;          // -1 for a symbolic or unknown dim
  std::vector<std::string> dim_params;// symbolic names ("" where numeric)
  bool has_shape = false;
};

struct Value {
  std::string name;
  ValueInfo info;
  int producer = -1;                 // node id, -1 for graph inputs / initializers
  std::vector<int> consumers;        // node ids in graph order (a node appears once per input slot)
  std::optional<ptq::Tensor> initializer;  // constant data (initializers and Constant outputs)
  bool is_graph_input = false;
  bool is_graph_output = false;
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;     // topological order
  std::vector<Value> values;
  std::vector<int> inputs;     // graph inputs that are not initializers, in declared order
  std::vector<int> outputs;    // graph outputs, in declared order
  // A subgraph's tensors that nothing inside provides (no node, input or initializer) but that a node
  // reads or the graph outputs: names of an enclosing graph (lexical scoping), bound when the subgraph
  // runs. Set by finalize_graph(graph, true); empty for a model's main graph.
  std::vector<int> outer_refs;
  std::unordered_map<std::string, int> value_index;
  std::unordered_map<std::string, int> node_index;

  int find_value(std::string_view name) const;  // -1 when absent
  int find_node(std::string_view name) const;   // -1 when absent
  const Value& value(int id) const { return values[static_cast<size_t>(id)]; }
  const Node& node(int id) const { return nodes[static_cast<size_t>(id)]; }
  // The constant tensor of a value (initializer or Constant output), or nullptr.
  const ptq::Tensor* constant(int value_id) const;
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::vector<OpsetImport> opset_imports;
  std::map<std::string, std::string> metadata;
  Graph graph;
  // What the reader accepted but the user should know (a version newer than it knows, a negative
  // input dimension read as unknown): shown by the CLI on stderr and by the page in its banner.
  std::vector<std::string> warnings;
  // Keeps converted (non-view) initializer bytes and external-data buffers alive.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> owned_buffers;

  int64_t opset(std::string_view domain) const;  // 0 when not imported
};

// Sorts nodes topologically (stable: keeps file order where possible), fills producers/consumers and
// the name indices. Throws naming the node when the graph has a cycle or an undefined input.
// A subgraph (If/Loop body) may read tensors of its enclosing graphs: `subgraph` allows inputs that
// nothing inside provides (they become its outer_refs). A node's subgraph attributes must be finalized
// first: their outer_refs become the node's implicit_inputs (ordering it after their producers), and
// names no scope provides are an error naming the node in the main graph.
void finalize_graph(Graph& graph, bool subgraph = false);

}  // namespace ptq::ir
