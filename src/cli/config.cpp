#include "cli/config.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/analyze.hpp"
#include "util/escape.hpp"
#include "rules/rule.hpp"
#include "source/source_rules.hpp"
#include "util/mini_toml.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxConfigBytes = 4 << 20;

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void fail(const std::string& file, TomlPos p, const std::string& what) {
  throw TomlError(fmt::format("{}:{}:{}: {}", file, p.line, p.column, what));
}

// Rule selectors of any command (the file serves scan and analyze alike; model/rule_filter.hpp):
// a string ("SYNC,CUDA002,host-device-sync") or an array of them. Each must name some rule.
// per-file-ignores: the ids they name (PathIgnores matches ids); select/ignore: as written, for
// the command's RuleFilter.
std::vector<std::string> rule_ids(const std::string& file, const std::string& key, const TomlValue& v,
                                  bool as_ids = false) {
  std::vector<std::string> raw;
  if (const auto* s = std::get_if<std::string>(&v.v)) raw = {*s};
  else if (const auto* a = std::get_if<TomlStrings>(&v.v)) raw = *a;
  else fail(file, v.pos, fmt::format("{} is a list of rule ids: [\"SYNC\", \"CUDA002\"]", key));
  static const std::vector<RuleRef> known = [] {
    std::vector<RuleRef> refs = trace_rule_refs();
    for (const RuleRef& r : source_rule_refs()) refs.push_back(r);
    return refs;
  }();
  std::vector<std::string> out;
  for (const std::string& list : raw) {
    for (std::string_view item : comma_items(list)) {
      std::vector<std::string_view> ids = rules_named_by(item, known);
      if (ids.empty())
        fail(file, v.pos, fmt::format("{}: '{}' is no rule id, id prefix or name{} (see `npu-doctor rules`)", key, item,
                                      did_you_mean(item, known)));
      if (as_ids) out.insert(out.end(), ids.begin(), ids.end());
      else out.push_back(upper(std::string(item)));
    }
  }
  return out;
}

std::string string_value(const std::string& file, const std::string& key, const TomlValue& v) {
  const auto* s = std::get_if<std::string>(&v.v);
  if (!s) fail(file, v.pos, fmt::format("{} is a string", key));
  return *s;
}

void add_path_ignore(Config& c, const std::string& file, const std::string& glob, const TomlValue& v) {
  if (glob.empty()) fail(file, v.pos, "per-file-ignores: an empty path pattern");
  // Patterns match paths relative to this file's folder: one that starts at / or climbs out of
  // it could never match, and silently silencing nothing hides the typo.
  if (glob.front() == '/' || glob == ".." || glob.starts_with("../"))
    fail(file, v.pos, fmt::format("per-file-ignores \"{}\": patterns are relative to the folder of {} and cannot "
                                  "leave it", glob, file));
  c.per_file_ignores.rules.push_back({glob, rule_ids(file, "per-file-ignores \"" + glob + "\"", v, true)});
}

void read_entry(Config& c, const std::string& file, const TomlEntry& e) {
  if (e.key == "select") c.select = rule_ids(file, e.key, e.value);
  else if (e.key == "ignore") c.ignore = rule_ids(file, e.key, e.value);
  else if (e.key == "torch-npu") c.torch_npu = string_value(file, e.key, e.value);
  else if (e.key == "fail-on") {
    c.fail_on = to_lower(string_value(file, e.key, e.value));   // any case, as rule ids
    if (c.fail_on != "info" && c.fail_on != "warning" && c.fail_on != "error" && c.fail_on != "never")
      fail(file, e.value.pos, "fail-on is one of info, warning, error, never");
  } else if (e.key == "per-file-ignores") {
    const auto* t = std::get_if<TomlInlineTable>(&e.value.v);
    if (!t) fail(file, e.value.pos, "per-file-ignores is a table: { \"tests/*.py\" = [\"SYNC001\"] }");
    for (const auto& [glob, ids] : *t) add_path_ignore(c, file, glob, ids);
  } else {
    fail(file, e.pos, fmt::format("unknown key '{}' (npu-doctor reads select, ignore, fail-on, torch-npu, "
                                  "per-file-ignores)", e.key));
  }
}

bool is_pyproject(const std::string& path) { return fs::path(path).filename() == "pyproject.toml"; }

Config config_from_text(const std::string& path, const std::string& text) {
  const bool pyproject = is_pyproject(path);
  const std::string ours = pyproject ? "tool.npu-doctor" : "";
  const std::string pfi = pyproject ? "tool.npu-doctor.per-file-ignores" : "per-file-ignores";
  auto tables = read_toml_tables(text, path, [&](std::string_view name) {
    if (name == ours || name == pfi) return true;
    // A typo'd table of ours would be skipped silently: read it, and refuse it below.
    return name.starts_with(pyproject ? "tool.npu-doctor." : "");
  });
  Config c;
  if (tables.empty()) return c;   // a pyproject.toml without [tool.npu-doctor]
  c.file = path;
  std::error_code ec;
  c.per_file_ignores.base = fs::absolute(fs::path(path), ec).parent_path().lexically_normal().string();
  for (const TomlTable& t : tables) {
    if (t.name == ours) {
      for (const TomlEntry& e : t.entries) read_entry(c, path, e);
    } else if (t.name == pfi) {
      for (const TomlEntry& e : t.entries) add_path_ignore(c, path, e.key, e.value);
    } else {
      fail(path, t.pos, fmt::format("unknown table [{}] (npu-doctor reads [{}] and [{}])", t.name,
                                    ours.empty() ? "the top level" : ours, pfi));
    }
  }
  return c;
}

}  // namespace

Config read_config_file(const std::string& path) {
  std::string text, error;
  if (!read_regular_file(path, kMaxConfigBytes, text, error)) throw TomlError(path + ": " + error);
  return config_from_text(path, text);
}

Config find_config(const std::string& start) {
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(start.empty() ? "." : start), ec).lexically_normal();
  if (ec) return {};
  if (dir.filename().empty()) dir = dir.parent_path();   // "/a/b/." normalises to "/a/b/"
  if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
  while (true) {
    for (const char* name : {"npu-doctor.toml", "pyproject.toml"}) {
      fs::path candidate = dir / name;
      if (!fs::is_regular_file(candidate, ec)) continue;
      std::string text, error;
      if (!read_regular_file(candidate.string(), kMaxConfigBytes, text, error)) {
        // Another tool's (or user's) pyproject.toml we cannot read, or one too big, may hold no
        // [tool.npu-doctor] at all: passed by with a note. Ours (npu-doctor.toml) must be read.
        if (!is_pyproject(candidate.string())) throw TomlError(candidate.string() + ": " + error);
        std::cerr << fmt::format("npu-doctor: note: skipped {} while looking for [tool.npu-doctor]: {}\n",
                                 terminal_safe(candidate.string()), terminal_safe(error));
        continue;
      }
      Config c = config_from_text(candidate.string(), text);
      if (!c.file.empty()) return c;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) return {};
    dir = dir.parent_path();
  }
}

void add_config_options(CLI::App& cmd, ConfigChoice& choice) {
  auto* file = cmd.add_option("--config", choice.file,
                              "read the settings from this file (npu-doctor.toml, or a pyproject.toml with "
                              "[tool.npu-doctor]) instead of the nearest one");
  cmd.add_flag("--no-config", choice.none, "read no configuration file")->excludes(file);
}

Config load_config(const ConfigChoice& choice, const std::string& start) {
  if (choice.none) return {};
  if (choice.file.empty()) return find_config(start);
  Config c = read_config_file(choice.file);
  if (c.file.empty()) throw TomlError(choice.file + ": --config: this pyproject.toml has no [tool.npu-doctor] table");
  return c;
}

bool apply_config_or_report(const CLI::App& cmd, const std::string& start, AnalyzeOptions& ao, bool use_select) {
  Config c;
  try {
    c = load_config(ao.config_choice, start);
  } catch (const TomlError& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return false;
  }
  if (c.file.empty()) return true;
  ao.config_file = c.file;
  ao.path_ignores = std::move(c.per_file_ignores);
  // A command without the option (diff has no --select) takes the file's value.
  auto given = [&cmd](const char* name) {
    const CLI::Option* opt = cmd.get_option_no_throw(name);
    return opt && opt->count() > 0;
  };
  if (use_select && !given("--select") && !c.select.empty()) {
    ao.select = std::move(c.select);
    ao.select_from_config = true;
  }
  if (!given("--ignore") && !c.ignore.empty()) {
    ao.ignore = std::move(c.ignore);
    ao.ignore_from_config = true;
  }
  if (!given("--fail-on") && !c.fail_on.empty()) ao.fail_on = c.fail_on;
  if (!given("--torch-npu") && !c.torch_npu.empty()) ao.torch_npu = c.torch_npu;
  return true;
}

}  // namespace npud
