// One problem, two ids: `scan` reads the source (FUSE102 hand-written-rotary), `run` and
// `analyze` read what ran (FUSE003 rotary-embedding). The ids stay (suppressions, baselines
// and CI gates name them); the pairing is documented in both rule docs (docs/rules) and shown
// in both text reports, "(scan: FUSE102)" beside FUSE003 and "(run: FUSE003)" beside FUSE102.
#pragma once

#include <string_view>

namespace npud {

// The scan rule for the same problem as profile/capture rule `trace_id`, or "" when none.
std::string_view scan_rule_for(std::string_view trace_id);
// The profile/capture rule for the same problem as scan rule `source_id`, or "" when none.
std::string_view run_rule_for(std::string_view source_id);

}  // namespace npud
