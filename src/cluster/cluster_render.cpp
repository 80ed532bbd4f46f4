// The cluster view written to a stream as text and JSON (render_cluster_text,
// render_cluster_json), and the formatting helpers cluster_report.hpp declares for every view
// (rank_list, input_lines, spread_ms, ...). The report is built in cluster_report.cpp.
#include "cluster/cluster_report.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "util/escape.hpp"
#include "report/finding_json.hpp"
#include "util/json_writer.hpp"
#include "report/text_style.hpp"

namespace npud {

namespace {

constexpr size_t kRanksShown = 16;

std::string ms(double ns) { return ns < 0 ? "-" : fmt::format("{:.2f}", ns / 1e6); }

}  // namespace

std::string spread_ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

std::string step_label(int64_t step) { return step < 0 ? "" : fmt::format(" step {}", step); }

std::string rank_list(const std::vector<int64_t>& ranks, size_t total, size_t max_shown) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < max_shown; ++i) out += (i ? "," : "") + std::to_string(ranks[i]);
  total = std::max(total, ranks.size());
  if (total > max_shown) out += fmt::format(",... ({} ranks)", total);
  return out;
}

std::string finding_place(const Finding& f) {
  if (!f.location.file.empty()) return where(f.location);
  return f.location.op;
}

std::vector<std::string> input_lines(const ClusterReport& r) {
  std::map<std::string, std::vector<int64_t>> steps_from, waits_from;
  for (const RankRow& row : r.ranks) {
    steps_from[row.step_source].push_back(row.rank);
    if (!row.wait_source.empty()) waits_from[row.wait_source].push_back(row.rank);
  }
  std::vector<std::string> out;
  auto line = [&out](std::string_view what, const std::map<std::string, std::vector<int64_t>>& from) {
    std::string text;
    for (const auto& [source, ranks] : from)
      text += fmt::format("{}{} (rank{} {})", text.empty() ? "" : ", ", source.empty() ? "unknown" : source,
                          ranks.size() == 1 ? "" : "s", rank_list(ranks));
    if (!text.empty()) out.push_back(fmt::format("{} from: {}", what, text));
  };
  line("step times", steps_from);
  line("measured waits", waits_from);
  return out;
}

void render_cluster_text(std::ostream& os, const ClusterReport& r, bool color, bool verbose) {
  TextStyle st{color};
  os << st.bold(fmt::format("cluster: {} rank{}", r.ranks.size(), r.ranks.size() == 1 ? "" : "s"));
  if (r.world_size > 0) os << fmt::format(" of world size {}", r.world_size);
  os << fmt::format(" in {} (torch_npu knowledge {})\n", terminal_safe(r.source), terminal_safe(r.torch_npu));
  if (r.missing_count)
    os << fmt::format("  {} rank{} without a profile: {}\n", r.missing_count, r.missing_count == 1 ? "" : "s",
                      rank_list(r.missing_ranks, r.missing_count));
  for (const auto& w : r.warnings) os << "  " << st.severity(Severity::Warning) << " " << terminal_safe(w) << "\n";
  for (const auto& why : r.inconsistent)
    os << "  " << st.severity(Severity::Warning)
       << fmt::format(" not one job? {}: slow ranks below compare runs that did not wait for each other (notes at the end)\n",
                      terminal_safe(why));
  os << fmt::format("\nper rank, mean per step (ms){}:\n",
                    r.wait_basis.empty() ? "" : fmt::format("; wait {}", r.wait_basis));
  os << fmt::format("  {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "rank", "steps", "step", "computing",
                    "comm", "wait", "overlap", "free", "findings");
  auto print_row = [&](std::string_view label, const RankRow& row) {
    os << fmt::format("  {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}\n", label, row.steps,
                      ms(row.step_ns), ms(row.computing_ns), ms(row.communication_ns), ms(row.comm_wait_ns),
                      ms(row.overlapped_ns), ms(row.free_ns), row.findings);
  };
  // Many ranks: the first, the slow ones and a median row say what the full table would.
  const bool all = verbose || r.ranks.size() <= kRanksShown * 2;
  std::set<int64_t> slow;
  for (const SlowRank& s : r.slow) slow.insert(s.rank);
  size_t shown = 0;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankRow& row = r.ranks[i];
    if (!all && i > 0 && (!slow.count(row.rank) || shown >= kRanksShown)) continue;
    print_row(std::to_string(row.rank), row);
    ++shown;
  }
  if (!all) {
    RankRow med;
    auto column = [&](auto get) {
      std::vector<double> v;
      for (const RankRow& row : r.ranks)
        if (row.step_ns >= 0) v.push_back(double(get(row)));  // not the ranks left out of the comparisons
      return median(std::move(v));
    };
    med.steps = size_t(column([](const RankRow& x) { return x.steps; }));
    med.step_ns = column([](const RankRow& x) { return x.step_ns; });
    med.computing_ns = column([](const RankRow& x) { return x.computing_ns; });
    med.communication_ns = column([](const RankRow& x) { return x.communication_ns; });
    med.comm_wait_ns = column([](const RankRow& x) { return x.comm_wait_ns; });
    med.overlapped_ns = column([](const RankRow& x) { return x.overlapped_ns; });
    med.free_ns = column([](const RankRow& x) { return x.free_ns; });
    med.findings = size_t(column([](const RankRow& x) { return x.findings; }));
    print_row("median", med);
    os << fmt::format("  ({} of {} ranks shown: the first and the slow ones; --verbose or --format json for all)\n",
                      shown, r.ranks.size());
  }
  for (const std::string& line : input_lines(r)) os << "  " << terminal_safe(line) << "\n";
  if (!r.spreads.empty()) {
    os << "\n" << st.bold("spread across ranks")
       << fmt::format(" (max - min over every rank's steps, msprof-analyze's slow-rank check: above {} of the mean step "
                      "of {}):\n",
                      format_share(kSlowShare), spread_ms(r.spreads.front().mean_step_ns));
    for (const Spread& sp : r.spreads)
      os << fmt::format("  {:<29} {:>13}  max rank {}{} ({}), min rank {}{} ({}){}\n", sp.dimension,
                        spread_ms(sp.spread_ns), sp.max_rank, step_label(sp.max_step), spread_ms(sp.max_ns), sp.min_rank,
                        step_label(sp.min_step), spread_ms(sp.min_ns), sp.above ? ": above" : "");
  }
  os << "\n" << st.bold("slow ranks") << fmt::format(" (more than {} of a step above the others' median):\n", format_share(kSlowShare));
  if (r.slow.empty()) os << "  none\n";
  for (const SlowRank& s : r.slow) os << fmt::format("  {} {}\n", st.severity(s.severity), terminal_safe(s.message));

  os << "\n" << st.bold("findings only some ranks have");
  os << " (rank 0's log does not show them all):\n";
  if (r.partial.empty()) os << "  none\n";
  size_t limit = verbose ? r.partial.size() : 10;
  for (size_t i = 0; i < r.partial.size() && i < limit; ++i) {
    const PartialFinding& p = r.partial[i];
    os << fmt::format("  {} {} {} on rank{} {}: {}\n", st.severity(p.finding.severity), terminal_safe(p.finding.rule),
                      terminal_safe(cut_name(finding_place(p.finding))), p.ranks.size() == 1 ? "" : "s", rank_list(p.ranks),
                      terminal_safe(cut_name(p.finding.message, 200)));
  }
  if (r.partial.size() > limit) os << fmt::format("  ... {} more (--verbose)\n", r.partial.size() - limit);

  if (!r.link_bandwidth.empty()) {  // only with HCCL bandwidth records: other inputs' reports stay as they were
    os << "\n" << st.bold("communication links across ranks") << " (communication.json bandwidth, GB/s = MB / ms):\n";
    os << fmt::format("  {:>6} {:>6} {:>12} {:>12} {:>10} {:>12} {:>12} {:>10}\n", "step", "rank", "SDMA MB", "SDMA ms",
                      "SDMA GB/s", "RDMA MB", "RDMA ms", "RDMA GB/s");
    size_t shown = verbose ? r.link_bandwidth.size() : std::min<size_t>(r.link_bandwidth.size(), kRanksShown);
    for (size_t i = 0; i < shown; ++i) {
      const RankLinkBandwidth& b = r.link_bandwidth[i];
      os << fmt::format("  {:>6} {:>6} {:>12.4f} {:>12.4f} {:>10.4f} {:>12.4f} {:>12.4f} {:>10.4f}\n",
                        b.step_number >= 0 ? std::to_string(b.step_number) : "-", b.rank, b.sdma_mb, b.sdma_ms, b.sdma_gbs(), b.rdma_mb,
                        b.rdma_ms, b.rdma_gbs());
    }
    if (shown < r.link_bandwidth.size()) os << fmt::format("  ... {} more (--verbose)\n", r.link_bandwidth.size() - shown);
    // Only what was looked for is said to be absent (--select/--ignore may leave either rule out).
    auto ran = [&](std::string_view id) {
      return std::find(r.link_rules_run.begin(), r.link_rules_run.end(), id) != r.link_rules_run.end();
    };
    const bool slow = ran("COMM004"), retransmit = ran("COMM005");
    if (r.links.empty() && (slow || retransmit))
      os << fmt::format("  {}\n", slow && retransmit ? "no slow link, no RDMA retransmission"
                                   : slow          ? "no slow link (COMM005, RDMA retransmission, not selected)"
                                                   : "no RDMA retransmission (COMM004, slow links, not selected)");
    if (!slow && !retransmit) os << "  links not checked: COMM004 and COMM005 left out by --select/--ignore\n";
    for (const Finding& f : r.links) {
      os << fmt::format("  {} {}: {}\n", st.severity(f.severity), terminal_safe(f.rule), terminal_safe(cut_name(f.message, 200)));
      size_t shown = verbose ? f.notes.size() : std::min<size_t>(f.notes.size(), 8);
      for (size_t i = 0; i < shown; ++i) os << "      " << terminal_safe(f.notes[i]) << "\n";
      if (shown < f.notes.size()) os << fmt::format("      ... {} more (--verbose)\n", f.notes.size() - shown);
    }
  }

  os << "\n" << st.bold(fmt::format("findings on every rank: {}", r.common.size())) << "\n";
  limit = verbose ? r.common.size() : 5;
  for (size_t i = 0; i < r.common.size() && i < limit; ++i)
    os << fmt::format("  {} {} {}: {}\n", st.severity(r.common[i].severity), terminal_safe(r.common[i].rule),
                      terminal_safe(cut_name(finding_place(r.common[i]))), terminal_safe(cut_name(r.common[i].message, 200)));
  if (r.common.size() > limit)
    os << fmt::format("  ... {} more: `npu-doctor analyze` one rank's profile for each with its fix\n", r.common.size() - limit);
  if (!r.notes.empty()) {
    os << "\nnotes:\n";
    for (const auto& n : r.notes) os << "  " << terminal_safe(n) << "\n";
  }
}

namespace {

void ns_or_null(JsonWriter& w, std::string_view key, double ns) {
  w.key(key);
  if (ns < 0) w.null();
  else w.value(int64_t(ns));
}

}  // namespace

void render_cluster_json(std::ostream& os, const ClusterReport& r) {
  JsonWriter w(os);
  w.begin_object();
  tool_header(w, "cluster");
  w.field("source", r.source).field("torch_npu", r.torch_npu).field("world_size", r.world_size);
  w.field("missing_rank_count", uint64_t(r.missing_count));
  w.key("missing_ranks").begin_array();
  for (int64_t m : r.missing_ranks) w.value(m);
  w.end_array();
  w.field("median_step_ns", int64_t(r.median_step_ns));
  string_or_null(w, "wait_basis", r.wait_basis);
  w.key("ranks").begin_array();
  for (const RankRow& row : r.ranks) {
    w.begin_object().field("rank", row.rank).field("source", row.source).field("steps", uint64_t(row.steps));
    ns_or_null(w, "step_ns", row.step_ns);
    ns_or_null(w, "computing_ns", row.computing_ns);
    ns_or_null(w, "communication_ns", row.communication_ns);
    ns_or_null(w, "comm_wait_ns", row.comm_wait_ns);
    ns_or_null(w, "overlapped_ns", row.overlapped_ns);
    ns_or_null(w, "free_ns", row.free_ns);
    ns_or_null(w, "stage_ns", row.stage_ns);
    ns_or_null(w, "bubble_ns", row.bubble_ns);
    w.field("step_source", row.step_source);
    string_or_null(w, "wait_source", row.wait_source);
    w.field("findings", uint64_t(row.findings)).field("warnings", uint64_t(row.warnings)).end_object();
  }
  w.end_array();
  w.key("spreads").begin_array();
  for (const Spread& sp : r.spreads) {
    w.begin_object().field("dimension", sp.dimension).field("spread_ns", int64_t(sp.spread_ns));
    w.field("max_ns", int64_t(sp.max_ns)).field("max_rank", sp.max_rank).field("max_step", sp.max_step);
    w.field("min_ns", int64_t(sp.min_ns)).field("min_rank", sp.min_rank).field("min_step", sp.min_step);
    w.field("mean_step_ns", int64_t(sp.mean_step_ns)).field("above_threshold", sp.above).end_object();
  }
  w.end_array();
  w.key("slow_ranks").begin_array();
  for (const SlowRank& s : r.slow) {
    w.begin_object().field("rank", s.rank).field("dimension", s.dimension).field("severity", to_string(s.severity));
    w.field("value_ns", int64_t(s.value_ns)).field("median_ns", int64_t(s.median_ns)).field("share_of_step", s.share_of_step);
    w.field("worst_step", s.worst_step).field("worst_step_excess_ns", int64_t(s.worst_step_excess_ns));
    w.field("message", s.message).end_object();
  }
  w.end_array();
  w.key("partial_findings").begin_array();
  for (const PartialFinding& p : r.partial) {
    w.begin_object();
    write_finding_fields(w, p.finding, FindingAliases::Yes);
    w.key("ranks").begin_array();
    for (int64_t k : p.ranks) w.value(k);
    w.end_array().end_object();
  }
  w.end_array();
  write_findings(w, "common_findings", r.common, FindingAliases::Yes);
  if (!r.link_bandwidth.empty()) {  // only with HCCL bandwidth records (docs/communication.md)
    w.key("link_bandwidth").begin_array();
    for (const RankLinkBandwidth& b : r.link_bandwidth) {
      w.begin_object().field("step", b.step_number).field("rank", b.rank);
      w.field("sdma_mb", b.sdma_mb).field("sdma_ms", b.sdma_ms).field("sdma_gbs", b.sdma_gbs());
      w.field("rdma_mb", b.rdma_mb).field("rdma_ms", b.rdma_ms).field("rdma_gbs", b.rdma_gbs()).end_object();
    }
    w.end_array();
    write_findings(w, "link_findings", r.links, FindingAliases::Yes);
  }
  w.key("inconsistent").begin_array();
  for (const auto& n : r.inconsistent) w.value(n);
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& n : r.notes) w.value(n);
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& n : r.warnings) w.value(n);
  w.end_array();
  w.end_object();
  os << "\n";
}

}  // namespace npud
