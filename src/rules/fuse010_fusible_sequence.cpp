// FUSE010 fusible-sequence: device op sequences (3-10 consecutive tasks, same names and shapes)
// that repeat and are bound by data movement (MTE) or by the host's dispatch, the advisor's
// "Fusible Operator Analysis" (msprof-analyze fusible_operator_checker.py, thresholds from
// rules/en/fusible_operator.yaml). See docs/rules/FUSE010.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/kernel_shapes.hpp"

namespace npud {
namespace {

constexpr size_t kMinLength = 2;          // yaml min_length: windows of min_length + 1 tasks and more
constexpr size_t kMaxLength = 10;         // yaml max_length
constexpr double kHostThreshold = 0.4;    // execution / wall span below this: host-bound
constexpr double kMteThreshold = 0.8;     // mte time / AI Core time above this: MTE-bound
constexpr double kSpanShare = 0.01;       // sequence_duration_threshold: total span / profile span
constexpr size_t kMinOccurrences = 5;     // sequence_count_threshold (strictly more)
constexpr size_t kTop = 5;                // top_num

float or0(float v) { return std::isnan(v) ? 0.f : v; }

// The advisor's MTE time of one task: data in (mte2) plus data out (fixpipe / mte3).
double mte_us(const KernelDetail& d) {
  return std::max(or0(d.aic_mte2_us), or0(d.aiv_mte2_us)) + std::max(or0(d.aic_fixpipe_us), or0(d.aiv_mte3_us));
}

// The busy time the MTE time is a share of: the cube side's, or the vector side's for vector
// ops (the advisor divides by aicore_time alone, 0 for AI_VECTOR_CORE tasks, so it never calls
// a vector-op sequence MTE-bound).
double core_us(const KernelDetail& d) { return std::max(or0(d.aicore_us), or0(d.aiv_us)); }

bool breaks_window(const Trace& t, const Kernel& k) {
  if (k.kind == TaskKind::AiCpu || k.kind == TaskKind::Communication) return true;
  std::string_view n = t.str(k.name);
  for (std::string_view p : {"hcom", "lccl", "lcoc"})
    if (n.size() >= p.size() && std::equal(p.begin(), p.end(), n.begin(), [](char a, char b) {
          return a == (b >= 'A' && b <= 'Z' ? char(b - 'A' + 'a') : b);
        }))
      return true;
  return false;
}

struct Sequence {
  size_t first_start = 0, first_end = 0;   // task indexes of its first occurrence
  size_t length = 0, count = 0;
  double wall_us = 0, exec_us = 0, mte_us = 0;
  bool mte_bound = false, host_bound = false;
};

class FusibleSequence final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FUSE010", "fusible-sequence",
        "repeated device op sequences bound by data movement or host dispatch: fusion candidates (NPU PMU times)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    // The tasks of kernel_details in start order; the advisor needs the MTE time columns.
    std::vector<const Kernel*> tasks;
    bool has_mte = false;
    for (const Kernel& k : t.kernels)
      if (const KernelDetail* d = detail_of(t, k)) {
        tasks.push_back(&k);
        has_mte = has_mte || !std::isnan(d->aic_mte2_us) || !std::isnan(d->aiv_mte2_us);
      }
    if (tasks.size() < kMinLength + 1 || !has_mte) return;
    std::stable_sort(tasks.begin(), tasks.end(), [](const Kernel* a, const Kernel* b) { return a->start_ns < b->start_ns; });
    double span_us = double(tasks.back()->start_ns + tasks.back()->dur_ns - tasks.front()->start_ns) / 1000.0;
    if (span_us <= 0) return;
    auto key_of = [&](const Kernel& k) {
      const KernelDetail& d = *detail_of(t, k);
      return fmt::format("{}-{}-{}", t.str(k.name), t.str(d.input_shapes), t.str(d.output_shapes));
    };
    std::vector<std::string> keys;
    keys.reserve(tasks.size());
    for (const Kernel* k : tasks) keys.push_back(key_of(*k));

    std::map<std::string, Sequence> found;
    std::vector<std::string> order;   // first-seen order, as the advisor's OrderedDict
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (breaks_window(t, *tasks[i])) continue;
      const KernelDetail& d0 = *detail_of(t, *tasks[i]);
      std::string key = keys[i];
      double exec = double(tasks[i]->dur_ns) / 1000.0, mte = mte_us(d0), core = core_us(d0);
      for (size_t n = 1; n < kMaxLength && i + n < tasks.size(); ++n) {
        const Kernel& k = *tasks[i + n];
        if (breaks_window(t, k)) break;
        const KernelDetail& d = *detail_of(t, k);
        key += "|" + keys[i + n];
        exec += double(k.dur_ns) / 1000.0;
        mte += mte_us(d);
        core += core_us(d);
        double wall = double(k.start_ns + k.dur_ns - tasks[i]->start_ns) / 1000.0;
        bool host = wall > 0 && exec / wall < kHostThreshold;
        bool mte_bound = core > 0 && mte / core > kMteThreshold;
        if ((!host && !mte_bound) || n < kMinLength) continue;
        auto [it, fresh] = found.try_emplace(key);
        Sequence& s = it->second;
        if (fresh) {
          s.first_start = i, s.first_end = i + n, s.length = n + 1;
          order.push_back(key);
        }
        s.wall_us += wall, s.exec_us += exec, s.mte_us += mte, ++s.count;
        s.mte_bound = mte_bound, s.host_bound = host;   // the last occurrence's flags, as the advisor
      }
    }
    // Keep repeated sequences worth the span; of a sequence and its longer extensions keep the
    // one with the most total time (the advisor's post_processing).
    std::vector<const std::pair<const std::string, Sequence>*> kept;
    auto qualifies = [&](const Sequence& s) { return s.count > kMinOccurrences && (s.wall_us / span_us > kSpanShare || s.mte_bound); };
    const std::pair<const std::string, Sequence>* best = nullptr;
    std::string base;
    for (const std::string& key : order) {
      const auto& entry = *found.find(key);
      if (!qualifies(entry.second)) continue;
      if (!best) best = &entry;
      else if (key.starts_with(base) && entry.second.wall_us > best->second.wall_us) best = &entry;
      else if (!key.starts_with(base)) kept.push_back(best), best = &entry;
      base = key;
    }
    if (best) kept.push_back(best);
    std::stable_sort(kept.begin(), kept.end(), [](auto* a, auto* b) { return a->second.wall_us > b->second.wall_us; });
    if (kept.size() > kTop) kept.resize(kTop);
    for (const auto* entry : kept) {
      const Sequence& s = entry->second;
      std::vector<std::string> names;
      for (size_t j = s.first_start; j <= s.first_end; ++j) names.push_back(normalize_task_name(t.str(tasks[j]->name)));
      std::string ops;
      for (const std::string& n : names) ops += (ops.empty() ? "" : " -> ") + n;
      Finding f;
      f.rule = std::string(id());
      f.severity = s.wall_us / span_us >= 0.05 ? Severity::Warning : Severity::Info;
      f.location.op = names.front();
      f.metrics = {{"count", double(s.count)},
                   {"length", double(s.length)},
                   {"start_index", double(s.first_start)},
                   {"end_index", double(s.first_end)},
                   {"wall_ns", s.wall_us * 1000},
                   {"exec_ns", s.exec_us * 1000},
                   {"mte_ns", s.mte_us * 1000},
                   {"mte_bound", s.mte_bound ? 1.0 : 0.0},
                   {"host_bound", s.host_bound ? 1.0 : 0.0}};
      const char* bound = s.mte_bound && s.host_bound ? "MTE- and host-bound"
                          : s.mte_bound               ? "MTE-bound (data movement)"
                                                      : "host-bound (gaps between the ops)";
      f.message = fmt::format("{} ops {} repeat {} times, {}: {} wall, {} executing, {} moving data (tasks {}-{})",
                              s.length, ops, s.count, bound, format_duration(int64_t(s.wall_us * 1000)),
                              format_duration(int64_t(s.exec_us * 1000)), format_duration(int64_t(s.mte_us * 1000)),
                              s.first_start, s.first_end);
      // Host-bound: the gaps are lost; MTE-bound: the intermediate tensors' round trips.
      f.cost_ns = int64_t((s.host_bound ? s.wall_us - s.exec_us : s.mte_us / double(s.length)) * 1000);
      f.fix = advice("FUSE010", s.host_bound ? "fix_host_bound" : "fix_mte_bound");
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& fuse010_rule() {
  static const FusibleSequence rule;
  return rule;
}

}  // namespace npud
