// Requests with a top-level "config" (docs/config-schema.md): resolved before anything runs, recorded
// in the result, and used by every analysis as its quantized model; without one, results are unchanged.
#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"
#include "analysis/selection.h"
#include "analysis/sensitivity.h"
#include "api/analyze.h"
#include "io/json.h"
#include "config/config_doc.h"
#include "schema/result_json.h"

using namespace ptq;
using io::Json;

namespace {

// test::relu_mul_add_model(): calibration nodes x, w, r (int16); normal nodes Relu_1, Mul_2, Add_3.
struct Fixture {
  exec::Executor ex{test::relu_mul_add_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})},
                           {Tensor::from_floats({1, 4}, {-1.0f, 0.7f, 0.01f, 0.6f})}}};
  std::string analyze(const std::string& request) { return api::analyze({ex, rel, &samples.data()}, request); }
};

const std::string kConfig =
    R"({"schema":"ptqscope.config","version":1,"intents":[{"node":"Mul_2","action":"int8"},{"node":"Relu_1","action":"float"}]})";

Json without_timings(const std::string& doc) {
  Json j = Json::parse(doc, "test");
  j.erase("timings_ms");
  return j;
}

}  // namespace

TEST(ApiConfig, ResultRecordsTheResolvedConfigurationAndOnlyThen) {
  Fixture f;
  const Json plain = Json::parse(f.analyze(R"({"analysis":"leave_one_out","model_file":"m.onnx"})"), "test");
  EXPECT_EQ(plain.find("config"), nullptr);
  const Json with = Json::parse(f.analyze(R"({"analysis":"leave_one_out","model_file":"m.onnx","config":)" + kConfig + "}"), "test");
  const Json* config = with.find("config");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->dump(),
            R"({"schema":"ptqscope.config","version":1,"model":"m.onnx","base":"stored","round":"half_to_even",)"
            R"("intents":[{"node":"Mul_2","action":"int8"},{"node":"Relu_1","action":"float"}],"calibrations":{)"
            R"("x_HzCalibration":{"on":false,"qtype":"int8"},"w_HzCalibration":{"on":true,"qtype":"int8"},)"
            R"("r_HzCalibration":{"on":true,"qtype":"int8"}}})");
  // The resolved document as a configuration gives the same result (same numbers, same config).
  const std::string again = f.analyze(R"({"analysis":"leave_one_out","model_file":"m.onnx","config":)" + config->dump() + "}");
  Json a = without_timings(again), b = without_timings(with.dump());
  EXPECT_EQ(a.find("leave_one_out")->dump(), b.find("leave_one_out")->dump());
  EXPECT_EQ(a.find("config")->find("calibrations")->dump(), b.find("config")->find("calibrations")->dump());
  // resolve_config gives the same resolved state.
  EXPECT_EQ(Json::parse(api::resolve_config({f.ex, f.rel, &f.samples.data()}, kConfig), "t").find("calibrations")->dump(),
            config->find("calibrations")->dump());
}

TEST(ApiConfig, LeaveOneOutAndSensitivityUseTheConfiguration) {
  Fixture f;
  const Json doc = Json::parse(f.analyze(R"({"analysis":"leave_one_out","options":{"data_num":2},"config":)" + kConfig + "}"), "test");
  // Brute force: the configuration (x OFF, r int8) with Mul_2's set {r, w} OFF is the float model, and
  // with Add_3's set {x} OFF it is the configuration itself.
  exec::QuantConfig c = f.ex.stored_config();
  c.on[static_cast<size_t>(f.ex.calibration_index("x_HzCalibration"))] = 0;
  c.qtype[static_cast<size_t>(f.ex.calibration_index("r_HzCalibration"))] = "int8";
  auto cosine = [&](const exec::QuantConfig& q) {
    std::vector<std::vector<float>> per_output(2);
    for (size_t s = 0; s < 2; ++s) {
      const auto ref = f.ex.outputs(f.ex.run(f.samples.data().sample(s), f.ex.uniform_config(false)));
      const auto got = f.ex.outputs(f.ex.run(f.samples.data().sample(s), q));
      for (size_t o = 0; o < 2; ++o)
        per_output[o].push_back(analysis::compute_metric(analysis::Metric::Cosine, ref[o].data<float>(), got[o].data<float>(), 4));
    }
    return analysis::aggregate(per_output);
  };
  const Json& rows = *doc.find("leave_one_out")->find("node");
  auto value = [&](const char* item) {
    io::JsonWriter w;
    w.value_float32(std::strtof(rows.find(item)->find("cosine-similarity")->as_string().c_str(), nullptr));
    return w.str();
  };
  auto expected = [&](float v) {
    io::JsonWriter w;
    w.value_float32(v);
    return w.str();
  };
  EXPECT_EQ(value("Add_3"), expected(cosine(c)));
  exec::QuantConfig mul_off = c;
  mul_off.on[static_cast<size_t>(f.ex.calibration_index("r_HzCalibration"))] = 0;
  mul_off.on[static_cast<size_t>(f.ex.calibration_index("w_HzCalibration"))] = 0;
  EXPECT_EQ(value("Mul_2"), expected(cosine(mul_off)));
  // Sensitivity of activation r: float + r ON at the configuration's qtype (int8, not the stored int16).
  const Json s = Json::parse(f.analyze(R"({"analysis":"sensitivity","options":{"node_type":"activation","data_num":2},"config":)" + kConfig + "}"), "t");
  const Json& r_row = *s.find("sensitivity")->find("activation")->find("r_HzCalibration");
  EXPECT_EQ(r_row.find("qtype")->as_string(), "int8");
  exec::QuantConfig r_only = f.ex.uniform_config(false);
  r_only.on[static_cast<size_t>(f.ex.calibration_index("r_HzCalibration"))] = 1;
  r_only.qtype[static_cast<size_t>(f.ex.calibration_index("r_HzCalibration"))] = "int8";
  EXPECT_EQ(r_row.find("cosine-similarity")->as_string(), expected(cosine(r_only)));
}

TEST(ApiConfig, EveryAnalysisAcceptsAConfigurationAndNamesItsErrors) {
  Fixture f;
  for (const char* request :
       {R"("analysis":"sensitivity")", R"("analysis":"leave_one_out")", R"("analysis":"acc_error","options":{"quantize_node":"weight"})",
        R"("analysis":"distribution","options":{"nodes_list":["Mul_2","w_HzCalibration"]})",
        R"("analysis":"channelwise","options":{"nodes_list":["r_HzCalibration"]})", R"("analysis":"stat_info")",
        R"("analysis":"sensitivity_analysis")", R"("analysis":"what_if")", R"("analysis":"node_errors")"}) {
    SCOPED_TRACE(request);
    const Json doc = Json::parse(f.analyze(std::string("{") + request + R"(,"config":)" + kConfig + "}"), "t");
    ASSERT_NE(doc.find("config"), nullptr);
    test::expect_error([&] { f.analyze(std::string("{") + request + R"(,"config":{"schema":"ptqscope.config","version":1,"intents":[{"node":"Conv_9","action":"float"}]}})"); },
                       "config.intents[0].node: 'Conv_9' is not a node of the model");
  }
  test::expect_error([&] { f.analyze(R"({"analysis":"what_if","config":{"schema":"ptqscope.config"}})"); },
                     "config.version must be 1 (missing)");
  test::expect_error([&] { f.analyze(R"({"analysis":"what_if","options":{"metric":"l2"}})"); },
                     "options.metric: unknown metric 'l2' (known: cosine-similarity, mse, mre, sqnr, chebyshev)");
}

TEST(ApiConfig, WhatIfAndNodeErrorsSections) {
  Fixture f;
  const Json w = Json::parse(f.analyze(R"({"analysis":"what_if","options":{"data_num":2,"metric":"mse"}})"), "t");
  const Json& s = *w.find("what_if");
  EXPECT_EQ(s.find("metric")->as_string(), "mse");
  EXPECT_EQ(s.find("output_order")->dump(), R"(["y1","y2"])");
  EXPECT_EQ(s.find("order")->dump(), R"(["Relu_1","Mul_2","Add_3"])");
  EXPECT_EQ(s.find("samples")->dump(), R"(["0.npy","1.npy"])");
  for (const char* m : {"cosine-similarity", "mse", "mre", "sqnr", "chebyshev"}) {
    EXPECT_NE(s.find("mean")->find(m), nullptr) << m;
    EXPECT_NE(s.find("outputs")->find("y1")->find(m), nullptr) << m;
  }
  const Json n = Json::parse(f.analyze(R"({"analysis":"node_errors"})"), "t");
  const Json& e = *n.find("node_errors");
  EXPECT_EQ(e.find("order")->dump(), R"(["Relu_1","Mul_2","Add_3"])");
  EXPECT_NE(e.find("nodes")->find("Mul_2")->find("own"), nullptr);
  EXPECT_NE(e.find("nodes")->find("Mul_2")->find("accumulated"), nullptr);
  EXPECT_EQ(e.find("measure")->as_string(), "output");
  EXPECT_EQ(n.find("options")->find("node_errors")->dump(),
            R"({"data_num":1,"sample_selection":"last","metric":"cosine-similarity","measure":"output"})");
  // measure: one of the core's choices, named in the error.
  try {
    f.analyze(R"({"analysis":"node_errors","options":{"measure":"batch"}})");
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()), "options.measure must be 'output' or 'converter', got 'batch'");
  }
  const Json c = Json::parse(f.analyze(R"({"analysis":"node_errors","options":{"measure":"converter"}})"), "t");
  EXPECT_EQ(c.find("node_errors")->find("measure")->as_string(), "converter");
}
