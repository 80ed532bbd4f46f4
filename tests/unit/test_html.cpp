// The HTML report: escaping of hostile input text, self-containment, chart ids.
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "analysis/trace_index.hpp"
#include "report/html_report.hpp"
#include "read_as.hpp"

namespace npud {
namespace {

TEST(Html, EscapesMarkupAndQuotes) {
  EXPECT_EQ(html_escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(html_escape("a&b \"c\" 'd'"), "a&amp;b &quot;c&quot; &#39;d&#39;");
}

TEST(Html, NeutralisesControlsBidiAndBadUtf8) {
  std::string out = html_escape(std::string("x\x1b[31my\xe2\x80\xaez\xff", 12));
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(out.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(html_escape("line\nnext"), "line\nnext");
}

void add_kernel(Trace& t, std::string_view name, int64_t start_ns, int64_t dur_ns, int32_t device, int32_t stream,
                TaskKind kind = TaskKind::Kernel) {
  Kernel k;
  k.name = t.intern(name);
  k.kind = kind;
  k.start_ns = start_ns;
  k.dur_ns = dur_ns;
  k.device = device;
  k.stream = stream;
  t.kernels.push_back(k);
}

Trace hostile_trace() {
  Trace t;
  Op op;
  op.name = t.intern("<script>alert(1)</script>");
  op.kind = OpKind::Aten;
  op.dur_ns = 1000;
  t.ops.push_back(op);
  add_kernel(t, "<img src=x onerror=alert(2)>", 100, 500, 0, 7);
  t.finalize();
  return t;
}

TEST(Html, ReportIsSelfContainedAndEscaped) {
  Trace t = hostile_trace();
  Report r;
  r.command = "analyze";
  r.summary = summarize(TraceIndex(t));
  r.summary.source = "<b>trace</b>.json";
  Finding f;
  f.rule = "HOT001";
  f.message = "<script>alert(3)</script> is hot";
  f.location.op = "<script>alert(1)</script>";
  f.fix = "use </pre><script>x</script>";
  r.findings.push_back(f);
  std::ostringstream os;
  render_html(os, r, TraceIndex(t));
  std::string html = os.str();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>trace"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("id=\"op-chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("id=\"summary-cards\""), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
}

TEST(Html, TimelineIsDownsampled) {
  Trace t;
  for (int i = 0; i < 200000; ++i) add_kernel(t, "k", int64_t(i) * 100, 60, 0, 1);
  t.finalize();
  Report r;
  r.summary = summarize(TraceIndex(t));
  std::ostringstream os;
  HtmlOptions o;
  render_html(os, r, TraceIndex(t), o);
  std::string html = os.str();
  size_t rects = 0;
  for (size_t p = html.find("<rect"); p != std::string::npos; p = html.find("<rect", p + 1)) ++rects;
  EXPECT_LE(rects, o.max_timeline_rects + 2 * o.top_ops);
  EXPECT_GT(rects, 0u);
}

Finding finding(std::string rule, Severity sev, int64_t cost, std::string file, int line, std::string fix) {
  Finding f;
  f.rule = std::move(rule);
  f.severity = sev;
  f.cost_ns = cost;
  f.message = f.rule + " at " + file + ":" + std::to_string(line);
  f.location.file = std::move(file);
  f.location.line = line;
  f.fix = std::move(fix);
  return f;
}

size_t count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// What a capture's report with HOT001, a sync and three copies sharing one fix renders.
std::string capture_page() {
  Trace t = hostile_trace();
  test::read_as_capture(t);
  Report r;
  r.command = "run";
  r.summary = summarize(TraceIndex(t));
  // Sorted worst first as run_rules() leaves them; HOT001's cost is the largest number.
  r.findings.push_back(finding("SYNC001", Severity::Warning, 2'000'000, "train.py", 10, "Keep the value on the device."));
  for (int line : {20, 21, 22})
    r.findings.push_back(finding("CONTIG001", Severity::Info, 1'000'000, "model.py", line,
                                 "Keep the hot path in one layout.\nSecond line."));
  Finding hot = finding("HOT001", Severity::Info, 5'317'000'000, "", 0, "Look at the top ops.");
  hot.location.op = "aten::mm";
  r.findings.insert(r.findings.begin() + 1, hot);
  std::ostringstream os;
  render_html(os, r, TraceIndex(t));
  return os.str();
}

TEST(Html, TopProblemsComeFirstAndLeaveHot001Out) {
  const std::string html = capture_page();
  size_t top = html.find("id=\"top-problems\""), list_end = html.find("</ol>", top);
  ASSERT_NE(top, std::string::npos);
  EXPECT_LT(top, html.find("<svg"));           // before any chart
  EXPECT_LT(top, html.find("<details"));       // and before every folded section
  const std::string list = html.substr(top, list_end - top);
  EXPECT_EQ(count(list, "<li>"), 4u);           // the text report's selection: not HOT001
  EXPECT_EQ(list.find("HOT001</a>"), std::string::npos);
  EXPECT_LT(list.find("SYNC001"), list.find("CONTIG001"));
  EXPECT_NE(list.find("train.py:10"), std::string::npos);
  EXPECT_NE(list.find("fix: Keep the value on the device."), std::string::npos);
  EXPECT_NE(list.find("fix: Keep the hot path in one layout.</div>"), std::string::npos);  // the first line
  EXPECT_EQ(count(list, "fix: as for 2."), 2u);  // the same fix again
}

TEST(Html, Hot001OnACaptureIsNoTimeLost) {
  const std::string html = capture_page();
  size_t hot = html.find("<span class=\"sev-info\">HOT001</span>");
  ASSERT_NE(hot, std::string::npos);
  const std::string summary = html.substr(hot, html.find("</summary>", hot) - hot);
  EXPECT_EQ(summary.find("lost"), std::string::npos) << summary;
  EXPECT_NE(summary.find("1 host-op timing of this machine&#39;s CPU, not NPU costs"), std::string::npos) << summary;
  EXPECT_EQ(html.find("5317"), std::string::npos);   // its cost is no number on the page
  EXPECT_GT(hot, html.find("CONTIG001</span>"));      // after the problems
}

TEST(Html, AFixSharedByFindingsOfARuleIsPrintedOnce) {
  const std::string html = capture_page();
  EXPECT_EQ(count(html, "<pre class=\"fix\">Keep the hot path in one layout."), 1u);
  EXPECT_NE(html.find("One fix for the 3 findings below"), std::string::npos);
  EXPECT_EQ(count(html, "<div class=\"msg\">CONTIG001 at model.py:2"), 3u);  // each finding still listed
}

Trace trace_with_gaps() {
  // Device 0: busy 0-100 us, 130-200 us (a 30 us gap), 300-400 us (a 100 us gap).
  Trace t;
  for (auto [start, end] : {std::pair{0, 100}, {130, 200}, {300, 400}}) add_kernel(t, "k", start * 1000, (end - start) * 1000, 0, 1);
  t.finalize();
  return t;
}

TEST(Html, TimelineIdleGapsUseIdle001sThreshold) {
  Trace t = trace_with_gaps();
  TraceIndex index(t);
  Report r;
  r.summary = summarize(TraceIndex(t));
  for (auto [gap_us, gaps] : {std::pair{50.0, 1u}, {20.0, 2u}}) {
    RuleOptions rules;
    rules.min_gap_us = gap_us;
    HtmlOptions o;
    o.min_gap_ns = rules.min_gap_ns();
    std::ostringstream os;
    render_html(os, r, index, o);
    EXPECT_EQ(count(os.str(), "data-mark=\"idle\""), gaps + 1) << gap_us;  // + the legend entry
  }
}

TEST(Html, TaskColoursFollowTheLegendAndAnUnknownDeviceIsNamed) {
  Trace t;
  add_kernel(t, "MatMul", 0, 50'000, -1, 3);   // -1: the trace does not say which device
  add_kernel(t, "Cast_AiCpu", 100'000, 50'000, -1, 3, TaskKind::AiCpu);
  t.finalize();
  Report r;
  r.summary = summarize(TraceIndex(t));
  std::ostringstream os;
  render_html(os, r, TraceIndex(t));
  const std::string html = os.str();
  EXPECT_NE(html.find("device ? stream 3"), std::string::npos);
  EXPECT_EQ(html.find("device -1"), std::string::npos);
  EXPECT_NE(html.find("<span data-mark=\"ai-cpu\"><i style=\"background:#9467bd\">"), std::string::npos);
  EXPECT_NE(html.find("fill=\"#9467bd\" data-mark=\"ai-cpu\"><title>Cast_AiCpu"), std::string::npos);
  EXPECT_NE(html.find("fill=\"#d9822b\" data-mark=\"device-task\"><title>MatMul"), std::string::npos);
}

TEST(Html, ChartsScaleWithThePage) {
  const std::string html = capture_page();
  for (size_t p = html.find("<svg id="); p != std::string::npos; p = html.find("<svg id=", p + 1)) {
    const std::string tag = html.substr(p, html.find('>', p) - p);
    EXPECT_NE(tag.find("viewBox=\"0 0 "), std::string::npos) << tag;
    EXPECT_NE(tag.find("width=\"100%\""), std::string::npos) << tag;
  }
}

TEST(Report, DeviceTimeLineSaysWhatFreeCounts) {
  StepBreakdown b;
  b.step_ns = 18'200'000;
  b.computing_ns = 2'180'000;
  b.free_ns = 16'020'000;
  EXPECT_EQ(device_time_line(b, 3),
            "device time per step of 18.2 ms (mean of 3 steps): computing 2.18 ms (12.0%), free 16.0 ms (88.0%: no "
            "device task running, gaps of any length; IDLE001 counts the long gaps)");
}

}  // namespace
}  // namespace npud
