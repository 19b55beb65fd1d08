#pragma once
// .npy reader/writer (format versions 1.0, 2.0, 3.0). Little- and big-endian data, C order; Fortran
// order is transposed to C order. dtypes: float16/32/64, int8/16/32/64, uint8/16, bool.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ptq::io {

// Parses .npy bytes. `file_name` appears in every error message. The result owns its storage
// (little-endian C-order float/int data is copied once into aligned storage).
Tensor read_npy(const uint8_t* data, size_t size, const std::string& file_name);

// Serialises a tensor as .npy version 1.0 (little-endian, C order).
std::vector<uint8_t> write_npy(const Tensor& tensor);

}  // namespace ptq::io
