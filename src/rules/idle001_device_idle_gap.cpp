// IDLE001 device-idle-gap: time the device sat idle between tasks while the program was
// running, and what the host was doing meanwhile. See docs/rules/IDLE001.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

struct Gap {
  Interval span;
  int32_t step_index = -1;   // into Trace::steps, -1: outside every step
};

struct HostActivity {
  uint32_t op = kNone;        // innermost host op overlapping the gap on the main thread
  uint32_t runtime = kNone;   // runtime call covering most of the gap on the main thread
  std::string text;
};

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)); }

HostActivity host_activity(const TraceIndex& index, const Interval& gap) {
  const Trace& t = index.trace();
  HostActivity h;
  const int64_t mid = gap.start + gap.length() / 2;
  h.op = index.enclosing_op(index.main_pid(), index.main_tid(), mid);
  if (h.op == kNone) {
    // Nothing spans the midpoint: take the op overlapping the gap most.
    auto [begin, end] = index.thread_ops(index.main_pid(), index.main_tid());
    int64_t best = 0;
    for (uint32_t i = begin; i < end && t.ops[i].start_ns < gap.end; ++i) {
      int64_t o = overlap(t.ops[i].start_ns, t.ops[i].start_ns + t.ops[i].dur_ns, gap.start, gap.end);
      if (o > best) { best = o; h.op = i; }
    }
  }
  int64_t best = 0;
  for (uint32_t r = 0; r < t.runtime.size() && t.runtime[r].start_ns < gap.end; ++r) {
    const RuntimeCall& c = t.runtime[r];
    if (c.pid != index.main_pid() || c.tid != index.main_tid()) continue;
    int64_t o = overlap(c.start_ns, c.start_ns + c.dur_ns, gap.start, gap.end);
    if (o > best) { best = o; h.runtime = r; }
  }
  if (h.runtime != kNone && best * 2 < gap.length()) h.runtime = kNone;

  if (h.op != kNone) {
    h.text = "host in " + index.parent_chain(h.op, 2);
    std::string at = index.user_location(h.op);
    if (!at.empty()) h.text += " (" + at + ")";
  }
  if (h.runtime != kNone) {
    h.text += (h.text.empty() ? "host in " : ", ") + std::string(t.str(t.runtime[h.runtime].name));
  }
  if (h.text.empty()) h.text = "no host op recorded on the main thread (Python, data loading, or unprofiled work)";
  return h;
}

class DeviceIdleGap final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"IDLE001", "device-idle-gap",
        "device idle gaps between tasks and what the host did meanwhile",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    const int64_t min_gap = ctx.options.min_gap_ns();

    for (int32_t device : index.devices()) {
      const auto& busy = index.device_busy(device);
      if (busy.empty()) continue;
      const int64_t active_lo = busy.front().start, active_hi = busy.back().end;

      std::vector<Gap> gaps;
      int64_t window_ns = 0;
      auto scan = [&](int64_t lo, int64_t hi, int32_t step_index) {
        lo = std::max(lo, active_lo);
        hi = std::min(hi, active_hi);
        if (hi <= lo) return;
        add_saturating(window_ns, hi - lo);
        for (const Interval& g : gaps_within(busy, lo, hi, min_gap)) gaps.push_back({g, step_index});
      };
      if (!t.steps.empty()) {
        for (size_t s = 0; s < t.steps.size(); ++s)
          scan(t.steps[s].start_ns, t.steps[s].start_ns + t.steps[s].dur_ns, int32_t(s));
      } else {
        scan(active_lo, active_hi, -1);
      }
      if (gaps.empty() || window_ns <= 0) continue;

      int64_t idle = 0;
      for (const Gap& g : gaps) idle += g.span.length();
      std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) {
        if (a.span.length() != b.span.length()) return a.span.length() > b.span.length();
        return a.span.start < b.span.start;
      });
      const double idle_share = share(idle, window_ns);
      constexpr size_t kShown = 5;

      Finding f;
      f.rule = "IDLE001";
      f.severity = idle_share >= 0.10 ? Severity::Warning : Severity::Info;
      std::string dev = device >= 0 ? fmt::format("device {}", device) : "device";
      HostActivity largest = host_activity(index, gaps.front().span);
      // What the share is of, in the words of the device time line (report/device_time.cpp): the
      // steps' time while the device had work, gaps of at least --min-gap-us only (issue 40).
      f.message = fmt::format("{} idle {} in {} gap{} >= {} ({} of the {} {}); largest {} while {}", dev,
                              format_duration(idle), gaps.size(), gaps.size() == 1 ? "" : "s", format_duration(min_gap),
                              format_share(idle_share), format_duration(window_ns),
                              t.steps.empty() ? "from its first task to its last" : "of steps it ran in",
                              format_duration(gaps.front().span.length()), largest.text);
      if (largest.op != kNone) f.location = location_of(index, largest.op);
      f.metrics = {{"idle_ns", double(idle)},
                   {"idle_share", idle_share},
                   {"gap_count", double(gaps.size())},
                   {"largest_gap_ns", double(gaps.front().span.length())},
                   {"window_ns", double(window_ns)},
                   {"device", double(device)}};
      f.cost_ns = idle;
      for (size_t i = 0; i < gaps.size() && i < kShown; ++i) {
        const Gap& g = gaps[i];
        HostActivity h = i == 0 ? largest : host_activity(index, g.span);
        f.notes.push_back(
            advice("IDLE001", "gap_note",
                   {{"length", format_duration(g.span.length())},
                    {"start", format_duration(g.span.start)},
                    {"step", g.step_index >= 0 ? advice("IDLE001", "gap_step", {{"step", t.steps[g.step_index].number}}) : ""},
                    {"host", h.text}}));
      }
      f.fix = advice("IDLE001", "fix");
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& idle001_rule() {
  static const DeviceIdleGap rule;
  return rule;
}

}  // namespace npud
