#include "report/sarif.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "util/json_writer.hpp"
#include "rules/rule.hpp"
#include "util/embedded.hpp"

namespace npud {

namespace fs = std::filesystem;

std::string_view sarif_level(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "warning";
}

namespace {

// A folder lexically normal, without the trailing '/' that lexically_relative would count as
// one more (empty) segment.
fs::path normal_dir(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  return p.has_relative_path() && !p.has_filename() ? p.parent_path() : p;
}

}  // namespace

fs::path find_project_root(const fs::path& dir) {
  std::error_code ec;
  for (fs::path p = normal_dir(dir);; p = p.parent_path()) {
    if (fs::exists(p / ".git", ec)) return p;
    if (p == p.root_path() || p.empty()) break;
  }
  return normal_dir(dir);
}

SarifPaths sarif_paths(const std::string& project_root) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) cwd = "/";   // the working directory removed under us: paths are said from /
  const fs::path root = project_root.empty() ? find_project_root(cwd) : cwd / project_root;
  return {normal_dir(root), cwd};
}

std::string project_relative_path(std::string_view path, const SarifPaths& paths) {
  std::string slashed(path);
  std::replace(slashed.begin(), slashed.end(), '\\', '/');
  // An absolute path replaces working_dir; a relative one is read from it.
  const fs::path abs = (paths.working_dir / slashed).lexically_normal();
  const fs::path rel = abs.lexically_relative(paths.project_root);
  return rel.empty() ? abs.relative_path().generic_string() : rel.generic_string();
}

std::string sarif_uri(std::string_view relative_path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : relative_path) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                c == '.' || c == '~' || c == '/';
    if (keep) {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string sarif_fingerprint(std::string_view rule, std::string_view relative_file, const SarifResult& r) {
  // The fields apart by a NUL, which none of them holds; "line:"/"name:" keep a source line
  // from matching an op of the same spelling.
  std::string key(rule);
  key.append(1, '\0').append(relative_file).append(1, '\0');
  key += r.line_text.empty() ? "name:" + r.logical_location : "line:" + r.line_text;
  uint64_t h = 14695981039346656037ull;   // FNV-1a, 64 bits: stable across builds and machines
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

namespace {

// The project root as originalUriBaseIds wants it: a file:// URI ending in '/'.
std::string root_uri(const fs::path& root) {
  std::string uri = "file://" + sarif_uri(root.generic_string());
  return uri.ends_with('/') ? uri : uri + '/';
}

void write_rules(JsonWriter& w, const std::vector<SarifRule>& rules) {
  w.key("rules").begin_array();
  for (const auto& r : rules) {
    w.begin_object();
    w.field("id", r.id);
    w.key("shortDescription").begin_object().field("text", r.short_description).end_object();
    if (!r.help_text.empty())
      w.key("help").begin_object().field("text", r.help_text).field("markdown", r.help_text).end_object();
    w.key("defaultConfiguration").begin_object().field("level", sarif_level(r.default_severity)).end_object();
    w.end_object();
  }
  w.end_array();
}

void write_artifact(JsonWriter& w, const std::string& uri) {
  w.key("artifactLocation").begin_object().field("uri", uri).field("uriBaseId", "%SRCROOT%").end_object();
}

// Always a region: GitHub places a result by its startLine (line 1 when the finding has none).
void write_location(JsonWriter& w, const SarifResult& r, const std::string& uri) {
  w.key("locations").begin_array().begin_object();
  w.key("physicalLocation").begin_object();
  write_artifact(w, uri);
  w.key("region").begin_object().field("startLine", std::max(r.line, 1));
  if (r.line > 0 && r.column > 0) w.field("startColumn", r.column);
  if (r.line > 0 && r.end_line > 0) w.field("endLine", r.end_line);
  if (r.line > 0 && r.end_column > 0) w.field("endColumn", r.end_column);
  w.end_object().end_object();   // region, physicalLocation
  if (!r.logical_location.empty()) {
    w.key("logicalLocations").begin_array().begin_object();
    w.field("fullyQualifiedName", r.logical_location).end_object().end_array();
  }
  w.end_object().end_array();
}

void write_fixes(JsonWriter& w, const SarifResult& r, const std::string& uri) {
  w.key("fixes").begin_array().begin_object();
  w.key("description").begin_object().field("text", r.fix_description).end_object();
  w.key("artifactChanges").begin_array().begin_object();
  write_artifact(w, uri);
  w.key("replacements").begin_array();
  for (const auto& rep : r.replacements) {
    w.begin_object();
    w.key("deletedRegion").begin_object().field("byteOffset", uint64_t(rep.byte_offset));
    w.field("byteLength", uint64_t(rep.byte_length)).end_object();
    w.key("insertedContent").begin_object().field("text", rep.inserted).end_object();
    w.end_object();
  }
  w.end_array().end_object().end_array();  // replacements, change, artifactChanges
  w.end_object().end_array();              // fix, fixes
}

void write_results(JsonWriter& w, const SarifLog& log) {
  std::map<std::string, size_t> rule_index;
  for (size_t i = 0; i < log.rules.size(); ++i) rule_index.emplace(log.rules[i].id, i);
  std::map<std::string, int> seen;   // fingerprint -> results so far: the occurrence suffix
  w.key("results").begin_array();
  for (const auto& r : log.results) {
    const std::string file = project_relative_path(r.uri, log.paths);
    const std::string uri = sarif_uri(file);
    const std::string fingerprint = sarif_fingerprint(r.rule_id, file, r);
    w.begin_object();
    w.field("ruleId", r.rule_id);
    if (auto it = rule_index.find(r.rule_id); it != rule_index.end()) w.field("ruleIndex", uint64_t(it->second));
    w.field("level", sarif_level(r.severity));
    w.key("message").begin_object().field("text", r.text()).end_object();
    write_location(w, r, uri);
    w.key("partialFingerprints").begin_object();
    w.field("npuDoctor/v1", fmt::format("{}:{}", fingerprint, ++seen[fingerprint])).end_object();
    if (!r.replacements.empty()) write_fixes(w, r, uri);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

void render_sarif(std::ostream& os, const SarifLog& log) {
  JsonWriter w(os, 2);
  w.begin_object();
  w.field("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  w.field("version", "2.1.0");
  w.key("runs").begin_array().begin_object();
  w.key("tool").begin_object().key("driver").begin_object();
  w.field("name", log.tool_name);
  if (!log.tool_version.empty()) w.field("version", log.tool_version).field("semanticVersion", log.tool_version);
  if (!log.information_uri.empty()) w.field("informationUri", log.information_uri);
  write_rules(w, log.rules);
  w.end_object().end_object();  // driver, tool
  w.field("columnKind", "unicodeCodePoints");
  w.key("originalUriBaseIds").begin_object();
  w.key("%SRCROOT%").begin_object().field("uri", root_uri(log.paths.project_root));
  w.key("description").begin_object().field("text", "the project root (--project-root)").end_object();
  w.end_object();
  w.end_object();
  write_results(w, log);
  w.end_object().end_array();  // run, runs
  w.end_object();
  os << '\n';
}

void render_code_scanning(std::ostream& os, std::string_view format, const SarifLog& log) {
  if (format == "github") render_github(os, log);
  else render_sarif(os, log);
}

SarifRule sarif_rule(std::string_view id, std::string_view summary, Severity severity) {
  SarifRule r;
  r.id = std::string(id);
  r.short_description = std::string(summary);
  r.help_text = std::string(find_embedded(embedded_rule_docs(), std::string(id) + ".md"));
  r.default_severity = severity;
  return r;
}

SarifResult sarif_result(const Finding& f, const std::string& input, SourceLineCache& lines) {
  SarifResult r;
  r.rule_id = f.rule;
  r.severity = f.severity;
  r.message = f.message;
  const bool own_file = !f.location.file.empty();
  r.uri = own_file ? f.location.file : input;
  r.line = own_file ? f.location.line : 0;
  r.logical_location = !f.location.module.empty() ? f.location.module : f.location.op;
  if (own_file) r.line_text = lines.line_text(f.location.file, f.location.line);
  return r;
}

SarifLog sarif_log(std::vector<SarifResult> results, SarifPaths paths) {
  SarifLog log;
  log.tool_version = NPUD_VERSION;
  log.paths = std::move(paths);
  std::map<std::string, Severity> seen;
  for (const auto& r : results) seen.emplace(r.rule_id, r.severity);
  for (const auto& [id, sev] : seen) {
    std::string_view summary = id;
    for (const Rule* rule : trace_rules())
      if (rule->id() == id) summary = rule->summary();
    log.rules.push_back(sarif_rule(id, summary, sev));
  }
  log.results = std::move(results);
  return log;
}

SarifLog sarif_from_report(const Report& report, const SnippetPolicy& policy, SarifPaths paths) {
  SourceLineCache lines(&policy);
  std::vector<SarifResult> results;
  results.reserve(report.findings.size());
  for (const Finding& f : report.findings) results.push_back(sarif_result(f, report.summary.source, lines));
  return sarif_log(std::move(results), std::move(paths));
}

}  // namespace npud
