// ANSI colour for the text reports: on only when the report goes to a terminal that wants it
// (cli/output.hpp decides); off, every call returns the text unchanged.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "model/finding.hpp"

namespace npud {

struct TextStyle {
  bool on = false;
  std::string wrap(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
  std::string severity(Severity s) const {
    std::string_view code = s == Severity::Error ? "1;31" : s == Severity::Warning ? "33" : "36";
    return wrap(code, to_string(s));
  }
  std::string bold(std::string_view t) const { return wrap("1", t); }
  std::string dim(std::string_view t) const { return wrap("2", t); }
};

}  // namespace npud
