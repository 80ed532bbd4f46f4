"""Writes RANKS synthetic rank summaries (the JSON `analyze RANK --format summary` writes) for merge benchmarks.

A tensor- and data-parallel job: ranks in tensor-parallel groups of TP (their all-reduces carry the
group "tp<k> [ranks]"), each rank also in the data-parallel group of its place in the TP group
("dp<j>"), as Kineto records process groups from torch 2.2 on. Per step: computing ~20 ms jittered
+-5 %, COLLECTIVES collectives (4 TP all-reduces for each DP one), 10 findings every rank has and one
only every tenth rank has. Every tenth rank computes 1.5x longer: a straggler for the merge to find.

    gen_summaries.py OUT_DIR RANKS [STEPS [COLLECTIVES [TP]]]

Files: OUT_DIR/rank-<r>.json. Deterministic (seeded by rank).
"""
import json
import os
import random
import sys


def summary(rank, world, steps, collectives, tp):
    rnd = random.Random(rank)
    slow = rank % 10 == 9
    tp_group = rank // tp
    tp_ranks = list(range(tp_group * tp, min(world, tp_group * tp + tp)))
    dp_ranks = list(range(rank % tp, world, tp))
    groups = ["tp%d %s" % (tp_group, tp_ranks), "dp%d [%d, ..., %d] (%d ranks)" % (rank % tp, dp_ranks[0], dp_ranks[-1], len(dp_ranks))]
    names = ["ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"]
    step_rows, colls = [], []
    for s in range(steps):
        compute = int(20e6 * rnd.uniform(0.95, 1.05) * (1.5 if slow else 1.0))
        comm = 0
        for c in range(collectives):
            dp = c % 5 == 4
            dur = int((900e3 if dp else 150e3) * rnd.uniform(0.95, 1.05))
            comm += dur
            colls.append("[%d,%d,%d,%d]" % (1 if dp else 0, s, dur, 1 if dp else 0))
        free = int(1e6 * rnd.uniform(0.95, 1.05))
        step_rows.append('{"step":%d,"step_ns":%d,"computing_ns":%d,"communication_ns":%d,"overlapped_ns":%d,"free_ns":%d}'
                         % (s, compute + comm + free, compute, comm, comm // 4, free))
    findings = [{"id": "SYNC001", "severity": "warning", "message": "blocking host-device copies in the step",
                 "location": {"file": "/job/train.py", "line": 100 + k, "op": "aten::item"}, "cost_ns": 1000 * k}
                for k in range(10)]
    if rank % 10 == 3:
        findings.append({"id": "FALLBACK001", "severity": "error", "message": "aten::isin runs on the host",
                         "location": {"file": "/job/data.py", "line": 42, "op": "aten::isin"}, "cost_ns": 50000})
    return ('{"schema_version":1,"tool":"npu-doctor","command":"summary","kind":"npu-doctor-rank-summary",'
            '"rank":%d,"world_size":%d,"source":"prof/rank-%d.json.gz","format":"kineto","torch_npu":"2.6.0",'
            '"env":{},"step_source":"trace events","steps":[%s],"collectives_truncated":false,'
            '"warning_count":0,"warnings":[],"collective_names":%s,"group_names":%s,"collectives":[%s],"findings":%s}\n'
            % (rank, world, rank, ",".join(step_rows), json.dumps(names), json.dumps(groups), ",".join(colls),
               json.dumps(findings)))


def main():
    out, ranks = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    collectives = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    tp = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    os.makedirs(out, exist_ok=True)
    for r in range(ranks):
        with open(os.path.join(out, "rank-%d.json" % r), "w") as f:
            f.write(summary(r, ranks, steps, collectives, tp))


if __name__ == "__main__":
    main()
