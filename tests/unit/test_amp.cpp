// amp-check on hand-written captures (tests/data/amp, written to docs/formats/amp.md): the
// reader, the AMP rules, the report sections and the autocast list file for the shim.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "analysis/amp.hpp"
#include "cli/amp_check.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "knowledge/knowledge.hpp"
#include "analysis/trace_index.hpp"
#include "report/html_report.hpp"
#include "report/render.hpp"
#include "rules/amp_rules.hpp"
#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

std::string data(const std::string& name) { return std::string(NPUD_TEST_DATA) + "/amp/" + name; }

Trace read(const std::string& name) { return read_trace(data(name)); }

const KnowledgeVersion& v21() { return *Knowledge::builtin().find("2.1.0"); }

std::vector<Finding> run(const Rule& rule, const Trace& t) { return test::run_rule(rule, t, v21()); }

const OpNumeric* numeric_named(const Trace& t, std::string_view op) {
  for (const Op& o : t.ops)
    if (t.str(o.name) == op && t.numeric_of(o)) return t.numeric_of(o);
  return nullptr;
}

// ---- reader ----------------------------------------------------------------------------

TEST(AmpReader, ReadsHeaderNumericsHistogramsAndCalls) {
  Trace t = read("overflow.npud.json");
  EXPECT_EQ(t.format, InputFormat::Capture);
  EXPECT_EQ(t.env_value("mode"), "amp-check");
  EXPECT_EQ(t.env_value("amp_dtype"), "float16");
  EXPECT_EQ(t.env_value("amp_level"), "O1");
  EXPECT_EQ(t.env_value("amp_emulated"), "true");
  EXPECT_EQ(t.env_value("amp_metric_dtype"), "float64");
  EXPECT_EQ(t.numerics.size(), 5u);
  const OpNumeric* exp = numeric_named(t, "aten::exp");
  ASSERT_NE(exp, nullptr);
  EXPECT_TRUE(exp->lowp);
  EXPECT_EQ(t.str(exp->dtype), "float16");
  EXPECT_EQ(exp->local.overflow, 12);
  EXPECT_EQ(exp->local.inf, 12);
  EXPECT_DOUBLE_EQ(exp->local.cos, 0.2311);
  EXPECT_DOUBLE_EQ(exp->local.gt_5e3, 0.875);
  EXPECT_TRUE(diverges(exp->local));
  EXPECT_EQ(exp->drift.finite, 4084);
  // numerics point back at their op after finalize() sorted the ops
  for (const OpNumeric& n : t.numerics) EXPECT_EQ(t.ops[n.op].numeric, uint32_t(&n - t.numerics.data()));
  ASSERT_EQ(t.grad_histograms.size(), 2u);
  const GradHistogram& g = t.grad_histograms[0];
  EXPECT_EQ(g.step_number, 1);
  EXPECT_EQ(g.elements, 4000);
  EXPECT_EQ(g.underflow_fp16, 500);
  EXPECT_EQ(g.log2_min, -40);
  EXPECT_EQ(t.bins(g).size(), 57u);
  EXPECT_EQ(t.bins(g)[10], 500);   // 2^-30
  EXPECT_FALSE(g.scaled);
  EXPECT_NE(g.loss_scale, g.loss_scale);   // null
  EXPECT_TRUE(t.has_amp());
}

TEST(AmpReader, ReadsGradScalerCallsWithStacks) {
  Trace t = read("clean.npud.json");
  ASSERT_EQ(t.amp_calls.size(), 7u);   // update() opens the next step; the last one falls after the recording
  EXPECT_EQ(t.amp_calls[0].kind, AmpApi::Autocast);
  EXPECT_EQ(t.amp_calls[1].kind, AmpApi::Scale);
  EXPECT_DOUBLE_EQ(t.amp_calls[1].scale, 2048.0);
  EXPECT_EQ(t.amp_calls[1].step_number, 1);
  auto frames = t.frames_of(t.amp_calls[1].stack);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(t.str(t.frames[frames[0]].file), "prog.py");
  EXPECT_EQ(t.frames[frames[0]].line, 33);
  EXPECT_TRUE(t.grad_histograms[0].scaled);
}

TEST(AmpReader, OtherTracesHaveNoAmpRecords) {
  Trace t = read_trace(std::string(NPUD_TEST_DATA) + "/chrome/capture_cut.npud.json", {.allow_truncated = true});
  EXPECT_FALSE(t.has_amp());
  for (const Rule* r : {&amp001_rule(), &amp002_rule(), &amp003_rule(), &amp004_rule(), &amp005_rule()})
    EXPECT_TRUE(run(*r, t).empty()) << r->id();
}

// A malformed amp value is an InputError at the value's byte offset.
void expect_error_at(const std::string& file, const std::string& token, const std::string& words) {
  std::ifstream in(data("bad/" + file));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find(token);
  ASSERT_NE(at, std::string::npos) << token;
  try {
    read_trace(data("bad/" + file));
    FAIL() << file << " was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), at) << file << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(e.describe().find(file), std::string::npos);
  }
}

TEST(AmpReader, MalformedValuesNameTheByteOffset) {
  expect_error_at("cos_string.npud.json", "\"abc\"", "numeric.local.cos");
  expect_error_at("hist_negative.npud.json", "-3]", "log2_hist");
  expect_error_at("numeric_not_object.npud.json", "5}}", "numeric");
  expect_error_at("emulated_not_bool.npud.json", "\"yes\"", "amp.emulated");
  expect_error_at("scale_string.npud.json", "\"big\"", "scale");
}

// ---- rules -----------------------------------------------------------------------------

TEST(AmpRules, DriftStartsAtTheOverflowingExp) {
  auto f = run(amp001_rule(), read("overflow.npud.json"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "AMP001");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].location.op, "aten::exp");
  EXPECT_EQ(f[0].location.file, "prog.py");
  EXPECT_EQ(f[0].location.line, 12);
  EXPECT_EQ(f[0].location.module, "model.head");
  EXPECT_DOUBLE_EQ(f[0].metric("local_overflow"), 12);
  EXPECT_DOUBLE_EQ(f[0].metric("local_cos"), 0.2311);
  EXPECT_DOUBLE_EQ(f[0].metric("step"), 1);
  EXPECT_NE(f[0].message.find("drift starts at aten::exp"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].fix.find("torch.exp(x.float())"), std::string::npos);
}

TEST(AmpRules, GradualDriftNamesTheFirstOpPastTheThresholds) {
  auto f = run(amp001_rule(), read("gradual.npud.json"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].location.line, 22);
  EXPECT_EQ(f[0].location.module, "model.layers.2");
  EXPECT_NE(f[0].message.find("gradually"), std::string::npos);
  EXPECT_TRUE(run(amp002_rule(), read("gradual.npud.json")).empty());
}

TEST(AmpRules, NoDriftNoFinding) {
  Trace t = read("clean.npud.json");
  EXPECT_TRUE(run(amp001_rule(), t).empty());
  EXPECT_TRUE(run(amp002_rule(), t).empty());
  EXPECT_TRUE(run(amp004_rule(), t).empty());
  EXPECT_TRUE(run(amp005_rule(), t).empty());
}

// #16: backward ops (`bwd`) take their forward op's line and are not measured for AMP001/002
// (gradient range is loss scaling's job); a near-zero tensor whose cos is meaningless (largest
// error 3.8e-11) is not where drift starts; nn.BCELoss under autocast raises on the NPU.
TEST(AmpRules, BackwardOpsNearZeroTensorsAndBannedOps) {
  Trace t = read("backward_banned.npud.json");
  size_t backward = 0;
  for (const Op& o : t.ops)
    if (o.backward) {
      ++backward;
      EXPECT_NE(o.forward_op, 0u);
    }
  EXPECT_EQ(backward, 3u);
  EXPECT_TRUE(run(amp001_rule(), t).empty());
  EXPECT_TRUE(run(amp002_rule(), t).empty());
  auto banned = run(amp006_rule(), t);
  ASSERT_EQ(banned.size(), 1u);
  EXPECT_EQ(banned[0].severity, Severity::Error);
  EXPECT_EQ(banned[0].location.op, "aten::binary_cross_entropy");
  EXPECT_EQ(banned[0].location.line, 45);
  EXPECT_DOUBLE_EQ(banned[0].metric("calls"), 1);   // its backward is not a second call
  EXPECT_NE(banned[0].fix.find("BCEWithLogitsLoss"), std::string::npos);
  // Not inside the program's autocast: not reported.
  for (OpNumeric& n : t.numerics) n.in_autocast = false;
  EXPECT_TRUE(run(amp006_rule(), t).empty());
  // Every other capture has no banned op.
  for (const char* name : {"overflow.npud.json", "clean.npud.json", "gradual.npud.json"})
    EXPECT_TRUE(run(amp006_rule(), read(name)).empty()) << name;
}

// Issue 45: an op inside a backward node (the mul.Tensor a MulBackward's mul.Scalar runs, no
// `bwd` of its own) is backward work too: not kept in fp32. An op that ran in fp32 (the
// optimizer's addcdiv_ under autocast) carries its inputs' drift: it does not start it.
TEST(AmpRules, NoDriftStartOrKeepFp32InBackwardNodesOrFp32Updates) {
  Trace t = read("backward_nested_fp32_update.npud.json");
  EXPECT_EQ(t.numerics.size(), 4u);   // the ops were read with their numerics
  EXPECT_TRUE(run(amp001_rule(), t).empty());
  EXPECT_TRUE(run(amp002_rule(), t).empty());
}

TEST(AmpRules, KeepInFp32ListsOverflowAndUnderflowWithTheNpuPolicy) {
  auto f = run(amp002_rule(), read("overflow.npud.json"));
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.op, "aten::exp");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_DOUBLE_EQ(f[0].metric("bad_calls"), 2);
  EXPECT_DOUBLE_EQ(f[0].metric("calls"), 2);
  EXPECT_DOUBLE_EQ(f[0].metric("overflow"), 12 + 10);   // both calls
  // torch_npu 2.1.0's autocast list runs exp in fp32 already
  EXPECT_DOUBLE_EQ(f[0].metric("npu_autocast_fp32"), 1);
  bool said = false;
  for (const auto& n : f[0].notes) said = said || n.find("already runs aten::exp in fp32") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(f[1].location.op, "aten::mul.Tensor");
  EXPECT_EQ(f[1].location.line, 14);
  EXPECT_EQ(f[1].severity, Severity::Warning);
  EXPECT_NE(f[1].message.find("underflows (205"), std::string::npos) << f[1].message;
  EXPECT_DOUBLE_EQ(f[1].metric("npu_autocast_fp32"), 0);
}

TEST(AmpRules, LossScaleAdviceFromGradientHistograms) {
  auto f = run(amp003_rule(), read("overflow.npud.json"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  // 1000 of 8000 nonzero elements below 2^-24; largest bucket 2^3 -> scale 2^(14-3) = 2048
  EXPECT_DOUBLE_EQ(f[0].metric("underflow_share"), 1000.0 / 8000.0);
  EXPECT_DOUBLE_EQ(f[0].metric("max_log2"), 3);
  EXPECT_DOUBLE_EQ(f[0].metric("suggested_scale"), 2048);
  // at 2^11 only buckets below 2^(-24-11) would stay lost: the smallest is 2^-30
  EXPECT_DOUBLE_EQ(f[0].metric("underflow_share_at_suggested"), 0);
  EXPECT_NE(f[0].fix.find("GradScaler(init_scale=2048)"), std::string::npos) << f[0].fix;

  // #16: the program's own GradScaler (2048 here) already keeps its gradients in range: no
  // advice to give (it was an info finding at every run).
  EXPECT_TRUE(run(amp003_rule(), read("clean.npud.json")).empty());
  EXPECT_TRUE(run(amp003_rule(), read("bf16.npud.json")).empty());
}

// Issue 41: amp-check whose steps ran all in fp32 (Lightning's closure steps before the shim
// emulated inside closures) is an error said first, and the report's first line says so.
TEST(AmpRules, NoOpInLowPrecisionIsACaptureError) {
  Trace t = read("bf16.npud.json");
  EXPECT_TRUE(run(capture001_rule(), t).empty());
  EXPECT_EQ(program_numerics(amp_header(t), amp_counts(t).lowp, amp_counts(t).measured).rfind(
                "the program itself ran in bf16 (emulated", 0),
            0u);
  for (OpNumeric& n : t.numerics) n.lowp = false;
  auto f = run(capture001_rule(), t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_TRUE(f[0].first);
  EXPECT_NE(f[0].message.find("amp-check ran none of the 1 ops it measured in bfloat16"), std::string::npos)
      << f[0].message;
  EXPECT_EQ(program_numerics(amp_header(t), 0, 1).rfind("no op of the program ran in bf16", 0), 0u);
}

TEST(AmpRules, MissingGradScalerForFp16NotForBf16) {
  auto f = run(amp004_rule(), read("overflow.npud.json"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "AMP004");
  EXPECT_NE(f[0].message.find("without a GradScaler"), std::string::npos);
  EXPECT_NE(f[0].fix.find("GradScaler(init_scale=2.0**11)"), std::string::npos) << f[0].fix;
  bool sync_note = false;
  for (const auto& n : f[0].notes) sync_note = sync_note || n.find("syncs with the host") != std::string::npos;
  EXPECT_TRUE(sync_note);
  EXPECT_TRUE(run(amp004_rule(), read("bf16.npud.json")).empty());
  EXPECT_TRUE(run(amp004_rule(), read("clean.npud.json")).empty());
}

TEST(AmpRules, GradScalerMisuse) {
  auto f = run(amp005_rule(), read("misuse.npud.json"));
  ASSERT_EQ(f.size(), 3u);
  auto find = [&](std::string_view words) -> const Finding* {
    for (const auto& x : f)
      if (x.message.find(words) != std::string::npos) return &x;
    return nullptr;
  };
  const Finding* no_scale = find("without scaler.scale");
  ASSERT_NE(no_scale, nullptr);
  EXPECT_EQ(no_scale->location.line, 34);
  EXPECT_DOUBLE_EQ(no_scale->metric("steps_affected"), 1);
  const Finding* unscale = find("unscale_(optimizer) after scaler.step");
  ASSERT_NE(unscale, nullptr);
  EXPECT_EQ(unscale->location.line, 36);
  const Finding* update = find("update() before scaler.step()");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->location.line, 37);
  for (const auto& x : f) EXPECT_EQ(x.severity, Severity::Error);
}

TEST(AmpRules, GradScalerUpdateNeverCalled) {
  auto f = run(amp005_rule(), read("no_update.npud.json"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("update() is never called"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[0].location.line, 33);
}

// ---- summary and reports ---------------------------------------------------------------

Report amp_report(const Trace& t) {
  Report r;
  r.command = "amp-check";
  r.summary = summarize(TraceIndex(t));
  AnalysisContext ctx{t, v21(), {}};
  r.findings = run_rules(ctx, {&amp001_rule(), &amp002_rule(), &amp003_rule(), &amp004_rule(), &amp005_rule()});
  r.amp = summarize_amp(t, v21());
  return r;
}

TEST(AmpReport, SummaryTablesAndTextSections) {
  Trace t = read("overflow.npud.json");
  AmpSummary s = summarize_amp(t, v21(), 3);
  EXPECT_EQ(s.measured, 5u);
  EXPECT_EQ(s.lowp, 4u);
  EXPECT_EQ(s.start_place.op, "aten::exp");
  ASSERT_FALSE(s.by_op.empty());
  EXPECT_EQ(s.by_op[0].name, "aten::exp");
  EXPECT_EQ(s.by_op[0].calls, 2u);
  ASSERT_FALSE(s.by_module.empty());
  EXPECT_EQ(s.by_module[0].name, "model.head");
  EXPECT_LE(s.by_op.size(), 3u);
  std::ostringstream os;
  render_text(os, amp_report(t), TextOptions{});
  std::string text = os.str();
  EXPECT_NE(text.find("  fp16 O1, emulated on CPU;"), std::string::npos) << text;
  // said first: the program's own numbers were low precision (issue: "runs once, unchanged" was false)
  EXPECT_EQ(text.rfind("AMP check: the program itself ran in fp16 (emulated", 0), 0u) << text;
  EXPECT_NE(text.find("drift starts at aten::exp  prog.py:12  module model.head"), std::string::npos) << text;
  EXPECT_NE(text.find("drift by module"), std::string::npos);
  EXPECT_NE(text.find("keep in fp32:"), std::string::npos);
  EXPECT_NE(text.find("initial scale 2^11 = 2048"), std::string::npos) << text;
  EXPECT_NE(text.find("GradScaler: not used"), std::string::npos);
  EXPECT_NE(text.find("AMP001 amp-drift-start"), std::string::npos);
}

TEST(AmpReport, JsonHasTheAmpObject) {
  Trace t = read("overflow.npud.json");
  std::ostringstream os;
  render_json(os, amp_report(t));
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(os.str());
  simdjson::dom::element amp = doc["amp"];
  EXPECT_EQ(std::string_view(amp["dtype"]), "float16");
  EXPECT_EQ(bool(amp["emulated"]), true);
  EXPECT_EQ(std::string_view(amp["drift_start"]["op"]), "aten::exp");
  EXPECT_EQ(int64_t(amp["drift_start"]["line"]), 12);
  EXPECT_EQ(int64_t(amp["drift_start"]["local"]["overflow"]), 12);
  EXPECT_EQ(std::string_view(amp["keep_fp32"].at(0)["npu_autocast_policy"]), "fp32");
  EXPECT_DOUBLE_EQ(double(amp["grads"]["suggested_scale"]), 2048.0);
  EXPECT_EQ(uint64_t(amp["grad_scaler"]["scale"]), 0u);
  bool has_amp001 = false;
  for (auto f : doc["findings"].get_array()) has_amp001 = has_amp001 || std::string_view(f["id"]) == "AMP001";
  EXPECT_TRUE(has_amp001);

  // Other reports: "amp" is null, never missing.
  Report plain;
  std::ostringstream os2;
  render_json(os2, plain);
  simdjson::dom::parser p2;
  EXPECT_TRUE(p2.parse(os2.str())["amp"].is_null());
}

TEST(AmpReport, HtmlDrawsTheDriftCharts) {
  Trace t = read("overflow.npud.json");
  std::ostringstream os;
  render_html(os, amp_report(t), TraceIndex(t));
  std::string html = os.str();
  EXPECT_NE(html.find("id=\"amp-drift-chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"amp-module-chart\""), std::string::npos);
  EXPECT_NE(html.find("Drift starts at aten::exp"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  Report plain = amp_report(t);
  plain.amp.reset();
  std::ostringstream os2;
  render_html(os2, plain, TraceIndex(t));
  EXPECT_EQ(os2.str().find("amp-drift-chart"), std::string::npos);
}

// ---- the shim's list file ----------------------------------------------------------------

TEST(AmpLists, GeneratedFromTheKnowledgeBase) {
  EXPECT_EQ(amp_list_policy("lower_precision_fp"), "lower");
  EXPECT_EQ(amp_list_policy("fp32_set_opt_dtype"), "fp32");
  EXPECT_EQ(amp_list_policy("promote"), "promote");
  EXPECT_EQ(amp_list_policy("banned"), "");
  std::string text = amp_lists_text(v21());
  EXPECT_NE(text.find("aten::conv2d\tlower\n"), std::string::npos);
  EXPECT_NE(text.find("aten::acos\tfp32\n"), std::string::npos);
  EXPECT_NE(text.find("aten::softmax.Dimname\tfp32\n"), std::string::npos);
  EXPECT_NE(text.find("aten::addcdiv\tpromote\n"), std::string::npos);
  EXPECT_EQ(text.find("binary_cross_entropy\t"), std::string::npos);   // banned
  size_t lines = size_t(std::count(text.begin(), text.end(), '\n'));
  EXPECT_EQ(lines, v21().autocast().size() - 1);   // every op but the one banned
}

}  // namespace
}  // namespace npud
