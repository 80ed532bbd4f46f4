// HOT001 hot-ops: where the time goes. The top N aten ops by host self time and the top N
// device tasks by device time, one Info finding per listed entry (so JSON consumers get
// structured metrics per op). See docs/rules/HOT001.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

bool is_ascend_task(const Trace& t, const Kernel& k) {
  if (t.caps.npu_tasks) return true;
  std::string_view type = t.str(k.task_type);
  return type.starts_with("AI_") || type.starts_with("MIX_");
}

class HotOps final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"HOT001", "hot-ops",
        "top ops by host self time and top device tasks by device time",
        Severity::Info};
    return kInfo;
  }
  bool ranks_timings() const override { return true; }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const size_t top_n = ctx.options.top_n;
    if (top_n == 0) return;

    GroupMap host;
    int64_t host_total = 0;
    for (const Op& op : t.ops) {
      // Dispatcher ops only ("aten::", "npu::", "c10d::"...): profilers also file record_function
      // ranges such as "enumerate(DataLoader)#..." as cpu ops.
      if (op.kind != OpKind::Aten || t.str(op.name).find("::") == std::string_view::npos) continue;
      EventGroup& g = host.get(std::string(t.str(op.name)));
      if (g.what.empty()) g.what = t.str(op.name);
      g.add(op.step_index, op.self_ns);
      add_saturating(host_total, op.self_ns);
    }
    GroupMap device;
    int64_t device_total = 0;
    for (const Kernel& k : t.kernels) {
      if (k.kind == TaskKind::Sync) continue;
      std::string name = is_ascend_task(t, k) ? normalize_task_name(t.str(k.name)) : std::string(t.str(k.name));
      bool created = false;
      EventGroup& g = device.get(name, &created);
      if (created) g.what = std::move(name);
      g.add(k.step_index, k.dur_ns);
      add_saturating(device_total, k.dur_ns);
    }

    emit(host.groups(), host_total, top_n, true, out);
    emit(device.groups(), device_total, top_n, false, out);
  }

 private:
  static void emit(std::vector<EventGroup>& groups, int64_t total, size_t top_n, bool is_host,
                   std::vector<Finding>& out) {
    if (total <= 0) return;
    size_t n = std::min(top_n, groups.size());
    std::partial_sort(groups.begin(), groups.begin() + n, groups.end(), [](const EventGroup& a, const EventGroup& b) {
      if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
      return a.what < b.what;
    });
    for (size_t i = 0; i < n; ++i) {
      const EventGroup& g = groups[i];
      if (g.time_ns <= 0) break;
      double s = share(g.time_ns, total);
      double avg = double(g.time_ns) / double(g.count);
      Finding f;
      f.rule = "HOT001";
      f.severity = Severity::Info;
      f.message = fmt::format("{} #{} {}: {} {} ({} of {}), {} call{}, avg {}", is_host ? "host op" : "device task",
                              i + 1, g.what, format_duration(g.time_ns), is_host ? "self time" : "device time",
                              format_share(s), is_host ? "aten self time" : "device task time", g.count,
                              g.count == 1 ? "" : "s", format_duration(int64_t(avg)));
      f.location.op = g.what;
      f.metrics = {{"rank", double(i + 1)},
                   {"is_device", is_host ? 0.0 : 1.0},
                   {"count", double(g.count)},
                   {"time_ns", double(g.time_ns)},
                   {"avg_ns", avg},
                   {"share", s}};
      // Time spent, not lost: it ranks the entries among the Info findings.
      f.cost_ns = g.time_ns;
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& hot001_rule() {
  static const HotOps rule;
  return rule;
}

}  // namespace npud
