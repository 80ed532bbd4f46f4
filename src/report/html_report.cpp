// The analyze/run (and amp-check) HTML page; the diff's and cluster's pages are
// diff/diff_html.cpp and cluster/cluster_html.cpp. Each page opens with what the text report's
// first screen says (the top problems, or the diff's and cluster's headline numbers); charts,
// tables and the findings follow in folded sections (html_parts.hpp).
#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/op_totals.hpp"
#include "analysis/trace_index.hpp"
#include "util/escape.hpp"
#include "report/html_parts.hpp"
#include "source/source_snippet.hpp"
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

std::vector<Bar> top_bars(OpTotals& totals, int64_t denom, size_t n,
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
  OpTotals host = host_op_totals(t), device = device_task_totals(t);
  const int64_t host_total = total_time(host), device_total = total_time(device);
  // A capture's host times are this machine's CPU (often no NPU at all): said where they are shown.
  const bool capture = t.caps.estimated_costs;
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
  const bool capture = trace.caps.estimated_costs;
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
  // With steps, the device's share is the device time line's (computing of step time), so the
  // page shows one measure, not a span share beside a step share (issue 40).
  const StepBreakdown* per_step = s.breakdown && s.breakdown->step_ns > 0 && s.steps ? &*s.breakdown : nullptr;
  string device_label = per_step ? "device computing (of step time)" : "device busy (of the trace span)";
  string device_value = per_step ? fmt::format("{:.1f}%", 100.0 * double(per_step->computing_ns) / double(per_step->step_ns))
                        : s.device_busy_share >= 0 ? fmt::format("{:.1f}%", 100 * s.device_busy_share)
                                                   : "no device events";
  section_begin(os, "summary", "Summary",
                step + (per_step                    ? ", " + device_label.substr(0, device_label.find(" (")) + " " +
                                                          device_value + " of step time"
                        : s.device_busy_share >= 0 ? fmt::format(", device busy {:.1f}% of the trace span", 100 * s.device_busy_share)
                                                   : ", no device events"));
  os << "<div class=\"cards\" id=\"summary-cards\">\n";
  card(os, "errors", std::to_string(counts[2]), "sev-error");
  card(os, "warnings", std::to_string(counts[1]), "sev-warning");
  card(os, "info", std::to_string(counts[0]), "sev-info");
  card(os, s.steps ? "mean step time" : "trace span", ms(s.steps ? s.step_time_ns : s.span_ns));
  card(os, device_label, device_value);
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

}  // namespace npud
