// The "top problems" selection shared by the text and HTML reports' first screens.
#include "report/report.hpp"

namespace npud {

std::vector<const Finding*> top_problems(const std::vector<Finding>& findings) {
  std::vector<const Finding*> top;
  for (const Finding& f : findings) {
    if (top.size() >= kTopProblems) break;
    if (f.rule != kHostRankingRule) top.push_back(&f);
  }
  return top;
}

}  // namespace npud
