// The trace rules, one per file in src/rules/. registry.cpp lists them explicitly (no
// static-initialisation registration), so the order and the set are plain to read.
#pragma once

#include "rules/rule.hpp"

namespace npud {

const Rule& sync001_rule();       // host-device-sync
const Rule& fallback001_rule();   // ai-cpu-task
const Rule& fallback002_rule();   // cpu-fallback-op
const Rule& contig001_rule();     // contiguity-copy
const Rule& hot001_rule();        // hot-ops
const Rule& idle001_rule();       // device-idle-gap
const Rule& fuse001_rule();       // rms-norm (graph/patterns)
const Rule& fuse002_rule();       // layer-norm (graph/patterns)
const Rule& fuse003_rule();       // rotary-embedding (graph/patterns)
const Rule& fuse004_rule();       // attention (graph/patterns)
const Rule& fuse005_rule();       // swiglu (graph/patterns)
const Rule& fuse006_rule();       // gelu (graph/patterns)
const Rule& fuse007_rule();       // optimizer-loop (graph/patterns)
const Rule& fuse008_rule();       // sdpa-not-fused (captures)
const Rule& compile001_rule();    // op-compile-on-dispatch (NPU profiles)
const Rule& data001_rule();       // slow-dataloader
const Rule& gc001_rule();         // gc-pauses (NPU profiles)
const Rule& launch001_rule();     // launch-blocking (NPU profiles)
const Rule& syncbn001_rule();     // sync-batchnorm (collectives per SyncBatchNorm layer)
const Rule& bound001_rule();      // pmu-bottleneck (NPU kernel_details PMU ratios)
const Rule& mem001_rule();        // memory-op-time (NPU profiles)
const Rule& shape001_rule();     // matmul-alignment (NPU kernel_details shapes; advisor parity)
const Rule& shape002_rule();     // attention-alignment (NPU kernel_details shapes; advisor parity)
const Rule& dynshape002_rule();  // all-ops-dynamic (NPU kernel_details OP State; advisor parity)
const Rule& fuse009_rule();      // fused-optimizer (NPU profiles' Optimizer.step ranges; advisor parity)
const Rule& fuse010_rule();      // fusible-sequence (NPU kernel_details PMU times; advisor parity)
const Rule& freq001_rule();      // ai-core-freq-drop (NPU trace_view AI Core Freq counters; advisor parity)
const Rule& capture001_rule();    // capture-incomplete (captures)
const Rule& comm001_rule();      // small-packets (communication.json)
const Rule& comm002_rule();      // bandwidth-contention (communication.json + matmul kernels)
const Rule& comm003_rule();      // byte-alignment (trace_view HCCL tasks)
const Rule& comm004_rule();      // slow-link (ranks' communication records: the cluster view)
const Rule& comm005_rule();      // rdma-retransmission (ranks' communication records: the cluster view)
const Rule& comm006_rule();      // exposed-communication (per step)
const Rule& port001_rule();       // cuda-only-code (captures: the program's file, by the scan rules)

// The rule with this id among trace_rules(), or nullptr.
const Rule* find_trace_rule(std::string_view id);

const Rule& compile002_rule();   // graph-break
const Rule& compile003_rule();   // recompile
}  // namespace npud
