// Picks the importer for a path. Chrome-trace JSON (Kineto, trace_view.json, captures) goes
// to chrome_json; torch_npu profiler directories and kernel_details.csv go to ascend.
#include "ingest/reader.hpp"

#include <filesystem>
#include <string_view>

#include "ingest/ascend.hpp"
#include "ingest/byte_source.hpp"
#include "ingest/chrome_json.hpp"
#include "util/input_error.hpp"
#include "util/directory.hpp"
#include "util/text.hpp"

namespace npud {

namespace fs = std::filesystem;

namespace {

bool is_ascend_dir_name(const std::string& name) {
  return name == "ASCEND_PROFILER_OUTPUT" || name.ends_with("_ascend_pt");
}

// The first bytes of the (decompressed) content, for sniffing; empty when unreadable.
std::string head_of(const std::string& path, size_t n) {
  std::string head(n, '\0');
  try {
    auto src = open_byte_source(path);
    size_t got = 0;
    while (got < n) {
      size_t k = src->read(head.data() + got, n - got);
      if (k == 0) break;
      got += k;
    }
    head.resize(got);
  } catch (const InputError&) {
    head.clear();
  }
  return head;
}

}  // namespace

InputFormat detect_format(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) {
    if (is_ascend_dir_name(p.filename().string()) || is_ascend_dir_name(p.parent_path().filename().string()))
      return InputFormat::AscendDir;
    if (fs::exists(p / "ASCEND_PROFILER_OUTPUT", ec) || fs::exists(p / "trace_view.json", ec) ||
        fs::exists(p / "kernel_details.csv", ec))
      return InputFormat::AscendDir;
    for (const auto& e : directory_entries(p, ec))
      if (std::error_code entry_ec; e.is_directory(entry_ec) && is_ascend_dir_name(e.path().filename().string()))
        return InputFormat::AscendDir;
    return InputFormat::Unknown;
  }
  if (!fs::is_regular_file(p, ec)) return InputFormat::Unknown;
  if (p.extension() == ".csv") return InputFormat::AscendCsv;
  std::string head = head_of(path, 64 * 1024);
  size_t i = utf8_bom_size(head);
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i >= head.size() || (head[i] != '{' && head[i] != '[')) return InputFormat::Unknown;
  // A capture names itself in its first event (docs/formats/capture.md).
  if (head.find("\"npu-doctor-capture\"") != std::string::npos) return InputFormat::Capture;
  return InputFormat::KinetoJson;
}

Trace read_trace(const std::string& path, const ReadOptions& opts) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, 0, "no such file or directory", false);
  switch (detect_format(path)) {
    case InputFormat::AscendDir:
    case InputFormat::AscendCsv:
      return read_ascend(path, opts);
    case InputFormat::KinetoJson:
    case InputFormat::Capture:
      return read_chrome_json(path, opts);
    case InputFormat::Unknown:
      break;
  }
  if (fs::is_directory(path, ec))
    throw InputError(path, 0,
                     "directory is not a torch_npu profiler output (no ASCEND_PROFILER_OUTPUT, *_ascend_pt, "
                     "trace_view.json or kernel_details.csv in it)",
                     false);
  // Not recognisably JSON: the JSON reader says precisely what is wrong and where.
  return read_chrome_json(path, opts);
}

}  // namespace npud
