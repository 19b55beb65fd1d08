#pragma once
// Element types, numbered exactly as ONNX TensorProto.DataType so reader values map 1:1.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ptq {

enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
};

// Size in bytes of one element; 0 for Undefined and String.
size_t dtype_size(DType t);
// Lower-case numpy-style name ("float32", "int64", "bool", ...), used in error messages.
std::string dtype_name(DType t);
// The names the original tool prints in its dtype message (horizon_nn's DataType enum, executor/ort.py):
// FLOAT32, FLOAT64, INT64, ... rather than numpy's float32.
std::string horizon_dtype_name(DType t);
// True for ONNX data type numbers this engine can hold in a Tensor.
bool dtype_supported(int32_t onnx_type);

}  // namespace ptq
