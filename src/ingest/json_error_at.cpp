#include "ingest/json_error_at.hpp"

#include <fmt/format.h>

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

}  // namespace

uint64_t json_error_offset(const simdjson::padded_string& json) {
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(json).get(doc)) return e == simdjson::UNCLOSED_STRING ? json.size() : 0;
  od::value root;
  simdjson::error_code err = doc.get_value().get(root);
  if (!err) err = walk(root, 0);
  const char* at = nullptr;
  if (doc.current_location().get(at) == simdjson::SUCCESS && at >= json.data() && at <= json.data() + json.size())
    return uint64_t(at - json.data());
  return json.size();  // the walk ran off the end: the text stops early
}

simdjson::dom::element load_json_or_throw(simdjson::dom::parser& parser, const std::string& path,
                                          simdjson::padded_string& text) {
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS)
    throw InputError(path, 0, "cannot read the file", false);
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    throw InputError(path, json_error_offset(text), fmt::format("invalid JSON ({})", simdjson::error_message(err)));
  return root;
}

}  // namespace npud
