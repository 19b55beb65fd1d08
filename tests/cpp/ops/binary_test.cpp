// Binary arithmetic and the broadcast planner. Expected values are worked by hand or taken from the
// ONNX operator examples; the broadcasting sweep checks the fast paths against a naive index walk.
#include <cmath>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::expect_tensor_near;
using test::run_op;

Tensor int32s(Shape shape, const std::vector<int32_t>& v) {
  Tensor t(DType::Int32, std::move(shape));
  std::copy(v.begin(), v.end(), t.mutable_data<int32_t>());
  return t;
}
Tensor uint8s(Shape shape, const std::vector<uint8_t>& v) {
  Tensor t(DType::UInt8, std::move(shape));
  std::copy(v.begin(), v.end(), t.mutable_data<uint8_t>());
  return t;
}
std::vector<int64_t> ints(const Tensor& t) { return t.to_int64_vector(); }

TEST(BroadcastShape, NumpyRules) {
  EXPECT_EQ(ops::broadcast_shape({3, 4, 5}, {5}), (Shape{3, 4, 5}));
  EXPECT_EQ(ops::broadcast_shape({1, 4, 1, 6}, {3, 1, 5, 6}), (Shape{3, 4, 5, 6}));
  EXPECT_EQ(ops::broadcast_shape({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(ops::broadcast_shape({0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_THROW(ops::broadcast_shape({3, 4}, {3}), Error);
}

TEST(BroadcastPlan, CollapsesPerChannelBias) {
  // [2,3,4,5] + [3,1,1]: N (bias held), C (bias advances), H*W merged into one run of 20.
  const Shape x{2, 3, 4, 5}, b{3, 1, 1};
  const auto plan = ops::make_broadcast_plan<2>({&x, &b});
  EXPECT_EQ(plan.out_shape, x);
  EXPECT_EQ(plan.inner, 20);
  EXPECT_TRUE(plan.inner_advances[0]);
  EXPECT_FALSE(plan.inner_advances[1]);
  EXPECT_EQ(plan.outer_dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(plan.outer_strides[1][1], 1);  // bias advances by one per channel
  EXPECT_EQ(plan.outer_strides[0][1], 0);  // and restarts per batch item
}

TEST(BroadcastPlan, EqualShapesAreOneRun) {
  const Shape s{2, 3, 4};
  const auto plan = ops::make_broadcast_plan<2>({&s, &s});
  EXPECT_EQ(plan.inner, 24);
  EXPECT_TRUE(plan.outer_dims.empty());
  EXPECT_TRUE(plan.all_advance());
}

TEST(Binary, AddSameShapeAndSpecExample) {
  auto y = run_op("Add", {Tensor::from_floats({3}, {1, 2, 3}), Tensor::from_floats({3}, {4, 5, 6})});
  expect_tensor_near(y[0], {3}, {5, 7, 9});
}

TEST(Binary, SubTrailingBroadcast) {
  // [[1,2,3],[4,5,6]] - [1,1,2]
  auto y = run_op("Sub", {Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::from_floats({3}, {1, 1, 2})});
  expect_tensor_near(y[0], {2, 3}, {0, 1, 1, 3, 4, 4});
}

TEST(Binary, PerChannelBias) {
  // x[1,2,2,2] = 0..7, bias [2,1,1] = {10, 20}
  auto y = run_op("Add", {Tensor::from_floats({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
                          Tensor::from_floats({2, 1, 1}, {10, 20})});
  expect_tensor_near(y[0], {1, 2, 2, 2}, {10, 11, 12, 13, 24, 25, 26, 27});
}

TEST(Binary, ScalarOperandOnEitherSide) {
  auto y = run_op("Mul", {Tensor::from_floats({3}, {1, 2, 3}), Tensor::from_floats({}, {2})});
  expect_tensor_near(y[0], {3}, {2, 4, 6});
  auto z = run_op("Div", {Tensor::from_floats({}, {6}), Tensor::from_floats({3}, {1, 2, 3})});
  expect_tensor_near(z[0], {3}, {6, 3, 2});
}

TEST(Binary, MultidirectionalBroadcast) {
  // [3,1] * [1,2] -> [3,2]: rows {1,2,3} times columns {10,100}
  auto y = run_op("Mul", {Tensor::from_floats({3, 1}, {1, 2, 3}), Tensor::from_floats({1, 2}, {10, 100})});
  expect_tensor_near(y[0], {3, 2}, {10, 100, 20, 200, 30, 300});
}

TEST(Binary, IncompatibleShapesNameTheNode) {
  try {
    run_op("Add", {Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::from_floats({2}, {1, 2})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Add_test"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
}

TEST(Binary, MixedDtypesRejected) {
  EXPECT_THROW(run_op("Add", {Tensor::from_floats({1}, {1}), Tensor::from_int64s({1}, {1})}), Error);
}

TEST(Binary, Int64ShapeArithmetic) {
  const Tensor a = Tensor::from_int64s({4}, {7, -7, 9, 1});
  const Tensor b = Tensor::from_int64s({4}, {2, 2, -4, 3});
  auto add = run_op("Add", {a, b});
  EXPECT_EQ(add[0].dtype(), DType::Int64);
  EXPECT_EQ(ints(add[0]), (std::vector<int64_t>{9, -5, 5, 4}));
  EXPECT_EQ(ints(run_op("Sub", {a, b})[0]), (std::vector<int64_t>{5, -9, 13, -2}));
  EXPECT_EQ(ints(run_op("Mul", {a, b})[0]), (std::vector<int64_t>{14, -14, -36, 3}));
  // Integer Div truncates toward zero: -7/2 = -3, 9/-4 = -2.
  EXPECT_EQ(ints(run_op("Div", {a, b})[0]), (std::vector<int64_t>{3, -3, -2, 0}));
}

TEST(Binary, Int32WithScalarAndDivByZero) {
  auto y = run_op("Div", {int32s({3}, {10, -9, 5}), int32s({}, {3})});
  EXPECT_EQ(y[0].dtype(), DType::Int32);
  EXPECT_EQ(ints(y[0]), (std::vector<int64_t>{3, -3, 1}));
  // x/0 is undefined in ONNX; we return 0 instead of trapping.
  EXPECT_EQ(ints(run_op("Div", {int32s({1}, {5}), int32s({1}, {0})})[0]), (std::vector<int64_t>{0}));
}

TEST(Binary, IntegerOverflowWraps) {
  EXPECT_EQ(ints(run_op("Add", {uint8s({2}, {250, 3}), uint8s({2}, {10, 4})})[0]), (std::vector<int64_t>{4, 7}));
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ints(run_op("Add", {Tensor::from_int64s({1}, {max}), Tensor::from_int64s({1}, {1})})[0]),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(Binary, PowExamples) {
  // ONNX example: [1,2,3] ** [4,5,6] = [1,32,729]; ** scalar 2 = [1,4,9].
  expect_tensor_near(run_op("Pow", {Tensor::from_floats({3}, {1, 2, 3}), Tensor::from_floats({3}, {4, 5, 6})})[0],
                     {3}, {1, 32, 729});
  expect_tensor_near(run_op("Pow", {Tensor::from_floats({3}, {1, 2, 3}), Tensor::from_floats({}, {2})})[0], {3},
                     {1, 4, 9});
  expect_tensor_near(run_op("Pow", {Tensor::from_floats({2}, {4, 2}), Tensor::from_floats({}, {0.5f})})[0], {2},
                     {2, 1.41421356f});
}

TEST(Binary, PowMixedTypesKeepBaseType) {
  auto f = run_op("Pow", {Tensor::from_floats({3}, {1, 2, 3}), Tensor::from_int64s({3}, {4, 5, 6})});
  EXPECT_EQ(f[0].dtype(), DType::Float);
  expect_tensor_near(f[0], {3}, {1, 32, 729});
  auto i = run_op("Pow", {Tensor::from_int64s({3}, {1, 2, 3}), Tensor::from_floats({3}, {4, 5, 0.5f})});
  EXPECT_EQ(i[0].dtype(), DType::Int64);
  EXPECT_EQ(ints(i[0]), (std::vector<int64_t>{1, 32, 1}));  // 3**0.5 = 1.73 truncates to 1
  auto k = run_op("Pow", {int32s({2}, {2, -3}), int32s({2}, {10, 3})});
  EXPECT_EQ(k[0].dtype(), DType::Int32);
  EXPECT_EQ(ints(k[0]), (std::vector<int64_t>{1024, -27}));
}

TEST(Binary, VariadicSpecExamples) {
  // ONNX Max/Min/Sum/Mean examples: [3,2,1], [1,4,4], [2,5,3].
  const std::vector<Tensor> in = {Tensor::from_floats({3}, {3, 2, 1}), Tensor::from_floats({3}, {1, 4, 4}),
                                  Tensor::from_floats({3}, {2, 5, 3})};
  expect_tensor_near(run_op("Max", in)[0], {3}, {3, 5, 4});
  expect_tensor_near(run_op("Min", in)[0], {3}, {1, 2, 1});
  expect_tensor_near(run_op("Sum", in)[0], {3}, {6, 11, 8});
  expect_tensor_near(run_op("Mean", in)[0], {3}, {2, 11.0f / 3, 8.0f / 3});
  expect_tensor_near(run_op("Sum", {in[0]})[0], {3}, {3, 2, 1});
}

TEST(Binary, VariadicBroadcastsAndPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = run_op("Max", {Tensor::from_floats({2, 2}, {1, nan, 5, -1}), Tensor::from_floats({2}, {2, 0})});
  expect_tensor_near(y[0], {2, 2}, {2, nan, 5, 0});
  auto z = run_op("Min", {Tensor::from_floats({2}, {1, 5}), Tensor::from_floats({1}, {nan})});
  expect_tensor_near(z[0], {2}, {nan, nan});
  auto i = run_op("Max", {Tensor::from_int64s({3}, {1, 5, -2}), Tensor::from_int64s({3}, {3, 4, -3})});
  EXPECT_EQ(ints(i[0]), (std::vector<int64_t>{3, 5, -2}));
}

TEST(Binary, Float16IsComputedAndReturnedAsFloat16) {
  const Tensor a = cast_tensor(Tensor::from_floats({3}, {1.5f, -2, 3}), DType::Float16);
  const Tensor b = cast_tensor(Tensor::from_floats({3}, {1, 0.25f, 4}), DType::Float16);
  auto y = run_op("Max", {a, b});
  EXPECT_EQ(y[0].dtype(), DType::Float16);
  expect_tensor_near(y[0], {3}, {1.5f, 0.25f, 4});
  auto s = run_op("Add", {a, b});
  EXPECT_EQ(s[0].dtype(), DType::Float16);
  expect_tensor_near(s[0], {3}, {2.5f, -1.75f, 7});
}

// Naive broadcasting by per-element index arithmetic, independent of the planner.
std::vector<float> naive_add(const Tensor& a, const Tensor& b, const Shape& out) {
  std::vector<float> r(static_cast<size_t>(shape_numel(out)));
  const size_t rank = out.size();
  for (int64_t flat = 0; flat < shape_numel(out); ++flat) {
    std::vector<int64_t> idx(rank);
    int64_t rem = flat;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % out[d];
      rem /= out[d];
    }
    auto offset = [&](const Shape& s) {
      int64_t o = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        const int64_t i = idx[rank - s.size() + d];
        o = o * s[d] + (s[d] == 1 ? 0 : i);
      }
      return o;
    };
    r[static_cast<size_t>(flat)] = a.data<float>()[offset(a.shape())] + b.data<float>()[offset(b.shape())];
  }
  return r;
}

Tensor ramp(const Shape& s, float scale) {
  Tensor t(DType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = scale * static_cast<float>(i) + 0.5f;
  return t;
}

TEST(Binary, BroadcastSweepMatchesNaiveIndexing) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{2, 3, 4, 5}, {}},        {{}, {2, 3}},
      {{2, 3, 4, 5}, {3, 1, 1}},    {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{2, 3, 4, 5}, {5}},
      {{2, 3, 4, 5}, {4, 1}},       {{1, 4, 1, 6}, {3, 1, 5, 6}}, {{3, 1}, {1, 7}},
      {{2, 1, 4}, {2, 3, 1}},       {{1}, {1, 1, 1}},             {{0, 3}, {3}},
      {{2, 3, 1, 1}, {1, 1, 4, 5}}, {{5, 1, 1, 2}, {1, 3, 2, 1}},
  };
  for (const auto& [sa, sb] : cases) {
    const Tensor a = ramp(sa, 1.0f), b = ramp(sb, 100.0f);
    const Shape out = ops::broadcast_shape(sa, sb);
    SCOPED_TRACE(shape_str(sa) + " + " + shape_str(sb));
    expect_tensor_near(run_op("Add", {a, b})[0], out, naive_add(a, b, out));
    expect_tensor_near(run_op("Add", {b, a})[0], out, naive_add(b, a, out));
  }
}

TEST(Binary, ModSignRules) {
  // fmod = 0 (integers): the sign of the divisor, as Python's %.
  const Tensor a = Tensor::from_int64s({4}, {7, -7, 7, -7}), b = Tensor::from_int64s({4}, {3, 3, -3, -3});
  EXPECT_EQ(run_op("Mod", {a, b})[0].to_int64_vector(), (std::vector<int64_t>{1, 2, -2, -1}));
  // fmod = 1: the sign of the dividend, as C fmod.
  EXPECT_EQ(run_op("Mod", {a, b}, {test::attr_int("fmod", 1)})[0].to_int64_vector(),
            (std::vector<int64_t>{1, -1, 1, -1}));
  expect_tensor_near(run_op("Mod", {Tensor::from_floats({2}, {5.5f, -5.5f}), Tensor::from_floats({1}, {2})},
                            {test::attr_int("fmod", 1)})[0],
                     {2}, {1.5f, -1.5f});
  // Floats need fmod = 1 (ONNX spec); the error names the node.
  try {
    run_op("Mod", {Tensor::from_floats({1}, {1}), Tensor::from_floats({1}, {1})});
    ADD_FAILURE() << "fmod = 0 on floats was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Mod_test"), std::string::npos) << e.what();
  }
  // int32 broadcast and the INT_MIN % -1 corner (0, no trap).
  EXPECT_EQ(run_op("Mod", {int32s({2}, {-2147483647 - 1, 9}), int32s({1}, {-1})})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 0}));
}

TEST(Binary, BitShift) {
  const auto shift = [](const char* dir, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    return run_op("BitShift", {uint8s({static_cast<int64_t>(a.size())}, a), uint8s({static_cast<int64_t>(b.size())}, b)},
                  {test::attr_string("direction", dir)})[0]
        .to_int64_vector();
  };
  // uint8 wraps on the left; shifts of 8 or more give 0.
  EXPECT_EQ(shift("LEFT", {1, 3, 255, 1}, {2, 7, 1, 8}), (std::vector<int64_t>{4, 128, 254, 0}));
  EXPECT_EQ(shift("RIGHT", {16, 255, 200}, {2, 7, 9}), (std::vector<int64_t>{4, 1, 0}));
  // uint16 (computed widened) keeps its own width.
  Tensor a(DType::UInt16, {2}), b(DType::UInt16, {2});
  a.mutable_data<uint16_t>()[0] = 0x8001;
  a.mutable_data<uint16_t>()[1] = 3;
  b.mutable_data<uint16_t>()[0] = 1;
  b.mutable_data<uint16_t>()[1] = 16;
  const Tensor y = run_op("BitShift", {a, b}, {test::attr_string("direction", "LEFT")})[0];
  EXPECT_EQ(y.dtype(), DType::UInt16);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{2, 0}));
  EXPECT_THROW(run_op("BitShift", {a, b}, {test::attr_string("direction", "left")}), Error);
  EXPECT_THROW(run_op("BitShift", {Tensor::from_int64s({1}, {1}), Tensor::from_int64s({1}, {1})},
                      {test::attr_string("direction", "LEFT")}),
               Error);
}

}  // namespace
}  // namespace ptq
