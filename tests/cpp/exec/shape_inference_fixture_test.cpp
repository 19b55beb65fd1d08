// Static shape inference vs the executor's runtime shapes on the real fixture models
// (.cache/fixtures, built by scripts/; skipped when absent). One sample per model, keep_all.
// File access through POSIX I/O (not std::filesystem) so the test also runs in the wasm build (NODERAWFS).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "exec/executor.h"
#include "exec/shape_inference.h"
#include "io/npy.h"
#include "reader/onnx.h"

using namespace ptq;

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The lexicographically first .npy of <data>/<input name>/.
Tensor first_sample(const std::string& data, const std::string& input) {
  const std::string dir = data + "/" + input;
  std::vector<std::string> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) files.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no samples in " + dir);
  const auto bytes = read_file(dir + "/" + files.front());
  return io::read_npy(bytes.data(), bytes.size(), files.front()).clone();
}

struct Fixture {
  const char* name;
  const char* model;
  const char* data;
  bool heavy = false;  // 10-30 s each in a Debug+ASan build
};

const Fixture kFixtures[] = {
    {"digits_cnn", "digits/digits_cnn.onnx", "digits/calibration_data"},
    {"resnet18", "float/resnet18.onnx", "float/resnet18_data", true},
    {"mobilenet_v2", "float/mobilenet_v2.onnx", "float/mobilenet_v2_data", true},
    {"mobilenet_v3_small", "float/mobilenet_v3_small.onnx", "float/mobilenet_v3_small_data", true},
    {"shufflenet_v2_x1_0", "float/shufflenet_v2_x1_0.onnx", "float/shufflenet_v2_x1_0_data", true},
    {"yolov8n_like", "float/yolov8n_like.onnx", "float/yolov8n_like_data", true},
    {"blazeface_128", "real/blazeface_128.onnx", "real/blazeface_128_data"},
    {"ppocr_det", "real/ppocr_det.onnx", "real/ppocr_det_data", true},
    {"ppocr_cls", "real/ppocr_cls.onnx", "real/ppocr_cls_data"},
};

class ShapeInferenceFixture : public ::testing::TestWithParam<Fixture> {};

}  // namespace

TEST_P(ShapeInferenceFixture, MatchesRuntimeShapes) {
  const std::string root = std::string(PTQ_SOURCE_DIR) + "/.cache/fixtures/";
  const Fixture& f = GetParam();
  if (!exists(root + f.model)) GTEST_SKIP() << "fixture " << f.model << " not built (scripts/)";
#ifndef NDEBUG
  // Optimised builds (native release, the wasm gtest run) always check every fixture.
  if (f.heavy && !std::getenv("PTQ_SLOW_TESTS")) GTEST_SKIP() << "slow in a Debug build; set PTQ_SLOW_TESTS=1";
#endif
  const auto bytes = read_file(root + f.model);
  exec::Executor ex(reader::read_onnx(bytes.data(), bytes.size()));
  const ir::Graph& graph = ex.graph();
  std::vector<Tensor> inputs;
  for (int id : graph.inputs) inputs.push_back(first_sample(root + f.data, graph.value(id).name));
  const exec::RunRecord rec = ex.run(inputs, ex.uniform_config(false), {}, /*keep_all=*/true);

  // As declared: every inferred dim that is known must be the runtime one (symbolic ones stay -1).
  const auto declared = exec::infer_shapes(graph);
  // With the sample's concrete input shapes: everything must be known and equal.
  ir::Graph concrete = graph;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    auto& info = concrete.values[static_cast<size_t>(graph.inputs[i])].info;
    info.dims = inputs[i].shape();
    info.dim_params.assign(info.dims.size(), "");
    info.has_shape = true;
  }
  const auto exact = exec::infer_shapes(concrete);
  // Every output of every computed node (Constant outputs are initializers: exact by construction).
  int compared = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op_type == "Constant") continue;
    for (int id : node.outputs) {
      if (id < 0) continue;
      const Tensor& t = rec.values[static_cast<size_t>(id)];
      const std::string what = graph.value(id).name + " (" + node.op_type + " " + node.name + ")";
      ASSERT_TRUE(t.defined()) << what << " not kept by the keep_all run";
      const ir::ValueInfo& e = exact[static_cast<size_t>(id)];
      ASSERT_TRUE(e.has_shape) << what;
      EXPECT_EQ(e.dims, t.shape()) << what;
      EXPECT_EQ(e.dtype, t.dtype()) << what;
      const ir::ValueInfo& d = declared[static_cast<size_t>(id)];
      if (d.has_shape) {  // symbolic inputs may leave a rank unknown (shape subgraphs)
        ASSERT_EQ(d.dims.size(), t.rank()) << what;
        for (size_t k = 0; k < t.rank(); ++k)
          if (d.dims[k] >= 0) {
            EXPECT_EQ(d.dims[k], t.dim(k)) << what << " dim " << k;
          }
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
  RecordProperty("compared_tensors", compared);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ShapeInferenceFixture, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return std::string(info.param.name); });
