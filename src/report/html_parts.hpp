// Pieces the HTML pages (html_report.cpp: analyze/run; amp_html.cpp; diff/diff_html.cpp,
// cluster/cluster_html.cpp) share:
// the page frame, folded sections, cards, responsive charts, the first screen's top-problems
// list and the findings grouped by rule. For the HTML pages only; every input string goes
// through html_escape().
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/html_report.hpp"
#include "source/source_snippet.hpp"

#include "util/text.hpp"   // shorten

namespace npud {

// A tooltip shows a name whole up to this: a page holding 1 MiB names stays the size of what it shows.
inline constexpr size_t kMaxTitleBytes = 4096;

class TraceIndex;

namespace html {

std::string ms(int64_t ns);

void page_begin(std::ostream& os, std::string_view title, std::string_view subtitle);
void page_end(std::ostream& os);
void card(std::ostream& os, std::string_view key, std::string_view value, std::string_view cls = "");

// A folded section: <details class="section"> with a one-line summary ("title — what it holds").
void section_begin(std::ostream& os, std::string_view id, std::string_view title, std::string_view gist);
void section_end(std::ostream& os);

// An inline SVG that scales with the page: drawn in a w x h box (viewBox), as wide as its
// container and never wider than w pixels, so nothing clips or scrolls at 800 px.
std::string svg_open(std::string_view id, int w, int h);

struct Bar {
  std::string label;
  double value = 0;      // may be negative (diff)
  std::string text;      // printed after the bar
  std::string color;
};
// Horizontal bars, one per row; negative values grow left of a zero line.
void bar_chart(std::ostream& os, std::string_view id, const std::vector<Bar>& bars);

// What the reports say about HOT001 where they show it (the text report says the same):
// on a capture its timings are this machine's CPU, never NPU costs; anywhere it is a ranking.
std::string host_ranking_gist(size_t findings, bool capture);

// The first screen: the top problems (report/render.hpp top_problems()), each with severity,
// rule, message, file:line and the first line of its fix, linking to its rule's section.
void top_problems_list(std::ostream& os, const std::vector<Finding>& findings, std::string_view id = "top-problems",
                       std::string_view heading = "Top problems");

// One folded <details class="rule"> per rule, worst rule first, HOT001 last. A fix text
// several findings of a rule share is printed once, with those findings listed under it.
// `anchors`: give each rule's section the id "rule-ID" (once per page).
void findings_by_rule(std::ostream& os, const std::vector<Finding>& findings, const HtmlOptions& o,
                      const SnippetPolicy& policy, bool capture, bool anchors);

// One step's timeline (the median-length step, or the whole trace): host ops of the main
// thread, device streams, the device idle gaps IDLE001 counts (gaps >= o.min_gap_ns, per
// device, inside its first-to-last task) and syncs. html_timeline.cpp.
void timeline(std::ostream& os, const TraceIndex& index, const HtmlOptions& o);

}  // namespace html
}  // namespace npud
