// Where a JSON document goes wrong. simdjson's DOM parser (used for small, whole-document
// inputs: rank summaries, communication.json) says what is wrong but not where; this walks the
// document with the On-Demand parser, which stops at the first bad token and knows its offset.
#pragma once

#include <cstdint>
#include <string>

#include <simdjson.h>

namespace npud {

// Byte offset of the first error in `json` (its size when the text just ends too early).
uint64_t json_error_offset(const simdjson::padded_string& json);

// Parses `path` into `root` with `parser`; throws InputError(path, offset, "invalid JSON (...)")
// when it is unreadable or not JSON.
simdjson::dom::element load_json_or_throw(simdjson::dom::parser& parser, const std::string& path,
                                          simdjson::padded_string& text);

}  // namespace npud
