#include "diff/trace_diff.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/op_totals.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/knowledge.hpp"
#include "util/escape.hpp"
#include "report/finding_json.hpp"
#include "report/render.hpp"
#include "util/json_writer.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

using Totals = OpTotals;

OpTable make_table(const Totals& before, const Totals& after) {
  std::map<std::string, OpDelta> rows;  // ordered: ties below sort by name, deterministically
  for (const auto& [name, tc] : before) {
    OpDelta& d = rows[name];
    d.name = name;
    d.before_ns = tc.first;
    d.before_count = tc.second;
  }
  for (const auto& [name, tc] : after) {
    OpDelta& d = rows[name];
    d.name = name;
    d.after_ns = tc.first;
    d.after_count = tc.second;
  }
  OpTable t;
  for (auto& [name, d] : rows) {
    add_saturating(t.before_ns, d.before_ns);
    add_saturating(t.after_ns, d.after_ns);
    add_saturating(t.before_count, d.before_count);
    add_saturating(t.after_count, d.after_count);
    t.rows.push_back(std::move(d));
  }
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const OpDelta& a, const OpDelta& b) {
    int64_t da = std::llabs(a.delta_ns()), db = std::llabs(b.delta_ns());
    if (da != db) return da > db;
    return std::llabs(a.delta_count()) > std::llabs(b.delta_count());
  });
  return t;
}

int64_t step_or_span(const ReportSummary& s, bool steps) { return steps ? s.step_time_ns : s.span_ns; }

std::string fixed_ms(int64_t ns) { return fmt::format("{:.3f} ms", double(ns) / 1e6); }
std::string signed_ms(int64_t ns) { return fmt::format("{:+.3f} ms", double(ns) / 1e6); }
std::string percent(int64_t before, int64_t after) {
  if (before == 0) return "n/a";
  return fmt::format("{:+.1f}%", 100.0 * double(after - before) / double(before));
}

constexpr std::string_view kNoHostOp = "(no host op)";

// Device time per launching op (outermost aten op of the launch).
Totals device_by_op_totals(const Trace& t, const TraceIndex& idx) {
  Totals out;
  for (const Kernel& k : t.kernels) {
    if (!is_busy_task(k)) continue;
    uint32_t op = idx.op_of_kernel(k);
    if (op != kNone) op = idx.top_aten(op);
    auto& e = out[op == kNone ? std::string(kNoHostOp) : std::string(t.str(t.ops[op].name))];
    add_saturating(e.first, k.dur_ns);
    e.second += 1;
  }
  return out;
}

// Per launching op of AFTER, the NPU-specific work under it that explains slowness.
struct Causes {
  int64_t aicpu = 0, transdata = 0, compile = 0, syncs = 0;
  std::vector<std::string> rules;
};

std::unordered_map<std::string, Causes> causes_by_op(const Trace& t, const TraceIndex& idx,
                                                     const std::vector<Finding>& findings) {
  std::unordered_map<std::string, Causes> out;
  auto name_of = [&](uint32_t op) { return op == kNone ? std::string(kNoHostOp) : std::string(t.str(t.ops[idx.top_aten(op)].name)); };
  for (const Kernel& k : t.kernels) {
    if (!is_busy_task(k)) continue;
    bool aicpu = k.kind == TaskKind::AiCpu, transdata = t.str(k.name).find("TransData") != std::string_view::npos;
    if (!aicpu && !transdata) continue;
    Causes& c = out[name_of(idx.op_of_kernel(k))];
    c.aicpu += aicpu;
    c.transdata += transdata;
  }
  for (const RuntimeCall& r : t.runtime) {
    bool compile = t.str(r.name).find("aclopCompileAndExecute") != std::string_view::npos;
    if (!compile && r.kind != RuntimeKind::Sync) continue;
    Causes& c = out[name_of(idx.op_of_runtime(r))];
    c.compile += compile;
    c.syncs += r.kind == RuntimeKind::Sync;
  }
  for (const Finding& f : findings) {
    if (f.rule == "HOT001" || f.location.op.empty()) continue;
    auto& rules = out[f.location.op].rules;
    if (std::find(rules.begin(), rules.end(), f.rule) == rules.end()) rules.push_back(f.rule);
  }
  return out;
}

std::string explain(const Causes& c) {
  std::vector<std::string> parts;
  if (c.aicpu) parts.push_back(fmt::format("{} AI-CPU task{} (FALLBACK001)", c.aicpu, c.aicpu == 1 ? "" : "s"));
  if (c.transdata) parts.push_back(fmt::format("{} TransData format conversion{}", c.transdata, c.transdata == 1 ? "" : "s"));
  if (c.compile) parts.push_back(fmt::format("{} compiled at dispatch (COMPILE001)", c.compile));
  if (c.syncs) parts.push_back(fmt::format("{} stream sync{} (SYNC001)", c.syncs, c.syncs == 1 ? "" : "s"));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  std::string rules;
  for (const auto& r : c.rules)
    if (out.find(r) == std::string::npos) rules += (rules.empty() ? "" : ", ") + r;
  if (!rules.empty()) out += (out.empty() ? "" : "; ") + ("findings: " + rules);
  return out;
}

}  // namespace

std::string device_of(const Trace& t) {
  if (t.caps.npu_tasks) return "npu";
  std::string_view d = t.env_value("device");
  if (!d.empty()) return std::string(d);
  return t.kernels.empty() ? "cpu" : "device";
}

OpTable device_by_op_table(const TraceIndex& bi, const TraceIndex& ai, const std::vector<Finding>& after_findings) {
  const Trace& before = bi.trace();
  const Trace& after = ai.trace();
  // Profiles of one model on two devices rarely hold the same number of steps: per step.
  auto per_step = [](Totals totals, const Trace& t) {
    if (t.steps.size() > 1)
      for (auto& [name, tc] : totals) tc.first /= int64_t(t.steps.size());
    return totals;
  };
  OpTable t = make_table(per_step(device_by_op_totals(before, bi), before), per_step(device_by_op_totals(after, ai), after));
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const OpDelta& a, const OpDelta& b) { return a.delta_ns() > b.delta_ns(); });
  auto causes = causes_by_op(after, ai, after_findings);
  for (OpDelta& r : t.rows)
    if (auto it = causes.find(r.name); it != causes.end()) r.why = explain(it->second);
  return t;
}

OpTable host_op_table(const Trace& before, const Trace& after) {
  return make_table(host_op_totals(before), host_op_totals(after));
}
OpTable device_op_table(const Trace& before, const Trace& after) {
  return make_table(device_task_totals(before), device_task_totals(after));
}

void match_findings(const std::vector<Finding>& before, const std::vector<Finding>& after, TraceDiff& out) {
  // Multiset match: two findings of the same key in BEFORE and one in AFTER = one fixed.
  std::unordered_map<std::string, std::vector<size_t>> in_after;
  for (size_t i = 0; i < after.size(); ++i) in_after[finding_identity(after[i])].push_back(i);
  std::vector<bool> used(after.size(), false);
  for (const Finding& f : before) {
    auto it = in_after.find(finding_identity(f));
    if (it != in_after.end() && !it->second.empty()) {
      used[it->second.back()] = true;
      it->second.pop_back();
      ++out.unchanged;
    } else if (f.rule == kHostRankingRule) {
      ++out.ranking_left;
    } else {
      out.fixed.push_back(f);
    }
  }
  for (size_t i = 0; i < after.size(); ++i) {
    if (used[i]) continue;
    if (after[i].rule == kHostRankingRule) ++out.ranking_entered;
    else out.added.push_back(after[i]);
  }
  for (const Finding& f : before) ++out.findings_by_rule[f.rule].first;
  for (const Finding& f : after) ++out.findings_by_rule[f.rule].second;
}

TraceDiff diff_traces(const TraceAnalysis& b, const TraceAnalysis& a) {
  const Trace& before = b.context.trace;
  const Trace& after = a.context.trace;
  TraceDiff d;
  d.before = b.report.summary;
  d.after = a.report.summary;
  d.torch_npu = a.version.version;
  bool steps = !before.steps.empty() && !after.steps.empty();
  d.step_basis = steps ? "step" : "span";
  d.before_step_ns = step_or_span(d.before, steps);
  d.after_step_ns = step_or_span(d.after, steps);
  d.host = host_op_table(before, after);
  d.device = device_op_table(before, after);
  d.before_device = device_of(before);
  d.after_device = device_of(after);
  d.device_by_op = device_by_op_table(b.context.index(), a.context.index(), a.report.findings);   // the indexes the rules built
  match_findings(b.report.findings, a.report.findings, d);
  return d;
}

void render_diff_text(std::ostream& os, const TraceDiff& d, const DiffTextOptions& o) {
  auto t = [](std::string_view s) { return terminal_safe(s); };
  os << fmt::format("before: {} ({})\nafter:  {} ({})\n\n", t(d.before.source), d.before.format, t(d.after.source),
                    d.after.format);
  os << fmt::format("{:<14} {:>14} -> {:>14}  {:>14} ({})\n", d.step_basis == "step" ? "mean step" : "trace span",
                    fixed_ms(d.before_step_ns), fixed_ms(d.after_step_ns), signed_ms(d.after_step_ns - d.before_step_ns),
                    percent(d.before_step_ns, d.after_step_ns));
  if (d.before.device_busy_share >= 0 || d.after.device_busy_share >= 0)
    os << fmt::format("{:<14} {:>13.1f}% -> {:>13.1f}%\n", "device busy", 100 * std::max(0.0, d.before.device_busy_share),
                      100 * std::max(0.0, d.after.device_busy_share));
  auto table = [&](const char* title, const OpTable& tab) {
    if (tab.rows.empty()) return;
    os << fmt::format("\n{} (total {} -> {}, {}; count {} -> {})\n", title, fixed_ms(tab.before_ns), fixed_ms(tab.after_ns),
                      signed_ms(tab.after_ns - tab.before_ns), tab.before_count, tab.after_count);
    os << fmt::format("  {:>12} {:>12} {:>8} {:>8} {:>8}  {}\n", "before", "after", "delta", "count", "dcount", "name");
    size_t n = 0;
    for (const auto& r : tab.rows) {
      if (n++ >= o.top) break;
      os << fmt::format("  {:>12} {:>12} {:>8} {:>8} {:>+8}  {}{}\n", fixed_ms(r.before_ns), fixed_ms(r.after_ns),
                        percent(r.before_ns, r.after_ns), r.after_count, r.delta_count(), t(cut_name(r.name)),
                        r.why.empty() || r.delta_ns() <= 0 ? "" : "  <- " + t(r.why));
    }
    if (tab.rows.size() > o.top) os << fmt::format("  ... {} more (see --format json)\n", tab.rows.size() - o.top);
  };
  // Across devices kernel names do not match: the ops that launched them do, so that table leads.
  const bool across = d.before_device != d.after_device;
  if (across) {
    os << fmt::format("devices        {:>14} -> {:>14}\n", d.before_device, d.after_device);
    table("Device time per step by launching op, slower first (counts: all steps; why: from AFTER)", d.device_by_op);
  }
  table("Host ops by self time", d.host);
  table(across ? "Device tasks by time (kernel names differ across devices: compare by op above)" : "Device tasks by time",
        d.device);
  if (!across) table("Device time per step by launching op, slower first (counts: all steps)", d.device_by_op);
  os << fmt::format("\nFindings: {} fixed, {} new, {} unchanged\n", d.fixed.size(), d.added.size(), d.unchanged);
  if (d.ranking_left + d.ranking_entered)
    os << fmt::format("  ({} {} entries left and {} entered the op-time ranking: not listed, a ranking is no problem)\n",
                      d.ranking_left, kHostRankingRule, d.ranking_entered);
  for (const auto& [rule, c] : d.findings_by_rule)
    os << fmt::format("  {:<12} {} -> {}\n", rule, c.first, c.second);
  auto list = [&](const char* title, const std::vector<Finding>& fs) {
    if (fs.empty()) return;
    os << "\n" << title << "\n";
    for (const auto& f : fs) {
      std::string where = f.location.file.empty() ? t(cut_name(f.location.op, 60)) : t(npud::where(f.location));
      os << fmt::format("  {} {} {}\n", f.rule, where, t(cut_name(f.message, 200)));
    }
  };
  list("Fixed", d.fixed);
  list("New", d.added);
}

namespace {

void summary_json(JsonWriter& w, const char* key, const ReportSummary& s) {
  w.key(key).begin_object();
  w.field("source", s.source).field("format", s.format);
  w.field("ops", uint64_t(s.ops)).field("kernels", uint64_t(s.kernels)).field("steps", uint64_t(s.steps));
  w.field("span_ns", s.span_ns);
  w.key("step_time_ns");
  if (s.steps) w.value(s.step_time_ns);
  else w.null();
  w.key("device_busy_share");
  if (s.device_busy_share >= 0) w.value(s.device_busy_share);
  else w.null();
  w.end_object();
}

void table_json(JsonWriter& w, const char* key, const OpTable& t) {
  w.key(key).begin_object();
  w.field("before_ns", t.before_ns).field("after_ns", t.after_ns).field("delta_ns", t.after_ns - t.before_ns);
  w.field("before_count", t.before_count).field("after_count", t.after_count)
      .field("delta_count", t.after_count - t.before_count);
  w.key("ops").begin_array();
  for (const auto& r : t.rows) {
    w.begin_object().field("name", r.name);
    w.field("before_ns", r.before_ns).field("after_ns", r.after_ns).field("delta_ns", r.delta_ns());
    w.field("before_count", r.before_count).field("after_count", r.after_count).field("delta_count", r.delta_count());
    if (!r.why.empty()) w.field("why", r.why);
    w.end_object();
  }
  w.end_array().end_object();
}

}  // namespace

void render_diff_json(std::ostream& os, const TraceDiff& d) {
  JsonWriter w(os);
  w.begin_object();
  tool_header(w, "diff");
  w.field("torch_npu", d.torch_npu);
  summary_json(w, "before", d.before);
  summary_json(w, "after", d.after);
  w.key("step_time").begin_object();
  w.field("basis", d.step_basis).field("before_ns", d.before_step_ns).field("after_ns", d.after_step_ns);
  w.field("delta_ns", d.after_step_ns - d.before_step_ns);
  w.end_object();
  table_json(w, "host_ops", d.host);
  table_json(w, "device_ops", d.device);
  table_json(w, "device_by_op", d.device_by_op);
  w.key("devices").begin_object().field("before", d.before_device).field("after", d.after_device).end_object();
  w.key("findings").begin_object();
  w.field("fixed_count", uint64_t(d.fixed.size())).field("new_count", uint64_t(d.added.size()));
  w.field("unchanged_count", uint64_t(d.unchanged));
  w.key("ranking_changes").begin_object().field("rule", kHostRankingRule).field("left", uint64_t(d.ranking_left));
  w.field("entered", uint64_t(d.ranking_entered)).end_object();
  w.key("by_rule").begin_object();
  for (const auto& [rule, c] : d.findings_by_rule) {
    w.key(rule).begin_object().field("before", uint64_t(c.first)).field("after", uint64_t(c.second)).end_object();
  }
  w.end_object();
  write_findings(w, "fixed", d.fixed);
  write_findings(w, "new", d.added);
  w.end_object();
  w.end_object();
  os << "\n";
}

}  // namespace npud
