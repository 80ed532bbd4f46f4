// FREQ001 ai-core-freq-drop: AI Core ops that ran while the AI Cores were clocked down, from
// the "AI Core Freq" counters of a torch_npu trace_view.json, the advisor's "AI Core Frequency
// Issues" (msprof-analyze ai_core_freq_checker.py, frequency_threshold 0.05). See
// docs/rules/FREQ001.md.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {
namespace {

constexpr double kDropRatio = 0.05;   // the advisor's frequency_threshold
constexpr size_t kTop = 10;           // its SHOW_TOPK_OPS

struct FreqGroup {
  size_t count = 0;
  int64_t time_ns = 0;
  double drop_sum = 0, freq_sum = 0;
  float min_mhz = 0, max_mhz = 0;
};

class AiCoreFreqDrop final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FREQ001", "ai-core-freq-drop",
        "AI Core ops that ran below the cores' top frequency (trace_view AI Core Freq counters)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.ai_core_freq.empty()) return;
    std::vector<FreqSample> freq = t.ai_core_freq;
    std::stable_sort(freq.begin(), freq.end(), [](const FreqSample& a, const FreqSample& b) { return a.ts_ns < b.ts_ns; });
    // The rated frequency: the advisor reads info.json's aic_frequency; the highest sample is
    // what the cores reached in this profile.
    float top = 0;
    for (const FreqSample& f : freq) top = std::max(top, f.mhz);
    if (top <= 0) return;
    std::map<std::string, FreqGroup> groups;
    for (const Kernel& k : t.kernels) {
      std::string_view type = t.str(k.task_type);
      if (type != "AI_CORE" && type != "MIX_AIC") continue;
      // The lowest frequency of the samples in force during the op (a sample holds until the next).
      auto it = std::upper_bound(freq.begin(), freq.end(), k.start_ns,
                                 [](int64_t ts, const FreqSample& f) { return ts < f.ts_ns; });
      if (it == freq.begin()) continue;   // before the first sample: unknown
      float lowest = std::prev(it)->mhz;
      for (; it != freq.end() && it->ts_ns < k.start_ns + k.dur_ns; ++it) lowest = std::min(lowest, it->mhz);
      FreqGroup& g = groups[normalize_task_name(t.str(k.name))];
      if (g.count == 0) g.min_mhz = g.max_mhz = lowest;
      ++g.count;
      g.time_ns += k.dur_ns;
      g.drop_sum += double(top - lowest);
      g.freq_sum += lowest;
      g.min_mhz = std::min(g.min_mhz, lowest), g.max_mhz = std::max(g.max_mhz, lowest);
    }
    std::vector<std::pair<std::string, FreqGroup>> dropped;
    for (auto& [op, g] : groups)
      if (g.drop_sum / (double(top) * double(g.count)) >= kDropRatio) dropped.emplace_back(op, g);
    std::stable_sort(dropped.begin(), dropped.end(), [](const auto& a, const auto& b) { return a.second.time_ns > b.second.time_ns; });
    if (dropped.size() > kTop) dropped.resize(kTop);
    for (const auto& [op, g] : dropped) {
      double ratio = g.drop_sum / (double(top) * double(g.count));
      Finding f;
      f.rule = std::string(id());
      f.severity = Severity::Warning;
      f.location.op = op;
      f.metrics = {{"count", double(g.count)},         {"time_ns", double(g.time_ns)},
                   {"drop_ratio", ratio},              {"avg_mhz", g.freq_sum / double(g.count)},
                   {"min_mhz", double(g.min_mhz)},     {"top_mhz", double(top)}};
      // At a lower clock the op takes longer in proportion: the part above the top clock's time.
      f.cost_ns = int64_t(double(g.time_ns) * ratio);
      f.message = fmt::format("{}: {} call{}, {}, ran {:.1f}% below the AI Cores' top {:.0f} MHz (avg {:.0f}, min {:.0f} MHz)",
                              op, g.count, g.count == 1 ? "" : "s", format_duration(g.time_ns), 100 * ratio, top,
                              g.freq_sum / double(g.count), g.min_mhz);
      f.fix = advice("FREQ001", "fix");
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& freq001_rule() {
  static const AiCoreFreqDrop rule;
  return rule;
}

}  // namespace npud
