// Session.analyze / listItems / mergeResults in C++ (api/analyze.h): requests, events, sections that
// carry exactly the analyses' numbers, and split sweeps that merge into the full-range document.
#include "api/analyze.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "analysis/accumulated_error.h"
#include "analysis/analysis_test_util.h"
#include "analysis/channelwise.h"
#include "analysis/distribution.h"
#include "analysis/sensitivity.h"
#include "analysis/sensitivity_analysis.h"
#include "analysis/stat_info.h"
#include "api/catalog.h"
#include "io/json.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using io::Json;
using test::attr_floats;
using test::attr_int;

namespace {

// a0 -> a0_HzCalibration -> Mul_1(a0_cal, w1_cal) -> a1 -> ... -> Mul_5 -> a5, weights [1, 4]
// (w3 per-channel along axis 1), thresholds chosen so that every item has its own sensitivity.
ir::Model chain_model() {
  test::GraphBuilder b;
  b.input("a0", DType::Float, {1, 4});
  const std::vector<std::vector<float>> w = {{0.9f, -1.1f, 0.45f, 1.3f},
                                             {1.2f, 0.8f, -0.6f, 0.35f},
                                             {0.7f, 1.05f, 0.95f, -1.25f},
                                             {-0.85f, 0.5f, 1.15f, 0.65f},
                                             {1.0f, -0.3f, 0.75f, 1.4f}};
  const std::vector<float> act_thresholds = {1.3f, 1.9f, 0.9f, 2.7f, 1.1f};
  const std::vector<float> weight_thresholds = {1.3f, 1.5f, 1.25f, 1.2f, 1.4f};
  for (int k = 1; k <= 5; ++k) {
    const std::string in = "a" + std::to_string(k - 1), wn = "w" + std::to_string(k);
    b.initializer(wn, Tensor::from_floats({1, 4}, w[static_cast<size_t>(k - 1)]));
    b.calibration(in, {attr_floats("thresholds", {act_thresholds[static_cast<size_t>(k - 1)]})});
    if (k == 3) b.calibration(wn, {attr_floats("thresholds", {0.7f, 1.05f, 0.95f, 1.25f}), attr_int("axis", 1)});
    else b.calibration(wn, {attr_floats("thresholds", {weight_thresholds[static_cast<size_t>(k - 1)]})});
    b.node("Mul_" + std::to_string(k), "Mul", {in + "_cal", wn + "_cal"}, {"a" + std::to_string(k)});
  }
  b.output("a5");
  return b.model();
}

struct Fixture {
  exec::Executor ex{chain_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})},
                           {Tensor::from_floats({1, 4}, {-1.0f, 0.7f, 0.01f, 0.6f})},
                           {Tensor::from_floats({1, 4}, {0.2f, 0.2f, -0.4f, 1.3f})}}};
  api::Context ctx() { return {ex, rel, &samples.data()}; }
  std::string analyze(const std::string& request, const api::EventFn& events = {}) {
    return api::analyze(ctx(), request, events);
  }
};

Json parse(const std::string& s) { return Json::parse(s, "test"); }

std::string without_timings(const std::string& doc) {
  Json j = parse(doc);
  j.erase("timings_ms");
  return j.dump();
}

std::vector<std::string> strings(const Json& array) {
  std::vector<std::string> out;
  for (const auto& v : array.items()) out.push_back(v.as_string());
  return out;
}

std::string json_strings(const std::vector<std::string>& v) {
  io::JsonWriter w;
  w.string_array(v);
  return w.str();
}

// The float32 a JSON number / non-finite string stands for, compared bit for bit (NaN == NaN).
void expect_float32(const Json& v, float expected, const std::string& what) {
  float got;
  if (v.is_number()) got = std::strtof(v.as_string().c_str(), nullptr);
  else got = static_cast<float>(v.as_number());
  if (std::isnan(expected)) EXPECT_TRUE(std::isnan(got)) << what;
  else EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0) << what << ": " << v.dump() << " vs " << expected;
}

void expect_double(const Json& v, double expected, const std::string& what) {
  const double got = v.is_number() ? std::strtod(v.as_string().c_str(), nullptr) : v.as_number();
  if (std::isnan(expected)) EXPECT_TRUE(std::isnan(got)) << what;
  else EXPECT_EQ(got, expected) << what;
}

// Splits the request's sweep at `cut` and merges the two parts.
std::string merged_halves(Fixture& f, const std::string& analysis, const std::string& options, size_t cut, size_t total) {
  const std::string head = R"({"analysis":")" + analysis + R"(","options":)" + options;
  const std::string a = f.analyze(head + R"(,"items":{"begin":0,"end":)" + std::to_string(cut) + "}}");
  const std::string b = f.analyze(head + R"(,"items":{"begin":)" + std::to_string(cut) + R"(,"end":)" + std::to_string(total) + "}}");
  EXPECT_NE(without_timings(a), without_timings(b));
  return api::merge_results("[" + b + "," + a + "]");  // part order must not matter
}

}  // namespace

TEST(ApiJson, ParsesAndWritesBackByteIdentical) {
  const std::string text = R"({"a":[1,-2.5e-07,0.99812,"nan",true,null],"b":{"z":"q\"\\\n\u0001","y":[]},"c":{}})";
  const Json j = parse(text);
  EXPECT_EQ(j.dump(), text);
  EXPECT_EQ(j.find("a")->items()[2].as_string(), "0.99812");
  EXPECT_TRUE(std::isnan(j.find("a")->items()[3].as_number()));
  EXPECT_EQ(j.find("b")->members()[0].first, "z");  // insertion order kept
  EXPECT_EQ(parse(R"("\u00e9\ud83d\ude00")").as_string(), "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(ApiJson, MalformedTextNamesTheOffset) {
  test::expect_error([] { parse("{\"a\":1,}"); }, "test: invalid JSON at offset 7: expected a string key");
  test::expect_error([] { parse("[1 2]"); }, "test: invalid JSON at offset 3: expected ']'");
  test::expect_error([] { parse("{\"a\":1,\"a\":2}"); }, "test: invalid JSON at offset 10: duplicate key \"a\"");
  test::expect_error([] { parse("01"); }, "test: invalid JSON at offset 1: unexpected text after the value");
  test::expect_error([] { parse(std::string(300, '[')); }, "test: invalid JSON at offset 201: nested too deeply");
}

TEST(ApiRequest, BadRequestsNameTheField) {
  Fixture f;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([1])", "request must be a JSON object {\"analysis\", \"options\", \"items\"?}, got an array"},
      {R"({"options":{}})", "request.analysis is missing (a string such as \"sensitivity\")"},
      {R"({"analysis":"sensitivty"})",
       "request.analysis: unknown analysis 'sensitivty' (known: sensitivity, leave_one_out, acc_error, distribution, "
       "channelwise, stat_info, sensitivity_analysis, what_if, node_errors, fix, explain, calibration_methods)"},
      {R"({"analysis":"sensitivity","option":{}})", "request.option: unknown field (expected analysis, options, items, model_file, config)"},
      {R"({"analysis":"sensitivity","options":{"metric":"mse"}})",
       "options.metric: unknown option of analysis 'sensitivity' (known: node_type, metrics, output_node, data_num, "
       "sample_selection, interested_nodes)"},
      {R"({"analysis":"sensitivity","options":{"metrics":["mse",3]}})", "options.metrics[1] must be a string, got a number"},
      {R"({"analysis":"sensitivity","options":{"data_num":1.5}})", "options.data_num must be an integer >= 0, got 1.5"},
      {R"({"analysis":"sensitivity","options":{"sample_selection":"middle"}})",
       "options.sample_selection must be 'last', 'first' or 'all', got 'middle'"},
      {R"({"analysis":"sensitivity","options":{"node_type":"edge"}})", "node_type:edge is unavailable."},
      {R"({"analysis":"sensitivity","options":{"metrics":"l1"}})", "metrics contain unavailable method: l1"},
      {R"({"analysis":"sensitivity","items":{"begin":3,"end":99}})", "items.end (99) is beyond the sweep's 5 items"},
      {R"({"analysis":"sensitivity","items":{"begin":3,"end":1}})", "items.begin (3) is greater than items.end (1)"},
      {R"({"analysis":"sensitivity","items":{"from":0}})", "items.from: unknown field (expected begin and end)"},
      {R"({"analysis":"sensitivity","items":["Mul_1","Mul_9"]})", "items[1]: 'Mul_9' is not an item of this sweep"},
      {R"({"analysis":"stat_info","items":{"begin":0,"end":1}})",
       "items: analysis 'stat_info' is not split into items (run it whole)"},
      {R"({"analysis":"acc_error","options":{"quantize_node":"weight"},"items":["only_activation_calibrated"]})",
       "items[0]: 'only_activation_calibrated' is not an item of this sweep"},
      {R"({"analysis":"acc_error","options":{"quantize_node":[1]}})", "options.quantize_node[0] must be a name or a list of names, got a number"},
      {R"({"analysis":"acc_error","options":{}})", "'quantize_node' and 'non_quantize_node' are both NONE."},
      {R"({"analysis":"acc_error","options":{"quantize_node":"weight","sample_selection":"all"}})",
       "options.sample_selection must be 'last' or 'first', got 'all'"},
      {R"({"analysis":"distribution","options":{}})", "options.nodes_list is missing: give the node names to plot"},
      {R"({"analysis":"distribution","options":{"nodes_list":["Nope"]}})", "Nope does not exist in the model."},
      {R"({"analysis":"channelwise","options":{"nodes_list":"a0_HzCalibration","axis":"1"}})",
       "options.axis must be an integer >= -64, got a string"},
      {R"({"analysis":"channelwise","options":{"nodes_list":"w3_HzCalibration","channels":[0,-1]}})",
       "options.channels[1] must be an integer >= 0, got -1"},
      {R"({"analysis":"channelwise","options":{"nodes_list":"w3_HzCalibration","channels":"2"}})",
       "options.channels must be an integer >= 0, got a string"},
      {R"({"analysis":"channelwise","options":{"nodes_list":["a2_HzCalibration","w3_HzCalibration"],"channels":[3,4]}})",
       "options.channels: channel 4 is out of range for 'a2_HzCalibration' (axis 1 of data shape [1, 4] has 4 channels)"},
      {R"({"analysis":"channelwise","options":{"nodes_list":"w3_HzCalibration","channels":1,"bins":0}})",
       "options.bins must be an integer >= 1, got 0"},
      {R"({"analysis":"distribution","options":{"nodes_list":"Mul_1","bins":2000000}})",
       "options.bins must be at most 1048576, got 2000000"},
      {R"({"analysis":"stat_info","options":{"nodes_list":{}}})", "options.nodes_list must be a string or a list of strings, got an object"},
      {R"({"analysis":"sensitivity_analysis","options":{"pick_threshold":"high"}})", "options.pick_threshold must be a number, got a string"},
  };
  for (const auto& c : cases) {  // (no structured binding: clang 14 cannot capture it)
    SCOPED_TRACE(c.first);
    test::expect_error([&] { f.analyze(c.first); }, c.second);
  }
  api::Context no_data{f.ex, f.rel, nullptr};
  test::expect_error([&] { api::analyze(no_data, R"({"analysis":"stat_info"})"); },
                     "analyze: no calibration data loaded (call loadCalibrationData first)");
}

TEST(ApiListItems, SweepItemsInRunOrder) {
  Fixture f;
  auto items = [&](const std::string& r) { return strings(parse(api::list_items(f.ctx(), r))); };
  EXPECT_EQ(items(R"({"analysis":"sensitivity"})"), (std::vector<std::string>{"Mul_1", "Mul_2", "Mul_3", "Mul_4", "Mul_5"}));
  EXPECT_EQ(items(R"({"analysis":"leave_one_out","options":{"node_type":"weight"}})"),
            (std::vector<std::string>{"w1_HzCalibration", "w2_HzCalibration", "w3_HzCalibration", "w4_HzCalibration", "w5_HzCalibration"}));
  EXPECT_EQ(items(R"({"analysis":"sensitivity","options":{"interested_nodes":["Mul_2",["Mul_1","a3_HzCalibration"]]}})"),
            (std::vector<std::string>{"Mul_2", "Mul_1+a3_HzCalibration"}));
  EXPECT_EQ(items(R"({"analysis":"distribution","options":{"nodes_list":["Mul_2","w1_HzCalibration"]}})"),
            (std::vector<std::string>{"Mul_2", "w1_HzCalibration"}));
  EXPECT_EQ(items(R"({"analysis":"acc_error","options":{"quantize_node":"weight"}})"),
            (std::vector<std::string>{"weight_activation_calibrated", "only_weight_calibrated"}));
  EXPECT_TRUE(items(R"({"analysis":"stat_info"})").empty());
}

TEST(ApiAnalyze, SensitivitySectionCarriesTheAnalysisNumbers) {
  Fixture f;
  analysis::SensitivityOptions o;
  o.node_type = "activation";
  o.metrics = {"mse", "cosine-similarity", "sqnr"};
  o.data_num = 2;
  const analysis::SensitivityResult direct = analysis::get_sensitivity_of_nodes(f.ex, f.rel, f.samples.data(), o);
  const Json doc = parse(f.analyze(
      R"({"analysis":"sensitivity","model_file":"chain.onnx","options":{"node_type":"activation","metrics":["mse","cosine-similarity","sqnr"],"data_num":2}})"));
  EXPECT_EQ(doc.find("schema")->as_string(), "ptqscope.result");
  EXPECT_EQ(doc.find("model")->find("file")->as_string(), "chain.onnx");
  EXPECT_EQ(strings(*doc.find("samples")), (std::vector<std::string>{"1.npy", "2.npy"}));
  const Json& table = *doc.find("sensitivity")->find("activation");
  ASSERT_EQ(table.members().size(), direct.rows.size());
  std::vector<std::string> order;
  for (size_t k = 0; k < direct.rows.size(); ++k) {
    const auto& row = direct.rows[k];
    order.push_back(row.item);
    EXPECT_EQ(table.members()[k].first, row.item);
    const Json& cells = table.members()[k].second;
    EXPECT_EQ(cells.find("node")->as_string(), row.node);
    EXPECT_EQ(cells.find("qtype")->as_string(), "int8");
    expect_double(*cells.find("threshold"), row.threshold, row.item + " threshold");
    for (size_t m = 0; m < o.metrics.size(); ++m) expect_float32(*cells.find(o.metrics[m]), row.values[m], row.item + " " + o.metrics[m]);
  }
  EXPECT_EQ(strings(*doc.find("sensitivity_order")->find("activation")), order);
  const Json& sweep = *doc.find("sweep");
  EXPECT_EQ(sweep.find("total")->as_string(), "5");
  EXPECT_EQ(strings(*sweep.find("items")), (std::vector<std::string>{"a0_HzCalibration", "a1_HzCalibration", "a2_HzCalibration",
                                                                     "a3_HzCalibration", "a4_HzCalibration"}));
  EXPECT_TRUE(doc.find("timings_ms")->find("sensitivity")->is_number());
}

TEST(ApiAnalyze, EventsArriveOncePerItemWithTheRow) {
  Fixture f;
  std::vector<Json> events;
  const std::string request = R"({"analysis":"leave_one_out","options":{"node_type":"weight","metrics":["chebyshev","mse"]},"items":{"begin":1,"end":4}})";
  const Json doc = parse(f.analyze(request, [&](const std::string& e) { events.push_back(parse(e)); }));
  ASSERT_EQ(events.size(), 3u);
  const Json& table = *doc.find("leave_one_out")->find("weight");
  for (size_t k = 0; k < events.size(); ++k) {
    const Json& e = events[k];
    EXPECT_EQ(e.find("type")->as_string(), "item");
    EXPECT_EQ(e.find("analysis")->as_string(), "leave_one_out");
    EXPECT_EQ(e.find("section")->as_string(), "weight");
    EXPECT_EQ(e.find("item")->as_string(), "w" + std::to_string(k + 2) + "_HzCalibration");
    EXPECT_EQ(e.find("index")->as_string(), std::to_string(k + 1));
    EXPECT_EQ(e.find("done")->as_string(), std::to_string(k + 1));
    EXPECT_EQ(e.find("total")->as_string(), "3");
    EXPECT_EQ(*e.find("row"), *table.find(e.find("item")->as_string()));
  }
  std::vector<Json> dist_events;
  f.analyze(R"({"analysis":"distribution","options":{"nodes_list":["Mul_2","a1_HzCalibration","w4_HzCalibration"]},"items":["w4_HzCalibration","Mul_2"]})",
            [&](const std::string& e) { dist_events.push_back(parse(e)); });
  ASSERT_EQ(dist_events.size(), 2u);
  EXPECT_EQ(dist_events[0].find("item")->as_string(), "Mul_2");  // run order, whatever the request order
  EXPECT_EQ(dist_events[1].find("item")->as_string(), "w4_HzCalibration");
  EXPECT_EQ(dist_events[1].find("index")->as_string(), "2");
  EXPECT_TRUE(dist_events[1].find("row")->is_null());
}

TEST(ApiMerge, SensitivityHalvesMergeIntoTheFullRangeDocument) {
  Fixture f;
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"sensitivity", R"({"node_type":"node","metrics":["cosine-similarity","mse"],"data_num":2})"},
      {"sensitivity", R"({"node_type":"activation","metrics":["mse","sqnr"],"data_num":0})"},
      {"sensitivity", R"({"node_type":"weight","metrics":["sqnr"],"sample_selection":"first","data_num":2})"},
      {"leave_one_out", R"({"node_type":"activation","metrics":["chebyshev","cosine-similarity"]})"},
  };
  for (const auto& [analysis, options] : requests) {
    SCOPED_TRACE(analysis + " " + options);
    const std::string full = f.analyze(R"({"analysis":")" + analysis + R"(","options":)" + options + "}");
    for (size_t cut : {1u, 2u, 4u}) EXPECT_EQ(without_timings(merged_halves(f, analysis, options, cut, 5)), without_timings(full)) << cut;
    // Scattered parts (run as interested groups) merge the same way.
    const std::string head = R"({"analysis":")" + analysis + R"(","options":)" + options;
    const auto names = strings(parse(api::list_items(f.ctx(), head + "}")));
    const std::string even = f.analyze(head + R"(,"items":[")" + names[0] + R"(",")" + names[2] + R"(",")" + names[4] + R"("]})");
    const std::string odd = f.analyze(head + R"(,"items":[")" + names[3] + R"(",")" + names[1] + R"("]})");
    EXPECT_EQ(without_timings(api::merge_results("[" + even + "," + odd + "]")), without_timings(full));
  }
}

TEST(ApiMerge, TimingsSumAndCancelledIsAny) {
  Fixture f;
  const std::string head = R"({"analysis":"sensitivity","options":{"node_type":"activation"})";
  const Json a = parse(f.analyze(head + R"(,"items":{"begin":0,"end":2}})"));
  const Json b = parse(f.analyze(head + R"(,"items":{"begin":2,"end":5}})"));
  const Json merged = parse(api::merge_results("[" + a.dump() + "," + b.dump() + "]"));
  EXPECT_DOUBLE_EQ(merged.find("timings_ms")->find("sensitivity")->as_number(),
                   a.find("timings_ms")->find("sensitivity")->as_number() + b.find("timings_ms")->find("sensitivity")->as_number());
  EXPECT_FALSE(merged.find("cancelled")->as_bool());
  EXPECT_EQ(merged.find("sweep")->find("indices")->dump(), "[0,1,2,3,4]");
}

TEST(ApiMerge, DistributionAndChannelwiseHalvesMerge) {
  Fixture f;
  const std::string dist = R"({"nodes_list":["w2_HzCalibration","Mul_3","a1_HzCalibration","Mul_1"],"bins":16})";
  const std::string full_dist = f.analyze(R"({"analysis":"distribution","options":)" + dist + "}");
  EXPECT_EQ(without_timings(merged_halves(f, "distribution", dist, 2, 4)), without_timings(full_dist));
  EXPECT_EQ(strings(*parse(full_dist).find("distribution_order")),
            (std::vector<std::string>{"w2_HzCalibration", "Mul_3", "a1_HzCalibration", "Mul_1"}));
  const std::string cw = R"({"nodes_list":["w3_HzCalibration","a2_HzCalibration","w1_HzCalibration"],"outlier_cap":4})";
  const std::string full_cw = f.analyze(R"({"analysis":"channelwise","options":)" + cw + "}");
  EXPECT_EQ(without_timings(merged_halves(f, "channelwise", cw, 1, 3)), without_timings(full_cw));
  const std::string cw_hist = R"({"nodes_list":["w3_HzCalibration","a2_HzCalibration"],"channels":[3,0],"bins":16})";
  const std::string full_hist = f.analyze(R"({"analysis":"channelwise","options":)" + cw_hist + "}");
  EXPECT_EQ(without_timings(merged_halves(f, "channelwise", cw_hist, 1, 2)), without_timings(full_hist));
}

TEST(ApiMerge, RanksWithTheFirstMetricNanLastTiesInRunOrder) {
  // Hand-made parts of one "mse" sweep of five items: mse sorts descending (largest error first).
  auto part = [](const std::string& rows, const std::string& items, const std::string& indices) {
    return R"({"schema":"ptqscope.result","version":1,"model":{},"options":{"sensitivity":{"metrics":["mse","cosine-similarity"]}},)"
           R"("samples":["0.npy"],"compared_tensors":["y"],"sensitivity":{"node":{)" + rows +
           R"(}},"sensitivity_order":{"node":[]},"sweep":{"analysis":"sensitivity","section":"sensitivity","key":"node","total":5,"items":)" +
           items + R"(,"indices":)" + indices + R"(},"cancelled":false,"timings_ms":{"sensitivity":1.5}})";
  };
  const std::string a = part(R"("A":{"mse":0.5,"cosine-similarity":0.9},"C":{"mse":"nan","cosine-similarity":0.1})", R"(["A","C"])", "[0,2]");
  const std::string b = part(R"("D":{"mse":"inf","cosine-similarity":0.2},"B":{"mse":0.5,"cosine-similarity":0.3},"E":{"mse":0.9,"cosine-similarity":"nan"})",
                             R"(["B","D","E"])", "[1,3,4]");
  const Json merged = parse(api::merge_results("[" + b + "," + a + "]"));
  EXPECT_EQ(merged.find("sensitivity_order")->find("node")->dump(), R"(["D","E","A","B","C"])");
  EXPECT_EQ(merged.find("sensitivity")->find("node")->dump(),
            R"({"D":{"mse":"inf","cosine-similarity":0.2},"E":{"mse":0.9,"cosine-similarity":"nan"},"A":{"mse":0.5,"cosine-similarity":0.9},)"
            R"("B":{"mse":0.5,"cosine-similarity":0.3},"C":{"mse":"nan","cosine-similarity":0.1}})");
  EXPECT_EQ(merged.find("timings_ms")->dump(), R"({"sensitivity":3})");
  EXPECT_EQ(merged.find("sweep")->find("items")->dump(), R"(["A","B","C","D","E"])");
}

TEST(ApiMerge, RejectsPartsOfDifferentRequests) {
  Fixture f;
  const std::string a = f.analyze(R"({"analysis":"sensitivity","options":{"metrics":"mse"},"items":{"begin":0,"end":2}})");
  const std::string b = f.analyze(R"({"analysis":"sensitivity","options":{"metrics":"sqnr"},"items":{"begin":2,"end":5}})");
  test::expect_error([&] { api::merge_results("[" + a + "," + b + "]"); },
                     "mergeResults: results[1].options differs from results[0] (not parts of one request)");
  const std::string c = f.analyze(R"({"analysis":"sensitivity","options":{"metrics":"mse","node_type":"weight"},"items":{"begin":2,"end":5}})");
  test::expect_error([&] { api::merge_results("[" + a + "," + c + "]"); },
                     "mergeResults: results[1].sweep.key differs from results[0] (not parts of one request)");
  const std::string stat = f.analyze(R"({"analysis":"stat_info"})");
  test::expect_error([&] { api::merge_results("[" + stat + "," + stat + "]"); },
                     "mergeResults: results[0] has no \"sweep\": its analysis is not split into items");
  EXPECT_EQ(api::merge_results("[" + stat + "]"), stat);  // one part: itself
  test::expect_error([] { api::merge_results("[]"); }, "mergeResults: expected a non-empty array of result documents");
  test::expect_error([] { api::merge_results(R"([{"a":1}])"); }, "mergeResults: results[0] is not a ptqscope.result document");
}

TEST(ApiAnalyze, AccErrorSectionCarriesTheCurves) {
  Fixture f;
  analysis::AccErrorOptions o;
  o.quantize_node = analysis::NodeArgument::list({"weight", "activation"});
  o.metric = "mse";
  o.average_mode = true;
  const analysis::AccErrorResult direct = analysis::plot_acc_error(f.ex, f.rel, f.samples.data(), o);
  size_t events = 0;
  const Json doc = parse(f.analyze(
      R"({"analysis":"acc_error","options":{"quantize_node":["weight","activation"],"metric":"mse","average_mode":true}})",
      [&](const std::string&) { ++events; }));
  EXPECT_EQ(events, 3u);
  ASSERT_EQ(direct.figures.size(), 1u);
  const Json& figure = doc.find("acc_error_figures")->items().at(0);
  EXPECT_EQ(figure.find("file_name")->as_string(), "average_weight_activation_quantized_separately_mse.png");
  EXPECT_EQ(strings(*figure.find("curves")),
            (std::vector<std::string>{"weight_activation_calibrated", "only_activation_calibrated", "only_weight_calibrated"}));
  for (const auto& curve : direct.figures[0].curves) {
    const Json& c = *doc.find("acc_error")->find(curve.name);
    EXPECT_EQ(strings(*c.find("x")), (std::vector<std::string>{"a1", "a2", "a3", "a4", "a5"}));
    ASSERT_EQ(c.find("y")->items().size(), curve.y.size());
    for (size_t k = 0; k < curve.y.size(); ++k) expect_float32(c.find("y")->items()[k], curve.y[k], curve.name);
  }
  EXPECT_EQ(doc.find("acc_error_sample")->as_string(), "2.npy");
  EXPECT_EQ(doc.find("sweep")->find("indices")->dump(), "[0,1,2]");
}

// acc_error is a sweep over its curves: every split (ranges, scattered names, parts in any order)
// merges into the single run's document byte for byte (timings aside), including curve keys that
// depend on an earlier figure ("<prefix>/<label>") and figures a part does not touch.
TEST(ApiMerge, AccErrorCurvesSplitAndMergeIntoTheFullDocument) {
  Fixture f;
  const std::vector<std::string> option_sets = {
      R"({"quantize_node":["weight","activation"],"metric":"mse","average_mode":true})",
      R"({"quantize_node":[["Mul_2"],["Mul_3","Mul_4"]],"non_quantize_node":[["Mul_1"],["Mul_3"]]})",
      R"({"quantize_node":["Mul_2","Mul_3"],"non_quantize_node":["Mul_3"],"metric":"sqnr"})",
  };
  for (const auto& options : option_sets) {
    SCOPED_TRACE(options);
    const std::string head = R"({"analysis":"acc_error","options":)" + options;
    const std::string full = f.analyze(head + "}");
    const auto names = strings(parse(api::list_items(f.ctx(), head + "}")));
    const size_t n = names.size();
    ASSERT_GE(n, 3u);
    EXPECT_EQ(strings(*parse(full).find("sweep")->find("items")), names);
    for (size_t cut = 1; cut < n; ++cut) EXPECT_EQ(without_timings(merged_halves(f, "acc_error", options, cut, n)), without_timings(full)) << cut;
    // Every other item, named in reverse order: scattered parts.
    std::vector<std::string> even, odd;
    for (size_t k = 0; k < n; ++k) (k % 2 ? odd : even).push_back(names[n - 1 - k]);
    const std::string a = f.analyze(head + R"(,"items":)" + json_strings(even) + "}");
    const std::string b = f.analyze(head + R"(,"items":)" + json_strings(odd) + "}");
    EXPECT_EQ(without_timings(api::merge_results("[" + b + "," + a + "]")), without_timings(full));
  }
  // A part holding only the second figure's "default calibrated model" keys it as the full run does.
  const std::string nested = R"({"analysis":"acc_error","options":{"quantize_node":[["Mul_2"]],"non_quantize_node":[["Mul_1"]]})";
  const auto names = strings(parse(api::list_items(f.ctx(), nested + "}")));
  EXPECT_EQ(names, (std::vector<std::string>{"default calibrated model", "partial_qmodel_0",
                                             "non_quantize_node_accumulate_err_of_partial_qmodel/default calibrated model",
                                             "non_quantize_node_accumulate_err_of_partial_qmodel/partial_qmodel_0"}));
  const Json part = parse(f.analyze(nested + R"(,"items":{"begin":2,"end":3}})"));
  EXPECT_EQ(part.find("acc_error")->members().at(0).first, names[2]);
  ASSERT_EQ(part.find("acc_error_figures")->items().size(), 1u);  // the first figure has no curve here
  EXPECT_EQ(part.find("acc_error_figures")->items().at(0).find("prefix")->as_string(), "non_quantize_node_accumulate_err_of_partial_qmodel");
  EXPECT_EQ(strings(*part.find("acc_error_figures")->items().at(0).find("curves")), (std::vector<std::string>{names[2]}));
}

TEST(ApiAnalyze, AccErrorEventsCarryEachCurve) {
  Fixture f;
  std::vector<Json> events;
  const std::string request = R"({"analysis":"acc_error","options":{"quantize_node":["Mul_2","Mul_3"],"non_quantize_node":["Mul_3"]},)"
                              R"("items":["non_quantize_node_accumulate_err_of_node/Mul_3","Mul_2"]})";
  const Json doc = parse(f.analyze(request, [&](const std::string& e) { events.push_back(parse(e)); }));
  ASSERT_EQ(events.size(), 2u);
  const std::vector<std::string> items = {"Mul_2", "non_quantize_node_accumulate_err_of_node/Mul_3"};
  for (size_t k = 0; k < 2; ++k) {
    const Json& e = events[k];
    EXPECT_EQ(e.find("analysis")->as_string(), "acc_error");
    EXPECT_EQ(e.find("section")->as_string(), "acc_error");
    EXPECT_EQ(e.find("item")->as_string(), items[k]);  // run order
    EXPECT_EQ(e.find("index")->as_string(), k == 0 ? "0" : "2");
    EXPECT_EQ(e.find("done")->as_string(), std::to_string(k + 1));
    EXPECT_EQ(e.find("total")->as_string(), "2");
    EXPECT_EQ(*e.find("row"), *doc.find("acc_error")->find(items[k]));
    EXPECT_EQ(e.find("row")->find("label")->as_string(), "Mul_" + std::string(k == 0 ? "2" : "3"));
  }
}

TEST(ApiAnalyze, DistributionAndChannelwiseSectionsCarryTheNumbers) {
  Fixture f;
  analysis::DistributionOptions d;
  d.nodes = {"a2_HzCalibration", "w3_HzCalibration", "Mul_4"};
  d.bins = 8;
  const analysis::DistributionResult dr = analysis::plot_distribution(f.ex, f.rel, f.samples.data(), d);
  const Json dist = parse(f.analyze(R"({"analysis":"distribution","options":{"nodes_list":["a2_HzCalibration","w3_HzCalibration","Mul_4"],"bins":8}})"));
  ASSERT_EQ(dr.plots.size(), 3u);
  for (const auto& p : dr.plots) {
    const Json& j = *dist.find("distribution")->find(p.name);
    EXPECT_EQ(j.find("kind")->as_string(), p.kind);
    EXPECT_EQ(j.find("title")->as_string(), p.title);
    if (p.has_threshold) expect_float32(*j.find("threshold"), p.threshold, p.name);
    else EXPECT_TRUE(j.find("threshold")->is_null());
    if (p.has_cosine) expect_float32(*j.find("cosine"), p.cosine, p.name);
    expect_float32(*j.find("max_abs"), p.max_abs, p.name);
    ASSERT_EQ(j.find("histograms")->items().size(), p.histograms.size());
    for (size_t h = 0; h < p.histograms.size(); ++h) {
      const Json& hj = j.find("histograms")->items()[h];
      for (size_t e = 0; e < p.histograms[h].edges.size(); ++e) expect_float32(hj.find("edges")->items()[e], p.histograms[h].edges[e], "edge");
      for (size_t c = 0; c < p.histograms[h].counts.size(); ++c)
        EXPECT_EQ(hj.find("counts")->items()[c].as_string(), std::to_string(p.histograms[h].counts[c]));
    }
  }
  analysis::ChannelwiseOptions c;
  c.nodes = {"w3_HzCalibration", "a4_HzCalibration"};
  c.has_axis = true;
  c.axis = 1;
  const analysis::ChannelwiseResult cr = analysis::get_channelwise_data_distribution(f.ex, f.rel, f.samples.data(), c);
  const Json cw = parse(f.analyze(R"({"analysis":"channelwise","options":{"nodes_list":["w3_HzCalibration","a4_HzCalibration"],"axis":1}})"));
  for (const auto& p : cr.plots) {
    const Json& j = *cw.find("channelwise")->find(p.name);
    ASSERT_EQ(j.find("channels")->items().size(), p.channels.size());
    for (size_t k = 0; k < p.channels.size(); ++k) {
      const Json& ch = j.find("channels")->items()[k];
      expect_float32(*ch.find("mean"), p.channels[k].mean, "mean");
      expect_double(*ch.find("q1"), p.channels[k].q1, "q1");
      expect_double(*ch.find("median"), p.channels[k].median, "median");
      expect_double(*ch.find("whisker_high"), p.channels[k].whisker_high, "whisker_high");
    }
  }
}

TEST(ApiAnalyze, ChannelHistogramsOnlyWhenChannelsAreAsked) {
  Fixture f;
  const Json plain = parse(f.analyze(R"({"analysis":"channelwise","options":{"nodes_list":"w3_HzCalibration"}})"));
  EXPECT_EQ(plain.find("channelwise")->find("w3_HzCalibration")->find("channel_histograms"), nullptr);
  EXPECT_EQ(plain.find("options")->find("channelwise")->find("channels"), nullptr);

  const Json doc = parse(f.analyze(
      R"({"analysis":"channelwise","options":{"nodes_list":["w3_HzCalibration","w1_HzCalibration"],"channels":[3, 1],"bins":2}})"));
  EXPECT_EQ(doc.find("options")->find("channelwise")->dump(),
            R"({"nodes_list":["w3_HzCalibration","w1_HzCalibration"],"axis":null,"outlier_cap":200,"sample_selection":"last",)"
            R"("channels":[3,1],"bins":2})");
  // w3 = [0.7, 1.05, 0.95, -1.25] [1, 4], per-channel along axis 1: channel 3 = {-1.25}, one value,
  // so edges -1.75, -1.25, -0.75 and the value in the upper bin (half-open bins); threshold 1.25.
  const Json& w3 = *doc.find("channelwise")->find("w3_HzCalibration")->find("channel_histograms");
  ASSERT_EQ(w3.items().size(), 2u);
  EXPECT_EQ(w3.items()[0].dump(),
            R"({"channel":3,"count":1,"min":-1.25,"max":-1.25,"max_abs":1.25,"threshold":1.25,"histogram":{"label":"channel 4",)"
            R"("color":"#99ffbb","edges":[-1.75,-1.25,-0.75],"counts":[0,1],"zeros_excluded":0,"non_finite":0}})");
  EXPECT_EQ(w3.items()[1].find("threshold")->as_string(), "1.05");
  // w1 is per-tensor (threshold 1.3 for every channel); channel 1 = {-1.1}.
  const Json& w1 = doc.find("channelwise")->find("w1_HzCalibration")->find("channel_histograms")->items().at(1);
  EXPECT_EQ(w1.find("threshold")->as_string(), "1.3");
  EXPECT_EQ(w1.find("min")->as_string(), "-1.1");
}

TEST(ApiAnalyze, StatInfoAndSensitivityAnalysisSections) {
  Fixture f;
  const analysis::StatInfoResult sr = analysis::get_calibration_nodes_stat_info(f.ex, f.rel, f.samples.data(), {});
  size_t events = 0;
  const Json stat = parse(f.analyze(R"({"analysis":"stat_info"})", [&](const std::string&) { ++events; }));
  EXPECT_EQ(events, 3u);  // one per sample of the feature pass
  ASSERT_EQ(stat.find("stat_info")->members().size(), sr.nodes.size());
  for (const auto& n : sr.nodes) {
    const Json& j = *stat.find("stat_info")->find(n.node);
    for (size_t k = 0; k < n.max_vals.size(); ++k) expect_float32(j.find("max_vals")->items()[k], n.max_vals[k], n.node);
    for (size_t k = 0; k < n.min_nz_vals.size(); ++k) expect_float32(j.find("min_nz_vals")->items()[k], n.min_nz_vals[k], n.node);
  }

  analysis::SensitivityAnalysisOptions o;
  o.pick_threshold = 0.99999;
  o.qtype = "int16";
  const analysis::SensitivityAnalysisResult ar = analysis::sensitivity_analysis(f.ex, f.rel, f.samples.data(), o);
  const Json sa = parse(f.analyze(R"({"analysis":"sensitivity_analysis","options":{"pick_threshold":0.99999,"qtype":"int16"}})"));
  const Json& j = *sa.find("sensitivity_analysis");
  EXPECT_EQ(strings(*j.find("x")), ar.x);
  ASSERT_EQ(j.find("cumulative")->items().size(), ar.cumulative.size());
  for (size_t k = 0; k < ar.cumulative.size(); ++k) expect_float32(j.find("cumulative")->items()[k], ar.cumulative[k], "cumulative");
  for (size_t k = 0; k < ar.per_node.size(); ++k) expect_float32(j.find("per_node")->items()[k], ar.per_node[k], "per_node");
  EXPECT_TRUE(j.find("ranked")->as_bool());
  EXPECT_EQ(j.find("ranking")->members().size(), 5u);
}

TEST(ApiCatalog, AbsentOptionsRunWithTheCatalogDefaults) {
  // The result's "options" section records what each analysis ran with (written from its option
  // struct); with only the required options given, every option it records that has a catalog
  // default must equal that default.
  Fixture f;
  const std::map<std::string, std::string> minimal = {
      {"sensitivity", "{}"},
      {"leave_one_out", "{}"},
      {"acc_error", R"({"quantize_node":"weight"})"},
      {"distribution", R"({"nodes_list":["Mul_2"]})"},
      {"channelwise", R"({"nodes_list":["w3_HzCalibration"]})"},
      {"stat_info", "{}"},
      {"sensitivity_analysis", "{}"},
      {"what_if", "{}"},
      {"node_errors", "{}"},
      {"fix", "{}"},
      {"explain", "{}"},
      {"calibration_methods", "{}"},
  };
  size_t compared = 0;
  for (const auto& a : api::analyses()) {
    SCOPED_TRACE(a.name);
    ASSERT_EQ(minimal.count(a.name), 1u);
    const Json doc = parse(f.analyze(R"({"analysis":")" + a.name + R"(","options":)" + minimal.at(a.name) + "}"));
    const Json* ran = doc.find("options")->find(a.section);
    ASSERT_NE(ran, nullptr);
    for (const auto& o : a.options) {
      const Json* value = ran->find(o.name);
      if (o.default_value.is_null() || value == nullptr) continue;
      EXPECT_EQ(value->dump(), o.default_value.dump()) << o.name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 14u);
}
