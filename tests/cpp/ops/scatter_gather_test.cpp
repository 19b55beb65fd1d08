// GatherND, ScatterElements / Scatter: ONNX spec examples and hand-worked edge cases (negative
// indices, batch_dims, duplicate indices with a reduction, out-of-range indices, empty indices).
#include <string>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::attr_string;
using test::expect_tensor_near;
using test::run_op;
using test::floats;
using test::int64s;

// Expects the op to throw an Error naming the node and containing `part`.
void expect_node_error(const std::string& op, const std::vector<Tensor>& in, std::vector<ir::Attribute> attrs,
                       const std::string& part, int opset = 17) {
  try {
    run_op(op, in, std::move(attrs), 1, opset);
    ADD_FAILURE() << op << " did not throw";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(op + "_test"), std::string::npos) << m;
    EXPECT_NE(m.find(part), std::string::npos) << m;
  }
}

TEST(ScatterGather, GatherNDSpecExamples) {
  // Example 1: data [[0,1],[2,3]], indices [[0,0],[1,1]] -> [0, 3].
  const Tensor d = floats({2, 2}, {0, 1, 2, 3});
  expect_tensor_near(run_op("GatherND", {d, int64s({2, 2}, {0, 0, 1, 1})})[0], {2}, {0, 3});
  // Example 2: indices [[1],[0]] take whole rows -> [[2,3],[0,1]].
  expect_tensor_near(run_op("GatherND", {d, int64s({2, 1}, {1, 0})})[0], {2, 2}, {2, 3, 0, 1});
  // Negative indices count from the end: [[-1,-2]] is [1, 0] -> 2.
  expect_tensor_near(run_op("GatherND", {d, int64s({1, 2}, {-1, -2})})[0], {1}, {2});
}

TEST(ScatterGather, GatherNDBatchDims) {
  // Example 5: data [2,2,2] = [[[0,1],[2,3]],[[4,5],[6,7]]], indices [[1],[0]], batch_dims 1
  // -> [[2,3],[4,5]].
  const Tensor d = floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_tensor_near(run_op("GatherND", {d, int64s({2, 1}, {1, 0})}, {attr_int("batch_dims", 1)})[0], {2, 2},
                     {2, 3, 4, 5});
}

TEST(ScatterGather, GatherNDErrorsNameTheNode) {
  const Tensor d = floats({2, 2}, {0, 1, 2, 3});
  expect_node_error("GatherND", {d, int64s({1, 2}, {0, 2})}, {}, "index 2 is out of range for a dim of 2");
  expect_node_error("GatherND", {d, int64s({1, 3}, {0, 0, 0})}, {}, "indices last dim 3");
  expect_node_error("GatherND", {d, int64s({1, 1}, {0})}, {attr_int("batch_dims", 2)}, "batch_dims");
}

TEST(ScatterGather, GatherNDEmptyIndices) {
  const Tensor d = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor y = run_op("GatherND", {d, int64s({0, 1}, {})})[0];
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(ScatterGather, ScatterElementsSpecExamples) {
  // Example 1 (axis 0).
  const Tensor data = floats({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor idx = int64s({2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor upd = floats({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  expect_tensor_near(run_op("ScatterElements", {data, idx, upd})[0], {3, 3},
                     {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f});
  // Example 2 (axis 1) with a negative index: -2 is position 3 of 5.
  const Tensor row = floats({1, 5}, {1, 2, 3, 4, 5});
  expect_tensor_near(run_op("ScatterElements", {row, int64s({1, 2}, {1, -2}), floats({1, 2}, {1.1f, 2.1f})},
                            {attr_int("axis", 1)})[0],
                     {1, 5}, {1, 1.1f, 3, 2.1f, 5});
  // The opset 10 name behaves the same.
  expect_tensor_near(run_op("Scatter", {row, int64s({1, 2}, {1, 3}), floats({1, 2}, {1.1f, 2.1f})}, {attr_int("axis", 1)}, 1,
                            10)[0],
                     {1, 5}, {1, 1.1f, 3, 2.1f, 5});
}

TEST(ScatterGather, ScatterElementsDuplicateIndicesReduce) {
  // Both updates land on element 1: add gives 2 + 1.1 + 2.1, mul 2 * 1.1 * 2.1 (opset 16).
  const Tensor row = floats({1, 3}, {1, 2, 3});
  const Tensor idx = int64s({1, 2}, {1, 1});
  const Tensor upd = floats({1, 2}, {1.1f, 2.1f});
  expect_tensor_near(run_op("ScatterElements", {row, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "add")},
                            1, 16)[0],
                     {1, 3}, {1, 2 + 1.1f + 2.1f, 3});
  expect_tensor_near(run_op("ScatterElements", {row, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "mul")},
                            1, 16)[0],
                     {1, 3}, {1, 2 * 1.1f * 2.1f, 3});
  // max/min arrive with opset 18; at 16 they are rejected, naming the value.
  expect_node_error("ScatterElements", {row, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "max")},
                    "unsupported reduction 'max'", 16);
  expect_tensor_near(run_op("ScatterElements", {row, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "max")},
                            1, 18)[0],
                     {1, 3}, {1, 2.1f, 3});
}

TEST(ScatterGather, ScatterElementsInt64AndErrors) {
  const Tensor data = int64s({4}, {10, 20, 30, 40});
  const Tensor y = run_op("ScatterElements", {data, int64s({2}, {-1, 0}), int64s({2}, {7, 8})})[0];
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{8, 20, 30, 7}));
  expect_node_error("ScatterElements", {data, int64s({1}, {4}), int64s({1}, {1})}, {}, "index 4 is out of range");
  expect_node_error("ScatterElements", {data, int64s({1}, {-5}), int64s({1}, {1})}, {}, "index -5 is out of range");
  expect_node_error("ScatterElements", {data, int64s({2}, {0, 1}), int64s({1}, {1})}, {}, "updates shape");
  // No indices: the data comes back unchanged.
  EXPECT_EQ(run_op("ScatterElements", {data, int64s({0}, {}), int64s({0}, {})})[0].to_int64_vector(),
            (std::vector<int64_t>{10, 20, 30, 40}));
}

}  // namespace
}  // namespace ptq
