#include "rules/rule_filter.hpp"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "util/text.hpp"

namespace npud {
namespace {

bool matches(std::string_view id, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes)
    if (id.starts_with(p)) return true;
  return false;
}

std::vector<std::string> parse(const std::vector<std::string>& lists, std::string_view option,
                               const std::vector<std::string_view>& known, bool check) {
  std::vector<std::string> out;
  for (std::string_view list : lists) {
    for (std::string_view item : comma_items(list)) {
      std::string id(item);
      for (char& ch : id) ch = char(std::toupper(static_cast<unsigned char>(ch)));
      bool any = false;
      for (std::string_view k : known) any = any || k.starts_with(id);
      if (!any && check)
        throw std::invalid_argument(
            fmt::format("{} {}: no rule id starts with it (see `npu-doctor rules`)", option, item));
      out.push_back(std::move(id));
    }
  }
  return out;
}

}  // namespace

RuleFilter::RuleFilter(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
                       const std::vector<std::string_view>& known, bool check_select, bool check_ignore)
    : select_(parse(select, "--select", known, check_select)), ignore_(parse(ignore, "--ignore", known, check_ignore)) {}

bool RuleFilter::enabled(std::string_view id) const {
  if (matches(id, ignore_)) return false;
  return select_.empty() || matches(id, select_);
}

bool RuleFilter::selected(std::string_view id) const { return matches(id, select_); }

}  // namespace npud
