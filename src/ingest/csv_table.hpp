// CSV tables as the Ascend profiler and msprof-analyze write them: columns looked up by
// name, every record as wide as the header, microsecond times read exactly, "N/A" cells.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ingest/csv.hpp"
#include "ingest/decimal_time.hpp"
#include "util/input_error.hpp"
#include "util/text.hpp"

namespace npud {

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

inline bool is_na(std::string_view v) {
  v = trim(v);
  return v.empty() || v == "N/A" || v == "NA" || v == "-";
}

// Column positions of a CSV header, looked up by name (case-insensitive, trimmed).
class Columns {
 public:
  explicit Columns(const std::vector<std::string>& header) : names_(header) {
    if (!names_.empty() && names_[0].rfind("\xEF\xBB\xBF", 0) == 0) names_[0].erase(0, 3);
  }
  int find(std::initializer_list<std::string_view> candidates) const {
    for (std::string_view c : candidates)
      for (size_t i = 0; i < names_.size(); ++i)
        if (iequals(trim(names_[i]), c)) return int(i);
    return -1;
  }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

// Reads the header and checks each record has as many fields as it: a short or long row
// means a broken file (a cut-off write, an unquoted comma) and every later column would be off.
class Table {
 public:
  explicit Table(const std::string& path) : csv_(CsvReader::open(path)) {
    if (!csv_.next(header_)) throw InputError(path, 0, "empty CSV file: no header line");
  }
  const std::vector<std::string>& header() const { return header_; }
  bool next(std::vector<std::string>& row) {
    if (!csv_.next(row)) return false;
    if (row.size() != header_.size())
      throw InputError(csv_.name(), csv_.record_offset(),
                       fmt::format("line {}: {} fields, but the header has {} columns", csv_.line(), row.size(),
                                   header_.size()));
    return true;
  }
  [[noreturn]] void fail(size_t field, const std::string& what) const {
    throw InputError(csv_.name(), csv_.field_offset(field), fmt::format("line {}: {}", csv_.line(), what));
  }
  int required(const Columns& cols, std::initializer_list<std::string_view> names) const {
    int i = cols.find(names);
    if (i < 0) throw InputError(csv_.name(), 0, fmt::format("missing column '{}' in the header", *names.begin()));
    return i;
  }
  // A time in microseconds (decimal text, exact) as nanoseconds; bad text is an error.
  int64_t time_ns(const std::vector<std::string>& row, int col, std::string_view what) const {
    int64_t ns = 0;
    DecimalStatus st = parse_us_to_ns(row[size_t(col)], ns);
    if (st != DecimalStatus::Ok)
      fail(size_t(col), fmt::format("{}: {} '{}'", what, st == DecimalStatus::Invalid ? "not a number:" : "out of range:",
                                    row[size_t(col)]));
    return ns;
  }
  uint64_t bytes_read() const { return csv_.bytes_read(); }

 private:
  CsvReader csv_;
  std::vector<std::string> header_;
};

}  // namespace npud
