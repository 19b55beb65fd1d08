#pragma once
// External-data side files of an ONNX model: which files a model names, and which of the files a user
// gave is the one a location means. The tensors themselves are read by reader/onnx.cpp.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/pb_wire.h"

namespace ptq::reader {

// The distinct `location`s of the model's external-data tensors (initializers, sparse initializers,
// Constant and subgraph tensors), in order of first use, without reading any tensor's data.
std::vector<std::string> external_data_locations(const uint8_t* data, size_t size);

struct NamedFile {
  std::string path;  // relative to the model's folder ("weights/w.bin"), or only a base name
  pb::Bytes bytes;
};

// The file a location means: the one whose path equals it, else the only one with its base name (files
// dropped on a page without their folders); nullopt when there is none or the base name is ambiguous.
std::optional<pb::Bytes> find_external_file(const std::vector<NamedFile>& files, const std::string& location);

}  // namespace ptq::reader
