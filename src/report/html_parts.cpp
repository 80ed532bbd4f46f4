#include "report/html_parts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/embedded.hpp"
#include "util/saturate.hpp"

#ifndef NPUD_VERSION
#define NPUD_VERSION "0.0.0"
#endif

namespace npud {

std::span<const EmbeddedFile> embedded_html_assets();  // generated (CMakeLists.txt)

namespace html {

using std::string;
using std::string_view;

string ms(int64_t ns) {
  double v = double(ns) / 1e6;
  return v >= 100 ? fmt::format("{:.0f} ms", v) : v >= 1 ? fmt::format("{:.2f} ms", v) : fmt::format("{:.1f} us", v * 1e3);
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

void card(std::ostream& os, string_view key, string_view value, string_view cls) {
  os << "<div class=\"card\"><div class=\"k\">" << html_escape(key) << "</div><div class=\"v " << cls << "\">"
     << html_escape(value) << "</div></div>\n";
}

void section_begin(std::ostream& os, string_view id, string_view title, string_view gist) {
  os << "<details class=\"section\" id=\"" << html_escape(id) << "\"><summary><span class=\"title\">"
     << html_escape(title) << "</span>" << (gist.empty() ? "" : " <span class=\"gist\">&mdash; " + html_escape(gist) + "</span>")
     << "</summary>\n";
}

void section_end(std::ostream& os) { os << "</details>\n"; }

string svg_open(string_view id, int w, int h) {
  return fmt::format("<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
                     "width=\"100%\" style=\"max-width:{}px\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\">\n",
                     id, w, h, w);
}

// --- bar chart ----------------------------------------------------------------------------

void bar_chart(std::ostream& os, string_view id, const std::vector<Bar>& bars) {
  constexpr int kLabelW = 300, kBarW = 420, kTextW = 230, kRowH = 20;
  double max_pos = 0, max_neg = 0;
  for (const auto& b : bars) {
    max_pos = std::max(max_pos, b.value);
    max_neg = std::max(max_neg, -b.value);
  }
  double total = max_pos + max_neg;
  if (total <= 0) total = 1;
  double zero = kLabelW + kBarW * (max_neg / total);
  int h = int(bars.size()) * kRowH + 10;
  os << svg_open(id, kLabelW + kBarW + kTextW, h);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = 5 + double(i) * kRowH;
    double w = kBarW * (std::abs(b.value) / total);
    double x = b.value >= 0 ? zero : zero - w;
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLabelW - 6, y + 13,
                      html_escape(shorten(b.label, 44)));
    os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
                      x, y + 2, std::max(w, 0.5), kRowH - 5, b.color, html_escape(shorten(b.label, kMaxTitleBytes)),
                      html_escape(b.text));
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLabelW + kBarW + 6, y + 13, html_escape(b.text));
  }
  if (max_neg > 0)
    os << fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1}\" stroke=\"#888\"/>", zero, h);
  os << "</svg>\n";
}

// --- findings -----------------------------------------------------------------------------

string host_ranking_gist(size_t findings, bool capture) {
  return fmt::format("{} {}; kept out of the top problems, as in the text report", findings,
                     capture ? fmt::format("host-op timing{} of this machine's CPU, not NPU costs (a capture)",
                                           findings == 1 ? "" : "s")
                             : fmt::format("op timing{} ranked by time: where the time went, not a problem",
                                           findings == 1 ? "" : "s"));
}

namespace {

// "train.py:95  aten::copy_  in model.attn": where a finding is, as the findings list says it.
string place(const Finding& f) {
  string out;
  if (!f.location.file.empty() || !f.location.library.empty()) out = npud::where(f.location);
  if (!f.location.op.empty()) out += (out.empty() ? "" : "  ") + f.location.op;
  if (!f.location.module.empty()) out += (out.empty() ? "" : "  in ") + f.location.module;
  return out;
}

string_view first_line(string_view text) {
  size_t start = text.find_first_not_of(" \n");
  if (start == string_view::npos) return {};
  text.remove_prefix(start);
  return text.substr(0, text.find('\n'));
}

string rule_anchor(string_view rule) { return "rule-" + html_escape(rule); }

// Lines around file:line from the user's source, when the policy lets the file be read
// (source/source_snippet.hpp); else why it was not.
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

// with_fix: the finding's own fix (false when its group printed the shared fix above it).
void finding_html(std::ostream& os, const Finding& f, const HtmlOptions& o, const SnippetPolicy& policy, bool with_fix) {
  os << "<div class=\"finding\">";
  os << "<div class=\"loc\"><span class=\"sev-" << to_string(f.severity) << "\">" << to_string(f.severity)
     << "</span> " << html_escape(shorten(place(f), 400)) << "</div>";
  os << "<div class=\"msg\">" << html_escape(f.message) << "</div>";
  os << snippet(f.location, o.snippet_context, policy);
  if (with_fix && !f.fix.empty()) os << "<pre class=\"fix\">" << html_escape(f.fix) << "</pre>";
  for (const auto& n : f.notes) os << "<div class=\"note\">" << html_escape(n) << "</div>";
  os << "</div>\n";
}

}  // namespace

void top_problems_list(std::ostream& os, const std::vector<Finding>& findings, string_view id, string_view heading) {
  const std::vector<const Finding*> top = top_problems(findings);
  const bool ranking = std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.rule == kHostRankingRule; });
  os << "<section class=\"top\" id=\"" << html_escape(id) << "\">\n<h2>" << html_escape(heading) << "</h2>\n";
  if (top.empty()) {
    os << "<p>No problems found" << (ranking ? " (HOT001's ranking of op times is below)" : "") << ".</p>\n</section>\n";
    return;
  }
  os << "<p class=\"note\">By estimated time lost on an NPU (cost_ns); code that fails on an NPU and a capture that stopped early first" << (ranking ? "; HOT001's ranking of op times is "
                                                                                        "left out, as in the text report" : "")
     << ". Everything else is folded below.</p>\n<ol>\n";
  std::vector<string_view> fixes;   // shown so far: a repeated fix says which item has it
  for (const Finding* f : top) {
    string where = place(*f);
    string_view fix = first_line(f->fix);
    size_t same = size_t(std::find(fixes.begin(), fixes.end(), fix) - fixes.begin());
    fixes.push_back(fix);
    os << "<li><span class=\"sev-" << to_string(f->severity) << "\">" << to_string(f->severity) << "</span> <a href=\"#"
       << rule_anchor(f->rule) << "\" class=\"rule-id\">" << html_escape(f->rule) << "</a> ";
    if (f->cost_ns > 0) os << "<span class=\"cost\">~" << html_escape(format_duration(f->cost_ns)) << "</span> ";
    os << "<span class=\"msg\">"
       << html_escape(f->message) << "</span>";
    if (!where.empty()) os << "<div class=\"loc\">" << html_escape(shorten(where, 400)) << "</div>";
    if (!fix.empty() && same < fixes.size() - 1) os << "<div class=\"fix1\">fix: as for " << same + 1 << ".</div>";
    else if (!fix.empty()) os << "<div class=\"fix1\">fix: " << html_escape(fix) << "</div>";
    os << "</li>\n";
  }
  os << "</ol>\n</section>\n";
}

void findings_by_rule(std::ostream& os, const std::vector<Finding>& findings, const HtmlOptions& o,
                      const SnippetPolicy& policy, bool capture, bool anchors) {
  std::vector<string> order;
  std::map<string, std::vector<const Finding*>> by_rule;
  for (const auto& f : findings) {
    if (!by_rule.count(f.rule)) order.push_back(f.rule);
    by_rule[f.rule].push_back(&f);
  }
  // The ranking is no problem: it comes after the problems.
  std::stable_partition(order.begin(), order.end(), [](const string& id) { return id != kHostRankingRule; });
  for (const auto& id : order) {
    const auto& fs = by_rule[id];
    const Rule* rule = find_trace_rule(id);
    const bool ranking = id == kHostRankingRule;
    int64_t cost = 0;
    for (const Finding* f : fs) add_saturating(cost, f->cost_ns);
    string gist = ranking ? host_ranking_gist(fs.size(), capture)
                          : fmt::format("{} {}{}", fs.size(), fs.size() == 1 ? "finding" : "findings",
                                        cost > 0 ? ", about " + ms(cost) + " lost" : "");
    os << "<details class=\"rule\"" << (anchors ? " id=\"" + rule_anchor(id) + "\"" : "") << "><summary><span class=\"sev-"
       << to_string(fs.front()->severity) << "\">" << html_escape(id) << "</span> " << (rule ? html_escape(rule->name()) : "")
       << " &mdash; " << html_escape(gist) << "</summary>\n";
    if (rule) os << "<div class=\"finding note\">" << html_escape(rule->summary()) << "</div>\n";
    // Findings by fix text, in order of each text's first (worst) finding.
    // A map from text to group keeps this linear in the findings (100,000 distinct fixes).
    std::vector<std::pair<string_view, std::vector<const Finding*>>> groups;
    std::unordered_map<string_view, size_t> group_of;
    for (const Finding* f : fs) {
      auto [it, added] = group_of.try_emplace(f->fix, groups.size());
      if (added || f->fix.empty()) {   // a finding without a fix stands alone
        if (!added) it->second = groups.size();
        groups.push_back({f->fix, {f}});
      } else {
        groups[it->second].second.push_back(f);
      }
    }
    for (const auto& [fix, members] : groups) {
      if (members.size() == 1) {
        finding_html(os, *members.front(), o, policy, true);
        continue;
      }
      os << "<div class=\"fix-group\"><div class=\"fix-head\">One fix for the " << members.size()
         << " findings below:</div><pre class=\"fix\">" << html_escape(fix) << "</pre>\n";
      for (const Finding* f : members) finding_html(os, *f, o, policy, false);
      os << "</div>\n";
    }
    os << "</details>\n";
  }
}

}  // namespace html
}  // namespace npud
