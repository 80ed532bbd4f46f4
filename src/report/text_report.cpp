// Terminal report: the top problems in one line each, then the findings grouped by rule,
// worst rule first, a few findings per rule, and a one-line summary. HOT001 (where this
// machine's CPU spent its time: no NPU cost) is shown on request only. Everything that comes
// from the input goes through terminal_safe().
#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "util/escape.hpp"
#include "report/render.hpp"
#include "report/text_style.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_pairs.hpp"
#include "util/terminal.hpp"

namespace npud {
namespace {

constexpr size_t kFindingsPerRule = 5;
constexpr size_t kNotesPerFinding = 2;
constexpr std::string_view kHostRanking = kHostRankingRule;

using Style = TextStyle;

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Metric values in the units their keys name.
std::string metric_text(const Metric& m) {
  std::string_view k = m.key;
  if (k.ends_with("_ns")) {
    k.remove_suffix(3);
    return fmt::format("{}={}", k, format_duration(int64_t(m.value)));
  }
  if (k.ends_with("share")) return fmt::format("{}={}", k, format_share(m.value));
  return fmt::format("{}={}", k, format_number(m.value));
}

bool shown_metric(std::string_view key) { return key != "rank" && key != "is_device" && key != "device"; }

// `previous_fix`: the fix of the finding shown just before in the same rule; an identical
// fix is not repeated (rules often give one fix to all their findings).
void render_finding(std::ostream& os, const Finding& f, const TextOptions& opts, const Style& st,
                    const std::string* previous_fix) {
  const std::string pad(4, ' ');
  os << "  " << st.severity(f.severity) << std::string(f.severity == Severity::Info ? 5 : f.severity == Severity::Error ? 4 : 2, ' ')
     << terminal_safe(f.message) << '\n';
  std::vector<std::string> where;
  if (!f.location.file.empty()) where.push_back("at " + terminal_safe(f.location.file_line()));
  if (!f.location.op.empty()) where.push_back("op " + terminal_safe(f.location.op));
  if (!f.location.module.empty()) where.push_back("module " + terminal_safe(f.location.module));
  if (!f.location.library.empty()) where.push_back("in " + terminal_safe(f.location.library.describe()));
  std::string line;
  for (const auto& w : where) line += (line.empty() ? "" : ", ") + w;
  if (!line.empty()) os << pad << pad << st.dim(line) << '\n';
  std::string metrics;
  for (const Metric& m : f.metrics)
    if (shown_metric(m.key)) metrics += (metrics.empty() ? "" : "  ") + terminal_safe(metric_text(m));
  if (!metrics.empty()) os << pad << pad << metrics << '\n';
  if (!f.fix.empty() && previous_fix && *previous_fix == f.fix) {
    os << pad << pad << st.dim("fix: as above") << '\n';
  } else if (!f.fix.empty()) {
    std::string fix = terminal_safe(f.fix, true);
    size_t start = 0;
    bool first = true;
    while (start <= fix.size()) {
      size_t end = fix.find('\n', start);
      if (end == std::string::npos) end = fix.size();
      os << pad << pad << (first ? "fix: " : "     ") << std::string_view(fix).substr(start, end - start) << '\n';
      first = false;
      start = end + 1;
    }
  }
  size_t notes = opts.verbose ? f.notes.size() : std::min(f.notes.size(), kNotesPerFinding);
  for (size_t i = 0; i < notes; ++i) os << pad << pad << st.dim("note: " + terminal_safe(f.notes[i])) << '\n';
  if (notes < f.notes.size()) os << pad << pad << st.dim(fmt::format("(+{} notes with --verbose)", f.notes.size() - notes)) << '\n';
}

bool fallback_rules_ran(const Report& r) {
  if (r.summary.torch_npu.empty()) return false;
  if (r.rules_run.empty()) return true;  // not recorded: assume every trace rule ran
  return std::any_of(r.rules_run.begin(), r.rules_run.end(),
                     [](const std::string& id) { return id.starts_with("FALLBACK"); });
}

}  // namespace

std::string summary_line(const Report& report) {
  size_t counts[3] = {0, 0, 0};
  for (const Finding& f : report.findings) ++counts[size_t(f.severity)];
  std::string left_out;   // said only when something was left out
  if (report.suppressed) left_out += fmt::format("; {} suppressed", report.suppressed);
  if (report.baselined) left_out += fmt::format("; {} in the baseline", report.baselined);
  return fmt::format("{} ({}, {}, {} info) in {}{}", plural(report.findings.size(), "finding", "findings"),
                     plural(counts[2], "error", "errors"), plural(counts[1], "warning", "warnings"), counts[0],
                     report.summary.source.empty() ? "<input>" : report.summary.source, left_out);
}

// "top problems": one entry each, so the first screen says what to fix first
// (report/render.hpp top_problems()), with its severity and estimated time lost on an NPU.
// Only when there is more than one. A message longer than the line wraps under itself.
static void render_top(std::ostream& os, const Report& report, const Style& st, size_t width) {
  std::vector<const Finding*> top = top_problems(report.findings);
  if (top.size() < 2) return;
  os << st.bold("top problems") << st.dim(" (by estimated time lost on an NPU: `npu-doctor docs cost-model`)") << '\n';
  for (size_t i = 0; i < top.size(); ++i) {
    const Finding& f = *top[i];
    std::string cost = f.cost_ns > 0 ? "~" + format_duration(f.cost_ns) : "";
    std::string_view severity = to_string(f.severity);
    std::string number_and_rule = fmt::format("  {}. {:<12} ", i + 1, f.rule);
    std::string after = fmt::format("{:{}}{:>9}  ", "", 8 - std::min<size_t>(8, severity.size()), cost);
    size_t head = number_and_rule.size() + severity.size() + after.size();
    size_t indent = std::min(head, width / 2);
    os << number_and_rule << st.severity(f.severity) << after
       << wrap_text(terminal_safe(f.message), std::max(width, indent + 20), head, indent) << '\n';
  }
  os << '\n';
}

void render_text(std::ostream& os, const Report& report, const TextOptions& opts) {
  Style st{opts.color};
  if (!report.config_file.empty()) os << st.dim("config: " + terminal_safe(report.config_file)) << '\n';
  // amp-check's section and the run's notes come before the findings, and amp's "no drift"
  // covers only what was recorded: a capture that stopped early (CAPTURE001) is said before
  // them (issue 31 F-23).
  if (report.amp || !report.notes.empty())
    for (const Finding& f : report.findings)
      if (f.first)
        os << st.severity(f.severity) << " capture incomplete (" << f.rule << "): " << terminal_safe(f.message)
           << "\n\n";
  for (const std::string& note : report.notes) os << st.dim("note: ") << terminal_safe(note) << "\n\n";
  if (report.amp) render_amp_text(os, *report.amp, opts.color);
  render_top(os, report, st, opts.width);
  // Rules in order of their worst finding (findings arrive sorted worst first).
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Finding*>> by_rule;
  for (const Finding& f : report.findings) {
    auto& v = by_rule[f.rule];
    if (v.empty()) order.push_back(f.rule);
    v.push_back(&f);
  }
  for (const std::string& id : order) {
    const auto& list = by_rule[id];
    if (id == kHostRanking && !opts.verbose && !opts.host_ranking) {
      // A capture's host times are this machine's; a profile's, the host that recorded it (issue 40).
      os << st.dim(fmt::format("{} hot-ops: {} host-op timings of {}, not NPU costs (--verbose or --select {} shows "
                               "them)",
                               kHostRanking, list.size(),
                               report.summary.estimated_costs ? "this machine's CPU" : "the recording host's CPU",
                               kHostRanking))
         << "\n\n";
      continue;
    }
    Severity worst = list.front()->severity;
    const Rule* rule = find_trace_rule(id);
    std::string name = rule ? std::string(rule->name()) : "";
    std::string_view twin = scan_rule_for(id);   // the same problem's id in `scan` (rules/rule_pairs.hpp)
    if (!twin.empty()) name += fmt::format(" (scan: {})", twin);
    os << st.bold(terminal_safe(id)) << (name.empty() ? "" : " " + name) << "  " << st.severity(worst) << "  "
       << plural(list.size(), "finding", "findings") << '\n';
    size_t shown = opts.verbose ? list.size() : std::min(list.size(), kFindingsPerRule);
    for (size_t i = 0; i < shown; ++i) render_finding(os, *list[i], opts, st, i > 0 ? &list[i - 1]->fix : nullptr);
    if (shown < list.size()) os << "  " << st.dim(fmt::format("... {} more (use --verbose)", list.size() - shown)) << '\n';
    os << '\n';
  }
  if (fallback_rules_ran(report)) {
    // A short caveat: the knowledge base's full provenance text is for the JSON report and
    // `npu-doctor versions`, not for a terminal line.
    std::string_view note = report.summary.knowledge_note;
    if (note.empty() || note.size() > 200 || note.find('\n') != std::string_view::npos)
      note = "see `npu-doctor versions`";
    os << st.dim(fmt::format("op list: torch_npu {} ({})", terminal_safe(report.summary.torch_npu),
                             terminal_safe(note)))
       << '\n';
  }
  if (const auto& b = report.summary.breakdown; b && b->step_ns > 0)
    os << st.dim(device_time_line(*b, report.summary.steps)) << '\n';
  os << terminal_safe(summary_line(report)) << '\n';
}

}  // namespace npud
