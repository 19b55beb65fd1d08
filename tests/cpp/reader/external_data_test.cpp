// reader/external_data: the side files a model names, found without reading tensors (in subgraphs
// and sparse tensors too), and which given file a location means.
#include "reader/external_data.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "io/pb_writer.h"

using namespace ptq;
using pb::Writer;

namespace {

// A TensorProto named `name` whose data is at `location`, `offset`, and `length` when given.
void external_tensor(Writer& t, const std::string& name, const std::string& location, const std::string& offset = "0",
                     const std::string& length = "") {
  t.int64(2, 1);
  t.string(8, name);
  const auto entry = [&](const char* key, const std::string& value) {
    t.message(13, [&](Writer& e) {
      e.string(1, key);
      e.string(2, value);
    });
  };
  entry("location", location);
  entry("offset", offset);
  if (!length.empty()) entry("length", length);
  t.int64(14, 1);
}

// main graph: initializer at a.bin, a Constant at b.bin, an If whose then-branch holds a Loop whose body
// has an initializer at c.bin and a.bin again, a sparse initializer at d.bin; an inline tensor.
// Declared: a.bin [0, +100) and [100, +28); b.bin no length; sub/c.bin [16, +4096); d.bin length "x".
std::vector<uint8_t> model_with_side_files() {
  Writer m;
  m.int64(1, 8);
  m.message(7, [](Writer& g) {
    g.message(5, [](Writer& t) { external_tensor(t, "w", "a.bin", "0", "100"); });
    g.message(5, [](Writer& t) {
      t.int64(2, 1);
      t.string(8, "inline");
    });
    g.message(1, [](Writer& n) {
      n.string(4, "Constant");
      n.message(5, [](Writer& a) {
        a.string(1, "value");
        a.message(5, [](Writer& t) { external_tensor(t, "c", "b.bin"); });
      });
    });
    g.message(1, [](Writer& n) {
      n.string(4, "If");
      n.message(5, [](Writer& a) {
        a.string(1, "then_branch");
        a.message(6, [](Writer& then_graph) {
          then_graph.message(1, [](Writer& loop) {
            loop.string(4, "Loop");
            loop.message(5, [](Writer& a2) {
              a2.string(1, "body");
              a2.message(6, [](Writer& body) {
                body.message(5, [](Writer& t) { external_tensor(t, "b1", "sub/c.bin", "16", "4096"); });
                body.message(5, [](Writer& t) { external_tensor(t, "b2", "a.bin", "100", "28"); });
              });
            });
          });
        });
      });
    });
    g.message(15, [](Writer& s) { s.message(1, [](Writer& t) { external_tensor(t, "sv", "d.bin", "0", "x"); }); });
  });
  return m.take();
}

}  // namespace

TEST(ExternalData, LocationsInEveryScopeOnceInOrderOfFirstUse) {
  const std::vector<uint8_t> bytes = model_with_side_files();
  std::vector<std::string> locations;
  for (const reader::ExternalFile& f : reader::external_data_files(bytes.data(), bytes.size()))
    locations.push_back(f.location);
  EXPECT_EQ(locations, (std::vector<std::string>{"a.bin", "b.bin", "d.bin", "sub/c.bin"}));
}

TEST(ExternalData, DeclaredBytesAreTheLargestOffsetPlusLengthPerFile) {
  const std::vector<uint8_t> bytes = model_with_side_files();
  const std::vector<reader::ExternalFile> files = reader::external_data_files(bytes.data(), bytes.size());
  std::vector<uint64_t> declared;
  for (const reader::ExternalFile& f : files) declared.push_back(f.declared_bytes);
  // a.bin: max(0 + 100, 100 + 28); b.bin, d.bin: no (readable) length; sub/c.bin: 16 + 4096.
  EXPECT_EQ(declared, (std::vector<uint64_t>{128, 0, 0, 4112}));
  EXPECT_EQ(reader::external_data_bytes(files), 4240u);
  EXPECT_EQ(reader::external_data_bytes({{"a", UINT64_MAX - 1}, {"b", 5}}), UINT64_MAX);  // saturates
}

TEST(ExternalData, ALocationOutsideTheModelsFolderIsRefusedNamingTheTensor) {
  Writer m;
  m.message(7, [](Writer& g) { g.message(5, [](Writer& t) { external_tensor(t, "stolen", "../../etc/passwd"); }); });
  const std::vector<uint8_t> bytes = m.take();
  try {
    reader::external_data_files(bytes.data(), bytes.size());
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "tensor 'stolen': external data location '../../etc/passwd' is not a relative path below the model's folder");
  }
}

TEST(ExternalData, CorruptModelIsAFormatError) {
  std::vector<uint8_t> bytes = model_with_side_files();
  bytes.resize(bytes.size() - 3);
  try {
    reader::external_data_files(bytes.data(), bytes.size());
    FAIL() << "no error";
  } catch (const FormatError& e) {
    // It starts as a ModelProto (its graph): a damaged model, said with the protobuf's reason.
    EXPECT_EQ(
        std::string(e.what()).rfind("not a valid ONNX model (damaged or truncated): corrupt protobuf in ModelProto", 0),
        0u)
        << e.what();
  }
}

TEST(ExternalData, TheBytesOfAnotherFileAreNotAnOnnxModel) {
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  const std::string text = "# Notes\n\nThe README of a model, not the model.\n";
  for (const std::string& file : {png, text}) {
    const auto* data = reinterpret_cast<const uint8_t*>(file.data());
    EXPECT_FALSE(reader::starts_like_model_proto(data, file.size()));
    try {
      reader::external_data_files(data, file.size());
      FAIL() << "no error";
    } catch (const FormatError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("not an ONNX model (corrupt protobuf in ModelProto: ", 0), 0u) << e.what();
    }
  }
  // What ONNX writers put first: ir_version (field 1, a varint), or another ModelProto field.
  Writer m;
  m.int64(1, 8);
  const std::vector<uint8_t> onnx = m.take();
  EXPECT_TRUE(reader::starts_like_model_proto(onnx.data(), onnx.size()));
  const std::vector<uint8_t> graph_first = model_with_side_files();
  EXPECT_TRUE(reader::starts_like_model_proto(graph_first.data(), graph_first.size()));
}

TEST(ExternalData, ALocationMeansTheFileAtItsPathElseTheOnlyOneWithItsBaseName) {
  const std::vector<std::string> paths = {"sub/w.bin", "w.bin", "other/x.bin", "more/y.bin", "y.bin"};
  const auto index = [&](const std::string& location) {
    const auto found = reader::find_external_file(paths, location);
    return found ? static_cast<int>(*found) : -1;
  };
  EXPECT_EQ(index("sub/w.bin"), 0);
  EXPECT_EQ(index("w.bin"), 1);
  EXPECT_EQ(index("x.bin"), 2);         // dropped without its folder
  EXPECT_EQ(index("deep/x.bin"), 2);    // the same, named from a folder the user did not keep
  EXPECT_EQ(index("other/w.bin"), -1);  // two files named w.bin, none at other/: ambiguous
  EXPECT_EQ(index("missing.bin"), -1);
}
