// The JSON report (schema: docs/json-schema.md). Keys are stable; unknown values are null.
#include "report/finding_json.hpp"
#include "util/json_writer.hpp"
#include "report/render.hpp"
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
