// FALLBACK001 ai-cpu-task: device tasks that ran on the NPU's AI-CPU (the slow scalar
// cores) instead of the AI cores. See docs/rules/FALLBACK001.md.
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/npu_facts.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

class AiCpuTask final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FALLBACK001", "ai-cpu-task",
        "device tasks that ran on the NPU's AI-CPU instead of the AI cores",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    GroupMap groups;
    // Input dtypes per group (torch_npu kernel_details.csv), the usual reason an op has no
    // AI-core kernel.
    std::map<std::string, std::set<std::string>> dtypes;
    for (const Kernel& k : t.kernels) {
      if (k.kind != TaskKind::AiCpu) continue;
      std::string_view raw = t.str(k.name);
      std::string name = normalize_task_name(raw);
      bool created = false;
      EventGroup& g = groups.get(name, &created);
      if (created) {
        g.what = name;
        // Where the host launched it, when the trace links kernels to ops.
        uint32_t op = index.op_of_kernel(k);
        g.location = location_of(index, index.top_aten(op));
        if (!g.location.op.empty()) g.context = g.location.op;
        g.location.op = name;
      }
      g.add(k.step_index, k.dur_ns);
      g.add_example(raw);
      if (k.detail != kNone && t.kernel_details[k.detail].input_dtypes != 0 && dtypes[name].size() < 8)
        dtypes[name].insert(std::string(t.str(t.kernel_details[k.detail].input_dtypes)));
    }

    const int64_t device_ns = index.device_busy_ns();
    for (EventGroup& g : groups.groups()) {
      Finding f;
      f.rule = "FALLBACK001";
      f.severity = Severity::Warning;
      double device_share = share(g.time_ns, device_ns);
      double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
      f.message = fmt::format("{}: {} AI-CPU task{} on the NPU, {} ({} of device time)", g.what, g.count,
                              g.count == 1 ? "" : "s", format_duration(g.time_ns), format_share(device_share));
      f.location = g.location;
      f.metrics = {{"count", double(g.count)},
                   {"per_step", per_step},
                   {"time_ns", double(g.time_ns)},
                   {"avg_ns", g.count ? double(g.time_ns) / double(g.count) : 0.0},
                   {"device_share", device_share}};
      f.cost_ns = g.time_ns;
      bool is_cast = g.what.find("Cast") != std::string::npos;
      f.fix = advice("FALLBACK001", is_cast ? "fix_cast" : "fix");
      if (auto d = dtypes.find(g.what); d != dtypes.end()) {
        std::string list;
        bool float64 = false, int64 = false;
        for (const auto& x : d->second) {
          list += (list.empty() ? "" : ", ") + x;
          float64 = float64 || has_input_dtype(x, DType::F64);
          int64 = int64 || has_input_dtype(x, DType::I64);
        }
        f.notes.push_back(advice("FALLBACK001", "dtypes_note", {{"dtypes", list}}));
        if (float64) {
          f.message += ": float64 inputs";
          f.fix = advice("FALLBACK001", "fix_float64", {{"fix", f.fix}});
        } else if (int64) {
          f.message += ": int64 inputs";
        }
      }
      if (!g.context.empty()) f.notes.push_back(advice("FALLBACK001", "launched_by_note", {{"context", g.context}}));
      if (g.examples.size() > 1 || (g.examples.size() == 1 && g.examples[0] != g.what)) {
        std::string names;
        for (const auto& e : g.examples) names += (names.empty() ? "" : ", ") + e;
        f.notes.push_back(advice("FALLBACK001", "task_names_note", {{"names", names}}));
      }
      if (std::string_view fact = silent_task_fact(g.what); !fact.empty())
        f.notes.push_back(advice("FALLBACK001", "known_op_note", {{"fact", fact}}));
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& fallback001_rule() {
  static const AiCpuTask rule;
  return rule;
}

}  // namespace npud
