// The `fix` analysis through Session.analyze (api/analyze.h): the request's options reach the search
// (defaults from the catalog), the section carries exactly the search's numbers, one event per step,
// and option errors name the option.
#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"
#include "analysis/fix_search.h"
#include "api/analyze.h"
#include "api/catalog.h"
#include "io/json.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"

using namespace ptq;
using io::Json;

namespace {

struct Fixture {
  exec::Executor ex{test::relu_mul_add_model()};
  quant::CalibrationRelations rel{ex.graph()};
  test::SampleSet samples{ex.graph(),
                          {{Tensor::from_floats({1, 4}, {0.5f, -0.2f, 0.9f, 0.33f})},
                           {Tensor::from_floats({1, 4}, {-1.0f, 0.7f, 0.01f, 0.6f})}}};
  api::Context context() { return {ex, rel, &samples.data()}; }
};

}  // namespace

TEST(FixApi, SectionCarriesTheSearchResult) {
  Fixture f;
  // A target between the as-calibrated model (its mse, from a search that starts met) and the float model.
  analysis::FixOptions o;
  o.target = analysis::parse_fix_target("mse<=1");
  o.data_num = 0;
  const float start = analysis::find_fix(f.ex, f.rel, f.samples.data(), f.ex.stored_config(), o).start;
  ASSERT_GT(start, 0.0f);
  o.target.bound = start / 4;
  const std::string target = o.target.text();
  const analysis::FixResult direct = analysis::find_fix(f.ex, f.rel, f.samples.data(), f.ex.stored_config(), o);
  ASSERT_TRUE(direct.reached);
  ASSERT_FALSE(direct.steps.empty());

  std::vector<Json> events;
  const std::string text = api::analyze(
      f.context(), R"({"analysis": "fix", "options": {"target": ")" + target + R"(", "data_num": null}})",
      [&](const std::string& e) { events.push_back(Json::parse(e, "event")); });
  const Json doc = Json::parse(text, "result");
  const Json& options = *doc.find("options")->find("fix");
  EXPECT_EQ(options.find("target")->as_string(), target);
  EXPECT_EQ(options.find("prefer")->items().size(), 2u);  // the catalog's default int16, float
  EXPECT_EQ(options.find("candidates")->as_string(), "sensitivity");
  EXPECT_TRUE(options.find("max_nodes")->is_null());
  const Json& fix = *doc.find("fix");
  EXPECT_EQ(fix.find("reached")->as_bool(), direct.reached);
  EXPECT_EQ(static_cast<float>(fix.find("start")->as_number()), direct.start);
  EXPECT_EQ(static_cast<float>(fix.find("final")->as_number()), direct.final_value);
  ASSERT_EQ(fix.find("steps")->items().size(), direct.steps.size());
  for (size_t k = 0; k < direct.steps.size(); ++k) {
    const Json& s = fix.find("steps")->items()[k];
    EXPECT_EQ(s.find("phase")->as_string(), direct.steps[k].phase);
    EXPECT_EQ(s.find("node")->as_string(), direct.steps[k].node);
    EXPECT_EQ(s.find("action")->as_string(), direct.steps[k].action);
    EXPECT_EQ(static_cast<float>(s.find("value")->as_number()), direct.steps[k].value);
  }
  ASSERT_EQ(fix.find("nodes")->items().size(), direct.nodes.size());
  EXPECT_EQ(fix.find("target")->find("op")->as_string(), "<=");
  EXPECT_EQ(fix.find("candidates")->find("nodes")->items().size(), direct.ranking.size());
  // Two samples: the first tuned on, the second held out and reported (§13.4).
  EXPECT_EQ(doc.find("fix_samples")->items().size(), 1u);
  ASSERT_TRUE(fix.find("held_out")->is_object());
  EXPECT_EQ(fix.find("held_out")->find("samples")->items().size(), 1u);
  EXPECT_EQ(static_cast<float>(fix.find("held_out")->find("final")->as_number()), direct.held_out_final);
  EXPECT_EQ(fix.find("held_out")->find("met")->as_bool(), direct.held_out_met);
  EXPECT_FALSE(doc.find("cancelled")->as_bool());
  // Events: the ranking sweep's items (row null), then one per evaluation with its row.
  size_t ranked = 0, stepped = 0;
  for (const Json& e : events) {
    EXPECT_EQ(e.find("analysis")->as_string(), "fix");
    if (e.find("row")->is_null()) ++ranked;
    else ++stepped;
  }
  EXPECT_EQ(ranked, direct.ranking.size());
  EXPECT_EQ(stepped, direct.evaluations);
}

TEST(FixApi, OptionErrorsNameTheOption) {
  Fixture f;
  auto error = [&](const std::string& options) {
    try {
      api::analyze(f.context(), R"({"analysis": "fix", "options": )" + options + "}");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(R"({"target": "cosine>=0.9"})"),
            "options.target 'cosine>=0.9': unknown metric 'cosine' (known: cosine-similarity, mse, mre, sqnr, chebyshev)");
  EXPECT_EQ(error(R"({"prefer": ["float", "int16"]})"),
            "options.prefer[1]: 'int16' is not more precise than the action before it; list the actions from the least "
            "to the most precise (e.g. threshold,int16,float)");
  EXPECT_EQ(error(R"({"candidates": "random"})"),
            "options.candidates must be 'sensitivity', 'leave_one_out', 'own_error' or a list of node names, got 'random'");
  EXPECT_EQ(error(R"({"candidates": ["Mul_2", "nope"]})"), "options.candidates[1]: node 'nope' does not exist in the model");
  EXPECT_EQ(error(R"({"max_nodes": 0})").rfind("options.max_nodes", 0), 0u);
  EXPECT_EQ(error(R"({"goal": 1})").rfind("options.goal: unknown option of analysis 'fix'", 0), 0u);
  // The export the fix is for: a known format, and one that can carry thresholds when they are tried.
  EXPECT_EQ(error(R"({"export": "tflite"})").rfind("options.export: unknown format 'tflite' (known: horizon-yaml, ", 0), 0u);
  EXPECT_EQ(error(R"({"prefer": ["threshold", "int16"], "export": "horizon-yaml"})"),
            "options.prefer: 'threshold' cannot be exported as horizon-yaml (it has no per-node thresholds); export "
            "calibrated-onnx, qdq-onnx, ort-json, ort-python or rknn-cfg, or leave threshold out");
}

TEST(FixApi, DescribedInTheCatalog) {
  const Json d = Json::parse(api::describe_json(), "describe");
  const Json* fix = nullptr;
  for (const Json& a : d.find("analyses")->items())
    if (a.find("name")->as_string() == "fix") fix = &a;
  ASSERT_NE(fix, nullptr);
  EXPECT_FALSE(fix->find("splittable")->as_bool());
  std::map<std::string, Json> options;
  for (const Json& o : fix->find("options")->items()) options[o.find("name")->as_string()] = *o.find("default");
  EXPECT_EQ(options.at("target").as_string(), analysis::FixOptions().target.text());
  EXPECT_EQ(options.at("candidates").as_string(), "sensitivity");
  EXPECT_TRUE(options.at("max_nodes").is_null());
  EXPECT_EQ(options.at("prefer").items().size(), 2u);
  EXPECT_TRUE(options.count("data_num"));
  EXPECT_TRUE(options.count("sample_selection"));
}

TEST(FixApi, CancelledSearchHasNoConfiguration) {
  Fixture f;
  const std::string request = R"({"analysis": "fix", "options": {"target": "cosine-similarity>=0.9999999", "data_num": null}})";
  const Json whole = Json::parse(api::analyze(f.context(), request), "result");
  ASSERT_FALSE(whole.find("cancelled")->as_bool());
  ASSERT_GE(whole.find("fix")->find("evaluations")->as_number(), 2.0);
  // Cancel once the first evaluation event arrived: one evaluation done, no configuration, and the
  // session answers the same request in full afterwards.
  size_t evaluated = 0;
  const std::string text = api::analyze(
      f.context(), request, [&](const std::string& e) { evaluated += Json::parse(e, "event").find("row")->is_null() ? 0 : 1; },
      [&] { return evaluated >= 1; });
  const Json doc = Json::parse(text, "result");
  EXPECT_TRUE(doc.find("cancelled")->as_bool());
  EXPECT_TRUE(doc.find("config")->is_null());
  EXPECT_EQ(doc.find("fix")->find("evaluations")->as_number(), 1.0);
  EXPECT_EQ(evaluated, 1u);
  const Json again = Json::parse(api::analyze(f.context(), request), "result");
  EXPECT_FALSE(again.find("cancelled")->as_bool());
  EXPECT_EQ(again.find("fix")->dump(), whole.find("fix")->dump());
  EXPECT_EQ(again.find("config")->dump(), whole.find("config")->dump());
}
