#include "ingest/json_error_at.hpp"

#include <memory>

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ingest/byte_source.hpp"
#include "util/input_error.hpp"

namespace npud {

namespace od = simdjson::ondemand;

namespace {

// Visits every value; returns the first error.
simdjson::error_code walk(od::value v, int depth) {
  if (depth > 1024) return simdjson::DEPTH_ERROR;
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto field : o) {
        od::field f;
        if (auto e = std::move(field).get(f)) return e;
        if (auto e = walk(f.value(), depth + 1)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto el : a) {
        od::value x;
        if (auto e = std::move(el).get(x)) return e;
        if (auto e = walk(x, depth + 1)) return e;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::number: {
      double d;
      return v.get_double().get(d);
    }
    case od::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    default: {
      bool null;
      return v.is_null().get(null);
    }
  }
}

// Where the brackets of `json` stop balancing: a closing bracket that closes nothing or the
// wrong thing, or the end of the text when one is left open (simdjson 3.6's On Demand knows
// this before it walks anything and names no place; 3.0's finds it while walking).
uint64_t unbalanced_offset(std::string_view json) {
  std::string open;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != c) return i;
      open.pop_back();
    }
  }
  return in_string || !open.empty() ? json.size() : 0;
}

}  // namespace

uint64_t json_error_offset(const simdjson::padded_string& json) {
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(json).get(doc))
    return e == simdjson::UNCLOSED_STRING ? json.size() : unbalanced_offset(std::string_view(json.data(), json.size()));
  od::value root;
  simdjson::error_code err = doc.get_value().get(root);
  if (!err) err = walk(root, 0);
  // simdjson 3.6 knows before walking that a bracket is left open, and says so at offset 0.
  if (err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) return unbalanced_offset(std::string_view(json.data(), json.size()));
  const char* at = nullptr;
  if (doc.current_location().get(at) == simdjson::SUCCESS && at >= json.data() && at <= json.data() + json.size())
    return uint64_t(at - json.data());
  return json.size();  // the walk ran off the end: the text stops early
}

simdjson::dom::element load_json_or_throw(simdjson::dom::parser& parser, const std::string& path,
                                          simdjson::padded_string& text) {
  // Through a ByteSource: a FIFO or device is refused, never waited on, and a .gz is inflated
  // (a gzipped rank summary, communication.json or report reads as the plain file does).
  std::unique_ptr<ByteSource> in = open_byte_source(path);
  std::string bytes;
  if (in->size_hint) bytes.reserve(size_t(in->size_hint));
  char chunk[1 << 16];
  for (size_t got; (got = in->read(chunk, sizeof chunk)) > 0;) bytes.append(chunk, got);
  text = simdjson::padded_string(bytes);
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    throw InputError(path, json_error_offset(text), fmt::format("invalid JSON ({})", simdjson::error_message(err)));
  return root;
}

}  // namespace npud
