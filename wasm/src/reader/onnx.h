#pragma once
// ONNX ModelProto -> ir::Model, straight from the wire format.
//
// Why not libprotobuf: its generated classes copy every `raw_data` into std::string, so a model is
// held twice (file bytes + parsed copy). On a 4 GB wasm32 heap that halves the largest model we can
// open, and it adds ~120 KB to the wasm. This reader keeps float32 initializers as views into the
// caller's buffer (copying only when a tensor is misaligned or stored in typed/unpacked fields), so
// the model buffer must outlive the returned Model. libprotobuf + onnx.proto are used only as the
// native test oracle (tests/cpp/oracle).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/pb_wire.h"
#include "ir/graph.h"

namespace ptq::reader {

// External-data side files, by the `location` string the model refers to. Views; caller keeps alive.
using ExternalFiles = std::map<std::string, pb::Bytes>;

struct ReadOptions {
  ExternalFiles external_files;
  // Asked for a `location` that external_files lacks (a relative path below the model's folder,
  // checked before the call); nullopt when there is no such file. The bytes must outlive the model.
  std::function<std::optional<pb::Bytes>(const std::string& location)> open_external;
  std::string file_name = "model";  // used in error messages; "" says "the model"
};

ir::Model read_onnx(const uint8_t* data, size_t size, const ReadOptions& options = {});

// Parses one TensorProto (also used by the conformance runner for test_data_set_*/*.pb).
Tensor read_tensor_proto(const uint8_t* data, size_t size, const ReadOptions& options = {},
                         std::string* name_out = nullptr);

// Parses a value of `kind`: a TensorProto (Dense), a SequenceProto of tensors (Sequence) or an
// OptionalProto holding nothing, a tensor or such a sequence (Optional), as ONNX's test data stores
// sequence and optional inputs and outputs. Sequences of sequences, maps and sparse tensors are an
// error naming the file.
Tensor read_value_proto(const uint8_t* data, size_t size, ValueKind kind, const ReadOptions& options = {},
                        std::string* name_out = nullptr);

}  // namespace ptq::reader
