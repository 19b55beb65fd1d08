#include "analysis/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"

using namespace ptq;
using namespace ptq::analysis;

TEST(Metrics, HandComputedVectors) {
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<float> b = {1, 2, 3, 2};
  // dot = 1+4+9+8 = 22; |a| = sqrt(30); |b| = sqrt(18)
  EXPECT_NEAR(compute_metric(Metric::Cosine, a.data(), b.data(), 4), 22.0 / std::sqrt(30.0 * 18.0), 1e-6);
  EXPECT_FLOAT_EQ(compute_metric(Metric::Mse, a.data(), b.data(), 4), 1.0f);        // 4/4
  EXPECT_FLOAT_EQ(compute_metric(Metric::Mre, a.data(), b.data(), 4), 0.5f);        // 2/4
  EXPECT_FLOAT_EQ(compute_metric(Metric::Chebyshev, a.data(), b.data(), 4), 2.0f);
  // sqnr = 20·log10(sqrt(sqrt(30)) / sqrt(2)) = 10·log10(sqrt(30)/2)
  EXPECT_NEAR(compute_metric(Metric::Sqnr, a.data(), b.data(), 4), 10.0 * std::log10(std::sqrt(30.0) / 2.0), 1e-5);
  EXPECT_TRUE(std::isinf(compute_metric(Metric::Sqnr, a.data(), a.data(), 4)));
  // Zero vectors: cosine uses the 1e-8 floor -> 0.
  const std::vector<float> z = {0, 0, 0, 0};
  EXPECT_EQ(compute_metric(Metric::Cosine, z.data(), z.data(), 4), 0.0f);
}

TEST(Metrics, NamesAndDirections) {
  EXPECT_EQ(parse_metric("mse"), Metric::Mse);
  EXPECT_TRUE(higher_is_better(Metric::Cosine));
  EXPECT_TRUE(higher_is_better(Metric::Sqnr));
  EXPECT_FALSE(higher_is_better(Metric::Chebyshev));
  try {
    parse_metric("MSE");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "metrics contain unavailable method: MSE");
  }
}

TEST(Metrics, PairwiseSumMatchesNumpyOrder) {
  // 1e8 + 1 + 1 ... : sequential float32 summation loses every 1; pairwise keeps the small ones
  // grouped. Expected value computed with Debian numpy 1.24:
  // np.add.reduce(np.array([1e8]+[1]*255, dtype=np.float32)) == 100000240.0
  std::vector<float> v(256, 1.0f);
  v[0] = 1e8f;
  EXPECT_EQ(pairwise_sum(v.data(), 256), 100000240.0f);
}

TEST(Metrics, AggregateDropsNaNKeepsInf) {
  const float nan = std::nanf("");
  EXPECT_FLOAT_EQ(aggregate({{1.0f, nan, 3.0f}, {4.0f}}), 3.0f);  // (2 + 4) / 2
  EXPECT_TRUE(std::isnan(aggregate({{nan}, {nan}})));
  EXPECT_TRUE(std::isinf(aggregate({{INFINITY, 1.0f}})));
}
