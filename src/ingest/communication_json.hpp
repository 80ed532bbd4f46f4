// msprof's communication.json (per rank, in ASCEND_PROFILER_OUTPUT) and msprof-analyze's
// cluster_communication.json share their innermost record: per collective op, a
// "Communication Time Info" object with "Wait Time(ms)", "Transit Time(ms)", "Elapse Time(ms)".
// Per rank:  {step: {"collective" | "p2p": {"<op>@<group>" | "Total Op Info": {info...}}}}
// Cluster:   {group: {step: {"<op>@<group>": {"<rank>": {info...}}}}}
// (layouts: ../shared/design/ANCHOR-ADVISOR.md). Step keys are "step" or "step<N>".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "model/trace.hpp"

namespace npud {

// "step12" -> 12; "step" or anything else -> -1.
int64_t comm_step_number(std::string_view key);

// Adds one op's "Communication Time Info" (ms) to `into`; false when the object has none.
bool add_comm_time(simdjson::dom::element op_info, CommStepTime& into);

// A rank's communication.json: wait, transit and elapse time per step, summed over its
// collective and point-to-point ops ("Total Op Info" repeats them and is skipped).
// Throws InputError (file) when it is not JSON or not that layout.
std::vector<CommStepTime> read_rank_communication(const std::string& path);

}  // namespace npud
