#include "report/finding_json.hpp"

#include "util/json_writer.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {
namespace {

void int_or_null(JsonWriter& w, std::string_view key, int v) {
  w.key(key);
  if (v > 0) w.value(v);
  else w.null();
}

// The place keys a location and the deprecated flat aliases share.
void place_fields(JsonWriter& w, const Location& at) {
  string_or_null(w, "file", at.file);
  int_or_null(w, "line", at.line);
  int_or_null(w, "column", at.column);
  int_or_null(w, "end_line", at.end_line);
  int_or_null(w, "end_column", at.end_column);
  string_or_null(w, "op", at.op);
}

}  // namespace

void write_finding_fields(JsonWriter& w, const Finding& f, FindingAliases aliases) {
  const Location& at = f.location;
  w.field("id", f.rule);
  const Rule* rule = find_trace_rule(f.rule);
  string_or_null(w, "name", rule ? rule->name() : std::string_view{});
  w.field("severity", to_string(f.severity));
  w.field("message", f.message);
  w.key("location").begin_object();
  place_fields(w, at);
  string_or_null(w, "module", at.module);
  if (at.enclosing) w.field("enclosing", true);   // docs/json-schema.md "enclosing"
  if (const LibrarySite& l = at.library; !l.empty()) {   // docs/json-schema.md "library"
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
  w.field("fixable", !f.edits.empty());
  w.key("edits").begin_array();
  for (const TextEdit& e : f.edits)
    w.begin_object().field("start", uint64_t(e.start)).field("end", uint64_t(e.end)).field("replacement", e.replacement).end_object();
  w.end_array();
  if (aliases == FindingAliases::No) return;
  w.field("rule", f.rule);
  place_fields(w, at);
}

void write_finding(JsonWriter& w, const Finding& f, FindingAliases aliases) {
  w.begin_object();
  write_finding_fields(w, f, aliases);
  w.end_object();
}

void write_findings(JsonWriter& w, std::string_view key, const std::vector<Finding>& findings, FindingAliases aliases) {
  w.key(key).begin_array();
  for (const Finding& f : findings) write_finding(w, f, aliases);
  w.end_array();
}

}  // namespace npud
