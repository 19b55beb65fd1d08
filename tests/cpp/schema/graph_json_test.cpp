#include "schema/graph_json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "graph_builder.h"
#include "ops/op_test_util.h"
#include "reader/onnx.h"
#include "reader/onnx_writer.h"

using namespace ptq;
using test::attr_floats;
using test::attr_int;
using test::attr_ints;
using test::attr_string;

namespace {

// A minimal JSON reader for checking the output's structure (numbers as double; strict syntax).
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;

  const Json& operator[](const std::string& k) const {
    for (const auto& [key, v] : obj)
      if (key == k) return v;
    ADD_FAILURE() << "missing key " << k;
    static const Json null;
    return null;
  }
  const Json& operator[](size_t i) const { return arr.at(i); }
  bool has(const std::string& k) const {
    for (const auto& kv : obj)
      if (kv.first == k) return true;
    return false;
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (const auto& v : arr) out.push_back(v.str);
    return out;
  }
  std::vector<double> numbers() const {
    std::vector<double> out;
    for (const auto& v : arr) out.push_back(v.num);
    return out;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  Json parse() {
    Json v = value();
    ws();
    if (p_ != s_.size()) throw std::runtime_error("trailing characters at " + std::to_string(p_));
    return v;
  }

 private:
  void ws() { while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_; }
  void expect(char c) {
    ws();
    if (p_ >= s_.size() || s_[p_] != c) throw std::runtime_error(std::string("expected ") + c + " at " + std::to_string(p_));
    ++p_;
  }
  bool peek(char c) { ws(); return p_ < s_.size() && s_[p_] == c; }
  std::string string() {
    expect('"');
    std::string out;
    while (s_.at(p_) != '"') {
      if (s_[p_] == '\\') {
        ++p_;
        const char e = s_.at(p_++);
        if (e == 'u') { out += static_cast<char>(std::stoi(s_.substr(p_, 4), nullptr, 16)); p_ += 4; }
        else out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else {
        out += s_[p_++];
      }
    }
    ++p_;
    return out;
  }
  Json value() {
    ws();
    Json v;
    const char c = s_.at(p_);
    if (c == '{') {
      v.kind = Json::Object;
      ++p_;
      if (peek('}')) { ++p_; return v; }
      do {
        std::string k = string();
        expect(':');
        v.obj.emplace_back(k, value());
      } while (peek(',') && ++p_);
      expect('}');
    } else if (c == '[') {
      v.kind = Json::Array;
      ++p_;
      if (peek(']')) { ++p_; return v; }
      do v.arr.push_back(value());
      while (peek(',') && ++p_);
      expect(']');
    } else if (c == '"') {
      v.kind = Json::String;
      v.str = string();
    } else if (s_.compare(p_, 4, "null") == 0) {
      p_ += 4;
    } else if (s_.compare(p_, 4, "true") == 0 || s_.compare(p_, 5, "false") == 0) {
      v.kind = Json::Bool;
      v.b = c == 't';
      p_ += v.b ? 4 : 5;
    } else {
      v.kind = Json::Number;
      char* end = nullptr;
      v.num = std::strtod(s_.c_str() + p_, &end);
      if (end == s_.c_str() + p_) throw std::runtime_error("bad value at " + std::to_string(p_));
      p_ = static_cast<size_t>(end - s_.c_str());
    }
    return v;
  }
  const std::string& s_;
  size_t p_ = 0;
};

Json to_json(const ir::Model& m) {
  quant::CalibrationRelations rel(m.graph);
  return JsonParser(schema::graph_json(m, rel)).parse();
}

const Json& node(const Json& g, const std::string& name) {
  for (const auto& n : g["nodes"].arr)
    if (n["name"].str == name) return n;
  throw std::runtime_error("no node " + name);
}

// x[1,3,4,4] -> x_HzCalibration -> Conv(w_HzCalibration(w)) -> Relu -> y
ir::Model calibrated_model() {
  test::GraphBuilder b;
  b.input("x", DType::Float, {1, 3, 4, 4});
  b.initializer("w", Tensor::from_floats({2, 3, 1, 1}, {1, 2, 3, 4, 5, 6}));
  b.calibration("x", {attr_floats("thresholds", {2.54f}), attr_string("qtype", "int8"), attr_string("switch", "ON")});
  b.calibration("w", {attr_floats("thresholds", {3.0f, 6.0f}), attr_int("axis", 0), attr_string("qtype", "int8"),
                      attr_string("switch", "OFF"), attr_string("tensor_type", "weight")});
  b.node("conv", "Conv", {"x_cal", "w_cal", ""}, {"c"}, {attr_ints("kernel_shape", {1, 1}), attr_ints("strides", {1, 1})});
  b.node("relu", "Relu", {"c"}, {"y"});
  b.output("y");
  return b.model();
}

}  // namespace

TEST(GraphJson, TopLevelAndNodes) {
  const Json j = to_json(calibrated_model());
  EXPECT_EQ(j["schema"].str, "ptqscope.graph");
  EXPECT_EQ(j["version"].num, 1);
  ASSERT_EQ(j["inputs"].arr.size(), 1u);
  EXPECT_EQ(j["inputs"][0]["name"].str, "x");
  EXPECT_EQ(j["inputs"][0]["dtype"].str, "float32");
  EXPECT_EQ(j["inputs"][0]["dims"].numbers(), (std::vector<double>{1, 3, 4, 4}));
  EXPECT_EQ(j["outputs"][0]["name"].str, "y");
  ASSERT_EQ(j["nodes"].arr.size(), 4u);
  const Json& conv = node(j, "conv");
  EXPECT_EQ(conv["op_type"].str, "Conv");
  EXPECT_EQ(conv["domain"].str, "");
  // Absent optional input is "".
  EXPECT_EQ(conv["inputs"].strings(), (std::vector<std::string>{"x_cal", "w_cal", ""}));
  EXPECT_EQ(conv["outputs"].strings(), (std::vector<std::string>{"c"}));
  EXPECT_EQ(conv["attributes"]["kernel_shape"].numbers(), (std::vector<double>{1, 1}));
  EXPECT_EQ(conv["calibration"].kind, Json::Null);
  EXPECT_EQ(node(j, "relu")["attributes"].obj.size(), 0u);
}

TEST(GraphJson, CalibrationNodes) {
  const Json j = to_json(calibrated_model());
  const Json& x = node(j, "x_HzCalibration");
  EXPECT_EQ(x["domain"].str, "horizon");
  const Json& c = x["calibration"];
  ASSERT_EQ(c.kind, Json::Object);
  EXPECT_EQ(c["kind"].str, "feature");
  EXPECT_EQ(c["qtype"].str, "int8");
  EXPECT_EQ(c["switch"].str, "ON");
  EXPECT_EQ(c["tensor"].str, "x");
  EXPECT_EQ(c["consumers"].strings(), (std::vector<std::string>{"conv"}));
  // float32 written with the fewest digits that round-trip: 2.54f -> 2.54; scale = 2.54 / 127 = 0.02.
  EXPECT_EQ(c["thresholds"].numbers(), (std::vector<double>{2.54}));
  ASSERT_EQ(c["scales"].arr.size(), 1u);
  EXPECT_FLOAT_EQ(static_cast<float>(c["scales"][0].num), 2.54f / 127.0f);

  const Json& w = node(j, "w_HzCalibration")["calibration"];
  EXPECT_EQ(w["kind"].str, "weight");
  EXPECT_EQ(w["switch"].str, "OFF");
  EXPECT_EQ(w["axis"].num, 0);
  EXPECT_EQ(w["tensor"].str, "w");
  EXPECT_EQ(w["thresholds"].numbers(), (std::vector<double>{3, 6}));
  ASSERT_EQ(w["scales"].arr.size(), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(w["scales"][1].num), 6.0f / 127.0f);
}

// §1.9 get_calibration_by_node: conv reads both calibration nodes directly; relu reads conv's output,
// which no calibration node quantizes (Conv is not skippable); calibration nodes list none.
TEST(GraphJson, InputCalibrations) {
  const Json j = to_json(calibrated_model());
  EXPECT_EQ(node(j, "conv")["input_calibrations"].strings(),
            (std::vector<std::string>{"w_HzCalibration", "x_HzCalibration"}));
  EXPECT_TRUE(node(j, "relu")["input_calibrations"].arr.empty());
  EXPECT_TRUE(node(j, "x_HzCalibration")["input_calibrations"].arr.empty());
}

TEST(GraphJson, Values) {
  const Json j = to_json(calibrated_model());
  const Json& v = j["values"];
  const Json& w = v["w"];
  EXPECT_EQ(w["dtype"].str, "float32");
  EXPECT_EQ(w["dims"].numbers(), (std::vector<double>{2, 3, 1, 1}));
  EXPECT_TRUE(w["initializer"].b);
  EXPECT_EQ(w["values"].numbers(), (std::vector<double>{1, 2, 3, 4, 5, 6}));  // 6 <= 16 elements: inline
  EXPECT_EQ(w["producer"].kind, Json::Null);
  EXPECT_EQ(w["consumers"].strings(), (std::vector<std::string>{"w_HzCalibration"}));
  const Json& x = v["x"];
  EXPECT_FALSE(x["initializer"].b);
  EXPECT_FALSE(x.has("values"));
  const Json& c = v["c"];
  EXPECT_EQ(c["producer"].str, "conv");
  EXPECT_EQ(c["consumers"].strings(), (std::vector<std::string>{"relu"}));
  EXPECT_EQ(v["y"]["consumers"].arr.size(), 0u);
}

TEST(GraphJson, ShapesFromInference) {
  const Json j = to_json(calibrated_model());
  // Conv 1x1 with 2 output channels keeps the spatial size.
  EXPECT_EQ(j["values"]["c"]["dims"].numbers(), (std::vector<double>{1, 2, 4, 4}));
  EXPECT_EQ(j["values"]["y"]["dtype"].str, "float32");
  EXPECT_EQ(j["values"]["y"]["dims"].numbers(), (std::vector<double>{1, 2, 4, 4}));
}

TEST(GraphJson, SymbolicDimsAreStrings) {
  ir::Model m = calibrated_model();
  auto& x = m.graph.values[static_cast<size_t>(m.graph.find_value("x"))];
  x.info.dims[0] = -1;
  x.info.dim_params = {"batch", "", "", ""};
  const Json j = to_json(m);
  const Json& dims = j["inputs"][0]["dims"];
  EXPECT_EQ(dims[0].kind, Json::String);
  EXPECT_EQ(dims[0].str, "batch");
  EXPECT_EQ(dims[1].num, 3);
  EXPECT_EQ(j["values"]["y"]["dims"][0].str, "batch");  // carried through Conv and Relu
}

TEST(GraphJson, AttributeKinds) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {4});
  ir::Attribute t;
  t.name = "value";
  t.type = ir::AttrType::Tensor;
  t.t = Tensor::from_int64s({2}, {7, -8});
  ir::Attribute big = t;
  big.name = "big";
  big.t = Tensor::zeros(DType::Float, {17});
  ir::Attribute f = attr_floats("fs", {0.1f, 1e-7f});
  b.node("k", "Custom", {"x"}, {"y"},
         {t, big, f, attr_string("mode", "a\"b"), test::attr_strings("ss", {"p", "q"}), test::attr_float("alpha", 0.2f)},
         "my.domain");
  b.output("y");
  const Json j = to_json(b.model());
  const Json& a = node(j, "k")["attributes"];
  EXPECT_EQ(a["value"]["dtype"].str, "int64");
  EXPECT_EQ(a["value"]["dims"].numbers(), (std::vector<double>{2}));
  EXPECT_EQ(a["value"]["values"].numbers(), (std::vector<double>{7, -8}));
  EXPECT_EQ(a["big"]["dims"].numbers(), (std::vector<double>{17}));
  EXPECT_FALSE(a["big"].has("values"));
  EXPECT_EQ(a["fs"].numbers(), (std::vector<double>{0.1, 1e-7}));
  EXPECT_EQ(a["mode"].str, "a\"b");
  EXPECT_EQ(a["ss"].strings(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(a["alpha"].num, 0.2);
  EXPECT_EQ(node(j, "k")["domain"].str, "my.domain");
  // Unknown op: output shape unknown -> dims null, dtype null.
  EXPECT_EQ(j["values"]["y"]["dims"].kind, Json::Null);
}

TEST(GraphJson, SubgraphsAreNested) {
  test::GraphBuilder b;
  b.input("cond", DType::Bool, {});
  b.input("outer", DType::Float, {3});
  ir::Attribute then_branch;
  then_branch.name = "then_branch";
  then_branch.type = ir::AttrType::Graph;
  ir::Graph g;
  {
    // Built by hand: a subgraph may read the enclosing graph's tensors.
    ir::Node n;
    n.name = "inner";
    n.op_type = "Neg";
    g.values.resize(2);
    g.values[0].name = "outer";
    g.values[1].name = "z";
    n.inputs = {0};
    n.outputs = {1};
    g.nodes.push_back(n);
    g.outputs = {1};
    g.values[1].is_graph_output = true;
    ir::finalize_graph(g, true);
  }
  then_branch.g = std::make_shared<ir::Graph>(g);
  ir::Attribute else_branch = then_branch;
  else_branch.name = "else_branch";
  b.node("if", "If", {"cond"}, {"r"}, {then_branch, else_branch});
  b.output("r");
  const Json j = to_json(b.model());
  const Json& sub = node(j, "if")["attributes"]["then_branch"]["graph"];
  ASSERT_EQ(sub["nodes"].arr.size(), 1u);
  EXPECT_EQ(sub["nodes"][0]["name"].str, "inner");
  EXPECT_EQ(sub["nodes"][0]["calibration"].kind, Json::Null);
  EXPECT_EQ(sub["outputs"][0]["name"].str, "z");
  EXPECT_EQ(sub["values"]["z"]["producer"].str, "inner");
  EXPECT_FALSE(sub.has("schema"));
}

// The reader names unnamed nodes "<op_type>_<index in the file>"; graph JSON shows those names.
TEST(GraphJson, UnnamedNodesGetReaderNames) {
  test::GraphBuilder b;
  b.input("x", DType::Float, {2});
  b.node("n0", "Relu", {"x"}, {"a"});
  b.node("n1", "Neg", {"a"}, {"c"});
  b.node("Neg_1", "Abs", {"c"}, {"d"});  // a name already taken (here by a generated one) is regenerated too
  b.output("d");
  ir::Model unnamed = b.model();
  unnamed.graph.nodes[0].name.clear();
  unnamed.graph.nodes[1].name.clear();
  const std::vector<uint8_t> bytes = reader::write_onnx(unnamed);
  const ir::Model m = reader::read_onnx(bytes.data(), bytes.size());
  const Json j = to_json(m);
  std::vector<std::string> names;
  for (const auto& n : j["nodes"].arr) names.push_back(n["name"].str);
  EXPECT_EQ(names, (std::vector<std::string>{"Relu_0", "Neg_1", "Abs_2"}));
}

// The calibrated digits fixture (scripts/fixtures; skipped when absent): valid JSON, every
// calibration node described, every tensor with a known shape.
TEST(GraphJson, CalibratedDigitsFixture) {
  const std::string path = std::string(PTQ_SOURCE_DIR) + "/.cache/fixtures/calibrated/digits_cnn_calibrated_model.onnx";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << path << " not built (scripts/fixtures)";
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const ir::Model m = reader::read_onnx(bytes.data(), bytes.size());
  const Json j = to_json(m);
  ASSERT_EQ(j["nodes"].arr.size(), m.graph.nodes.size());
  int calibrations = 0;
  for (const auto& n : j["nodes"].arr) {
    if (n["op_type"].str != "HzCalibration") {
      EXPECT_EQ(n["calibration"].kind, Json::Null) << n["name"].str;
      continue;
    }
    ++calibrations;
    const Json& c = n["calibration"];
    ASSERT_EQ(c.kind, Json::Object) << n["name"].str;
    EXPECT_TRUE(c["kind"].str == "feature" || c["kind"].str == "weight") << n["name"].str;
    EXPECT_FALSE(c["thresholds"].arr.empty()) << n["name"].str;
    EXPECT_EQ(c["scales"].arr.size(), c["thresholds"].arr.size()) << n["name"].str;
    EXPECT_FALSE(c["consumers"].arr.empty()) << n["name"].str;
    EXPECT_EQ(c["tensor"].str, n["inputs"][0].str);
  }
  EXPECT_GT(calibrations, 0);
  for (const auto& [name, v] : j["values"].obj) {
    ASSERT_EQ(v["dims"].kind, Json::Array) << name;
    for (const auto& d : v["dims"].arr) EXPECT_GE(d.num, 0) << name;
    EXPECT_EQ(v["dtype"].kind, Json::String) << name;
  }
}
