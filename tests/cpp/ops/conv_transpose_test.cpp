#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ops/conv_test_util.h"
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

struct TCase {
  Shape x, w;  // w: [C, M/group, k...]
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pad_begin, out;  // out: output spatial dims
};

// Scatter definition: every x[n, g*Cg+c, i] * w[g*Cg+c, m, k] lands on o = i*s - pad_begin + k*d.
std::vector<float> naive_transpose(const TCase& t, const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>* b) {
  const size_t r = t.x.size() - 2;
  const int64_t N = t.x[0], C = t.x[1], Cg = C / t.group, Mg = t.w[1], M = Mg * t.group;
  const std::vector<int64_t> in(t.x.begin() + 2, t.x.end()), ks(t.w.begin() + 2, t.w.end());
  const int64_t in_size = numel_of(in), k_size = numel_of(ks), out_size = numel_of(t.out);
  std::vector<double> y(static_cast<size_t>(N * M * out_size), 0.0);
  std::vector<int64_t> i(r), k(r);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const int64_t g = c / Cg;
      std::fill(i.begin(), i.end(), 0);
      int64_t ii = 0;
      do {
        for (int64_t m = 0; m < Mg; ++m) {
          std::fill(k.begin(), k.end(), 0);
          int64_t ki = 0;
          do {
            int64_t oi = 0;
            bool valid = true;
            for (size_t a = 0; a < r; ++a) {
              const int64_t o = i[a] * t.strides[a] - t.pad_begin[a] + k[a] * t.dilations[a];
              valid = valid && o >= 0 && o < t.out[a];
              oi = oi * t.out[a] + o;
            }
            if (valid) {
              y[static_cast<size_t>((n * M + g * Mg + m) * out_size + oi)] +=
                  double(x[(n * C + c) * in_size + ii]) * w[(c * Mg + m) * k_size + ki];
            }
            ++ki;
          } while (next_index(k, ks));
        }
        ++ii;
      } while (next_index(i, in));
    }
  }
  std::vector<float> out(y.size());
  for (size_t j = 0; j < y.size(); ++j) out[j] = static_cast<float>(y[j] + (b ? (*b)[(j / out_size) % M] : 0.0));
  return out;
}

// Runs ConvTranspose with `attrs` on random data and compares with the naive result for `t`.
::testing::AssertionResult check(const TCase& t, const std::vector<ir::Attribute>& attrs, bool bias, std::mt19937& rng) {
  const auto x = random_floats(rng, numel_of(t.x)), w = random_floats(rng, numel_of(t.w));
  const int64_t M = t.w[1] * t.group;
  const auto b = random_floats(rng, M);
  std::vector<Tensor> inputs{Tensor::from_floats(t.x, x), Tensor::from_floats(t.w, w)};
  if (bias) inputs.push_back(Tensor::from_floats({M}, b));
  const Tensor y = run_op("ConvTranspose", inputs, attrs)[0];
  Shape ys{t.x[0], M};
  ys.insert(ys.end(), t.out.begin(), t.out.end());
  if (y.shape() != ys) return ::testing::AssertionFailure() << "shape " << shape_str(y.shape()) << " want " << shape_str(ys);
  return all_close(y.to_float_vector(), naive_transpose(t, x, w, bias ? &b : nullptr));
}

}  // namespace

TEST(ConvTranspose, SpecExamplesByHand) {
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i);
  const Tensor xt = Tensor::from_floats({1, 1, 3, 3}, x), wt = Tensor::from_floats({1, 2, 3, 3}, std::vector<float>(18, 1));
  // Stride 1: each output sums the inputs whose 3x3 footprint covers it (Operators.md ConvTranspose example).
  const std::vector<float> plane = {0, 1, 3,  3,  2,  3, 8,  15, 12, 7,  9, 21, 36,
                                    27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
  std::vector<float> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  ptq::test::expect_tensor_near(run_op("ConvTranspose", {xt, wt})[0], {1, 2, 5, 5}, want);
  // strides [3, 2], pads [1, 2, 1, 2]: rows come from input rows 0,0,1,1,1,2,2; columns sum pairs of
  // overlapping footprints: e.g. row 0 = [0+1, 1, 1+2] = [1, 1, 3].
  const std::vector<float> padded = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  want = padded;
  want.insert(want.end(), padded.begin(), padded.end());
  ptq::test::expect_tensor_near(
      run_op("ConvTranspose", {xt, wt}, {attr_ints("strides", {3, 2}), attr_ints("pads", {1, 2, 1, 2})})[0],
      {1, 2, 7, 3}, want);
}

TEST(ConvTranspose, RandomConfigurationsMatchNaive) {
  std::mt19937 rng(99);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 120; ++trial) {
    const size_t r = trial % 6 == 5 ? 3 : (trial % 3 == 0 ? 1 : 2);
    const int64_t group = pick(1, 3), Cg = pick(1, 3), Mg = pick(1, 3);
    TCase t;
    t.x = {pick(1, 2), group * Cg};
    t.w = {group * Cg, Mg};
    t.group = group;
    std::vector<int64_t> pads(2 * r), out_pad(r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t k = pick(1, r == 3 ? 3 : 4), s = pick(1, 3), d = pick(1, 2);
      t.x.push_back(pick(1, r == 3 ? 4 : 9));
      t.w.push_back(k);
      t.strides.push_back(s);
      t.dilations.push_back(d);
      out_pad[i] = pick(0, s - 1);
      const int64_t natural = s * (t.x.back() - 1) + out_pad[i] + (k - 1) * d + 1;
      pads[i] = pick(0, std::min<int64_t>(2, (natural - 1) / 2));
      pads[i + r] = pick(0, std::min<int64_t>(2, (natural - 1) / 2));
      t.pad_begin.push_back(pads[i]);
      t.out.push_back(natural - pads[i] - pads[i + r]);
    }
    const std::vector<ir::Attribute> attrs = {attr_int("group", group), attr_ints("strides", t.strides),
                                              attr_ints("dilations", t.dilations), attr_ints("pads", pads),
                                              attr_ints("output_padding", out_pad)};
    EXPECT_TRUE(check(t, attrs, trial % 2 == 0, rng)) << "trial " << trial << " x" << shape_str(t.x) << " w"
                                                      << shape_str(t.w) << " g" << group;
  }
}

TEST(ConvTranspose, LargeCaseUsesAllGemmBlocks) {
  std::mt19937 rng(4);
  // col rows = 33 * 4 = 132 > MC, K = C = 260 > KC, 17x17 = 289 input positions > NC.
  TCase t{{1, 260, 17, 17}, {260, 33, 2, 2}, 1, {2, 2}, {1, 1}, {0, 0}, {34, 34}};
  EXPECT_TRUE(check(t, {attr_ints("strides", {2, 2})}, true, rng));
}

TEST(ConvTranspose, OutputShapeAndAutoPad) {
  std::mt19937 rng(21);
  // 1-D, in 4, k 3, stride 2: natural size 2*3 + 3 = 9.
  const Shape xs{1, 2, 4}, ws{2, 3, 3};
  auto run_case = [&](std::vector<ir::Attribute> attrs, int64_t pad_begin, int64_t out) {
    TCase t{xs, ws, 1, {2}, {1}, {pad_begin}, {out}};
    attrs.push_back(attr_ints("strides", {2}));
    return check(t, attrs, true, rng);
  };
  // output_shape 8 -> total padding 1; NOTSET and SAME_LOWER put the odd pixel first, SAME_UPPER last.
  EXPECT_TRUE(run_case({attr_ints("output_shape", {8})}, 1, 8));
  EXPECT_TRUE(run_case({attr_ints("output_shape", {8}), attr_string("auto_pad", "SAME_LOWER")}, 1, 8));
  EXPECT_TRUE(run_case({attr_ints("output_shape", {8}), attr_string("auto_pad", "SAME_UPPER")}, 0, 8));
  // output_shape given with N, C dims too.
  EXPECT_TRUE(run_case({attr_ints("output_shape", {1, 3, 8})}, 1, 8));
  // SAME_* without output_shape targets in*stride = 8.
  EXPECT_TRUE(run_case({attr_string("auto_pad", "SAME_UPPER")}, 0, 8));
  EXPECT_TRUE(run_case({attr_string("auto_pad", "SAME_LOWER")}, 1, 8));
  // A target beyond the natural size: no padding, trailing outputs get only the bias.
  EXPECT_TRUE(run_case({attr_ints("output_shape", {11})}, 0, 11));
  // output_padding adds at the end; VALID ignores pads.
  EXPECT_TRUE(run_case({attr_ints("output_padding", {1})}, 0, 10));
  EXPECT_TRUE(run_case({attr_string("auto_pad", "VALID")}, 0, 9));
}

TEST(ConvTranspose, RejectsInvalidNodes) {
  const Tensor x = Tensor::from_floats({1, 3, 4, 4}, std::vector<float>(48, 1.0f));
  const Tensor w = Tensor::from_floats({2, 2, 3, 3}, std::vector<float>(36, 1.0f));
  EXPECT_THROW(run_op("ConvTranspose", {x, w}), Error);  // W's first dim must equal X channels
  const Tensor w3 = Tensor::from_floats({3, 2, 3, 3}, std::vector<float>(54, 1.0f));
  EXPECT_THROW(run_op("ConvTranspose", {x, w3}, {attr_ints("output_padding", {1})}), Error);
  EXPECT_THROW(run_op("ConvTranspose", {x, w3}, {attr_ints("pads", {9, 9, 9, 9})}), Error);  // negative output
}

TEST(ConvTranspose, OnnxNodeTestData) {
  ptq::test::expect_node_cases({"test_convtranspose", "test_convtranspose_1d", "test_convtranspose_3d",
                                "test_convtranspose_autopad_same", "test_convtranspose_dilations",
                                "test_convtranspose_kernel_shape", "test_convtranspose_output_shape",
                                "test_convtranspose_pad", "test_convtranspose_pads",
                                "test_convtranspose_with_kernel"});
}
