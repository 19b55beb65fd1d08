#pragma once
// A minimal streaming JSON writer for the result schema. Non-finite numbers are written as the
// strings "inf", "-inf" and "nan" (JSON has no such numbers; docs/result-schema.md).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ptq::io {

class JsonWriter {
 public:
  JsonWriter& begin_object() { separator(); out_ += '{'; first_.push_back(true); return *this; }
  JsonWriter& end_object() { out_ += '}'; first_.pop_back(); return *this; }
  JsonWriter& begin_array() { separator(); out_ += '['; first_.push_back(true); return *this; }
  JsonWriter& end_array() { out_ += ']'; first_.pop_back(); return *this; }
  JsonWriter& key(const std::string& k) {
    separator();
    write_string(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& s) { separator(); write_string(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(bool b) { separator(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(int64_t i) { separator(); out_ += std::to_string(i); return *this; }
  JsonWriter& value(size_t i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(int i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(double d) {
    separator();
    if (std::isnan(d)) out_ += "\"nan\"";
    else if (std::isinf(d)) out_ += d > 0 ? "\"inf\"" : "\"-inf\"";
    else {
      char buf[32];
      // Shortest representation that round-trips the double (17 digits worst case).
      for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, d);
        if (std::strtod(buf, nullptr) == d) break;
      }
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& value(float f) { return value_float32(f); }
  // A float32 written with the fewest digits that round-trip *as float32* (0.99812f -> 0.99812).
  JsonWriter& value_float32(float f) {
    if (!std::isfinite(f)) return value(static_cast<double>(f));
    separator();
    char buf[32];
    for (int p = 1; p <= 9; ++p) {
      std::snprintf(buf, sizeof buf, "%.*g", p, static_cast<double>(f));
      if (std::strtof(buf, nullptr) == f) break;
    }
    out_ += buf;
    return *this;
  }
  JsonWriter& null() { separator(); out_ += "null"; return *this; }
  // A number already in JSON form (kept verbatim, e.g. when a parsed document is written back).
  JsonWriter& raw_number(const std::string& literal) { separator(); out_ += literal; return *this; }
  template <class T>
  JsonWriter& field(const std::string& k, const T& v) { key(k); return value(v); }
  JsonWriter& string_array(const std::vector<std::string>& v) {
    begin_array();
    for (const auto& s : v) value(s);
    return end_array();
  }
  JsonWriter& float32_array(const std::vector<float>& v) {
    begin_array();
    for (float f : v) value_float32(f);
    return end_array();
  }
  const std::string& str() const { return out_; }

 private:
  void separator() {
    if (after_key_) { after_key_ = false; return; }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
  void write_string(const std::string& s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace ptq::io
