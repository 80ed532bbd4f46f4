#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/trace_index.hpp"
#include "cluster/cluster_report.hpp"
#include "diff/trace_diff.hpp"
#include "report/escape.hpp"
#include "report/source_snippet.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/embedded.hpp"
#include "util/saturate.hpp"

#ifndef NPUD_VERSION
#define NPUD_VERSION "0.0.0"
#endif

namespace npud {

std::span<const EmbeddedFile> embedded_html_assets();  // generated (CMakeLists.txt)

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

string ms(int64_t ns) {
  double v = double(ns) / 1e6;
  return v >= 100 ? fmt::format("{:.0f} ms", v) : v >= 1 ? fmt::format("{:.2f} ms", v) : fmt::format("{:.1f} us", v * 1e3);
}

string shorten(string_view s, size_t max) {
  if (s.size() <= max) return string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return string(s.substr(0, cut)) + "\xE2\x80\xA6";
}

void page_begin(std::ostream& os, string_view title, string_view subtitle) {
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        // No network: nothing in this page may load from elsewhere.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">\n";
  os << "<title>" << html_escape(title) << "</title>\n<style>\n"
     << find_embedded(embedded_html_assets(), "report.css") << "</style></head>\n<body>\n";
  os << "<header><h1>" << html_escape(title) << "</h1><div class=\"src\">" << html_escape(subtitle)
     << "</div></header>\n<main>\n";
}

void page_end(std::ostream& os) {
  os << "<p class=\"note\">npu-doctor " << NPUD_VERSION << "</p>\n</main>\n</body></html>\n";
}

void card(std::ostream& os, string_view key, string_view value, string_view cls = "", string_view id = "") {
  os << "<div class=\"card\"" << (id.empty() ? "" : fmt::format(" id=\"{}\"", id)) << "><div class=\"k\">"
     << html_escape(key) << "</div><div class=\"v " << cls << "\">" << html_escape(value) << "</div></div>\n";
}

// --- bar chart ----------------------------------------------------------------------------

struct Bar {
  string label;
  double value = 0;      // may be negative (diff)
  string text;           // printed after the bar
  string color;
};

// Horizontal bars, one per row; negative values grow left of a zero line.
void bar_chart(std::ostream& os, string_view id, const std::vector<Bar>& bars) {
  constexpr int kLabelW = 330, kBarW = 520, kTextW = 240, kRowH = 20;
  double max_pos = 0, max_neg = 0;
  for (const auto& b : bars) {
    max_pos = std::max(max_pos, b.value);
    max_neg = std::max(max_neg, -b.value);
  }
  double total = max_pos + max_neg;
  if (total <= 0) total = 1;
  double zero = kLabelW + kBarW * (max_neg / total);
  int h = int(bars.size()) * kRowH + 10;
  os << fmt::format("<svg id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">\n", id,
                    kLabelW + kBarW + kTextW, h);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = 5 + double(i) * kRowH;
    double w = kBarW * (std::abs(b.value) / total);
    double x = b.value >= 0 ? zero : zero - w;
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLabelW - 6, y + 13,
                      html_escape(shorten(b.label, 48)));
    os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
                      x, y + 2, std::max(w, 0.5), kRowH - 5, b.color, html_escape(b.label), html_escape(b.text));
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLabelW + kBarW + 6, y + 13, html_escape(b.text));
  }
  if (max_neg > 0)
    os << fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1}\" stroke=\"#888\"/>", zero, h);
  os << "</svg>\n";
}

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
  os << "<h2>Op time breakdown</h2>\n<div class=\"panel\">\n";
  if (host.empty() && device.empty()) {
    os << "<p class=\"note\">The trace holds no aten ops or device tasks.</p><svg id=\"op-chart\" width=\"1\" "
          "height=\"1\"></svg>\n</div>\n";
    return;
  }
  if (!host.empty()) {
    os << fmt::format("<p>Host aten ops by self time (top {} of {}; total {})</p>\n", std::min(o.top_ops, host.size()),
                      host.size(), ms(host_total));
    bar_chart(os, "op-chart", top_bars(host, host_total, o.top_ops, "#4a78c2"));
  }
  if (!device.empty()) {
    os << fmt::format("<p>Device tasks by time (top {} of {}; total {})</p>\n", std::min(o.top_ops, device.size()),
                      device.size(), ms(device_total));
    bar_chart(os, host.empty() ? "op-chart" : "device-chart", top_bars(device, device_total, o.top_ops, "#d9822b"));
  }
  os << "</div>\n";
}

// --- timeline -----------------------------------------------------------------------------

struct Lane {
  string label;
  string color;
  std::vector<Interval> spans;   // sorted by start
  std::vector<string> titles;    // per span (empty when merged)
};

// Merges spans closer than one pixel so a lane never has more rects than pixels.
void downsample(Lane& lane, double ns_per_px) {
  if (lane.spans.empty()) return;
  std::vector<size_t> order(lane.spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lane.spans[a].start < lane.spans[b].start; });
  std::vector<Interval> out;
  std::vector<string> titles;
  std::vector<int> merged;
  for (size_t i : order) {
    const Interval& s = lane.spans[i];
    if (!out.empty() && double(s.start - out.back().end) < ns_per_px &&
        double(s.end - out.back().start) < 4 * ns_per_px + double(out.back().length())) {
      out.back().end = std::max(out.back().end, s.end);
      ++merged.back();
      continue;
    }
    out.push_back(s);
    titles.push_back(i < lane.titles.size() ? lane.titles[i] : "");
    merged.push_back(1);
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (merged[i] > 1) titles[i] = fmt::format("{} events merged ({} at this zoom)", merged[i], ms(out[i].length()));
  lane.spans = std::move(out);
  lane.titles = std::move(titles);
}

void timeline(std::ostream& os, const Trace& t, const HtmlOptions& o, int64_t min_gap_ns) {
  os << "<h2>Timeline of one step</h2>\n<div class=\"panel\">\n";
  int64_t lo = 0, hi = t.span_ns();
  string which = "the whole trace (it has no steps)";
  if (!t.steps.empty()) {
    // The step nearest the median duration: a typical step, not a warm-up outlier.
    std::vector<size_t> idx(t.steps.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return t.steps[a].dur_ns < t.steps[b].dur_ns; });
    const Step& s = t.steps[idx[idx.size() / 2]];
    lo = s.start_ns;
    hi = s.start_ns + s.dur_ns;
    which = fmt::format("step {} ({}; the median-length of {} steps)", s.number, ms(s.dur_ns), t.steps.size());
  } else if (!t.ops.empty() || !t.kernels.empty()) {
    lo = std::numeric_limits<int64_t>::max();
    for (const Op& op : t.ops) lo = std::min(lo, op.start_ns);
    for (const Kernel& k : t.kernels) lo = std::min(lo, k.start_ns);
    hi = lo + t.span_ns();
  }
  if (hi <= lo) hi = lo + 1;
  constexpr int kLabelW = 170, kW = 1100, kLaneH = 18;
  double ns_per_px = double(hi - lo) / kW;
  auto inside = [&](int64_t s, int64_t d) { return s < hi && s + d > lo; };

  std::vector<Lane> lanes;
  TraceIndex index(t);
  // Host: the main thread's ops at nesting depth 0..2.
  std::vector<Lane> host(3);
  for (int d = 0; d < 3; ++d) host[size_t(d)] = {fmt::format("host ops (depth {})", d), "#4a78c2", {}, {}};
  Lane syncs{"syncs", "#d62728", {}, {}};
  for (uint32_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (!inside(op.start_ns, op.dur_ns)) continue;
    if (op.kind == OpKind::PythonSync) {
      syncs.spans.push_back({op.start_ns, op.start_ns + std::max<int64_t>(op.dur_ns, 1)});
      syncs.titles.push_back(fmt::format("{} ({})", t.str(op.name), ms(op.dur_ns)));
      continue;
    }
    if (op.pid != index.main_pid() || op.tid != index.main_tid()) continue;
    int depth = 0;
    for (uint32_t p = op.parent; p != kNone && depth < 3; p = t.ops[p].parent) ++depth;
    if (depth >= 3) continue;
    host[size_t(depth)].spans.push_back({op.start_ns, op.start_ns + op.dur_ns});
    host[size_t(depth)].titles.push_back(fmt::format("{} ({})", t.str(op.name), ms(op.dur_ns)));
  }
  for (const RuntimeCall& r : t.runtime) {
    if (r.kind != RuntimeKind::Sync || !inside(r.start_ns, r.dur_ns)) continue;
    syncs.spans.push_back({r.start_ns, r.start_ns + std::max<int64_t>(r.dur_ns, 1)});
    syncs.titles.push_back(fmt::format("{} ({})", t.str(r.name), ms(r.dur_ns)));
  }
  for (auto& l : host)
    if (!l.spans.empty()) lanes.push_back(std::move(l));
  // Device: one lane per (device, stream), the busiest 8.
  std::map<std::pair<int32_t, int32_t>, Lane> streams;
  std::vector<Interval> busy;
  for (const Kernel& k : t.kernels) {
    if (!inside(k.start_ns, k.dur_ns)) continue;
    if (k.kind == TaskKind::Sync) {
      syncs.spans.push_back({k.start_ns, k.start_ns + std::max<int64_t>(k.dur_ns, 1)});
      syncs.titles.push_back(fmt::format("{} ({})", t.str(k.name), ms(k.dur_ns)));
      continue;
    }
    Lane& l = streams[{k.device, k.stream}];
    if (l.label.empty())
      l = {fmt::format("device {} stream {}", k.device, k.stream),
           k.kind == TaskKind::AiCpu ? "#9467bd" : k.kind == TaskKind::Memcpy ? "#8c564b" : "#d9822b", {}, {}};
    l.spans.push_back({k.start_ns, k.start_ns + k.dur_ns});
    l.titles.push_back(fmt::format("{} ({})", t.str(k.name), ms(k.dur_ns)));
    busy.push_back({k.start_ns, k.start_ns + k.dur_ns});
  }
  std::vector<Lane> stream_lanes;
  for (auto& [key, l] : streams) stream_lanes.push_back(std::move(l));
  std::stable_sort(stream_lanes.begin(), stream_lanes.end(),
                   [](const Lane& a, const Lane& b) { return a.spans.size() > b.spans.size(); });
  if (stream_lanes.size() > 8) stream_lanes.resize(8);
  for (auto& l : stream_lanes) lanes.push_back(std::move(l));
  if (!busy.empty()) {
    Lane idle{"device idle gaps", "#bbbbbb", {}, {}};
    auto merged = union_of(std::move(busy));
    int64_t first = merged.front().start, last = merged.back().end;
    for (const Interval& g : gaps_within(merged, std::max(lo, first), std::min(hi, last), min_gap_ns)) {
      idle.spans.push_back(g);
      idle.titles.push_back(fmt::format("device idle {}", ms(g.length())));
    }
    if (!idle.spans.empty()) lanes.push_back(std::move(idle));
  }
  if (!syncs.spans.empty()) lanes.push_back(std::move(syncs));

  size_t budget = o.max_timeline_rects;
  for (auto& l : lanes) downsample(l, ns_per_px);
  os << "<p>" << html_escape(which) << ". Hover a bar for its name; bars closer than a pixel are merged.</p>\n";
  os << "<div class=\"legend\"><span><i style=\"background:#4a78c2\"></i>host op</span>"
        "<span><i style=\"background:#d9822b\"></i>device task</span><span><i style=\"background:#9467bd\"></i>AI_CPU "
        "task</span><span><i style=\"background:#8c564b\"></i>copy</span><span><i style=\"background:#d62728\"></i>sync"
        "</span><span><i style=\"background:#bbbbbb\"></i>device idle</span></div>\n";
  int h = int(lanes.size()) * (kLaneH + 4) + 24;
  os << fmt::format("<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">\n",
                    kLabelW + kW + 10, h);
  size_t drawn = 0;
  for (size_t li = 0; li < lanes.size(); ++li) {
    const Lane& l = lanes[li];
    double y = double(li) * (kLaneH + 4);
    os << fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text>\n", y + 13, html_escape(l.label));
    for (size_t i = 0; i < l.spans.size() && drawn < budget; ++i, ++drawn) {
      double x0 = kLabelW + double(std::max(l.spans[i].start, lo) - lo) / ns_per_px;
      double x1 = kLabelW + double(std::min(l.spans[i].end, hi) - lo) / ns_per_px;
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                        x0, y, std::max(x1 - x0, 0.8), kLaneH, l.color, html_escape(l.titles[i]));
    }
  }
  double axis_y = double(lanes.size()) * (kLaneH + 4) + 14;
  for (int i = 0; i <= 4; ++i) {
    double x = kLabelW + kW * i / 4.0;
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"{}\">{}</text>", x, axis_y,
                      i == 0 ? "start" : i == 4 ? "end" : "middle", html_escape(ms(int64_t((hi - lo) * i / 4))));
  }
  os << "\n</svg>\n";
  if (drawn >= budget) os << fmt::format("<p class=\"note\">Only the first {} bars are drawn.</p>\n", budget);
  os << "</div>\n";
}

// --- findings -----------------------------------------------------------------------------

// Lines around file:line from the user's source, when the policy lets the file be read
// (report/source_snippet.hpp); else why it was not.
string snippet(const Location& loc, int context, const SnippetPolicy& policy) {
  Snippet s = read_snippet(loc, context, policy);
  if (!s.withheld.empty())
    return "<div class=\"note snippet-withheld\">source of " + html_escape(shorten(loc.file, 200)) + " not shown: " +
           html_escape(s.withheld) + "</div>";
  string out;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    int n = s.first_line + int(i);
    string text = html_escape(fmt::format("{:>5}  {}", n, shorten(s.lines[i], kMaxSnippetLineChars)));
    out += n == loc.line ? "<span class=\"hit\">" + text + "</span>\n" : text + "\n";
  }
  return out.empty() ? out : "<pre class=\"snippet\">" + out + "</pre>";
}

void finding_html(std::ostream& os, const Finding& f, const HtmlOptions& o, const SnippetPolicy& policy) {
  os << "<div class=\"finding\">";
  string where;
  if (!f.location.file.empty() || !f.location.library.empty()) where = npud::where(f.location);
  if (!f.location.op.empty()) where += (where.empty() ? "" : "  ") + f.location.op;
  if (!f.location.module.empty()) where += (where.empty() ? "" : "  in ") + f.location.module;
  os << "<div class=\"loc\"><span class=\"sev-" << to_string(f.severity) << "\">" << to_string(f.severity)
     << "</span> " << html_escape(shorten(where, 400)) << "</div>";
  os << "<div class=\"msg\">" << html_escape(f.message) << "</div>";
  os << snippet(f.location, o.snippet_context, policy);
  if (!f.fix.empty()) os << "<pre class=\"fix\">" << html_escape(f.fix) << "</pre>";
  for (const auto& n : f.notes) os << "<div class=\"note\">" << html_escape(n) << "</div>";
  os << "</div>\n";
}

void findings_by_rule(std::ostream& os, const std::vector<Finding>& findings, const HtmlOptions& o,
                      const SnippetPolicy& policy) {
  std::vector<string> order;
  std::map<string, std::vector<const Finding*>> by_rule;
  for (const auto& f : findings) {
    if (!by_rule.count(f.rule)) order.push_back(f.rule);
    by_rule[f.rule].push_back(&f);
  }
  for (const auto& id : order) {
    const auto& fs = by_rule[id];
    const Rule* rule = find_trace_rule(id);
    int64_t cost = 0;
    for (const Finding* f : fs) add_saturating(cost, f->cost_ns);
    os << "<details class=\"rule\" open><summary><span class=\"sev-" << to_string(fs.front()->severity) << "\">"
       << html_escape(id) << "</span> " << (rule ? html_escape(rule->name()) : "") << " &mdash; " << fs.size()
       << (fs.size() == 1 ? " finding" : " findings") << (cost > 0 ? ", about " + ms(cost) + " lost" : "")
       << "</summary>\n";
    if (rule) os << "<div class=\"finding note\">" << html_escape(rule->summary()) << "</div>\n";
    for (const Finding* f : fs) finding_html(os, *f, o, policy);
    os << "</details>\n";
  }
}

}  // namespace

void render_html(std::ostream& os, const Report& r, const Trace& trace, const HtmlOptions& o) {
  const ReportSummary& s = r.summary;
  page_begin(os, fmt::format("npu-doctor {} report", r.command), s.source);
  size_t counts[3] = {0, 0, 0};
  for (const Finding& f : r.findings) ++counts[size_t(f.severity)];
  os << "<h2>Summary</h2>\n<div class=\"cards\" id=\"summary-cards\">\n";
  card(os, "errors", std::to_string(counts[2]), "sev-error");
  card(os, "warnings", std::to_string(counts[1]), "sev-warning");
  card(os, "info", std::to_string(counts[0]), "sev-info");
  card(os, s.steps ? "mean step time" : "trace span", ms(s.steps ? s.step_time_ns : s.span_ns));
  card(os, "device busy", s.device_busy_share >= 0 ? fmt::format("{:.1f}%", 100 * s.device_busy_share) : "no device events");
  card(os, "steps / ops / device tasks", fmt::format("{} / {} / {}", s.steps, s.ops, s.kernels));
  os << "</div>\n";
  os << "<p class=\"note\">Input format " << html_escape(s.format) << "; rules used torch_npu "
     << html_escape(s.torch_npu) << ". " << html_escape(s.knowledge_note) << "</p>\n";

  op_breakdown(os, trace, o);
  if (r.amp) render_amp_html(os, *r.amp);
  timeline(os, trace, o, 50'000);

  os << "<h2>Findings by rule</h2>\n";
  if (r.findings.empty()) os << "<p>No findings.</p>\n";
  // run and amp-check launched the program themselves: its recorded folders are trusted.
  findings_by_rule(os, r.findings, o, snippet_policy(&trace, r.command == "run" || r.command == "amp-check"));
  if (!r.warnings.empty()) {
    os << "<h2>Reader warnings</h2>\n<div class=\"panel\"><ul>\n";
    for (size_t i = 0; i < r.warnings.size() && i < 50; ++i)
      os << "<li>" << html_escape(r.warnings[i].message)
         << (r.warnings[i].offset ? fmt::format(" (byte {})", r.warnings[i].offset) : "") << "</li>\n";
    os << "</ul></div>\n";
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

}  // namespace

void render_diff_html(std::ostream& os, const TraceDiff& d, const Trace& before, const Trace& after,
                      const HtmlOptions& o) {
  (void)before;
  page_begin(os, "npu-doctor diff", d.before.source + "  \xE2\x86\x92  " + d.after.source);
  int64_t delta = d.after_step_ns - d.before_step_ns;
  os << "<h2>Summary</h2>\n<div class=\"cards\" id=\"summary-cards\">\n";
  string basis = d.step_basis == "step" ? "mean step" : "trace span";
  card(os, basis + " before", ms(d.before_step_ns));
  card(os, basis + " after", ms(d.after_step_ns));
  card(os, "change", d.before_step_ns ? fmt::format("{:+.1f}%", 100.0 * double(delta) / double(d.before_step_ns)) : "n/a",
       delta <= 0 ? "better" : "worse");
  card(os, "findings fixed", std::to_string(d.fixed.size()), "better");
  card(os, "findings new", std::to_string(d.added.size()), d.added.empty() ? "" : "worse");
  auto busy = [](double v) { return v >= 0 ? fmt::format("{:.1f}%", 100 * v) : string("n/a"); };
  card(os, "device busy", busy(d.before.device_busy_share) + " \xE2\x86\x92 " + busy(d.after.device_busy_share));
  os << "</div>\n";

  // Across devices kernel names never match and host times are two machines' CPUs: the chart
  // shows device time per step by launching op instead.
  const bool across = d.before_device != d.after_device;
  os << "<h2>" << (across ? "Biggest device time changes per step, by launching op" : "Biggest op time changes")
     << "</h2>\n<div class=\"panel\">\n";
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

  os << "<h2>Device time by launching op" << (d.before_device != d.after_device ? fmt::format(" ({} \xE2\x86\x92 {})", html_escape(d.before_device), html_escape(d.after_device)) : "")
     << "</h2>\n<p>Kernel names differ across devices; the aten ops that launch them do not. Slower first, with what "
        "in the AFTER run explains each.</p>\n<div class=\"panel\">\n";
  delta_table(os, d.device_by_op, 40, true);
  os << "</div>\n<h2>Host aten ops (self time)</h2>\n<div class=\"panel\">\n";
  delta_table(os, d.host, 40);
  os << "</div>\n<h2>Device tasks</h2>\n<div class=\"panel\">\n";
  delta_table(os, d.device, 40);
  os << "</div>\n";

  os << "<h2>Findings per rule</h2>\n<div class=\"panel\"><table><tr><th>rule</th><th class=\"num\">before</th>"
        "<th class=\"num\">after</th></tr>\n";
  for (const auto& [rule, c] : d.findings_by_rule)
    os << fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n", html_escape(rule),
                      c.first, c.second);
  os << "</table></div>\n";
  os << "<h2>Fixed findings</h2>\n";
  if (d.fixed.empty()) os << "<p>None.</p>\n";
  const SnippetPolicy policy = snippet_policy(nullptr, false);
  findings_by_rule(os, d.fixed, o, policy);
  os << "<h2>New findings</h2>\n";
  if (d.added.empty()) os << "<p>None.</p>\n";
  findings_by_rule(os, d.added, o, policy);

  timeline(os, after, o, 50'000);  // of the AFTER run: what the change left
  page_end(os);
}

namespace {

// One row per rank: computing, communication not overlapped with it, free; each as a share of
// the longest mean step, so ranks compare at a glance.
void rank_chart(std::ostream& os, const ClusterReport& r, const std::vector<const RankRow*>& rows) {
  constexpr int kLabelW = 70, kBarW = 640, kTextW = 200, kRowH = 18;
  double longest = 1;
  for (const RankRow* row : rows) longest = std::max(longest, row->step_ns);
  int h = int(rows.size()) * kRowH + 10;
  os << "<div class=\"legend\"><span><i style=\"background:#4f81bd\"></i>computing</span>"
        "<span><i style=\"background:#f2a541\"></i>communication (not overlapped)</span>"
        "<span><i style=\"background:#d9d9d9\"></i>free</span></div>\n";
  os << fmt::format("<svg id=\"rank-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">\n",
                    kLabelW + kBarW + kTextW, h);
  std::set<int64_t> slow;   // ranks with a warning: their labels are marked
  for (const SlowRank& s : r.slow)
    if (s.severity >= Severity::Warning) slow.insert(s.rank);
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankRow& row = *rows[i];
    double y = 5 + double(i) * kRowH, x = kLabelW;
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\"{}>rank {}</text>", kLabelW - 6, y + 12,
                      slow.count(row.rank) ? " style=\"font-weight:bold;fill:#b3261e\"" : "", row.rank);
    const std::pair<double, const char*> parts[] = {{row.computing_ns, "#4f81bd"},
                                                    {row.communication_ns - row.overlapped_ns, "#f2a541"},
                                                    {row.free_ns, "#d9d9d9"}};
    for (const auto& [ns, color] : parts) {
      double w = kBarW * std::max(0.0, ns) / longest;
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", x, y + 2, w,
                        kRowH - 5, color);
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

  // At most 128 bars: rank 0, the slow ranks, then the others in order.
  std::vector<const RankRow*> rows;
  std::set<int64_t> slow;
  for (const SlowRank& s : r.slow) slow.insert(s.rank);
  for (const RankRow& row : r.ranks)
    if (rows.empty() || slow.count(row.rank)) rows.push_back(&row);
  for (const RankRow& row : r.ranks)
    if (rows.size() < 128 && std::find(rows.begin(), rows.end(), &row) == rows.end()) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const RankRow* a, const RankRow* b) { return a->rank < b->rank; });
  os << "<h2>Mean step per rank</h2>\n<div class=\"panel\">\n";
  rank_chart(os, r, rows);
  if (rows.size() < r.ranks.size())
    os << fmt::format("<p class=\"note\">{} of {} ranks drawn (rank 0 and the slow ones first); the table has all.</p>\n",
                      rows.size(), r.ranks.size());
  os << "</div>\n";

  os << "<h2>Slow ranks</h2>\n<div class=\"panel\" id=\"slow-ranks\">\n";
  if (r.slow.empty()) os << "<p>None: no rank is more than 5% of a step above the other ranks' median.</p>\n";
  for (const SlowRank& s : r.slow)
    os << fmt::format("<p><span class=\"sev-{}\">{}</span> {}</p>\n", to_string(s.severity), to_string(s.severity),
                      html_escape(s.message));
  os << "</div>\n";

  os << "<h2>Findings only some ranks have</h2>\n<div class=\"panel\" id=\"partial-findings\">\n";
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

  os << "<h2>Per rank</h2>\n<div class=\"panel\"><table id=\"rank-table\"><tr><th>rank</th><th class=\"num\">steps</th>"
        "<th class=\"num\">step</th><th class=\"num\">computing</th><th class=\"num\">communication</th>"
        "<th class=\"num\">wait</th><th class=\"num\">overlap</th><th class=\"num\">free</th><th class=\"num\">findings</th></tr>\n";
  auto cell = [](double ns) { return ns < 0 ? std::string("-") : ms(int64_t(ns)); };
  for (const RankRow& row : r.ranks)
    os << fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                      "<td class=\"num\">{}</td></tr>\n",
                      row.rank, row.steps, cell(row.step_ns), cell(row.computing_ns), cell(row.communication_ns),
                      cell(row.comm_wait_ns), cell(row.overlapped_ns), cell(row.free_ns), row.findings);
  os << "</table></div>\n";

  os << "<h2>Findings on every rank</h2>\n<div class=\"panel\">\n";
  if (r.common.empty()) os << "<p>None.</p>\n";
  for (const Finding& f : r.common)
    os << fmt::format("<p><span class=\"sev-{0}\">{0}</span> {1} {2}</p>\n", to_string(f.severity), html_escape(f.rule),
                      html_escape(f.message));
  os << "</div>\n";
  if (!r.notes.empty()) {
    os << "<h2>Notes</h2>\n<div class=\"panel\"><ul>\n";
    for (const auto& n : r.notes) os << "<li>" << html_escape(n) << "</li>\n";
    os << "</ul></div>\n";
  }
  page_end(os);
}

}  // namespace npud
