#include "exec/registry.h"

#include <algorithm>

namespace ptq::exec {

const Tensor& KernelContext::required(size_t i) const {
  const Tensor* t = input(i);
  if (!t) fail("input " + std::to_string(i) + " is required but absent");
  return *t;
}

void KernelContext::fail(const std::string& message) const {
  throw Error("node '" + node.name + "' (" + node.op_type + "): " + message);
}

std::string OpRegistry::key(std::string_view domain, std::string_view op_type) {
  std::string d(domain == "ai.onnx" ? "" : domain);
  // Horizon ops may carry an empty domain in older models; canonicalise to "horizon".
  if (d.empty() && op_type.size() > 2 && op_type.substr(0, 2) == "Hz") d = "horizon";
  return d + ":" + std::string(op_type);
}

void OpRegistry::add(std::string_view domain, std::string_view op_type, KernelFn fn) {
  kernels_[key(domain, op_type)] = fn;
}

KernelFn OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  auto it = kernels_.find(key(domain, op_type));
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> names;
  names.reserve(kernels_.size());
  for (const auto& [k, fn] : kernels_) names.push_back(k);
  std::sort(names.begin(), names.end());
  return names;
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
