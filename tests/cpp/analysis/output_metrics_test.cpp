#include "analysis/output_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"

using namespace ptq;
using namespace ptq::analysis;

namespace {
size_t index_of(Metric m) {
  for (size_t i = 0; i < all_metrics().size(); ++i)
    if (all_metrics()[i] == m) return i;
  return all_metrics().size();
}
}  // namespace

// Two outputs, two samples; the metrics by hand (§4) and their §3.3 aggregation.
TEST(OutputMetrics, PerOutputAndMeanOverSamples) {
  OutputMetrics m(2);
  // output 0: sample 1 differs by 2 in one of 4 elements (mse 4/4 = 1), sample 2 is identical (mse 0)
  m.add(0, Tensor::from_floats({4}, {1, 2, 3, 4}), Tensor::from_floats({4}, {1, 2, 3, 2}));
  m.add(0, Tensor::from_floats({4}, {1, 2, 3, 4}), Tensor::from_floats({4}, {1, 2, 3, 4}));
  // output 1: mse 1 and 3 -> (1 + 3) / 2 = 2 (compared as float32 whatever their type: int64 here)
  m.add(1, Tensor::from_int64s({2}, {0, 0}), Tensor::from_int64s({2}, {1, 1}));
  m.add(1, Tensor::from_int64s({2}, {0, 0}), Tensor::from_int64s({2}, {1, 2}));  // (1 + 4) / 2 = 2.5
  const auto per_output = m.per_output();
  const size_t mse = index_of(Metric::Mse), cheb = index_of(Metric::Chebyshev);
  EXPECT_FLOAT_EQ(per_output[0][mse], 0.5f);   // (1 + 0) / 2
  EXPECT_FLOAT_EQ(per_output[1][mse], 1.75f);  // (1 + 2.5) / 2
  EXPECT_FLOAT_EQ(per_output[0][cheb], 1.0f);  // (2 + 0) / 2
  EXPECT_FLOAT_EQ(m.mean()[mse], 1.125f);      // (0.5 + 1.75) / 2
  // sqnr of identical tensors is +inf and stays in the mean (§3.3): output 0's sqnr is +inf.
  EXPECT_TRUE(std::isinf(per_output[0][index_of(Metric::Sqnr)]));
}

// Sizes that differ give NaN for that sample, which the aggregation leaves out.
TEST(OutputMetrics, SizeMismatchIsLeftOut) {
  OutputMetrics m(1);
  m.add(0, Tensor::from_floats({2}, {1, 1}), Tensor::from_floats({3}, {1, 1, 1}));
  m.add(0, Tensor::from_floats({2}, {1, 1}), Tensor::from_floats({2}, {1, 3}));  // mse 4 / 2 = 2
  EXPECT_FLOAT_EQ(m.per_output()[0][index_of(Metric::Mse)], 2.0f);
  EXPECT_THROW(m.add(1, Tensor::from_floats({1}, {0}), Tensor::from_floats({1}, {0})), Error);
}
