#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <random>
#include <vector>

#include "core/half.h"
#include "ops/conv_common.h"
#include "ops/conv_test_util.h"
#include "ops/conv_winograd.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::all_close;
using ptq::test::attr_int;
using ptq::test::attr_ints;
using ptq::test::attr_string;
using ptq::test::next_index;
using ptq::test::numel_of;
using ptq::test::random_floats;
using ptq::test::run_op;

namespace {

struct ConvCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;  // full length (defaults filled by make())
  bool bias = false;

  size_t rank() const { return x.size() - 2; }
  std::vector<int64_t> out() const {
    std::vector<int64_t> o(rank());
    for (size_t i = 0; i < rank(); ++i) {
      const int64_t span = (w[i + 2] - 1) * dilations[i] + 1;
      o[i] = (x[i + 2] + pads[i] + pads[i + rank()] - span) / strides[i] + 1;
    }
    return o;
  }
};

// Direct definition: y[n,m,o] = b[m] + sum_{c,k} x[n, g*Cg + c, o*s - pad + k*d] * w[m, c, k].
std::vector<float> naive_conv(const ConvCase& cc, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b) {
  const size_t r = cc.rank();
  const int64_t N = cc.x[0], C = cc.x[1], M = cc.w[0], Cg = C / cc.group, Mg = M / cc.group;
  const std::vector<int64_t> in(cc.x.begin() + 2, cc.x.end()), ks(cc.w.begin() + 2, cc.w.end()), out = cc.out();
  const int64_t in_size = numel_of(in), k_size = numel_of(ks), out_size = numel_of(out);
  std::vector<float> y(static_cast<size_t>(N * M * out_size));
  std::vector<int64_t> o(r), k(r);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      std::fill(o.begin(), o.end(), 0);
      int64_t oi = 0;
      do {
        double acc = cc.bias ? b[m] : 0.0;
        for (int64_t c = 0; c < Cg; ++c) {
          std::fill(k.begin(), k.end(), 0);
          int64_t ki = 0;
          do {
            int64_t xi = 0;
            bool valid = true;
            for (size_t i = 0; i < r; ++i) {
              const int64_t p = o[i] * cc.strides[i] - cc.pads[i] + k[i] * cc.dilations[i];
              valid = valid && p >= 0 && p < in[i];
              xi = xi * in[i] + p;
            }
            if (valid) acc += double(x[(n * C + g * Cg + c) * in_size + xi]) * w[(m * Cg + c) * k_size + ki];
            ++ki;
          } while (next_index(k, ks));
        }
        y[(n * M + m) * out_size + oi++] = static_cast<float>(acc);
      } while (next_index(o, out));
    }
  }
  return y;
}

std::vector<ir::Attribute> conv_attrs(const ConvCase& cc) {
  return {attr_int("group", cc.group), attr_ints("strides", cc.strides), attr_ints("dilations", cc.dilations),
          attr_ints("pads", cc.pads)};
}

ConvCase make(Shape x, Shape w, int64_t group = 1, std::vector<int64_t> strides = {},
              std::vector<int64_t> dilations = {}, std::vector<int64_t> pads = {}, bool bias = true) {
  ConvCase cc{std::move(x), std::move(w), group, std::move(strides), std::move(dilations), std::move(pads), bias};
  const size_t r = cc.rank();
  if (cc.strides.empty()) cc.strides.assign(r, 1);
  if (cc.dilations.empty()) cc.dilations.assign(r, 1);
  if (cc.pads.empty()) cc.pads.assign(2 * r, 0);
  return cc;
}

::testing::AssertionResult check_case(const ConvCase& cc, std::mt19937& rng) {
  const auto x = random_floats(rng, numel_of(cc.x)), w = random_floats(rng, numel_of(cc.w));
  const auto b = random_floats(rng, cc.w[0]);
  std::vector<Tensor> inputs{Tensor::from_floats(cc.x, x), Tensor::from_floats(cc.w, w)};
  if (cc.bias) inputs.push_back(Tensor::from_floats({cc.w[0]}, b));
  const Tensor y = run_op("Conv", inputs, conv_attrs(cc))[0];
  Shape ys{cc.x[0], cc.w[0]};
  for (int64_t o : cc.out()) ys.push_back(o);
  if (y.shape() != ys) return ::testing::AssertionFailure() << "shape " << shape_str(y.shape()) << " want " << shape_str(ys);
  return all_close(y.to_float_vector(), naive_conv(cc, x, w, b));
}

std::string describe(const ConvCase& cc) {
  return "x" + shape_str(cc.x) + " w" + shape_str(cc.w) + " g" + std::to_string(cc.group) + " s" +
         shape_str(cc.strides) + " d" + shape_str(cc.dilations) + " p" + shape_str(cc.pads);
}

}  // namespace

TEST(Conv, SpecExampleByHand) {
  // ONNX Operators.md Conv example: 5x5 input 0..24, 3x3 ones kernel, pads 1 -> sums of 3x3 windows.
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i);
  const std::vector<float> want = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108,
                                   117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  // One input channel: the depthwise path.
  const Tensor y1 = run_op("Conv", {Tensor::from_floats({1, 1, 5, 5}, x), Tensor::from_floats({1, 1, 3, 3}, std::vector<float>(9, 1))},
                           {attr_ints("pads", {1, 1, 1, 1})})[0];
  ptq::test::expect_tensor_near(y1, {1, 1, 5, 5}, want);
  // Two input channels, the second weighted 0: the im2col + GEMM path, same result.
  std::vector<float> x2 = x;
  x2.insert(x2.end(), x.begin(), x.end());
  std::vector<float> w2(18, 0.0f);
  std::fill(w2.begin(), w2.begin() + 9, 1.0f);
  const Tensor y2 = run_op("Conv", {Tensor::from_floats({1, 2, 5, 5}, x2), Tensor::from_floats({1, 2, 3, 3}, w2)},
                           {attr_ints("pads", {1, 1, 1, 1})})[0];
  ptq::test::expect_tensor_near(y2, {1, 1, 5, 5}, want);
  // Stride 2 without padding keeps the windows centred at (1,1), (1,3), (3,1), (3,3).
  const Tensor y3 = run_op("Conv", {Tensor::from_floats({1, 2, 5, 5}, x2), Tensor::from_floats({1, 2, 3, 3}, w2)},
                           {attr_ints("strides", {2, 2})})[0];
  ptq::test::expect_tensor_near(y3, {1, 1, 2, 2}, {54, 72, 144, 162});
}

// The default (accurate) mode for a scope, whatever the process's mode: the im2col + GEMM blocking
// cases below are 3x3 stride 1 and must exercise that path (Winograd has its own tests, with its own
// error bound).
struct WithoutWinograd : test::ScopedWinogradMode {
  WithoutWinograd() : ScopedWinogradMode(ops::WinogradMode::Accurate) {}
};

TEST(Conv, FastPathsMatchNaive) {
  const WithoutWinograd im2col_only;
  std::mt19937 rng(3);
  const ConvCase cases[] = {
      make({1, 20, 9, 11}, {36, 20, 1, 1}),                                    // pointwise GEMM
      make({2, 5, 4, 70}, {3, 5, 1, 1}, 1, {}, {}, {}, false),                 // pointwise, N > NC
      make({1, 40, 17, 17}, {132, 40, 3, 3}, 1, {}, {}, {1, 1, 1, 1}),        // K > KC, N > NC, M > MC
      make({1, 6, 15, 17}, {8, 3, 3, 3}, 2, {2, 2}, {}, {0, 1, 1, 0}),         // grouped, asymmetric pads
      make({1, 8, 21, 46}, {12, 8, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}),        // stride 2: vector gather, odd rows
      make({1, 3, 30, 31}, {8, 3, 7, 7}, 1, {2, 2}, {}, {3, 3, 3, 3}),         // a 7x7 stride-2 stem
      make({2, 8, 13, 37}, {8, 1, 3, 3}, 8, {}, {}, {1, 1, 1, 1}),             // depthwise 3x3 s1
      make({1, 8, 14, 40}, {8, 1, 3, 3}, 8, {2, 2}, {}, {0, 0, 1, 1}),         // depthwise s2, TF-style pads
      make({1, 4, 12, 33}, {8, 1, 3, 3}, 4, {1, 1}, {}, {1, 1, 1, 1}),         // depthwise multiplier 2
      make({1, 4, 17, 29}, {4, 1, 3, 3}, 4, {}, {2, 2}, {2, 2, 2, 2}),         // dilated depthwise
      make({1, 3, 16, 35}, {3, 1, 5, 5}, 3, {1, 2}, {}, {2, 1, 3, 0}),         // depthwise 5x5 asymmetric
      make({1, 3, 11, 26}, {3, 1, 3, 4}, 3, {3, 3}, {}, {1, 2, 0, 1}),         // depthwise runtime stride
      make({1, 1, 10, 21}, {16, 1, 3, 3}, 1, {}, {}, {1, 1, 1, 1}),            // one input channel, many outputs
      make({1, 2, 9, 12}, {16, 1, 3, 3}, 2, {2, 1}, {}, {1, 0, 0, 1}),         // depthwise multiplier 8 (GEMM)
      make({2, 6, 40}, {6, 1, 5}, 6, {2}, {1}, {2, 2}),                        // 1-D depthwise
      make({1, 4, 3, 10, 9}, {6, 2, 2, 3, 3}, 2, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 2}),  // 3-D grouped
      make({1, 2, 4, 5, 6}, {2, 1, 3, 3, 3}, 2, {}, {}, {1, 1, 1, 1, 1, 1}),  // 3-D depthwise (generic path)
  };
  for (const ConvCase& cc : cases) EXPECT_TRUE(check_case(cc, rng)) << describe(cc);
}

TEST(Conv, RandomConfigurationsMatchNaive) {
  std::mt19937 rng(12345);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const size_t r = trial % 7 == 6 ? 3 : (trial % 3 == 0 ? 1 : 2);
    const int64_t group = pick(1, 3), Cg = pick(1, 3), Mg = pick(1, 4);
    Shape x{pick(1, 2), group * Cg}, w{group * Mg, Cg};
    std::vector<int64_t> strides, dil, pads(2 * r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t k = pick(1, r == 3 ? 3 : 5);
      w.push_back(k);
      strides.push_back(pick(1, 3));
      dil.push_back(pick(1, 2));
      pads[i] = pick(0, 2);
      pads[i + r] = pick(0, 2);
      const int64_t span = (k - 1) * dil.back() + 1;
      x.push_back(std::max<int64_t>(1, span - pads[i] - pads[i + r]) + pick(0, r == 3 ? 4 : 12));
    }
    const ConvCase cc = make(x, w, group, strides, dil, pads, trial % 2 == 0);
    EXPECT_TRUE(check_case(cc, rng)) << describe(cc);
    ++checked;
  }
  EXPECT_EQ(checked, 160);
}

TEST(Conv, AutoPadModes) {
  std::mt19937 rng(5);
  const Shape xs{1, 2, 7, 9}, ws{3, 2, 4, 3};
  const auto x = random_floats(rng, numel_of(xs)), w = random_floats(rng, numel_of(ws));
  const Tensor xt = Tensor::from_floats(xs, x), wt = Tensor::from_floats(ws, w);
  // strides 2: H: out = ceil(7/2) = 4, total = 3*2 + 4 - 7 = 3; W: out = ceil(9/2) = 5, total = 4*2 + 3 - 9 = 2.
  struct Mode {
    const char* name;
    std::vector<int64_t> pads;  // explicit equivalent [top, left, bottom, right]
  };
  const Mode modes[] = {{"SAME_UPPER", {1, 1, 2, 1}}, {"SAME_LOWER", {2, 1, 1, 1}}, {"VALID", {0, 0, 0, 0}}};
  for (const Mode& m : modes) {
    const ConvCase cc = make(xs, ws, 1, {2, 2}, {}, m.pads, false);
    const Tensor y = run_op("Conv", {xt, wt}, {attr_string("auto_pad", m.name), attr_ints("strides", {2, 2})})[0];
    Shape want_shape{1, 3};
    for (int64_t o : cc.out()) want_shape.push_back(o);
    ASSERT_EQ(y.shape(), want_shape) << m.name;
    EXPECT_TRUE(all_close(y.to_float_vector(), naive_conv(cc, x, w, {}))) << m.name;
  }
}

// One Conv node with its own cache slot (as the executor keeps per node) and three weight tensors:
// w[0], w[1], and w[2] holding w[1]'s values in another tensor.
struct PackingProbe {
  ConvCase cc = make({1, 4, 6, 6}, {5, 4, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, false);
  std::vector<float> x, values[2];
  Tensor xt, w[3];
  ir::Node node;
  std::any prepared;

  explicit PackingProbe(uint32_t seed) {
    std::mt19937 rng(seed);
    x = random_floats(rng, numel_of(cc.x));
    values[0] = random_floats(rng, numel_of(cc.w));
    values[1] = random_floats(rng, numel_of(cc.w));
    xt = Tensor::from_floats(cc.x, x);
    w[0] = Tensor::from_floats(cc.w, values[0]);
    w[1] = Tensor::from_floats(cc.w, values[1]);
    w[2] = Tensor::from_floats(cc.w, values[1]);
    node.name = "conv";
    node.op_type = "Conv";
    node.opset = 17;
    node.inputs = {0, 1};
    node.outputs = {2};
    node.attributes = conv_attrs(cc);
  }

  // Runs with weights k; checks the output and whether a packing was built.
  void run(int k, bool expect_build, const std::string& step) {
    const size_t before = ops::packed_constant_builds();
    std::vector<const Tensor*> in{&xt, &w[k]};
    std::vector<Tensor> out(1);
    exec::KernelContext ctx{node, in, out, &prepared, {false, true}};
    exec::OpRegistry::global().find("", "Conv")(ctx);
    EXPECT_TRUE(all_close(out[0].to_float_vector(), naive_conv(cc, x, values[k == 0 ? 0 : 1], {}))) << step;
    EXPECT_EQ(ops::packed_constant_builds() - before, expect_build ? 1u : 0u) << step;
  }
};

// The first packing and the latest other one stay cached (a sweep toggles float / quantized weights);
// a third tensor replaces the second.
TEST(Conv, CachesPackedWeightsAndNoticesNewWeights) {
  PackingProbe p(9);
  const std::vector<std::pair<int, bool>> steps = {{0, true},  {0, false}, {1, true}, {0, false},
                                                   {1, false}, {2, true},  {1, true}, {0, false}};
  for (size_t i = 0; i < steps.size(); ++i) p.run(steps[i].first, steps[i].second, "step " + std::to_string(i));
  EXPECT_TRUE(p.prepared.has_value());
}

// Second packings share one cap: the oldest (another node's) is dropped to make room; one larger than
// the whole cap is packed on every call. The first packings stay cached throughout.
TEST(Conv, SecondPackingsShareABudgetOldestDroppedFirst) {
  PackingProbe a(10), b(11);
  a.run(0, true, "a first");
  b.run(0, true, "b first");
  const size_t base = ops::packed_second_bytes();
  a.run(1, true, "a second");
  const size_t one = ops::packed_second_bytes() - base;
  ASSERT_GT(one, 0u);
  ops::set_packed_second_budget(base + one + one / 2);  // room for one second packing
  b.run(1, true, "b second: drops a's");
  a.run(0, false, "a first again");
  b.run(1, false, "b second kept");
  a.run(1, true, "a second: rebuilt, drops b's");
  b.run(1, true, "b second: rebuilt");
  ops::set_packed_second_budget(0);
  a.run(1, true, "over the cap");
  a.run(1, true, "over the cap, again");
  a.run(0, false, "a first still cached");
  ops::set_packed_second_budget(ops::kPackedSecondBudget);
}

TEST(Conv, Float16InOut) {
  // 1x1 conv, weight 2: y = 2x exactly representable in half precision.
  const std::vector<float> xv = {0.5f, -1.25f, 3.0f, 8.0f};
  Tensor x(DType::Float16, {1, 1, 2, 2}), w(DType::Float16, {1, 1, 1, 1});
  for (int i = 0; i < 4; ++i) x.mutable_data<uint16_t>()[i] = float_to_half(xv[i]);
  w.mutable_data<uint16_t>()[0] = float_to_half(2.0f);
  const Tensor y = run_op("Conv", {x, w})[0];
  EXPECT_EQ(y.dtype(), DType::Float16);
  ptq::test::expect_tensor_near(y, {1, 1, 2, 2}, {1.0f, -2.5f, 6.0f, 16.0f});
}

TEST(Conv, RejectsInvalidNodes) {
  const Tensor x = Tensor::from_floats({1, 3, 4, 4}, std::vector<float>(48, 1.0f));
  const Tensor w = Tensor::from_floats({2, 2, 3, 3}, std::vector<float>(36, 1.0f));
  EXPECT_THROW(run_op("Conv", {x, w}), Error);  // 3 input channels vs W's 2 with group 1
  const Tensor w3 = Tensor::from_floats({2, 3, 3, 3}, std::vector<float>(54, 1.0f));
  EXPECT_THROW(run_op("Conv", {x, w3}, {attr_string("auto_pad", "SAME")}), Error);
  EXPECT_THROW(run_op("Conv", {x, w3}, {attr_ints("strides", {1})}), Error);
  EXPECT_THROW(run_op("Conv", {x, w3}, {attr_ints("kernel_shape", {2, 2})}), Error);
  EXPECT_THROW(run_op("Conv", {x, w3, Tensor::from_floats({3}, {1, 2, 3})}), Error);  // bias size
}

TEST(Conv, OnnxNodeTestData) {
  ptq::test::expect_node_cases({"test_basic_conv_with_padding", "test_basic_conv_without_padding",
                                "test_conv_with_autopad_same", "test_conv_with_strides_and_asymmetric_padding",
                                "test_conv_with_strides_no_padding", "test_conv_with_strides_padding"});
}
