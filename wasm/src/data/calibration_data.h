#pragma once
// The calibration_data/ folder of §2: one sub-folder per graph input, one .npy per sample,
// loaded in lexicographic file-name order; all inputs must have the same sample count; dtype (exact)
// and shape (static dims) checked against the model's declared inputs with the original's messages.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"

namespace ptq::data {

// A file as handed over by the caller (browser File, Node fs, native fs): a path relative to the
// calibration_data root ("<input_name>/<file>") and its bytes (views; caller keeps them alive).
struct FileEntry {
  std::string path;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Hands the bytes of the file at `path` ("<input>/<file>") to `use`; they need to live only during
// that call. How a data set reads its files whenever a sample is decoded (a folder on disk, browser
// File objects, bytes in memory).
using FileReader = std::function<void(const std::string& path, const std::function<void(const uint8_t*, size_t)>& use)>;

enum class SampleSelection { Last, First, All };  // the original keeps the *last* N (§2.3)

// Samples are streamed: the data set keeps the file paths and decodes a sample's files when it is
// asked for it, so memory holds only the samples in use, not the folder (behaviour.md §2.5).
class CalibrationData {
 public:
  // Builds the data set from the files of a calibration_data folder, reading each once through `read`
  // to check it. Throws ptq::Error with the §10.1 messages ("<path> is not a directory.", "Input
  // <name> received wrong num of data ...", "Unexpected data type for input: ...") and also when a
  // folder does not match a graph input. `read` is kept, and reads the files again as samples are used.
  static CalibrationData from_files(const ir::Graph& graph, const std::vector<std::string>& paths, FileReader read);
  // The same from files in memory (views, needed only during the call): the data set keeps a copy of
  // their bytes.
  static CalibrationData from_files(const ir::Graph& graph, const std::vector<FileEntry>& files);

  size_t sample_count() const { return sample_names_.size(); }
  // The tensors of sample k, one per graph input (graph.inputs order), decoded from its files on
  // every call (nothing of a sample is kept once its tensors are released). A file that no longer
  // decodes to a tensor the model accepts is an error naming it.
  std::vector<Tensor> sample(size_t k) const;
  // Every sample decoded at once (for the calibration tool, which passes over all of them repeatedly).
  std::vector<std::vector<Tensor>> all_samples() const;
  const std::vector<std::string>& sample_names() const { return sample_names_; }  // file names, sorted
  // The files of sample k as given ("<input>/<file>", one per graph input, comma-separated): how
  // errors about a sample name it.
  std::string sample_files(size_t k) const;

  // The sample indices used for `data_num` (0 = all). Throws "There are only T data, but data_num is
  // set to N!" when N exceeds the sample count.
  std::vector<size_t> select(size_t data_num, SampleSelection mode = SampleSelection::Last) const;

 private:
  Tensor decode(size_t k, size_t input) const;

  std::vector<ir::ValueInfo> inputs_;            // the graph's inputs, what every file is checked against
  std::vector<std::vector<std::string>> paths_;  // paths_[k][i]: the file of input i for sample k
  FileReader read_;
  std::vector<std::string> sample_names_;
  std::vector<std::string> sample_files_;
};

}  // namespace ptq::data
