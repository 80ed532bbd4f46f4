// The HTML pages: analyze/run (and amp-check), diff, cluster. Each page opens with what the
// text report's first screen says (the top problems, or the diff's and cluster's headline
// numbers); charts, tables and the findings follow in folded sections (html_parts.hpp).
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "cluster/cluster_report.hpp"
#include "diff/trace_diff.hpp"
#include "report/escape.hpp"
#include "report/html_parts.hpp"
#include "report/source_snippet.hpp"
#include "util/saturate.hpp"

namespace npud {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t c = next_code_point(s, pos);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': case '\t': out += char(c); break;
      default:
        if (is_unsafe_for_terminal(c)) out += "\xEF\xBF\xBD";  // U+FFFD: visible, harmless
        else append_utf8(out, c);
    }
  }
  return out;
}

namespace {

using std::string;
using std::string_view;
using namespace html;

// --- op breakdown -------------------------------------------------------------------------

std::vector<Bar> top_bars(std::unordered_map<string, std::pair<int64_t, int64_t>>& totals, int64_t denom, size_t n,
                          const char* color) {
  std::vector<std::pair<string, std::pair<int64_t, int64_t>>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  std::vector<Bar> bars;
  for (size_t i = 0; i < rows.size() && i < n; ++i) {
    double share = denom > 0 ? 100.0 * double(rows[i].second.first) / double(denom) : 0;
    bars.push_back({rows[i].first, double(rows[i].second.first),
                    fmt::format("{} ({:.1f}%, {} calls)", ms(rows[i].second.first), share, rows[i].second.second), color});
  }
  return bars;
}

void op_breakdown(std::ostream& os, const Trace& t, const HtmlOptions& o) {
  std::unordered_map<string, std::pair<int64_t, int64_t>> host, device;
  int64_t host_total = 0, device_total = 0;
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::Aten) continue;
    auto& e = host[string(t.str(op.name))];
    add_saturating(e.first, op.self_ns);
    ++e.second;
    add_saturating(host_total, op.self_ns);
  }
  for (const Kernel& k : t.kernels) {
    if (!is_busy_task(k)) continue;
    auto& e = device[string(t.str(k.name))];
    add_saturating(e.first, k.dur_ns);
    ++e.second;
    add_saturating(device_total, k.dur_ns);
  }
  // A capture's host times are this machine's CPU (often no NPU at all): said where they are shown.
  const bool capture = t.format == InputFormat::Capture;
  string gist = device.empty() ? fmt::format("{} host ops{}", host.size(), capture ? " (this machine's CPU)" : "")
                               : fmt::format("{} device tasks, {} host ops", device.size(), host.size());
  section_begin(os, "ops-section", "Op time breakdown", gist);
  os << "<div class=\"panel\">\n";
  if (host.empty() && device.empty()) {
    os << "<p class=\"note\">The trace holds no aten ops or device tasks.</p><svg id=\"op-chart\" width=\"1\" "
          "height=\"1\"></svg>\n</div>\n";
    section_end(os);
    return;
  }
  if (!host.empty()) {
    os << fmt::format("<p>Host aten ops by self time{} (top {} of {}; total {})</p>\n",
                      capture ? ", on this machine's CPU: a capture's host times, not NPU costs" : "",
                      std::min(o.top_ops, host.size()), host.size(), ms(host_total));
    bar_chart(os, "op-chart", top_bars(host, host_total, o.top_ops, "#4a78c2"));
  }
  if (!device.empty()) {
    os << fmt::format("<p>Device tasks by time (top {} of {}; total {})</p>\n", std::min(o.top_ops, device.size()),
                      device.size(), ms(device_total));
    bar_chart(os, host.empty() ? "op-chart" : "device-chart", top_bars(device, device_total, o.top_ops, "#d9822b"));
  }
  os << "</div>\n";
  section_end(os);
}

}  // namespace

void render_html(std::ostream& os, const Report& r, const TraceIndex& index, const HtmlOptions& o) {
  const Trace& trace = index.trace();
  const ReportSummary& s = r.summary;
  const bool capture = trace.format == InputFormat::Capture;
  page_begin(os, fmt::format("npu-doctor {} report", r.command), s.source);
  // The text report's first screen: configuration, an incomplete capture (said first where
  // amp-check's section or the run's notes would otherwise speak before it), the run's notes,
  // then the top problems.
  if (!r.config_file.empty()) os << "<p class=\"note\">config: " << html_escape(r.config_file) << "</p>\n";
  if (r.amp || !r.notes.empty())
    for (const Finding& f : r.findings)
      if (f.first)
        os << "<p class=\"sev-" << to_string(f.severity) << "\">capture incomplete (" << html_escape(f.rule)
           << "): " << html_escape(f.message) << "</p>\n";
  for (const std::string& note : r.notes) os << "<p class=\"note\">note: " << html_escape(note) << "</p>\n";
  os << "<p class=\"summary-line\">" << html_escape(summary_line(r)) << "</p>\n";
  top_problems_list(os, r.findings);

  size_t counts[3] = {0, 0, 0};
  for (const Finding& f : r.findings) ++counts[size_t(f.severity)];
  string step = s.steps ? "mean step " + ms(s.step_time_ns) : "trace span " + ms(s.span_ns);
  section_begin(os, "summary", "Summary",
                step + (s.device_busy_share >= 0 ? fmt::format(", device busy {:.1f}% of the trace span", 100 * s.device_busy_share)
                                                 : ", no device events"));
  os << "<div class=\"cards\" id=\"summary-cards\">\n";
  card(os, "errors", std::to_string(counts[2]), "sev-error");
  card(os, "warnings", std::to_string(counts[1]), "sev-warning");
  card(os, "info", std::to_string(counts[0]), "sev-info");
  card(os, s.steps ? "mean step time" : "trace span", ms(s.steps ? s.step_time_ns : s.span_ns));
  card(os, "device busy (of the trace span)",
       s.device_busy_share >= 0 ? fmt::format("{:.1f}%", 100 * s.device_busy_share) : "no device events");
  card(os, "steps / ops / device tasks", fmt::format("{} / {} / {}", s.steps, s.ops, s.kernels));
  os << "</div>\n";
  if (const auto& b = s.breakdown; b && b->step_ns > 0)
    os << "<p>" << html_escape(device_time_line(*b, s.steps)) << ". IDLE001's idle is another measure: gaps of at least "
       << html_escape(ms(o.min_gap_ns)) << " between a device's first and last task, summed over the steps.</p>\n";
  os << "<p class=\"note\">Input format " << html_escape(s.format) << "; rules used torch_npu "
     << html_escape(s.torch_npu) << ". " << html_escape(s.knowledge_note) << "</p>\n";
  section_end(os);

  if (r.amp) render_amp_html(os, *r.amp);
  os << "<h2>Findings by rule</h2>\n";
  if (r.findings.empty()) os << "<p>No findings.</p>\n";
  // run and amp-check launched the program themselves: its recorded folders are trusted.
  findings_by_rule(os, r.findings, o, snippet_policy(&trace, r.command == "run" || r.command == "amp-check"), capture, true);
  op_breakdown(os, trace, o);
  timeline(os, index, o);
  if (!r.warnings.empty()) {
    section_begin(os, "warnings", "Reader warnings", std::to_string(r.warnings.size()));
    os << "<div class=\"panel\"><ul>\n";
    for (size_t i = 0; i < r.warnings.size() && i < 50; ++i)
      os << "<li>" << html_escape(r.warnings[i].message)
         << (r.warnings[i].offset ? fmt::format(" (byte {})", r.warnings[i].offset) : "") << "</li>\n";
    os << "</ul></div>\n";
    section_end(os);
  }
  page_end(os);
}

namespace {

void delta_table(std::ostream& os, const OpTable& t, size_t n, bool with_why = false) {
  os << "<table><tr><th class=\"num\">before</th><th class=\"num\">after</th><th class=\"num\">delta</th>"
        "<th class=\"num\">count before</th><th class=\"num\">count after</th><th>name</th>"
     << (with_why ? "<th>why (AFTER)</th>" : "") << "</tr>\n";
  for (size_t i = 0; i < t.rows.size() && i < n; ++i) {
    const OpDelta& r = t.rows[i];
    os << fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num {}\">{}{}</td>"
                      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"name\" title=\"{}\">{}</td>{}</tr>\n",
                      ms(r.before_ns), ms(r.after_ns), r.delta_ns() > 0 ? "worse" : "better",
                      r.delta_ns() >= 0 ? "+" : "-", ms(std::llabs(r.delta_ns())), r.before_count, r.after_count,
                      html_escape(r.name), html_escape(shorten(r.name, 120)),
                      with_why ? "<td>" + html_escape(r.delta_ns() > 0 ? r.why : "") + "</td>" : "");
  }
  os << fmt::format("<tr><th class=\"num\">{}</th><th class=\"num\">{}</th><th class=\"num\">{}{}</th><th class=\"num\">"
                    "{}</th><th class=\"num\">{}</th><th>total ({} names)</th>{}</tr></table>\n",
                    ms(t.before_ns), ms(t.after_ns), t.after_ns >= t.before_ns ? "+" : "-",
                    ms(std::llabs(t.after_ns - t.before_ns)), t.before_count, t.after_count, t.rows.size(),
                    with_why ? "<th></th>" : "");
}

// `ranking`: the HOT001 entries of this side the diff counted apart (TraceDiff::ranking_*).
void findings_section(std::ostream& os, string_view id, string_view title, const std::vector<Finding>& fs,
                      size_t ranking, const HtmlOptions& o, bool capture, bool anchors) {
  string gist = fmt::format("{} {}", fs.size(), fs.size() == 1 ? "finding" : "findings");
  string ranking_text = ranking ? fmt::format("{} HOT001 entries of the op-time ranking changed rank: not listed, a "
                                              "ranking is no problem{}", ranking,
                                              capture ? " (and a capture's host times are this machine's CPU)" : "")
                                : "";
  section_begin(os, id, title, gist + (ranking ? fmt::format("; {} HOT001 ranking changes not listed", ranking) : ""));
  if (fs.empty()) os << "<p>None.</p>\n";
  if (ranking) os << "<p class=\"note\">" << html_escape(ranking_text) << ".</p>\n";
  findings_by_rule(os, fs, o, snippet_policy(nullptr, false), capture, anchors);
  section_end(os);
}

}  // namespace

void render_diff_html(std::ostream& os, const TraceDiff& d, const TraceIndex& after, const HtmlOptions& o) {
  page_begin(os, "npu-doctor diff", d.before.source + "  \xE2\x86\x92  " + d.after.source);
  const string capture_format(to_string(InputFormat::Capture));
  const bool capture = d.before.format == capture_format || d.after.format == capture_format;
  // The text diff's first lines: step time before and after, device busy; then what is new.
  int64_t delta = d.after_step_ns - d.before_step_ns;
  os << "<div class=\"cards\" id=\"summary-cards\">\n";
  string basis = d.step_basis == "step" ? "mean step" : "trace span";
  card(os, basis + " before", ms(d.before_step_ns));
  card(os, basis + " after", ms(d.after_step_ns));
  card(os, "change", d.before_step_ns ? fmt::format("{:+.1f}%", 100.0 * double(delta) / double(d.before_step_ns)) : "n/a",
       delta <= 0 ? "better" : "worse");
  card(os, "findings fixed", std::to_string(d.fixed.size()), "better");
  card(os, "findings new", std::to_string(d.added.size()), d.added.empty() ? "" : "worse");
  auto busy = [](double v) { return v >= 0 ? fmt::format("{:.1f}%", 100 * v) : string("n/a"); };
  card(os, "device busy (of the trace span)", busy(d.before.device_busy_share) + " \xE2\x86\x92 " + busy(d.after.device_busy_share));
  os << "</div>\n";
  top_problems_list(os, d.added, "top-problems", "Top new problems");

  // Across devices kernel names never match and host times are two machines' CPUs: the chart
  // shows device time per step by launching op instead.
  const bool across = d.before_device != d.after_device;
  section_begin(os, "delta-section", across ? "Biggest device time changes per step, by launching op" : "Biggest op time changes",
                fmt::format("the {} largest", o.top_ops));
  os << "<div class=\"panel\">\n";
  std::vector<Bar> bars;
  std::vector<const OpTable*> tables = across ? std::vector<const OpTable*>{&d.device_by_op}
                                              : std::vector<const OpTable*>{&d.host, &d.device};
  for (const OpTable* t : tables)
    for (size_t i = 0; i < t->rows.size() && i < o.top_ops; ++i) {
      const OpDelta& r = t->rows[i];
      bars.push_back({(t == &d.host ? "host " : t == &d.device ? "device " : "") + r.name, double(r.delta_ns()),
                      fmt::format("{}{} ({:+} calls)", r.delta_ns() >= 0 ? "+" : "-", ms(std::llabs(r.delta_ns())),
                                  r.delta_count()),
                      r.delta_ns() > 0 ? "#c0504d" : "#4f9a5a"});
    }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return std::abs(a.value) > std::abs(b.value); });
  if (bars.size() > o.top_ops) bars.resize(o.top_ops);
  bar_chart(os, "delta-chart", bars);
  os << "</div>\n";
  section_end(os);

  section_begin(os, "device-by-op-section",
                "Device time by launching op" + (across ? fmt::format(" ({} \xE2\x86\x92 {})", d.before_device, d.after_device) : ""),
                fmt::format("{} ops, slower first", d.device_by_op.rows.size()));
  os << "<p>Kernel names differ across devices; the aten ops that launch them do not. Slower first, with what "
        "in the AFTER run explains each.</p>\n<div class=\"panel\">\n";
  delta_table(os, d.device_by_op, 40, true);
  os << "</div>\n";
  section_end(os);
  section_begin(os, "host-section", "Host aten ops (self time)",
                fmt::format("{} ops{}", d.host.rows.size(), capture ? "; a capture's host times are this machine's CPU" : ""));
  os << "<div class=\"panel\">\n";
  delta_table(os, d.host, 40);
  os << "</div>\n";
  section_end(os);
  section_begin(os, "device-section", "Device tasks", fmt::format("{} names", d.device.rows.size()));
  os << "<div class=\"panel\">\n";
  delta_table(os, d.device, 40);
  os << "</div>\n";
  section_end(os);

  section_begin(os, "rules-section", "Findings per rule", fmt::format("{} rules", d.findings_by_rule.size()));
  os << "<div class=\"panel\"><table><tr><th>rule</th><th class=\"num\">before</th><th class=\"num\">after</th></tr>\n";
  for (const auto& [rule, c] : d.findings_by_rule)
    os << fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n", html_escape(rule),
                      c.first, c.second);
  os << "</table></div>\n";
  section_end(os);
  findings_section(os, "new-section", "New findings", d.added, d.ranking_entered, o, capture, true);
  findings_section(os, "fixed-section", "Fixed findings", d.fixed, d.ranking_left, o, capture, false);

  timeline(os, after, o);  // of the AFTER run: what the change left
  page_end(os);
}

namespace {

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
