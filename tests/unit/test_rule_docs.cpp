// Every registered rule (trace and scan) is documented where users look: docs/rules/<ID>.md
// (built into `npu-doctor rules ID`) and README's rule list, whose ranges ("CUDA001-CUDA007")
// are read as the ids they span, so a new rule without its README entry fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>

#include "rules/rule.hpp"
#include "source/source_rules.hpp"
#include "util/embedded.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

std::set<std::string> registered_ids() {
  std::set<std::string> ids;
  for (const RuleRef& r : trace_rule_refs()) ids.emplace(r.id);
  for (const RuleRef& r : source_rule_refs()) ids.emplace(r.id);
  return ids;
}

// The ids README names: `SYNC001` alone, or `FUSE001`-`FUSE007` for all between.
std::set<std::string> readme_ids() {
  std::ifstream in(fs::path(NPUD_SOURCE_DIR) / "README.md");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> ids;
  static const std::regex id_or_range("`([A-Z]+)([0-9]{3})`(?:-`([A-Z]+)([0-9]{3})`)?");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), id_or_range); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    int first = std::stoi(m[2]), last = m[3].matched && m[3] == m[1] ? std::stoi(m[4]) : first;
    for (int n = first; n <= last; ++n) ids.insert(fmt::format("{}{:03}", m[1].str(), n));
  }
  return ids;
}

}  // namespace

TEST(RuleDocs, EveryRegisteredRuleHasItsDoc) {
  for (const std::string& id : registered_ids())
    EXPECT_FALSE(find_embedded(embedded_rule_docs(), id + ".md").empty()) << "docs/rules/" << id << ".md is missing";
}

TEST(RuleDocs, ReadmeListsEveryRegisteredRule) {
  const std::set<std::string> listed = readme_ids();
  ASSERT_FALSE(listed.empty()) << "no rule ids read from README.md";
  for (const std::string& id : registered_ids())
    EXPECT_TRUE(listed.count(id)) << id << " is registered but README's rule list does not name it";
  // and no id README names is unknown (a range cut too long: CUDA001-CUDA008)
  const std::set<std::string> known = registered_ids();
  for (const std::string& id : listed) EXPECT_TRUE(known.count(id)) << "README names " << id << ", which is no rule";
}
