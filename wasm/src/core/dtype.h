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
  UInt4 = 21,  // held unpacked, one value per byte (the reader unpacks, the writer packs two per byte)
  Int4 = 22,   // likewise, sign-extended to int8
};

// True for the 4-bit types, whose file form packs two values per byte (low nibble first).
inline bool dtype_is_packed4(DType t) { return t == DType::UInt4 || t == DType::Int4; }

// Size in bytes of one element in memory (int4/uint4: 1, unpacked); 0 for Undefined and String.
size_t dtype_size(DType t);
// Lower-case numpy-style name ("float32", "int64", "bool", ...), used in error messages.
std::string dtype_name(DType t);
// The names the original tool prints in its dtype message (horizon_nn's DataType enum, executor/ort.py):
// FLOAT32, FLOAT64, INT64, ... rather than numpy's float32.
std::string horizon_dtype_name(DType t);
// True for ONNX data type numbers this engine can hold in a Tensor.
bool dtype_supported(int32_t onnx_type);

}  // namespace ptq
