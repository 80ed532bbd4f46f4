// Text the AMP rules share: NPU facts about fp16 overflow and GradScaler
// (../shared/design/NPU-FACTS.md) and how the measurement was made.
#pragma once

#include <string>
#include <string_view>

#include "analysis/amp.hpp"
#include "rules/finding.hpp"
#include "rules/rule.hpp"

namespace npud {

// NPU-FACTS: A2/A3 default to INF_NAN mode, 910/310P to saturation mode (Inf -> max, NaN -> 0).
inline constexpr std::string_view kOverflowModeNote =
    "on 910/310P (saturation mode) an fp16 overflow clips to +-65504 and NaN becomes 0 instead of Inf/NaN, so the "
    "error is silent there; A2/A3 default to INF_NAN mode, which gives Inf/NaN as measured here";
// NPU-FACTS: GradScaler on NPU syncs with the host after each unscale group.
inline constexpr std::string_view kScalerSyncNote =
    "on the NPU, torch.npu.amp.GradScaler syncs with the host after each unscale group (one wait per optimizer "
    "step): expected, but keep other syncs out of the step";

// "measured by fp16 emulation on CPU (...)" / "measured with autocast on the device", or "".
std::string measurement_note(const AmpHeader& h);
// "0.9876" or "null" for a cosine that could not be computed.
std::string cos_text(double cos);
// The file:line of an amp_api call's innermost user frame.
Location call_location(const Trace& t, const AmpCall& c);
// Where the first recorded optimizer.step() is called ("<class>.step"): a Trainer's or
// accelerate's step anchored at the program's line that led there with the package site
// beside it (its lever: data/advice); op "optimizer.step" alone when none was recorded.
Location optimizer_step_location(const AnalysisContext& ctx);

}  // namespace npud
