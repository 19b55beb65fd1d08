#pragma once
// A small protobuf wire-format writer, the counterpart of pb_wire.h. Fields are appended to one
// growing buffer; a nested message is written in place and its length prefix is patched in when the
// message closes (the body moves left by the bytes the prefix did not need), so a tensor's payload is
// copied into the output once, not once per nesting level.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/pb_wire.h"

namespace ptq::pb {

// Fixed-width fields and raw tensor bytes are written straight from memory.
static_assert(std::endian::native == std::endian::little, "the protobuf writer assumes a little-endian host");

// Encoded size of a varint.
inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80u) {
    v >>= 7;
    ++n;
  }
  return n;
}

class Writer {
 public:
  const std::vector<uint8_t>& bytes() const { return buf_; }
  std::vector<uint8_t> take() {
    check(open_.empty(), "protobuf writer: a nested message was not closed");
    return std::move(buf_);
  }
  void reserve(size_t n) { buf_.reserve(n); }

  // ---- scalar fields ----
  void varint(uint32_t field, uint64_t v) {
    tag(field, WireType::Varint);
    raw_varint(v);
  }
  // int32/int64/enum fields: negative values are sign-extended to 10 bytes, as protobuf does.
  void int64(uint32_t field, int64_t v) { varint(field, static_cast<uint64_t>(v)); }
  void fixed32(uint32_t field, uint32_t v) {
    tag(field, WireType::Fixed32);
    raw_le(v);
  }
  void fixed64(uint32_t field, uint64_t v) {
    tag(field, WireType::Fixed64);
    raw_le(v);
  }
  void float32(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    fixed32(field, bits);
  }
  void float64(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    fixed64(field, bits);
  }

  // ---- length-delimited fields ----
  void bytes(uint32_t field, const void* data, size_t size) {
    tag(field, WireType::Bytes);
    raw_varint(size);
    append(data, size);
  }
  void string(uint32_t field, std::string_view s) { bytes(field, s.data(), s.size()); }

  // Packed repeated scalars (accepted by every proto2/proto3 parser for repeated numeric fields).
  template <class T>
  void packed_varints(uint32_t field, const std::vector<T>& values) {
    if (values.empty()) return;
    size_t n = 0;
    for (T v : values) n += varint_size(static_cast<uint64_t>(static_cast<int64_t>(v)));
    tag(field, WireType::Bytes);
    raw_varint(n);
    for (T v : values) raw_varint(static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  void packed_floats(uint32_t field, const std::vector<float>& values) {
    if (values.empty()) return;
    tag(field, WireType::Bytes);
    raw_varint(values.size() * 4);
    for (float v : values) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      raw_le(bits);
    }
  }
  void packed_doubles(uint32_t field, const std::vector<double>& values) {
    if (values.empty()) return;
    tag(field, WireType::Bytes);
    raw_varint(values.size() * 8);
    for (double v : values) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      raw_le(bits);
    }
  }

  // ---- nested messages ----
  // begin_message/end_message bracket a nested message written with the same writer.
  void begin_message(uint32_t field) {
    tag(field, WireType::Bytes);
    open_.push_back(buf_.size());
    buf_.resize(buf_.size() + kReserved);  // room for the longest length prefix we allow
  }
  void end_message() {
    check(!open_.empty(), "protobuf writer: end_message without begin_message");
    const size_t at = open_.back();
    open_.pop_back();
    const size_t body = at + kReserved;
    const uint64_t len = buf_.size() - body;
    check(len < (uint64_t{1} << (7 * kReserved)), "protobuf writer: nested message too large");
    uint8_t prefix[kReserved];
    size_t n = 0;
    for (uint64_t v = len;; v >>= 7) {
      prefix[n++] = static_cast<uint8_t>((v & 0x7fu) | (v >= 0x80u ? 0x80u : 0u));
      if (v < 0x80u) break;
    }
    std::memcpy(buf_.data() + at, prefix, n);
    if (n < kReserved) {
      std::memmove(buf_.data() + at + n, buf_.data() + body, static_cast<size_t>(len));
      buf_.resize(buf_.size() - (kReserved - n));
    }
  }
  // Writes `fn(*this)` as nested message `field`.
  template <class Fn>
  void message(uint32_t field, Fn&& fn) {
    begin_message(field);
    fn(*this);
    end_message();
  }

 private:
  // 5 varint bytes hold lengths below 32 GiB: more than a protobuf message may hold (2 GiB).
  static constexpr size_t kReserved = 5;

  void tag(uint32_t field, WireType wire) {
    check(field > 0 && field < (1u << 29), "protobuf writer: invalid field number");
    raw_varint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(wire));
  }
  void raw_varint(uint64_t v) {
    while (v >= 0x80u) {
      buf_.push_back(static_cast<uint8_t>(v | 0x80u));
      v >>= 7;
    }
    buf_.push_back(static_cast<uint8_t>(v));
  }
  template <class T>
  void raw_le(T v) {
    append(&v, sizeof(T));
  }
  void append(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    buf_.insert(buf_.end(), p, p + size);
  }

  std::vector<uint8_t> buf_;
  std::vector<size_t> open_;  // offsets of the reserved length prefixes of open messages
};

}  // namespace ptq::pb
