#include "io/pb_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/pb_wire.h"

using namespace ptq;

namespace {
std::vector<uint8_t> hex(std::initializer_list<int> v) { return std::vector<uint8_t>(v.begin(), v.end()); }
}  // namespace

TEST(PbWriter, VarintsMatchTheProtobufEncodingGuide) {
  pb::Writer w;
  w.varint(1, 150);  // the guide's example: 08 96 01
  EXPECT_EQ(w.bytes(), hex({0x08, 0x96, 0x01}));
  pb::Writer z;
  z.varint(2, 0);
  z.varint(2, 300);  // 300 = 0b10_0101100 -> AC 02
  EXPECT_EQ(z.bytes(), hex({0x10, 0x00, 0x10, 0xAC, 0x02}));
  EXPECT_EQ(pb::varint_size(0), 1u);
  EXPECT_EQ(pb::varint_size(127), 1u);
  EXPECT_EQ(pb::varint_size(128), 2u);
  EXPECT_EQ(pb::varint_size(~uint64_t{0}), 10u);
}

TEST(PbWriter, NegativeInt64IsTenBytesTwosComplement) {
  pb::Writer w;
  w.int64(3, -1);
  ASSERT_EQ(w.bytes().size(), 11u);  // tag + 10 bytes
  EXPECT_EQ(w.bytes()[0], 0x18);
  for (size_t i = 1; i < 10; ++i) EXPECT_EQ(w.bytes()[i], 0xFF) << i;
  EXPECT_EQ(w.bytes()[10], 0x01);
  pb::Reader r(w.bytes().data(), w.bytes().size(), "test");
  pb::Field f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(pb::as_int64(f), -1);
}

TEST(PbWriter, FixedAndStringFields) {
  pb::Writer w;
  w.float32(2, 1.0f);   // 0x3F800000 little-endian
  w.float64(3, -2.0);   // 0xC000000000000000
  w.string(4, "hi");
  EXPECT_EQ(w.bytes(), hex({0x15, 0x00, 0x00, 0x80, 0x3F, 0x19, 0, 0, 0, 0, 0, 0, 0x00, 0xC0, 0x22, 0x02, 'h', 'i'}));
}

TEST(PbWriter, PackedRepeatedFields) {
  pb::Writer w;
  w.packed_varints(1, std::vector<int64_t>{3, 270, 86942});  // guide example: 0A 06 03 8E 02 9E A7 05
  EXPECT_EQ(w.bytes(), hex({0x0A, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05}));
  pb::Writer f;
  f.packed_floats(7, {1.0f, -0.5f});
  EXPECT_EQ(f.bytes(), hex({0x3A, 0x08, 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xBF}));
  pb::Writer empty;
  empty.packed_floats(7, {});
  EXPECT_TRUE(empty.bytes().empty());
}

TEST(PbWriter, NestedMessagesGetMinimalLengthPrefixes) {
  // Short body (1-byte prefix) and a 200-byte body (2-byte prefix), nested two deep.
  pb::Writer w;
  w.message(1, [](pb::Writer& m) { m.varint(1, 5); });
  EXPECT_EQ(w.bytes(), hex({0x0A, 0x02, 0x08, 0x05}));

  const std::string payload(200, 'x');
  pb::Writer n;
  n.message(2, [&](pb::Writer& outer) {
    outer.varint(1, 7);
    outer.message(3, [&](pb::Writer& inner) { inner.string(4, payload); });
  });
  const auto& b = n.bytes();
  // inner = 22 C8 01 <200>  -> 203 bytes; outer = 08 07 1A CB 01 <203> -> 208 bytes.
  ASSERT_EQ(b.size(), 3u + 208u);
  EXPECT_EQ(b[0], 0x12);
  EXPECT_EQ(b[1], 0xD0);  // 208 = 0xD0 0x01
  EXPECT_EQ(b[2], 0x01);
  pb::Reader r(b.data(), b.size(), "outer");
  pb::Field f;
  ASSERT_TRUE(r.next(f));
  pb::Reader outer(f.bytes, "outer");
  ASSERT_TRUE(outer.next(f));
  EXPECT_EQ(f.varint, 7u);
  ASSERT_TRUE(outer.next(f));
  EXPECT_EQ(f.number, 3u);
  pb::Reader inner(f.bytes, "inner");
  ASSERT_TRUE(inner.next(f));
  EXPECT_EQ(f.bytes.str(), payload);
  EXPECT_FALSE(inner.next(f));
  EXPECT_FALSE(outer.next(f));
}

TEST(PbWriter, EmptyNestedMessage) {
  pb::Writer w;
  w.message(5, [](pb::Writer&) {});
  EXPECT_EQ(w.bytes(), hex({0x2A, 0x00}));
  EXPECT_EQ(w.take().size(), 2u);
}

TEST(PbWriter, UnclosedMessageIsAnError) {
  pb::Writer w;
  w.begin_message(1);
  EXPECT_THROW(w.take(), Error);
  pb::Writer v;
  EXPECT_THROW(v.end_message(), Error);
}

// Groups (a deprecated wire type) are skipped without recursion: a file nesting them a million deep
// once overflowed the stack (onnx_reader_fuzz).
TEST(PbReader, DeeplyNestedGroupsAreSkippedWithoutRecursion) {
  const size_t depth = 1000000;
  std::vector<uint8_t> bytes(depth, 0x0b);  // field 1, start group
  bytes.insert(bytes.end(), depth, 0x0c);   // field 1, end group
  bytes.push_back(0x10);                    // field 2, varint 7
  bytes.push_back(0x07);
  ptq::pb::Reader reader(bytes.data(), bytes.size(), "test");
  ptq::pb::Field f;
  ASSERT_TRUE(reader.next(f));
  EXPECT_EQ(f.number, 1u);
  ASSERT_TRUE(reader.next(f));
  EXPECT_EQ(f.number, 2u);
  EXPECT_EQ(f.varint, 7u);
  EXPECT_FALSE(reader.next(f));

  std::vector<uint8_t> unterminated(depth, 0x0b);
  ptq::pb::Reader bad(unterminated.data(), unterminated.size(), "test");
  EXPECT_THROW(bad.next(f), ptq::FormatError);
  std::vector<uint8_t> mismatched = {0x0b, 0x13, 0x0c, 0x14};  // group 1 opens 2, closes 1 first
  ptq::pb::Reader wrong(mismatched.data(), mismatched.size(), "test");
  EXPECT_THROW(wrong.next(f), ptq::FormatError);
}
