#pragma once
// ir::Model -> ONNX ModelProto bytes (the inverse of read_onnx), used to save calibrated and
// rewritten models.
//
// What is written: ir_version, opset_import, producer name/version, metadata_props and the graph —
// nodes in IR (topological) order with every attribute type the IR holds, initializers as
// little-endian raw_data, graph inputs/outputs and value_info with dtype and dims/dim_params.
// Constant nodes stay nodes: their outputs (which the IR also gives an `initializer`) are not
// written again as initializers. For ir_version < 4 initializers are also listed as graph inputs,
// as that IR version requires.
// Not representable in the IR and therefore dropped: doc strings, model domain/version, training
// info, non-tensor value types, sparse tensors (rejected with an error). All tensor data is inlined,
// so the 2 GiB protobuf limit applies to the written file.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ptq::reader {

std::vector<uint8_t> write_onnx(const ir::Model& model);

// One TensorProto (raw_data), e.g. for test_data_set_*/*.pb files.
std::vector<uint8_t> write_tensor_proto(const Tensor& tensor, const std::string& name = "");

}  // namespace ptq::reader
