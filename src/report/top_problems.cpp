// The "top problems" selection shared by the text and HTML reports' first screens: what to fix
// first.
#include "report/render.hpp"

#include <algorithm>

namespace npud {

namespace {

// A capture that stopped early (Finding::first) leads: the rest covers only what was recorded.
// Then errors with no time estimate: code that fails on an NPU (CUDA-only calls), which no
// amount of time lost outweighs. Then everything else by estimated time lost.
int tier(const Finding& f) {
  if (f.first) return 0;
  return f.severity == Severity::Error && f.cost_ns == 0 ? 1 : 2;
}

}  // namespace

std::vector<const Finding*> top_problems(const std::vector<Finding>& findings) {
  std::vector<const Finding*> top;
  for (const Finding& f : findings)
    if (f.rule != kHostRankingRule) top.push_back(&f);
  // Stable: findings equal in all three keep the rules' order.
  std::stable_sort(top.begin(), top.end(), [](const Finding* a, const Finding* b) {
    if (tier(*a) != tier(*b)) return tier(*a) < tier(*b);
    if (a->cost_ns != b->cost_ns) return a->cost_ns > b->cost_ns;
    return a->severity > b->severity;
  });
  if (top.size() > kTopProblems) top.resize(kTopProblems);
  return top;
}

}  // namespace npud
