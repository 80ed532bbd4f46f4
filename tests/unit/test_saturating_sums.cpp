// #18: durations that each fit int64 but whose sums do not (a crafted trace: three steps of
// 146 years each, overlapping, and kernels as long). Every sum saturates: no signed overflow
// (UBSan aborts on one in the sanitizer phase), no negative step time or axis label, and the
// rules that used to drop their findings still report.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

#include "diff/trace_diff.hpp"
#include "pipeline/pipeline.hpp"
#include "ingest/chrome_json.hpp"
#include "knowledge/knowledge.hpp"
#include "analysis/trace_index.hpp"
#include "report/html_report.hpp"
#include "report/render.hpp"
#include "rules/rule.hpp"
#include "util/saturate.hpp"

using namespace npud;

namespace {

Trace huge_trace() {
  // 4.6e12 us = 4.6e18 ns each: one fits int64, any two summed do not; every end fits.
  std::string json = "[";
  for (int i = 0; i < 3; ++i) {
    json += R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" + std::to_string(i) +
            R"(","pid":1,"tid":1,"ts":0,"dur":4600000000000},)";
    json += R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":4599999999990},)";
    json += R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":2,"dur":4599999999000,"args":{"device":0,"stream":7}},)";
  }
  json += R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":3,"dur":1}])";
  return read_chrome_json_buffer(json, "huge.json", {});
}

}  // namespace

TEST(SaturatingSums, AddSaturatesBothWays) {
  int64_t a = std::numeric_limits<int64_t>::max() - 1;
  add_saturating(a, int64_t(5));
  EXPECT_EQ(a, std::numeric_limits<int64_t>::max());
  int64_t b = std::numeric_limits<int64_t>::min() + 1;
  add_saturating(b, int64_t(-5));
  EXPECT_EQ(b, std::numeric_limits<int64_t>::min());
  int64_t c = 40;
  add_saturating(c, int64_t(2));
  EXPECT_EQ(c, 42);
}

TEST(SaturatingSums, HugeDurationsNeitherOverflowNorVanish) {
  Trace t = huge_trace();
  ASSERT_EQ(t.steps.size(), 3u);
  ReportSummary s = summarize(TraceIndex(t));
  EXPECT_GT(s.step_time_ns, 0);
  const KnowledgeVersion& kv = Knowledge::builtin().newest();
  AnalysisContext ctx{t, kv, {}};
  std::vector<Finding> findings = run_rules(ctx, trace_rules());
  bool hot = false;
  for (const Finding& f : findings) {
    hot = hot || f.rule == "HOT001";
    EXPECT_GE(f.cost_ns, 0) << f.rule << ": " << f.message;
  }
  EXPECT_TRUE(hot);
  Report r;
  r.command = "analyze";
  r.summary = s;
  r.findings = findings;
  std::ostringstream html;
  render_html(html, r, TraceIndex(t));
  EXPECT_EQ(html.str().find(">-"), std::string::npos);  // no negative label
  AnalysisSettings settings;
  settings.torch_npu = &kv;
  settings.rules = trace_rules();
  TraceDiff d = diff_traces(analyze_trace(t, settings), analyze_trace(t, settings));
  EXPECT_EQ(d.host.before_ns, d.host.after_ns);
  EXPECT_GE(d.host.before_ns, 0);
}
