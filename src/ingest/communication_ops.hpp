// The bandwidth side of msprof's communication files, read into Trace::comm_ops /
// comm_transports / comm_packet_sizes / comm_links (docs/communication.md):
// - communication.json (per rank): {step: {"collective"|"p2p": {"<op>@<group>": {
//     "Communication Time Info": {...}, "Communication Bandwidth Info": {"SDMA"|"RDMA"|...: {
//     "Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Large Packet Ratio",
//     "Size Distribution": {"<MB>": [count, ms]}}}}}}}
// - communication_matrix.json (per rank): same nesting down to the op, then
//     {"<src>-<dst>": {"Transport Type", "Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)"}}
// - cluster_communication.json (msprof-analyze): {group: {step: {"<op>@<hash>": {"<rank>": info}}}}
// "Total Op Info" and the matrix's summary keys ("total...", "...-top1", "-middle", "-bottom")
// repeat the ops and are skipped. communication_json.hpp reads the per-step times.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "model/trace.hpp"

namespace npud {

// Appends the ops of a rank's communication.json. Start times become relative to
// `origin_ns` (the trace's time origin). Throws InputError (file) when it is not that layout.
void read_rank_comm_ops(const std::string& path, Trace& trace, int64_t origin_ns);

// Appends the links of a rank's communication_matrix.json.
void read_comm_matrix(const std::string& path, Trace& trace);

// Appends every rank's record of every op of msprof-analyze's cluster_communication.json
// (CommOp::rank set, start times absolute).
void read_cluster_comm_ops(const std::string& path, Trace& trace);

// Everything of the above a torch_npu output directory (ASCEND_PROFILER_OUTPUT) has, and when
// the program communicated, trace_view.json's HCCL tasks (ingest/hccl_tasks.hpp: a second,
// filtered pass). Called by the Ascend reader once the trace's time origin is known.
void read_communication_detail(const std::string& dir, bool has_trace_view, Trace& trace);

// Every op of a per-rank communication.json / communication_matrix.json (its root object):
// fn(step key, "collective" | "p2p", "<op>@<group>", the op's value). Summary keys skipped.
using RankOpVisitor = std::function<void(std::string_view, std::string_view, std::string_view, simdjson::dom::element)>;
void for_each_rank_op(simdjson::dom::object steps, const RankOpVisitor& fn);

// Every rank's record of every op of cluster_communication.json (its root object):
// fn(group, step key, "<op>@<hash>", rank, the record). Summary keys ("Total Op Info@<hash>") skipped.
using ClusterRecordVisitor =
    std::function<void(std::string_view, std::string_view, std::string_view, int64_t, simdjson::dom::element)>;
void for_each_cluster_record(simdjson::dom::object groups, const ClusterRecordVisitor& fn);

// A summary key of the communication files, not an op.
bool is_comm_summary_key(std::string_view op_key);

}  // namespace npud
