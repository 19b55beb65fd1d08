#include "io/json.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/error.h"

namespace ptq::io {

Json Json::boolean(bool b) {
  Json j;
  j.kind_ = Kind::Bool;
  j.bool_ = b;
  return j;
}

Json Json::number_text(std::string text) {
  Json j;
  j.kind_ = Kind::Number;
  j.text_ = std::move(text);
  return j;
}

Json Json::string(std::string s) {
  Json j;
  j.kind_ = Kind::String;
  j.text_ = std::move(s);
  return j;
}

Json Json::array(std::vector<Json> items) {
  Json j;
  j.kind_ = Kind::Array;
  j.items_ = std::move(items);
  return j;
}

Json Json::object() {
  Json j;
  j.kind_ = Kind::Object;
  return j;
}

bool Json::is_numeric() const {
  return kind_ == Kind::Number || (kind_ == Kind::String && (text_ == "inf" || text_ == "-inf" || text_ == "nan"));
}

double Json::as_number() const {
  if (kind_ == Kind::Number) return std::strtod(text_.c_str(), nullptr);
  if (kind_ == Kind::String) {
    if (text_ == "inf") return std::numeric_limits<double>::infinity();
    if (text_ == "-inf") return -std::numeric_limits<double>::infinity();
    if (text_ == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  fail("expected a number, got " + kind_name(*this));
}

const Json* Json::find(const std::string& key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

Json* Json::find(const std::string& key) {
  for (auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

Json& Json::set(const std::string& key, Json value) {
  if (Json* existing = find(key)) return *existing = std::move(value);
  members_.emplace_back(key, std::move(value));
  return members_.back().second;
}

void Json::erase(const std::string& key) {
  for (auto it = members_.begin(); it != members_.end(); ++it)
    if (it->first == key) {
      members_.erase(it);
      return;
    }
}

void Json::write(JsonWriter& w) const {
  switch (kind_) {
    case Kind::Null: w.null(); break;
    case Kind::Bool: w.value(bool_); break;
    case Kind::Number: w.raw_number(text_); break;
    case Kind::String: w.value(text_); break;
    case Kind::Array:
      w.begin_array();
      for (const auto& v : items_) v.write(w);
      w.end_array();
      break;
    case Kind::Object:
      w.begin_object();
      for (const auto& [k, v] : members_) {
        w.key(k);
        v.write(w);
      }
      w.end_object();
      break;
  }
}

std::string Json::dump() const {
  JsonWriter w;
  write(w);
  return w.str();
}

bool operator==(const Json& a, const Json& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Json::Kind::Null: return true;
    case Json::Kind::Bool: return a.bool_ == b.bool_;
    case Json::Kind::Number:
    case Json::Kind::String: return a.text_ == b.text_;
    case Json::Kind::Array: return a.items_ == b.items_;
    case Json::Kind::Object: return a.members_ == b.members_;
  }
  return false;
}

std::string kind_name(const Json& v) {
  switch (v.kind()) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return "a boolean";
    case Json::Kind::Number: return "a number";
    case Json::Kind::String: return "a string";
    case Json::Kind::Array: return "an array";
    case Json::Kind::Object: return "an object";
  }
  return "?";
}

namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  Json document() {
    Json v = value(0);
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 200;  // a hostile request must not overflow the (wasm) stack

  [[noreturn]] void error(const std::string& message) const {
    fail(what_ + ": invalid JSON at offset " + std::to_string(pos_) + ": " + message);
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) error(std::string("expected '") + c + "'");
  }

  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    skip_space();
    if (pos_ >= s_.size()) error("unexpected end of text");
    const char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Json::string(string());
    if (literal("true")) return Json::boolean(true);
    if (literal("false")) return Json::boolean(false);
    if (literal("null")) return Json::null();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    error(std::string("unexpected character '") + c + "'");
  }

  Json object(int depth) {
    ++pos_;
    Json o = Json::object();
    if (consume('}')) return o;
    do {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') error("expected a string key");
      std::string key = string();
      if (o.find(key)) error("duplicate key \"" + key + "\"");
      expect(':');
      o.set(key, value(depth + 1));
    } while (consume(','));
    expect('}');
    return o;
  }

  Json array(int depth) {
    ++pos_;
    Json a = Json::array();
    if (consume(']')) return a;
    do a.push(value(depth + 1));
    while (consume(','));
    expect(']');
    return a;
  }

  Json number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == from) error("malformed number");
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else digits();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      digits();
    }
    return Json::number_text(s_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) error("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else error("bad \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) error("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) error("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            pos_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: error(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace

Json Json::parse(const std::string& text, const std::string& what) { return Parser(text, what).document(); }

}  // namespace ptq::io
