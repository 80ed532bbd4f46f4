// The HTML report: escaping of hostile input text, self-containment, chart ids.
#include <sstream>

#include <gtest/gtest.h>

#include "analysis/trace_index.hpp"
#include "report/html_report.hpp"

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

Trace hostile_trace() {
  Trace t;
  Op op;
  op.name = t.intern("<script>alert(1)</script>");
  op.kind = OpKind::Aten;
  op.dur_ns = 1000;
  t.ops.push_back(op);
  Kernel k;
  k.name = t.intern("<img src=x onerror=alert(2)>");
  k.start_ns = 100;
  k.dur_ns = 500;
  k.device = 0;
  k.stream = 7;
  t.kernels.push_back(k);
  t.finalize();
  return t;
}

TEST(Html, ReportIsSelfContainedAndEscaped) {
  Trace t = hostile_trace();
  Report r;
  r.command = "analyze";
  r.summary = summarize(t);
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
  for (int i = 0; i < 200000; ++i) {
    Kernel k;
    k.name = t.intern("k");
    k.start_ns = int64_t(i) * 100;
    k.dur_ns = 60;
    k.device = 0;
    k.stream = 1;
    t.kernels.push_back(k);
  }
  t.finalize();
  Report r;
  r.summary = summarize(t);
  std::ostringstream os;
  HtmlOptions o;
  render_html(os, r, TraceIndex(t), o);
  std::string html = os.str();
  size_t rects = 0;
  for (size_t p = html.find("<rect"); p != std::string::npos; p = html.find("<rect", p + 1)) ++rects;
  EXPECT_LE(rects, o.max_timeline_rects + 2 * o.top_ops);
  EXPECT_GT(rects, 0u);
}

}  // namespace
}  // namespace npud
