#include "io/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/half.h"

using namespace ptq;

namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

Tensor read(const std::vector<uint8_t>& bytes, const std::string& name = "x.npy") {
  return io::read_npy(bytes.data(), bytes.size(), name);
}

// A .npy file with a hand-written header (padding not required by the reader).
std::vector<uint8_t> make_npy(const std::string& header, const std::vector<uint8_t>& payload, int major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const size_t n = header.size();
  out.push_back(static_cast<uint8_t>(n & 0xff));
  out.push_back(static_cast<uint8_t>((n >> 8) & 0xff));
  if (major > 1) {
    out.push_back(static_cast<uint8_t>((n >> 16) & 0xff));
    out.push_back(static_cast<uint8_t>(n >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<uint8_t> floats_le(std::vector<float> v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Expects a FormatError whose message names the file.
void expect_format_error(const std::vector<uint8_t>& bytes, const std::string& what) {
  try {
    read(bytes, "calib/in/7.npy");
    ADD_FAILURE() << "no error for " << what;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("calib/in/7.npy"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

// Reference files, produced once by numpy 1.24.2 with
//   /usr/bin/python3 -c "import io, numpy as np; b = io.BytesIO(); np.save(b, ARRAY); print(b.getvalue().hex())"
// (np.lib.format.write_array(b, ARRAY, version=V) for the explicit versions).

// np.arange(6, dtype='<f4').reshape(2, 3) * 0.5 - 1
const char* kF4_2x3 =
    "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c2027"
    "7368617065273a2028322c2033292c207d2020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a000080bf000000bf000000000000003f0000803f0000c03f";
// np.array([1, -2, 300], dtype='>i2')
const char* kBeI2 =
    "934e554d5059010076007b276465736372273a20273e6932272c2027666f727472616e5f6f72646572273a2046616c73652c2027"
    "7368617065273a2028332c292c207d20202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a0001fffe012c";
// np.asfortranarray(np.arange(6, dtype='<i4').reshape(2, 3))
const char* kFortranI4 =
    "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a20547275652c202773"
    "68617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a000000000300000001000000040000000200000005000000";
// np.asfortranarray(np.arange(24, dtype='<i2').reshape(2, 3, 4))
const char* kFortranI2_3d =
    "934e554d5059010076007b276465736372273a20273c6932272c2027666f727472616e5f6f72646572273a20547275652c202773"
    "68617065273a2028322c20332c2034292c207d202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a00000c00040010000800140001000d00050011000900150002000e00"
    "060012000a00160003000f00070013000b001700";
// np.array(3.25, dtype='<f8')  (0-d)
const char* kScalarF8 =
    "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c2027"
    "7368617065273a2028292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a0000000000000a40";
// np.array([True, False, True])
const char* kBool =
    "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c2027"
    "7368617065273a2028332c292c207d20202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a010001";
// np.array([1, -1], dtype='<i8')
const char* kI8 =
    "934e554d5059010076007b276465736372273a20273c6938272c2027666f727472616e5f6f72646572273a2046616c73652c2027"
    "7368617065273a2028322c292c207d20202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a0100000000000000ffffffffffffffff";
// np.array([1.0, -2.5], dtype='<f2'), version=(2, 0)
const char* kF2V2 =
    "934e554d50590200740000007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73652c"
    "20277368617065273a2028322c292c207d2020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a003c00c1";
// np.array([[7, 255]], dtype='u1'), version=(3, 0)
const char* kU1V3 =
    "934e554d50590300740000007b276465736372273a20277c7531272c2027666f727472616e5f6f72646572273a2046616c73652c"
    "20277368617065273a2028312c2032292c207d202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a07ff";
// np.asfortranarray(np.array([[1.5, 2.0, -3.0], [4.0, 5.0, 6.25]], dtype='>f8'))
const char* kBeF8Fortran =
    "934e554d5059010076007b276465736372273a20273e6638272c2027666f727472616e5f6f72646572273a20547275652c202773"
    "68617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020200a3ff80000000000004010000000000000400000000000000040140000"
    "00000000c0080000000000004019000000000000";

template <class T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

}  // namespace

TEST(Npy, ReadsNumpyFloat32) {
  const Tensor t = read(from_hex(kF4_2x3));
  EXPECT_EQ(t.dtype(), DType::Float);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
}

TEST(Npy, ReadsNumpyBigEndianInt16) {
  const Tensor t = read(from_hex(kBeI2));
  EXPECT_EQ(t.dtype(), DType::Int16);
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(values<int16_t>(t), (std::vector<int16_t>{1, -2, 300}));
}

TEST(Npy, TransposesFortranOrder) {
  const Tensor t = read(from_hex(kFortranI4));
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));

  const Tensor t3 = read(from_hex(kFortranI2_3d));
  EXPECT_EQ(t3.shape(), (Shape{2, 3, 4}));
  std::vector<int16_t> expected(24);
  for (int i = 0; i < 24; ++i) expected[static_cast<size_t>(i)] = static_cast<int16_t>(i);
  EXPECT_EQ(values<int16_t>(t3), expected);
}

TEST(Npy, BigEndianFortranFloat64) {
  const Tensor t = read(from_hex(kBeF8Fortran));
  EXPECT_EQ(t.dtype(), DType::Double);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<double>(t), (std::vector<double>{1.5, 2.0, -3.0, 4.0, 5.0, 6.25}));
}

TEST(Npy, ScalarBoolInt64) {
  const Tensor s = read(from_hex(kScalarF8));
  EXPECT_EQ(s.dtype(), DType::Double);
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.data<double>()[0], 3.25);

  const Tensor b = read(from_hex(kBool));
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(values<uint8_t>(b), (std::vector<uint8_t>{1, 0, 1}));

  const Tensor i = read(from_hex(kI8));
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(values<int64_t>(i), (std::vector<int64_t>{1, -1}));
}

TEST(Npy, Versions2And3) {
  const Tensor h = read(from_hex(kF2V2));
  EXPECT_EQ(h.dtype(), DType::Float16);
  ASSERT_EQ(h.shape(), (Shape{2}));
  EXPECT_EQ(half_to_float(h.data<uint16_t>()[0]), 1.0f);
  EXPECT_EQ(half_to_float(h.data<uint16_t>()[1]), -2.5f);

  const Tensor u = read(from_hex(kU1V3));
  EXPECT_EQ(u.dtype(), DType::UInt8);
  EXPECT_EQ(u.shape(), (Shape{1, 2}));
  EXPECT_EQ(values<uint8_t>(u), (std::vector<uint8_t>{7, 255}));
}

TEST(Npy, WriteMatchesNumpyBytes) {
  // write_npy emits exactly numpy's v1.0 layout for C-order little-endian arrays.
  for (const char* hex : {kF4_2x3, kScalarF8, kBool, kI8}) {
    const auto bytes = from_hex(hex);
    EXPECT_EQ(io::write_npy(read(bytes)), bytes) << hex;
  }
}

TEST(Npy, RoundTripsEveryDtype) {
  const DType dtypes[] = {DType::Float, DType::Double, DType::Float16, DType::Int8,  DType::UInt8,  DType::Int16,
                          DType::UInt16, DType::Int32, DType::Int64,   DType::Bool,  DType::UInt32, DType::UInt64};
  for (DType dt : dtypes) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{5}, Shape{2, 0, 3}, Shape{1, 3, 2, 2}}) {
      Tensor t(dt, shape);
      auto* p = t.mutable_data<uint8_t>();
      for (size_t i = 0; i < t.nbytes(); ++i) p[i] = dt == DType::Bool ? (i % 3 == 0) : static_cast<uint8_t>(i * 37 + 1);
      const auto bytes = io::write_npy(t);
      EXPECT_EQ((bytes.size() - t.nbytes()) % 64, 0u);  // data 64-byte aligned, as numpy writes
      const Tensor back = read(bytes);
      EXPECT_EQ(back.dtype(), dt);
      EXPECT_EQ(back.shape(), shape);
      ASSERT_EQ(back.nbytes(), t.nbytes());
      if (t.nbytes()) {
        EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.nbytes()), 0) << dtype_name(dt);
      }
    }
  }
  EXPECT_THROW(io::write_npy(Tensor(DType::BFloat16, {2})), Error);  // numpy has no bfloat16
}

TEST(Npy, ToleratesHeaderSpellings) {
  const auto payload = floats_le({1, 2, 3});
  for (const std::string header : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
           "{\"shape\":(3,),\"descr\":\"<f4\",\"fortran_order\":False}",
           "{ 'fortran_order' : False , 'descr' : '<f4' , 'shape' : ( 3 , ) , }   \n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,)}\n",
           "{'descr': '=f4', 'fortran_order': True, 'shape': (3,), }",
       }) {
    const Tensor t = read(make_npy(header, payload));
    EXPECT_EQ(t.shape(), (Shape{3})) << header;
    EXPECT_EQ(values<float>(t), (std::vector<float>{1, 2, 3})) << header;
  }
  // A 1-byte type with any byte-order mark; non-zero bool bytes read as true.
  const Tensor b = read(make_npy("{'descr': '<b1', 'fortran_order': False, 'shape': (2, 1)}", {0, 7}));
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(values<uint8_t>(b), (std::vector<uint8_t>{0, 1}));
  // Empty arrays, even with a huge other dimension.
  EXPECT_EQ(read(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3)}", {})).numel(), 0);
  EXPECT_EQ(read(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 0)}", {})).numel(), 0);
}

TEST(Npy, RejectsMalformedInput) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const auto payload = floats_le({1, 2});
  expect_format_error({}, "empty file");
  expect_format_error({'N', 'U', 'M', 'P', 'Y', 0, 1, 0, 0, 0}, "bad magic");
  expect_format_error(make_npy(ok, payload, 4), "version 4");
  auto bad_minor = make_npy(ok, payload);
  bad_minor[7] = 1;
  expect_format_error(bad_minor, "version 1.1");
  auto long_header = make_npy(ok, payload);
  long_header[9] = 0x7f;  // header length past the end
  expect_format_error(long_header, "truncated header");
  expect_format_error(make_npy(ok, floats_le({1})), "truncated data");
  expect_format_error(make_npy(ok, floats_le({1, 2, 3})), "extra data");
  for (const char* descr : {"<c8", "<U3", "|O", "|f4", "<V8", "f4", "<f4x", "<m8", ""})
    expect_format_error(make_npy("{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (2,)}", payload), descr);
  for (const std::string header : {
           "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
           "{'descr': '<f4', 'shape': (2,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
           "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) x}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,",
           "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
           "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2)}",
           "",
           "'descr'",
       })
    expect_format_error(make_npy(header, payload), header);
}

TEST(Npy, EveryTruncationAndByteFlipFailsCleanly) {
  // A poor man's fuzz: every prefix and many single-byte mutations must either parse or throw
  // FormatError (ASan/UBSan builds catch any out-of-bounds read).
  for (const char* hex : {kFortranI2_3d, kF2V2, kBeF8Fortran}) {
    const auto bytes = from_hex(hex);
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_THROW(read(prefix), FormatError) << n;
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (uint8_t v : {uint8_t{0}, uint8_t{0xff}, uint8_t{'('}, uint8_t{'9'}, uint8_t{'\''}, uint8_t{','}}) {
        auto mutated = bytes;
        mutated[i] = v;
        try {
          read(mutated);
        } catch (const FormatError&) {
        }
      }
    }
  }
}
