// Sequence ops on hand-made inputs (kernels alone) and in graphs run by the executor (SequenceMap's
// body, a sequence between tensor ops, the refusal of a sequence at a tensor op and at a calibration
// node, a graph input declared a sequence). Every expected number is worked out by hand in comments.
#include <gtest/gtest.h>

#include "exec/executor.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_floats;
using test::attr_graph;
using test::attr_int;
using test::floats;
using test::GraphBuilder;
using test::int64s;
using test::run_error;
using test::run_op;

std::vector<float> values(const Tensor& t) { return t.to_float_vector(); }

std::string op_error(const std::string& op, const std::vector<Tensor>& inputs, std::vector<ir::Attribute> attrs = {}) {
  try {
    run_op(op, inputs, std::move(attrs));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// [[0, 1, 2], [3, 4, 5]]
Tensor two_by_three() { return floats({2, 3}, {0, 1, 2, 3, 4, 5}); }

Tensor seq(std::vector<Tensor> items) { return Tensor::sequence(std::move(items), DType::Undefined); }

TEST(SequenceOps, EmptyConstructLengthAt) {
  const Tensor empty = run_op("SequenceEmpty", {}, {attr_int("dtype", 7)})[0];
  EXPECT_EQ(empty.kind(), ValueKind::Sequence);
  EXPECT_EQ(empty.elem_dtype(), DType::Int64);
  EXPECT_TRUE(empty.items().empty());
  EXPECT_EQ(run_op("SequenceLength", {empty})[0].get_as_int64(0), 0);

  const Tensor a = floats({2}, {1, 2}), b = floats({3}, {3, 4, 5});
  const Tensor s = run_op("SequenceConstruct", {a, b})[0];
  ASSERT_EQ(s.items().size(), 2u);
  EXPECT_EQ(s.elem_dtype(), DType::Float);
  const Tensor length = run_op("SequenceLength", {s})[0];
  EXPECT_EQ(length.dtype(), DType::Int64);
  EXPECT_EQ(length.rank(), 0u);
  EXPECT_EQ(length.get_as_int64(0), 2);
  // Position 1 and -1 both name b; -2 names a.
  EXPECT_EQ(values(run_op("SequenceAt", {s, int64s({}, {1})})[0]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values(run_op("SequenceAt", {s, int64s({}, {-1})})[0]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values(run_op("SequenceAt", {s, int64s({}, {-2})})[0]), (std::vector<float>{1, 2}));
  EXPECT_NE(op_error("SequenceAt", {s, int64s({}, {2})}).find("position 2 is out of range [-2, 1]"), std::string::npos);
  EXPECT_NE(op_error("SequenceConstruct", {a, int64s({1}, {1})}).find("cannot take a int64 tensor"), std::string::npos);
}

TEST(SequenceOps, InsertAndErase) {
  const Tensor a = floats({1}, {1}), b = floats({1}, {2}), c = floats({1}, {3});
  const Tensor s = seq({a, b});
  auto firsts = [](const Tensor& sq) {
    std::vector<float> v;
    for (const Tensor& t : sq.items()) v.push_back(t.to_float_vector()[0]);
    return v;
  };
  // No position: at the back. Position 0: at the front. Position -1: before the last element.
  EXPECT_EQ(firsts(run_op("SequenceInsert", {s, c})[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(firsts(run_op("SequenceInsert", {s, c, int64s({}, {0})})[0]), (std::vector<float>{3, 1, 2}));
  EXPECT_EQ(firsts(run_op("SequenceInsert", {s, c, int64s({}, {-1})})[0]), (std::vector<float>{1, 3, 2}));
  EXPECT_EQ(firsts(run_op("SequenceInsert", {s, c, int64s({}, {2})})[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(op_error("SequenceInsert", {s, c, int64s({}, {3})}).find("out of range [-2, 2]"), std::string::npos);
  EXPECT_NE(op_error("SequenceInsert", {s, int64s({1}, {7})}).find("cannot take a int64 tensor"), std::string::npos);
  // The input sequence is unchanged (values are immutable).
  EXPECT_EQ(firsts(s), (std::vector<float>{1, 2}));
  // Erase: the last by default, else the position.
  EXPECT_EQ(firsts(run_op("SequenceErase", {s})[0]), (std::vector<float>{1}));
  EXPECT_EQ(firsts(run_op("SequenceErase", {s, int64s({}, {-2})})[0]), (std::vector<float>{2}));
  EXPECT_NE(op_error("SequenceErase", {seq({})}).find("empty sequence"), std::string::npos);
  EXPECT_NE(op_error("SequenceAt", {a, int64s({}, {0})}).find("must be a sequence"), std::string::npos);
}

TEST(SequenceOps, SplitToSequence) {
  // No split: chunks of 1 along axis 1, kept as [2, 1] ([0, 3], [1, 4], [2, 5]) or squeezed to [2].
  const Tensor kept = run_op("SplitToSequence", {two_by_three()}, {attr_int("axis", 1)})[0];
  ASSERT_EQ(kept.items().size(), 3u);
  EXPECT_EQ(kept.items()[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(values(kept.items()[1]), (std::vector<float>{1, 4}));
  const Tensor squeezed =
      run_op("SplitToSequence", {two_by_three()}, {attr_int("axis", -1), attr_int("keepdims", 0)})[0];
  ASSERT_EQ(squeezed.items().size(), 3u);
  EXPECT_EQ(squeezed.items()[2].shape(), (Shape{2}));
  EXPECT_EQ(values(squeezed.items()[2]), (std::vector<float>{2, 5}));
  // A scalar split of 2 along axis 1: [[0, 1], [3, 4]] then the smaller rest [[2], [5]].
  const Tensor by_two = run_op("SplitToSequence", {two_by_three(), int64s({}, {2})}, {attr_int("axis", 1)})[0];
  ASSERT_EQ(by_two.items().size(), 2u);
  EXPECT_EQ(by_two.items()[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(by_two.items()[0]), (std::vector<float>{0, 1, 3, 4}));
  EXPECT_EQ(by_two.items()[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(values(by_two.items()[1]), (std::vector<float>{2, 5}));
  // Lengths [1, 2] along axis 1; keepdims does not apply when split is given.
  const Tensor lens = run_op("SplitToSequence", {two_by_three(), int64s({2}, {1, 2})},
                             {attr_int("axis", 1), attr_int("keepdims", 0)})[0];
  ASSERT_EQ(lens.items().size(), 2u);
  EXPECT_EQ(lens.items()[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values(lens.items()[1]), (std::vector<float>{1, 2, 4, 5}));
  // Along axis 0 (rows): [0, 1, 2] and [3, 4, 5].
  const Tensor rows = run_op("SplitToSequence", {two_by_three()})[0];
  EXPECT_EQ(values(rows.items()[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_NE(op_error("SplitToSequence", {two_by_three(), int64s({2}, {1, 1})}, {attr_int("axis", 1)})
                .find("sum to 2 but axis 1 has 3"),
            std::string::npos);
  EXPECT_NE(op_error("SplitToSequence", {two_by_three(), int64s({}, {0})}).find("must be positive"), std::string::npos);
}

TEST(SequenceOps, ConcatFromSequence) {
  // [[0], [3]] and [[1, 2], [4, 5]] along axis 1: [[0, 1, 2], [3, 4, 5]].
  const Tensor parts = seq({floats({2, 1}, {0, 3}), floats({2, 2}, {1, 2, 4, 5})});
  const Tensor joined = run_op("ConcatFromSequence", {parts}, {attr_int("axis", 1)})[0];
  EXPECT_EQ(joined.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(joined), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // Stacking [1, 2] and [3, 4]: along a new axis 0 [[1, 2], [3, 4]]; along a new last axis
  // (axis 1, or -1 of the rank-2 output) [[1, 3], [2, 4]].
  const Tensor pair = seq({floats({2}, {1, 2}), floats({2}, {3, 4})});
  const Tensor rows = run_op("ConcatFromSequence", {pair}, {attr_int("axis", 0), attr_int("new_axis", 1)})[0];
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(rows), (std::vector<float>{1, 2, 3, 4}));
  const Tensor cols = run_op("ConcatFromSequence", {pair}, {attr_int("axis", -1), attr_int("new_axis", 1)})[0];
  EXPECT_EQ(cols.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(cols), (std::vector<float>{1, 3, 2, 4}));
  // Without new_axis, axis 1 does not exist for rank-1 elements.
  EXPECT_NE(op_error("ConcatFromSequence", {pair}, {attr_int("axis", 1)}).find("axis"), std::string::npos);
  EXPECT_NE(op_error("ConcatFromSequence", {parts}, {attr_int("axis", 0)}).find("may differ only along the axis"),
            std::string::npos);
  EXPECT_NE(op_error("ConcatFromSequence", {seq({})}, {attr_int("axis", 0)}).find("empty sequence"), std::string::npos);
  // Split then concatenate along the same axis gives the input back.
  const Tensor split = run_op("SplitToSequence", {two_by_three(), int64s({}, {2})}, {attr_int("axis", 1)})[0];
  EXPECT_EQ(values(run_op("ConcatFromSequence", {split}, {attr_int("axis", 1)})[0]), values(two_by_three()));
}

// x [2, 2] -> rows -> SequenceMap(rows, k: body e * k + e) -> stacked back along axis 0.
ir::Model sequence_map_model() {
  GraphBuilder body;
  body.input("e", DType::Float, {2});
  body.input("k", DType::Float, {});
  body.node("body_mul", "Mul", {"e", "k"}, {"ek"});
  body.node("body_add", "Add", {"ek", "e"}, {"o"});
  body.output("o");
  GraphBuilder b;
  b.input("x", DType::Float, {2, 2});
  b.input("k", DType::Float, {});
  b.node("split", "SplitToSequence", {"x"}, {"rows"}, {attr_int("keepdims", 0)});
  b.node("map", "SequenceMap", {"rows", "k"}, {"mapped"}, {attr_graph("body", body.subgraph("body"))});
  b.node("count", "SequenceLength", {"mapped"}, {"n"});
  b.node("concat", "ConcatFromSequence", {"mapped"}, {"y"}, {attr_int("axis", 0), attr_int("new_axis", 1)});
  b.output("y");
  b.output("n");
  return b.model();
}

TEST(SequenceOps, SequenceMapInAGraph) {
  exec::Executor ex(sequence_map_model());
  // k = 2: each element e becomes 3e: [1, -2, 3, 4] -> [3, -6, 9, 12], two elements.
  const auto out = ex.outputs(ex.run({floats({2, 2}, {1, -2, 3, 4}), floats({}, {2})}, ex.stored_config()));
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(out[0]), (std::vector<float>{3, -6, 9, 12}));
  EXPECT_EQ(out[1].get_as_int64(0), 2);
  // A sequence as an additional input is read element by element: rows * rows + rows = [2, 6, 12, 20].
  GraphBuilder body;
  body.node("body_mul", "Mul", {"e", "f"}, {"ef"});
  body.node("body_add", "Add", {"ef", "e"}, {"o"});
  body.input("e", DType::Float, {2});
  body.input("f", DType::Float, {2});
  body.output("o");
  GraphBuilder b;
  b.input("x", DType::Float, {2, 2});
  b.node("split", "SplitToSequence", {"x"}, {"rows"}, {attr_int("keepdims", 0)});
  b.node("map", "SequenceMap", {"rows", "rows"}, {"mapped"}, {attr_graph("body", body.subgraph("body"))});
  b.node("concat", "ConcatFromSequence", {"mapped"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  exec::Executor two(b.model());
  EXPECT_EQ(values(two.outputs(two.run({floats({2, 2}, {1, 2, 3, 4})}, two.stored_config()))[0]),
            (std::vector<float>{2, 6, 12, 20}));
}

TEST(SequenceOps, SequenceMapBodyMustFitTheNode) {
  GraphBuilder body;
  body.input("e", DType::Float, {2});
  body.node("body_relu", "Relu", {"e"}, {"o"});
  body.output("o");
  GraphBuilder b;
  b.input("x", DType::Float, {2, 2});
  b.input("k", DType::Float, {});
  b.node("split", "SplitToSequence", {"x"}, {"rows"});
  b.node("map", "SequenceMap", {"rows", "k"}, {"mapped"}, {attr_graph("body", body.subgraph("body"))});
  b.node("concat", "ConcatFromSequence", {"mapped"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  try {
    exec::Executor ex(b.model());
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'map' (SequenceMap): body declares 1 input(s) but the node has 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(SequenceOps, TensorOpRefusesASequenceNamingTheNode) {
  GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.node("make", "SequenceConstruct", {"x"}, {"s"});
  b.node("relu", "Relu", {"s"}, {"y"});
  b.output("y");
  exec::Executor ex(b.model());
  EXPECT_EQ(run_error(ex, {floats({2}, {1, 2})}),
            "node 'relu' (Relu): input 0 is a sequence of 1 float32 tensor(s); the op takes tensors only");
}

TEST(SequenceOps, CalibrationNodeOnASequenceIsRefused) {
  auto model = [] {
    GraphBuilder b;
    b.input("x", DType::Float, {2});
    b.node("make", "SequenceConstruct", {"x"}, {"s"});
    b.calibration("s", {attr_floats("thresholds", {1.27f})});
    b.node("at", "SequenceAt", {"s_cal", "zero"}, {"y"});
    b.initializer("zero", int64s({}, {0}));
    b.output("y");
    return b.model();
  };
  // Found when the model runs...
  exec::Executor ex(model());
  EXPECT_EQ(run_error(ex, {floats({2}, {1, 2})}),
            "calibration node 's_HzCalibration' reads a sequence of 1 float32 tensor(s): calibration nodes quantize "
            "tensors only");
  // ... or when it is loaded, if the model declares the value's type.
  ir::Model declared = model();
  ir::Value& s = declared.graph.values[static_cast<size_t>(declared.graph.find_value("s"))];
  s.info.kind = ValueKind::Sequence;
  try {
    exec::Executor refused(std::move(declared));
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "calibration node 's_HzCalibration' reads 's', a sequence: calibration nodes quantize tensors only");
  }
}

TEST(SequenceOps, GraphInputDeclaredASequence) {
  GraphBuilder b;
  b.input("s", DType::Undefined, {});
  b.node("count", "SequenceLength", {"s"}, {"n"});
  b.output("n");
  ir::Model m = b.model();
  ir::ValueInfo& info = m.graph.values[static_cast<size_t>(m.graph.find_value("s"))].info;
  info.kind = ValueKind::Sequence;
  info.has_shape = false;
  exec::Executor ex(std::move(m));
  EXPECT_EQ(run_error(ex, {floats({2}, {1, 2})}), "input 's' is declared a sequence but was given a float32 [2]");
  const Tensor three = seq({floats({1}, {1}), floats({1}, {2}), floats({1}, {3})});
  EXPECT_EQ(ex.outputs(ex.run({three}, ex.stored_config()))[0].get_as_int64(0), 3);
}

// A sequence between a calibration node and the output: incremental runs recompute through it.
TEST(SequenceOps, IncrementalRunThroughASequence) {
  GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.node("make", "SequenceConstruct", {"x_cal", "x"}, {"s"});
  b.node("concat", "ConcatFromSequence", {"s"}, {"y"}, {attr_int("axis", 0)});
  b.output("y");
  exec::Executor ex(b.model());
  // Threshold 1.27 with int8: scale 0.01, so 0.123 -> 0.12 quantized; the second copy stays 0.123.
  const Tensor x = floats({2}, {0.123f, -1});
  const exec::RunRecord on = ex.run({x}, ex.uniform_config(true), {}, true);
  const std::vector<float> quantized = values(ex.outputs(on)[0]);
  EXPECT_NEAR(quantized[0], 0.12f, 1e-6f);
  EXPECT_NEAR(quantized[2], 0.123f, 1e-7f);
  exec::RunStats stats;
  const exec::RunRecord off = ex.run_incremental(on, ex.uniform_config(false), {}, &stats);
  EXPECT_EQ(values(ex.outputs(off)[0]), (std::vector<float>{0.123f, -1, 0.123f, -1}));
  EXPECT_EQ(stats.nodes_executed, 3);
  // The same configuration again: nothing differs, nothing runs.
  exec::RunStats same;
  ex.run_incremental(on, ex.uniform_config(true), {}, &same);
  EXPECT_EQ(same.nodes_executed, 0);
}

}  // namespace
}  // namespace ptq
