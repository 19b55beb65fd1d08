// If, Loop and Scan on hand-made graphs, run by the executor: subgraphs reading tensors of the
// enclosing graphs, a nested If inside a Loop body, zero iterations, a while loop, Scan in reverse and
// along another output axis, malformed bodies (load errors naming the node), incremental runs across
// a Loop and the memory budget inside a body. Every expected number is worked out by hand in comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/size.h"
#include "core/size_test_util.h"
#include "exec/executor.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"
#include "quant/qdq_import.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

namespace ptq {
namespace {

using test::attr_floats;
using test::attr_graph;
using test::attr_int;
using test::attr_ints;
using test::floats;
using test::GraphBuilder;
using test::int64s;
using test::run_error;

Tensor boolean(bool v) {
  Tensor t(DType::Bool, {});
  *t.mutable_data<uint8_t>() = v ? 1 : 0;
  return t;
}

std::vector<float> values(const Tensor& t) { return t.to_float_vector(); }

std::string load_error(ir::Model model) {
  try {
    exec::Executor ex(std::move(model));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// cond ? x + 1 : concat(x, x), where x = Relu(x0) is a tensor of the main graph.
ir::Model if_model() {
  GraphBuilder then_b;
  then_b.initializer("one", floats({1}, {1}));
  then_b.node("then_add", "Add", {"x", "one"}, {"t"});
  then_b.output("t");
  GraphBuilder else_b;
  else_b.node("else_concat", "Concat", {"x", "x"}, {"e"}, {attr_int("axis", 0)});
  else_b.output("e");
  GraphBuilder b;
  b.input("c", DType::Bool, {});
  b.input("x0", DType::Float, {2});
  // Listed before the node that makes x: the order comes from the dependency on x.
  b.node("if", "If", {"c"}, {"y"},
         {attr_graph("then_branch", then_b.subgraph("then")), attr_graph("else_branch", else_b.subgraph("else"))});
  b.node("relu", "Relu", {"x0"}, {"x"});
  b.output("y");
  return b.model();
}

TEST(ControlFlow, IfRunsTheChosenBranchReadingOuterTensors) {
  exec::Executor ex(if_model());
  const ir::Graph& g = ex.graph();
  const ir::Node& node = g.node(g.find_node("if"));
  ASSERT_EQ(node.implicit_inputs.size(), 1u);
  EXPECT_EQ(g.value(node.implicit_inputs[0]).name, "x");
  EXPECT_LT(g.find_node("relu"), g.find_node("if"));  // sorted after what its branches read
  const Tensor x0 = floats({2}, {-1, 2});             // x = relu(x0) = [0, 2]
  const Tensor then_out = ex.outputs(ex.run({boolean(true), x0}, ex.stored_config()))[0];
  EXPECT_EQ(then_out.shape(), (Shape{2}));
  EXPECT_EQ(values(then_out), (std::vector<float>{1, 3}));
  const Tensor else_out = ex.outputs(ex.run({boolean(false), x0}, ex.stored_config()))[0];
  EXPECT_EQ(else_out.shape(), (Shape{4}));  // the branches' shapes differ
  EXPECT_EQ(values(else_out), (std::vector<float>{0, 2, 0, 2}));
}

// y = -2; for i in 0..M-1: y += x[i]; scan[i] = y (x is the main graph's [5, 1] input).
ir::Model loop_sum_model(int64_t trips) {
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("y_in", DType::Float, {1});
  body.node("gather", "Gather", {"x", "i"}, {"xi"}, {attr_int("axis", 0)});
  body.node("add", "Add", {"y_in", "xi"}, {"y_out"});
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.node("record", "Identity", {"y_out"}, {"scan"});
  body.output("cond_out").output("y_out").output("scan");
  auto g = body.subgraph();
  auto& scan = g->values[static_cast<size_t>(g->outputs[2])].info;  // declared [1]
  scan.dtype = DType::Float;
  scan.dims = {1};
  scan.has_shape = true;
  GraphBuilder b;
  b.input("x", DType::Float, {5, 1});
  b.initializer("M", int64s({}, {trips}));
  b.initializer("cond", boolean(true));
  b.initializer("y0", floats({1}, {-2}));
  b.node("loop", "Loop", {"M", "cond", "y0"}, {"y", "ys"}, {attr_graph("body", g)});
  b.output("y").output("ys");
  return b.model();
}

TEST(ControlFlow, LoopCarriesValuesAndStacksScanOutputs) {
  exec::Executor ex(loop_sum_model(5));
  const auto out = ex.outputs(ex.run({floats({5, 1}, {1, 2, 3, 4, 5})}, ex.stored_config()));
  EXPECT_EQ(values(out[0]), (std::vector<float>{13}));  // -2+1+2+3+4+5
  EXPECT_EQ(out[1].shape(), (Shape{5, 1}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{-1, 1, 4, 8, 13}));
}

TEST(ControlFlow, LoopWithZeroIterationsPassesTheInitialValues) {
  exec::Executor ex(loop_sum_model(0));
  const auto out = ex.outputs(ex.run({floats({5, 1}, {1, 2, 3, 4, 5})}, ex.stored_config()));
  EXPECT_EQ(values(out[0]), (std::vector<float>{-2}));
  EXPECT_EQ(out[1].shape(), (Shape{0, 1}));  // the body's declared [1] with no iterations
  EXPECT_EQ(out[1].dtype(), DType::Float);
}

// No trip count: while (cond) { n += 1; cond = i < 2 } runs iterations 0, 1 and 2.
TEST(ControlFlow, LoopWithoutTripCountStopsOnTheBodyCondition) {
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("n_in", DType::Float, {});
  body.initializer("two", int64s({}, {2}));
  body.initializer("one", floats({}, {1}));
  body.node("less", "Less", {"i", "two"}, {"cond_out"});
  body.node("inc", "Add", {"n_in", "one"}, {"n_out"});
  body.output("cond_out").output("n_out");
  GraphBuilder b;
  b.input("n0", DType::Float, {});
  b.initializer("cond", boolean(true));
  b.node("loop", "Loop", {"", "cond", "n0"}, {"n"}, {attr_graph("body", body.subgraph())});
  b.output("n");
  exec::Executor ex(b.model());
  EXPECT_EQ(values(ex.outputs(ex.run({floats({}, {10})}, ex.stored_config()))[0]), (std::vector<float>{13}));
}

// for 4 iterations: y = y > thr ? y - w : y + w, the If inside the body reading the body's y_in and
// the main graph's w; the body's Greater reads the main graph's thr.
ir::Model nested_model() {
  GraphBuilder then_b;
  then_b.node("down", "Sub", {"y_in", "w"}, {"d"});
  then_b.output("d");
  GraphBuilder else_b;
  else_b.node("up", "Add", {"y_in", "w"}, {"u"});
  else_b.output("u");
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("y_in", DType::Float, {1});
  body.node("above", "Greater", {"y_in", "thr"}, {"c"});
  body.node("squeeze", "Squeeze", {"c"}, {"c0"});
  body.node("step", "If", {"c0"}, {"y_out"},
            {attr_graph("then_branch", then_b.subgraph("then")), attr_graph("else_branch", else_b.subgraph("else"))});
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.node("record", "Identity", {"y_out"}, {"scan"});
  body.output("cond_out").output("y_out").output("scan");
  auto g = body.subgraph();
  GraphBuilder b;
  b.input("w", DType::Float, {1});
  b.initializer("thr", floats({1}, {4}));
  b.initializer("M", int64s({}, {4}));
  b.initializer("y0", floats({1}, {0}));
  b.node("loop", "Loop", {"M", "", "y0"}, {"y", "ys"}, {attr_graph("body", g)});
  b.output("y").output("ys");
  ir::Model m = b.model();
  m.ir_version = 8;
  return m;
}

void expect_nested_outputs(exec::Executor& ex) {
  const auto out = ex.outputs(ex.run({floats({1}, {3})}, ex.stored_config()));
  // 0 -> 3 -> 6 -> (6 > 4) 3 -> 6
  EXPECT_EQ(values(out[0]), (std::vector<float>{6}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{3, 6, 3, 6}));
}

std::vector<std::string> names(const ir::Graph& g, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(g.value(id).name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ControlFlow, NestedIfInsideLoopReadsEveryEnclosingScope) {
  ir::Model m = nested_model();
  const ir::Node& loop = m.graph.node(m.graph.find_node("loop"));
  const ir::Graph& body = *loop.attributes[0].g;
  // w is read only by the If's branches: it is the If's implicit input inside the body, so the body
  // reads it from outside too, as it reads thr.
  EXPECT_EQ(names(body, body.outer_refs), (std::vector<std::string>{"thr", "w"}));
  EXPECT_EQ(names(body, body.node(body.find_node("step")).implicit_inputs), (std::vector<std::string>{"w", "y_in"}));
  EXPECT_EQ(names(m.graph, loop.implicit_inputs), (std::vector<std::string>{"thr", "w"}));
  exec::Executor ex(std::move(m));
  expect_nested_outputs(ex);
}

TEST(ControlFlow, TheReaderResolvesSubgraphScopes) {
  const std::vector<uint8_t> bytes = reader::write_onnx(nested_model());
  ir::Model m = reader::read_onnx(bytes.data(), bytes.size(), {});
  const ir::Node& loop = m.graph.node(m.graph.find_node("loop"));
  EXPECT_EQ(names(m.graph, loop.implicit_inputs), (std::vector<std::string>{"thr", "w"}));
  const ir::Graph& body = *loop.attr("body")->g;
  EXPECT_EQ(names(body, body.outer_refs), (std::vector<std::string>{"thr", "w"}));
  const ir::Node& step = body.node(body.find_node("step"));
  EXPECT_EQ(step.opset, 17);  // subgraph nodes get the model's opsets
  EXPECT_EQ(names(body, step.implicit_inputs), (std::vector<std::string>{"w", "y_in"}));
  exec::Executor ex(std::move(m));
  expect_nested_outputs(ex);
}

// Running sum over the rows of x [3, 2] with state s [2].
ir::Model scan_model(std::vector<ir::Attribute> extra) {
  GraphBuilder body;
  body.input("s_in", DType::Float, {2});
  body.input("row", DType::Float, {2});
  body.node("add", "Add", {"s_in", "row"}, {"s_out"});
  body.node("record", "Identity", {"s_out"}, {"scan"});
  body.output("s_out").output("scan");
  GraphBuilder b;
  b.input("x", DType::Float, {3, 2});
  b.initializer("s0", floats({2}, {0, 0}));
  extra.push_back(attr_graph("body", body.subgraph()));
  extra.push_back(attr_int("num_scan_inputs", 1));
  b.node("scan", "Scan", {"s0", "x"}, {"s", "ys"}, std::move(extra));
  b.output("s").output("ys");
  return b.model();
}

TEST(ControlFlow, ScanForwardReverseAndOutputAxis) {
  const Tensor x = floats({3, 2}, {1, 2, 3, 4, 5, 6});
  {
    exec::Executor ex(scan_model({}));
    const auto out = ex.outputs(ex.run({x}, ex.stored_config()));
    EXPECT_EQ(values(out[0]), (std::vector<float>{9, 12}));
    EXPECT_EQ(values(out[1]), (std::vector<float>{1, 2, 4, 6, 9, 12}));
  }
  {
    // Rows read last to first: [5,6], [8,10], [9,12].
    exec::Executor ex(scan_model({attr_ints("scan_input_directions", {1})}));
    const auto out = ex.outputs(ex.run({x}, ex.stored_config()));
    EXPECT_EQ(values(out[1]), (std::vector<float>{5, 6, 8, 10, 9, 12}));
  }
  {
    // ... stacked along axis 1, the last step first: out[:, 2-t] = step t.
    exec::Executor ex(scan_model({attr_ints("scan_input_directions", {1}), attr_ints("scan_output_axes", {1}),
                                  attr_ints("scan_output_directions", {1})}));
    const auto out = ex.outputs(ex.run({x}, ex.stored_config()));
    EXPECT_EQ(out[1].shape(), (Shape{2, 3}));
    EXPECT_EQ(values(out[1]), (std::vector<float>{9, 8, 5, 12, 10, 6}));
  }
  {
    // Scanning along axis -1 (the columns [1,3,5] and [2,4,6]) needs a state of 3.
    GraphBuilder body;
    body.input("s_in", DType::Float, {3});
    body.input("col", DType::Float, {3});
    body.node("add", "Add", {"s_in", "col"}, {"s_out"});
    body.output("s_out");
    GraphBuilder b;
    b.input("x", DType::Float, {3, 2});
    b.initializer("s0", floats({3}, {0, 0, 0}));
    b.node("scan", "Scan", {"s0", "x"}, {"s"},
           {attr_graph("body", body.subgraph()), attr_int("num_scan_inputs", 1), attr_ints("scan_input_axes", {-1})});
    b.output("s");
    exec::Executor ex(b.model());
    EXPECT_EQ(values(ex.outputs(ex.run({x}, ex.stored_config()))[0]), (std::vector<float>{3, 7, 11}));
  }
}

TEST(ControlFlow, MalformedSubgraphsAreLoadErrorsNamingTheNode) {
  {
    ir::Model m = loop_sum_model(1);
    auto& body = *m.graph.nodes[static_cast<size_t>(m.graph.find_node("loop"))].attributes[0].g;
    body.outputs.pop_back();  // 2 outputs for condition + 1 carried + 1 scan
    const std::string e = load_error(std::move(m));
    EXPECT_NE(e.find("node 'loop' (Loop)"), std::string::npos) << e;
    EXPECT_NE(e.find("declares 2 outputs; the node needs 3"), std::string::npos) << e;
  }
  {
    ir::Model m = loop_sum_model(1);
    auto& node = m.graph.nodes[static_cast<size_t>(m.graph.find_node("loop"))];
    node.inputs.push_back(node.inputs.back());  // a second carried value the body does not take
    node.outputs.insert(node.outputs.begin() + 1, node.outputs[0]);
    const std::string e = load_error(std::move(m));
    EXPECT_NE(e.find("node 'loop' (Loop): body 'body' declares 3 inputs; with 2 loop-carried values it needs 4"),
              std::string::npos)
        << e;
  }
  {
    ir::Model m = if_model();
    auto& attrs = m.graph.nodes[static_cast<size_t>(m.graph.find_node("if"))].attributes;
    attrs.pop_back();
    EXPECT_NE(load_error(std::move(m)).find("node 'if' (If): graph attribute 'else_branch' is missing"),
              std::string::npos);
  }
  {
    GraphBuilder body;
    body.node("reads", "Identity", {"nowhere"}, {"o"});
    body.output("o");
    GraphBuilder b;
    b.input("c", DType::Bool, {});
    auto g = body.subgraph();
    b.node("if", "If", {"c"}, {"y"}, {attr_graph("then_branch", g), attr_graph("else_branch", g)});
    b.output("y");
    try {
      b.model();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node 'if' (If) reads tensor 'nowhere' in a subgraph"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ControlFlow, BodyErrorsAtRunTimeNameTheNode) {
  // The body's condition output is a float.
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.initializer("f", floats({}, {1}));
  body.node("not_bool", "Identity", {"f"}, {"cond_out"});
  body.output("cond_out");
  GraphBuilder b;
  b.input("M", DType::Int64, {});
  b.node("loop", "Loop", {"M", ""}, {}, {attr_graph("body", body.subgraph())});
  // A Loop without outputs is rejected like every node without outputs.
  EXPECT_NE(load_error(b.model()).find("node 'loop' (Loop) has no outputs"), std::string::npos);

  GraphBuilder b2;
  b2.input("M", DType::Int64, {});
  b2.input("v", DType::Float, {});
  body.input("v_in", DType::Float, {});
  body.output("v_in");
  b2.node("loop", "Loop", {"M", "", "v"}, {"v_out"}, {attr_graph("body", body.subgraph())});
  b2.output("v_out");
  exec::Executor ex(b2.model());
  const std::string e = run_error(ex, {int64s({}, {3}), floats({}, {1})});
  EXPECT_NE(e.find("node 'loop' (Loop): the body's condition output must be one bool"), std::string::npos) << e;
}

// x -> x_HzCalibration -> x_cal, read only inside the Loop body: y = y0 + 2 * x_cal over 2 iterations.
TEST(ControlFlow, IncrementalRunsRecomputeTheLoopAsOneUnit) {
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.input("y_in", DType::Float, {4});
  body.node("add", "Add", {"y_in", "x_cal"}, {"y_out"});
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out").output("y_out");
  GraphBuilder b;
  b.input("x", DType::Float, {4});
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.initializer("M", int64s({}, {2}));
  b.initializer("y0", floats({4}, {0, 0, 0, 0}));
  b.node("loop", "Loop", {"M", "", "y0"}, {"y"}, {attr_graph("body", body.subgraph())});
  b.output("y");
  exec::Executor ex(b.model());
  ASSERT_EQ(ex.calibrations().size(), 1u);
  const Tensor x = floats({4}, {-0.7f, 0.333f, 1.5f, 0.004f});
  const exec::RunRecord base = ex.run({x}, ex.uniform_config(false), {}, true);
  EXPECT_EQ(values(ex.outputs(base)[0]), (std::vector<float>{2 * -0.7f, 2 * 0.333f, 2 * 1.5f, 2 * 0.004f}));
  exec::RunStats stats;
  const Tensor inc = ex.outputs(ex.run_incremental(base, ex.uniform_config(true), {}, &stats))[0];
  EXPECT_EQ(stats.nodes_executed, 2);  // the calibration node and the Loop it feeds through the body
  // On: x quantized with scale 0.01 (threshold 1.27 / 127): -0.7, 0.33, 1.27 (saturated), 0.
  const std::vector<float> expected = {2 * -0.7f, 2 * 0.33f, 2 * 1.27f, 0.0f};
  const Tensor full = ex.outputs(ex.run({x}, ex.uniform_config(true)))[0];
  ASSERT_EQ(inc.numel(), 4);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(values(inc)[i], expected[i], 1e-6f) << i;
    EXPECT_EQ(values(inc)[i], values(full)[i]) << i;
  }
}

TEST(ControlFlow, TheMemoryBudgetAppliesInsideBodies) {
  // 1000 iterations each recording a [256] float tensor: 1 MB of scan output plus its parts.
  GraphBuilder body;
  body.input("i", DType::Int64, {});
  body.input("cond_in", DType::Bool, {});
  body.node("keep_going", "Identity", {"cond_in"}, {"cond_out"});
  body.node("expand", "Expand", {"v", "shape"}, {"scan"});
  body.output("cond_out").output("scan");
  GraphBuilder b;
  b.input("v", DType::Float, {1});
  b.initializer("shape", int64s({1}, {256}));
  b.initializer("M", int64s({}, {1000}));
  b.node("loop", "Loop", {"M", ""}, {"ys"}, {attr_graph("body", body.subgraph())});
  b.output("ys");
  exec::Executor ex(b.model());
  {
    test::ScopedMemoryBudget budget(256 * 1024);
    const std::string e = test::size_error_of([&] { ex.run({floats({1}, {1})}, ex.stored_config()); });
    EXPECT_NE(e.find("memory budget"), std::string::npos) << e;
  }
  const Tensor ys = ex.outputs(ex.run({floats({1}, {2})}, ex.stored_config()))[0];
  EXPECT_EQ(ys.shape(), (Shape{1000, 256}));
  EXPECT_EQ(ys.data<float>()[1000 * 256 - 1], 2.0f);
}

// A QuantizeLinear -> DequantizeLinear pair (uint8, zero point 0) on the outer x in each branch of an If.
std::shared_ptr<ir::Graph> qdq_branch(const std::string& name, float scale) {
  GraphBuilder body;
  body.initializer("s", floats({}, {scale}));
  body.node("q", "QuantizeLinear", {"x", "s"}, {"xq"});
  body.node("dq", "DequantizeLinear", {"xq", "s"}, {"xd"});
  body.output("xd");
  return body.subgraph(name);
}

TEST(ControlFlow, QdqNodesInsideSubgraphsBecomeCalibrationNodes) {
  GraphBuilder b;
  b.input("c", DType::Bool, {});
  b.input("x", DType::Float, {2});
  b.node("if", "If", {"c"}, {"y"},
         {attr_graph("then_branch", qdq_branch("then", 0.1f)), attr_graph("else_branch", qdq_branch("else", 0.2f))});
  b.output("y");
  ir::Model m = b.model();
  const quant::QdqImportSummary summary = quant::import_qdq(m);
  EXPECT_EQ(summary.activations, 2u);
  EXPECT_EQ(summary.left, 0u);
  EXPECT_TRUE(m.warnings.empty());
  exec::Executor ex(std::move(m));
  ASSERT_EQ(ex.calibrations().size(), 2u);
  EXPECT_EQ(ex.calibrations()[0].node_name, "if/then_branch/x");  // named after the tensor it quantizes
  EXPECT_EQ(ex.calibrations()[1].node_name, "if/else_branch/x");
  const Tensor x = floats({2}, {0.26f, -0.04f});
  // then, ON: 0.26 / 0.1 = 2.6 rounds to 3, so 0.3; -0.04 saturates to 0. OFF: x itself.
  const Tensor on = ex.outputs(ex.run({boolean(true), x}, ex.stored_config()))[0];
  EXPECT_NEAR(values(on)[0], 0.3f, 1e-6f);
  EXPECT_NEAR(values(on)[1], 0.0f, 1e-6f);
  EXPECT_EQ(values(ex.outputs(ex.run({boolean(true), x}, ex.uniform_config(false)))[0]), values(x));
  // else, ON: 0.26 / 0.2 = 1.3 rounds to 1, so 0.2.
  const Tensor other = ex.outputs(ex.run({boolean(false), x}, ex.stored_config()))[0];
  EXPECT_NEAR(values(other)[0], 0.2f, 1e-6f);
}

}  // namespace
}  // namespace ptq
