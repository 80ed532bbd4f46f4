// The HCCL task timeline of a torch_npu trace_view.json: the process named "HCCL" or
// "Communication" holds each collective (`hcom_*` events) and its Memcpy / Reduce_Inline
// tasks, whose args carry "transport type", "link type" and "size(Byte)". Read in a second,
// filtered pass over the file (only events that can be HCCL ones are parsed), into
// Trace::hccl_tasks. Each task belongs to the last `hcom_*` op before it in time, the way
// msprof-analyze's advisor groups them (dataset/communication/hccl_detail_dataset.py).
#pragma once

#include <string>

#include "model/trace.hpp"

namespace npud {

// Appends the HCCL tasks of `path` (times relative to trace.time_origin_ns). Nothing when the
// file has no HCCL process. Throws InputError on malformed JSON.
void read_hccl_tasks(const std::string& path, Trace& trace);

}  // namespace npud
