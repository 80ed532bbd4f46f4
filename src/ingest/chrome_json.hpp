// Streaming reader for Chrome Trace Event JSON: Kineto / torch.profiler traces (.json or
// .json.gz), torch_npu's trace_view.json, and npu-doctor capture files
// (docs/formats/capture.md). Fills a Trace and finalizes it.
#pragma once

#include <string>
#include <string_view>

#include "ingest/reader.hpp"
#include "model/trace.hpp"

namespace npud {

Trace read_chrome_json(const std::string& path, const ReadOptions& opts);

// The same from memory (plain or gzip bytes); name is used in errors and as Trace::source.
Trace read_chrome_json_buffer(std::string_view json, const std::string& name, const ReadOptions& opts);

}  // namespace npud
