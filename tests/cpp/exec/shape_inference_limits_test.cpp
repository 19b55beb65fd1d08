// Shape inference on attributes chosen to overflow int64 or to divide by zero: the rules must leave
// such dims unknown (the kernel reports the size when the model runs), never overflow (UBSan), trap
// on a division by zero (a wasm RuntimeError) or allocate a rank read from a huge dim.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "graph_builder.h"
#include "exec/shape_inference.h"
#include "ops/op_test_util.h"

using namespace ptq;
using test::attr_int;
using test::attr_ints;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

const ir::ValueInfo& info_of(const ir::Graph& g, const std::vector<ir::ValueInfo>& infos, const std::string& name) {
  return infos.at(static_cast<size_t>(g.find_value(name)));
}

Tensor ints(std::vector<int64_t> v) { return Tensor::from_int64s({static_cast<int64_t>(v.size())}, v); }

}  // namespace

TEST(ShapeInferenceLimits, OverflowingWindowsLeaveTheDimUnknown) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 1, 4, 4});
  b.initializer("w", Tensor::zeros(DType::Float, {1, 1, 3, 3}));
  b.node("c1", "Conv", {"x", "w"}, {"y1"}, {attr_ints("pads", {kMax, 0, kMax, 0})});
  b.node("c2", "Conv", {"x", "w"}, {"y2"}, {attr_ints("dilations", {kMax, 1})});
  b.node("c3", "Conv", {"x", "w"}, {"y3"}, {attr_ints("strides", {0, 1}), attr_ints("kernel_shape", {3, 3})});
  b.node("c4", "Conv", {"x", "w"}, {"y4"}, {attr_ints("strides", {0, 0}), test::attr_string("auto_pad", "SAME_UPPER")});
  b.node("t1", "ConvTranspose", {"x", "w"}, {"y5"}, {attr_ints("strides", {kMax, 1})});
  b.node("p1", "MaxPool", {"x"}, {"y6"}, {attr_ints("kernel_shape", {kMax, 2}), attr_ints("pads", {kMax, 0, kMax, 0})});
  // pads 1e9: a valid, representable but huge shape is inferred as it is.
  b.node("c5", "Conv", {"x", "w"}, {"y7"}, {attr_ints("pads", {1000000000, 0, 1000000000, 0})});
  ir::Graph g = b.graph();
  const auto infos = exec::infer_shapes(g);
  for (const char* name : {"y1", "y2", "y3", "y4", "y5", "y6"}) {
    const ir::ValueInfo& v = info_of(g, infos, name);
    const bool some_unknown = !v.has_shape || std::any_of(v.dims.begin(), v.dims.end(), [](int64_t d) { return d < 0; });
    EXPECT_TRUE(some_unknown) << name;
  }
  EXPECT_EQ(info_of(g, infos, "y7").dims, (Shape{1, 1, 2000000002, 2}));
}

TEST(ShapeInferenceLimits, MovementRulesWithHugeOrZeroAttributes) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4, 2, 2});
  b.node("d2s", "DepthToSpace", {"x"}, {"a"}, {attr_int("blocksize", 0)});
  b.node("d2s_big", "DepthToSpace", {"x"}, {"a2"}, {attr_int("blocksize", int64_t{1} << 32)});
  b.initializer("pads", ints({0, 0, kMax, 0, 0, 0, kMax, 0}));
  b.node("pad", "Pad", {"x", "pads"}, {"b"});
  b.initializer("reps", ints({kMax, kMax, 1, 1}));
  b.node("tile", "Tile", {"x", "reps"}, {"c"});
  b.initializer("steps", ints({std::numeric_limits<int64_t>::min()}));
  b.initializer("starts", ints({-1}));
  b.initializer("ends", ints({std::numeric_limits<int64_t>::min()}));
  b.initializer("axes", ints({1}));
  b.node("slice", "Slice", {"x", "starts", "ends", "axes", "steps"}, {"d"});
  b.initializer("r0", Tensor::from_floats({}, {0}));
  b.initializer("r1", Tensor::from_floats({}, {1e30f}));
  b.initializer("r2", Tensor::from_floats({}, {1}));
  b.node("range", "Range", {"r0", "r1", "r2"}, {"e"});
  b.initializer("scales", Tensor::from_floats({4}, {1, 1, 1e30f, 1}));
  b.node("resize", "Resize", {"x", "", "scales"}, {"f"});
  // A shape input whose length is 2^40: no rank of 2^40 unknown dims is allocated.
  b.input("big_shape", DType::Int64, {int64_t{1} << 40});
  b.node("cos", "ConstantOfShape", {"big_shape"}, {"g"});
  b.node("reshape", "Reshape", {"x", "big_shape"}, {"h"});
  ir::Graph g = b.graph();
  const auto infos = exec::infer_shapes(g);
  EXPECT_EQ(info_of(g, infos, "d").dims, (Shape{1, 1, 2, 2}));  // one element: the last channel
  EXPECT_FALSE(info_of(g, infos, "g").has_shape);
  EXPECT_FALSE(info_of(g, infos, "h").has_shape);
  for (const char* name : {"a", "a2", "b", "c", "e", "f"}) {
    const ir::ValueInfo& v = info_of(g, infos, name);
    const bool some_unknown = !v.has_shape || std::any_of(v.dims.begin(), v.dims.end(), [](int64_t d) { return d < 0; });
    EXPECT_TRUE(some_unknown) << name;
  }
}
