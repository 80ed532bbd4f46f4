// The cluster's HTML page (docs/cluster.md): per-rank step bars, slow ranks, findings only some
// ranks have, the per-rank table (report/html_parts.hpp).
#include "cluster/cluster_html.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "report/html_parts.hpp"

namespace npud {
namespace {

using std::string;
using std::string_view;
using namespace html;

// One row per rank: computing, communication not overlapped with it, free; each as a share of
// the longest mean step, so ranks compare at a glance.
void rank_chart(std::ostream& os, const ClusterReport& r, const std::vector<const RankRow*>& rows) {
  constexpr int kLabelW = 70, kBarW = 640, kTextW = 200, kRowH = 18;
  // One colour table for the legend and the bars.
  struct Part { const char* key; const char* legend; const char* color; };
  constexpr Part kParts[] = {{"computing", "computing", "#4f81bd"},
                             {"communication", "communication (not overlapped)", "#f2a541"},
                             {"free", "free", "#d9d9d9"}};
  double longest = 1;
  for (const RankRow* row : rows) longest = std::max(longest, row->step_ns);
  int h = int(rows.size()) * kRowH + 10;
  os << "<div class=\"legend\">";
  for (const Part& p : kParts)
    os << "<span data-mark=\"" << p.key << "\"><i style=\"background:" << p.color << "\"></i>" << p.legend << "</span>";
  os << "</div>\n" << svg_open("rank-chart", kLabelW + kBarW + kTextW, h);
  std::set<int64_t> slow;   // ranks with a warning: their labels are marked
  for (const SlowRank& s : r.slow)
    if (s.severity >= Severity::Warning) slow.insert(s.rank);
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankRow& row = *rows[i];
    double y = 5 + double(i) * kRowH, x = kLabelW;
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\"{}>rank {}</text>", kLabelW - 6, y + 12,
                      slow.count(row.rank) ? " style=\"font-weight:bold;fill:#b3261e\"" : "", row.rank);
    const double parts[] = {row.computing_ns, row.communication_ns - row.overlapped_ns, row.free_ns};
    for (size_t p = 0; p < std::size(kParts); ++p) {
      double w = kBarW * std::max(0.0, parts[p]) / longest;
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" data-mark=\"{}\"/>", x,
                        y + 2, w, kRowH - 5, kParts[p].color, kParts[p].key);
      x += w;
    }
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLabelW + kBarW + 6, y + 12,
                      row.step_ns < 0 ? "not compared (notes)" : ms(int64_t(row.step_ns)) + " / step");
  }
  os << "</svg>\n";
}

}  // namespace

void render_cluster_html(std::ostream& os, const ClusterReport& r) {
  page_begin(os, "npu-doctor cluster report", r.source);
  os << "<h2>Summary</h2>\n<div class=\"cards\" id=\"summary-cards\">\n";
  card(os, "ranks", r.world_size > 0 ? fmt::format("{} of {}", r.ranks.size(), r.world_size) : std::to_string(r.ranks.size()));
  card(os, "median step", ms(int64_t(r.median_step_ns)));
  card(os, "slow ranks", std::to_string(r.slow.size()), r.slow.empty() ? "better" : "worse");
  card(os, "findings only some ranks have", std::to_string(r.partial.size()), r.partial.empty() ? "" : "sev-warning");
  card(os, "findings on every rank", std::to_string(r.common.size()));
  card(os, "communication wait", r.wait_basis.empty() ? "not known" : r.wait_basis);
  os << "</div>\n";
  for (const auto& w : r.warnings) os << "<p class=\"sev-warning\">" << html_escape(w) << "</p>\n";
  for (const auto& why : r.inconsistent)
    os << "<p class=\"sev-warning\">Not one job? " << html_escape(why)
       << ": the slow ranks compare runs that did not wait for each other.</p>\n";

  os << "<h2>Slow ranks</h2>\n<div class=\"panel\" id=\"slow-ranks\">\n";
  if (r.slow.empty()) os << "<p>None: no rank is more than 5% of a step above the other ranks' median.</p>\n";
  for (const SlowRank& s : r.slow)
    os << fmt::format("<p><span class=\"sev-{}\">{}</span> {}</p>\n", to_string(s.severity), to_string(s.severity),
                      html_escape(s.message));
  if (!r.spreads.empty()) {
    os << fmt::format("<table id=\"spreads\"><tr><th>spread across ranks (msprof-analyze's check: above {} of the mean "
                      "step, {})</th><th class=\"num\">max - min</th><th>max</th><th>min</th></tr>\n",
                      format_share(kSlowShare), spread_ms(r.spreads.front().mean_step_ns));
    for (const Spread& sp : r.spreads)
      os << fmt::format("<tr><td>{}{}</td><td class=\"num\">{}</td><td>{}, rank {}{}</td><td>{}, rank {}{}</td></tr>\n",
                        html_escape(sp.dimension), sp.above ? " (above)" : "", spread_ms(sp.spread_ns),
                        spread_ms(sp.max_ns), sp.max_rank, step_label(sp.max_step), spread_ms(sp.min_ns), sp.min_rank,
                        step_label(sp.min_step));
    os << "</table>\n";
  }
  os << "</div>\n";

  // At most 128 bars: rank 0, the slow ranks, then the others in order.
  std::vector<const RankRow*> rows;
  std::set<int64_t> slow;
  for (const SlowRank& s : r.slow) slow.insert(s.rank);
  for (const RankRow& row : r.ranks)
    if (rows.empty() || slow.count(row.rank)) rows.push_back(&row);
  for (const RankRow& row : r.ranks)
    if (rows.size() < 128 && std::find(rows.begin(), rows.end(), &row) == rows.end()) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const RankRow* a, const RankRow* b) { return a->rank < b->rank; });
  section_begin(os, "rank-chart-section", "Mean step per rank", "computing, communication not overlapped, free");
  os << "<div class=\"panel\">\n";
  rank_chart(os, r, rows);
  if (rows.size() < r.ranks.size())
    os << fmt::format("<p class=\"note\">{} of {} ranks drawn (rank 0 and the slow ones first); the table has all.</p>\n",
                      rows.size(), r.ranks.size());
  os << "</div>\n";
  section_end(os);

  section_begin(os, "partial-section", "Findings only some ranks have", std::to_string(r.partial.size()));
  os << "<div class=\"panel\" id=\"partial-findings\">\n";
  if (r.partial.empty()) os << "<p>None.</p>\n";
  else os << "<table><tr><th>severity</th><th>rule</th><th>where</th><th>ranks</th><th>message</th></tr>\n";
  for (const PartialFinding& p : r.partial) {
    std::string ranks = rank_list(p.ranks, 0, 32);
    std::string where = finding_place(p.finding);
    os << fmt::format("<tr><td class=\"sev-{0}\">{0}</td><td>{1}</td><td class=\"name\">{2}</td><td>{3}</td><td>{4}</td></tr>\n",
                      to_string(p.finding.severity), html_escape(p.finding.rule), html_escape(shorten(where, 80)),
                      html_escape(ranks), html_escape(p.finding.message));
  }
  if (!r.partial.empty()) os << "</table>\n";
  os << "</div>\n";
  section_end(os);

  section_begin(os, "rank-table-section", "Per rank", fmt::format("{} ranks", r.ranks.size()));
  os << "<div class=\"panel\"><table id=\"rank-table\"><tr><th>rank</th><th class=\"num\">steps</th>"
        "<th class=\"num\">step</th><th class=\"num\">computing</th><th class=\"num\">communication</th>"
        "<th class=\"num\">wait</th><th class=\"num\">overlap</th><th class=\"num\">free</th><th class=\"num\">findings</th></tr>\n";
  auto cell = [](double ns) { return ns < 0 ? std::string("-") : ms(int64_t(ns)); };
  for (const RankRow& row : r.ranks)
    os << fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                      "<td class=\"num\">{}</td></tr>\n",
                      row.rank, row.steps, cell(row.step_ns), cell(row.computing_ns), cell(row.communication_ns),
                      cell(row.comm_wait_ns), cell(row.overlapped_ns), cell(row.free_ns), row.findings);
  os << "</table>\n";
  for (const std::string& line : input_lines(r)) os << "<p class=\"note input-source\">" << html_escape(line) << "</p>\n";
  os << "</div>\n";
  section_end(os);

  if (!r.link_bandwidth.empty()) {  // HCCL bandwidth records only (docs/communication.md)
    section_begin(os, "links-section", "Communication links across ranks", std::to_string(r.links.size()));
    os << "<div class=\"panel\" id=\"link-bandwidth\">\n";
    for (const Finding& f : r.links)
      os << fmt::format("<p><span class=\"sev-{0}\">{0}</span> {1} {2}</p>\n", to_string(f.severity), html_escape(f.rule),
                        html_escape(f.message));
    os << "<table><tr><th>step</th><th>rank</th><th class=\"num\">SDMA MB</th><th class=\"num\">SDMA ms</th>"
          "<th class=\"num\">SDMA GB/s</th><th class=\"num\">RDMA MB</th><th class=\"num\">RDMA ms</th>"
          "<th class=\"num\">RDMA GB/s</th></tr>\n";
    for (const RankLinkBandwidth& b : r.link_bandwidth)
      os << fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{:.4f}</td><td class=\"num\">{:.4f}</td>"
                        "<td class=\"num\">{:.4f}</td><td class=\"num\">{:.4f}</td><td class=\"num\">{:.4f}</td>"
                        "<td class=\"num\">{:.4f}</td></tr>\n",
                        b.step_number >= 0 ? std::to_string(b.step_number) : "-", b.rank, b.sdma_mb, b.sdma_ms, b.sdma_gbs(), b.rdma_mb,
                        b.rdma_ms, b.rdma_gbs());
    os << "</table></div>\n";
    section_end(os);
  }

  section_begin(os, "common-section", "Findings on every rank", std::to_string(r.common.size()));
  os << "<div class=\"panel\">\n";
  if (r.common.empty()) os << "<p>None.</p>\n";
  for (const Finding& f : r.common)
    os << fmt::format("<p><span class=\"sev-{0}\">{0}</span> {1} {2}</p>\n", to_string(f.severity), html_escape(f.rule),
                      html_escape(f.message));
  os << "</div>\n";
  section_end(os);
  if (!r.notes.empty()) {
    section_begin(os, "notes-section", "Notes", std::to_string(r.notes.size()));
    os << "<div class=\"panel\"><ul>\n";
    for (const auto& n : r.notes) os << "<li>" << html_escape(n) << "</li>\n";
    os << "</ul></div>\n";
    section_end(os);
  }
  page_end(os);
}

}  // namespace npud
