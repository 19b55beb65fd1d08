#pragma once
// Runs one kernel on hand-made inputs: the unit-test harness for op families.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/registry.h"

namespace ptq::test {

inline ir::Attribute attr_int(const std::string& name, int64_t v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Int; a.i = v; return a;
}
inline ir::Attribute attr_float(const std::string& name, float v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Float; a.f = v; return a;
}
inline ir::Attribute attr_string(const std::string& name, const std::string& v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::String; a.s = v; return a;
}
inline ir::Attribute attr_ints(const std::string& name, std::vector<int64_t> v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Ints; a.ints = std::move(v); return a;
}
inline ir::Attribute attr_floats(const std::string& name, std::vector<float> v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Floats; a.floats = std::move(v); return a;
}
inline ir::Attribute attr_strings(const std::string& name, std::vector<std::string> v) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Strings; a.strings = std::move(v); return a;
}
// A subgraph attribute (If branch, Loop/Scan/SequenceMap body).
inline ir::Attribute attr_graph(const std::string& name, std::shared_ptr<ir::Graph> g) {
  ir::Attribute a; a.name = name; a.type = ir::AttrType::Graph; a.g = std::move(g); return a;
}

// The error of one run of `ex` on `inputs` under the stored configuration ("no error" when it runs).
inline std::string run_error(exec::Executor& ex, const std::vector<Tensor>& inputs) {
  try {
    ex.run(inputs, ex.stored_config());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Small float32 / int64 tensors for hand-worked cases.
inline Tensor floats(Shape shape, const std::vector<float>& v) { return Tensor::from_floats(std::move(shape), v); }
inline Tensor int64s(Shape shape, const std::vector<int64_t>& v) { return Tensor::from_int64s(std::move(shape), v); }

// Inputs: an undefined Tensor() stands for an absent optional input.
inline std::vector<Tensor> run_op(const std::string& op_type, const std::vector<Tensor>& inputs,
                                  std::vector<ir::Attribute> attrs = {}, size_t output_count = 1,
                                  int opset = 17, const std::string& domain = "") {
  ir::Node node;
  node.name = op_type + "_test";
  node.op_type = op_type;
  node.domain = domain;
  node.opset = opset;
  node.attributes = std::move(attrs);
  std::vector<const Tensor*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].defined() ? static_cast<int>(i) : ir::kNoValue);
    in.push_back(inputs[i].defined() ? &inputs[i] : nullptr);
  }
  for (size_t i = 0; i < output_count; ++i) node.outputs.push_back(static_cast<int>(100 + i));
  std::vector<Tensor> out(output_count);
  exec::KernelFn fn = exec::OpRegistry::global().find(domain, op_type);
  if (!fn) throw Error("no kernel registered for " + domain + ":" + op_type);
  exec::KernelContext ctx{node, in, out};
  ctx.constant_input.assign(in.size(), false);
  fn(ctx);
  return out;
}

inline void expect_tensor_near(const Tensor& actual, const Shape& shape, const std::vector<float>& expected,
                               float tol = 1e-5f) {
  ASSERT_EQ(actual.shape(), shape);
  std::vector<float> got = actual.to_float_vector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0f, std::fabs(expected[i]))) << "at " << i;
    }
  }
}

// Advances a row-major multi-index over `dims`; false after the last one (naive reference loops).
inline bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

}  // namespace ptq::test
