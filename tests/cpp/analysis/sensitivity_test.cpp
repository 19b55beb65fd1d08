#include "analysis/sensitivity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis_test_util.h"
#include "core/size.h"
#include "graph_builder.h"
#include "io/npy.h"
#include "ops/op_test_util.h"

using namespace ptq;
using ptq::test::attr_floats;
using ptq::test::attr_string;

namespace {

// test::relu_mul_add_model() (analysis_test_util.h).
ir::Model model() { return test::relu_mul_add_model(); }

struct Fixture {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<data::FileEntry> files;
};

data::CalibrationData three_samples(const ir::Graph& g, Fixture& f) {
  const std::vector<std::vector<float>> values = {{0.5f, -0.2f, 0.9f, 0.33f}, {-1.0f, 0.7f, 0.01f, 0.6f}, {0.2f, 0.2f, -0.4f, 1.3f}};
  for (size_t i = 0; i < values.size(); ++i) f.bytes.push_back(io::write_npy(Tensor::from_floats({1, 4}, values[i])));
  for (size_t i = 0; i < values.size(); ++i) f.files.push_back({"x/" + std::to_string(i) + ".npy", f.bytes[i].data(), f.bytes[i].size()});
  return data::CalibrationData::from_files(g, f.files);
}

// The model, its relations and three samples, as most tests here need them.
struct Sweep {
  exec::Executor ex{model()};
  quant::CalibrationRelations rel{ex.graph()};
  Fixture f;
  data::CalibrationData d = three_samples(ex.graph(), f);
};

// Brute force: a full run of the variant per item, no cache.
float brute_force(exec::Executor& ex, const data::CalibrationData& d, const std::vector<size_t>& samples,
                  const std::vector<int>& toggled, analysis::Metric m, bool leave_one_out = false) {
  std::vector<std::vector<float>> per_output(ex.graph().outputs.size());
  for (size_t s : samples) {
    exec::QuantConfig c = ex.uniform_config(leave_one_out);
    for (int i : toggled) c.on[static_cast<size_t>(i)] = leave_one_out ? 0 : 1;
    auto ref = ex.outputs(ex.run(d.sample(s), ex.uniform_config(false)));
    auto got = ex.outputs(ex.run(d.sample(s), c));
    for (size_t o = 0; o < ref.size(); ++o)
      per_output[o].push_back(analysis::compute_metric(m, ref[o].data<float>(), got[o].data<float>(), ref[o].numel()));
  }
  return analysis::aggregate(per_output);
}

}  // namespace

TEST(Sensitivity, ItemsPerNodeType) {
  exec::Executor ex(model());
  quant::CalibrationRelations rel(ex.graph());
  analysis::SensitivityOptions o;
  auto keys = [&] {
    std::vector<std::string> k;
    for (const auto& it : analysis::sensitivity_items(ex, rel, o)) k.push_back(it.key);
    return k;
  };
  EXPECT_EQ(keys(), (std::vector<std::string>{"Relu_1", "Mul_2", "Add_3"}));
  o.node_type = "weight";
  EXPECT_EQ(keys(), (std::vector<std::string>{"w_HzCalibration"}));
  o.node_type = "activation";
  EXPECT_EQ(keys(), (std::vector<std::string>{"x_HzCalibration", "r_HzCalibration"}));
  o.node_type = "tae";
  EXPECT_TRUE(keys().empty());
  o.has_interested = true;
  o.interested = {{"Mul_2"}, {"x_HzCalibration", "Mul_2"}};
  auto items = analysis::sensitivity_items(ex, rel, o);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].key, "x_HzCalibration+Mul_2");
  EXPECT_EQ(items[1].calibrations.size(), 3u);  // x, r, w
  o.interested = {{"nope"}};
  try {
    analysis::sensitivity_items(ex, rel, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "nope does not exist in the model.");
  }
}

TEST(Sensitivity, IncrementalSweepEqualsBruteForce) {
  Sweep sw;
  auto& [ex, rel, f, d] = sw;
  for (const std::string type : {"node", "weight", "activation"}) {
    analysis::SensitivityOptions o;
    o.node_type = type;
    o.metrics = {"mse", "cosine-similarity", "sqnr", "mre", "chebyshev"};
    o.data_num = 2;
    auto result = analysis::get_sensitivity_of_nodes(ex, rel, d, o);
    EXPECT_EQ(result.samples, (std::vector<std::string>{"1.npy", "2.npy"}));  // the last two
    auto items = analysis::sensitivity_items(ex, rel, o);
    for (const auto& row : result.rows) {
      auto it = std::find_if(items.begin(), items.end(), [&](const auto& i) { return i.key == row.item; });
      ASSERT_NE(it, items.end());
      for (size_t m = 0; m < o.metrics.size(); ++m) {
        const float expected = brute_force(ex, d, {1, 2}, it->calibrations, analysis::parse_metric(o.metrics[m]));
        if (std::isnan(expected)) EXPECT_TRUE(std::isnan(row.values[m]));
        else EXPECT_EQ(row.values[m], expected) << type << " " << row.item << " " << o.metrics[m];
      }
    }
    // Sorted by mse, descending.
    for (size_t i = 1; i < result.rows.size(); ++i) EXPECT_GE(result.rows[i - 1].values[0], result.rows[i].values[0]);
  }
}

// A sweep split into parts (item ranges, as the page's pool sends them): the later parts reuse the
// base runs of the first from the executor's run cache, and the rows equal one uncached sweep.
TEST(Sensitivity, SplitSweepReusesTheBaseRuns) {
  for (const bool leave_one_out : {false, true}) {
    Sweep sw;
    auto& [ex, rel, f, d] = sw;
    analysis::SensitivityOptions o;
    o.node_type = "activation";
    o.metrics = {"cosine-similarity", "mse"};
    o.data_num = 2;
    o.leave_one_out = leave_one_out;
    const size_t count = analysis::sensitivity_items(ex, rel, o).size();
    ASSERT_GE(count, 2u);
    ex.set_run_cache_budget(0);
    const auto whole = analysis::get_sensitivity_of_nodes(ex, rel, d, o);
    ex.set_run_cache_budget(exec::Executor::kDefaultRunCacheBudget);
    std::vector<analysis::SensitivityRow> rows;
    for (size_t k = 0; k < count; ++k) {
      o.item_begin = k;
      o.item_end = k + 1;
      const auto part = analysis::get_sensitivity_of_nodes(ex, rel, d, o);
      rows.insert(rows.end(), part.rows.begin(), part.rows.end());
    }
    EXPECT_EQ(ex.run_cache_hits(), 2 * (count - 1)) << "two samples, every part after the first";
    analysis::sort_rows(rows, analysis::parse_metric(o.metrics[0]));
    ASSERT_EQ(rows.size(), whole.rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].item, whole.rows[i].item);
      EXPECT_EQ(rows[i].values, whole.rows[i].values) << rows[i].item;
    }
  }
}

TEST(Sensitivity, ActivationColumnsAndLeaveOneOut) {
  Sweep sw;
  auto& [ex, rel, f, d] = sw;
  analysis::SensitivityOptions o;
  o.node_type = "activation";
  auto r = analysis::get_sensitivity_of_nodes(ex, rel, d, o);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) {
    EXPECT_TRUE(row.has_threshold);
    if (row.item == "r_HzCalibration") {
      EXPECT_EQ(row.qtype, "int16");
      EXPECT_EQ(row.node, "Mul_2");
      EXPECT_DOUBLE_EQ(row.threshold, 2.0);
    } else {
      EXPECT_EQ(row.node, "Relu_1");
    }
  }
  // Leave-one-out: the saved model (all ON) with only the item's set OFF, against the float model.
  o.node_type = "node";
  o.leave_one_out = true;
  o.metrics = {"mse"};
  auto loo = analysis::get_sensitivity_of_nodes(ex, rel, d, o);
  auto items = analysis::sensitivity_items(ex, rel, o);
  ASSERT_EQ(loo.rows.size(), items.size());
  for (const auto& row : loo.rows) {
    auto it = std::find_if(items.begin(), items.end(), [&](const auto& i) { return i.key == row.item; });
    EXPECT_EQ(row.values[0], brute_force(ex, d, {2}, it->calibrations, analysis::Metric::Mse, true)) << row.item;
  }
}

namespace {

// `count` samples of the model's one input (dims [1, width]), values spread over [-1.5, 1.5).
std::vector<std::vector<Tensor>> spread_samples(size_t count, int64_t width) {
  std::vector<std::vector<Tensor>> samples;
  for (size_t k = 0; k < count; ++k) {
    std::vector<float> v(static_cast<size_t>(width));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((k * 7 + i * 13) % 31) / 10.0f - 1.5f;
    samples.push_back({Tensor::from_floats({1, width}, v)});
  }
  return samples;
}

// The bytes one sample's base run (keep-all, float model) holds against the memory budget.
size_t base_run_bytes(exec::Executor& ex, const data::CalibrationData& d) {
  const uint64_t before = memory_in_use();
  const exec::RunRecord base = ex.run(d.sample(0), ex.uniform_config(false), {}, true);
  return static_cast<size_t>(memory_in_use() - before);
}

}  // namespace

// Samples go in blocks of base runs within sample_block_bytes: the rows are those of the sweep that
// holds every sample's base run at once (one block), value for value, for every block size.
TEST(Sensitivity, SampleBlocksGiveTheRowsOfOneBlock) {
  for (const bool leave_one_out : {false, true}) {
    exec::Executor ex(model());
    quant::CalibrationRelations rel(ex.graph());
    const test::SampleSet set(ex.graph(), spread_samples(12, 4));
    analysis::SensitivityOptions o;
    o.metrics = {"cosine-similarity", "mse"};
    o.data_num = 0;  // all 12
    o.leave_one_out = leave_one_out;
    const size_t record = base_run_bytes(ex, set.data());
    ASSERT_GT(record, 0u);
    o.sample_block_bytes = 100 * record;
    const auto whole = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
    ASSERT_EQ(whole.samples.size(), 12u);
    for (const size_t budget : {size_t{0}, 3 * record, 5 * record}) {  // blocks of 1, 3 and 5 samples
      ex.clear_run_cache();
      o.sample_block_bytes = budget;
      size_t streamed = 0;
      o.on_row = [&](const analysis::SensitivityRow&) { ++streamed; };
      const auto blocked = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
      EXPECT_EQ(streamed, whole.rows.size()) << "each row streamed once, when finished";
      ASSERT_EQ(blocked.rows.size(), whole.rows.size());
      for (size_t i = 0; i < whole.rows.size(); ++i) {
        EXPECT_EQ(blocked.rows[i].item, whole.rows[i].item) << budget;
        EXPECT_EQ(blocked.rows[i].values, whole.rows[i].values) << budget << " " << whole.rows[i].item;
      }
    }
  }
}

// Progress counts (item, sample) evaluations after each item of each sample block, so with blocks of
// one sample it advances (and a `false` answer cancels) long before the last block finishes any row.
TEST(Sensitivity, ProgressAdvancesInEverySampleBlock) {
  exec::Executor ex(model());
  quant::CalibrationRelations rel(ex.graph());
  const test::SampleSet set(ex.graph(), spread_samples(3, 4));
  analysis::SensitivityOptions o;
  o.data_num = 0;
  o.sample_block_bytes = 0;  // one sample per block
  std::vector<std::pair<size_t, size_t>> calls;
  size_t rows_at_first_call = 0;
  size_t streamed = 0;
  o.on_row = [&](const analysis::SensitivityRow&) { ++streamed; };
  o.progress = [&](size_t done, size_t total) {
    if (calls.empty()) rows_at_first_call = streamed;
    calls.emplace_back(done, total);
    return true;
  };
  const auto whole = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
  const size_t items = whole.rows.size();
  ASSERT_GT(items, 1u);
  std::vector<std::pair<size_t, size_t>> expected;
  for (size_t block = 0; block < 3; ++block)
    for (size_t k = 1; k <= items; ++k) expected.emplace_back(block * items + k, 3 * items);
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(rows_at_first_call, 0u) << "rows are finished in the last block";

  ex.clear_run_cache();
  streamed = 0;
  o.progress = [](size_t, size_t) { return false; };
  const auto cancelled = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_TRUE(cancelled.rows.empty()) << "cancelled in the first block, before any row was finished";
  EXPECT_EQ(streamed, 0u);
}

// The tensors a sweep holds do not grow with the sample count: with blocks and a run cache of two
// base runs each, 16 samples hold at most the cache's and one block's base runs at once, where
// holding every sample's base run would be 16 of them.
TEST(Sensitivity, HeldTensorsStayWithinTheRunCacheBudget) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 2048});
  b.calibration("x", {attr_floats("thresholds", {1.5f})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"r"});
  b.calibration("r", {attr_floats("thresholds", {1.5f})});
  b.node("Relu_2", "Relu", {"r_cal"}, {"y"});
  b.output("y");
  exec::Executor ex(b.model());
  quant::CalibrationRelations rel(ex.graph());
  const test::SampleSet set(ex.graph(), spread_samples(16, 2048));
  const size_t record = base_run_bytes(ex, set.data());
  ASSERT_GT(record, 0u);
  ex.set_run_cache_budget(2 * record);
  analysis::SensitivityOptions o;
  o.sample_block_bytes = 2 * record;
  o.node_type = "activation";
  o.data_num = 0;
  const uint64_t before = memory_in_use();
  uint64_t most = 0;
  o.on_row = [&](const analysis::SensitivityRow&) { most = std::max(most, memory_in_use() - before); };
  const auto result = analysis::get_sensitivity_of_nodes(ex, rel, set.data(), o);
  ASSERT_EQ(result.rows.size(), 2u);
  ASSERT_EQ(result.samples.size(), 16u);
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, 4 * record) << "record " << record;
}

TEST(Sensitivity, SortPutsNaNLastAndKeepsTies) {
  std::vector<analysis::SensitivityRow> rows(4);
  const float v[] = {0.9f, std::nanf(""), 0.5f, 0.9f};
  const char* names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    rows[static_cast<size_t>(i)].item = names[i];
    rows[static_cast<size_t>(i)].values = {v[i]};
  }
  analysis::sort_rows(rows, analysis::Metric::Cosine);
  EXPECT_EQ(rows[0].item, "c");
  EXPECT_EQ(rows[1].item, "a");
  EXPECT_EQ(rows[2].item, "d");
  EXPECT_EQ(rows[3].item, "b");
}

