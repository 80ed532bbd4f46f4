// The JSON report (schema: docs/json-schema.md). Keys are stable; unknown values are null.
#include "report/json_writer.hpp"
#include "report/report.hpp"
#include "rules/builtin_rules.hpp"

#ifndef NPUD_VERSION
#define NPUD_VERSION "0.0.0"
#endif

namespace npud {
namespace {


void write_summary(JsonWriter& w, const Report& r) {
  const ReportSummary& s = r.summary;
  w.key("summary").begin_object();
  w.field("source", s.source);
  w.field("format", s.format);
  string_or_null(w, "torch_npu", s.torch_npu);
  string_or_null(w, "knowledge_note", s.knowledge_note);
  w.field("ops", uint64_t(s.ops));
  w.field("kernels", uint64_t(s.kernels));
  w.field("runtime_calls", uint64_t(s.runtime_calls));
  w.field("steps", uint64_t(s.steps));
  w.field("span_ns", int64_t(s.span_ns));
  // Findings left out (docs/configuration.md): by comments or per-file-ignores, by --baseline.
  w.field("suppressed", uint64_t(r.suppressed)).field("baselined", uint64_t(r.baselined));
  string_or_null(w, "config", r.config_file);
  w.key("step_time_ns");
  if (s.steps > 0) w.value(int64_t(s.step_time_ns));
  else w.null();
  w.key("device_busy_share");
  if (s.device_busy_share >= 0) w.value(s.device_busy_share);
  else w.null();
  w.key("step_breakdown");
  if (s.breakdown) {
    const StepBreakdown& b = *s.breakdown;
    w.begin_object().field("step_ns", b.step_ns).field("computing_ns", b.computing_ns);
    w.field("communication_ns", b.communication_ns).field("overlapped_ns", b.overlapped_ns).field("free_ns", b.free_ns);
    w.end_object();
  } else {
    w.null();
  }
  uint64_t counts[3] = {0, 0, 0};
  for (const Finding& f : r.findings) ++counts[size_t(f.severity)];
  w.key("findings").begin_object();
  w.field("total", uint64_t(r.findings.size()));
  w.field("error", counts[2]);
  w.field("warning", counts[1]);
  w.field("info", counts[0]);
  w.end_object();
  w.key("rules_run").begin_array();
  for (const auto& id : r.rules_run) w.value(id);
  w.end_array();
  w.end_object();
}

void write_finding(JsonWriter& w, const Finding& f) {
  w.begin_object();
  w.field("id", f.rule);
  const Rule* rule = find_trace_rule(f.rule);
  string_or_null(w, "name", rule ? rule->name() : std::string_view{});
  w.field("severity", to_string(f.severity));
  w.field("message", f.message);
  w.key("location").begin_object();
  string_or_null(w, "file", f.location.file);
  w.key("line");
  if (f.location.line > 0) w.value(f.location.line);
  else w.null();
  string_or_null(w, "op", f.location.op);
  string_or_null(w, "module", f.location.module);
  if (const LibrarySite& l = f.location.library; !l.empty()) {   // docs/json-schema.md "library"
    w.key("library").begin_object();
    w.field("package", l.package);
    string_or_null(w, "version", l.version);
    w.field("file", l.file);
    w.field("line", int64_t(l.line));
    string_or_null(w, "function", l.function);
    string_or_null(w, "cause", l.cause);
    w.end_object();
  }
  w.end_object();
  w.key("metrics").begin_object();
  for (const Metric& m : f.metrics) w.field(m.key, m.value);
  w.end_object();
  w.field("cost_ns", int64_t(f.cost_ns));
  string_or_null(w, "fix", f.fix);
  w.key("notes").begin_array();
  for (const auto& n : f.notes) w.value(n);
  w.end_array();
  w.end_object();
}

}  // namespace

void render_json(std::ostream& os, const Report& report) {
  JsonWriter w(os, 2);
  w.begin_object();
  static_assert(kJsonSchemaVersion == 1, "tool_header writes schema_version 1");
  tool_header(w, report.command);
  write_summary(w, report);
  w.key("findings").begin_array();
  for (const Finding& f : report.findings) write_finding(w, f);
  w.end_array();
  w.key("warnings").begin_array();
  for (const Warning& wn : report.warnings) {
    w.begin_object();
    w.field("message", wn.message);
    w.key("offset");
    if (wn.offset > 0) w.value(uint64_t(wn.offset));
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("amp");
  if (report.amp) write_amp_json(w, *report.amp);
  else w.null();
  w.end_object();
}

}  // namespace npud
