#include "cli/inputs.hpp"

#include <iostream>

#include <fmt/format.h>

#include "cli/progress.hpp"
#include "ingest/input_error.hpp"
#include "ingest/reader.hpp"
#include "report/escape.hpp"

namespace npud {

const KnowledgeVersion* torch_npu_version_or_report(std::string_view requested) {
  const Knowledge& kb = Knowledge::builtin();
  const KnowledgeVersion* version = requested.empty() ? &kb.newest() : kb.find(requested);
  if (!version) {
    std::string known;
    for (const auto& v : kb.versions()) known += (known.empty() ? "" : ", ") + v.version;
    std::cerr << fmt::format("npu-doctor: error: unknown --torch-npu version '{}' (known: {})\n",
                             terminal_safe(requested), known);
  }
  return version;
}

bool read_trace_or_report(const std::string& path, bool allow_truncated, bool quiet, Trace& out) {
  try {
    ReadOptions ro;
    ro.allow_truncated = allow_truncated;
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

}  // namespace npud
