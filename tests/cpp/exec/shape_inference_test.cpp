#include "exec/shape_inference.h"

#include <gtest/gtest.h>

#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_float;
using test::attr_floats;
using test::attr_int;
using test::attr_ints;
using test::attr_string;

namespace {

// Runs inference on a builder's graph and returns the info of `name`.
struct Inferred {
  ir::Graph graph;
  std::vector<ir::ValueInfo> infos;
  const ir::ValueInfo& operator[](const std::string& name) const {
    return infos.at(static_cast<size_t>(graph.find_value(name)));
  }
};

Inferred infer(test::GraphBuilder& b, int opset = 17) {
  Inferred r{b.graph(), {}};
  for (auto& n : r.graph.nodes)
    if (n.domain.empty()) n.opset = opset;
  r.infos = exec::infer_shapes(r.graph);
  return r;
}

Shape dims(const ir::ValueInfo& v) {
  EXPECT_TRUE(v.has_shape) << v.name << " has no inferred shape";
  return v.dims;
}

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_int64s({n}, v);
}

}  // namespace

TEST(ShapeInference, ConvStridesPadsDilations) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 3, 10, 10});
  b.initializer("w", Tensor::zeros(DType::Float, {8, 3, 3, 3}));
  // (10 + 1 + 1 - 3) / 2 + 1 = 5
  b.node("c1", "Conv", {"x", "w"}, {"a"}, {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2})});
  // dilation 2: extent 5; (10 - 5) / 1 + 1 = 6; SAME_UPPER stride 3: ceil(10 / 3) = 4
  b.node("c2", "Conv", {"x", "w"}, {"b"}, {attr_ints("dilations", {2, 2})});
  b.node("c3", "Conv", {"x", "w"}, {"c"}, {attr_string("auto_pad", "SAME_UPPER"), attr_ints("strides", {3, 3})});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["a"]), (Shape{1, 8, 5, 5}));
  EXPECT_EQ(r["a"].dtype, DType::Float);
  EXPECT_EQ(dims(r["b"]), (Shape{1, 8, 6, 6}));
  EXPECT_EQ(dims(r["c"]), (Shape{1, 8, 4, 4}));
}

TEST(ShapeInference, ConvTransposeGroupsAndOutputPadding) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4, 5, 5});
  b.initializer("w", Tensor::zeros(DType::Float, {4, 2, 3, 3}));
  // channels 2 * group 2 = 4; 2 * (5 - 1) + 1 + 3 - 2 = 10
  b.node("t1", "ConvTranspose", {"x", "w"}, {"a"},
         {attr_int("group", 2), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1}),
          attr_ints("output_padding", {1, 1})});
  b.node("t2", "ConvTranspose", {"x", "w"}, {"b"}, {attr_ints("output_shape", {7, 9})});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["a"]), (Shape{1, 4, 10, 10}));
  EXPECT_EQ(dims(r["b"]), (Shape{1, 2, 7, 9}));
}

TEST(ShapeInference, PoolingCeilModeDropsWindowInPadding) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2, 6, 4});
  // H: room 6-3 = 3: floor 3/2+1 = 2, ceil 2+1 = 3. W: pad end 1, k 2: room 3 -> ceil 3, but the third
  // window would start at 4 >= 4 + 0 (inside the padding) -> 2.
  b.node("p1", "MaxPool", {"x"}, {"a", "ai"}, {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 2}),
                                              attr_ints("pads", {0, 0, 0, 1}), attr_int("ceil_mode", 1)});
  b.node("p2", "AveragePool", {"x"}, {"b"}, {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 2})});
  b.node("p3", "GlobalAveragePool", {"x"}, {"c"});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["a"]), (Shape{1, 2, 3, 2}));
  EXPECT_EQ(r["ai"].dtype, DType::Int64);
  EXPECT_EQ(dims(r["b"]), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(dims(r["c"]), (Shape{1, 2, 1, 1}));
}

TEST(ShapeInference, BroadcastMatMulGemm) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2, 1, 4});
  b.input("y", DType::Float, {3, 1});
  b.input("m", DType::Float, {5, 2, 3});
  b.input("v", DType::Float, {3});
  b.initializer("k", Tensor::zeros(DType::Float, {3, 4}));
  b.initializer("g", Tensor::zeros(DType::Float, {6, 3}));
  b.node("add", "Add", {"x", "y"}, {"s"});
  b.node("eq", "Equal", {"x", "y"}, {"e"});
  b.node("mm", "MatMul", {"m", "k"}, {"p"});
  b.node("mv", "MatMul", {"v", "k"}, {"q"});
  b.node("gemm", "Gemm", {"y", "g"}, {"h"}, {attr_int("transA", 1), attr_int("transB", 1)});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["s"]), (Shape{2, 3, 4}));
  EXPECT_EQ(r["e"].dtype, DType::Bool);
  EXPECT_EQ(dims(r["p"]), (Shape{5, 2, 4}));
  EXPECT_EQ(dims(r["q"]), (Shape{4}));
  EXPECT_EQ(dims(r["h"]), (Shape{1, 6}));
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape: folded with the real kernels.
TEST(ShapeInference, ShapeSubgraphIsFolded) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2, 3, 4});
  b.initializer("i0", Tensor::from_int64s({}, {0}));
  b.initializer("ax", ints({0}));
  b.initializer("m1", ints({-1}));
  b.node("shape", "Shape", {"x"}, {"s"});
  b.node("gather", "Gather", {"s", "i0"}, {"g"});
  b.node("unsq", "Unsqueeze", {"g", "ax"}, {"u"});
  b.node("cat", "Concat", {"u", "m1"}, {"c"}, {attr_int("axis", 0)});
  b.node("reshape", "Reshape", {"x", "c"}, {"y"});
  b.node("shape2", "Shape", {"x"}, {"tail"}, {attr_int("start", -2)});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["s"]), (Shape{3}));
  EXPECT_EQ(r["s"].dtype, DType::Int64);
  EXPECT_EQ(dims(r["g"]), (Shape{}));
  EXPECT_EQ(dims(r["c"]), (Shape{2}));
  EXPECT_EQ(dims(r["y"]), (Shape{2, 12}));
  EXPECT_EQ(dims(r["tail"]), (Shape{2}));
}

TEST(ShapeInference, MovementOps) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2, 3, 4, 5});
  b.initializer("sq", ints({1}));
  b.initializer("uq", ints({0, -1}));
  b.initializer("rs", ints({0, 0, -1}));
  b.node("t", "Transpose", {"x"}, {"t"}, {attr_ints("perm", {0, 2, 3, 1})});
  b.node("tr", "Transpose", {"x"}, {"tr"});
  b.node("f", "Flatten", {"x"}, {"f"}, {attr_int("axis", 2)});
  b.node("r", "Reshape", {"x", "rs"}, {"r"});
  b.node("u", "Unsqueeze", {"x", "uq"}, {"u"});
  b.node("g", "GlobalMaxPool", {"x"}, {"gp"});
  b.node("s", "Squeeze", {"gp"}, {"s"});  // no axes: every 1 goes
  b.node("s2", "Squeeze", {"u", "sq"}, {"s2"});
  b.node("e", "Expand", {"y0", "ex"}, {"e"});
  b.input("y0", DType::Float, {3, 1});
  b.initializer("ex", ints({2, 1, 6}));
  b.node("tile", "Tile", {"x", "rep"}, {"ti"});
  b.initializer("rep", ints({1, 2, 1, 3}));
  const auto r = infer(b);
  EXPECT_EQ(dims(r["t"]), (Shape{2, 4, 5, 3}));
  EXPECT_EQ(dims(r["tr"]), (Shape{5, 4, 3, 2}));
  EXPECT_EQ(dims(r["f"]), (Shape{6, 20}));
  EXPECT_EQ(dims(r["r"]), (Shape{2, 3, 20}));
  EXPECT_EQ(dims(r["u"]), (Shape{1, 2, 3, 4, 5, 1}));
  EXPECT_EQ(dims(r["s"]), (Shape{2, 3}));
  EXPECT_EQ(dims(r["s2"]), (Shape{1, 3, 4, 5, 1}));
  EXPECT_EQ(dims(r["e"]), (Shape{2, 3, 6}));
  EXPECT_EQ(dims(r["ti"]), (Shape{2, 6, 4, 15}));
}

TEST(ShapeInference, SliceWithConstants) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {10, 8});
  b.initializer("st", ints({1, -3}));
  b.initializer("en", ints({100, 8}));
  b.initializer("ax", ints({0, 1}));
  b.initializer("sp", ints({2, 1}));
  b.initializer("st2", ints({-1}));
  b.initializer("en2", ints({INT64_MIN}));
  b.initializer("ax2", ints({0}));
  b.initializer("sp2", ints({-3}));
  // rows 1,3,5,7,9 -> 5; cols 5..7 -> 3. Reverse with step -3 from 9: 9,6,3,0 -> 4.
  b.node("s", "Slice", {"x", "st", "en", "ax", "sp"}, {"y"});
  b.node("s2", "Slice", {"x", "st2", "en2", "ax2", "sp2"}, {"z"});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["y"]), (Shape{5, 3}));
  EXPECT_EQ(dims(r["z"]), (Shape{4, 8}));
}

TEST(ShapeInference, ResizePadSplitReduceGather) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 3, 5, 7});
  b.initializer("scales", Tensor::from_floats({4}, {1, 1, 2, 1.5f}));
  b.initializer("sizes", ints({1, 3, 9, 4}));
  b.initializer("pads", ints({0, 0, 1, 2, 0, 0, 3, 4}));
  b.initializer("split", ints({1, 2}));
  b.initializer("idx", Tensor::from_int64s({2, 2}, {0, 1, 2, 0}));
  b.node("r1", "Resize", {"x", "", "scales"}, {"r1"});
  b.node("r2", "Resize", {"x", "", "", "sizes"}, {"r2"});
  b.node("p", "Pad", {"x", "pads"}, {"p"});
  b.node("sp", "Split", {"x", "split"}, {"a", "b"}, {attr_int("axis", 1)});
  b.node("sp3", "Split", {"x"}, {"c0", "c1", "c2"}, {attr_int("axis", 1)});
  b.node("rm", "ReduceMean", {"x"}, {"m"}, {attr_ints("axes", {2, -1})});
  b.node("rs", "ReduceSum", {"x", "ax23"}, {"s"}, {attr_int("keepdims", 0)});
  b.initializer("ax23", ints({2, 3}));
  b.node("g", "Gather", {"x", "idx"}, {"g"}, {attr_int("axis", 2)});
  b.node("am", "ArgMax", {"x"}, {"am"}, {attr_int("axis", 1), attr_int("keepdims", 0)});
  const auto r = infer(b, 13);
  EXPECT_EQ(dims(r["r1"]), (Shape{1, 3, 10, 10}));  // 7 * 1.5 = 10.5 -> 10
  EXPECT_EQ(dims(r["r2"]), (Shape{1, 3, 9, 4}));
  EXPECT_EQ(dims(r["p"]), (Shape{1, 3, 9, 13}));
  EXPECT_EQ(dims(r["a"]), (Shape{1, 1, 5, 7}));
  EXPECT_EQ(dims(r["b"]), (Shape{1, 2, 5, 7}));
  EXPECT_EQ(dims(r["c2"]), (Shape{1, 1, 5, 7}));
  EXPECT_EQ(dims(r["m"]), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(dims(r["s"]), (Shape{1, 3}));
  EXPECT_EQ(dims(r["g"]), (Shape{1, 3, 2, 2, 7}));
  EXPECT_EQ(dims(r["am"]), (Shape{1, 5, 7}));
  EXPECT_EQ(r["am"].dtype, DType::Int64);
}

TEST(ShapeInference, OlderOpsetsReadAttributes) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4, 2, 3});
  b.initializer("sc", Tensor::from_floats({4}, {1, 1, 2, 2}));
  b.node("u", "Upsample", {"x", "sc"}, {"u"});
  b.node("s", "Squeeze", {"x"}, {"s"}, {attr_ints("axes", {0})});
  b.node("sl", "Slice", {"x"}, {"sl"}, {attr_ints("starts", {1}), attr_ints("ends", {3}), attr_ints("axes", {1})});
  b.node("sp", "Split", {"x"}, {"a", "b"}, {attr_int("axis", 1), attr_ints("split", {3, 1})});
  b.node("p", "Pad", {"x"}, {"p"}, {attr_ints("pads", {0, 0, 1, 1, 0, 0, 1, 1})});
  const auto r = infer(b, 9);
  EXPECT_EQ(dims(r["u"]), (Shape{1, 4, 4, 6}));
  EXPECT_EQ(dims(r["s"]), (Shape{4, 2, 3}));
  EXPECT_EQ(dims(r["sl"]), (Shape{1, 2, 2, 3}));
  EXPECT_EQ(dims(r["a"]), (Shape{1, 3, 2, 3}));
  EXPECT_EQ(dims(r["p"]), (Shape{1, 4, 4, 5}));
}

TEST(ShapeInference, DtypesAndConstants) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2, 5});
  b.initializer("shape", ints({2, 3}));
  b.initializer("k", ints({2}));
  b.initializer("start", Tensor::from_int64s({}, {1}));
  b.initializer("limit", Tensor::from_int64s({}, {10}));
  b.initializer("delta", Tensor::from_int64s({}, {3}));
  b.node("cast", "Cast", {"x"}, {"c"}, {attr_int("to", static_cast<int64_t>(DType::Int32))});
  b.node("cos", "ConstantOfShape", {"shape"}, {"z"});
  b.node("range", "Range", {"start", "limit", "delta"}, {"rg"});  // 1, 4, 7
  b.node("topk", "TopK", {"x", "k"}, {"tv", "ti"});
  b.node("sz", "Size", {"x"}, {"n"});
  const auto r = infer(b);
  EXPECT_EQ(r["c"].dtype, DType::Int32);
  EXPECT_EQ(dims(r["c"]), (Shape{2, 5}));
  EXPECT_EQ(r["z"].dtype, DType::Float);
  EXPECT_EQ(dims(r["z"]), (Shape{2, 3}));
  EXPECT_EQ(dims(r["rg"]), (Shape{3}));
  EXPECT_EQ(dims(r["tv"]), (Shape{2, 2}));
  EXPECT_EQ(r["ti"].dtype, DType::Int64);
  EXPECT_EQ(dims(r["n"]), (Shape{}));
}

TEST(ShapeInference, SymbolicBatchIsCarried) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {-1, 3, 8, 8});
  b.initializer("w", Tensor::zeros(DType::Float, {4, 3, 3, 3}));
  b.initializer("bias", Tensor::zeros(DType::Float, {1, 4, 1, 1}));
  b.node("conv", "Conv", {"x", "w"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})});
  b.node("add", "Add", {"c", "bias"}, {"a"});
  b.node("flat", "Flatten", {"a"}, {"f"});
  ir::Graph g = b.graph();
  g.values[static_cast<size_t>(g.find_value("x"))].info.dim_params = {"N", "", "", ""};
  const auto infos = exec::infer_shapes(g);
  const auto& a = infos[static_cast<size_t>(g.find_value("a"))];
  EXPECT_EQ(a.dims, (Shape{-1, 4, 8, 8}));
  EXPECT_EQ(a.dim_params[0], "N");
  const auto& f = infos[static_cast<size_t>(g.find_value("f"))];
  EXPECT_EQ(f.dims, (Shape{-1, 256}));
  EXPECT_EQ(f.dim_params[0], "N");
}

TEST(ShapeInference, UnknownOpsAndProbes) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 3, 4, 4});
  b.initializer("w", Tensor::zeros(DType::Float, {2, 3, 1, 1}));
  // No rule: probed with the real kernel on zeros (weight form = 1x1 conv to 2 channels).
  b.node("pre", "HzPreprocess", {"x", "w"}, {"p"}, {}, "horizon");
  b.node("mystery", "Mystery", {"p"}, {"m"}, {}, "custom");
  b.node("relu", "Relu", {"m"}, {"r"});
  const auto r = infer(b);
  EXPECT_EQ(dims(r["p"]), (Shape{1, 2, 4, 4}));
  EXPECT_FALSE(r["m"].has_shape);
  EXPECT_EQ(r["m"].dtype, DType::Undefined);
  EXPECT_FALSE(r["r"].has_shape);
}

TEST(ShapeInference, DeclaredValueInfoFillsGaps) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.node("mystery", "Mystery", {"x"}, {"m"}, {}, "custom");
  ir::Graph g = b.graph();
  auto& m = g.values[static_cast<size_t>(g.find_value("m"))].info;
  m.dtype = DType::Float;
  m.dims = {7, 7};
  m.dim_params = {"", ""};
  m.has_shape = true;
  const auto infos = exec::infer_shapes(g);
  EXPECT_EQ(infos[static_cast<size_t>(g.find_value("m"))].dims, (Shape{7, 7}));
}
