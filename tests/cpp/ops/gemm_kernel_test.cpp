#include "ops/gemm_kernel.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/conv_test_util.h"

using namespace ptq;
using namespace ptq::ops;
using ptq::test::all_close;
using ptq::test::random_floats;

namespace {

// C = alpha * A.B + bias + (accumulate ? C0 : 0), in double, A/B given as (r, c) -> data[r*rs + c*cs].
std::vector<float> naive(int64_t M, int64_t N, int64_t K, const std::vector<float>& a, int64_t ars, int64_t acs,
                         const std::vector<float>& b, int64_t brs, int64_t bcs, float alpha, const float* bias,
                         const std::vector<float>* c0) {
  std::vector<float> c(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[i * ars + k * acs]) * b[k * brs + j * bcs];
      c[i * N + j] = static_cast<float>(alpha * s + (bias ? bias[i] : 0.0) + (c0 ? (*c0)[i * N + j] : 0.0));
    }
  }
  return c;
}

struct Dims {
  int64_t M, N, K;
};

// Shapes around the tiles (4x8 portable, 4x16 AVX2, 8x16 AVX-512) and block (KC=256, NC=256, MC=128)
// edges.
const Dims kDims[] = {{1, 1, 1},     {4, 8, 1},     {3, 7, 5},      {5, 9, 17},    {13, 33, 64},
                      {129, 17, 3},  {8, 257, 40},  {6, 20, 300},   {130, 260, 257}, {1, 1000, 70},
                      {64, 1, 513},  {8, 16, 33},   {9, 17, 31},    {12, 40, 64},  {16, 49, 96}};

// Runs `body` once per GEMM instruction set this build and CPU have (the portable kernel everywhere,
// AVX2 and AVX-512 natively where the CPU has them), then restores the one in use.
template <class F>
void for_each_isa(F&& body) {
  const GemmIsa before = gemm_isa();
  for (GemmIsa isa : gemm_isas()) {
    set_gemm_isa(gemm_isa_name(isa));
    SCOPED_TRACE(gemm_isa_name(isa));
    body();
  }
  set_gemm_isa(gemm_isa_name(before));
}

// Callback operand: packs B block by block from a row-major matrix, like conv's im2col does.
struct RowMajor {
  const float* data;
  int64_t N;
};
void pack_from_row_major(const void* ctx, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
  const RowMajor& m = *static_cast<const RowMajor*>(ctx);
  for (int64_t j = 0; j < nc; j += kGemmNR) {
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t c = 0; c < kGemmNR; ++c) {
        dst[(j / kGemmNR) * kc * kGemmNR + k * kGemmNR + c] = j + c < nc ? m.data[(k0 + k) * m.N + n0 + j + c] : 0.0f;
      }
    }
  }
}

}  // namespace

TEST(GemmKernel, StridedOperandsMatchNaive) {
  for_each_isa([] {
    std::mt19937 rng(7);
    for (const Dims& d : kDims) {
      for (int trans = 0; trans < 4; ++trans) {
        const bool ta = trans & 1, tb = trans & 2;
        const auto a = random_floats(rng, d.M * d.K), b = random_floats(rng, d.K * d.N);
        const int64_t ars = ta ? 1 : d.K, acs = ta ? d.M : 1, brs = tb ? 1 : d.N, bcs = tb ? d.K : 1;
        std::vector<float> c(static_cast<size_t>(d.M * d.N), 123.0f);
        gemm(d.M, d.N, d.K, GemmOperand::strided(a.data(), ars, acs), GemmOperand::strided(b.data(), brs, bcs), c.data(),
             d.N);
        EXPECT_TRUE(all_close(c, naive(d.M, d.N, d.K, a, ars, acs, b, brs, bcs, 1.0f, nullptr, nullptr)))
            << d.M << "x" << d.N << "x" << d.K << " trans " << trans;
      }
    }
  });
}

TEST(GemmKernel, PackedAndCallbackOperandsWithEpilogue) {
  for_each_isa([] {
    std::mt19937 rng(11);
    for (const Dims& d : kDims) {
      const auto a = random_floats(rng, d.M * d.K), b = random_floats(rng, d.K * d.N);
      const auto bias = random_floats(rng, d.M);
      const auto c0 = random_floats(rng, d.M * d.N);
      std::vector<float> pa(gemm_packed_a_size(d.M, d.K)), pb(gemm_packed_b_size(d.K, d.N));
      gemm_pack_a(a.data(), d.K, 1, d.M, d.K, pa.data());
      gemm_pack_b(b.data(), d.N, 1, d.K, d.N, pb.data());
      const auto want = naive(d.M, d.N, d.K, a, d.K, 1, b, d.N, 1, 0.5f, bias.data(), &c0);
      GemmEpilogue ep;
      ep.alpha = 0.5f;
      ep.row_bias = bias.data();
      ep.accumulate = true;
      const RowMajor rm{b.data(), d.N};
      const GemmOperand b_variants[] = {GemmOperand::packed(pb.data()), GemmOperand::callback(&pack_from_row_major, &rm)};
      for (const GemmOperand& bop : b_variants) {
        std::vector<float> c = c0;
        gemm(d.M, d.N, d.K, GemmOperand::packed(pa.data()), bop, c.data(), d.N, ep);
        EXPECT_TRUE(all_close(c, want)) << d.M << "x" << d.N << "x" << d.K;
      }
    }
  });
}

TEST(GemmKernel, WritesOnlyInsideLdcWindow) {
  for_each_isa([] {
    // C is a 3x5 window of a 3x9 buffer: the columns beyond N must stay untouched.
    const std::vector<float> a = {1, 2, 3, 4, 5, 6};            // 3x2
    const std::vector<float> b = {1, 0, 2, 0, 1, 0, 1, 0, 1, 1};  // 2x5
    std::vector<float> c(27, -7.0f);
    gemm(3, 5, 2, GemmOperand::strided(a.data(), 2, 1), GemmOperand::strided(b.data(), 5, 1), c.data(), 9);
    // B rows: [1, 0, 2, 0, 1] and [0, 1, 0, 1, 1].
    // Row 0: [1,2].B = [1*1+2*0, 1*0+2*1, 1*2+2*0, 1*0+2*1, 1*1+2*1] = [1, 2, 2, 2, 3]
    const std::vector<float> row0 = {1, 2, 2, 2, 3, -7, -7, -7, -7};
    EXPECT_EQ(std::vector<float>(c.begin(), c.begin() + 9), row0);
    // Row 2: [5,6].B = [5, 6, 10, 6, 11]
    const std::vector<float> row2 = {5, 6, 10, 6, 11, -7, -7, -7, -7};
    EXPECT_EQ(std::vector<float>(c.begin() + 18, c.end()), row2);
  });
}

TEST(GemmKernel, NamesTheInstructionSetsItHas) {
  const std::vector<GemmIsa> isas = gemm_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas[0], GemmIsa::Portable);  // every build has the portable kernel
  EXPECT_EQ(gemm_isa(), isas.back());     // and uses the best one it has
  try {
    set_gemm_isa("neon");
    FAIL() << "an unknown instruction set was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'neon'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'portable'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(gemm_isa(), isas.back());
}

TEST(GemmKernel, ZeroDepthGivesBiasPlusC) {
  const std::vector<float> bias = {1.0f, -2.0f};
  std::vector<float> c = {10, 20, 30, 40, 50, 60};
  GemmEpilogue ep;
  ep.row_bias = bias.data();
  ep.accumulate = true;
  gemm(2, 3, 0, GemmOperand::strided(nullptr, 0, 1), GemmOperand::strided(nullptr, 3, 1), c.data(), 3, ep);
  EXPECT_EQ(c, (std::vector<float>{11, 21, 31, 38, 48, 58}));
}
