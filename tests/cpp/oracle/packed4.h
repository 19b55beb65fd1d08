// The ONNX file layout of INT4 / UINT4 tensors (onnx.proto: two elements per byte, element 2k in the
// low nibble of byte k), unpacked as our Tensor holds them: one element per byte, INT4 sign-extended.
// Written here from the spec, so the oracle tests do not read 4-bit data through the code they check.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <vector>

namespace ptq::oracle {

// TensorProto.DataType UINT4 and INT4 (onnx.proto since 1.16; Debian's generated classes predate them).
constexpr int kUInt4 = 21, kInt4 = 22;

inline bool is_packed4(int data_type) { return data_type == kInt4 || data_type == kUInt4; }

inline int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

// `packed`: the file's bytes ((count + 1) / 2 of them); fewer bytes give a shorter result, so a size
// mismatch still shows as one.
inline std::vector<uint8_t> unpack4(int data_type, int64_t count, const std::vector<uint8_t>& packed) {
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < count && static_cast<size_t>(i / 2) < packed.size(); ++i) {
    int v = (packed[static_cast<size_t>(i / 2)] >> (i % 2 ? 4 : 0)) & 0x0F;
    if (data_type == kInt4 && v >= 8) v -= 16;
    out.push_back(static_cast<uint8_t>(v));
  }
  return out;
}

}  // namespace ptq::oracle
