// The core's description of itself (api/catalog.h): the facts the faces read, checked against the
// documented behaviour (§3.1 signature and node types, §4 metric optimum, §5.1, §6.1, §7, §8.2
// signatures), and the request parser taking its option names and defaults from the same table.
#include "api/catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis_test_util.h"
#include "io/json.h"
#include "api/request.h"
#include "quant/calibration.h"

using namespace ptq;
using io::Json;

namespace {

Json describe() { return Json::parse(api::describe_json(), "describe"); }

const Json& analysis_of(const Json& doc, const std::string& name) {
  for (const Json& a : doc.find("analyses")->items())
    if (a.find("name")->as_string() == name) return a;
  ADD_FAILURE() << "no analysis " << name;
  static const Json none;
  return none;
}

const Json* option_of(const Json& analysis, const std::string& name) {
  for (const Json& o : analysis.find("options")->items())
    if (o.find("name")->as_string() == name) return &o;
  return nullptr;
}

std::vector<std::string> names_of(const Json& array) {
  std::vector<std::string> out;
  for (const Json& e : array.items()) out.push_back(e.is_string() ? e.as_string() : e.find("name")->as_string());
  return out;
}

}  // namespace

TEST(Catalog, DocumentHeaderAndTool) {
  const Json doc = describe();
  EXPECT_EQ(doc.find("schema")->as_string(), "ptqscope.describe");
  EXPECT_EQ(doc.find("version")->dump(), "1");
  EXPECT_EQ(doc.find("tool")->dump(), R"({"name":"ptqscope","version":"0.1.0"})");
}

TEST(Catalog, MetricsAndTheirBetterDirectionAsTheReferenceTableOfSection4) {
  // §4: cosine-similarity and sqnr are argmax (higher is better), mse, mre and chebyshev argmin.
  EXPECT_EQ(describe().find("metrics")->dump(),
            R"([{"name":"cosine-similarity","better":"higher"},{"name":"mse","better":"lower"},)"
            R"({"name":"mre","better":"lower"},{"name":"sqnr","better":"higher"},{"name":"chebyshev","better":"lower"}])");
}

TEST(Catalog, NodeTypesOfSection31) {
  EXPECT_EQ(names_of(*describe().find("node_types")), (std::vector<std::string>{"node", "weight", "activation", "tae"}));
}

TEST(Catalog, AnalysesSplittingAndStreaming) {
  const Json doc = describe();
  EXPECT_EQ(names_of(*doc.find("analyses")),
            (std::vector<std::string>{"sensitivity", "leave_one_out", "acc_error", "distribution", "channelwise", "stat_info",
                                      "sensitivity_analysis", "what_if", "node_errors", "fix", "explain",
                                      "calibration_methods"}));
  // docs/wasm-api.md: stat_info and sensitivity_analysis are run whole; the others are split by item.
  const std::map<std::string, std::pair<bool, bool>> expected = {
      {"sensitivity", {true, true}},   {"leave_one_out", {true, true}}, {"acc_error", {true, true}},
      {"distribution", {true, false}}, {"channelwise", {true, false}},  {"stat_info", {false, false}},
      {"sensitivity_analysis", {false, false}}, {"what_if", {false, false}},  {"node_errors", {false, false}},
      {"fix", {false, false}}};
  for (const auto& [name, flags] : expected) {
    const Json& a = analysis_of(doc, name);
    EXPECT_EQ(a.find("section")->as_string(), name);
    EXPECT_EQ(a.find("splittable")->as_bool(), flags.first) << name;
    EXPECT_EQ(a.find("streams_items")->as_bool(), flags.second) << name;
    EXPECT_EQ(api::is_splittable(api::find_analysis(name)->id), flags.first) << name;
  }
  // The searches of §13 run whole; the cause hints' rows are the section "hints".
  EXPECT_EQ(analysis_of(doc, "explain").find("section")->as_string(), "hints");
  EXPECT_EQ(analysis_of(doc, "calibration_methods").find("section")->as_string(), "calibration_methods");
  for (const char* name : {"explain", "calibration_methods"}) EXPECT_FALSE(analysis_of(doc, name).find("splittable")->as_bool()) << name;
  EXPECT_EQ(analysis_of(doc, "sensitivity").find("keyed_by")->as_string(), "node_type");
  EXPECT_TRUE(analysis_of(doc, "distribution").find("keyed_by")->is_null());
  EXPECT_FALSE(analysis_of(doc, "sensitivity").find("sort")->is_null());
  EXPECT_TRUE(analysis_of(doc, "stat_info").find("sort")->is_null());
}

TEST(Catalog, DefaultsOfThePythonApi) {
  // §3.1 get_sensitivity_of_nodes(metrics="cosine-similarity", node_type="node", data_num=1, ...),
  // §5.1 plot_acc_error(metric="cosine-similarity", average_mode=False), §8.2 sensitivity_analysis
  // (pick_threshold=0.999, data_num=1); ours: bins 1024, outlier_cap 200, qtype float32, sample_selection last.
  const Json doc = describe();
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"sensitivity", "node_type", R"("node")"},
      {"sensitivity", "metrics", R"(["cosine-similarity"])"},
      {"sensitivity", "data_num", "1"},
      {"sensitivity", "sample_selection", R"("last")"},
      {"sensitivity", "output_node", "null"},
      {"sensitivity", "interested_nodes", "null"},
      {"leave_one_out", "node_type", R"("node")"},
      {"acc_error", "metric", R"("cosine-similarity")"},
      {"acc_error", "average_mode", "false"},
      {"acc_error", "quantize_node", "null"},
      {"distribution", "bins", "1024"},
      {"channelwise", "axis", "null"},
      {"channelwise", "outlier_cap", "200"},
      {"stat_info", "nodes_list", "null"},
      {"sensitivity_analysis", "pick_threshold", "0.999"},
      {"sensitivity_analysis", "data_num", "1"},
      {"sensitivity_analysis", "qtype", R"("float32")"},
      {"what_if", "metric", R"("cosine-similarity")"},
      {"what_if", "data_num", "1"},
      {"node_errors", "metric", R"("cosine-similarity")"},
      {"node_errors", "sample_selection", R"("last")"},
  };
  for (const auto& [analysis, option, value] : cases) {
    const Json* o = option_of(analysis_of(doc, analysis), option);
    ASSERT_NE(o, nullptr) << analysis << "." << option;
    EXPECT_EQ(o->find("default")->dump(), value) << analysis << "." << option;
  }
  const Json* node_type = option_of(analysis_of(doc, "sensitivity"), "node_type");
  EXPECT_EQ(names_of(*node_type->find("choices")), names_of(*doc.find("node_types")));
  EXPECT_EQ(names_of(*option_of(analysis_of(doc, "sensitivity"), "sample_selection")->find("choices")),
            (std::vector<std::string>{"last", "first", "all"}));
  EXPECT_EQ(names_of(*option_of(analysis_of(doc, "acc_error"), "sample_selection")->find("choices")),
            (std::vector<std::string>{"last", "first"}));
  EXPECT_TRUE(option_of(analysis_of(doc, "distribution"), "nodes_list")->find("required")->as_bool());
  EXPECT_TRUE(option_of(analysis_of(doc, "sensitivity"), "data_num")->find("null_is_all")->as_bool());
  EXPECT_EQ(option_of(analysis_of(doc, "distribution"), "bins")->find("max")->dump(), "1048576");
}

TEST(Catalog, EveryOptionIsWhatTheParserAccepts) {
  // Each analysis' option list is exactly what parse_request accepts: every listed option parses,
  // and an unlisted one is rejected with the listed names.
  for (const auto& a : api::analyses()) {
    std::string known;
    for (const auto& o : a.options) {
      known += (known.empty() ? "" : ", ") + o.name;
      EXPECT_NO_THROW(api::parse_request(R"({"analysis":")" + a.name + R"(","options":{")" + o.name + R"(":null}})"))
          << a.name << "." << o.name;
    }
    test::expect_error([&] { api::parse_request(R"({"analysis":")" + a.name + R"(","options":{"no_such":1}})"); },
                       "options.no_such: unknown option of analysis '" + a.name + "' (known: " + known + ")");
  }
}

TEST(Catalog, ExportFormatsWithWhatTheFacesSaveThemAs) {
  // docs/config-export.md: seven formats; calibrated-onnx and qdq-onnx are model files (bytes), the others text.
  const Json doc = describe();
  const Json* formats = doc.find("export_formats");
  ASSERT_NE(formats, nullptr);
  EXPECT_EQ(names_of(*formats),
            (std::vector<std::string>{"horizon-yaml", "horizon-quant-config", "calibrated-onnx", "qdq-onnx", "ort-json",
                                      "ort-python", "rknn-cfg"}));
  const std::map<std::string, std::string> suffix_end = {{"horizon-yaml", ".yaml"}, {"horizon-quant-config", ".json"},
                                                         {"calibrated-onnx", ".onnx"},
                                                         {"qdq-onnx", ".onnx"},     {"ort-json", ".json"},
                                                         {"ort-python", ".py"},     {"rknn-cfg", ".cfg"}};
  for (const Json& f : formats->items()) {
    const std::string name = f.find("name")->as_string(), suffix = f.find("suffix")->as_string();
    ASSERT_EQ(suffix_end.count(name), 1u) << name;
    const std::string end = suffix_end.at(name);
    const bool model = name == "calibrated-onnx" || name == "qdq-onnx";
    EXPECT_EQ(suffix.substr(suffix.size() - end.size()), end) << name;
    EXPECT_EQ(suffix[0], '.') << name;
    EXPECT_EQ(f.find("binary")->dump(), model ? "true" : "false") << name;
    EXPECT_EQ(f.find("media_type")->as_string() == "application/octet-stream", model) << name;
    EXPECT_FALSE(f.find("label")->as_string().empty()) << name;
  }
}

TEST(Catalog, ExportFormatsSayWhichCanCarryThresholds) {
  // docs/config-export.md#thresholds: Horizon's YAML and quant_config have no per-node thresholds; the
  // model files, onnxruntime's overrides and rknn's quantize_parameters take them (the fix panel offers
  // `threshold` first for those).
  const Json doc = describe();
  std::map<std::string, std::string> carries;
  for (const Json& f : doc.find("export_formats")->items()) carries[f.find("name")->as_string()] = f.find("thresholds")->dump();
  EXPECT_EQ(carries, (std::map<std::string, std::string>{{"horizon-yaml", "false"}, {"horizon-quant-config", "false"},
                                                         {"calibrated-onnx", "true"}, {"qdq-onnx", "true"},
                                                         {"ort-json", "true"}, {"ort-python", "true"},
                                                         {"rknn-cfg", "true"}}));
}

TEST(Catalog, ActionQTypesAreIntegerTypesOfTheirWidthAndSign) {
  // The what-if's qtype buttons: each a qtype the configuration takes, 2^bits levels, unsigned as said.
  const Json doc = describe();
  std::vector<std::string> names;
  for (const Json& q : doc.find("qtypes")->items()) {
    const std::string name = q.find("name")->as_string();
    names.push_back(name);
    const quant::QType t = quant::QType::parse(name);
    EXPECT_TRUE(t.is_integer()) << name;
    EXPECT_EQ(q.find("unsigned")->dump(), t.is_unsigned() ? "true" : "false") << name;
    EXPECT_EQ(t.qmax() - t.qmin() + 1.0, std::ldexp(1.0, static_cast<int>(q.find("bits")->as_number()))) << name;
    EXPECT_FALSE(q.find("doc")->as_string().empty()) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"int8", "uint8", "int16", "uint16"}));
}

TEST(Catalog, HintLayerIsTheRecoveredShareWhereLowerIsBetter) {
  // A node whose cure recovers more of the output loss is where more of the loss comes from: hotter.
  const Json doc = describe();
  const Json* layer = doc.find("hint_layer");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->find("name")->as_string(), "recovered");
  EXPECT_EQ(layer->find("better")->as_string(), "lower");
}
