// FUSE001-006: one finding per (pattern, user file:line of the anchor) from graph/affinity.hpp's
// matches (rules/pattern_rule.hpp).
#include "rules/pattern_rule.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "graph/affinity.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"

namespace npud::graph {
namespace {

struct Site {
  Location location;
  NormForm form;   // which fix computes what the code does (PatternMatch::form)
  std::vector<std::string> modules;
  size_t count = 0, in_steps = 0, in_first_step = 0;
  int64_t ops = 0, bytes = 0;       // totals over matches
  int64_t ops_each = 0;
};

std::string modules_text(const std::vector<std::string>& mods) {
  if (mods.empty()) return "";
  if (mods.size() == 1) return mods[0];
  return fmt::format("{} and {} more", mods[0], mods.size() - 1);
}

}  // namespace

void report_pattern(const AnalysisContext& ctx, const PatternSpec& spec, std::vector<Finding>& out) {
  const Trace& t = ctx.trace;
  const DataflowGraph& g = ctx.dataflow();
  std::vector<PatternMatch> matches = find_matches(g, spec);
  std::vector<Site> sites;
  std::unordered_map<std::string, size_t> index;
  for (const PatternMatch& m : matches) {
    uint32_t op = g.node(m.anchor).op;
    Location loc = location_with_own_module(ctx.index(), op);
    std::string key = (!call_site(loc) ? "module:" + loc.module : site_key(loc)) + "\x1f" + m.form.key();
    auto [it, inserted] = index.try_emplace(key, sites.size());
    if (inserted) {
      Site s;
      s.location = loc;
      s.form = m.form;
      s.ops_each = m.ops;
      sites.push_back(std::move(s));
    }
    Site& s = sites[it->second];
    ++s.count;
    if (t.ops[op].step_index >= 0) ++s.in_steps;
    if (t.ops[op].step_index == 0) ++s.in_first_step;
    s.ops += std::max<int64_t>(0, m.ops - spec.replacement_ops);
    s.bytes += m.bytes;
    if (!loc.module.empty() && std::find(s.modules.begin(), s.modules.end(), loc.module) == s.modules.end())
      s.modules.push_back(loc.module);
  }
  if (sites.empty()) return;
  std::string min_version = min_torch_npu(spec);
  bool available = !spec.custom_op.empty() ? ctx.npu.is_custom(spec.custom_op)
                                           : spec.aten_op.empty() || ctx.npu.has_npu_kernel(spec.aten_op);
  for (const Site& s : sites) {
    Finding f;
    f.rule = std::string(spec.rule);
    f.severity = Severity::Info;
    f.location = s.location;
    double ps = ctx.index().per_step(s.in_steps, s.in_first_step, s.count);
    double scale = s.count ? ps / double(s.count) : 0;
    double ops_ps = double(s.ops) * scale, bytes_ps = double(s.bytes) * scale;
    std::string where = s.location.file.empty() ? s.location.module : npud::where(s.location);
    std::string mods = modules_text(s.modules);
    f.message = fmt::format("{} at {}{}: {}, {} ops each; {} would remove about {} ops and {} of memory "
                            "traffic per {}",
                            spec.title, where, mods.empty() || where == mods ? "" : " (" + mods + ")",
                            times_text(ctx.index(), s.count, s.in_steps, s.in_first_step), s.ops_each, spec.api,
                            format_number(ops_ps), format_bytes(bytes_ps), t.steps.empty() ? "run" : "step");
    f.metrics = {{"occurrences", double(s.count)},
                 {"per_step", ps},
                 {"ops_per_match", double(s.ops_each)},
                 {"ops_removed_per_step", ops_ps},
                 {"bytes_saved_per_step", bytes_ps}};
    f.cost_ns = int64_t(double(s.ops) * cost::kLaunchNs + double(s.bytes) / cost::kDeviceBytesPerNs);
    std::string version = min_version.empty() ? "" : advice("FUSE00X", "min_version", {{"version", min_version}});
    std::string differs = spec.differs_for ? spec.differs_for(s.form) : std::string();
    f.fix = differs.empty()
                ? advice("FUSE00X", "fix", {{"api", spec.api}, {"min_version", version}, {"snippet", spec.fix_of(s.form)}})
                : advice("FUSE00X", "fix_differs", {{"api", spec.api}, {"min_version", version}, {"why", differs}});
    if (!available && !min_version.empty())
      f.notes.push_back(advice("FUSE00X", "not_listed_note",
                               {{"api", spec.api}, {"torch_npu", ctx.npu.version}, {"version", min_version}}));
    if (s.modules.size() > 1) {
      std::string all;
      for (size_t i = 0; i < s.modules.size() && i < 8; ++i) all += (i ? ", " : "") + s.modules[i];
      if (s.modules.size() > 8) all += ", ...";
      f.notes.push_back(advice("FUSE00X", "modules_note", {{"modules", all}}));
    }
    for (const std::string& n : spec.notes) f.notes.push_back(n);
    f.notes.push_back(advice("FUSE00X", "savings_note", {{"op_list", ctx.npu.describe()}}));
    out.push_back(std::move(f));
  }
}

}  // namespace npud::graph
