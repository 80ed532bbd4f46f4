#include "cli/inputs.hpp"

#include <unistd.h>

#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "cli/progress.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "report/escape.hpp"
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

const KnowledgeVersion* torch_npu_version_for(std::string_view requested, const Trace& trace, std::string& why) {
  if (!requested.empty()) {
    why = "--torch-npu";
    return torch_npu_version_or_report(requested);
  }
  const Knowledge& kb = Knowledge::builtin();
  std::string_view npu = trace.env_value("torch_npu"), torch = trace.env_value("torch");
  if (!npu.empty()) {
    if (const KnowledgeVersion* v = kb.find(npu)) {
      why = "the torch_npu installed where the trace was recorded";
      return v;
    }
  }
  if (!torch.empty()) {
    // The newest release of the trace's torch line: what installing torch_npu for it gives today.
    const KnowledgeVersion* best = nullptr;
    std::string_view line = torch.substr(0, torch.find_first_of("+a"));  // "2.1.0+cpu", "2.2.0a0"
    for (const KnowledgeVersion& v : kb.versions())
      if (v.torch == line && (v.kind == "release" || (!best && v.kind == "dev-tip"))) best = &v;
    if (best) {
      why = fmt::format("{} for torch {} of the trace{}", best->is_release() ? "newest release" : "only list",
                        terminal_safe(torch), npu.empty() ? "" : fmt::format(" (torch_npu {} is not known)", terminal_safe(npu)));
      return best;
    }
  }
  why = "newest release; pass --torch-npu to choose the wheel you deploy";
  return &kb.newest();
}

void add_max_events_option(CLI::App& cmd, uint64_t& max_events) {
  cmd.add_option("--max-events", max_events,
                 "refuse a trace with more events than this (each takes ~150 bytes of memory; 0: no limit)")
      ->capture_default_str();
}

bool read_trace_or_report(const std::string& path, ReadOptions ro, bool quiet, Trace& out) {
  try {
    Progress progress("reading " + path, !quiet);
    if (progress.enabled()) ro.progress = [&progress](uint64_t done, uint64_t total) { progress.update(done, total); };
    out = read_trace(path, ro);
    progress.finish();
    return true;
  } catch (const InputError& e) {
    std::cerr << "npu-doctor: error: " << e.describe() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << path << ": " << e.what() << "\n";
  }
  return false;
}

bool is_npu_doctor_report(const std::string& path) {
  std::string error;
  int fd = open_regular_file(path, error);
  if (fd < 0) return false;
  char head[512];   // the header comes first: render_json writes tool_header before anything else
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  if (n <= 0) return false;
  std::string_view text(head, size_t(n));
  text = trim(text.substr(utf8_bom_size(text)));
  return text.starts_with('{') && text.find("\"schema_version\"") != std::string_view::npos &&
         text.find("\"tool\"") != std::string_view::npos && text.find("\"npu-doctor\"") != std::string_view::npos;
}

}  // namespace npud
