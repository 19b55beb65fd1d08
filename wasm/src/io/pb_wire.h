#pragma once
// A zero-copy protobuf wire-format reader. Length-delimited fields come back as spans into the
// caller's buffer: nothing is copied, so multi-GB weights are never duplicated on a 4 GB wasm heap.
// Every read is bounds-checked and throws ptq::FormatError naming the message being parsed.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ptq::pb {

enum class WireType : uint32_t { Varint = 0, Fixed64 = 1, Bytes = 2, StartGroup = 3, EndGroup = 4, Fixed32 = 5 };

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string_view view() const { return {reinterpret_cast<const char*>(data), size}; }
  std::string str() const { return std::string(view()); }
};

struct Field {
  uint32_t number = 0;
  WireType wire = WireType::Varint;
  uint64_t varint = 0;  // Varint, Fixed64, Fixed32 payloads
  Bytes bytes;          // Bytes payload
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const char* what) : p_(data), end_(data + size), what_(what) {}
  Reader(Bytes b, const char* what) : Reader(b.data, b.size, what) {}

  bool done() const { return p_ >= end_; }

  // Reads the next field; returns false at the end of the buffer.
  bool next(Field& f) {
    if (p_ >= end_) return false;
    const uint64_t tag = read_varint();
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<WireType>(tag & 7u);
    if (f.number == 0) bad("field number 0");
    switch (f.wire) {
      case WireType::Varint: f.varint = read_varint(); break;
      case WireType::Fixed64: need(8); std::memcpy(&f.varint, p_, 8); p_ += 8; break;
      case WireType::Fixed32: {
        need(4);
        uint32_t v;
        std::memcpy(&v, p_, 4);
        f.varint = v;
        p_ += 4;
        break;
      }
      case WireType::Bytes: {
        const uint64_t len = read_varint();
        if (len > static_cast<uint64_t>(end_ - p_)) bad("length-delimited field " + std::to_string(f.number) + " runs past the end");
        f.bytes = {p_, static_cast<size_t>(len)};
        p_ += len;
        break;
      }
      case WireType::StartGroup: skip_group(f.number); break;
      default: bad("invalid wire type " + std::to_string(static_cast<uint32_t>(f.wire)));
    }
    return true;
  }

  uint64_t read_varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7fu) << shift;
      if (!(b & 0x80u)) return v;
    }
    bad("varint longer than 10 bytes");
  }

  [[noreturn]] void bad(const std::string& why) const {
    throw FormatError(std::string("corrupt protobuf in ") + what_ + ": " + why);
  }

 private:
  void need(size_t n) const {
    if (static_cast<size_t>(end_ - p_) < n) bad("truncated data");
  }
  // Iterative: nesting depth is bounded only by the file, so recursion could overflow the stack.
  void skip_group(uint32_t number) {
    std::vector<uint32_t> open{number};  // field numbers of the groups not yet closed, innermost last
    while (!open.empty()) {
      if (p_ >= end_) bad("unterminated group");
      const uint64_t tag = read_varint();
      const auto field = static_cast<uint32_t>(tag >> 3);
      switch (static_cast<WireType>(tag & 7u)) {
        case WireType::EndGroup:
          if (field != open.back()) bad("mismatched end group");
          open.pop_back();
          break;
        case WireType::Varint: read_varint(); break;
        case WireType::Fixed64: need(8); p_ += 8; break;
        case WireType::Fixed32: need(4); p_ += 4; break;
        case WireType::Bytes: {
          const uint64_t len = read_varint();
          if (len > static_cast<uint64_t>(end_ - p_)) bad("group field runs past the end");
          p_ += len;
          break;
        }
        case WireType::StartGroup: open.push_back(field); break;
        default: bad("invalid wire type in group");
      }
    }
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const char* what_;
};

inline int64_t as_int64(const Field& f) { return static_cast<int64_t>(f.varint); }
inline float as_float(const Field& f) {
  float v;
  const uint32_t bits = static_cast<uint32_t>(f.varint);
  std::memcpy(&v, &bits, 4);
  return v;
}
inline double as_double(const Field& f) {
  double v;
  std::memcpy(&v, &f.varint, 8);
  return v;
}

// Repeated scalar fields may be packed (one Bytes field) or not (one field per element).
// `Fn` receives each element's raw 64-bit payload.
template <class Fn>
void for_each_repeated(const Field& f, WireType element_wire, Reader& owner, Fn&& fn) {
  if (f.wire == element_wire) {
    fn(f.varint);
    return;
  }
  if (f.wire != WireType::Bytes) owner.bad("unexpected wire type for repeated field " + std::to_string(f.number));
  Reader packed(f.bytes, "packed field");
  const uint8_t* p = f.bytes.data;
  const size_t n = f.bytes.size;
  if (element_wire == WireType::Varint) {
    while (!packed.done()) fn(packed.read_varint());
  } else if (element_wire == WireType::Fixed32) {
    if (n % 4) owner.bad("packed fixed32 field has a partial element");
    for (size_t i = 0; i < n; i += 4) {
      uint32_t v;
      std::memcpy(&v, p + i, 4);
      fn(static_cast<uint64_t>(v));
    }
  } else {
    if (n % 8) owner.bad("packed fixed64 field has a partial element");
    for (size_t i = 0; i < n; i += 8) {
      uint64_t v;
      std::memcpy(&v, p + i, 8);
      fn(v);
    }
  }
}

}  // namespace ptq::pb
