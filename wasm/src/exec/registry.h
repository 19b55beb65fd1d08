#pragma once
// Op registry: one entry per (domain, op_type, opset range) holding everything the core knows of an op:
// its kernel, its shape rule (exec/shape_rule.h) and the metadata the faces show (category, input
// names; exported by describe()). Filled once from the explicit family list in ops.inc: each family
// file registers its ops' kernels, rules and metadata together (no self-registering statics: a static
// library would drop unreferenced objects at link time).
#include <climits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exec/kernel.h"
#include "exec/shape_rule.h"

namespace ptq::exec {

// An opset version beyond every real one: "the newest".
constexpr int kLatestOpset = INT_MAX;

// One input of an op as the faces name it.
struct OpInput {
  std::string name;
  bool optional = false;
  bool variadic = false;  // this and every later input
};

// A load-time check of a node's structure (an If's branches, a Loop body's inputs and outputs): throws
// a ptq::Error naming the node when the node cannot run, before any compute.
using NodeCheck = void (*)(const ir::Node&);

struct OpDef {
  std::string domain;  // canonical: "" (ai.onnx) or "horizon"
  std::string op_type;
  int since = 1;                   // first opset of the domain this entry applies to
  int until = kLatestOpset;        // last one (inclusive)
  KernelFn kernel = nullptr;       // nullptr: known to the viewers, not executed
  shape::Rule shape_rule;          // empty: inference runs the kernel on zeros of the input shapes
  std::string category;            // Netron's category names, lower case ("" = none)
  std::vector<OpInput> inputs;     // input names in order
  NodeCheck node_check = nullptr;  // run by the executor when it loads a node of this op
  // The kernel takes sequences and optionals (core/tensor.h) as well as tensors; every other op is
  // refused such an input by the executor, naming the node.
  bool values = false;

  OpDef& versions(int first, int last = kLatestOpset);
  OpDef& rule(shape::Rule r);
  OpDef& check(NodeCheck fn);
  OpDef& takes_values();
  // `inputs`: space-separated names; "name?" is optional, "name..." variadic.
  OpDef& meta(std::string_view category, std::string_view inputs);
};

class OpRegistry {
 public:
  // Domains "" and "ai.onnx" are the same; Hz ops are accepted in "horizon" and "" (§1.2). The returned
  // entry (since 1) is completed by the caller: r.add(...).rule(...).meta(...).
  OpDef& add(std::string_view domain, std::string_view op_type, KernelFn fn);
  // The entry for the model's opset of the op's domain (opsets below 1 read as 1), or nullptr.
  const OpDef* find_op(std::string_view domain, std::string_view op_type, int opset = kLatestOpset) const;
  // Its kernel, or nullptr when the op is unknown or not executed.
  KernelFn find(std::string_view domain, std::string_view op_type, int opset = kLatestOpset) const;
  std::vector<std::string> op_types() const;  // sorted "domain:op" names of executed ops, for docs and tests
  // Every entry, sorted by domain, op type and first opset (describe()).
  std::vector<const OpDef*> entries() const;

  static const OpRegistry& global();

 private:
  static std::string key(std::string_view domain, std::string_view op_type);
  std::vector<OpDef> defs_;
  std::unordered_map<std::string, std::vector<size_t>> index_;  // key -> entries, any order
};

// Each op family file defines one of these (declared by ops.inc).
#define PTQ_OP_FAMILY(family) void register_##family(OpRegistry& registry);
#include "exec/ops.inc"
#undef PTQ_OP_FAMILY

}  // namespace ptq::exec
