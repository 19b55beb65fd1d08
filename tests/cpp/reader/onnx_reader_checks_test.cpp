// What the reader rejects or warns about (docs/compatibility.md, "What is rejected"): impossible
// versions, versions newer than it knows, negative input dimensions, graph outputs that name no
// tensor, external-data offsets that are not byte counts or lie outside the file, and shapes whose
// byte size wraps in 32 bits.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "core/error.h"
#include "io/pb_writer.h"
#include "reader/onnx.h"

namespace ptq {
namespace {

using pb::Writer;

struct ModelSpec {
  int64_t ir_version = 8;
  int64_t opset = 17;
  std::vector<int64_t> input_dims = {1, 2};
  std::string output = "y";
  std::function<void(Writer&)> extra_graph;  // more GraphProto fields
};

// x -> Relu -> y, ModelProto written field by field (field numbers from onnx.proto).
std::vector<uint8_t> model_bytes(const ModelSpec& m) {
  Writer w;
  w.int64(1, m.ir_version);
  w.message(8, [&](Writer& o) { o.int64(2, m.opset); });
  w.message(7, [&](Writer& g) {
    g.message(1, [&](Writer& n) {
      n.string(1, "x");
      n.string(2, "y");
      n.string(3, "relu");
      n.string(4, "Relu");
    });
    g.string(2, "graph");
    if (m.extra_graph) m.extra_graph(g);
    g.message(11, [&](Writer& v) {
      v.string(1, "x");
      v.message(2, [&](Writer& t) {
        t.message(1, [&](Writer& tt) {
          tt.int64(1, 1);
          tt.message(2, [&](Writer& shape) {
            for (int64_t d : m.input_dims) shape.message(1, [&](Writer& dim) { dim.int64(1, d); });
          });
        });
      });
    });
    g.message(12, [&](Writer& v) { v.string(1, m.output); });
  });
  return w.take();
}

ir::Model read(const std::vector<uint8_t>& bytes, const reader::ReadOptions& options = {}) {
  return reader::read_onnx(bytes.data(), bytes.size(), options);
}

std::string error_of(const std::vector<uint8_t>& bytes, const reader::ReadOptions& options = {}) {
  try {
    read(bytes, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(OnnxReaderChecks, AKnownModelLoadsWithoutWarnings) {
  const ir::Model m = read(model_bytes({}));
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.graph.value(m.graph.inputs[0]).info.dims, (Shape{1, 2}));
}

TEST(OnnxReaderChecks, VersionsNewerThanKnownAreWarnings) {
  ModelSpec spec;
  spec.ir_version = 99;
  spec.opset = 99;
  reader::ReadOptions options;
  options.file_name = "future.onnx";
  const ir::Model m = read(model_bytes(spec), options);
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_TRUE(contains(m.warnings[0], "'future.onnx' declares ir_version 99, newer than the newest this reader knows (11)"))
      << m.warnings[0];
  EXPECT_TRUE(contains(m.warnings[1], "imports opset 99 of domain 'ai.onnx', newer than the newest this reader knows (23)"))
      << m.warnings[1];
}

TEST(OnnxReaderChecks, ImpossibleVersionsAreErrors) {
  ModelSpec spec;
  spec.opset = int64_t{1} << 32;  // was truncated to opset 0 in the int node opset
  EXPECT_TRUE(contains(error_of(model_bytes(spec)), "imports opset 4294967296 of domain 'ai.onnx', which is not a version"));
  spec = {};
  spec.ir_version = -3;
  EXPECT_TRUE(contains(error_of(model_bytes(spec)), "declares ir_version -3, which is not a version"));
}

TEST(OnnxReaderChecks, NegativeInputDimensionIsUnknownWithAWarning) {
  ModelSpec spec;
  spec.input_dims = {1, -5};
  const ir::Model m = read(model_bytes(spec));
  EXPECT_EQ(m.graph.value(m.graph.inputs[0]).info.dims, (Shape{1, -1}));
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_TRUE(contains(m.warnings[0], "graph input 'x' declares dimension 1 as -5")) << m.warnings[0];
}

TEST(OnnxReaderChecks, GraphOutputNamingNoTensorIsAnError) {
  ModelSpec spec;
  spec.output = "nothing";
  EXPECT_TRUE(contains(error_of(model_bytes(spec)),
                       "graph output 'nothing' names a tensor that no node, graph input or initializer provides"));
}

// An initializer "w" (float32 [2]) stored in external data at `offset` of the file `location`.
std::vector<uint8_t> external_model(const std::string& offset, const std::string& location = "w.bin") {
  ModelSpec spec;
  spec.extra_graph = [offset, location](Writer& g) {
    g.message(5, [&](Writer& t) {
      t.int64(1, 2);
      t.int64(2, 1);
      t.string(8, "w");
      t.message(13, [&](Writer& e) { e.string(1, "location"); e.string(2, location); });
      t.message(13, [&](Writer& e) { e.string(1, "offset"); e.string(2, offset); });
      t.int64(14, 1);
    });
  };
  return model_bytes(spec);
}

TEST(OnnxReaderChecks, ExternalDataOffsetsAreCheckedIn64Bits) {
  const std::vector<uint8_t> file(16, 0);
  reader::ReadOptions options;
  options.external_files["w.bin"] = pb::Bytes{file.data(), file.size()};
  EXPECT_EQ(read(external_model("8"), options).graph.find_value("w") >= 0, true);
  // 2^32 + 8: wrapped to 8 in a 32-bit size_t and read bytes 8..16 of the file.
  EXPECT_TRUE(contains(error_of(external_model("4294967304"), options), "external range [4294967304, +")) << error_of(external_model("4294967304"), options);
  // Not a number: std::stoull threw std::invalid_argument (an internal error) before.
  EXPECT_TRUE(contains(error_of(external_model("eight"), options), "external data offset 'eight' is not a byte count"));
  EXPECT_TRUE(contains(error_of(external_model("-8"), options), "external data offset '-8' is not a byte count"));
}

// Files not given up front are asked for by location (the CLI reads them beside the model, the page
// among the dropped files); a location that leaves the model's folder is refused before any lookup.
TEST(OnnxReaderChecks, ExternalFilesAreOpenedByRelativeLocation) {
  const std::vector<float> w = {1.5f, -2.0f};
  std::vector<std::string> asked;
  reader::ReadOptions options;
  options.open_external = [&](const std::string& location) -> std::optional<pb::Bytes> {
    asked.push_back(location);
    if (location != "weights/w.bin") return std::nullopt;
    return pb::Bytes{reinterpret_cast<const uint8_t*>(w.data()), w.size() * sizeof(float)};
  };
  const ir::Model model = read(external_model("0", "weights/w.bin"), options);
  const ir::Graph& g = model.graph;
  const Tensor* t = g.constant(g.find_value("w"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->data<float>()[1], -2.0f);
  EXPECT_TRUE(contains(error_of(external_model("0", "other.bin"), options),
                       "its data is stored in the external file 'other.bin', which was not provided"));
  EXPECT_EQ(asked, (std::vector<std::string>{"weights/w.bin", "other.bin"}));
  for (const char* bad : {"../w.bin", "a/../../w.bin", "/etc/passwd", "..", "C:w.bin", "a\\w.bin", ""}) {
    EXPECT_TRUE(contains(error_of(external_model("0", bad), options), "is not a relative path below the model's folder"))
        << bad << ": " << error_of(external_model("0", bad), options);
  }
  EXPECT_EQ(asked.size(), 2u);
}

TEST(OnnxReaderChecks, RawDataMustBackTheShapeInSixtyFourBits) {
  // Shape [2^30 + 1] float32 = 2^32 + 4 bytes: as size_t on wasm32 that is 4, which 4 raw bytes matched.
  ModelSpec spec;
  spec.extra_graph = [](Writer& g) {
    g.message(5, [&](Writer& t) {
      t.int64(1, (int64_t{1} << 30) + 1);
      t.int64(2, 1);
      t.string(8, "w");
      const float v = 1.0f;
      t.bytes(9, &v, sizeof v);
    });
  };
  EXPECT_TRUE(contains(error_of(model_bytes(spec)), "raw_data holds 4 bytes but shape [1073741825] of float32 needs 4294967300"));
}

}  // namespace
}  // namespace ptq
