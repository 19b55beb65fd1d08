// Optional ops on hand-made values, opset 15 and 18 (an absent input too), and an optional carried
// through If and Identity by the executor.
#include <gtest/gtest.h>

#include "exec/executor.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_graph;
using test::floats;
using test::GraphBuilder;
using test::run_op;

std::string op_error(const std::string& op, const std::vector<Tensor>& inputs, int opset) {
  try {
    run_op(op, inputs, {}, 1, opset);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

bool has_element(const std::vector<Tensor>& inputs, int opset) {
  const Tensor out = run_op("OptionalHasElement", inputs, {}, 1, opset)[0];
  EXPECT_EQ(out.dtype(), DType::Bool);
  EXPECT_EQ(out.rank(), 0u);
  return out.get_as_int64(0) != 0;
}

TEST(OptionalOps, WrapQueryUnwrap) {
  const Tensor x = floats({2}, {1, 2});
  const Tensor held = run_op("Optional", {x}, {}, 1, 15)[0];
  EXPECT_EQ(held.kind(), ValueKind::Optional);
  const Tensor empty = run_op("Optional", {Tensor()}, {}, 1, 15)[0];
  EXPECT_EQ(empty.kind(), ValueKind::Optional);
  EXPECT_TRUE(empty.items().empty());
  EXPECT_TRUE(has_element({held}, 15));
  EXPECT_FALSE(has_element({empty}, 15));
  const Tensor got = run_op("OptionalGetElement", {held}, {}, 1, 15)[0];
  EXPECT_TRUE(got.is_dense());
  EXPECT_TRUE(got.shares_storage_with(x));
  EXPECT_NE(op_error("OptionalGetElement", {empty}, 18).find("the optional is empty"), std::string::npos);
  EXPECT_NE(op_error("Optional", {held}, 15).find("an optional holds a tensor or a sequence"), std::string::npos);
  // An optional holding a sequence gives the sequence back.
  const Tensor s = Tensor::sequence({x, x}, DType::Float);
  EXPECT_EQ(run_op("OptionalGetElement", {run_op("Optional", {s}, {}, 1, 15)[0]}, {}, 1, 15)[0].items().size(), 2u);
}

TEST(OptionalOps, Opset18TakesTensorsSequencesAndNothing) {
  const Tensor x = floats({1}, {5});
  // Before opset 18 the input is required; a tensor given for an optional is one holding it (as a
  // Loop hands on a carried value its body declares optional).
  EXPECT_NE(op_error("OptionalHasElement", {Tensor()}, 15).find("required before opset 18"), std::string::npos);
  EXPECT_TRUE(has_element({x}, 15));
  EXPECT_TRUE(run_op("OptionalGetElement", {x}, {}, 1, 15)[0].shares_storage_with(x));
  // From opset 18 a tensor or a sequence has its element, an absent input none.
  EXPECT_TRUE(has_element({x}, 18));
  EXPECT_TRUE(has_element({Tensor::sequence({}, DType::Float)}, 18));
  EXPECT_FALSE(has_element({Tensor()}, 18));
  EXPECT_TRUE(run_op("OptionalGetElement", {x}, {}, 1, 18)[0].shares_storage_with(x));
}

// c ? Optional(x) : Optional() through If, then Identity, OptionalHasElement on the result.
TEST(OptionalOps, OptionalThroughIfAndIdentity) {
  GraphBuilder then_b;
  then_b.node("wrap", "Optional", {"x"}, {"t"});
  then_b.output("t");
  GraphBuilder else_b;
  else_b.node("none", "Optional", {""}, {"e"});
  else_b.output("e");
  GraphBuilder b;
  b.input("c", DType::Bool, {});
  b.input("x", DType::Float, {2});
  b.node("if", "If", {"c"}, {"o"},
         {attr_graph("then_branch", then_b.subgraph("then")), attr_graph("else_branch", else_b.subgraph("else"))});
  b.node("copy", "Identity", {"o"}, {"o2"});
  b.node("has", "OptionalHasElement", {"o2"}, {"h"});
  b.output("h");
  exec::Executor ex(b.model());
  auto run = [&](bool c) {
    Tensor cond(DType::Bool, {});
    *cond.mutable_data<uint8_t>() = c ? 1 : 0;
    return ex.outputs(ex.run({cond, floats({2}, {1, 2})}, ex.stored_config()))[0].get_as_int64(0);
  };
  EXPECT_EQ(run(true), 1);
  EXPECT_EQ(run(false), 0);
}

}  // namespace
}  // namespace ptq
