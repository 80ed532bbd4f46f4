// What the AMP rules share: how the measurement was made, where calls are. Their shared notes
// (NPU-FACTS: fp16 overflow modes, GradScaler's host sync) are data/texts/rules.tsv's AMP rows.
#pragma once

#include <string>
#include <string_view>

#include "analysis/amp.hpp"
#include "model/finding.hpp"
#include "rules/rule.hpp"

namespace npud {

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
