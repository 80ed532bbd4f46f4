// --select / --ignore, one behaviour for every command (analyze, run, amp-check, scan): rule
// ids or id prefixes, comma-separated, any case ("sync" = SYNC001, SYNC101...). An entry that
// matches none of the command's rules is an error naming it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace npud {

class RuleFilter {
 public:
  RuleFilter() = default;
  // Each list element may itself hold commas. `known`: the ids of the rules the command runs.
  // Throws std::invalid_argument ("--select sinc: no rule id starts with it").
  // `check_select`/`check_ignore` false: a list from the configuration file, which serves every
  // command (checked against all rule ids when read, cli/config.hpp): an entry that names
  // another command's rules matches nothing here, and a select of only such entries runs none.
  RuleFilter(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
             const std::vector<std::string_view>& known, bool check_select = true, bool check_ignore = true);
  bool enabled(std::string_view id) const;
  // --select names this id (or a prefix of it): rules hidden by default (HOT001) show then.
  bool selected(std::string_view id) const;
  bool filters() const { return !select_.empty() || !ignore_.empty(); }

 private:
  std::vector<std::string> select_, ignore_;
};

}  // namespace npud
