// The ONNX reader on corrupt sizes: a clear FormatError, never an allocation the data cannot back
// (found by tests/fuzz/onnx_reader_fuzz: a shape of 2^39 elements over two int64_data values).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "io/pb_writer.h"
#include "reader/onnx.h"

namespace ptq {
namespace {

std::vector<uint8_t> int64_tensor_proto(const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  pb::Writer w;
  for (int64_t d : dims) w.int64(1, d);           // dims
  w.int64(2, 7);                                  // data_type INT64
  w.packed_varints(7, values);                    // int64_data
  w.string(8, "w");                               // name
  return w.take();
}

TEST(OnnxReaderLimits, HugeShapeOverFewTypedValuesIsAFormatErrorNotAnAllocation) {
  const auto bytes = int64_tensor_proto({int64_t{1} << 20, int64_t{1} << 19}, {1, 2});
  try {
    reader::read_tensor_proto(bytes.data(), bytes.size());
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("typed data holds 2 elements"), std::string::npos) << e.what();
  }
}

TEST(OnnxReaderLimits, MatchingTypedValuesStillRead) {
  const auto bytes = int64_tensor_proto({2}, {5, -6});
  const Tensor t = reader::read_tensor_proto(bytes.data(), bytes.size());
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{5, -6}));
}

}  // namespace
}  // namespace ptq
