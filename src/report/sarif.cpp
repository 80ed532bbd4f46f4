#include "report/sarif.hpp"

#include <filesystem>
#include <map>

#include "report/json_writer.hpp"
#include "rules/rule.hpp"
#include "util/embedded.hpp"

namespace npud {

std::string_view sarif_level(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "warning";
}

std::string sarif_uri(std::string_view path) {
  std::string p(path);
  for (char& c : p)
    if (c == '\\') c = '/';
  while (p.starts_with("./")) p.erase(0, 2);
  std::string out = p.starts_with("/") ? "file://" : "";
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : p) {
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

namespace {

// Where this binary's rule docs are: <prefix>/share/npu-doctor/rules (pip and `cmake --install`
// both put them there), else, for a binary run from its build folder, the checkout's docs/
// (the folder above it, as launch.cpp finds the shim) or the source tree it was configured from.
std::filesystem::path rule_docs_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    for (fs::path dir : {prefix / "share" / "npu-doctor" / "rules", prefix / "docs" / "rules"})
      if (fs::is_directory(dir, ec)) return dir;
  }
#ifdef NPUD_SOURCE_DOCS_DIR
  if (fs::is_directory(NPUD_SOURCE_DOCS_DIR "/rules", ec)) return NPUD_SOURCE_DOCS_DIR "/rules";
#endif
  return {};
}

}  // namespace

std::string rule_help_uri(std::string_view id) {
  static const std::filesystem::path dir = rule_docs_dir();
  if (dir.empty()) return {};
  std::filesystem::path doc = dir / (std::string(id) + ".md");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(doc, ec)) return {};
  return sarif_uri(doc.string());
}

SarifRule sarif_rule(std::string_view id, std::string_view summary, Severity severity) {
  SarifRule r;
  r.id = std::string(id);
  r.short_description = std::string(summary);
  r.help_uri = rule_help_uri(id);
  r.help_text = std::string(find_embedded(embedded_rule_docs(), std::string(id) + ".md"));
  r.default_severity = severity;
  return r;
}

void render_sarif(std::ostream& os, const SarifLog& log) {
  std::map<std::string, size_t> rule_index;
  for (size_t i = 0; i < log.rules.size(); ++i) rule_index.emplace(log.rules[i].id, i);

  JsonWriter w(os, 2);
  w.begin_object();
  w.field("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  w.field("version", "2.1.0");
  w.key("runs").begin_array().begin_object();
  w.key("tool").begin_object().key("driver").begin_object();
  w.field("name", log.tool_name);
  if (!log.tool_version.empty()) w.field("version", log.tool_version).field("semanticVersion", log.tool_version);
  if (!log.information_uri.empty()) w.field("informationUri", log.information_uri);
  w.key("rules").begin_array();
  for (const auto& r : log.rules) {
    w.begin_object();
    w.field("id", r.id);
    w.key("shortDescription").begin_object().field("text", r.short_description).end_object();
    if (!r.help_uri.empty()) w.field("helpUri", r.help_uri);
    if (!r.help_text.empty())
      w.key("help").begin_object().field("text", r.help_text).field("markdown", r.help_text).end_object();
    w.key("defaultConfiguration").begin_object().field("level", sarif_level(r.default_severity)).end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object().end_object();  // driver, tool
  w.field("columnKind", "unicodeCodePoints");
  w.key("originalUriBaseIds").begin_object();
  w.key("%SRCROOT%").begin_object();
  w.key("description").begin_object().field("text", "the directory npu-doctor ran in").end_object();
  w.end_object();
  w.end_object();
  w.key("results").begin_array();
  for (const auto& r : log.results) {
    w.begin_object();
    w.field("ruleId", r.rule_id);
    if (auto it = rule_index.find(r.rule_id); it != rule_index.end()) w.field("ruleIndex", uint64_t(it->second));
    w.field("level", sarif_level(r.severity));
    w.key("message").begin_object().field("text", r.message).end_object();
    w.key("locations").begin_array();
    if (!r.uri.empty()) {
      std::string uri = sarif_uri(r.uri);
      w.begin_object().key("physicalLocation").begin_object();
      w.key("artifactLocation").begin_object().field("uri", uri);
      if (!uri.starts_with("file://")) w.field("uriBaseId", "%SRCROOT%");
      w.end_object();
      if (r.line > 0) {
        w.key("region").begin_object().field("startLine", r.line);
        if (r.column > 0) w.field("startColumn", r.column);
        if (r.end_line > 0) w.field("endLine", r.end_line);
        if (r.end_column > 0) w.field("endColumn", r.end_column);
        w.end_object();
      }
      w.end_object().end_object();
    } else if (!r.logical_location.empty()) {
      w.begin_object().key("logicalLocations").begin_array().begin_object();
      w.field("fullyQualifiedName", r.logical_location).end_object().end_array().end_object();
    }
    w.end_array();
    if (!r.replacements.empty() && !r.uri.empty()) {
      std::string uri = sarif_uri(r.uri);
      w.key("fixes").begin_array().begin_object();
      w.key("description").begin_object().field("text", r.fix_description).end_object();
      w.key("artifactChanges").begin_array().begin_object();
      w.key("artifactLocation").begin_object().field("uri", uri);
      if (!uri.starts_with("file://")) w.field("uriBaseId", "%SRCROOT%");
      w.end_object();
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
    w.end_object();
  }
  w.end_array();
  w.end_object().end_array();  // run, runs
  w.end_object();
  os << '\n';
}

SarifLog sarif_from_report(const Report& report) { return sarif_from_findings(report.findings); }

SarifLog sarif_from_findings(const std::vector<Finding>& findings) {
  SarifLog log;
  log.tool_version = NPUD_VERSION;
  std::map<std::string, Severity> seen;
  for (const auto& f : findings) {
    seen.emplace(f.rule, f.severity);
    SarifResult r;
    r.rule_id = f.rule;
    r.severity = f.severity;
    r.message = f.message;
    r.uri = f.location.file;
    r.line = f.location.line;
    r.logical_location = !f.location.module.empty() ? f.location.module : f.location.op;
    log.results.push_back(std::move(r));
  }
  for (const auto& [id, sev] : seen) {
    std::string_view summary = id;
    for (const Rule* rule : trace_rules())
      if (rule->id() == id) summary = rule->summary();
    log.rules.push_back(sarif_rule(id, summary, sev));
  }
  return log;
}

}  // namespace npud
