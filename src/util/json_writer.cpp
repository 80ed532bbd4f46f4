#include "util/json_writer.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "util/escape.hpp"

namespace npud {

std::string JsonWriter::quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    char32_t c = next_code_point(s, pos);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == '<' || c == '>' || c == '&' || c == 0x2028 ||
            c == 0x2029)
          out += fmt::format("\\u{:04x}", unsigned(c));
        else
          append_utf8(out, c);
    }
  }
  out += '"';
  return out;
}

void JsonWriter::newline() {
  if (indent_ <= 0) return;
  os_ << '\n';
  for (size_t i = 0; i < stack_.size() * size_t(indent_); ++i) os_ << ' ';
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  if (stack_.back().is_object) throw std::logic_error("JsonWriter: value in an object needs a key");
  if (!stack_.back().empty) os_ << ',';
  stack_.back().empty = false;
  newline();
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || !stack_.back().is_object || after_key_) throw std::logic_error("JsonWriter: key outside an object");
  if (!stack_.back().empty) os_ << ',';
  stack_.back().empty = false;
  newline();
  os_ << quote(k) << (indent_ > 0 ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  os_ << '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  os_ << '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || after_key_) throw std::logic_error("JsonWriter: unbalanced end_object");
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  os_ << '}';
  if (stack_.empty() && indent_ > 0) os_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object) throw std::logic_error("JsonWriter: unbalanced end_array");
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  os_ << ']';
  if (stack_.empty() && indent_ > 0) os_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  os_ << quote(s);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  os_ << (b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  os_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  os_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) os_ << "null";
  else os_ << fmt::format("{}", v);  // shortest form that reads back to the same double
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  os_ << "null";
  return *this;
}

void tool_header(JsonWriter& w, std::string_view command) {
  w.field("schema_version", 1);
  w.key("tool").begin_object().field("name", "npu-doctor").field("version", NPUD_VERSION).end_object();
  w.field("command", command);
}

void string_or_null(JsonWriter& w, std::string_view key, std::string_view v) {
  w.key(key);
  if (v.empty()) w.null();
  else w.value(v);
}

}  // namespace npud
