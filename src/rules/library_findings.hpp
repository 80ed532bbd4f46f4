// Findings whose cause is inside an installed package (Location::library, set by location_of):
// the fix names the lever the user has (data/advice, knowledge/library_advice.hpp) or says that
// there is none, and findings of one rule, one program line and one cause become one. Run once
// over every rule's findings (run_rules). docs/library-advice.md.
#pragma once

#include <vector>

#include "model/finding.hpp"
#include "model/trace.hpp"

namespace npud {

// `trace`: the model facts a capture recorded (analysis/model_facts.hpp), against which a
// lever with a condition ("[if _supports_flash_attn] ...") is checked.
void apply_library_advice(std::vector<Finding>& findings, const Trace& trace);

}  // namespace npud
