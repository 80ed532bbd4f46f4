// The HTML timeline of one step: lanes of bars drawn from the analysis' TraceIndex, one colour
// table for the bars and the legend, and the device idle gaps IDLE001 counts.
#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/trace_index.hpp"
#include "report/html_parts.hpp"

namespace npud::html {
namespace {

using std::string;

// What a bar is; the legend and the bars take their colour from kMarks alone.
enum class Mark : uint8_t { HostOp, DeviceTask, AiCpu, Copy, Sync, Idle };
struct MarkStyle {
  const char* key;      // data-mark attribute of bars and legend entries
  const char* legend;
  const char* color;
};
constexpr MarkStyle kMarks[] = {
    {"host-op", "host op", "#4a78c2"}, {"device-task", "device task", "#d9822b"},
    {"ai-cpu", "AI_CPU task", "#9467bd"}, {"copy", "copy", "#8c564b"},
    {"sync", "sync", "#d62728"},       {"idle", "device idle", "#bbbbbb"},
};
const MarkStyle& style(Mark m) { return kMarks[size_t(m)]; }

Mark mark_of(const Kernel& k) {
  switch (k.kind) {
    case TaskKind::AiCpu: return Mark::AiCpu;
    case TaskKind::Memcpy: return Mark::Copy;
    case TaskKind::Sync: return Mark::Sync;
    default: return Mark::DeviceTask;
  }
}

struct Lane {
  string label;
  std::vector<Interval> spans;   // sorted by start after downsample()
  std::vector<string> titles;    // per span
  std::vector<Mark> marks;       // per span
  void add(Interval span, string title, Mark mark) {
    spans.push_back(span);
    titles.push_back(std::move(title));
    marks.push_back(mark);
  }
};

// Merges spans closer than one pixel so a lane never has more rects than pixels; a merged bar
// takes the mark of its longest span.
void downsample(Lane& lane, double ns_per_px) {
  if (lane.spans.empty()) return;
  std::vector<size_t> order(lane.spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lane.spans[a].start < lane.spans[b].start; });
  Lane out{lane.label, {}, {}, {}};
  std::vector<int> merged;
  std::vector<int64_t> longest;
  for (size_t i : order) {
    const Interval& s = lane.spans[i];
    if (!out.spans.empty() && double(s.start - out.spans.back().end) < ns_per_px &&
        double(s.end - out.spans.back().start) < 4 * ns_per_px + double(out.spans.back().length())) {
      out.spans.back().end = std::max(out.spans.back().end, s.end);
      ++merged.back();
      if (s.length() > longest.back()) longest.back() = s.length(), out.marks.back() = lane.marks[i];
      continue;
    }
    out.add(s, lane.titles[i], lane.marks[i]);
    merged.push_back(1);
    longest.push_back(s.length());
  }
  for (size_t i = 0; i < out.spans.size(); ++i)
    if (merged[i] > 1)
      out.titles[i] = fmt::format("{} events merged ({} at this zoom)", merged[i], ms(out.spans[i].length()));
  lane = std::move(out);
}

string device_name(int32_t device) { return device >= 0 ? fmt::format("device {}", device) : "device ?"; }

}  // namespace

void timeline(std::ostream& os, const TraceIndex& index, const HtmlOptions& o) {
  const Trace& t = index.trace();
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
  constexpr int kLabelW = 150, kW = 850, kLaneH = 18;
  double ns_per_px = double(hi - lo) / kW;
  auto inside = [&](int64_t s, int64_t d) { return s < hi && s + d > lo; };
  auto title = [&](StrId name, int64_t dur) { return fmt::format("{} ({})", t.str(name), ms(dur)); };

  std::vector<Lane> lanes;
  // Host: the main thread's ops at nesting depth 0..2.
  std::vector<Lane> host(3);
  for (int d = 0; d < 3; ++d) host[size_t(d)].label = fmt::format("host ops (depth {})", d);
  Lane syncs{"syncs", {}, {}, {}};
  for (uint32_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (!inside(op.start_ns, op.dur_ns)) continue;
    if (op.kind == OpKind::PythonSync) {
      syncs.add({op.start_ns, op.start_ns + std::max<int64_t>(op.dur_ns, 1)}, title(op.name, op.dur_ns), Mark::Sync);
      continue;
    }
    if (op.pid != index.main_pid() || op.tid != index.main_tid()) continue;
    int depth = 0;
    for (uint32_t p = op.parent; p != kNone && depth < 3; p = t.ops[p].parent) ++depth;
    if (depth >= 3) continue;
    host[size_t(depth)].add({op.start_ns, op.start_ns + op.dur_ns}, title(op.name, op.dur_ns), Mark::HostOp);
  }
  for (const RuntimeCall& r : t.runtime) {
    if (r.kind != RuntimeKind::Sync || !inside(r.start_ns, r.dur_ns)) continue;
    syncs.add({r.start_ns, r.start_ns + std::max<int64_t>(r.dur_ns, 1)}, title(r.name, r.dur_ns), Mark::Sync);
  }
  for (auto& l : host)
    if (!l.spans.empty()) lanes.push_back(std::move(l));
  // Device: one lane per (device, stream), the busiest 8; each bar in its task's colour.
  std::map<std::pair<int32_t, int32_t>, Lane> streams;
  bool unknown_device = false;
  for (const Kernel& k : t.kernels) {
    if (!inside(k.start_ns, k.dur_ns)) continue;
    if (k.kind == TaskKind::Sync) {
      syncs.add({k.start_ns, k.start_ns + std::max<int64_t>(k.dur_ns, 1)}, title(k.name, k.dur_ns), Mark::Sync);
      continue;
    }
    Lane& l = streams[{k.device, k.stream}];
    if (l.label.empty())
      l.label = k.stream >= 0 ? fmt::format("{} stream {}", device_name(k.device), k.stream) : device_name(k.device);
    unknown_device = unknown_device || k.device < 0;
    l.add({k.start_ns, k.start_ns + k.dur_ns}, title(k.name, k.dur_ns), mark_of(k));
  }
  std::vector<Lane> stream_lanes;
  for (auto& [key, l] : streams) stream_lanes.push_back(std::move(l));
  std::stable_sort(stream_lanes.begin(), stream_lanes.end(),
                   [](const Lane& a, const Lane& b) { return a.spans.size() > b.spans.size(); });
  if (stream_lanes.size() > 8) stream_lanes.resize(8);
  for (auto& l : stream_lanes) lanes.push_back(std::move(l));
  // The gaps IDLE001 counts: per device, between its first and last task, at least min_gap_ns.
  for (int32_t device : index.devices()) {
    const auto& busy = index.device_busy(device);
    if (busy.empty()) continue;
    Lane idle{index.devices().size() == 1 ? "device idle" : device_name(device) + " idle", {}, {}, {}};
    for (const Interval& g : gaps_within(busy, std::max(lo, busy.front().start), std::min(hi, busy.back().end), o.min_gap_ns))
      idle.add(g, fmt::format("{} idle {}", device_name(device), ms(g.length())), Mark::Idle);
    if (!idle.spans.empty() && lanes.size() < 16) lanes.push_back(std::move(idle));
  }
  if (!syncs.spans.empty()) lanes.push_back(std::move(syncs));

  for (auto& l : lanes) downsample(l, ns_per_px);
  bool drawn_mark[std::size(kMarks)] = {};
  for (const Lane& l : lanes)
    for (Mark m : l.marks) drawn_mark[size_t(m)] = true;

  section_begin(os, "timeline-section", "Timeline", which);
  os << "<div class=\"panel\">\n<p>" << html_escape(which)
     << ". Hover a bar for its name; bars closer than a pixel are merged. Device idle: gaps of at least "
     << html_escape(ms(o.min_gap_ns)) << " between a device's first and last task, the gaps IDLE001 counts (--min-gap-us)"
     << (unknown_device ? "; device ?: the trace does not say which device ran the task" : "") << ".</p>\n";
  os << "<div class=\"legend\">";
  for (size_t m = 0; m < std::size(kMarks); ++m)
    if (drawn_mark[m])
      os << "<span data-mark=\"" << kMarks[m].key << "\"><i style=\"background:" << kMarks[m].color << "\"></i>"
         << kMarks[m].legend << "</span>";
  os << "</div>\n";
  int h = int(lanes.size()) * (kLaneH + 4) + 24;
  os << svg_open("timeline", kLabelW + kW + 10, h);
  size_t drawn = 0, budget = o.max_timeline_rects;
  for (size_t li = 0; li < lanes.size(); ++li) {
    const Lane& l = lanes[li];
    double y = double(li) * (kLaneH + 4);
    os << fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text>\n", y + 13, html_escape(shorten(l.label, 26)));
    for (size_t i = 0; i < l.spans.size() && drawn < budget; ++i, ++drawn) {
      double x0 = kLabelW + double(std::max(l.spans[i].start, lo) - lo) / ns_per_px;
      double x1 = kLabelW + double(std::min(l.spans[i].end, hi) - lo) / ns_per_px;
      const MarkStyle& st = style(l.marks[i]);
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" data-mark=\"{}\">"
                        "<title>{}</title></rect>\n",
                        x0, y, std::max(x1 - x0, 0.8), kLaneH, st.color, st.key,
                        html_escape(shorten(l.titles[i], kMaxTitleBytes)));
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
  section_end(os);
}

}  // namespace npud::html
