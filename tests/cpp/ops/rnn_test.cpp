// RNN / GRU / LSTM with one hidden unit, against the ONNX equations written out in the test;
// sequence_lens, reverse direction and rejected attributes.
#include <cmath>
#include <string>

#include "ops/op_test_util.h"

namespace ptq {
namespace {

using test::attr_string;
using test::attr_strings;
using test::expect_tensor_near;
using test::floats;
using test::int64s;
using test::run_op;

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

TEST(Rnn, SimpleRnnSequenceLensAndReverse) {
  // X [seq 2, batch 2, input 1]; W = R = 0.5, B: Wb = 0.1, Rb = 0.2. Batch 1 has length 1.
  const Tensor x = floats({2, 2, 1}, {1, 3, 2, 4});
  const Tensor w = floats({1, 1, 1}, {0.5f}), r = floats({1, 1, 1}, {0.5f}), b = floats({1, 2}, {0.1f, 0.2f});
  const auto out = run_op("RNN", {x, w, r, b, int64s({2}, {2, 1})}, {}, 2);
  const float h00 = std::tanh(0.5f * 1 + 0.3f), h01 = std::tanh(0.5f * 3 + 0.3f);
  const float h10 = std::tanh(0.5f * 2 + 0.5f * h00 + 0.3f);
  expect_tensor_near(out[0], {2, 1, 2, 1}, {h00, h01, h10, 0});  // past its length batch 1 stays 0
  expect_tensor_near(out[1], {1, 2, 1}, {h10, h01});
  // Reverse: batch 0 reads step 1 first.
  const auto rev = run_op("RNN", {x, w, r, b}, {attr_string("direction", "reverse")}, 2);
  const float g1 = std::tanh(0.5f * 2 + 0.3f), g0 = std::tanh(0.5f * 1 + 0.5f * g1 + 0.3f);
  EXPECT_NEAR(rev[0].to_float_vector()[0], g0, 1e-6f);
  EXPECT_NEAR(rev[1].to_float_vector()[0], g0, 1e-6f);
  EXPECT_THROW(run_op("RNN", {x, w, r}, {attr_strings("activations", {"Affine"})}, 2), Error);
  EXPECT_THROW(run_op("RNN", {x, w, r}, {attr_string("direction", "both")}, 2), Error);
}

TEST(Rnn, GruAndLstmOneStep) {
  // One step from zero state, input 1, all weights 1 and no bias: GRU z = r = sigmoid(1),
  // h~ = tanh(1 + (r * 0) * 1) = tanh(1), H = (1 - z) * tanh(1).
  const Tensor x = floats({1, 1, 1}, {1});
  const auto gru = run_op("GRU", {x, floats({1, 3, 1}, {1, 1, 1}), floats({1, 3, 1}, {1, 1, 1})}, {}, 2);
  const float z = sigmoid(1);
  expect_tensor_near(gru[1], {1, 1, 1}, {(1 - z) * std::tanh(1.0f)});
  // LSTM: i = o = f = sigmoid(1), c~ = tanh(1), C = i * tanh(1), H = o * tanh(C).
  const auto lstm = run_op("LSTM", {x, floats({1, 4, 1}, {1, 1, 1, 1}), floats({1, 4, 1}, {1, 1, 1, 1})}, {}, 3);
  const float c = sigmoid(1) * std::tanh(1.0f);
  expect_tensor_near(lstm[2], {1, 1, 1}, {c});
  expect_tensor_near(lstm[1], {1, 1, 1}, {sigmoid(1) * std::tanh(c)});
}

}  // namespace
}  // namespace ptq
