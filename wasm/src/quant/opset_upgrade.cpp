#include "quant/opset_upgrade.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "quant/graph_edit.h"

namespace ptq::quant {
namespace {

// Ops whose attributes or semantics changed at `version` in ways the upgrade must handle
// (onnx/docs/Changelog.md).
struct Change {
  const char* op;
  int64_t version;
};
constexpr Change kChanges[] = {
    {"Squeeze", 13},        {"Unsqueeze", 13},       {"ReduceSum", 13},      {"Split", 13},
    {"Split", 18},          {"Softmax", 13},         {"LogSoftmax", 13},     {"Hardmax", 13},
    {"Dropout", 12},        {"RoiAlign", 16},        {"Resize", 13},         {"GroupNormalization", 21},
    {"ReduceMean", 18},     {"ReduceMax", 18},       {"ReduceMin", 18},      {"ReduceProd", 18},
    {"ReduceL1", 18},       {"ReduceL2", 18},        {"ReduceLogSum", 18},   {"ReduceLogSumExp", 18},
    {"ReduceSumSquare", 18},
};

bool crosses(const std::string& op, int64_t version, int64_t from, int64_t to) {
  for (const auto& c : kChanges)
    if (op == c.op && (version == 0 || version == c.version) && from < c.version && c.version <= to) return true;
  return false;
}

void remove_attr(ir::Node& n, const std::string& name) {
  n.attributes.erase(std::remove_if(n.attributes.begin(), n.attributes.end(),
                                    [&](const ir::Attribute& a) { return a.name == name; }),
                     n.attributes.end());
}

class Upgrader {
 public:
  Upgrader(ir::Graph& g, int64_t from, int64_t to) : g_(g), names_(g), from_(from), to_(to) {}

  // The nodes replacing `n` (usually just `n`, edited).
  std::vector<ir::Node> upgrade(ir::Node n) {
    const std::string& op = n.op_type;
    const std::string where = "cannot raise the opset of node '" + n.name + "' (" + op + ") from " +
                              std::to_string(from_) + " to " + std::to_string(to_);
    if (op == "Squeeze" || op == "Unsqueeze" || (op.rfind("Reduce", 0) == 0 && crosses(op, 0, from_, to_))) {
      attr_to_input(n, "axes");
    } else if (op == "Split") {
      if (crosses(op, 13, from_, to_)) attr_to_input(n, "split");
      const bool has_split = n.inputs.size() > 1 && n.inputs[1] >= 0;
      if (crosses(op, 18, from_, to_) && !has_split && !n.has_attr("num_outputs"))
        n.attributes.push_back(edit::attr_int("num_outputs", static_cast<int64_t>(n.outputs.size())));
    } else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
      return coerced_softmax(std::move(n));
    } else if (op == "Dropout") {
      remove_attr(n, "ratio");
    } else if (op == "RoiAlign") {
      if (!n.has_attr("coordinate_transformation_mode"))
        n.attributes.push_back(edit::attr_string("coordinate_transformation_mode", "output_half_pixel"));
    } else if (op == "Resize") {
      check(n.attr_string("coordinate_transformation_mode", "") != "tf_half_pixel_for_nn",
            where + ": coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in opset 13");
    } else if (op == "GroupNormalization") {
      fail(where + ": GroupNormalization's scale/bias changed meaning in opset 21");
    }
    return {std::move(n)};
  }

 private:
  // An ints attribute becomes an int64 initializer input at slot 1 (absent attribute: no input).
  void attr_to_input(ir::Node& n, const std::string& attr) {
    if (!n.has_attr(attr)) return;
    const std::vector<int64_t> values = n.attr_ints(attr);
    check(n.inputs.size() == 1, "node '" + n.name + "': unexpected inputs next to the '" + attr + "' attribute");
    const int id = edit::add_initializer(g_, names_.fresh(n.name + "_" + attr),
                                         Tensor::from_int64s({static_cast<int64_t>(values.size())}, values));
    n.inputs.push_back(id);
    remove_attr(n, attr);
  }

  // Before opset 13 these ops flattened the input to 2-D at `axis` (default 1) and normalised each
  // row; from 13 they work along one axis (default -1). Same result when axis is the last one
  // (always for -1: the 2-D view's rows are then exactly the last axis).
  std::vector<ir::Node> coerced_softmax(ir::Node n) {
    const int64_t axis = n.attr_int("axis", 1);
    remove_attr(n, "axis");
    const ir::ValueInfo& info = g_.value(n.inputs.at(0)).info;
    const int64_t rank = info.has_shape ? static_cast<int64_t>(info.dims.size()) : -1;
    if (axis == -1 || (rank > 0 && axis == rank - 1)) {
      n.attributes.push_back(edit::attr_int("axis", -1));
      return {std::move(n)};
    }
    const int x = n.inputs[0], y = n.outputs.at(0);
    const int flat = edit::add_value(g_, names_.fresh(n.name + "_flattened"));
    const int row = edit::add_value(g_, names_.fresh(n.name + "_rows"));
    const int shape = edit::add_value(g_, names_.fresh(n.name + "_input_shape"));
    std::vector<ir::Node> out;
    out.push_back(edit::make_node(names_.fresh(n.name + "_Flatten"), "Flatten", "", {x}, {flat}, {edit::attr_int("axis", axis)}));
    n.inputs[0] = flat;
    n.outputs[0] = row;
    n.attributes.push_back(edit::attr_int("axis", -1));
    const std::string name = n.name;
    out.push_back(std::move(n));
    out.push_back(edit::make_node(names_.fresh(name + "_Shape"), "Shape", "", {x}, {shape}));
    out.push_back(edit::make_node(names_.fresh(name + "_Reshape"), "Reshape", "", {row, shape}, {y}));
    return out;
  }

  ir::Graph& g_;
  edit::NameSet names_;
  int64_t from_, to_;
};

// Subgraph nodes would need the same rewrites inside their own scope; refuse instead.
void check_subgraphs(const ir::Graph& g, int64_t from, int64_t to, const std::string& owner) {
  for (const auto& n : g.nodes) {
    if (!owner.empty() && n.domain.empty() && crosses(n.op_type, 0, from, to))
      fail("cannot raise the opset from " + std::to_string(from) + " to " + std::to_string(to) + ": node '" + n.name +
           "' (" + n.op_type + ") inside a subgraph of '" + owner + "' would need rewriting");
    for (const auto& a : n.attributes) {
      if (a.g) check_subgraphs(*a.g, from, to, n.name);
      for (const auto& sub : a.graphs)
        if (sub) check_subgraphs(*sub, from, to, n.name);
    }
  }
}

// Moves every ai.onnx node (subgraphs included) to `opset`. Subgraphs are shared with the model the
// caller copied from, so each is cloned before it is touched.
void set_default_opset(ir::Graph& g, int opset) {
  for (auto& n : g.nodes) {
    if (n.domain.empty() && n.op_type.rfind("Hz", 0) != 0) n.opset = opset;
    for (auto& a : n.attributes) {
      if (a.g) {
        a.g = std::make_shared<ir::Graph>(*a.g);
        set_default_opset(*a.g, opset);
      }
      for (auto& sub : a.graphs) {
        if (!sub) continue;
        sub = std::make_shared<ir::Graph>(*sub);
        set_default_opset(*sub, opset);
      }
    }
  }
}

}  // namespace

int64_t min_ir_version_for_opset(int64_t opset) {
  // onnx/helper.py VERSION_TABLE: (ai.onnx opset, IR version) of each release.
  struct Pair {
    int64_t opset, ir;
  };
  constexpr Pair kTable[] = {{8, 3}, {9, 4}, {10, 5}, {11, 6}, {14, 7}, {18, 8}, {20, 9}, {22, 10}, {23, 11}};
  for (const auto& p : kTable)
    if (opset <= p.opset) return p.ir;
  return 11;
}

void upgrade_default_opset(ir::Model& model, int64_t target) {
  const int64_t from = model.opset("");
  if (from >= target) return;
  check(from >= 11, "cannot raise the ai.onnx opset of a model at opset " + std::to_string(from) +
                        " to " + std::to_string(target) + ": only opset 11 and newer are supported");
  ir::Graph& g = model.graph;
  check_subgraphs(g, from, target, "");
  Upgrader upgrader(g, from, target);
  std::vector<ir::Node> nodes;
  for (auto& n : g.nodes) {
    if (!n.domain.empty() || !crosses(n.op_type, 0, from, target)) {
      nodes.push_back(std::move(n));
      continue;
    }
    for (auto& r : upgrader.upgrade(std::move(n))) nodes.push_back(std::move(r));
  }
  g.nodes = std::move(nodes);
  ir::finalize_graph(g);
  edit::set_opset(model, "", target);
  set_default_opset(g, static_cast<int>(target));
  model.ir_version = std::max(model.ir_version, min_ir_version_for_opset(target));
}

}  // namespace ptq::quant
