// COMM003 byte-alignment: HCCL SDMA copies between chips whose size is not a multiple of 512
// bytes: the DMA engine splits them into extra, partial transfers. msprof-analyze's "Byte
// Alignment Analysis" (advisor/analyzer/communication/alignment). docs/rules/COMM003.md.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

struct OpTally {
  int64_t bytes = 0, dur_ns = 0, unaligned_ns = 0;
  size_t unaligned = 0;
};

class ByteAlignment final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMM003", "byte-alignment",
        "HCCL SDMA tasks between chips whose size is not a multiple of 512 bytes (trace_view HCCL tasks)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    std::map<uint32_t, OpTally> ops;  // by the op task's index
    int64_t total_ns = 0, unaligned_ns = 0;
    for (const HcclTask& task : t.hccl_tasks) {
      if (task.op == kNone || t.str(task.transport) != "SDMA" || t.str(task.link) == "ON_CHIP" ||
          task.size_bytes <= kAlignBytes)
        continue;
      OpTally& o = ops[task.op];
      total_ns += task.dur_ns;
      o.bytes += task.size_bytes;
      o.dur_ns += task.dur_ns;
      if (task.size_bytes % kAlignBytes) {
        ++o.unaligned;
        o.unaligned_ns += task.dur_ns;
        unaligned_ns += task.dur_ns;
      }
    }
    std::vector<std::pair<uint32_t, OpTally>> bad;
    for (const auto& [op, o] : ops)
      if (o.unaligned) bad.emplace_back(op, o);
    if (bad.empty()) return;
    const double share_ = total_ns ? double(unaligned_ns) / double(total_ns) : 0;

    Finding f;
    f.rule = "COMM003";
    // The advisor's priority: low under 20 % of the checked SDMA time, high from 70 %.
    f.severity = share_ < 0.2 ? Severity::Info : Severity::Warning;
    f.message = fmt::format("{} HCCL op{} copy SDMA data not aligned to {} bytes: {} of {} of checked SDMA task time",
                            bad.size(), bad.size() == 1 ? "" : "s", kAlignBytes, format_duration(unaligned_ns),
                            format_duration(total_ns));
    std::stable_sort(bad.begin(), bad.end(), [](const auto& a, const auto& b) { return a.second.unaligned_ns > b.second.unaligned_ns; });
    f.location.op = std::string(t.str(t.hccl_tasks[bad.front().first].name));
    f.metrics = {{"op_count", double(bad.size())},
                 {"unaligned_ns", double(unaligned_ns)},
                 {"checked_ns", double(total_ns)},
                 {"unaligned_share", share_},
                 {"priority", share_ < 0.2 ? 0.0 : share_ >= 0.7 ? 2.0 : 1.0}};  // low / medium / high
    f.cost_ns = unaligned_ns;
    constexpr size_t kShown = 5;  // byte_alignment.yaml top_num
    for (size_t i = 0; i < bad.size() && i < kShown; ++i) {
      const OpTally& o = bad[i].second;
      double gbs = o.dur_ns ? double(o.bytes) / double(o.dur_ns) : 0;  // B/ns = GB/s
      f.notes.push_back(advice("COMM003", "op_note",
                               {{"op", t.str(t.hccl_tasks[bad[i].first].name)},
                                {"bytes", o.bytes},
                                {"time", format_duration(o.dur_ns)},
                                {"unaligned_time", format_duration(o.unaligned_ns)},
                                {"tasks", o.unaligned},
                                {"gbs", gbs_text(gbs)}}));
    }
    f.fix = advice("COMM003", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& comm003_rule() {
  static const ByteAlignment rule;
  return rule;
}

}  // namespace npud
