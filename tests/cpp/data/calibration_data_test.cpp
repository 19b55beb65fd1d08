#include "data/calibration_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "io/npy.h"

using namespace ptq;
using data::CalibrationData;
using data::SampleSelection;

namespace {

ir::ValueInfo input_info(const std::string& name, DType dtype, std::vector<int64_t> dims,
                         std::vector<std::string> params = {}) {
  ir::ValueInfo info;
  info.name = name;
  info.dtype = dtype;
  info.has_shape = true;
  params.resize(dims.size());
  info.dims = std::move(dims);
  info.dim_params = std::move(params);
  return info;
}

// A graph with only inputs (plus one initializer, which must not count as an input).
ir::Graph make_graph(const std::vector<ir::ValueInfo>& inputs) {
  ir::Graph g;
  for (const auto& info : inputs) {
    ir::Value v;
    v.name = info.name;
    v.info = info;
    v.is_graph_input = true;
    g.inputs.push_back(static_cast<int>(g.values.size()));
    g.values.push_back(v);
  }
  ir::Value w;
  w.name = "weight";
  w.initializer = Tensor::from_floats({1}, {1.0f});
  g.values.push_back(w);
  ir::finalize_graph(g);
  return g;
}

// Owns the npy bytes the FileEntry views point into.
struct Folder {
  std::deque<std::vector<uint8_t>> bytes;
  std::vector<data::FileEntry> files;

  void add(const std::string& path, const Tensor& t) { add_raw(path, io::write_npy(t)); }
  void add_raw(const std::string& path, std::vector<uint8_t> b) {
    bytes.push_back(std::move(b));
    files.push_back({path, bytes.back().data(), bytes.back().size()});
  }
};

Tensor image(float fill) {
  Tensor t(DType::Float, {1, 3, 2, 2});
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = fill;
  return t;
}

std::string error_of(const ir::Graph& g, const Folder& f) {
  try {
    CalibrationData::from_files(g, f.files);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> names_of(const CalibrationData& d, const std::vector<size_t>& indices) {
  std::vector<std::string> out;
  for (size_t i : indices) out.push_back(d.sample_names()[i]);
  return out;
}

const ir::Graph& single_input_graph() {
  static const ir::Graph g = make_graph({input_info("images", DType::Float, {1, 3, 2, 2})});
  return g;
}

}  // namespace

TEST(CalibrationData, LoadsInLexicographicOrder) {
  Folder f;
  for (int n : {2, 10, 0, 1}) f.add("images/" + std::to_string(n) + ".npy", image(static_cast<float>(n)));
  const auto d = CalibrationData::from_files(single_input_graph(), f.files);
  ASSERT_EQ(d.sample_count(), 4u);
  EXPECT_EQ(d.sample_names(), (std::vector<std::string>{"0.npy", "1.npy", "10.npy", "2.npy"}));
  std::vector<float> firsts;
  for (const auto& s : d.all_samples()) firsts.push_back(s[0].data<float>()[0]);
  EXPECT_EQ(firsts, (std::vector<float>{0, 1, 10, 2}));
}

TEST(CalibrationData, SelectsLastFirstOrAll) {
  Folder f;
  for (int n = 0; n < 50; ++n) f.add("images/" + std::to_string(n) + ".npy", image(static_cast<float>(n)));
  const auto d = CalibrationData::from_files(single_input_graph(), f.files);
  ASSERT_EQ(d.sample_count(), 50u);
  // Sorted: 0, 1, 10..19, 2, 20..29, ..., 49, 5, 6, 7, 8, 9 — so the last one is "9.npy" (§2.3).
  EXPECT_EQ(names_of(d, d.select(1)), (std::vector<std::string>{"9.npy"}));
  EXPECT_EQ(d.sample(d.select(1)[0])[0].data<float>()[0], 9.0f);
  EXPECT_EQ(names_of(d, d.select(3)), (std::vector<std::string>{"7.npy", "8.npy", "9.npy"}));
  EXPECT_EQ(names_of(d, d.select(2, SampleSelection::First)), (std::vector<std::string>{"0.npy", "1.npy"}));
  EXPECT_EQ(d.select(0).size(), 50u);
  EXPECT_EQ(d.select(0, SampleSelection::First).size(), 50u);
  EXPECT_EQ(d.select(7, SampleSelection::All).size(), 50u);
  EXPECT_EQ(d.select(50).front(), 0u);
  try {
    d.select(51);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "There are only 50 data, but data_num is set to 51!");
  }
}

TEST(CalibrationData, MultipleInputsInGraphOrder) {
  const ir::Graph g = make_graph({input_info("images", DType::Float, {1, 3, -1, -1}, {"", "", "H", "W"}),
                                  input_info("meta", DType::Int64, {1, 2})});
  Folder f;
  for (int n = 0; n < 3; ++n) f.add("meta/" + std::to_string(n) + ".npy", Tensor::from_int64s({1, 2}, {n, -n}));
  for (int n = 0; n < 3; ++n) {
    Tensor t(DType::Float, {1, 3, 4 + n, 5});  // symbolic dims accept any size
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = static_cast<float>(n);
    f.add("images/" + std::to_string(n) + ".npy", t);
  }
  const auto d = CalibrationData::from_files(g, f.files);
  ASSERT_EQ(d.sample_count(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(d.sample(k).size(), 2u);
    EXPECT_EQ(d.sample(k)[0].shape(), (Shape{1, 3, 4 + static_cast<int64_t>(k), 5}));
    EXPECT_EQ(d.sample(k)[0].data<float>()[0], static_cast<float>(k));
    EXPECT_EQ(d.sample(k)[1].data<int64_t>()[1], -static_cast<int64_t>(k));
  }
}

TEST(CalibrationData, MismatchedSampleCounts) {
  const ir::Graph g = make_graph({input_info("images", DType::Float, {1, 3, 2, 2}), input_info("meta", DType::Int64, {1, 2})});
  Folder f;
  for (int n = 0; n < 3; ++n) f.add("images/" + std::to_string(n) + ".npy", image(0));
  for (int n = 0; n < 2; ++n) f.add("meta/" + std::to_string(n) + ".npy", Tensor::from_int64s({1, 2}, {0, 0}));
  EXPECT_EQ(error_of(g, f), "Input meta received wrong num of data\nPrevious num of sample: 3, Input meta's num of sample: 2");
  // An empty folder ("meta/" listed alone) is a count mismatch too, not a crash.
  Folder e;
  e.add("images/0.npy", image(0));
  e.files.push_back({"meta/", nullptr, 0});
  EXPECT_EQ(error_of(g, e), "Input meta received wrong num of data\nPrevious num of sample: 1, Input meta's num of sample: 0");
}

TEST(CalibrationData, WrongDtypeUsesOriginalMessage) {
  Folder f;
  Tensor t(DType::Double, {1, 3, 2, 2});
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<double>()[i] = 0.5;
  f.add("images/0.npy", t);
  EXPECT_EQ(error_of(single_input_graph(), f), "Unexpected data type for input: images , Expected: FLOAT32, Actual: FLOAT64 . (in images/0.npy)");
  const ir::Graph g = make_graph({input_info("ids", DType::Int64, {2})});
  Folder i;
  i.add("ids/0.npy", Tensor(DType::Int32, {2}));
  EXPECT_EQ(error_of(g, i), "Unexpected data type for input: ids , Expected: INT64, Actual: INT32 . (in ids/0.npy)");
}

TEST(CalibrationData, SampleFilesNameEveryInput) {
  const ir::Graph g = make_graph({input_info("a", DType::Float, {2}), input_info("b", DType::Float, {2})});
  Folder f;
  for (const char* n : {"a/x0.npy", "a/x1.npy", "b/y0.npy", "b/y1.npy"}) f.add(n, Tensor(DType::Float, {2}));
  const CalibrationData d = CalibrationData::from_files(g, f.files);
  EXPECT_EQ(d.sample_files(0), "a/x0.npy, b/y0.npy");
  EXPECT_EQ(d.sample_files(1), "a/x1.npy, b/y1.npy");
  EXPECT_THROW(d.sample_files(2), Error);
}

TEST(CalibrationData, FolderLayoutErrors) {
  Folder root_file;
  root_file.add("images/0.npy", image(0));
  root_file.add("README.txt", image(0));
  EXPECT_EQ(error_of(single_input_graph(), root_file), "README.txt is not a directory.");

  Folder unknown;
  unknown.add("images/0.npy", image(0));
  unknown.add("image/0.npy", image(0));
  EXPECT_EQ(error_of(single_input_graph(), unknown),
            "Calibration data folder 'image' does not match any input of the model (model inputs: images).");

  const ir::Graph two = make_graph({input_info("a", DType::Float, {1}), input_info("b", DType::Float, {1})});
  Folder missing;
  missing.add("a/0.npy", Tensor::from_floats({1}, {1}));
  const std::string msg = error_of(two, missing);
  EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model inputs: a, b"), std::string::npos) << msg;

  Folder nested;
  nested.add("images/sub/0.npy", image(0));
  EXPECT_NE(error_of(single_input_graph(), nested).find("images/sub is a directory"), std::string::npos);

  EXPECT_EQ(error_of(single_input_graph(), Folder{}), "There is no calibration_data.");
}

TEST(CalibrationData, ShapeChecks) {
  Folder rank;
  rank.add("images/0.npy", Tensor::zeros(DType::Float, {3, 2, 2}));
  const std::string r = error_of(single_input_graph(), rank);
  EXPECT_NE(r.find("images/0.npy"), std::string::npos) << r;
  EXPECT_NE(r.find("[3, 2, 2]"), std::string::npos) << r;
  EXPECT_NE(r.find("[1, 3, 2, 2]"), std::string::npos) << r;

  Folder dim;
  dim.add("images/0.npy", image(0));
  dim.add("images/1.npy", Tensor::zeros(DType::Float, {1, 3, 2, 3}));
  const std::string d = error_of(single_input_graph(), dim);
  EXPECT_NE(d.find("images/1.npy"), std::string::npos) << d;
  EXPECT_NE(d.find("[1, 3, 2, 3]"), std::string::npos) << d;

  // Symbolic dims print by name; an input declared without a shape accepts anything.
  const ir::Graph sym = make_graph({input_info("x", DType::Float, {-1, 3}, {"N", ""})});
  Folder s;
  s.add("x/0.npy", Tensor::zeros(DType::Float, {5, 4}));
  EXPECT_NE(error_of(sym, s).find("[N, 3]"), std::string::npos) << error_of(sym, s);
  ir::ValueInfo free = input_info("x", DType::Float, {});
  free.has_shape = false;
  Folder any;
  any.add("x/0.npy", Tensor::zeros(DType::Float, {5, 4, 1}));
  EXPECT_EQ(CalibrationData::from_files(make_graph({free}), any.files).sample_count(), 1u);
}

TEST(CalibrationData, RejectsNonFiniteSamples) {
  Folder nan;
  nan.add("images/0.npy", image(0));
  Tensor bad = image(1);
  bad.mutable_data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  nan.add("images/1.npy", bad);
  const std::string m = error_of(single_input_graph(), nan);
  EXPECT_NE(m.find("images/1.npy"), std::string::npos) << m;
  EXPECT_NE(m.find("NaN or Inf"), std::string::npos) << m;

  const ir::Graph g = make_graph({input_info("h", DType::Float16, {2})});
  Folder inf;
  Tensor h(DType::Float16, {2});
  h.mutable_data<uint16_t>()[0] = float_to_half(1.0f);
  h.mutable_data<uint16_t>()[1] = 0xfc00;  // -inf
  inf.add("h/0.npy", h);
  EXPECT_NE(error_of(g, inf).find("h/0.npy"), std::string::npos);
}

TEST(CalibrationData, CorruptNpyNamesTheFile) {
  Folder f;
  f.add("images/0.npy", image(0));
  auto truncated = io::write_npy(image(1));
  truncated.resize(truncated.size() - 3);
  f.add_raw("images/1.npy", truncated);
  try {
    CalibrationData::from_files(single_input_graph(), f.files);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("images/1.npy"), std::string::npos) << e.what();
  }
}

// Samples are streamed (§2.5): the folder is read once to check it, then each sample's files again
// whenever it is used; nothing of a sample is kept (a changed file is checked again, an unreadable
// one is an error naming it).
TEST(CalibrationData, ReadsASampleEachTimeItIsUsed) {
  Folder f;
  for (int n = 0; n < 3; ++n) f.add("images/" + std::to_string(n) + ".npy", image(static_cast<float>(n)));
  std::map<std::string, std::vector<uint8_t>> disk;
  for (const auto& e : f.files) disk[e.path].assign(e.data, e.data + e.size);
  std::map<std::string, int> reads;
  const data::FileReader read = [&](const std::string& path, const std::function<void(const uint8_t*, size_t)>& use) {
    ++reads[path];
    auto it = disk.find(path);
    if (it == disk.end()) fail(path + ": gone");
    use(it->second.data(), it->second.size());
  };
  std::vector<std::string> paths;
  for (const auto& e : f.files) paths.push_back(e.path);
  const CalibrationData d = CalibrationData::from_files(single_input_graph(), paths, read);
  ASSERT_EQ(d.sample_count(), 3u);
  const int after_load = reads["images/1.npy"];
  EXPECT_GE(after_load, 1);
  EXPECT_EQ(d.sample(1)[0].data<float>()[0], 1.0f);
  EXPECT_EQ(d.sample(1)[0].data<float>()[0], 1.0f);
  EXPECT_EQ(reads["images/1.npy"], after_load + 2);
  EXPECT_EQ(reads["images/0.npy"], after_load);

  disk["images/1.npy"] = io::write_npy(image(7.0f));
  EXPECT_EQ(d.sample(1)[0].data<float>()[0], 7.0f);
  disk["images/1.npy"] = io::write_npy(Tensor(DType::Float, {1, 3, 2, 5}));
  try {
    d.sample(1);
    FAIL() << "a file of another shape was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("images/1.npy: shape [1, 3, 2, 5] does not match"), std::string::npos) << e.what();
  }
  disk.erase("images/2.npy");
  try {
    d.sample(2);
    FAIL() << "a missing file was not reported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "images/2.npy: gone");
  }
  EXPECT_EQ(d.sample(0)[0].data<float>()[0], 0.0f);
}
