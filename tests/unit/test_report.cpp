// Text and JSON reporters, the JSON writer, and escaping of hostile input.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <sstream>

#include "analysis/trace_index.hpp"
#include "util/escape.hpp"
#include "util/json_writer.hpp"
#include "report/render.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

using test::TraceBuilder;

// An op name as hostile as input gets: quotes, backslash, newline, a script tag, a 0x01
// byte, an ANSI escape, a bidi override and an invalid UTF-8 byte.
const std::string kHostile = std::string("aten::\"evil\"\\\n<script>alert(1)</script>\x01\x1b[31m\xE2\x80\xAE") +
                             "\xFF" + "end";

Finding make_finding(std::string rule, Severity sev, std::string message, int64_t cost) {
  Finding f;
  f.rule = std::move(rule);
  f.severity = sev;
  f.message = std::move(message);
  f.cost_ns = cost;
  f.metrics = {{"count", 3}, {"time_ns", 1500000}, {"time_share", 0.125}};
  f.fix = "do this";
  return f;
}

Report sample_report() {
  Report r;
  r.command = "analyze";
  r.summary.source = "trace.json";
  r.summary.format = "kineto-json";
  r.summary.torch_npu = "2.1.0";
  r.summary.knowledge_note = "release tag v5.0.0-pytorch2.1.0, op-plugin 5d116fc37455; chosen: --torch-npu";
  r.summary.ops = 10;
  r.summary.steps = 2;
  r.summary.step_time_ns = 500;
  r.summary.device_busy_share = 0.5;
  r.findings.push_back(make_finding("SYNC001", Severity::Error, "aten::item at train.py:95: 3 syncs", 900));
  r.findings.back().location = {"train.py", 95, "aten::item", "model"};
  r.findings.back().notes = {"note one", "note two", "note three"};
  r.findings.push_back(make_finding("FALLBACK002", Severity::Warning, kHostile + " has no NPU kernel", 500));
  r.findings.back().location.op = kHostile;
  for (int i = 0; i < 7; ++i) r.findings.push_back(make_finding("HOT001", Severity::Info, "hot op " + std::to_string(i), 100 - i));
  r.warnings.push_back({"skipped event", 1234});
  r.warnings.push_back({"no offset", 0});
  return r;
}

std::string json_of(const Report& r) {
  std::ostringstream os;
  render_json(os, r);
  return os.str();
}

std::string text_of(const Report& r, TextOptions o = {}) {
  std::ostringstream os;
  render_text(os, r, o);
  return os.str();
}

// --- JSON ---

TEST(ReportJson, ParsesBackWithTheDocumentedStructure) {
  std::string out = json_of(sample_report());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS) << out;
  EXPECT_EQ(int64_t(doc["schema_version"]), kJsonSchemaVersion);
  EXPECT_EQ(std::string_view(doc["tool"]["name"]), "npu-doctor");
  EXPECT_FALSE(std::string_view(doc["tool"]["version"]).empty());
  EXPECT_EQ(std::string_view(doc["command"]), "analyze");

  auto summary = doc["summary"];
  EXPECT_EQ(std::string_view(summary["source"]), "trace.json");
  EXPECT_EQ(std::string_view(summary["torch_npu"]), "2.1.0");
  EXPECT_EQ(uint64_t(summary["ops"]), 10u);
  EXPECT_EQ(int64_t(summary["step_time_ns"]), 500);
  EXPECT_DOUBLE_EQ(double(summary["device_busy_share"]), 0.5);
  EXPECT_EQ(uint64_t(summary["findings"]["total"]), 9u);
  EXPECT_EQ(uint64_t(summary["findings"]["error"]), 1u);
  EXPECT_EQ(uint64_t(summary["findings"]["warning"]), 1u);
  EXPECT_EQ(uint64_t(summary["findings"]["info"]), 7u);

  simdjson::dom::array findings = doc["findings"];
  ASSERT_EQ(findings.size(), 9u);
  auto first = findings.at(0);
  EXPECT_EQ(std::string_view(first["id"]), "SYNC001");
  EXPECT_EQ(std::string_view(first["name"]), "host-device-sync");
  EXPECT_EQ(std::string_view(first["severity"]), "error");
  EXPECT_EQ(std::string_view(first["location"]["file"]), "train.py");
  EXPECT_EQ(int64_t(first["location"]["line"]), 95);
  EXPECT_EQ(std::string_view(first["location"]["op"]), "aten::item");
  EXPECT_EQ(std::string_view(first["location"]["module"]), "model");
  EXPECT_EQ(double(first["metrics"]["count"]), 3);
  EXPECT_EQ(double(first["metrics"]["time_share"]), 0.125);
  EXPECT_EQ(int64_t(first["cost_ns"]), 900);
  EXPECT_EQ(std::string_view(first["fix"]), "do this");
  EXPECT_EQ(simdjson::dom::array(first["notes"]).size(), 3u);

  // Unknown location parts are null, not missing.
  auto second = findings.at(1);
  EXPECT_TRUE(second["location"]["file"].is_null());
  EXPECT_TRUE(second["location"]["line"].is_null());
  EXPECT_TRUE(second["location"]["module"].is_null());

  simdjson::dom::array warnings = doc["warnings"];
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(std::string_view(warnings.at(0)["message"]), "skipped event");
  EXPECT_EQ(uint64_t(warnings.at(0)["offset"]), 1234u);
  EXPECT_TRUE(warnings.at(1)["offset"].is_null());
}

TEST(ReportJson, HostileStringsAreEscaped) {
  std::string out = json_of(sample_report());
  // Nothing raw: no control byte, no markup, no invalid UTF-8 byte.
  EXPECT_EQ(out.find("<script>"), std::string::npos);
  EXPECT_EQ(out.find('\x01'), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\xFF'), std::string::npos);
  EXPECT_NE(out.find("\\u003cscript\\u003e"), std::string::npos);
  EXPECT_NE(out.find("\\u0001"), std::string::npos);

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);
  std::string_view op = doc["findings"].at(1)["location"]["op"];
  // Reads back as the original, with the invalid byte replaced by U+FFFD.
  std::string expected = kHostile;
  expected.replace(expected.find('\xFF'), 1, "\xEF\xBF\xBD");
  EXPECT_EQ(op, expected);
}

TEST(ReportJson, EmptyReportIsValid) {
  Report r;
  std::string out = json_of(r);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS) << out;
  EXPECT_EQ(simdjson::dom::array(doc["findings"]).size(), 0u);
  EXPECT_TRUE(doc["summary"]["device_busy_share"].is_null());
  EXPECT_TRUE(doc["summary"]["torch_npu"].is_null());
}

TEST(JsonWriter, CommasNestingAndNumbers) {
  std::ostringstream os;
  JsonWriter w(os, 0);
  w.begin_object();
  w.field("a", int64_t(1)).field("b", 0.5).field("nan", std::nan("")).field("t", true);
  w.key("list").begin_array().value("x").null().begin_object().end_object().begin_array().end_array().end_array();
  w.end_object();
  EXPECT_EQ(os.str(), R"({"a":1,"b":0.5,"nan":null,"t":true,"list":["x",null,{},[]]})");
}

TEST(JsonWriter, QuoteEscapesEverythingUnsafe) {
  EXPECT_EQ(JsonWriter::quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonWriter::quote(std::string("\n\t\x01\x7f", 4)), R"("\n\t\u0001\u007f")");
  EXPECT_EQ(JsonWriter::quote("</script>&"), R"("\u003c/script\u003e\u0026")");
  EXPECT_EQ(JsonWriter::quote("\xE2\x80\xA8"), R"("\u2028")");
  EXPECT_EQ(JsonWriter::quote("caf\xC3\xA9 \xE4\xB8\xAD"), "\"caf\xC3\xA9 \xE4\xB8\xAD\"");   // valid UTF-8 passes
  EXPECT_EQ(JsonWriter::quote("\xC0\xAF"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                 // overlong '/'
  EXPECT_EQ(JsonWriter::quote("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
  EXPECT_EQ(JsonWriter::quote("\xE2\x82"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");                 // truncated
}

TEST(JsonWriter, MisuseThrows) {
  std::ostringstream os;
  JsonWriter w(os);
  w.begin_object();
  EXPECT_THROW(w.value("no key"), std::logic_error);
  EXPECT_THROW(w.end_array(), std::logic_error);
}

// --- text ---

TEST(ReportText, GroupsByRuleWorstFirstAndEndsWithSummary) {
  std::string out = text_of(sample_report(), {.color = false, .verbose = false, .host_ranking = true});
  size_t sync = out.find("SYNC001 host-device-sync (scan: SYNC101)  error  1 finding");
  size_t fallback = out.find("FALLBACK002 cpu-fallback-op (scan: API101)  warning  1 finding");
  size_t hot = out.find("HOT001 hot-ops  info  7 findings");
  ASSERT_NE(sync, std::string::npos) << out;
  ASSERT_NE(fallback, std::string::npos) << out;
  ASSERT_NE(hot, std::string::npos) << out;
  EXPECT_LT(sync, fallback);
  EXPECT_LT(fallback, hot);
  EXPECT_NE(out.find("at train.py:95, op aten::item, module model"), std::string::npos) << out;
  EXPECT_NE(out.find("count=3  time=1.50 ms  time_share=12.5%"), std::string::npos) << out;
  EXPECT_NE(out.find("fix: do this"), std::string::npos);
  // Top 5 per rule by default.
  EXPECT_NE(out.find("hot op 4"), std::string::npos);
  EXPECT_EQ(out.find("hot op 5"), std::string::npos);
  EXPECT_NE(out.find("... 2 more (use --verbose)"), std::string::npos);
  EXPECT_NE(out.find("(+1 notes with --verbose)"), std::string::npos);
  EXPECT_NE(out.find("op list: torch_npu 2.1.0 (release tag v5.0.0-pytorch2.1.0, op-plugin 5d116fc37455; chosen"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("9 findings (1 error, 1 warning, 7 info) in trace.json\n")) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos);  // no colour unless asked
}

// The first screen: what to fix first, one line each; HOT001 (host CPU timings) only on request.
TEST(ReportText, OpensWithTopProblemsAndHidesHostTimings) {
  std::string out = text_of(sample_report());
  size_t top = out.find("top problems");
  size_t first = out.find("  1. SYNC001");
  size_t second = out.find("  2. FALLBACK002");
  ASSERT_NE(top, std::string::npos) << out;
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_LT(top, out.find("SYNC001 host-device-sync"));
  EXPECT_EQ(out.find("  3. HOT001"), std::string::npos) << out;
  EXPECT_EQ(out.find("HOT001 hot-ops  info"), std::string::npos) << out;
  // A profile's host times are the host's that recorded it; a capture's, this machine's.
  EXPECT_NE(out.find("HOT001 hot-ops: 7 host-op timings of the recording host's CPU, not NPU costs"), std::string::npos)
      << out;
  EXPECT_TRUE(out.ends_with("9 findings (1 error, 1 warning, 7 info) in trace.json\n")) << out;
  Report capture = sample_report();
  capture.summary.estimated_costs = true;
  out = text_of(capture);
  EXPECT_NE(out.find("HOT001 hot-ops: 7 host-op timings of this machine's CPU, not NPU costs"), std::string::npos) << out;
}

TEST(ReportText, VerboseShowsEverything) {
  std::string out = text_of(sample_report(), {.color = false, .verbose = true});
  EXPECT_NE(out.find("hot op 6"), std::string::npos);
  EXPECT_NE(out.find("note three"), std::string::npos);
  EXPECT_EQ(out.find("more (use --verbose)"), std::string::npos);
}

TEST(ReportText, HostileInputIsNeutralised) {
  std::string out = text_of(sample_report(), {.color = false, .verbose = true});
  EXPECT_EQ(out.find('\x01'), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find("\xE2\x80\xAE"), std::string::npos);  // bidi override
  EXPECT_EQ(out.find('\xFF'), std::string::npos);
  // The message stays on one line, with the newline shown escaped.
  size_t at = out.find("aten::\"evil\"\\\\n<script>");
  ASSERT_NE(at, std::string::npos) << out;
  size_t eol = out.find('\n', at);
  EXPECT_NE(out.substr(at, eol - at).find("has no NPU kernel"), std::string::npos);
  EXPECT_NE(out.find("\\x01\\x1b[31m\\u202e\xEF\xBF\xBD" "end"), std::string::npos) << out;
}

TEST(ReportText, ColourOnlyWhenAsked) {
  std::string out = text_of(sample_report(), {.color = true, .verbose = false});
  EXPECT_NE(out.find("\x1b[1;31merror\x1b[0m"), std::string::npos);
}

TEST(ReportText, NoFallbackRulesNoOpListLine) {
  Report r = sample_report();
  r.rules_run = {"SYNC001", "HOT001"};
  EXPECT_EQ(text_of(r).find("op list:"), std::string::npos);
  r.rules_run.push_back("FALLBACK002");
  EXPECT_NE(text_of(r).find("op list:"), std::string::npos);
}

TEST(ReportText, EmptyReport) {
  Report r;
  r.summary.source = "x.json";
  EXPECT_EQ(text_of(r), "0 findings (0 errors, 0 warnings, 0 info) in x.json\n");
}

// --- summary ---

TEST(Summarize, CountsAndDeviceBusyShare) {
  TraceBuilder b;
  b.step(1, 0, 400).step(2, 400, 600);
  b.op("aten::mm", 0, 1000);
  b.kernel("a", 0, 300, {.stream = 1}).kernel("b", 200, 200, {.stream = 2});  // union 400 us
  b.kernel("sync", 500, 400, {.kind = TaskKind::Sync});                       // not busy time
  b.runtime("cudaLaunchKernel", RuntimeKind::Launch, 10, 5);
  const Trace built = b.build();
  ReportSummary s = summarize(TraceIndex(built));
  EXPECT_EQ(s.source, "test.json");
  EXPECT_EQ(s.format, "kineto-json");
  EXPECT_EQ(s.ops, 1u);
  EXPECT_EQ(s.kernels, 3u);
  EXPECT_EQ(s.runtime_calls, 1u);
  EXPECT_EQ(s.steps, 2u);
  EXPECT_EQ(s.span_ns, 1000000);
  EXPECT_EQ(s.step_time_ns, 500000);
  EXPECT_DOUBLE_EQ(s.device_busy_share, 0.4);
  TraceBuilder empty;
  const Trace none = empty.build();
  EXPECT_EQ(summarize(TraceIndex(none)).device_busy_share, -1);
}

TEST(Escape, TerminalSafeKeepsTextAndShowsControls) {
  EXPECT_EQ(terminal_safe("plain caf\xC3\xA9"), "plain caf\xC3\xA9");
  EXPECT_EQ(terminal_safe("a\nb\tc\x1b"), "a\\nb\\tc\\x1b");
  EXPECT_EQ(terminal_safe("a\nb", true), "a\nb");
  EXPECT_EQ(terminal_safe("\xC2\x9B"), "\\x9b");  // C1 CSI
}

}  // namespace
}  // namespace npud
