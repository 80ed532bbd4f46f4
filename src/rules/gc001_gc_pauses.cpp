// GC001 gc-pauses: Python garbage collections inside the profiled steps (torch_npu records them
// as `gc` ranges when the profiler's experimental_config sets gc_detect_threshold). While the
// collector runs, the host queues nothing. See docs/rules/GC001.md.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// Ascend's advisor lists collections of 1 ms or more; a profile only holds those longer than
// the user's gc_detect_threshold anyway. Below 1 % of step time in all they are info.
constexpr int64_t kMinPauseNs = 1'000'000;
constexpr double kWarnGcShare = 0.01;
// Without gc events: a device idle window this long in which the host recorded (almost)
// nothing is a conjectured collection (the advisor's max_free_threshold and its ratios: host
// events under 1 % of the window's time and under one per 10 ms).
constexpr int64_t kMinSilenceNs = 200'000'000;
constexpr double kMaxSilentBusyShare = 0.01;
constexpr double kMaxSilentEventsPerNs = 1e-7;

// Device idle windows in which the host was silent: recorded on both sides of the window (a
// profile without host events, kernel_details.csv alone, says nothing about the host), no op
// enclosing the window on the main thread (then the host was busy: a long op, a DataLoader
// wait, a blocking sync) and almost no op or runtime call starting in it.
std::vector<Interval> silent_windows(const Trace& t, const TraceIndex& index) {
  const auto& busy = index.all_busy();
  if (busy.size() < 2) return {};
  std::vector<Interval> out;
  std::vector<std::pair<int64_t, int64_t>> host;   // (start, duration) of ops and runtime calls, by start
  int64_t host_end = std::numeric_limits<int64_t>::min();
  for (const Interval& gap : gaps_within(busy, busy.front().start, busy.back().end, kMinSilenceNs)) {
    uint32_t around = index.enclosing_op(index.main_pid(), index.main_tid(), gap.start, gap.length());
    if (around != kNone) continue;
    if (host.empty()) {   // sorted once, on the first window that needs it
      host.reserve(t.ops.size() + t.runtime.size());
      for (const Op& op : t.ops) host.emplace_back(op.start_ns, op.dur_ns);
      for (const RuntimeCall& r : t.runtime) host.emplace_back(r.start_ns, r.dur_ns);
      if (host.empty()) return {};
      std::sort(host.begin(), host.end());
      for (const auto& [start, dur] : host) host_end = std::max(host_end, start + dur);
    }
    if (host.front().first > gap.start || host_end < gap.end) continue;   // the host was not recorded all along
    size_t events = 0;
    int64_t busy_ns = 0;
    for (auto it = std::lower_bound(host.begin(), host.end(), std::make_pair(gap.start, std::numeric_limits<int64_t>::min()));
         it != host.end() && it->first < gap.end; ++it) {
      ++events;
      busy_ns += std::min(it->second, gap.end - it->first);
    }
    if (double(busy_ns) < kMaxSilentBusyShare * double(gap.length()) &&
        double(events) < kMaxSilentEventsPerNs * double(gap.length()))
      out.push_back(gap);
  }
  return out;
}

bool is_gc_event(const Trace& t, const Op& op) {
  if (op.kind != OpKind::Other) return false;
  std::string_view n = t.str(op.name);
  return n == "GC" || n == "gc" || n.starts_with("GC ") || n.starts_with("gc ") || n.find("garbage") != n.npos;
}

class GcPauses final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"GC001", "gc-pauses",
        "Python garbage collections of 1 ms or more in the steps (torch_npu gc events), or device idle windows of "
        "200 ms or more with a silent host (conjectured)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    EventGroup g;
    int64_t longest = 0;
    for (const Op& op : t.ops) {
      if (!is_gc_event(t, op) || op.dur_ns < kMinPauseNs) continue;
      g.add(op.step_index, op.dur_ns);
      longest = std::max(longest, op.dur_ns);
    }
    if (g.count == 0) {
      conjecture(t, index, out);
      return;
    }
    g.location.op = "gc";
    double s = share(g.time_ns, index.wall_ns());
    Finding f = timed_finding(index, id(), g);
    f.severity = s >= kWarnGcShare ? Severity::Warning : Severity::Info;
    f.message = fmt::format("{} garbage collection{} of 1 ms or more took {} ({} of {} time, longest {})", g.count,
                            g.count == 1 ? "" : "s", format_duration(g.time_ns), format_share(s),
                            index.step_count() ? "step" : "trace", format_duration(longest));
    f.metrics.push_back({"longest_ns", double(longest)});
    f.fix = advice("GC001", "fix");
    out.push_back(std::move(f));
  }

 private:
  // No gc events: long device idle windows with a silent host, reported as likely collections.
  void conjecture(const Trace& t, const TraceIndex& index, std::vector<Finding>& out) const {
    std::vector<Interval> windows = silent_windows(t, index);
    if (windows.empty()) return;
    EventGroup g;
    int64_t longest = 0;
    for (const Interval& w : windows) {
      g.add(-1, w.length());
      longest = std::max(longest, w.length());
    }
    g.location.op = "gc?";
    Finding f = timed_finding(index, id(), g);
    f.severity = Severity::Info;
    f.message = fmt::format("{} device idle window{} of 200 ms or more with a silent host ({} in all, longest {} at +{}): "
                            "likely garbage collection{} (the profile has no gc events to confirm)",
                            windows.size(), windows.size() == 1 ? "" : "s", format_duration(g.time_ns),
                            format_duration(longest), format_duration(windows.front().start),
                            windows.size() == 1 ? "" : "s");
    f.metrics.push_back({"longest_ns", double(longest)});
    f.fix = advice("GC001", "fix_conjecture", {{"fix", advice("GC001", "fix")}});
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& gc001_rule() {
  static const GcPauses rule;
  return rule;
}

}  // namespace npud
