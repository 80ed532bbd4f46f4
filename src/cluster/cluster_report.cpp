#include "cluster/cluster_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "cluster/cluster_input.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

// The median of `sorted` (ascending) without one element equal to `mine`, in O(log n): "the
// other ranks' median" for each of N ranks costs N log N, not N^2 log N (16,384 ranks).
double median_without(const std::vector<double>& sorted, double mine) {
  size_t n = sorted.size();
  if (n <= 1) return 0;
  // Which copy of an equal value is left out never changes what remains.
  size_t p = size_t(std::lower_bound(sorted.begin(), sorted.end(), mine) - sorted.begin());
  auto at = [&](size_t k) { return sorted[k < p ? k : k + 1]; };   // the k-th of what remains
  size_t m = n - 1;
  return m % 2 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2;
}

// A dimension's per-step value of one step (ns); transfer/wait need the wait.
double value_of(const StepBreakdown& b, std::string_view dim) {
  if (dim == "computing") return double(b.computing_ns);
  if (dim == "free") return double(b.free_ns);
  if (dim == "communication") return double(b.communication_ns);
  if (dim == "communication not overlapped") return double(b.comm_not_overlapped_ns());
  if (dim == "stage") return double(b.stage_ns);
  if (dim == "bubble") return double(b.bubble_ns);
  if (dim == "wait") return double(std::max<int64_t>(b.comm_wait_ns, 0));
  // A measured wait can exceed the communication the device tasks show (msprof counts the
  // whole op, tasks may be missing from the trace): never a negative transfer.
  if (dim == "transfer") return double(std::max<int64_t>(0, b.communication_ns - std::max<int64_t>(b.comm_wait_ns, 0)));
  return double(b.step_ns);
}

double mean_of(const std::vector<StepBreakdown>& steps, std::string_view dim) {
  if (steps.empty()) return 0;
  double sum = 0;
  for (const StepBreakdown& b : steps) sum += value_of(b, dim);
  return sum / double(steps.size());
}

std::string explain(const SlowRank& s) {
  std::string how = fmt::format("{} per step above the other ranks' median of {} ({} of a step)",
                                format_duration(int64_t(s.value_ns - s.median_ns)), format_duration(int64_t(s.median_ns)),
                                format_share(s.share_of_step));
  std::string where = s.worst_step >= 0 ? fmt::format("; furthest in step {} (+{})", s.worst_step,
                                                      format_duration(int64_t(s.worst_step_excess_ns)))
                                        : "";
  if (s.dimension == "computing")
    return fmt::format("rank {} computes {}{}: a straggler, every collective waits for it. Compare its inputs "
                       "(sequence lengths, batch), its findings and its device against the others",
                       s.rank, how, where);
  if (s.dimension == "free")
    return fmt::format("rank {}'s device is idle {}{}: this rank is host-bound (input pipeline, host-device syncs, "
                       "Python work between launches); its own findings say where",
                       s.rank, how, where);
  if (s.dimension == "transfer")
    return fmt::format("rank {} spends {} transferring in collectives{}: a slow link or a busy switch port, "
                       "not waiting",
                       s.rank, how, where);
  if (s.dimension == "wait")
    return fmt::format("rank {} waits {} in collectives{}: it is held up by slower ranks, not slow itself",
                       s.rank, how, where);
  if (s.dimension == "communication")
    return fmt::format("rank {} communicates {}{}: {}", s.rank, how, where,
                       "per-collective timings are missing, so waiting and a slow link cannot be told apart");
  return fmt::format("rank {}'s steps take {}{}", s.rank, how, where);
}

// The mean of a field a source may not record (-1 on a step): -1 unless every step has it.
double mean_if_recorded(const std::vector<StepBreakdown>& steps, std::string_view dim) {
  for (const StepBreakdown& b : steps)
    if (value_of(b, dim) < 0) return -1;
  return steps.empty() ? -1 : mean_of(steps, dim);
}

// msprof-analyze's advisor (SlowRankAnalyzer): per dimension, max - min over every (rank,
// step) row, reported above 5 % of the mean row's computing + communication not overlapped +
// free. The first rank in rank order wins ties.
std::vector<Spread> spreads_of(const std::vector<const RankSummary*>& ranks,
                               const std::vector<std::vector<StepBreakdown>>& steps) {
  std::vector<Spread> out;
  if (ranks.size() < 2) return out;
  double total = 0;
  size_t rows = 0;
  for (const auto& st : steps)
    for (const StepBreakdown& b : st) {
      total += double(b.computing_ns + b.comm_not_overlapped_ns() + b.free_ns);
      ++rows;
    }
  if (rows == 0) return out;
  for (std::string_view dim : {"computing", "communication not overlapped", "free"}) {
    Spread sp;
    sp.dimension = std::string(dim);
    sp.mean_step_ns = total / double(rows);
    bool first = true;
    for (size_t r = 0; r < ranks.size(); ++r)
      for (const StepBreakdown& b : steps[r]) {
        double v = value_of(b, dim);
        if (first || v > sp.max_ns) sp.max_ns = v, sp.max_rank = ranks[r]->rank, sp.max_step = b.number;
        if (first || v < sp.min_ns) sp.min_ns = v, sp.min_rank = ranks[r]->rank, sp.min_step = b.number;
        first = false;
      }
    sp.spread_ns = sp.max_ns - sp.min_ns;
    sp.above = sp.spread_ns > kSlowShare * sp.mean_step_ns;
    out.push_back(sp);
  }
  return out;
}

// Ranks whose `dim` is more than kSlowShare of a step above the other ranks' median.
// `steps[i]`: rank i's steps (waits filled in).
void find_slow(const std::vector<const RankSummary*>& ranks, const std::vector<std::vector<StepBreakdown>>& steps,
               std::string_view dim, double step_ns, bool wait_known, std::vector<SlowRank>& out) {
  if (ranks.size() < 2 || step_ns <= 0) return;
  std::vector<double> values;
  for (const auto& st : steps) values.push_back(mean_of(st, dim));
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  // Every rank's value of each step number, sorted: made once, when the first slow rank needs it.
  std::map<int64_t, std::vector<double>> by_step;
  for (size_t r = 0; r < ranks.size(); ++r) {
    double m = median_without(sorted, values[r]);
    double share = (values[r] - m) / step_ns;
    if (share <= kSlowShare) continue;
    SlowRank s;
    s.rank = ranks[r]->rank;
    s.dimension = std::string(dim);
    s.value_ns = values[r];
    s.median_ns = m;
    s.share_of_step = share;
    s.severity = dim == "wait" || (dim == "communication" && !wait_known) ? Severity::Info : Severity::Warning;
    if (by_step.empty()) {
      for (const auto& st : steps)
        for (const StepBreakdown& b : st) by_step[b.number].push_back(value_of(b, dim));
      for (auto& [number, v] : by_step) std::sort(v.begin(), v.end());
    }
    // The step where this rank is furthest above the others' median of that step.
    for (const StepBreakdown& b : steps[r]) {
      double mine = value_of(b, dim);
      const std::vector<double>& same_step = by_step[b.number];
      if (same_step.size() < 2) continue;   // no other rank has this step
      double excess = mine - median_without(same_step, mine);
      if (excess > s.worst_step_excess_ns) {
        s.worst_step_excess_ns = excess;
        s.worst_step = b.number;
      }
    }
    s.message = explain(s);
    out.push_back(std::move(s));
  }
}

// Some time recorded: an empty trace (no events, `[]`, metadata only) has one step of 0 ns.
bool has_time(const RankSummary& s) {
  return std::any_of(s.steps.begin(), s.steps.end(), [](const StepBreakdown& b) { return b.step_ns > 0; });
}

// Steps from ProfilerStep markers (numbered), not the whole trace as one span (-1).
bool is_stepped(const RankSummary& s) {
  return std::any_of(s.steps.begin(), s.steps.end(), [](const StepBreakdown& b) { return b.number >= 0; });
}

constexpr size_t kMissingListed = 64;

// One note for the ranks left out for one reason: "rank 4 (a.json): why", or "ranks 3,4,5
// (a.json, b.json, c.json, ...): why".
void note_left_out(const std::vector<const RankSummary*>& left_out, std::string_view why,
                   std::vector<std::string>& notes) {
  if (left_out.empty()) return;
  std::vector<int64_t> numbers;
  std::string sources;
  for (size_t i = 0; i < left_out.size(); ++i) {
    numbers.push_back(left_out[i]->rank);
    if (i < 3) sources += (i ? ", " : "") + left_out[i]->source;
  }
  notes.push_back(fmt::format("rank{} {} ({}{}): {}", numbers.size() == 1 ? "" : "s", rank_list(numbers), sources,
                              left_out.size() > 3 ? ", ..." : "", why));
}

// A rank whose device idles longer than the others' while its steps are no longer, when
// another rank computes longer: its idle time is most likely the wait for that straggler at
// the next collective (a trace whose collective kernels do not show the wait), not a
// host-bound rank. With few ranks the others' median includes the straggler, so this comes
// up whenever a straggler has less idle time. Said, and made info, when the straggler's
// extra computing covers the extra idle time.
void explain_idle_by_stragglers(std::vector<SlowRank>& slow) {
  double straggler_excess = 0;
  std::string list;
  std::set<int64_t> step_slow;
  for (const SlowRank& s : slow) {
    if (s.dimension == "step") step_slow.insert(s.rank);
    if (s.dimension != "computing") continue;
    straggler_excess = std::max(straggler_excess, s.value_ns - s.median_ns);
    list += (list.empty() ? "" : ", ") + std::to_string(s.rank);
  }
  if (list.empty()) return;
  for (SlowRank& s : slow) {
    if (s.dimension != "free" || step_slow.count(s.rank) || s.value_ns - s.median_ns > straggler_excess) continue;
    bool self = false;
    for (const SlowRank& c : slow) self = self || (c.dimension == "computing" && c.rank == s.rank);
    if (self) continue;
    s.severity = Severity::Info;
    s.message = fmt::format("rank {}'s device is idle {} per step above the other ranks' median of {} ({} of a step), "
                            "its steps no longer than theirs: most likely it idles waiting for the rank{} that "
                            "compute{} longer ({}), not host-bound",
                            s.rank, format_duration(int64_t(s.value_ns - s.median_ns)),
                            format_duration(int64_t(s.median_ns)), format_share(s.share_of_step),
                            list.find(',') == std::string::npos ? "" : "s",
                            list.find(',') == std::string::npos ? "s" : "", list);
  }
}

bool worse(const Finding& a, const Finding& b) {
  return std::tie(a.severity, a.cost_ns) > std::tie(b.severity, b.cost_ns);
}

}  // namespace

// COMM004 / COMM005 over every rank's communication records (docs/communication.md).
static void add_link_findings(const std::vector<const RankSummary*>& ranks, const std::vector<const Rule*>* selected,
                              ClusterReport& r) {
  bool any = std::any_of(ranks.begin(), ranks.end(), [](const RankSummary* s) { return !s->comm_ops.empty(); });
  if (!any) return;
  Trace comm = comm_trace(ranks);
  r.link_bandwidth = rank_link_bandwidth(comm);
  std::vector<const Rule*> link_rules;
  for (const Rule* rule : {&comm004_rule(), &comm005_rule()})
    if (!selected || std::find(selected->begin(), selected->end(), rule) != selected->end()) link_rules.push_back(rule);
  for (const Rule* rule : link_rules) r.link_rules_run.emplace_back(rule->id());
  if (link_rules.empty()) return;
  AnalysisContext ctx{comm, Knowledge::builtin().newest(), {}};
  r.links = run_rules(ctx, link_rules);
}

namespace {

// Slow ranks among `ranks` (one comparison set; `steps[i]`: rank i's steps, waits filled in),
// against the set's median step time.
void judge_slow(const std::vector<const RankSummary*>& ranks, const std::vector<std::vector<StepBreakdown>>& steps,
                bool wait_known, std::vector<SlowRank>& out) {
  std::vector<double> step_times;
  for (const auto& st : steps) step_times.push_back(mean_of(st, "step"));
  const double median_step = median(step_times);
  std::vector<SlowRank> slow;
  for (std::string_view dim : {"step", "computing", "free"}) find_slow(ranks, steps, dim, median_step, wait_known, slow);
  explain_idle_by_stragglers(slow);
  if (wait_known) {
    find_slow(ranks, steps, "transfer", median_step, wait_known, slow);
    find_slow(ranks, steps, "wait", median_step, wait_known, slow);
  } else {
    std::vector<int64_t> stragglers;
    for (const SlowRank& s : slow)
      if (s.dimension == "computing" || s.dimension == "free") stragglers.push_back(s.rank);
    size_t first = slow.size();
    find_slow(ranks, steps, "communication", median_step, wait_known, slow);
    if (!stragglers.empty())
      for (size_t i = first; i < slow.size(); ++i) {
        std::string list;
        for (int64_t k : stragglers) list += (list.empty() ? "" : ", ") + std::to_string(k);
        slow[i].message += fmt::format("; most likely it waits for the slow rank{} above ({}): a rank that "
                                       "computes or idles longer makes the others wait in each collective",
                                       stragglers.size() == 1 ? "" : "s", list);
      }
  }
  for (SlowRank& s : slow) out.push_back(std::move(s));
}

// The process groups a rank's collectives ran in (kNoGroup: collectives whose trace names none).
std::vector<uint32_t> groups_of(const ClusterInput& in, const MergedRank& m) {
  std::vector<uint32_t> out;
  for (uint32_t p : m.patterns)
    if (!in.patterns[p].empty()) out.push_back(in.keys[in.patterns[p].front()].group);
  if (out.empty()) out.push_back(kNoGroup);   // no collectives: with the ranks whose groups are unknown
  return out;
}

// The compared ranks (indices) that are judged against each other: ranks joined by process
// groups they share, directly or through others, wait for each other; ranks that share none
// never do (two jobs, or parts of one that never meet), so their step times say nothing about
// each other. Without recorded groups, one set of all the ranks. Sets in order of their first rank.
std::vector<std::vector<size_t>> comparison_sets(const ClusterInput& in, const std::vector<const MergedRank*>& ranks) {
  std::vector<size_t> parent(ranks.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto find = [&parent](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  if (in.records_groups()) {
    std::unordered_map<uint32_t, size_t> first_member;
    for (size_t i = 0; i < ranks.size(); ++i)
      for (uint32_t g : groups_of(in, *ranks[i])) {
        auto [it, fresh] = first_member.try_emplace(g, i);
        if (!fresh) parent[find(i)] = find(it->second);
      }
  } else {
    for (size_t i = 1; i < ranks.size(); ++i) parent[i] = 0;
  }
  std::vector<std::vector<size_t>> sets;
  std::unordered_map<size_t, size_t> set_of_root;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto [it, fresh] = set_of_root.try_emplace(find(i), sets.size());
    if (fresh) sets.emplace_back();
    sets[it->second].push_back(i);
  }
  return sets;
}


// build_cluster_report's phases, in the order it runs them, and the state they share.
struct ClusterBuild {
  ClusterBuild(const ClusterInput& in, ClusterReport& r) : in(in), r(r) {}

  const ClusterInput& in;
  ClusterReport& r;
  std::vector<const MergedRank*> all;            // the readable ranks, by rank
  std::vector<const MergedRank*> ranks;          // compared
  std::vector<const MergedRank*> with_findings;  // ranks whose findings are compared
  std::vector<std::vector<StepBreakdown>> steps; // compared rank i's steps, waits filled in
  std::unordered_map<const MergedRank*, size_t> compared_index;
  bool wait_known = false;
  // What the ranks record about the job, gathered row by row.
  std::set<int64_t> seen;
  std::map<int64_t, std::vector<std::string>> sources_of_rank;
  std::set<int64_t> world_sizes;
  std::set<std::string> versions;
  std::vector<double> step_times;

  void sort_out_ranks();
  void copy_steps();
  void fill_waits();
  void tabulate_ranks();
  RankRow row_of(const MergedRank* m);
  void note_rank_records(const RankSummary& s);
  void note_inconsistent_job();
  void count_missing_ranks();
  void find_slow_ranks();
  void compare_findings();
};

void ClusterBuild::sort_out_ranks() {
  for (const MergedRank& m : in.ranks)
    if (m.summary.failed.empty()) all.push_back(&m);   // a failed rank holds nothing: its command names it
  std::stable_sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->summary.rank < b->summary.rank; });

  // The ranks compared. A rank with no time at all (no events, `[]`, metadata only) has
  // nothing to compare: in the medians it would make every real rank look slow. A rank
  // without ProfilerStep markers among stepped ranks has one "step" spanning its whole trace
  // (several steps of work): compared per step it would be a straggler. Both are listed
  // (times "-"), named in a note and left out of the slow ranks; the second keeps its
  // findings in the findings comparison, the first has none to compare.
  bool any_stepped = false;
  for (const MergedRank* m : all) any_stepped = any_stepped || (has_time(m->summary) && is_stepped(m->summary));
  std::vector<const RankSummary*> no_time, stepless;
  for (const MergedRank* m : all) {
    if (!has_time(m->summary)) {
      no_time.push_back(&m->summary);
      continue;
    }
    with_findings.push_back(m);
    if (any_stepped && !is_stepped(m->summary)) stepless.push_back(&m->summary);
    else ranks.push_back(m);
  }
  note_left_out(no_time, "no events or no time recorded: left out of the comparisons", r.notes);
  note_left_out(stepless, "no ProfilerStep markers, the whole trace is one span: left out of the per-step "
                          "comparisons with the stepped ranks", r.notes);
}

// Each compared rank's steps are copied to take the estimated waits.
void ClusterBuild::copy_steps() {
  for (const MergedRank* m : ranks) {
    compared_index[m] = steps.size();
    steps.push_back(m->summary.steps);
  }
}

// Waits: measured where the source has them on every step, else estimated from collectives.
void ClusterBuild::fill_waits() {
  bool measured = !ranks.empty();
  for (const auto& st : steps)
    for (const StepBreakdown& b : st) measured = measured && b.comm_wait_ns >= 0;
  bool any_collectives = false;
  for (const MergedRank* m : ranks) any_collectives = any_collectives || !m->collective_ns.empty();
  if (measured) {
    r.wait_basis = "measured";
  } else if (any_collectives && ranks.size() >= 2) {
    r.wait_basis = "estimated from collectives";
    for (size_t i = 0; i < ranks.size(); ++i) {
      std::vector<std::pair<int64_t, int64_t>> waits = in.estimated_waits(*ranks[i]);
      for (StepBreakdown& b : steps[i]) {
        auto it = std::lower_bound(waits.begin(), waits.end(), std::pair<int64_t, int64_t>(b.number, INT64_MIN));
        b.comm_wait_ns = it != waits.end() && it->first == b.number ? it->second : 0;
      }
    }
    if (!in.records_groups())
      r.notes.push_back("the traces record no process groups (Kineto does from torch 2.2 on): collectives are matched "
                        "across all ranks by name, step and order, as if every rank were in one group");
  } else {
    size_t with_wait = 0;
    for (const auto& st : steps)
      with_wait += std::any_of(st.begin(), st.end(), [](const StepBreakdown& b) { return b.comm_wait_ns >= 0; });
    if (with_wait)
      r.notes.push_back(fmt::format("communication wait measured on {} of {} ranks only: not compared across ranks",
                                    with_wait, ranks.size()));
  }
  wait_known = !r.wait_basis.empty();
}

// Every readable rank's row in rank order, each with what it records about the job.
void ClusterBuild::tabulate_ranks() {
  for (const MergedRank* m : all) {
    r.ranks.push_back(row_of(m));
    note_rank_records(m->summary);
  }
}

// A rank's means per step; -1 (shown "-") for a rank left out of the comparisons.
RankRow ClusterBuild::row_of(const MergedRank* m) {
  const RankSummary& s = m->summary;
  RankRow row;
  row.rank = s.rank;
  row.source = s.source;
  row.findings = m->finding_count;
  row.warnings = s.warning_count;
  auto compared = compared_index.find(m);
  if (compared == compared_index.end()) {
    row.step_ns = row.computing_ns = row.communication_ns = row.overlapped_ns = row.free_ns = -1;
  } else {
    const std::vector<StepBreakdown>& st = steps[compared->second];
    row.steps = st.size();
    row.step_ns = mean_of(st, "step");
    row.computing_ns = mean_of(st, "computing");
    row.communication_ns = mean_of(st, "communication");
    row.free_ns = mean_of(st, "free");
    double overlapped = 0;
    for (const StepBreakdown& b : st) overlapped += double(b.overlapped_ns);
    row.overlapped_ns = st.empty() ? 0 : overlapped / double(st.size());
    bool rank_wait = !st.empty();
    for (const StepBreakdown& b : st) rank_wait = rank_wait && b.comm_wait_ns >= 0;
    row.comm_wait_ns = rank_wait ? mean_of(st, "wait") : -1;
    row.stage_ns = mean_if_recorded(st, "stage");
    row.bubble_ns = mean_if_recorded(st, "bubble");
    step_times.push_back(row.step_ns);
  }
  row.step_source = s.step_source;
  row.wait_source = s.wait_source;
  return row;
}

// The rank, world size and torch_npu version a rank records, and its reader's warnings.
void ClusterBuild::note_rank_records(const RankSummary& s) {
  if (s.rank >= 0) sources_of_rank[s.rank].push_back(s.source);
  if (s.world_size > kMaxWorldSize) {
    r.warnings.push_back(fmt::format("{} records a world size of {}, more than {} ranks: not believed (missing ranks "
                                     "are not counted from it)",
                                     s.source, s.world_size, kMaxWorldSize));
  } else if (s.world_size > 0) {
    world_sizes.insert(s.world_size);
    r.world_size = std::max(r.world_size, s.world_size);
    if (s.rank >= s.world_size)
      r.inconsistent.push_back(fmt::format("{} says it is rank {} of a world of {} ranks", s.source, s.rank, s.world_size));
  }
  if (s.rank < 0) r.notes.push_back(fmt::format("{}: no rank recorded and none in the file name", s.source));
  if (s.collectives_truncated)
    r.notes.push_back(fmt::format("rank {}: more than {} collectives, the rest not compared", s.rank, kMaxCollectives));
  if (s.warning_count)
    r.notes.push_back(fmt::format("rank {}: {} reader warning{}{}{}", s.rank, s.warning_count,
                                  s.warning_count == 1 ? "" : "s", s.warnings.empty() ? "" : ", first: ",
                                  s.warnings.empty() ? "" : s.warnings.front()));
  if (!s.torch_npu.empty()) versions.insert(s.torch_npu);
}

// Profiles of one job have distinct ranks and one world size; anything else compares runs
// that did not wait for each other.
void ClusterBuild::note_inconsistent_job() {
  size_t duplicated = 0;
  for (const auto& [rank, sources] : sources_of_rank) {
    seen.insert(rank);
    if (sources.size() < 2) continue;
    ++duplicated;
    std::string list;
    for (size_t i = 0; i < sources.size() && i < 3; ++i) list += (i ? ", " : "") + sources[i];
    r.notes.push_back(fmt::format("{} inputs say they are rank {}: {}{}", sources.size(), rank, list,
                                  sources.size() > 3 ? ", ..." : ""));
  }
  if (duplicated)
    r.inconsistent.push_back(fmt::format("{} rank number{} appear{} in more than one input", duplicated,
                                         duplicated == 1 ? "" : "s", duplicated == 1 ? "s" : ""));
  if (world_sizes.size() > 1) {
    std::string list;
    for (int64_t w : world_sizes) list += (list.empty() ? "" : ", ") + std::to_string(w);
    r.inconsistent.push_back(fmt::format("the inputs record different world sizes ({})", list));
  }
  r.torch_npu = versions.size() == 1 ? *versions.begin() : versions.empty() ? "" : fmt::format("{} versions", versions.size());
  if (versions.size() > 1) r.notes.push_back("the ranks were analysed against different torch_npu versions");
}

// Missing ranks from the ranks seen: the count by subtraction, the first few by a walk
// that passes each seen rank at most once (never a loop over the whole world size).
void ClusterBuild::count_missing_ranks() {
  if (r.world_size > 0) {
    auto below = seen.lower_bound(r.world_size);
    r.missing_count = size_t(r.world_size) - size_t(std::distance(seen.begin(), below));
    for (int64_t i = 0; i < r.world_size && r.missing_ranks.size() < kMissingListed; ++i)
      if (!seen.count(i)) r.missing_ranks.push_back(i);
  }
}

void ClusterBuild::find_slow_ranks() {
  // Slow ranks within each set of ranks that wait for each other.
  std::vector<const RankSummary*> compared;
  for (const MergedRank* m : ranks) compared.push_back(&m->summary);
  std::vector<std::vector<size_t>> sets = comparison_sets(in, ranks);
  for (const auto& set : sets) {
    std::vector<const RankSummary*> members;
    std::vector<std::vector<StepBreakdown>> member_steps;
    for (size_t i : set) {
      members.push_back(compared[i]);
      member_steps.push_back(steps[i]);
    }
    judge_slow(members, member_steps, wait_known, r.slow);
  }
  if (sets.size() > 1) {
    std::string list;
    for (size_t k = 0; k < sets.size() && k < 4; ++k) {
      std::vector<int64_t> numbers;
      for (size_t i : sets[k]) numbers.push_back(compared[i]->rank);
      list += (k ? "; " : "") + rank_list(numbers, 0, 8);
    }
    r.notes.push_back(fmt::format("the ranks form {} sets that share no process group ({}{}): slow ranks and waits "
                                  "are judged within each set",
                                  sets.size(), list, sets.size() > 4 ? "; ..." : ""));
  }
  // Each slow rank with msprof-analyze's spread of its dimension (communication: the part
  // not overlapped, the advisor's "Communication").
  r.spreads = spreads_of(compared, steps);
  for (SlowRank& s : r.slow)
    for (const Spread& sp : r.spreads)
      if (sp.dimension == s.dimension || (s.dimension == "communication" && sp.dimension == "communication not overlapped"))
        s.message += fmt::format("; {} spread across ranks {} (rank {}{} to rank {}{})", sp.dimension,
                                 spread_ms(sp.spread_ns), sp.max_rank, step_label(sp.max_step), sp.min_rank,
                                 step_label(sp.min_step));
  std::stable_sort(r.slow.begin(), r.slow.end(), [](const SlowRank& a, const SlowRank& b) {
    return std::tie(a.severity, a.share_of_step) > std::tie(b.severity, b.share_of_step);
  });
}

// Findings: the same (rule, file, line, op) on every rank, or only on some, in the order of
// their identities (as a map of them would hold them), worst first.
void ClusterBuild::compare_findings() {
  std::vector<std::vector<int64_t>> ranks_of(in.findings.size());
  for (const MergedRank* m : with_findings)
    for (uint32_t id : m->finding_ids)
      if (ranks_of[id].empty() || ranks_of[id].back() != m->summary.rank) ranks_of[id].push_back(m->summary.rank);
  std::map<std::string, uint32_t> by_identity;
  for (uint32_t id = 0; id < in.findings.size(); ++id)
    if (!ranks_of[id].empty()) by_identity.emplace(finding_identity(in.findings[id].finding), id);
  for (const auto& [identity, id] : by_identity) {
    if (ranks_of[id].size() == with_findings.size()) r.common.push_back(in.findings[id].finding);
    else r.partial.push_back({in.findings[id].finding, std::move(ranks_of[id])});
  }
  std::stable_sort(r.common.begin(), r.common.end(), worse);
  std::stable_sort(r.partial.begin(), r.partial.end(),
                   [](const PartialFinding& a, const PartialFinding& b) { return worse(a.finding, b.finding); });
}

}  // namespace

ClusterReport build_cluster_report(const std::vector<RankSummary>& summaries, std::string source,
                                   const std::vector<const Rule*>* rules) {
  ClusterInput in;
  for (const RankSummary& s : summaries) in.add(s);
  return build_cluster_report(in, std::move(source), rules);
}

ClusterReport build_cluster_report(const ClusterInput& in, std::string source, const std::vector<const Rule*>* rules) {
  ClusterReport r;
  r.source = std::move(source);
  ClusterBuild b(in, r);
  b.sort_out_ranks();          // the readable ranks in rank order; which of them are compared
  b.copy_steps();
  b.fill_waits();
  b.tabulate_ranks();          // a row per rank; what each records about the job
  b.note_inconsistent_job();
  b.count_missing_ranks();
  r.median_step_ns = median(b.step_times);
  b.find_slow_ranks();         // per set of ranks that wait for each other, worst first
  b.compare_findings();
  // The link rules see every readable rank, the ones left out of the comparisons included.
  std::vector<const RankSummary*> inputs;
  for (const MergedRank* m : b.all) inputs.push_back(&m->summary);
  add_link_findings(inputs, rules, r);
  r.notes.insert(r.notes.end(), in.notes.begin(), in.notes.end());
  return r;
}

std::optional<Severity> worst_severity(const ClusterReport& r) {
  std::optional<Severity> w;
  auto see = [&w](Severity s) { if (!w || s > *w) w = s; };
  for (const SlowRank& s : r.slow) see(s.severity);
  for (const Finding& f : r.common) see(f.severity);
  for (const PartialFinding& p : r.partial) see(p.finding.severity);
  for (const Finding& f : r.links) see(f.severity);
  return w;
}

}  // namespace npud
