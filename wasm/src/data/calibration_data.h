#pragma once
// The calibration_data/ folder of §2: one sub-folder per graph input, one .npy per sample,
// loaded in lexicographic file-name order; all inputs must have the same sample count; dtype (exact)
// and shape (static dims) checked against the model's declared inputs with the original's messages.
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

enum class SampleSelection { Last, First, All };  // the original keeps the *last* N (§2.3)

class CalibrationData {
 public:
  // Builds the data set from the files of a calibration_data folder. Throws ptq::Error with the
  // §10.1 messages ("<path> is not a directory.", "Input <name> received wrong num of data
  // ...", "Unexpected data type for input: ...") and also when a folder does not match a graph input.
  static CalibrationData from_files(const ir::Graph& graph, const std::vector<FileEntry>& files);

  size_t sample_count() const { return samples_.size(); }
  // samples()[k][i] = tensor of graph input i (graph.inputs order) for sample k.
  const std::vector<std::vector<Tensor>>& samples() const { return samples_; }
  const std::vector<std::string>& sample_names() const { return sample_names_; }  // file names, sorted
  // The files of sample k as given ("<input>/<file>", one per graph input, comma-separated): how
  // errors about a sample name it.
  std::string sample_files(size_t k) const;

  // The sample indices used for `data_num` (0 = all). Throws "There are only T data, but data_num is
  // set to N!" when N exceeds the sample count.
  std::vector<size_t> select(size_t data_num, SampleSelection mode = SampleSelection::Last) const;

 private:
  std::vector<std::vector<Tensor>> samples_;
  std::vector<std::string> sample_names_;
  std::vector<std::string> sample_files_;
};

}  // namespace ptq::data
