#include "rules/amp_support.hpp"

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "rules/rule_support.hpp"

namespace npud {

std::string measurement_note(const AmpHeader& h) {
  std::string level = h.level.empty() ? "" : " " + h.level;
  if (h.emulated == 1)
    return advice("AMP", "emulated_note", {{"dtype", short_dtype(h.dtype)}, {"level", level}, {"full_dtype", h.dtype}});
  if (h.emulated == 0) return advice("AMP", "device_note", {{"dtype", short_dtype(h.dtype)}, {"level", level}});
  return {};
}

std::string cos_text(double cos) { return cos == cos ? fmt::format("{:.4g}", cos) : "null"; }

Location call_location(const Trace& t, const AmpCall& c) {
  Location loc;
  loc.op = std::string(t.str(c.name));
  auto frames = t.frames_of(c.stack);
  if (!frames.empty()) {
    const Frame& f = t.frames[frames.front()];
    loc.file = std::string(t.str(f.file));
    loc.line = f.line;
  }
  return loc;
}

Location optimizer_step_location(const AnalysisContext& ctx) {
  const Trace& t = ctx.trace;
  for (uint32_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].kind == OpKind::OptimizerStep) {
      Location loc = location_of(ctx.index(), i);
      loc.op = fmt::format("{}.step", t.str(t.ops[i].name));   // the optimizer's class
      return loc;
    }
  Location loc;
  loc.op = "optimizer.step";
  return loc;
}

}  // namespace npud
