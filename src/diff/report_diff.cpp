#include "diff/report_diff.hpp"

#include <map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <simdjson.h>

#include "util/input_error.hpp"
#include "ingest/json_error_at.hpp"
#include "util/escape.hpp"

namespace npud {
namespace {

namespace dom = simdjson::dom;

std::string report_field_text(dom::object o, const char* key) {
  std::string_view v;
  return o[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

// What one finding is, across two runs: rule and place, not the numbers of its message.
std::string report_finding_key(const ReportFinding& f) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}", f.id, f.file, f.line, f.op);
}

std::string report_finding_place(const ReportFinding& f) {
  if (!f.file.empty()) return f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
  return f.op;
}

void render_report_findings(std::ostream& os, const char* title, const std::vector<ReportFinding>& list) {
  if (list.empty()) return;
  os << title << ":\n";
  for (const ReportFinding& f : list)
    os << fmt::format("  {} {:<8} {}{}\n", f.id, f.severity, report_finding_place(f).empty() ? "" : terminal_safe(report_finding_place(f)) + ": ",
                      terminal_safe(f.message));
}

}  // namespace

std::vector<ReportFinding> read_report_findings(const std::string& path) {
  simdjson::padded_string text;
  dom::parser parser;
  dom::element root = load_json_or_throw(parser, path, text);
  dom::array findings;
  if (root["findings"].get_array().get(findings) != simdjson::SUCCESS)
    throw InputError(path, 0, "an npu-doctor report without a \"findings\" array (a diff's report has no findings "
                              "list to compare)", false);
  std::vector<ReportFinding> out;
  for (dom::element e : findings) {
    dom::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) throw InputError(path, 0, "a finding is not an object", false);
    ReportFinding f;
    f.id = report_field_text(o, "id");
    f.severity = report_field_text(o, "severity");
    f.message = report_field_text(o, "message");
    if (dom::object loc; o["location"].get_object().get(loc) == simdjson::SUCCESS) {
      f.file = report_field_text(loc, "file");
      f.op = report_field_text(loc, "op");
      int64_t line = 0;
      if (loc["line"].get_int64().get(line) == simdjson::SUCCESS) f.line = line;
    }
    out.push_back(std::move(f));
  }
  return out;
}

ReportDiff diff_report_findings(const std::vector<ReportFinding>& before, const std::vector<ReportFinding>& after) {
  ReportDiff d;
  std::multimap<std::string, const ReportFinding*> unmatched;   // BEFORE's, by identity
  for (const ReportFinding& f : before) unmatched.emplace(report_finding_key(f), &f);
  for (const ReportFinding& f : after) {
    auto it = unmatched.find(report_finding_key(f));
    if (it == unmatched.end()) {
      d.added.push_back(f);
      continue;
    }
    d.remaining.push_back(f);
    unmatched.erase(it);
  }
  std::unordered_set<const ReportFinding*> left;
  for (const auto& [key, f] : unmatched) left.insert(f);
  for (const ReportFinding& f : before)   // in BEFORE's order
    if (left.count(&f)) d.fixed.push_back(f);
  return d;
}

void render_report_diff_text(std::ostream& os, const ReportDiff& d) {
  os << fmt::format("Findings of two npu-doctor reports, {} -> {}: {} fixed, {} new, {} remaining (reports hold no "
                    "op times: diff the traces or captures for those)\n",
                    terminal_safe(d.before), terminal_safe(d.after), d.fixed.size(), d.added.size(),
                    d.remaining.size());
  render_report_findings(os, "Fixed", d.fixed);
  render_report_findings(os, "New", d.added);
  std::map<std::string, size_t> by_rule;
  for (const ReportFinding& f : d.remaining) ++by_rule[f.id];
  if (!by_rule.empty()) {
    std::string rules;
    for (const auto& [id, n] : by_rule) rules += fmt::format("{}{} x{}", rules.empty() ? "" : ", ", id, n);
    os << fmt::format("Remaining: {}\n", rules);
  }
}

}  // namespace npud
