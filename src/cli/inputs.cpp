#include "cli/inputs.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "cli/progress.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "util/escape.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {

const KnowledgeVersion* torch_npu_version_or_report(std::string_view requested) {
  const Knowledge& kb = Knowledge::builtin();
  const KnowledgeVersion* version = requested.empty() ? &kb.newest() : kb.find(requested);
  if (!version)
    std::cerr << fmt::format("npu-doctor: error: unknown --torch-npu version '{}' (known: {}; `npu-doctor versions` "
                             "lists every wheel; daily builds and versions set between two release tags have no list)\n",
                             terminal_safe(requested), kb.known_names(requested));
  return version;
}

void add_max_events_option(CLI::App& cmd, uint64_t& max_events) {
  cmd.add_option("--max-events", max_events,
                 "refuse a trace with more events than this (each takes ~150 bytes of memory; 0: no limit)")
      ->capture_default_str();
}

bool read_trace_or_report(const std::string& path, ReadOptions ro, bool quiet, Trace& out, const std::string& shown,
                          std::string* error) {
  const std::string& name = shown.empty() ? path : shown;
  std::string said;
  try {
    Progress progress("reading " + name, !quiet);
    if (progress.enabled()) ro.progress = [&progress](uint64_t done, uint64_t total) { progress.update(done, total); };
    out = read_trace(path, ro);
    progress.finish();
    return true;
  } catch (const InputError& e) {
    said = InputError(name, e.offset(), e.what(), e.has_offset()).describe();
  } catch (const std::exception& e) {
    said = name + ": " + e.what();
  }
  std::cerr << "npu-doctor: error: " << said << "\n";
  if (error) *error = said;
  if (std::string hint = command_for_input(path); !hint.empty()) std::cerr << "npu-doctor: hint: " << hint << "\n";
  return false;
}

namespace {

// The first bytes of a regular file, byte order mark and surrounding whitespace left out (""
// when it cannot be read): what sniffing an input's kind looks at.
std::string head_of(const std::string& path, size_t max) {
  std::string error;
  int fd = open_regular_file(path, error);
  if (fd < 0) return {};
  std::string head(max, '\0');
  ssize_t n = ::read(fd, head.data(), max);
  ::close(fd);
  head.resize(n > 0 ? size_t(n) : 0);
  std::string_view text = head;
  return std::string(trim(text.substr(utf8_bom_size(text))));
}

}  // namespace

std::string command_for_input(const std::string& path) {
  std::string shown = terminal_safe(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {   // an msprobe dump folder holds its dump.json
    std::string dump = (std::filesystem::path(path) / "dump.json").string();
    return std::filesystem::is_regular_file(dump, ec) ? command_for_input(dump) : std::string();
  }
  const std::string text = head_of(path, 4096);
  bool python = path.ends_with(".py") || text.starts_with("#!/usr/bin/env python") || text.starts_with("import ") ||
                text.starts_with("from ");
  if (python)
    return fmt::format("{0} is Python source: `npu-doctor scan {0}` checks it without running it, "
                       "`npu-doctor run -- python3 {0}` runs it and analyses what it did",
                       shown);
  // msprobe's dump.json: {"task": "statistics", "level": "L1", "dump_data_dir": ..., "data": {...}}
  if (text.starts_with('{') && text.find("\"task\"") != text.npos &&
      (text.find("\"dump_data_dir\"") != text.npos || text.find("\"level\"") != text.npos))
    return fmt::format("{} is an msprobe dump: `npu-doctor compare REF_DUMP TARGET_DUMP` compares two dumps "
                       "tensor by tensor (`npu-doctor docs compare`)", shown);
  return {};
}

bool is_npu_doctor_report(const std::string& path) {
  // the header comes first: render_json writes tool_header before anything else
  const std::string text = head_of(path, 512);
  return text.starts_with('{') && text.find("\"schema_version\"") != std::string_view::npos &&
         text.find("\"tool\"") != std::string_view::npos && text.find("\"npu-doctor\"") != std::string_view::npos;
}

}  // namespace npud
