// --select / --ignore, one behaviour for every command (analyze, run, amp-check, scan, and the
// configuration's select, ignore and per-file-ignores): comma-separated selectors, each a rule id,
// an id prefix ("sync" = SYNC001, SYNC101...; "FUSE00") or a rule's name as `npu-doctor rules`
// lists it ("host-device-sync"), in any case. A selector that names none of the command's rules
// is an error naming it, with the closest id, family or name ("did you mean SYNC?").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

// A rule as selectors know it: its id and, where it has one, its name ("" for scan's rules).
struct RuleRef {
  std::string_view id;
  std::string_view name;
};

// The ids of `rules` that `selector` names (an id, id prefix or name, any case); empty: none.
std::vector<std::string_view> rules_named_by(std::string_view selector, std::span<const RuleRef> rules);

// "; did you mean SYNC?" with the id, id family (its letters) or name of `rules` closest to
// `selector`, or "" when none is close.
std::string did_you_mean(std::string_view selector, std::span<const RuleRef> rules);

class RuleFilter {
 public:
  RuleFilter() = default;
  // Each list element may itself hold commas. `known`: the rules the command runs.
  // Throws std::invalid_argument ("--select sinc: names no rule of this command ...; did you mean SYNC?").
  // `check_select`/`check_ignore` false: a list from the configuration file, which serves every
  // command (checked against every rule when read, cli/config.hpp): an entry that names
  // another command's rules matches nothing here, and a select of only such entries runs none.
  // `others`: the other commands' rules, named in the error when a selector names only those.
  RuleFilter(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
             std::span<const RuleRef> known, bool check_select = true, bool check_ignore = true,
             std::span<const RuleRef> others = {});
  bool enabled(std::string_view id) const;
  // --select names this id: rules hidden by default (HOT001) show then.
  bool selected(std::string_view id) const;
  bool filters() const { return has_select_ || !ignore_.empty(); }

 private:
  std::vector<std::string> select_, ignore_;   // the ids the selectors name
  bool has_select_ = false;
};

}  // namespace npud
