#include "io/npy.h"

#include <bit>
#include <cstring>
#include <string_view>

#include "core/error.h"

namespace ptq::io {
namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host (x86, wasm)");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxRank = 64;  // numpy 2 allows 64 dimensions; anything more is a corrupt header

// One row per supported element type: the numpy type code (descr without the byte-order char).
struct DTypeCode {
  const char* code;
  DType dtype;
};
constexpr DTypeCode kCodes[] = {
    {"f2", DType::Float16}, {"f4", DType::Float}, {"f8", DType::Double}, {"i1", DType::Int8},
    {"u1", DType::UInt8},   {"i2", DType::Int16}, {"u2", DType::UInt16}, {"i4", DType::Int32},
    {"u4", DType::UInt32},  {"i8", DType::Int64}, {"u8", DType::UInt64}, {"b1", DType::Bool},
};

struct Header {
  DType dtype = DType::Undefined;
  bool big_endian = false;
  bool fortran_order = false;
  Shape shape;
};

// A strict little parser for the Python dict literal numpy writes, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
// Whitespace anywhere, either quote style, trailing commas, keys in any order.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  Header parse() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_ws();
      if (key == "descr") {
        parse_descr(h);
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        has_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        has_shape = true;
      } else {
        bad("unexpected key '" + key + "' in the header");
      }
      skip_ws();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') bad("expected ',' or '}' in the header");
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) bad("unexpected text after the header dict");
    if (!has_descr || !has_order || !has_shape) bad("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const { throw FormatError(file_ + ": not a valid .npy file: " + why); }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) bad(std::string("expected '") + c + "' in the header");
    ++pos_;
  }

  std::string parse_string() {
    skip_ws();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string in the header");
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) bad("unterminated string in the header");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }

  bool parse_bool() {
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    bad("'fortran_order' must be True or False");
  }

  void parse_descr(Header& h) {
    if (peek() != '\'' && peek() != '"') bad("unsupported dtype (structured or non-string 'descr')");
    const std::string descr = parse_string();
    if (descr.size() == 3) {
      const char order = descr[0];
      for (const auto& c : kCodes) {
        if (descr.compare(1, 2, c.code) != 0) continue;
        // One-byte types are written with '|' but any order mark is harmless for them.
        const bool single = dtype_size(c.dtype) == 1;
        if (order == '<' || order == '=' || (single && (order == '|' || order == '>'))) {
          h.dtype = c.dtype;
          return;
        }
        if (order == '>') {
          h.dtype = c.dtype;
          h.big_endian = true;
          return;
        }
      }
    }
    throw FormatError(file_ + ": unsupported .npy dtype '" + descr +
                "' (supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool)");
  }

  Shape parse_shape() {
    Shape shape;
    if (peek() != '(') bad("'shape' must be a tuple");
    ++pos_;
    for (;;) {
      skip_ws();
      if (peek() == ')') break;
      if (shape.size() == kMaxRank) bad("shape has more than " + std::to_string(kMaxRank) + " dimensions");
      shape.push_back(parse_dim());
      skip_ws();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') bad("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return shape;
  }

  int64_t parse_dim() {
    if (peek() < '0' || peek() > '9') bad("shape dimensions must be non-negative integers");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (v > (INT64_MAX - 9) / 10) bad("shape dimension too large");
      v = v * 10 + (peek() - '0');
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long literal
    return v;
  }

  std::string_view s_;
  const std::string& file_;
  size_t pos_ = 0;
};

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

void byte_swap_elements(uint8_t* data, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) {
    uint8_t* e = data + i * width;
    for (size_t a = 0, b = width - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
  }
}

// Fortran (column-major) bytes -> C (row-major) tensor: walk the C-order index like an odometer and
// keep the matching column-major offset in step.
void fortran_to_c(const uint8_t* src, uint8_t* dst, const Shape& shape, size_t width) {
  const size_t rank = shape.size();
  std::vector<int64_t> f_stride(rank), index(rank, 0);
  int64_t stride = 1;
  for (size_t d = 0; d < rank; ++d) {
    f_stride[d] = stride;
    stride *= shape[d];
  }
  const int64_t numel = stride;
  int64_t offset = 0;
  for (int64_t i = 0; i < numel; ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * width, src + static_cast<size_t>(offset) * width, width);
    for (size_t d = rank; d-- > 0;) {
      offset += f_stride[d];
      if (++index[d] < shape[d]) break;
      offset -= f_stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

std::string descr_of(DType dtype) {
  for (const auto& c : kCodes) {
    if (c.dtype == dtype) return std::string(dtype_size(dtype) == 1 ? "|" : "<") + c.code;
  }
  throw Error("cannot write a " + dtype_name(dtype) + " tensor as .npy (numpy has no such dtype)");
}

}  // namespace

Tensor read_npy(const uint8_t* data, size_t size, const std::string& file_name) {
  auto bad = [&](const std::string& why) -> FormatError { return FormatError(file_name + ": not a valid .npy file: " + why); };
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0) throw bad("missing the \\x93NUMPY magic");
  const uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0)
    throw bad("unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  // v1 stores the header length in 2 bytes, v2/v3 in 4 (v3 only changes the header text to utf8).
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + len_bytes;
  if (size < prefix) throw bad("truncated header");
  const size_t header_len = read_le(data + 8, len_bytes);
  if (header_len > size - prefix) throw bad("truncated header");
  const std::string_view text(reinterpret_cast<const char*>(data + prefix), header_len);
  const Header h = HeaderParser(text, file_name).parse();

  const size_t width = dtype_size(h.dtype);
  const size_t available = size - prefix - header_len;
  // In 64-bit arithmetic (size_t is 32 bits in wasm) and bound by the bytes present, so a huge shape
  // can neither overflow, wrap into a small count, nor allocate.
  uint64_t numel = 1;
  const uint64_t bound = static_cast<uint64_t>(available) / width;
  for (int64_t d : h.shape) {
    const auto dim = static_cast<uint64_t>(d);
    if (dim != 0 && numel > bound / dim) {
      numel = UINT64_MAX;
      break;
    }
    numel *= dim;
  }
  for (int64_t d : h.shape)
    if (d == 0) numel = 0;  // an empty array is valid whatever its other dims
  if (numel == UINT64_MAX || numel * width != available)
    throw bad("shape " + shape_str(h.shape) + " of " + dtype_name(h.dtype) + " does not match the " +
              std::to_string(available) + " data bytes present");

  Tensor t(h.dtype, h.shape);
  const uint8_t* payload = data + prefix + header_len;
  uint8_t* out = t.mutable_data<uint8_t>();
  if (numel == 0) return t;
  if (h.fortran_order && h.shape.size() > 1) fortran_to_c(payload, out, h.shape, width);
  else std::memcpy(out, payload, numel * width);
  if (h.big_endian) byte_swap_elements(out, numel, width);
  // numpy treats any non-zero byte as True; kernels may rely on exactly 0/1.
  if (h.dtype == DType::Bool)
    for (size_t i = 0; i < numel; ++i) out[i] = out[i] != 0;
  return t;
}

std::vector<uint8_t> write_npy(const Tensor& tensor) {
  std::string shape = "(";
  for (size_t i = 0; i < tensor.rank(); ++i) shape += (i ? ", " : "") + std::to_string(tensor.dim(i));
  shape += tensor.rank() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr_of(tensor.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned, as numpy does.
  const size_t prefix = kMagicSize + 4;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw Error("tensor rank too large for a version 1.0 .npy header");

  std::vector<uint8_t> out(total + tensor.nbytes());
  std::memcpy(out.data(), kMagic, kMagicSize);
  out[6] = 1;
  out[7] = 0;
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (tensor.nbytes()) std::memcpy(out.data() + total, tensor.raw(), tensor.nbytes());
  return out;
}

}  // namespace ptq::io
