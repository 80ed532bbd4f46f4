"""Writes RANKS synthetic torch_npu rank folders with HCCL detail, problems planted, for the
COMM rules (docs/communication.md) and for running msprof-analyze on the same files. Usage:

    gen_comm_ranks.py OUT_DIR [RANKS [SLOW_RANK [RETRANS_RANK]]]

OUT_DIR/rank<r>_ascend_pt/ holds profiler_info_<r>.json and ASCEND_PROFILER_OUTPUT/ with
trace_view.json (Ascend Hardware kernels, the HCCL task timeline, Overlap Analysis),
kernel_details.csv, communication.json, communication_matrix.json and step_trace_time.csv, the
key names msprof-analyze 26.2.0's readers use. Per rank, one step of 8 all-reduces 5 ms apart:
- SDMA sizes 2,2,2,2,2,32,32,32 MB: 5 of 8 under 16 MB (COMM001, ratio 0.625);
- even-numbered all-reduces overlap a MatMulV2 and move SDMA at 8 GB/s (< 14.4: COMM002, 4 ops);
- each all-reduce's HCCL Memcpy tasks: 1,000 B SDMA over HCCS (unaligned, COMM003), 4,096 B
  SDMA (aligned), 300 B (too small to check), 1,000 B ON_CHIP and 1,000 B RDMA (not checked);
- RDMA 4 MB per op at 20 GB/s, SLOW_RANK's at 5 GB/s (COMM004);
- odd-numbered all-reduces run with no matmul: exposed communication (COMM006);
- RETRANS_RANK >= 0 adds step 2 with one all-gather of 4.5 s on every rank whose RDMA transfer
  takes 4.2 s on RETRANS_RANK (COMM005).
"""
import json
import os
import sys

T0 = 1700000000000000  # µs
OPS = 8
SPACING_US = 5000
SDMA_MB = [2, 2, 2, 2, 2, 32, 32, 32]
RDMA_MB = 4.0


def sdma_gbs(i):
    return 8.0 if i % 2 == 0 else 16.0


def op_times(i, rank, slow_rank):
    sdma_ms = SDMA_MB[i] / sdma_gbs(i)
    rdma_ms = RDMA_MB / (5.0 if rank == slow_rank else 20.0)
    elapse_ms = sdma_ms + rdma_ms + 0.1
    return sdma_ms, rdma_ms, elapse_ms


def bandwidth(size_mb, ms, packet_mb):
    n = max(1, int(round(size_mb / packet_mb)))
    return {"Transit Size(MB)": size_mb, "Transit Time(ms)": ms, "Bandwidth(GB/s)": round(size_mb / ms, 4) if ms else 0,
            "Large Packet Ratio": 0.0, "Size Distribution": {str(packet_mb): [n, ms]}}


def op_info(start_us, elapse_ms, sdma, rdma):
    return {"Communication Time Info": {"Start Timestamp(us)": start_us, "Elapse Time(ms)": elapse_ms,
                                        "Transit Time(ms)": sdma["Transit Time(ms)"] + rdma["Transit Time(ms)"],
                                        "Wait Time(ms)": 0.05, "Synchronization Time(ms)": 0.01, "Idle Time(ms)": 0.0,
                                        "Wait Time Ratio": 0.1, "Synchronization Time Ratio": 0.01},
            "Communication Bandwidth Info": {"RDMA": rdma, "HCCS": bandwidth(0, 0, 1), "PCIE": bandwidth(0, 0, 1),
                                             "SDMA": sdma}}


def total_info(infos):
    tot = {"Communication Time Info": {}, "Communication Bandwidth Info": {}}
    for k in ("Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)"):
        tot["Communication Time Info"][k] = sum(i["Communication Time Info"][k] for i in infos)
    for t in ("RDMA", "HCCS", "PCIE", "SDMA"):
        size = sum(i["Communication Bandwidth Info"][t]["Transit Size(MB)"] for i in infos)
        ms = sum(i["Communication Bandwidth Info"][t]["Transit Time(ms)"] for i in infos)
        tot["Communication Bandwidth Info"][t] = {"Transit Size(MB)": size, "Transit Time(ms)": ms,
                                                  "Bandwidth(GB/s)": round(size / ms, 4) if ms else 0,
                                                  "Large Packet Ratio": 0.0, "Size Distribution": {}}
    return tot


def write_rank(out, rank, ranks, slow_rank, retrans_rank):
    run = os.path.join(out, f"rank{rank}_ascend_pt")
    d = os.path.join(run, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(run, f"profiler_info_{rank}.json"), "w") as f:
        json.dump({"config": {"common_config": {}}, "start_info": {}, "end_info": {}, "torch_npu_version": "2.1.0",
                   "cann_version": "8.0.RC1", "rank_id": rank}, f)
    with open(os.path.join(run, "profiler_metadata.json"), "w") as f:
        json.dump({"distributed_args": {"rank": rank, "world_size": ranks}}, f)
    group = "10652853832407842926"
    events = [{"ph": "M", "name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}},
              {"ph": "M", "name": "process_name", "pid": 900, "tid": 0, "args": {"name": "HCCL"}},
              {"ph": "M", "name": "process_name", "pid": 1000, "tid": 0, "args": {"name": "Overlap Analysis"}}]
    kernels = []   # (name, core, start_us, dur_us)
    collective = {}
    matrix = {}
    for i in range(OPS):
        start = T0 + i * SPACING_US
        sdma_ms, rdma_ms, elapse_ms = op_times(i, rank, slow_rank)
        name = f"hcom_allReduce__{100 + i}_0_1"
        collective[f"{name}@{group}"] = op_info(float(start), elapse_ms, bandwidth(SDMA_MB[i], sdma_ms, 2.0),
                                                bandwidth(RDMA_MB, rdma_ms, 0.5))
        matrix[f"{name}@{group}"] = {
            f"{rank}-{(rank + 1) % ranks}": {"Transport Type": "HCCS", "Transit Size(MB)": SDMA_MB[i],
                                             "Transit Time(ms)": sdma_ms, "Bandwidth(GB/s)": round(SDMA_MB[i] / sdma_ms, 4)},
            f"{rank}-{(rank + ranks // 2) % ranks}": {"Transport Type": "RDMA", "Transit Size(MB)": RDMA_MB,
                                                      "Transit Time(ms)": rdma_ms,
                                                      "Bandwidth(GB/s)": round(RDMA_MB / rdma_ms, 4)}}
        kernels.append((name, "HCCL", start, elapse_ms * 1000))
        if i % 2 == 0:
            kernels.append(("aclnnMatmul_MatMulCommon_MatMulV2", "AI_CORE", start + 100, 500.0))
        # The HCCL timeline: the op, then its tasks.
        events.append({"ph": "X", "name": name, "pid": 900, "tid": 1, "ts": f"{start}.000", "dur": elapse_ms * 1000,
                       "args": {"connection_id": i, "model id": 4294967295, "data_type": "FP16", "alg_type": "MESH"}})
        tasks = [(1000, "SDMA", "HCCS"), (4096, "SDMA", "HCCS"), (300, "SDMA", "HCCS"), (1000, "SDMA", "ON_CHIP"),
                 (1000, "RDMA", "ROCE")]
        for j, (size, transport, link) in enumerate(tasks):
            task = "Memcpy" if j % 2 == 0 else "Reduce_Inline"
            events.append({"ph": "X", "name": task, "pid": 900, "tid": 2, "ts": f"{start + 10 + j * 20}.000", "dur": 10.0,
                           "args": {"notify id": 0, "duration estimated(us)": 1.0, "stream id": 8, "task id": j,
                                    "context id": 0, "task type": task, "src rank": rank, "dst rank": (rank + 1) % ranks,
                                    "transport type": transport, "size(Byte)": size, "data type": "FP16",
                                    "link type": link}})
    kernels.sort(key=lambda k: k[2])
    for name, core, start, dur in kernels:
        events.append({"ph": "X", "name": name, "pid": 800, "tid": 3, "ts": f"{start}.000", "dur": dur,
                       "args": {"Task Type": core if core != "HCCL" else "COMMUNICATION", "Stream Id": 3}})
    steps = {"step1": {"collective": dict(collective, **{"Total Op Info": total_info(list(collective.values()))}),
                       "p2p": {}}}
    if retrans_rank >= 0:
        start = T0 + OPS * SPACING_US + 10000
        rdma_ms = 4200.0 if rank == retrans_rank else 10.0
        info = op_info(float(start), 4500.0, bandwidth(8, 1.0, 2.0), bandwidth(RDMA_MB, rdma_ms, 0.5))
        steps["step2"] = {"collective": {f"hcom_allGather__900_0_1@{group}": info, "Total Op Info": total_info([info])},
                          "p2p": {}}
    with open(os.path.join(d, "communication.json"), "w") as f:
        json.dump(steps, f, indent=1)
    with open(os.path.join(d, "communication_matrix.json"), "w") as f:
        json.dump({"step1": {"collective": matrix, "p2p": {}}}, f, indent=1)
    with open(os.path.join(d, "trace_view.json"), "w") as f:
        json.dump(events, f)
    with open(os.path.join(d, "kernel_details.csv"), "w") as f:
        f.write("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
                "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
                "Output Shapes,Output Data Types,Output Formats,Context ID\n")
        for n, (name, core, start, dur) in enumerate(kernels):
            typ = "MatMulV2" if core == "AI_CORE" else "hcom_allReduce_"
            # torch_npu writes "Start Time(us)" with a trailing tab inside quotes (a real fixture does).
            f.write(f'1,4294967295,{n},3,{name},{typ},static,{core},"{start}.000\t",{dur},0,8,0,NO,'
                    f'"""8192,8192""",FLOAT16,ND,"""8192,8192""",FLOAT16,ND,N/A\n')
    # step_trace_time: computing = the matmuls, communication = the all-reduces.
    comp = sum(k[3] for k in kernels if k[1] != "HCCL")
    comm = sum(k[3] for k in kernels if k[1] == "HCCL")
    overlapped = sum(min(500.0, k[3] - 100) for k in kernels if k[1] == "HCCL" and int(k[0].split("__")[1][1:3]) % 2 == 0)
    span = kernels[-1][2] + kernels[-1][3] - kernels[0][2]
    free = span - comp - (comm - overlapped)
    with open(os.path.join(d, "step_trace_time.csv"), "w") as f:
        f.write("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
                "Communication(Not Overlapped and Exclude Receive),Preparing\n")
        f.write(f"1,{comp},{comm - overlapped},{overlapped},{comm},{free},{span},0,{comm - overlapped},0\n")


def main():
    out = sys.argv[1]
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    slow_rank = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    retrans_rank = int(sys.argv[4]) if len(sys.argv) > 4 else -1
    for r in range(ranks):
        write_rank(out, r, ranks, slow_rank, retrans_rank)


if __name__ == "__main__":
    main()
