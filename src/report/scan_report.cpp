// The reports of `npu-doctor scan` (cli/scan.cpp): text, JSON and SARIF (docs/rules, docs/code-scanning).
#include "report/scan_report.hpp"

#include <fmt/format.h>

#include "rules/rule_pairs.hpp"
#include "source/source_snippet.hpp"
#include "util/escape.hpp"
#include "util/json_writer.hpp"
#include "report/finding_json.hpp"

namespace npud {
namespace {

// What the text and JSON summaries count: the files scanned, their lines, the findings.
struct ScanTotals {
  size_t files = 0, lines = 0, findings = 0, fixable = 0;
};

ScanTotals scan_totals(const std::vector<FileResult>& results) {
  ScanTotals t;
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    ++t.files;
    t.lines += r.lines;
    t.findings += r.findings.size();
    for (const auto& f : r.findings) t.fixable += f.fixable();
  }
  return t;
}

}  // namespace

void render_scan_text(std::ostream& os, const std::vector<FileResult>& results, size_t fixed, TextStyle style,
                      const ScanLeftOut& left) {
  if (!left.config_file.empty()) os << "config: " << terminal_safe(left.config_file) << '\n';
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    for (const auto& f : r.findings) {
      // The same problem's id in `run`/`analyze` (rules/rule_pairs.hpp), after the message.
      std::string_view twin = run_rule_for(f.rule);
      os << fmt::format("{}:{}:{}: {} [{}] {}{}\n", style.bold(terminal_safe(r.path)), f.location.line, f.location.column,
                        style.bold(f.rule), style.severity(f.severity), terminal_safe(f.message),
                        twin.empty() ? std::string() : fmt::format(" (run: {})", twin));
      if (!f.fix.empty())
        os << "    " << (f.fixable() ? "fix: " : "suggestion: ") << terminal_safe(f.fix) << '\n';
    }
  }
  if (fixed) os << fmt::format("Fixed {} finding{}.\n", fixed, fixed == 1 ? "" : "s");
  std::string left_out;
  if (left.suppressed) left_out += fmt::format("; {} suppressed", left.suppressed);
  if (left.baselined) left_out += fmt::format("; {} in the baseline", left.baselined);
  const ScanTotals t = scan_totals(results);
  os << fmt::format("Found {} finding{} ({} fixable with --fix) in {} file{}, {} lines scanned{}.\n", t.findings,
                    t.findings == 1 ? "" : "s", t.fixable, t.files, t.files == 1 ? "" : "s", t.lines, left_out);
}

void render_scan_json(std::ostream& os, const std::vector<FileResult>& results, const KnowledgeVersion& version,
                      size_t fixed, const ScanLeftOut& left) {
  JsonWriter w(os, 2);
  w.begin_object();
  tool_header(w, "scan");
  w.field("torch_npu", version.version).field("knowledge_note", version.source());
  w.key("findings").begin_array();
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    for (const auto& f : r.findings) {
      Finding shared = f;   // every command's finding shape (docs/json-schema.md), aliases included
      shared.location.file = r.path;
      write_finding(w, shared, FindingAliases::Yes);
    }
  }
  w.end_array();
  w.key("skipped").begin_array();
  for (const auto& r : results)
    if (r.status != FileStatus::Scanned) w.begin_object().field("file", r.path).field("reason", r.note).end_object();
  w.end_array();
  w.key("summary").begin_object();
  const ScanTotals t = scan_totals(results);
  w.field("files", uint64_t(t.files)).field("lines", uint64_t(t.lines)).field("findings", uint64_t(t.findings));
  w.field("fixable", uint64_t(t.fixable)).field("fixed", uint64_t(fixed));
  w.field("suppressed", uint64_t(left.suppressed)).field("baselined", uint64_t(left.baselined));
  w.key("config");
  if (left.config_file.empty()) w.null();
  else w.value(left.config_file);
  w.end_object();
  w.end_object();
  os << '\n';
}

// The scan as a SARIF log (also `--format github`): every source rule, each finding at its span.
SarifLog scan_sarif_log(const std::vector<FileResult>& results, SarifPaths paths) {
  SarifLog log;
  log.tool_version = NPUD_VERSION;
  log.paths = std::move(paths);
  for (const auto& r : source_rules())
    log.rules.push_back(sarif_rule(r.id, r.summary, r.severity));
  SourceLineCache lines(nullptr);   // the files the user named, as written now (after --fix)
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    for (const auto& f : r.findings) {
      SarifResult s;
      s.rule_id = f.rule;
      s.severity = f.severity;
      s.message = f.fix.empty() ? f.message : f.message + ". Fix: " + f.fix;
      s.uri = r.path;
      s.line = f.location.line;
      s.column = f.location.column;
      s.end_line = f.location.end_line;
      s.end_column = f.location.end_column;
      s.fix_description = f.fix;
      s.line_text = lines.line_text(r.path, f.location.line);
      for (const auto& e : f.edits) s.replacements.push_back({e.start, e.end - e.start, e.replacement});
      log.results.push_back(std::move(s));
    }
  }
  return log;
}

}  // namespace npud
