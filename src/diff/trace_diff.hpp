// `npu-doctor diff BEFORE AFTER`: what changed between two runs of the same program.
// Step time, per-op time and count deltas (host aten ops by self time, device tasks by
// time), and which findings a change fixed or introduced. See docs/html-report.md.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "model/finding.hpp"
#include "model/trace.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/report.hpp"

namespace npud {

class TraceIndex;

struct OpDelta {
  std::string name;
  int64_t before_ns = 0, after_ns = 0;
  int64_t before_count = 0, after_count = 0;
  // Device time by launching op: what in AFTER explains the op's device time (AI-CPU tasks,
  // TransData format conversions, compile at dispatch, syncs, and the rules that fired on it).
  std::string why;
  int64_t delta_ns() const { return after_ns - before_ns; }
  int64_t delta_count() const { return after_count - before_count; }
};

struct OpTable {
  std::vector<OpDelta> rows;     // every name seen in either trace, largest |delta_ns| first
  int64_t before_ns = 0, after_ns = 0;        // totals over all rows: sum of rows' deltas == after - before
  int64_t before_count = 0, after_count = 0;
};

struct TraceDiff {
  ReportSummary before, after;
  // Mean step duration when both traces have steps, else the traces' spans.
  std::string step_basis;        // "step" | "span"
  int64_t before_step_ns = 0, after_step_ns = 0;
  OpTable host;                  // aten ops by self time
  OpTable device;                // device tasks (kernels, copies, ...) by time
  // Device time by the aten op that launched it (the outermost aten op of the launch): kernel
  // names differ between a GPU and an NPU, the ops that launch them do not. Slower first; time
  // per step (each trace's own step count), counts over all steps.
  OpTable device_by_op;
  std::string before_device, after_device;   // "cuda", "npu", "cpu", ... as the traces say
  std::vector<Finding> fixed;    // in BEFORE, not in AFTER (HOT001 apart)
  std::vector<Finding> added;    // in AFTER, not in BEFORE (HOT001 apart)
  size_t unchanged = 0;          // findings in both
  // HOT001 entries (kHostRankingRule) that left or entered the op-time ranking: a changed rank
  // is no fixed or new problem, so they are counted here, never listed as fixed or new, and
  // --fail-on-regression ignores them.
  size_t ranking_left = 0, ranking_entered = 0;
  std::map<std::string, std::pair<size_t, size_t>> findings_by_rule;  // rule -> (before, after) counts
  std::string torch_npu;         // knowledge version the rules used
};

// Per-name totals: host aten ops (self time) and device tasks (duration).
OpTable host_op_table(const Trace& before, const Trace& after);
OpTable device_op_table(const Trace& before, const Trace& after);
// Device time per launching aten op, slower in AFTER first, each row's `why` from AFTER and
// its findings.
OpTable device_by_op_table(const TraceIndex& before, const TraceIndex& after, const std::vector<Finding>& after_findings);
// What a trace ran on: "npu" for torch_npu profiles, else the device the trace records
// ("cuda", "hip", ...), "cpu" without device work.
std::string device_of(const Trace& t);

// Findings are the same when rule, file, line and op agree (counts and costs may differ).
void match_findings(const std::vector<Finding>& before, const std::vector<Finding>& after, TraceDiff& out);

// BEFORE and AFTER as analyze_trace analysed each (pipeline/pipeline.hpp: its knowledge version,
// rules, suppressions): their findings compared, their indexes (built once, by the rules) read
// for the device-by-op table and kept for the HTML page's timeline (render_diff_html).
TraceDiff diff_traces(const TraceAnalysis& before, const TraceAnalysis& after);

struct DiffTextOptions {
  size_t top = 15;               // rows per op table
  bool color = false;
};
void render_diff_text(std::ostream& os, const TraceDiff& d, const DiffTextOptions& opts);
// JSON lists every row of both op tables (so the totals can be checked against them).
void render_diff_json(std::ostream& os, const TraceDiff& d);

}  // namespace npud
