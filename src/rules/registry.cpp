#include <algorithm>

#include "rules/amp_rules.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/capture_rules.hpp"
#include "rules/library_findings.hpp"
#include "rules/rule.hpp"

namespace npud {

const std::vector<const Rule*>& trace_rules() {
  // In id order. Capture-only rules (capture_rules.hpp) find nothing on other traces.
  static const std::vector<const Rule*> rules = {
      &amp001_rule(),      &amp002_rule(),    &amp003_rule(),      &amp004_rule(),      &amp005_rule(),
      &amp006_rule(),      &bound001_rule(),   &capture001_rule(),  &comm001_rule(),    &comm002_rule(),
      &comm003_rule(),     &comm004_rule(),    &comm005_rule(),     &comm006_rule(),    &compile001_rule(),
      &compile002_rule(), &compile003_rule(), &contig001_rule(),   &contig002_rule(),  &data001_rule(),     &dynshape001_rule(), &dynshape002_rule(),
      &fallback001_rule(), &fallback002_rule(), &freq001_rule(),
      &fuse001_rule(),     &fuse002_rule(),    &fuse003_rule(),    &fuse004_rule(),     &fuse005_rule(),
      &fuse006_rule(),     &fuse007_rule(),    &fuse008_rule(),    &fuse009_rule(),     &fuse010_rule(),
      &gc001_rule(),       &hot001_rule(),
      &idle001_rule(),     &launch001_rule(),  &mem001_rule(),     &port001_rule(),    &shape001_rule(),
      &shape002_rule(),    &sync001_rule(),     &syncbn001_rule(),
  };
  return rules;
}

std::vector<RuleRef> trace_rule_refs() {
  std::vector<RuleRef> out;
  for (const Rule* r : trace_rules()) out.push_back({r->id(), r->name()});
  return out;
}

const Rule* find_trace_rule(std::string_view id) {
  for (const Rule* r : trace_rules())
    if (r->id() == id) return r;
  return nullptr;
}

std::vector<Finding> run_rules(const AnalysisContext& ctx, const std::vector<const Rule*>& rules) {
  std::vector<Finding> out;
  for (const Rule* r : rules) r->check(ctx, out);
  apply_library_advice(out, ctx.trace);   // findings inside installed packages: the user's lever, one per cause
  // Stable: equal findings keep each rule's own order (e.g. HOT001's ranking).
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.first != b.first) return a.first;
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.cost_ns > b.cost_ns;
  });
  return out;
}

}  // namespace npud
