#include "model/rule_filter.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "util/text.hpp"

namespace npud {
namespace {

bool contains(const std::vector<std::string>& ids, std::string_view id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::string_view family(std::string_view id) {   // "SYNC" of "SYNC001"
  size_t n = 0;
  while (n < id.size() && !(id[n] >= '0' && id[n] <= '9')) ++n;
  return id.substr(0, n);
}

std::string list_ids(const std::vector<std::string_view>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 3; ++i) out += (i ? ", " : "") + std::string(ids[i]);
  return ids.size() > 3 ? out + ", ..." : out;
}

std::vector<std::string> parse(const std::vector<std::string>& lists, std::string_view option,
                               std::span<const RuleRef> known, bool check, std::span<const RuleRef> others) {
  std::vector<std::string> out;
  for (std::string_view list : lists) {
    for (std::string_view item : comma_items(list)) {
      std::vector<std::string_view> ids = rules_named_by(item, known);
      if (ids.empty() && check) {
        std::vector<std::string_view> elsewhere = rules_named_by(item, others);
        if (!elsewhere.empty())
          throw std::invalid_argument(fmt::format(
              "{} {}: names another command's rules ({}), none this command runs (see `npu-doctor rules`)",
              option, item, list_ids(elsewhere)));
        throw std::invalid_argument(fmt::format("{} {}: no rule id, id prefix or name matches it{} (see `npu-doctor rules`)",
                                                option, item, did_you_mean(item, known)));
      }
      for (std::string_view id : ids)
        if (!contains(out, id)) out.emplace_back(id);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string_view> rules_named_by(std::string_view selector, std::span<const RuleRef> rules) {
  const std::string id = to_upper(selector), name = to_lower(selector);
  std::vector<std::string_view> out;
  if (selector.empty()) return out;
  for (const RuleRef& r : rules)
    if (r.id.starts_with(id) || (!r.name.empty() && r.name == name)) out.push_back(r.id);
  return out;
}

std::string did_you_mean(std::string_view selector, std::span<const RuleRef> rules) {
  const std::string word = to_lower(selector);
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;   // no closer one: no suggestion
  auto consider = [&](std::string_view candidate, std::string shown) {
    size_t d = edit_distance(word, to_lower(candidate));
    if (d < best_d) best_d = d, best = std::move(shown);
  };
  for (const RuleRef& r : rules) {
    consider(family(r.id), std::string(family(r.id)));
    consider(r.id, std::string(r.id));
    if (!r.name.empty()) consider(r.name, std::string(r.name));
  }
  return best.empty() ? std::string() : fmt::format("; did you mean {}?", best);
}

RuleFilter::RuleFilter(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
                       std::span<const RuleRef> known, bool check_select, bool check_ignore,
                       std::span<const RuleRef> others)
    : select_(parse(select, "--select", known, check_select, others)),
      ignore_(parse(ignore, "--ignore", known, check_ignore, others)) {
  for (std::string_view list : select) has_select_ = has_select_ || !comma_items(list).empty();
}

bool RuleFilter::enabled(std::string_view id) const {
  if (contains(ignore_, id)) return false;
  return !has_select_ || contains(select_, id);
}

bool RuleFilter::selected(std::string_view id) const { return contains(select_, id); }

}  // namespace npud
