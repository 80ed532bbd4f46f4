// The diff's HTML page; the pieces it shares with the other pages are report/html_parts.hpp's.
#pragma once

#include <ostream>

#include "diff/trace_diff.hpp"
#include "report/html_report.hpp"

namespace npud {

class TraceIndex;

// `after`: the AFTER run's TraceIndex, the one its rules used (the page draws its timeline).
void render_diff_html(std::ostream& os, const TraceDiff& diff, const TraceIndex& after, const HtmlOptions& opts = {});

}  // namespace npud
