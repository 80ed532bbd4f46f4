#include "graph/patterns.hpp"

namespace npud::graph {

const std::vector<const PatternSpec*>& all_patterns() {
  static const std::vector<const PatternSpec*> list = {&rms_norm_pattern(), &layer_norm_pattern(), &rotary_pattern(),
                                                       &attention_pattern(), &swiglu_pattern(), &gelu_pattern()};
  return list;
}

const PatternSpec* find_pattern(std::string_view name) {
  for (const PatternSpec* p : all_patterns())
    if (p->name == name) return p;
  return nullptr;
}

}  // namespace npud::graph
