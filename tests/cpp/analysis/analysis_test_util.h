#pragma once
// Calibration data sets made in memory for the analysis tests: one .npy per sample and input,
// named "<input>/<k>.npy" so that the lexicographic order is the sample order for k < 10.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"
#include "data/calibration_data.h"
#include "io/npy.h"

namespace ptq::test {

// x -> x_HzCalibration -> Relu_1 -> r -> r_HzCalibration (int16) -> Mul_2(r_cal, w_cal) -> y1
//                                    \-> Add_3(r, x) -> y2
// Calibration sets: Relu_1 {x}, Mul_2 {r, w}, Add_3 {x} (through the skippable Relu).
inline const std::vector<float>& relu_mul_add_weights() {
  static const std::vector<float> w = {0.3f, -0.7f, 1.1f, 0.05f};
  return w;
}

// Adds that model's inputs, nodes and outputs to `b` (tests extend it with more nodes).
inline void add_relu_mul_add(test::GraphBuilder& b) {
  b.input("x", DType::Float, {1, 4});
  b.initializer("w", Tensor::from_floats({1, 4}, relu_mul_add_weights()));
  b.calibration("x", {attr_floats("thresholds", {1.27f})});
  b.calibration("w", {attr_floats("thresholds", {1.1f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.calibration("r", {attr_floats("thresholds", {2.0f}), attr_string("qtype", "int16")});
  b.node("Mul_2", "Mul", {"r_cal", "w_cal"}, {"y1"});
  b.node("Add_3", "Add", {"r", "x"}, {"y2"});
  b.output("y1");
  b.output("y2");
}

inline ir::Model relu_mul_add_model() {
  test::GraphBuilder b;
  add_relu_mul_add(b);
  return b.model();
}

class SampleSet {
 public:
  // samples[k][i] = tensor of graph input i for sample k.
  SampleSet(const ir::Graph& graph, const std::vector<std::vector<Tensor>>& samples) {
    for (size_t k = 0; k < samples.size(); ++k)
      for (size_t i = 0; i < samples[k].size(); ++i) {
        bytes_.push_back(io::write_npy(samples[k][i]));
        paths_.push_back(graph.value(graph.inputs[i]).name + "/" + std::to_string(k) + ".npy");
      }
    std::vector<data::FileEntry> files;
    for (size_t f = 0; f < bytes_.size(); ++f) files.push_back({paths_[f], bytes_[f].data(), bytes_[f].size()});
    data_ = data::CalibrationData::from_files(graph, files);
  }
  const data::CalibrationData& data() const { return data_; }

 private:
  std::vector<std::vector<uint8_t>> bytes_;
  std::vector<std::string> paths_;
  data::CalibrationData data_;
};

// Symmetric fake quantization by hand: clamp(round_half_even(v / s), qmin, qmax) · s, s = t / qmax.
inline float fq(float v, float threshold, int bits = 8) {
  const float qmax = static_cast<float>((1 << (bits - 1)) - 1), qmin = -qmax - 1.0f;
  const float s = threshold / qmax;
  return std::min(std::max(std::nearbyint(v / s), qmin), qmax) * s;
}

inline void expect_error(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected the error: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

}  // namespace ptq::test
