#include "exec/registry.h"

#include <algorithm>
#include <tuple>

namespace ptq::exec {

const Tensor& KernelContext::required(size_t i) const {
  const Tensor* t = input(i);
  if (!t) fail("input " + std::to_string(i) + " is required but absent");
  return *t;
}

void KernelContext::fail(const std::string& message) const {
  throw Error("node '" + node.name + "' (" + node.op_type + "): " + message);
}

const ir::Graph& KernelContext::graph_attr(std::string_view name) const {
  const ir::Attribute* a = node.attr(name);
  if (!a || !a->g) fail("graph attribute '" + std::string(name) + "' is missing");
  return *a->g;
}

std::vector<Tensor> KernelContext::run_subgraph(const ir::Graph& body, const std::vector<Tensor>& inputs) const {
  if (!subgraphs) fail("subgraphs run only inside the executor");
  return subgraphs->run(body, inputs);
}

OpDef& OpDef::check(NodeCheck fn) {
  node_check = fn;
  return *this;
}

OpDef& OpDef::takes_values() {
  values = true;
  return *this;
}

OpDef& OpDef::versions(int first, int last) {
  since = first;
  until = last;
  return *this;
}

OpDef& OpDef::rule(shape::Rule r) {
  shape_rule = std::move(r);
  return *this;
}

OpDef& OpDef::meta(std::string_view cat, std::string_view names) {
  category = std::string(cat);
  inputs.clear();
  size_t at = 0;
  while (at < names.size()) {
    size_t end = names.find(' ', at);
    if (end == std::string_view::npos) end = names.size();
    std::string_view word = names.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    OpInput in;
    if (word.size() > 3 && word.substr(word.size() - 3) == "...") {
      in.variadic = true;
      word.remove_suffix(3);
    }
    if (word.back() == '?') {
      in.optional = true;
      word.remove_suffix(1);
    }
    in.name = std::string(word);
    inputs.push_back(std::move(in));
  }
  return *this;
}

std::string OpRegistry::key(std::string_view domain, std::string_view op_type) {
  std::string d(domain == "ai.onnx" ? "" : domain);
  // Horizon ops may carry an empty domain in older models; canonicalise to "horizon".
  if (d.empty() && op_type.size() > 2 && op_type.substr(0, 2) == "Hz") d = "horizon";
  return d + ":" + std::string(op_type);
}

OpDef& OpRegistry::add(std::string_view domain, std::string_view op_type, KernelFn fn) {
  OpDef def;
  def.domain = std::string(domain == "ai.onnx" ? "" : domain);
  def.op_type = std::string(op_type);
  def.kernel = fn;
  index_[key(domain, op_type)].push_back(defs_.size());
  defs_.push_back(std::move(def));
  return defs_.back();
}

const OpDef* OpRegistry::find_op(std::string_view domain, std::string_view op_type, int opset) const {
  auto it = index_.find(key(domain, op_type));
  if (it == index_.end()) return nullptr;
  const int v = std::max(opset, 1);
  for (size_t i : it->second) {
    const OpDef& d = defs_[i];
    if (d.since <= v && v <= d.until) return &d;
  }
  return nullptr;
}

KernelFn OpRegistry::find(std::string_view domain, std::string_view op_type, int opset) const {
  const OpDef* d = find_op(domain, op_type, opset);
  return d ? d->kernel : nullptr;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> names;
  for (const auto& [k, ids] : index_) {
    if (std::any_of(ids.begin(), ids.end(), [this](size_t i) { return defs_[i].kernel != nullptr; }))
      names.push_back(k);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<const OpDef*> OpRegistry::entries() const {
  std::vector<const OpDef*> all;
  all.reserve(defs_.size());
  for (const OpDef& d : defs_) all.push_back(&d);
  std::sort(all.begin(), all.end(), [](const OpDef* a, const OpDef* b) {
    return std::tie(a->domain, a->op_type, a->since) < std::tie(b->domain, b->op_type, b->since);
  });
  return all;
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define PTQ_OP_FAMILY(family) register_##family(r);
#include "exec/ops.inc"
#undef PTQ_OP_FAMILY
    return r;
  }();
  return registry;
}

}  // namespace ptq::exec
