// --select/--ignore: one filter for every command and the configuration (model/rule_filter.hpp).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "rules/rule.hpp"
#include "model/rule_filter.hpp"
#include "source/source_rules.hpp"

using namespace npud;

namespace {

std::string error_of(const std::vector<std::string>& select, const std::vector<std::string>& ignore,
                     const std::vector<RuleRef>& known, const std::vector<RuleRef>& others = {}) {
  try {
    RuleFilter(select, ignore, known, true, true, others);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RuleFilter, IdsPrefixesAndNamesInAnyCase) {
  const std::vector<RuleRef> trace = trace_rule_refs();
  RuleFilter by_prefix({"sync"}, {}, trace);
  EXPECT_TRUE(by_prefix.enabled("SYNC001"));
  EXPECT_TRUE(by_prefix.enabled("SYNCBN001"));
  EXPECT_FALSE(by_prefix.enabled("IDLE001"));
  RuleFilter by_name({"Host-Device-Sync"}, {}, trace);
  EXPECT_TRUE(by_name.enabled("SYNC001"));
  EXPECT_TRUE(by_name.selected("SYNC001"));
  EXPECT_FALSE(by_name.enabled("SYNCBN001"));
  RuleFilter ignore_name({}, {"hot-ops, idle"}, trace);
  EXPECT_FALSE(ignore_name.enabled("HOT001"));
  EXPECT_FALSE(ignore_name.enabled("IDLE001"));
  EXPECT_TRUE(ignore_name.enabled("SYNC001"));
  EXPECT_FALSE(ignore_name.selected("SYNC001"));
  EXPECT_TRUE(RuleFilter({}, {}, trace).enabled("HOT001"));
  EXPECT_FALSE(RuleFilter({}, {}, trace).filters());
}

TEST(RuleFilter, UnknownSelectorFailsWithTheClosestRule) {
  const std::vector<RuleRef> trace = trace_rule_refs(), source = source_rule_refs();
  EXPECT_EQ(error_of({"sinc"}, {}, trace),
            "--select sinc: no rule id, id prefix or name matches it; did you mean SYNC? (see `npu-doctor rules`)");
  EXPECT_NE(error_of({}, {"host-device-snyc"}, trace).find("--ignore host-device-snyc: no rule id, id prefix or name "
                                                            "matches it; did you mean host-device-sync?"),
            std::string::npos);
  EXPECT_NE(error_of({"cudo"}, {}, source).find("did you mean CUDA?"), std::string::npos);
  EXPECT_NE(error_of({"SYNC01"}, {}, source).find("did you mean SYNC101?"), std::string::npos);
  // nothing close: no guess
  EXPECT_EQ(error_of({"zzzzzzzz"}, {}, trace).find("did you mean"), std::string::npos);
  // the other command's rules: said so, not "no rule"
  EXPECT_NE(error_of({"cuda"}, {}, trace, source).find("--select cuda: names another command's rules (CUDA001, CUDA002, "
                                                      "CUDA003, ...), none this command runs"),
            std::string::npos);
  EXPECT_NE(error_of({"host-device-sync"}, {}, source, trace).find("names another command's rules (SYNC001)"),
            std::string::npos);
}

TEST(RuleFilter, ConfigurationListsNamingOtherCommandsMatchNothing) {
  const std::vector<RuleRef> trace = trace_rule_refs();
  RuleFilter f({"CUDA"}, {"CUDA002"}, trace, false, false);   // unchecked: the file serves scan too
  EXPECT_TRUE(f.filters());
  EXPECT_FALSE(f.enabled("SYNC001"));   // a select of only scan's rules runs none of analyze's
}

TEST(RuleFilter, RulesNamedBy) {
  const std::vector<RuleRef> trace = trace_rule_refs();
  EXPECT_EQ(rules_named_by("fuse00", trace).size(), 8u);   // FUSE001..FUSE008
  EXPECT_EQ(rules_named_by("device-idle-gap", trace), std::vector<std::string_view>{"IDLE001"});
  EXPECT_TRUE(rules_named_by("", trace).empty());
  EXPECT_TRUE(rules_named_by("idle-gap", trace).empty());   // a name is whole, an id may be cut
}
