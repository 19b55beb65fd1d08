#include "config/config_export.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <sstream>

#include "analysis/analysis_test_util.h"
#include "core/error.h"
#include "graph_builder.h"
#include "ops/op_test_util.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;
using test::attr_string;
using test::attr_strings;

namespace {

// Two branches whose calibration nodes cover the attribute spellings a rewrite meets:
//   a_HzCalibration   qtype "int8" and switch "ON" spelled out
//   wa_HzCalibration  constant=2: scales given, not derived from thresholds
//   b_HzCalibration   legacy `bits` instead of qtype, no switch attribute
//   wb_HzCalibration  stored OFF
// Mul_A(a, wa) -> ya, Mul_B(b, wb) -> yb.
std::vector<uint8_t> model_bytes() {
  test::GraphBuilder b;
  b.input("a", DType::Float, {1, 4});
  b.input("b", DType::Float, {1, 4});
  b.initializer("wa", Tensor::from_floats({1, 4}, {0.5f, -0.25f, 0.75f, 1.0f}));
  b.initializer("wb", Tensor::from_floats({1, 4}, {1.0f, 0.5f, -0.5f, 0.25f}));
  b.calibration("a", {attr_floats("thresholds", {1.0f}), attr_string("qtype", "int8"), attr_string("switch", "ON")});
  b.calibration("wa", {attr_int("constant", 2), attr_floats("scales", {0.01f})});
  b.calibration("b", {attr_floats("thresholds", {1.5f}), attr_int("bits", 8)});
  b.calibration("wb", {attr_floats("thresholds", {1.0f}), attr_string("switch", "OFF")});
  b.node("Mul_A", "Mul", {"a_cal", "wa_cal"}, {"ya"});
  b.node("Mul_B", "Mul", {"b_cal", "wb_cal"}, {"yb"});
  b.output("ya");
  b.output("yb");
  return reader::write_onnx(b.model());
}

struct Loaded {
  std::vector<uint8_t> bytes;
  std::unique_ptr<exec::Executor> ex;
  std::unique_ptr<quant::CalibrationRelations> rel;
  explicit Loaded(std::vector<uint8_t> b) : bytes(std::move(b)) {
    ex = std::make_unique<exec::Executor>(reader::read_onnx(bytes.data(), bytes.size()));
    rel = std::make_unique<quant::CalibrationRelations>(ex->graph());
  }
  size_t cal(const std::string& name) const { return static_cast<size_t>(ex->calibration_index(name)); }
};

// Mul_A int16 (a and wa), Mul_B float (b; wb is stored OFF already).
quant::ExportInput fixed_config(const Loaded& m) {
  quant::ExportInput in;
  in.config = m.ex->stored_config();
  in.config.qtype[m.cal("a_HzCalibration")] = "int16";
  in.config.qtype[m.cal("wa_HzCalibration")] = "int16";
  in.config.on[m.cal("b_HzCalibration")] = 0;
  in.intents = {{"Mul_A", "int16"}, {"Mul_B", "float"}};
  in.model = "m.onnx";
  in.tool = "ptqscope 0.1.0";
  in.provenance = io::Json::parse(
      R"({"tool": "ptqscope 0.1.0", "analysis": "fix", "target": "cosine-similarity>=0.999", "reached": 0.9993})", "test");
  return in;
}

std::vector<std::string> lines_of(const std::string& text, bool comments) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);)
    if (comments == (line.rfind("#", 0) == 0)) out.push_back(line);
  return out;
}

std::vector<Tensor> run(exec::Executor& ex, const exec::QuantConfig& c) {
  const std::vector<Tensor> inputs = {Tensor::from_floats({1, 4}, {0.3f, -0.77f, 0.12f, 0.9f}),
                                      Tensor::from_floats({1, 4}, {1.2f, -0.4f, 0.05f, -1.49f})};
  return ex.outputs(ex.run(inputs, c));
}

}  // namespace

TEST(ConfigExport, RaisedNodesFollowIntentsThenTheRest) {
  Loaded m(model_bytes());
  quant::ExportInput in = fixed_config(m);
  auto nodes = quant::raised_nodes(*m.ex, *m.rel, in);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, "Mul_A");
  EXPECT_EQ(nodes[0].action, "int16");
  EXPECT_EQ(nodes[0].calibrations.size(), 2u);
  EXPECT_EQ(nodes[1].node, "Mul_B");
  EXPECT_EQ(nodes[1].action, "float");
  EXPECT_EQ(nodes[1].calibrations, (std::vector<int>{static_cast<int>(m.cal("b_HzCalibration"))}));
  // Without intents the consumers of the raised calibration nodes are named, in graph order.
  in.intents.clear();
  nodes = quant::raised_nodes(*m.ex, *m.rel, in);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, "Mul_A");
  EXPECT_EQ(nodes[1].node, "Mul_B");
  // An int8 intent on an int8 node raises nothing and is not named.
  in.config = m.ex->stored_config();
  in.intents = {{"Mul_A", "int8"}};
  EXPECT_TRUE(quant::raised_nodes(*m.ex, *m.rel, in).empty());
}

TEST(ConfigExport, HorizonYaml) {
  Loaded m(model_bytes());
  const std::string text = quant::export_config_text(*m.ex, *m.rel, fixed_config(m), "horizon-yaml");
  EXPECT_EQ(lines_of(text, true).at(0),
            "# Written by ptqscope 0.1.0 for m.onnx. Metric reached: cosine-similarity 0.9993 (target "
            "cosine-similarity>=0.999), found by fix.");
  EXPECT_EQ(lines_of(text, true).at(1), "# Nodes raised (2): Mul_A int16, Mul_B float.");
  EXPECT_EQ(lines_of(text, false), (std::vector<std::string>{
                                       "model_parameters:",
                                       "  node_info: {",
                                       R"(    "Mul_A": {"ON": "BPU", "InputType": "int16", "OutputType": "int16"},)",
                                       R"(    "Mul_B": {"ON": "CPU"})",
                                       "  }",
                                       "calibration_parameters:",
                                       R"(  run_on_cpu: "Mul_B")",
                                   }));
  quant::ExportInput none = fixed_config(m);
  none.config = m.ex->stored_config();
  none.provenance = io::Json::null();
  const std::string empty = quant::export_config_text(*m.ex, *m.rel, none, "horizon-yaml");
  EXPECT_EQ(lines_of(empty, false), (std::vector<std::string>{"model_parameters:", "  node_info: {}"}));
  EXPECT_NE(empty.find("Metric reached: not recorded in the configuration."), std::string::npos);
}

// A fix's provenance names the samples it judged: the first line says how many of how many.
TEST(ConfigExport, ProvenanceSamples) {
  Loaded m(model_bytes());
  quant::ExportInput in = fixed_config(m);
  const auto first_line = [&](const char* provenance) {
    in.provenance = io::Json::parse(provenance, "test");
    return lines_of(quant::export_config_text(*m.ex, *m.rel, in, "horizon-yaml"), true).at(0);
  };
  EXPECT_EQ(first_line(R"({"analysis": "fix", "target": "cosine-similarity>=0.999", "reached": 0.9993,
                           "samples": ["8.npy", "9.npy"], "calibration_samples": 10})"),
            "# Written by ptqscope 0.1.0 for m.onnx. Metric reached: cosine-similarity 0.9993 (target "
            "cosine-similarity>=0.999), found by fix on 2 of 10 samples.");
  EXPECT_EQ(first_line(R"({"analysis": "fix", "reached": 0.9993, "samples": ["0.npy"], "calibration_samples": 1})"),
            "# Written by ptqscope 0.1.0 for m.onnx. Metric reached: 0.9993, found by fix on 1 of 1 sample.");
  EXPECT_EQ(first_line(R"({"analysis": "fix", "reached": 0.9993, "samples": ["0.npy"]})"),
            "# Written by ptqscope 0.1.0 for m.onnx. Metric reached: 0.9993, found by fix on 1 sample.");
}

TEST(ConfigExport, OnnxruntimeJsonAndPython) {
  Loaded m(model_bytes());
  const std::string text = quant::export_config_text(*m.ex, *m.rel, fixed_config(m), "ort-json");
  const io::Json doc = io::Json::parse(text, "ort-json");
  ASSERT_TRUE(doc.find("nodes_to_exclude")->is_array());
  ASSERT_EQ(doc.find("nodes_to_exclude")->items().size(), 1u);
  EXPECT_EQ(doc.find("nodes_to_exclude")->items()[0].as_string(), "Mul_B");
  const io::Json& overrides = *doc.find("extra_options")->find("TensorQuantOverrides");
  ASSERT_EQ(overrides.members().size(), 2u);
  EXPECT_EQ(overrides.members()[0].first, "a");   // Mul_A's activation input
  EXPECT_EQ(overrides.members()[1].first, "wa");  // and its weight
  for (const auto& [tensor, list] : overrides.members()) {
    ASSERT_EQ(list.items().size(), 1u);
    EXPECT_EQ(list.items()[0].find("quant_type")->as_string(), "QInt16");
  }
  EXPECT_TRUE(doc.find("extra_options")->find("UseQDQContribOps")->as_bool());
  const io::Json& nodes = *doc.find("ptqscope")->find("nodes");
  ASSERT_EQ(nodes.members().size(), 2u);
  EXPECT_EQ(nodes.members()[0].first, "Mul_A");
  EXPECT_EQ(nodes.members()[1].second.find("action")->as_string(), "float");
  EXPECT_EQ(doc.find("ptqscope")->find("provenance")->find("reached")->as_string(), "0.9993");

  const std::string py = quant::export_config_text(*m.ex, *m.rel, fixed_config(m), "ort-python");
  const auto code = lines_of(py, false);
  auto has = [&](const std::string& line) { return std::find(code.begin(), code.end(), line) != code.end(); };
  EXPECT_TRUE(has("from onnxruntime.quantization import QuantFormat, QuantType, quantize_static"));
  EXPECT_TRUE(has(R"(    "Mul_B",)"));
  EXPECT_TRUE(has(R"(    "a": [{"quant_type": QuantType.QInt16}],  # Mul_A)"));
  EXPECT_TRUE(has(R"(    "wa": [{"quant_type": QuantType.QInt16}],  # Mul_A)"));
  EXPECT_TRUE(has(R"(    "UseQDQContribOps": True,  # 16-bit Q/DQ below opset 21)"));
}

TEST(ConfigExport, RknnCustomQuantizeLayers) {
  Loaded m(model_bytes());
  const std::string text = quant::export_config_text(*m.ex, *m.rel, fixed_config(m), "rknn-cfg");
  EXPECT_EQ(lines_of(text, false), (std::vector<std::string>{"custom_quantize_layers:",
                                                             R"(    "ya": int16  # Mul_A (int16))",
                                                             R"(    "yb": float16  # Mul_B (float))"}));
  test::expect_error([&] { quant::export_config_text(*m.ex, *m.rel, fixed_config(m), "tflite"); },
                     "export: unknown format 'tflite' (known: horizon-yaml, horizon-quant-config, calibrated-onnx, qdq-onnx, ort-json, "
                     "ort-python, rknn-cfg)");
}

TEST(ConfigExport, CalibratedModelRoundTrip) {
  Loaded m(model_bytes());
  const quant::ExportInput in = fixed_config(m);
  // The stored configuration writes the file back byte for byte.
  quant::ExportInput stored = in;
  stored.config = m.ex->stored_config();
  EXPECT_EQ(quant::export_calibrated_onnx(*m.ex, stored, m.bytes.data(), m.bytes.size()), m.bytes);

  Loaded back(quant::export_calibrated_onnx(*m.ex, in, m.bytes.data(), m.bytes.size()));
  // Reopened, the stored state is the configuration: switches, qtypes and the computed outputs.
  const auto& cals = back.ex->calibrations();
  for (size_t i = 0; i < cals.size(); ++i) {
    const size_t j = m.cal(cals[i].node_name);
    EXPECT_EQ(cals[i].switch_on, in.config.on[j] != 0) << cals[i].node_name;
    const std::string q = in.config.qtype[j].empty() ? m.ex->calibrations()[j].qtype.name : in.config.qtype[j];
    EXPECT_EQ(cals[i].qtype.name, q) << cals[i].node_name;
  }
  // constant=2 keeps its given scales: rewritten for int16 as threshold 0.01 * 127 over 32767.
  const float expected_scale = (0.01f * 127.0f) / 32767.0f;
  EXPECT_EQ(cals[back.cal("wa_HzCalibration")].scales, (std::vector<float>{expected_scale}));
  const auto want = run(*m.ex, in.config);
  const auto got = run(*back.ex, back.ex->stored_config());
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) EXPECT_EQ(std::memcmp(want[o].raw(), got[o].raw(), want[o].nbytes()), 0) << o;

  // Nothing else touched: every node keeps its name, inputs, outputs and attributes, except the
  // switch / qtype / scales attributes of the changed calibration nodes.
  const ir::Graph& g0 = m.ex->graph();
  const ir::Graph& g1 = back.ex->graph();
  ASSERT_EQ(g0.nodes.size(), g1.nodes.size());
  const std::set<std::string> changed = {"a_HzCalibration", "wa_HzCalibration", "b_HzCalibration"};
  for (size_t k = 0; k < g0.nodes.size(); ++k) {
    const ir::Node& x = g0.nodes[k];
    const ir::Node& y = g1.nodes[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    auto kept = [&](const ir::Node& n) {
      std::vector<std::string> out;
      for (const auto& a : n.attributes) {
        if (changed.count(n.name) && (a.name == "switch" || a.name == "qtype" || a.name == "scales")) continue;
        std::string floats;
        for (float f : a.floats) floats += std::to_string(f) + ",";
        out.push_back(a.name + "=" + a.s + "|" + std::to_string(a.i) + "|" + floats);
      }
      return out;
    };
    EXPECT_EQ(kept(x), kept(y)) << x.name;
  }
  EXPECT_EQ(g1.node(g1.find_node("b_HzCalibration")).attr_string("switch", ""), "OFF");
  EXPECT_EQ(g1.node(g1.find_node("b_HzCalibration")).attr_int("bits", 0), 8);  // the legacy attribute stays
  EXPECT_EQ(g1.node(g1.find_node("a_HzCalibration")).attr_string("qtype", ""), "int16");
}

TEST(ConfigExport, CalibratedModelRefusesStatesItCannotHold) {
  // A legacy asymq node reads "int16" back as uint16: the export names it instead of writing it.
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 4});
  b.calibration("x", {attr_floats("thresholds", {1.0f}), attr_floats("scales", {1.0f / 127}), test::attr_ints("zero_point", {0}),
                      attr_strings("info_strings", {"asymq"})});
  b.node("Relu_1", "Relu", {"x_cal"}, {"y"});
  b.output("y");
  Loaded m(reader::write_onnx(b.model()));
  quant::ExportInput in;
  in.config = m.ex->stored_config();
  in.config.qtype[0] = "int16";
  in.tool = "ptqscope 0.1.0";
  test::expect_error([&] { quant::export_calibrated_onnx(*m.ex, in, m.bytes.data(), m.bytes.size()); },
                     "calibrated-onnx: calibration node 'x_HzCalibration' cannot hold qtype 'int16' in its attributes so "
                     "that it computes what ptqscope simulated (legacy asymq or asymmetric attributes); leave this "
                     "node's qtype as stored or switch it OFF");
  in.config.qtype[0] = "";
  in.config.on[0] = 0;
  Loaded off(quant::export_calibrated_onnx(*m.ex, in, m.bytes.data(), m.bytes.size()));
  EXPECT_FALSE(off.ex->calibrations()[0].switch_on);
}

TEST(ConfigExport, ThresholdsWhereTheToolchainTakesThem) {
  Loaded m(model_bytes());
  quant::ExportInput in;
  in.config = m.ex->stored_config();
  in.config.thresholds.assign(in.config.on.size(), {});
  in.config.thresholds[m.cal("a_HzCalibration")] = {0.5f};
  in.config.thresholds[m.cal("wb_HzCalibration")] = {0.25f, 0.5f, 0.75f, 1.0f};  // a weight per channel (axis 1)
  in.config.on[m.cal("wb_HzCalibration")] = 1;
  in.tool = "ptqscope 0.1.0";
  // onnxruntime: the activation's range, the weight's per channel with its axis.
  const std::string ort = quant::export_config_text(*m.ex, *m.rel, in, "ort-json");
  EXPECT_NE(ort.find(R"("a": [{"rmin": -0.5, "rmax": 0.5}])"), std::string::npos) << ort;
  EXPECT_NE(ort.find(R"("wb": [{"axis": 1, "rmin": -0.25, "rmax": 0.25}, {"rmin": -0.5, "rmax": 0.5}, {"rmin": -0.75, "rmax": 0.75}, )"
                     R"({"rmin": -1, "rmax": 1}])"),
            std::string::npos)
      << ort;
  // rknn: per-tensor activation ranges only.
  test::expect_error([&] { quant::export_config_text(*m.ex, *m.rel, in, "rknn-cfg"); },
                     "rknn-cfg: calibration node 'wb_HzCalibration' has thresholds rknn-toolkit2's quantize_parameters cannot "
                     "take here (per-tensor activation ranges only)");
  // Horizon has no per-node thresholds.
  test::expect_error([&] { quant::export_config_text(*m.ex, *m.rel, in, "horizon-yaml"); },
                     "horizon-yaml: calibration node 'a_HzCalibration' has thresholds set by the configuration, which "
                     "horizon-yaml cannot carry (Horizon's files have no per-node thresholds); export calibrated-onnx, the "
                     "calibrated model with them written in");
  // The calibrated model: the thresholds attribute, read back as the executor runs it.
  const std::vector<uint8_t> out = quant::export_model_file(*m.ex, in, "calibrated-onnx", m.bytes.data(), m.bytes.size());
  exec::Executor back(reader::read_onnx(out.data(), out.size()));
  EXPECT_EQ(back.calibrations()[m.cal("a_HzCalibration")].thresholds, std::vector<float>({0.5f}));
  EXPECT_EQ(back.calibrations()[m.cal("a_HzCalibration")].scales, std::vector<float>({0.5f / 127.0f}));
  EXPECT_EQ(back.calibrations()[m.cal("wb_HzCalibration")].scales,
            m.ex->configured_spec(m.cal("wb_HzCalibration"), in.config).scales);
  EXPECT_TRUE(back.calibrations()[m.cal("wb_HzCalibration")].switch_on);
}

TEST(ConfigExport, ModelWideCalibrationAsTheToolchainsSettings) {
  Loaded m(model_bytes());
  quant::ExportInput in = fixed_config(m);
  quant::ThresholdMethod method;
  method.name = "percentile";
  method.percentile = 99.995;
  in.calibration = method;
  // Horizon: quant_config's model_config.activation (max_percentile as a fraction), and the YAML keys.
  const std::string quant_config = quant::export_config_text(*m.ex, *m.rel, in, "horizon-quant-config");
  EXPECT_EQ(quant_config,
            "{\n  \"model_config\": {\"activation\": {\"calibration_type\": \"max\", \"max_percentile\": 0.99995, "
            "\"per_channel\": false, \"asymmetric\": false}},\n  \"node_config\": {\n    \"Mul_A\": {\"InputType\": \"int16\", "
            "\"OutputType\": \"int16\"},\n    \"Mul_B\": {\"ON\": \"CPU\"}\n  }\n}\n");
  const std::string yaml = quant::export_config_text(*m.ex, *m.rel, in, "horizon-yaml");
  EXPECT_NE(yaml.find("calibration_parameters:\n  calibration_type: \"max\"\n  max_percentile: 0.99995\n  per_channel: False\n"
                      "  run_on_cpu: \"Mul_B\"\n"),
            std::string::npos)
      << yaml;
  // onnxruntime: calibrate_method and the percentile; rknn has no percentile algorithm.
  const std::string ort = quant::export_config_text(*m.ex, *m.rel, in, "ort-json");
  EXPECT_NE(ort.find("\"calibrate_method\": \"Percentile\""), std::string::npos) << ort;
  EXPECT_NE(ort.find("\"CalibPercentile\": 99.995"), std::string::npos) << ort;
  test::expect_error([&] { quant::export_config_text(*m.ex, *m.rel, in, "rknn-cfg"); },
                     "rknn-cfg: the calibration method percentile has no rknn-toolkit2 quantized_algorithm (normal, "
                     "kl_divergence, mmse)");
  in.calibration->name = "mse";
  EXPECT_NE(quant::export_config_text(*m.ex, *m.rel, in, "rknn-cfg").find("rknn.config(quantized_algorithm='mmse')"),
            std::string::npos);
  test::expect_error([&] { quant::export_config_text(*m.ex, *m.rel, in, "horizon-quant-config"); },
                     "horizon-quant-config: the calibration method mse has no Horizon calibration_type (max, kl, and max with "
                     "max_percentile for a percentile); choose another method");
}
