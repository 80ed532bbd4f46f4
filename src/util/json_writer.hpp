// A small streaming JSON writer: objects, arrays, and values with correct commas and
// escaping. Shared by every JSON-based output (report JSON, SARIF, HTML's embedded data).
// Strings are escaped for safe embedding anywhere: control characters as \uXXXX, invalid
// UTF-8 as U+FFFD, and '<', '>', '&', U+2028, U+2029 as \uXXXX so the output can sit
// inside an HTML <script> block unchanged.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace npud {

class JsonWriter;

// `"key": "v"`, or `"key": null` when v is empty.
void string_or_null(JsonWriter& w, std::string_view key, std::string_view v);

// The keys every JSON document of the CLI opens with (docs/json-schema.md): "schema_version",
// "tool" {name, version} and "command".
void tool_header(JsonWriter& w, std::string_view command);

class JsonWriter {
 public:
  // indent 0: compact, one line; otherwise pretty-printed with that many spaces.
  explicit JsonWriter(std::ostream& os, int indent = 2) : os_(os), indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(int64_t(v)); }
  JsonWriter& value(uint64_t v);
  JsonWriter& value(double v);  // NaN and infinities are written as null
  JsonWriter& null();

  // key + value in one call.
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // The escaped form of s, with quotes.
  static std::string quote(std::string_view s);

 private:
  void before_value();
  void newline();

  std::ostream& os_;
  int indent_;
  struct Level {
    bool is_object;
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace npud
