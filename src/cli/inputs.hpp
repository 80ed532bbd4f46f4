// What every report command does before analysing: pick the torch_npu knowledge version and
// read traces, telling the user on stderr (file, byte offset) when either fails.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "ingest/reader.hpp"
#include "knowledge/knowledge.hpp"
#include "model/trace.hpp"

namespace npud {

// The version named by --torch-npu (newest when empty), or nullptr after printing an error
// that lists the known versions.
const KnowledgeVersion* torch_npu_version_or_report(std::string_view requested);

// The version a report uses: --torch-npu when given (nullptr after an error, as above);
// else the torch_npu the trace says was installed where it ran; else the newest release
// of the trace's torch line (its development tip when the line has no release); else the
// newest release. `why` says which, for the report.
const KnowledgeVersion* torch_npu_version_for(std::string_view requested, const Trace& trace, std::string& why);

// --max-events N for commands that read traces.
void add_max_events_option(CLI::App& cmd, uint64_t& max_events);

// Reads `path` into `out` with progress on stderr (TTY, not quiet; sets ro.progress); on bad
// input prints "npu-doctor: error: ..." and returns false.
bool read_trace_or_report(const std::string& path, ReadOptions ro, bool quiet, Trace& out);

// Whether `path` is a regular file holding a JSON report of npu-doctor's own (analyze/run/diff
// --format json: `{"schema_version": 1, "tool": {"name": "npu-doctor", ...`), which the trace
// readers would refuse with a puzzling "no traceEvents array".
bool is_npu_doctor_report(const std::string& path);

}  // namespace npud
