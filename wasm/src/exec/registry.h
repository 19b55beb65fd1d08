#pragma once
// Op registry: (domain, op_type) -> kernel. Filled once from the explicit family list in ops.inc
// (no self-registering statics: a static library would drop unreferenced objects at link time).
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exec/kernel.h"

namespace ptq::exec {

class OpRegistry {
 public:
  // Domains "" and "ai.onnx" are the same; Hz ops are accepted in "horizon" and "" (§1.2).
  void add(std::string_view domain, std::string_view op_type, KernelFn fn);
  KernelFn find(std::string_view domain, std::string_view op_type) const;
  std::vector<std::string> op_types() const;  // sorted "domain:op" names, for docs and tests

  static const OpRegistry& global();

 private:
  static std::string key(std::string_view domain, std::string_view op_type);
  std::unordered_map<std::string, KernelFn> kernels_;
};

// Each op family file defines one of these (declared by ops.inc).
#define PTQ_OP_FAMILY(family) void register_##family(OpRegistry& registry);
#include "exec/ops.inc"
#undef PTQ_OP_FAMILY

}  // namespace ptq::exec
