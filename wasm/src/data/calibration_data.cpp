#include "data/calibration_data.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "io/npy.h"

namespace ptq::data {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A declared input shape with symbolic dims by name ("[1, 3, H, W]") and unknown ones as "?".
std::string declared_shape_str(const ir::ValueInfo& info) {
  std::string out = "[";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const std::string param = i < info.dim_params.size() ? info.dim_params[i] : "";
    out += (i ? ", " : "") + (info.dims[i] >= 0 ? std::to_string(info.dims[i]) : param.empty() ? "?" : param);
  }
  return out + "]";
}

template <class T, class Finite>
int64_t first_non_finite(const Tensor& t, Finite finite) {
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!finite(p[i])) return i;
  return -1;
}

// Index of the first NaN/Inf element, or -1 (also for non-float dtypes).
int64_t find_non_finite(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Float: return first_non_finite<float>(t, [](float v) { return std::isfinite(v); });
    case DType::Double: return first_non_finite<double>(t, [](double v) { return std::isfinite(v); });
    case DType::Float16: return first_non_finite<uint16_t>(t, [](uint16_t v) { return (v & 0x7c00u) != 0x7c00u; });
    case DType::BFloat16: return first_non_finite<uint16_t>(t, [](uint16_t v) { return (v & 0x7f80u) != 0x7f80u; });
    default: return -1;
  }
}

void check_sample(const ir::ValueInfo& info, const Tensor& t, const std::string& path) {
  if (info.dtype != DType::Undefined && t.dtype() != info.dtype)
    fail("Unexpected data type for input: " + info.name + " , Expected: " + horizon_dtype_name(info.dtype) +
         ", Actual: " + horizon_dtype_name(t.dtype()) + " . (in " + path + ")");
  if (info.has_shape) {
    bool match = info.dims.size() == t.rank();
    for (size_t d = 0; match && d < t.rank(); ++d) match = info.dims[d] < 0 || info.dims[d] == t.dim(d);
    if (!match)
      fail(path + ": shape " + shape_str(t.shape()) + " does not match model input '" + info.name + "' of shape " +
           declared_shape_str(info) + (info.dims.size() != t.rank() ? " (different rank)" : ""));
  }
  if (const int64_t at = find_non_finite(t); at >= 0)
    fail(path + ": calibration sample contains NaN or Inf (first at flat index " + std::to_string(at) + ")");
}

}  // namespace

CalibrationData CalibrationData::from_files(const ir::Graph& graph, const std::vector<std::string>& paths,
                                            FileReader read) {
  if (paths.empty()) fail("There is no calibration_data.");
  // std::map keeps folders and (below) file names in byte order, i.e. Python's sorted() on str.
  std::map<std::string, std::map<std::string, std::string>> tree;
  for (const std::string& path : paths) {
    const size_t slash = path.find('/');
    if (slash == std::string::npos) fail(path + " is not a directory.");
    const std::string folder = path.substr(0, slash), name = path.substr(slash + 1);
    auto& entries = tree[folder];
    if (name.empty()) continue;  // a bare "<folder>/" entry: an (empty) directory
    if (const size_t sub = name.find('/'); sub != std::string::npos)
      fail(path.substr(0, slash + 1 + sub) + " is a directory; calibration folders must hold only .npy files.");
    if (!entries.emplace(name, path).second) fail(path + " is listed twice.");
  }

  CalibrationData out;
  std::vector<std::string> input_names;
  for (int id : graph.inputs) {
    const ir::Value& v = graph.value(id);
    // .npy files hold tensors: a model that takes a sequence or an optional cannot be fed.
    if (v.info.kind != ValueKind::Dense)
      fail("Model input '" + v.name + "' is a " + value_kind_name(v.info.kind) +
           ", not a tensor: calibration data (.npy files) can only feed tensor inputs, so this model cannot be run.");
    input_names.push_back(v.name);
    out.inputs_.push_back(v.info);
    out.inputs_.back().name = v.name;
  }
  for (const auto& entry : tree) {
    const std::string& folder = entry.first;
    if (std::find(input_names.begin(), input_names.end(), folder) == input_names.end())
      fail("Calibration data folder '" + folder + "' does not match any input of the model (model inputs: " +
           join(input_names) + ").");
  }
  for (const std::string& name : input_names) {
    if (!tree.count(name))
      fail("No calibration data for model input '" + name + "': expected a folder named '" + name +
           "' in calibration_data (model inputs: " + join(input_names) + ").");
  }

  // Every file is read once here, input by input in sorted file order (as np.load over
  // sorted(os.listdir)), so that a file that is not a valid .npy fails the load.
  std::vector<size_t> counts;
  for (const std::string& name : input_names) {
    for (const auto& [file, path] : tree[name])
      read(path, [&path = path](const uint8_t* data, size_t size) { io::read_npy(data, size, path); });
    counts.push_back(tree[name].size());
  }

  // Sample counts: the first non-zero count is the reference, like the original's Dataset.
  size_t count = 0;
  for (size_t c : counts)
    if (count == 0) count = c;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != count)
      fail("Input " + input_names[i] + " received wrong num of data\nPrevious num of sample: " + std::to_string(count) +
           ", Input " + input_names[i] + "'s num of sample: " + std::to_string(counts[i]));
  }

  out.read_ = std::move(read);
  out.paths_.assign(count, std::vector<std::string>(input_names.size()));
  out.sample_files_.assign(count, "");
  for (size_t i = 0; i < input_names.size(); ++i) {
    size_t k = 0;
    for (const auto& [file, path] : tree[input_names[i]]) {
      out.paths_[k][i] = path;
      if (i == 0) out.sample_names_.push_back(file);
      out.sample_files_[k] += (i ? ", " : "") + path;
      ++k;
    }
  }
  // The checks against the model, in the order the original loads the samples.
  for (size_t i = 0; i < input_names.size(); ++i)
    for (size_t k = 0; k < count; ++k) out.decode(k, i);
  return out;
}

CalibrationData CalibrationData::from_files(const ir::Graph& graph, const std::vector<FileEntry>& files) {
  auto bytes = std::make_shared<std::map<std::string, std::vector<uint8_t>>>();
  std::vector<std::string> paths;
  for (const FileEntry& f : files) {
    paths.push_back(f.path);
    (*bytes)[f.path].assign(f.data, f.data + f.size);
  }
  return from_files(graph, paths, [bytes](const std::string& path, const std::function<void(const uint8_t*, size_t)>& use) {
    const std::vector<uint8_t>& b = bytes->at(path);
    use(b.data(), b.size());
  });
}

Tensor CalibrationData::decode(size_t k, size_t input) const {
  const std::string& path = paths_[k][input];
  Tensor t;
  read_(path, [&](const uint8_t* data, size_t size) { t = io::read_npy(data, size, path); });
  check_sample(inputs_[input], t, path);
  return t;
}

std::vector<Tensor> CalibrationData::sample(size_t k) const {
  check(k < paths_.size(), "calibration sample " + std::to_string(k) + " out of range");
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < paths_[k].size(); ++i) inputs.push_back(decode(k, i));
  return inputs;
}

std::vector<std::vector<Tensor>> CalibrationData::all_samples() const {
  std::vector<std::vector<Tensor>> all;
  for (size_t k = 0; k < sample_count(); ++k) all.push_back(sample(k));
  return all;
}

std::string CalibrationData::sample_files(size_t k) const {
  check(k < sample_files_.size(), "calibration sample " + std::to_string(k) + " out of range");
  return sample_files_[k];
}

std::vector<size_t> CalibrationData::select(size_t data_num, SampleSelection mode) const {
  const size_t total = sample_count();
  // All ignores data_num: it is the mode for functions that always use every sample.
  if (mode != SampleSelection::All && data_num > total)
    fail("There are only " + std::to_string(total) + " data, but data_num is set to " + std::to_string(data_num) + "!");
  const size_t n = (data_num == 0 || mode == SampleSelection::All) ? total : data_num;
  std::vector<size_t> indices(n);
  // The original keeps data[-n:], the *last* n samples in sorted file order (§2.3).
  std::iota(indices.begin(), indices.end(), mode == SampleSelection::Last ? total - n : 0);
  return indices;
}

}  // namespace ptq::data
