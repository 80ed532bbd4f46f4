// What each reader's source records (Trace::caps), one constant per reader: the readers set
// them, and tests that build traces by hand mark them the same way (tests/unit/read_as.hpp).
#pragma once

#include "model/trace.hpp"

namespace npud {

// Kineto / torch.profiler JSON: CUDA, HIP and other runtime calls as the profiler saw them.
inline constexpr TraceCaps kKinetoCaps{.runtime_calls = true};
// npu-doctor captures: every dispatched op on the machine that ran the program.
inline constexpr TraceCaps kCaptureCaps{.dispatched_ops = true, .estimated_costs = true, .startup_step = true,
                                        .end_status = true, .program_argv = true};
// torch_npu profiler output: an Ascend NPU's tasks; runtime calls only with trace_view.json.
inline constexpr TraceCaps ascend_caps(bool has_trace_view) {
  return TraceCaps{.runtime_calls = has_trace_view, .npu_tasks = true};
}

}  // namespace npud
