// Reader for torch_npu profiler output: a `<x>_ascend_pt/` directory, its
// `ASCEND_PROFILER_OUTPUT/` directory, a directory holding several `*_ascend_pt` (ranks;
// the first is read, with a warning), or a lone kernel_details.csv.
// What is read from each file, and how trace_view.json and kernel_details.csv are merged:
// docs/formats/ascend.md.
#pragma once

#include <string>

#include "ingest/reader.hpp"
#include "model/trace.hpp"

namespace npud {

Trace read_ascend(const std::string& path, const ReadOptions& opts);

}  // namespace npud
