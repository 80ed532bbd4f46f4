// One self-contained HTML report (no network: inline CSS, charts as inline SVG built here),
// for analyze / run (findings + the trace's op breakdown and one step's timeline), diff and
// the cluster view. Each page opens with what the text report's first screen says (the top
// problems); the rest follows in folded sections. Every string from the inputs is
// HTML-escaped. See docs/html-report.md.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "model/trace.hpp"
#include "report/render.hpp"
#include "rules/rule.hpp"

namespace npud {

class TraceIndex;

// Text for an HTML element or a quoted attribute: & < > " ' escaped, control characters
// and bidi overrides removed, invalid UTF-8 replaced.
std::string html_escape(std::string_view s);

struct HtmlOptions {
  size_t top_ops = 15;             // bars in the op-time chart
  size_t max_timeline_rects = 3000;  // the timeline is downsampled to at most this many
  int snippet_context = 3;         // source lines shown around a finding's line
  // The timeline's device idle gaps: IDLE001's threshold (RuleOptions::min_gap_ns(), --min-gap-us).
  int64_t min_gap_ns = RuleOptions{}.min_gap_ns();
};

// `index`: the analysis' TraceIndex (AnalysisContext::index(), built once for the rules);
// the page draws from it and from the report, and analyses nothing itself.
void render_html(std::ostream& os, const Report& report, const TraceIndex& index, const HtmlOptions& opts = {});
// The amp-check section (drift start, drift-per-op and per-module charts, keep-in-fp32,
// loss scale); render_html adds it when Report::amp is set. src/report/amp_html.cpp.
void render_amp_html(std::ostream& os, const AmpSummary& amp);
// The diff's and the cluster's pages: diff/diff_html.hpp, cluster/cluster_html.hpp.

}  // namespace npud
