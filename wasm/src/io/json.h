#pragma once
// A small JSON reader for requests and partial results. Objects keep their key order (result tables
// are ordered by sensitivity) and numbers keep their source text, so a document read and written back
// is byte-identical (merging never re-rounds a float32).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/json_writer.h"

namespace ptq::io {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Json() = default;
  static Json null() { return {}; }
  static Json boolean(bool b);
  static Json number_text(std::string text);  // a valid JSON number literal
  static Json string(std::string s);
  static Json array(std::vector<Json> items = {});
  static Json object();

  // Throws ptq::Error "<what>: invalid JSON at offset N: ..." on malformed text.
  static Json parse(const std::string& text, const std::string& what);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_number() const { return kind_ == Kind::Number; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  bool as_bool() const { return bool_; }
  // Numbers, and the non-finite strings "inf" / "-inf" / "nan" of the result schema.
  double as_number() const;
  bool is_numeric() const;  // a number or one of the non-finite strings
  const std::string& as_string() const { return text_; }  // string value, or a number's literal
  const std::vector<Json>& items() const { return items_; }
  std::vector<Json>& items() { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  // Object access: nullptr when absent.
  const Json* find(const std::string& key) const;
  Json* find(const std::string& key);
  // Sets (replacing in place, or appending) a member.
  Json& set(const std::string& key, Json value);
  void erase(const std::string& key);
  void push(Json value) { items_.push_back(std::move(value)); }

  void write(JsonWriter& w) const;
  std::string dump() const;

  friend bool operator==(const Json& a, const Json& b);
  friend bool operator!=(const Json& a, const Json& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  std::string text_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// A short human description of a value's kind ("a string", "an array", ...) for error messages.
std::string kind_name(const Json& v);

}  // namespace ptq::io
