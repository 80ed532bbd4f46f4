// Exact conversion of trace timestamps from decimal microseconds text to integer
// nanoseconds. Going through a double is not exact: 1.7e15 us has 16 significant digits
// before the ns ones, more than a double holds.
#pragma once

#include <cstdint>
#include <string_view>

namespace npud {

enum class DecimalStatus : uint8_t { Ok, Invalid, OutOfRange };

// Parses JSON-number text ("-12", "1704161511420306.491", "1.5e3") in microseconds and
// rounds it to the nearest nanosecond (halves away from zero). Surrounding blanks are
// ignored. OutOfRange when the result does not fit int64.
DecimalStatus parse_us_to_ns(std::string_view text, int64_t& out);

}  // namespace npud
