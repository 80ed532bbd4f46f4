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
// that lists the known versions. (Which version a trace's report uses when none is named:
// choose_torch_npu, pipeline/pipeline.hpp.)
const KnowledgeVersion* torch_npu_version_or_report(std::string_view requested);

// --max-events N for commands that read traces.
void add_max_events_option(CLI::App& cmd, uint64_t& max_events);

// Reads `path` into `out` with progress on stderr (TTY, not quiet; sets ro.progress); on bad
// input prints "npu-doctor: error: ..." (also into *error when given) and returns false.
// `shown`: the name messages give the input when `path` is not the user's ("-" for stdin's
// /proc/self/fd/N).
bool read_trace_or_report(const std::string& path, ReadOptions ro, bool quiet, Trace& out,
                          const std::string& shown = {}, std::string* error = nullptr);

// For an input the profile readers refused: the command that reads it, as "npu-doctor: hint: ..."
// text ("" when none does). Python source goes to scan or run, an msprobe dump (dump.json) to
// compare.
std::string command_for_input(const std::string& path);

// Whether `path` is a regular file holding a JSON report of npu-doctor's own (analyze/run/diff
// --format json: `{"schema_version": 1, "tool": {"name": "npu-doctor", ...`), which the trace
// readers would refuse with a puzzling "no traceEvents array".
bool is_npu_doctor_report(const std::string& path);

}  // namespace npud
