// scan's and run's ids for one problem (FUSE102 / FUSE003): both exist, pair both ways, and
// each rule's doc names the other (issue 30).
#include <gtest/gtest.h>

#include <string>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_pairs.hpp"
#include "source/source_rules.hpp"
#include "util/embedded.hpp"

namespace npud {
namespace {

std::string_view doc(std::string_view id) { return find_embedded(embedded_rule_docs(), std::string(id) + ".md"); }

TEST(RulePairs, RotaryIsFuse102InScanAndFuse003InRun) {
  EXPECT_EQ(scan_rule_for("FUSE003"), "FUSE102");
  EXPECT_EQ(run_rule_for("FUSE102"), "FUSE003");
  EXPECT_EQ(scan_rule_for("FUSE002"), "");   // no source rule for a written-out LayerNorm
  EXPECT_EQ(run_rule_for("CUDA001"), "");
}

TEST(RulePairs, EveryPairExistsBothWaysAndItsDocsNameEachOther) {
  size_t pairs = 0;
  for (const Rule* r : trace_rules()) {
    std::string_view twin = scan_rule_for(r->id());
    if (twin.empty()) continue;
    ++pairs;
    EXPECT_NE(find_source_rule(twin), nullptr) << twin;
    EXPECT_EQ(run_rule_for(twin), r->id());
    EXPECT_NE(doc(r->id()).find("(scan: " + std::string(twin) + ")"), std::string_view::npos) << r->id();
    EXPECT_NE(doc(twin).find("(run: " + std::string(r->id()) + ")"), std::string_view::npos) << twin;
  }
  EXPECT_GE(pairs, 5u);
}

}  // namespace
}  // namespace npud
