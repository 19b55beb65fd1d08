// Window generators and DFT / STFT against values worked by hand.
#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_int;
using test::expect_tensor_near;
using test::run_op;
using test::int64s;

TEST(Signal, Windows) {
  // Periodic Hann of 4: 0.5 - 0.5 cos(2πn/4) = [0, 0.5, 1, 0.5]; symmetric of 3 uses N = 2.
  expect_tensor_near(run_op("HannWindow", {int64s({}, {4})})[0], {4}, {0, 0.5f, 1, 0.5f});
  expect_tensor_near(run_op("HannWindow", {int64s({}, {3})}, {attr_int("periodic", 0)})[0], {3}, {0, 1, 0});
  // Hamming: 25/46 - 21/46 cos: n = 0 -> 4/46, n = 2 of 4 -> 46/46.
  expect_tensor_near(run_op("HammingWindow", {int64s({}, {4})})[0], {4}, {4.0f / 46, 25.0f / 46, 1, 25.0f / 46});
  // Blackman: 0.42 - 0.5 cos + 0.08 cos(2·): n = 1 of 4 -> 0.42 - 0 - 0.08 = 0.34.
  expect_tensor_near(run_op("BlackmanWindow", {int64s({}, {4})})[0], {4}, {0, 0.34f, 1, 0.34f}, 1e-5f);
  const Tensor d = run_op("HannWindow", {int64s({}, {2})}, {attr_int("output_datatype", 11)})[0];
  EXPECT_EQ(d.dtype(), DType::Double);
  EXPECT_THROW(run_op("HannWindow", {int64s({}, {-1})}), Error);
}

TEST(Signal, DftForwardInverseOnesided) {
  // x = [1, 2, 3, 4] (real, shape [1, 4, 1]): X = [10, -2+2i, -2, -2-2i].
  const Tensor x = Tensor::from_floats({1, 4, 1}, {1, 2, 3, 4});
  const Tensor y = run_op("DFT", {x})[0];
  expect_tensor_near(y, {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  expect_tensor_near(run_op("DFT", {y}, {attr_int("inverse", 1)})[0], {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0});
  expect_tensor_near(run_op("DFT", {x}, {attr_int("onesided", 1)})[0], {1, 3, 2}, {10, 0, -2, 2, -2, 0});
  // dft_length 2 truncates to [1, 2]: [3, -1].
  expect_tensor_near(run_op("DFT", {x, int64s({}, {2})})[0], {1, 2, 2}, {3, 0, -1, 0});
  EXPECT_THROW(run_op("DFT", {x}, {attr_int("inverse", 1), attr_int("onesided", 1)}), Error);
}

TEST(Signal, StftFrames) {
  // Frames of 2 every 2 samples of [1, 2, 3, 4], rectangular window: DFTs [3, -1] and [7, -1].
  const Tensor x = Tensor::from_floats({1, 4, 1}, {1, 2, 3, 4});
  const Tensor y = run_op("STFT", {x, int64s({}, {2}), Tensor(), int64s({}, {2})}, {attr_int("onesided", 0)})[0];
  expect_tensor_near(y, {1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0});
  // A window [1, 0] keeps the first sample of each frame: every bin is that sample.
  const Tensor w = run_op("STFT", {x, int64s({}, {2}), Tensor::from_floats({2}, {1, 0})})[0];
  expect_tensor_near(w, {1, 2, 2, 2}, {1, 0, 1, 0, 3, 0, 3, 0});
  EXPECT_THROW(run_op("STFT", {x, int64s({}, {2}), Tensor(), int64s({}, {5})}), Error);  // frame beyond signal
}

}  // namespace
}  // namespace ptq
