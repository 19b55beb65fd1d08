#include "config/config_doc.h"

#include <gtest/gtest.h>

#include "analysis/analysis_test_util.h"

using namespace ptq;

namespace {

// relu_mul_add_model (analysis_test_util.h) plus a switched-OFF calibration on y2 feeding Neg_4.
// Calibration nodes, model order: x (int8), w (int8, weight), r (int16), y2 (int8, stored OFF).
// Relations: Relu_1 {x}, Mul_2 {r, w}, Add_3 {x}, Neg_4 {y2}.
struct Fixture {
  exec::Executor ex;
  quant::CalibrationRelations rel;
  Fixture() : ex(model()), rel(ex.graph()) {}
  static ir::Model model() {
    test::GraphBuilder b;
    test::add_relu_mul_add(b);
    b.calibration("y2", {test::attr_floats("thresholds", {3.0f}), test::attr_string("switch", "OFF")});
    b.node("Neg_4", "Neg", {"y2_cal"}, {"y3"});
    b.output("y3");
    return b.model();
  }
  size_t idx(const std::string& name) const { return static_cast<size_t>(ex.calibration_index(name)); }
  quant::ResolvedConfig apply(const std::string& text) {
    return quant::apply_config(ex, rel, quant::parse_config_document_text(text));
  }
};

const std::string kHead = R"("schema": "ptqscope.config", "version": 1)";

std::string doc(const std::string& body) { return "{" + kHead + (body.empty() ? "" : ", " + body) + "}"; }

}  // namespace

TEST(ConfigDoc, BaseStoredAllOnAllOff) {
  Fixture f;
  const auto stored = f.apply(doc(""));
  EXPECT_EQ(stored.config.on, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(stored.config.qtype, (std::vector<std::string>{"", "", "", ""}));
  EXPECT_EQ(stored.config.round, quant::RoundMode::HalfToEven);
  EXPECT_EQ(f.apply(doc(R"("base": "all_on")")).config.on, (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(f.apply(doc(R"("base": "all_off")")).config.on, (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(f.apply(doc(R"("round": "half_away_from_zero")")).config.round, quant::RoundMode::HalfAwayFromZero);
}

TEST(ConfigDoc, IntentsSwitchTheNodesCalibrationsThenEntriesOverride) {
  Fixture f;
  // Mul_2 -> int16: its inputs r (already int16: stored, no override) and w (int8 -> int16).
  auto r = f.apply(doc(R"("intents": [{"node": "Mul_2", "action": "int16"}])"));
  EXPECT_EQ(r.config.on, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(r.config.qtype[f.idx("w_HzCalibration")], "int16");
  EXPECT_EQ(r.config.qtype[f.idx("r_HzCalibration")], "");
  EXPECT_EQ(r.config.qtype[f.idx("x_HzCalibration")], "");
  // float switches OFF; a calibration node's own name selects itself; a stored-OFF node is switched ON.
  r = f.apply(doc(R"("intents": [{"node": "Relu_1", "action": "float"}, {"node": "y2_HzCalibration", "action": "int8"}])"));
  EXPECT_EQ(r.config.on, (std::vector<uint8_t>{0, 1, 1, 1}));
  // Later intents win on shared calibration nodes (Relu_1 and Add_3 share x); entries override intents,
  // a missing field keeps the value reached.
  r = f.apply(doc(R"("intents": [{"node": "Relu_1", "action": "float"}, {"node": "Add_3", "action": "int16"}],
                     "calibrations": {"w_HzCalibration": {"on": false}, "r_HzCalibration": {"qtype": "int8"}})"));
  EXPECT_EQ(r.config.on, (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(r.config.qtype, (std::vector<std::string>{"int16", "", "int8", ""}));
  EXPECT_EQ(r.intents.size(), 2u);
  EXPECT_EQ(r.intents[1].node, "Add_3");
  EXPECT_EQ(r.intents[1].action, "int16");
}

TEST(ConfigDoc, WrittenDocumentListsEveryCalibrationAndReadsBackToTheSameState) {
  Fixture f;
  const auto r = f.apply(doc(R"("model": "m.onnx", "round": "half_away_from_zero",
      "intents": [{"node": "Mul_2", "action": "float"}], "calibrations": {"x_HzCalibration": {"qtype": "int16"}},
      "provenance": {"tool": "ptqscope", "reached": 0.5})"));
  const std::string written = quant::config_document_json(f.ex, r);
  EXPECT_EQ(written,
            R"({"schema":"ptqscope.config","version":1,"model":"m.onnx","base":"stored","round":"half_away_from_zero",)"
            R"("intents":[{"node":"Mul_2","action":"float"}],"calibrations":{)"
            R"("x_HzCalibration":{"on":true,"qtype":"int16"},"w_HzCalibration":{"on":false,"qtype":"int8"},)"
            R"("r_HzCalibration":{"on":false,"qtype":"int16"},"y2_HzCalibration":{"on":false,"qtype":"int8"}},)"
            R"("provenance":{"tool":"ptqscope","reached":0.5}})");
  const auto again = f.apply(written);
  EXPECT_EQ(again.config.on, r.config.on);
  EXPECT_EQ(again.config.qtype, r.config.qtype);
  EXPECT_EQ(again.config.round, r.config.round);
  EXPECT_EQ(quant::config_document_json(f.ex, again), written);
}

TEST(ConfigDoc, AppliedConfigChangesTheRunLikeTheEquivalentQuantConfig) {
  Fixture f;
  // x = 0.6: int8 with threshold 1.27 -> step 0.01, r = relu(fq(x)); Mul_2 float: y1 = r * w exactly.
  const auto r = f.apply(doc(R"("intents": [{"node": "Mul_2", "action": "float"}])"));
  const Tensor x = Tensor::from_floats({1, 4}, {0.6f, -0.3f, 0.123f, 1.0f});
  const auto run = f.ex.run({x}, r.config);
  const Tensor y1 = f.ex.outputs(run)[0];
  const auto& w = test::relu_mul_add_weights();
  const float xs[4] = {0.6f, -0.3f, 0.123f, 1.0f};
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(y1.data<float>()[i], std::max(0.0f, test::fq(xs[i], 1.27f)) * w[static_cast<size_t>(i)]) << i;
}

TEST(ConfigDoc, ErrorsNameTheField) {
  Fixture f;
  auto err = [&](const std::string& text, const std::string& message) {
    test::expect_error([&] { f.apply(text); }, message);
  };
  err("[]", "config must be a JSON object {\"schema\": \"ptqscope.config\", ...}, got an array");
  err(R"({"version": 1})", "config.schema must be \"ptqscope.config\" (missing)");
  err(R"({"schema": "ptqscope.result", "version": 1})", "config.schema must be \"ptqscope.config\", got 'ptqscope.result'");
  err(R"({"schema": "ptqscope.config", "version": 2})", "config.version must be 1, got 2");
  err(doc(R"("colour": 1)"), "config.colour: unknown field (expected schema, version, model, base, round, intents, calibrations, provenance)");
  err(doc(R"("base": "calibrated")"), "config.base must be \"stored\", \"all_on\" or \"all_off\", got 'calibrated'");
  err(doc(R"("round": 1)"), "config.round must be \"half_to_even\" or \"half_away_from_zero\", got a number");
  err(doc(R"("intents": {})"), "config.intents must be a list of {\"node\", \"action\"}, got an object");
  err(doc(R"("intents": [{"node": "Mul_2"}])"), "config.intents[0].action is missing (\"float\", \"int8\", \"int16\", \"threshold\", ...)");
  err(doc(R"("intents": [{"node": "Mul_2", "action": "int8x"}])"),
      "config.intents[0].action: unknown action 'int8x' (expected \"float\", \"threshold\" or a qtype such as \"int8\", \"int16\")");
  err(doc(R"("intents": [{"node": "Mul_2", "action": "float"}, {"node": "Conv_9", "action": "float"}])"),
      "config.intents[1].node: 'Conv_9' is not a node of the model");
  err(doc(R"("intents": [{"node": "Neg_4", "action": "float", "why": 1}])"),
      "config.intents[0].why: unknown field (expected node and action)");
  // A node without calibrated inputs: an intent on it would change nothing, so it is refused.
  test::expect_error(
      [&] {
        test::GraphBuilder b;
        test::add_relu_mul_add(b);
        b.node("Neg_5", "Neg", {"y1"}, {"y4"});
        b.output("y4");
        exec::Executor ex(b.model());
        quant::CalibrationRelations rel(ex.graph());
        quant::apply_config(ex, rel, quant::parse_config_document_text(doc(R"("intents": [{"node": "Neg_5", "action": "int16"}])")));
      },
      "config.intents[0].node: node 'Neg_5' has no calibrated inputs and is not a calibration node (nothing to switch)");
  err(doc(R"("calibrations": {"Mul_2": {"on": true}})"),
      "config.calibrations.Mul_2: 'Mul_2' is not a calibration node of the model");
  err(doc(R"("calibrations": {"x_HzCalibration": {"on": "yes"}})"), "config.calibrations.x_HzCalibration.on must be true or false, got a string");
  err(doc(R"("calibrations": {"x_HzCalibration": {"qtype": "int9x"}})"),
      "config.calibrations.x_HzCalibration.qtype: unknown qtype 'int9x' (e.g. \"int8\", \"int16\", \"uint8\", \"float16\")");
  err(doc(R"("calibrations": {"x_HzCalibration": {"bits": 8}})"),
      "config.calibrations.x_HzCalibration.bits: unknown field (expected on, qtype, thresholds and thresholds_from)");
  err(doc(R"("provenance": "fix")"), "config.provenance must be an object, got a string");
  // The prefix names the file in the CLI.
  test::expect_error([&] { quant::parse_config_document_text("{", "cfg.json"); },
                     "cfg.json: invalid JSON at offset 1: expected a string key");
}

TEST(ConfigDoc, ThresholdIntentsValuesAndWrittenBack) {
  Fixture f;
  // A value on a calibration node; on a normal node with one activation calibration node (Relu_1: x).
  auto r = f.apply(doc(R"("intents": [{"node": "r_HzCalibration", "action": "threshold", "value": 1.5},
                                       {"node": "Relu_1", "action": "threshold", "value": [0.9]}])"));
  EXPECT_EQ(r.config.thresholds[f.idx("r_HzCalibration")], std::vector<float>({1.5f}));
  EXPECT_EQ(r.config.thresholds[f.idx("x_HzCalibration")], std::vector<float>({0.9f}));
  EXPECT_EQ(r.config.thresholds_of(f.idx("w_HzCalibration")), nullptr);
  EXPECT_EQ(f.ex.configured_spec(f.idx("x_HzCalibration"), r.config).scales, std::vector<float>({0.9f / 127.0f}));
  // Written back: the intents as given and the thresholds in the calibrations map; read again, the same state.
  const std::string written = quant::config_document_json(f.ex, r);
  EXPECT_NE(written.find(R"({"node":"Relu_1","action":"threshold","value":[0.9]})"), std::string::npos) << written;
  EXPECT_NE(written.find(R"("x_HzCalibration":{"on":true,"qtype":"int8","thresholds":[0.9]})"), std::string::npos) << written;
  EXPECT_TRUE(exec::same_state(f.apply(written).config, r.config));
  // A calibrations entry overrides, and "thresholds": null restores the stored ones.
  r = f.apply(doc(R"("intents": [{"node": "Relu_1", "action": "threshold", "value": 0.9}],
                     "calibrations": {"x_HzCalibration": {"thresholds": null}, "w_HzCalibration": {"thresholds": [0.5]}})"));
  EXPECT_EQ(r.config.thresholds_of(f.idx("x_HzCalibration")), nullptr);
  EXPECT_EQ(r.config.thresholds[f.idx("w_HzCalibration")], std::vector<float>({0.5f}));
}

TEST(ConfigDoc, ThresholdMethodsAskTheResolverOnceAtTheFinalQtype) {
  Fixture f;
  std::vector<quant::ThresholdRequest> asked;
  const quant::ThresholdResolver resolver = [&](const std::vector<quant::ThresholdRequest>& requests) {
    asked = requests;
    std::vector<std::vector<float>> out;
    for (const auto& q : requests) out.push_back({q.method.name == "mse" ? 0.25f : 0.75f});
    return out;
  };
  // Mul_2 reads r (activation) and w (weight): a method on the normal node re-calibrates r only; a
  // later int16 intent on Add_3 (x) sets the qtype the method of x is resolved at.
  const auto r = quant::apply_config(
      f.ex, f.rel,
      quant::parse_config_document_text(doc(R"("intents": [{"node": "Mul_2", "action": "threshold", "method": "mse"},
          {"node": "x_HzCalibration", "action": "threshold", "method": "percentile", "percentile": 99.9, "per_channel": true},
          {"node": "Add_3", "action": "int16"}])")),
      "config", resolver);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].calibration, f.idx("x_HzCalibration"));
  EXPECT_EQ(asked[0].qtype, "int16");
  EXPECT_EQ(asked[0].method.text(), "percentile 99.9 per channel");
  EXPECT_EQ(asked[1].calibration, f.idx("r_HzCalibration"));
  EXPECT_EQ(asked[1].method.text(), "mse");  // r is per tensor: its granularity is kept
  EXPECT_EQ(r.config.thresholds[f.idx("r_HzCalibration")], std::vector<float>({0.25f}));
  EXPECT_EQ(r.config.thresholds_of(f.idx("w_HzCalibration")), nullptr);
  // The model-wide calibration re-calibrates every activation node (x, r, y2), not weights; intents win.
  asked.clear();
  const auto wide = quant::apply_config(
      f.ex, f.rel,
      quant::parse_config_document_text(doc(R"("calibration": {"method": "kl"},
          "intents": [{"node": "r_HzCalibration", "action": "threshold", "value": 2}])")),
      "config", resolver);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(wide.config.thresholds[f.idx("r_HzCalibration")], std::vector<float>({2.0f}));
  EXPECT_EQ(wide.model_wide, (std::vector<uint8_t>{1, 0, 0, 1}));
  const std::string written = quant::config_document_json(f.ex, wide);
  EXPECT_NE(written.find(R"("calibration":{"method":"kl","per_channel":false})"), std::string::npos);
  EXPECT_NE(written.find(R"("x_HzCalibration":{"on":true,"qtype":"int8","thresholds":[0.75],"thresholds_from":"calibration"})"),
            std::string::npos)
      << written;
  // Read back without data: the same state, the same model-wide nodes.
  const auto back = f.apply(written);
  EXPECT_TRUE(exec::same_state(back.config, wide.config));
  EXPECT_EQ(back.model_wide, wide.model_wide);
}

TEST(ConfigDoc, ThresholdErrorsNameTheField) {
  Fixture f;
  auto err = [&](const std::string& text, const std::string& message) {
    test::expect_error([&] { f.apply(text); }, message);
  };
  err(doc(R"("intents": [{"node": "Relu_1", "action": "threshold", "method": "mse"}])"),
      "config.intents[0]: choosing thresholds by 'mse' needs the calibration data (the values the node reads); give the "
      "thresholds in calibrations.x_HzCalibration.thresholds");
  err(doc(R"("intents": [{"node": "Relu_1", "action": "threshold"}])"),
      "config.intents[0]: a threshold intent gives either \"method\" (max, percentile, mse, kl) or \"value\" (the thresholds)");
  err(doc(R"("intents": [{"node": "Relu_1", "action": "threshold", "method": "best"}])"),
      "config.intents[0].method: unknown threshold method 'best' (known: max, percentile, mse, kl)");
  err(doc(R"("intents": [{"node": "Relu_1", "action": "threshold", "method": "percentile", "percentile": 120}])"),
      "config.intents[0].method: the percentile must be in (0, 100], got 120.000000");
  err(doc(R"("intents": [{"node": "Relu_1", "action": "threshold", "value": -1}])"),
      "config.intents[0].value: calibration node 'x_HzCalibration': threshold -1.000000 is not positive");
  err(doc(R"("intents": [{"node": "Relu_1", "action": "int16", "value": 1}])"),
      "config.intents[0].value: unknown field (expected node and action)");
  err(doc(R"("calibrations": {"x_HzCalibration": {"thresholds": "big"}})"),
      "config.calibrations.x_HzCalibration.thresholds must be a number or a non-empty list of numbers, got a string");
  err(doc(R"("calibration": {"method": "max", "bins": 3})"),
      "config.calibration.bins: unknown field (expected method, percentile, per_channel)");
}
