// what_if and node_errors against brute force: full runs (no cache, no incremental re-execution) of
// explicitly spelled-out configurations, metrics computed on their tensors.
#include "analysis/what_if.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/analysis_test_util.h"
#include "analysis/node_errors.h"
#include "analysis/selection.h"

using namespace ptq;

namespace {

// test::relu_mul_add_model(): normal nodes Relu_1 {x} -> r, Mul_2 {r, w} -> y1, Add_3 {x} -> y2.
struct Fixture {
  exec::Executor ex{test::relu_mul_add_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})},
                           {Tensor::from_floats({1, 4}, {-1.0f, 0.7f, 0.01f, 0.6f})},
                           {Tensor::from_floats({1, 4}, {0.2f, 0.25f, -0.4f, 1.3f})}}};

  size_t idx(const std::string& n) const { return static_cast<size_t>(ex.calibration_index(n)); }
  int value(const std::string& n) const { return ex.graph().find_value(n); }

  // Brute force: `metric` of tensor `name` under `config` against the float model, §3.3 over samples.
  float brute(const exec::QuantConfig& config, const std::vector<std::string>& names, const std::vector<size_t>& ids,
              analysis::Metric metric) {
    std::vector<std::vector<float>> per_tensor(names.size());
    for (size_t s : ids) {
      std::vector<int> keep;
      for (const auto& n : names) keep.push_back(value(n));
      const auto ref = ex.run(samples.data().sample(s), ex.uniform_config(false), keep);
      const auto got = ex.run(samples.data().sample(s), config, keep);
      for (size_t t = 0; t < names.size(); ++t) {
        const Tensor& a = ref.values[static_cast<size_t>(keep[t])];
        const Tensor& b = got.values[static_cast<size_t>(keep[t])];
        per_tensor[t].push_back(analysis::compute_metric(metric, a.data<float>(), b.data<float>(), a.numel()));
      }
    }
    return analysis::aggregate(per_tensor);
  }
};

}  // namespace

TEST(WhatIf, OutputsAndNodesMatchFullRunsOfTheConfiguration) {
  Fixture f;
  exec::QuantConfig c = f.ex.stored_config();
  c.qtype[f.idx("w_HzCalibration")] = "int16";
  c.on[f.idx("x_HzCalibration")] = 0;
  c.round = quant::RoundMode::HalfAwayFromZero;
  analysis::WhatIfOptions o;
  o.config = c;
  o.data_num = 2;
  o.metric = "mse";
  const auto r = analysis::what_if(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.samples, (std::vector<std::string>{"1.npy", "2.npy"}));
  EXPECT_EQ(r.outputs, (std::vector<std::string>{"y1", "y2"}));
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"Relu_1", "Mul_2", "Add_3"}));
  const auto& metrics = analysis::all_metrics();
  for (size_t m = 0; m < metrics.size(); ++m) {
    EXPECT_EQ(r.output_metrics[0][m], f.brute(c, {"y1"}, {1, 2}, metrics[m])) << m;
    EXPECT_EQ(r.output_metrics[1][m], f.brute(c, {"y2"}, {1, 2}, metrics[m])) << m;
    EXPECT_EQ(r.mean[m], f.brute(c, {"y1", "y2"}, {1, 2}, metrics[m])) << m;
  }
  // x is OFF: Relu_1's and Add_3's outputs are exact; Mul_2 sees r (int16) and w (int16).
  EXPECT_EQ(r.node_values[0], 0.0f);
  EXPECT_EQ(r.node_values[2], 0.0f);
  EXPECT_GT(r.node_values[1], 0.0f);
  EXPECT_EQ(r.node_values[1], f.brute(c, {"y1"}, {1, 2}, analysis::Metric::Mse));
}

TEST(WhatIf, HeldOutSamplesAreReportedBeside) {
  Fixture f;
  exec::QuantConfig c = f.ex.stored_config();
  c.thresholds.assign(c.on.size(), {});
  c.thresholds[f.idx("x_HzCalibration")] = {0.8f};  // a threshold override, as a hint's "apply" sets
  analysis::WhatIfOptions o;
  o.config = c;
  o.data_num = 0;  // the three samples: 0.npy and 2.npy tuned on, 1.npy held out (§13.4)
  o.held_out = true;
  const auto r = analysis::what_if(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(r.samples, (std::vector<std::string>{"0.npy", "2.npy"}));
  EXPECT_EQ(r.held_out_samples, (std::vector<std::string>{"1.npy"}));
  const auto& metrics = analysis::all_metrics();
  for (size_t m = 0; m < metrics.size(); ++m) {
    EXPECT_EQ(r.mean[m], f.brute(c, {"y1", "y2"}, {0, 2}, metrics[m])) << m;
    EXPECT_EQ(r.held_out_mean[m], f.brute(c, {"y1", "y2"}, {1}, metrics[m])) << m;
  }
  // One sample: nothing held out.
  o.data_num = 1;
  const auto one = analysis::what_if(f.ex, f.rel, f.samples.data(), o);
  EXPECT_TRUE(one.split);
  EXPECT_TRUE(one.held_out_samples.empty());
}

TEST(WhatIf, OneToggleRerunsOnlyItsCone) {
  Fixture f;
  analysis::WhatIfOptions o;  // as stored, last sample
  const auto first = analysis::what_if(f.ex, f.rel, f.samples.data(), o);
  EXPECT_GT(first.nodes_executed, 0);
  // The same configuration again: every record comes from the run cache.
  EXPECT_EQ(analysis::what_if(f.ex, f.rel, f.samples.data(), o).nodes_executed, 0);
  // w -> int16 reaches w's calibration node and Mul_2 only.
  exec::QuantConfig c = f.ex.stored_config();
  c.qtype[f.idx("w_HzCalibration")] = "int16";
  o.config = c;
  const auto toggled = analysis::what_if(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(toggled.nodes_executed, 2);
  EXPECT_EQ(toggled.mean[0], f.brute(c, {"y1", "y2"}, {2}, analysis::Metric::Cosine));
  EXPECT_EQ(toggled.node_values[1], f.brute(c, {"y1"}, {2}, analysis::Metric::Cosine));
  EXPECT_EQ(toggled.node_values[0], first.node_values[0]);
  // Back to the stored state: cached.
  o.config.reset();
  EXPECT_EQ(analysis::what_if(f.ex, f.rel, f.samples.data(), o).nodes_executed, 0);
}

TEST(NodeErrors, OwnAndAccumulatedMatchFullRuns) {
  Fixture f;
  analysis::NodeErrorsOptions o;
  o.data_num = 0;  // all three samples
  const auto r = analysis::node_errors(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.nodes, (std::vector<std::string>{"Relu_1", "Mul_2", "Add_3"}));
  const exec::QuantConfig stored = f.ex.stored_config();
  const std::vector<size_t> all = {0, 1, 2};
  const auto own = [&](const std::vector<std::string>& on) {
    exec::QuantConfig c = f.ex.uniform_config(false);
    for (const auto& n : on) c.on[f.idx(n)] = 1;
    return c;
  };
  const analysis::Metric cos = analysis::Metric::Cosine;
  EXPECT_EQ(r.own[0], f.brute(own({"x_HzCalibration"}), {"r"}, all, cos));
  EXPECT_EQ(r.own[1], f.brute(own({"r_HzCalibration", "w_HzCalibration"}), {"y1"}, all, cos));
  EXPECT_EQ(r.own[2], f.brute(own({"x_HzCalibration"}), {"y2"}, all, cos));
  EXPECT_EQ(r.accumulated[0], f.brute(stored, {"r"}, all, cos));
  EXPECT_EQ(r.accumulated[1], f.brute(stored, {"y1"}, all, cos));
  EXPECT_EQ(r.accumulated[2], f.brute(stored, {"y2"}, all, cos));
  // Mul_2's own error (r int16, w int8) differs from its accumulated one (x int8 upstream as well).
  EXPECT_NE(r.own[1], r.accumulated[1]);

  // Under a configuration keeping Mul_2 in float: own is exact, accumulated still carries x's error.
  exec::QuantConfig c = stored;
  c.on[f.idx("r_HzCalibration")] = 0;
  c.on[f.idx("w_HzCalibration")] = 0;
  o.config = c;
  const auto g = analysis::node_errors(f.ex, f.rel, f.samples.data(), o);
  EXPECT_EQ(g.own[1], f.brute(f.ex.uniform_config(false), {"y1"}, all, cos));
  EXPECT_EQ(g.accumulated[1], f.brute(c, {"y1"}, all, cos));
  EXPECT_LT(g.accumulated[1], 1.0f);
}

// measure = "converter" (§12.3): at the output of the calibration node directly following the node (Relu_1
// -> r_HzCalibration), else its output, over the samples' tensors flattened together into one vector.
TEST(NodeErrors, ConverterMeasureIsTheFakeQuantizedOutputOverTheFlattenedBatch) {
  Fixture f;
  analysis::NodeErrorsOptions o;
  o.data_num = 0;
  o.converter = true;
  const auto r = analysis::node_errors(f.ex, f.rel, f.samples.data(), o);
  ASSERT_EQ(r.nodes, (std::vector<std::string>{"Relu_1", "Mul_2", "Add_3"}));
  EXPECT_TRUE(r.converter);
  // Brute force: full runs of each sample, the tensors concatenated in sample order, one metric.
  const auto pooled = [&](const exec::QuantConfig& config, const std::string& name) {
    std::vector<float> a, b;
    for (size_t s = 0; s < 3; ++s) {
      const std::vector<int> keep = {f.value(name)};
      const auto ref = f.ex.run(f.samples.data().sample(s), f.ex.uniform_config(false), keep);
      const auto got = f.ex.run(f.samples.data().sample(s), config, keep);
      const Tensor& x = ref.values[static_cast<size_t>(keep[0])];
      const Tensor& y = got.values[static_cast<size_t>(keep[0])];
      a.insert(a.end(), x.data<float>(), x.data<float>() + x.numel());
      b.insert(b.end(), y.data<float>(), y.data<float>() + y.numel());
    }
    return analysis::compute_metric(analysis::Metric::Cosine, a.data(), b.data(), static_cast<int64_t>(a.size()));
  };
  const auto own = [&](const std::vector<std::string>& on) {
    exec::QuantConfig c = f.ex.uniform_config(false);
    for (const auto& n : on) c.on[f.idx(n)] = 1;
    return c;
  };
  const exec::QuantConfig stored = f.ex.stored_config();
  // Relu_1 is measured at r_cal, the int16 fake-quantized r; own has x and that calibration node on.
  EXPECT_EQ(r.accumulated[0], pooled(stored, "r_cal"));
  EXPECT_EQ(r.own[0], pooled(own({"x_HzCalibration", "r_HzCalibration"}), "r_cal"));
  EXPECT_EQ(r.accumulated[1], pooled(stored, "y1"));
  EXPECT_EQ(r.own[1], pooled(own({"r_HzCalibration", "w_HzCalibration"}), "y1"));
  EXPECT_EQ(r.accumulated[2], pooled(stored, "y2"));
  // Not the default measure: the int16 quantizer after Relu_1 adds error at r_cal, and one cosine over
  // the flattened batch is not the mean of the three samples' cosines.
  o.converter = false;
  const auto d = analysis::node_errors(f.ex, f.rel, f.samples.data(), o);
  EXPECT_NE(r.accumulated[0], d.accumulated[0]);
  EXPECT_NE(r.accumulated[2], d.accumulated[2]);
}
