// The diff's HTML page (docs/html-report.md): the text diff's headline numbers first, then the
// op time changes, findings new and fixed, and the AFTER run's timeline (report/html_parts.hpp).
#include "diff/diff_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "analysis/trace_index.hpp"
#include "report/html_parts.hpp"

namespace npud {
namespace {

using std::string;
using std::string_view;
using namespace html;

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
  const bool capture = d.before.estimated_costs || d.after.estimated_costs;
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

}  // namespace npud
