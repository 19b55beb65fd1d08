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

// An external-data location names a file below the model's folder (the ONNX convention): a relative
// path (no root, drive letter or backslash) without '..' components, so a model cannot make a reader
// open files elsewhere. Throws FormatError naming `label` otherwise.
void check_external_location(const std::string& location, const std::string& label);

// A file the model's external-data tensors name: its `location` and the bytes they declare in it (the
// largest `offset` + `length`; 0 when no tensor declares a length).
struct ExternalFile {
  std::string location;
  uint64_t declared_bytes = 0;
};

// Whether the bytes start with a field of a ModelProto (its number and wire type: ONNX writers put
// ir_version first). Bytes that do not, and whose protobuf breaks, are some other file (an image, a
// text, a numpy array): readers say "not an ONNX model" instead of how it fails to parse, and keep the
// parse error for a damaged or truncated model.
bool starts_like_model_proto(const uint8_t* data, size_t size);

// The distinct files of the model's external-data tensors (initializers, sparse initializers,
// Constant and subgraph tensors), in order of first use, each location checked, without reading any
// tensor's data. Throws FormatError "not an ONNX model (…)" for bytes that are no ModelProto, "not a
// valid ONNX model (damaged or truncated): …" for one whose protobuf breaks later.
std::vector<ExternalFile> external_data_files(const uint8_t* data, size_t size);
// Their declared bytes together (saturating): what loading the model will copy into memory besides
// its file, known before any side file is read.
uint64_t external_data_bytes(const std::vector<ExternalFile>& files);

// Which of `paths` (relative to the model's folder, or only base names) a location means: the path equal
// to it, else the only one with its base name (files dropped on a page without their folders); nullopt
// when there is none or the base name is ambiguous.
std::optional<size_t> find_external_file(const std::vector<std::string>& paths, const std::string& location);

}  // namespace ptq::reader
