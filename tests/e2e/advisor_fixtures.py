"""Small torch_npu profiler folders for the advisor-parity rules, written the way mstt's own
advisor tests make theirs (rows of kernel_details.csv / events of trace_view.json built in code):
each folder exercises one check of msprof-analyze's advisor and of npu-doctor.

    python3 tests/e2e/advisor_fixtures.py OUT_DIR   # writes OUT_DIR/<name>/x_ascend_pt/...

The numbers both tools give on these folders are in docs/advisor-parity.md.
"""

import csv
import json
import os
import sys

# kernel_details.csv of CANN 8 with aic_metrics=PipeUtilization (the column set of mstt's
# test/ut/advisor/compute_advice/data/kernel_details.csv).
HEADER = ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State", "Accelerator Core",
          "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
          "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
          "Output Formats", "Context ID", "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)",
          "aic_mac_ratio", "aic_scalar_time(us)", "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio",
          "aic_mte2_time(us)", "aic_mte2_ratio", "aic_fixpipe_time(us)", "aic_fixpipe_ratio",
          "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles", "aiv_vec_time(us)", "aiv_vec_ratio",
          "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)", "aiv_mte2_ratio", "aiv_mte3_time(us)",
          "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)"]
BASE_US = 1736413971400000.0


def row(name, op_type, core, start, dur, in_shapes, out_shapes, dtypes, state="static", cube=None, vec=None):
    """One task. cube / vec: {pipe: ratio} of the AI Core (cube) or vector side, busy over 95 % of dur."""
    r = dict.fromkeys(HEADER, "0")
    n_in = in_shapes.count(";") + 1
    r.update({"Step Id": "1", "Model ID": "4294967295", "Task ID": str(int(start) % 100000), "Stream ID": "2",
              "Name": name, "Type": op_type, "OP State": state, "Accelerator Core": core,
              "Start Time(us)": "%.3f\t" % (BASE_US + start), "Duration(us)": "%.3f" % dur, "Wait Time(us)": "1",
              "Block Dim": "20", "Mix Block Dim": "0", "HF32 Eligible": "NO", "Input Shapes": '"%s"' % in_shapes,
              "Input Data Types": ";".join([dtypes] * n_in), "Input Formats": ";".join(["ND"] * n_in),
              "Output Shapes": '"%s"' % out_shapes, "Output Data Types": dtypes, "Output Formats": "ND",
              "Context ID": "N/A", "aic_icache_miss_rate": "0", "aiv_icache_miss_rate": "0",
              "cube_utilization(%)": "0"})
    busy = round(dur * 0.95, 3)
    for side, pipes in (("aic", cube), ("aiv", vec)):
        if not pipes:
            continue
        r["aicore_time(us)" if side == "aic" else "aiv_time(us)"] = str(busy)
        for pipe, ratio in pipes.items():
            r["%s_%s_ratio" % (side, pipe)] = str(ratio)
            r["%s_%s_time(us)" % (side, pipe)] = str(round(busy * ratio, 3))
    return r


def write_kernel_details(folder, rows, header=HEADER):
    out = os.path.join(folder, "x_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "kernel_details.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return os.path.join(folder, "x_ascend_pt")


MATMUL = dict(cube={"mac": 0.85, "scalar": 0.2, "mte1": 0.5, "mte2": 0.6, "fixpipe": 0.1})


def shapes(folder):
    """SHAPE001 / SHAPE002: a 3-D batched matmul with K = 4000, an aligned 3-D one (the advisor
    calls every 3-D matmul unaffine), an NZ matmul (aligned), a plain aligned one, FlashAttention in BNSD with D = 96 and S = 1000; one static op (no DYNSHAPE002)."""
    rows, t = [], 0.0
    for _ in range(4):
        for args in (("aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV2", "BatchMatMulV2", "AI_CORE", 300,
                      "16,4096,4000;16,4000,4096", "16,4096,4096", "DT_BF16", "dynamic", MATMUL),
                     ("aclnnBatchMatMul_BatchMatMulV2_BatchMatMulV3", "BatchMatMulV2", "AI_CORE", 300,
                      "16,4096,4096;16,4096,4096", "16,4096,4096", "DT_BF16", "dynamic", MATMUL),
                     ("aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE", 250,
                      "8192,4096;4096,4096", "8192,4096", "DT_BF16", "dynamic", MATMUL),
                     ("aclnnMatmul_MatMulNz_MatMulV2", "MatMulV2", "AI_CORE", 250,
                      "256,512,16,16;256,512,16,16", "512,256,16,16", "FLOAT16", "static", MATMUL)):
            name, op_type, core, dur, i, o, dt, state, pipes = args
            rows.append(row(name, op_type, core, t, dur, i, o, dt, state, **pipes))
            t += dur + 5
        rows.append(row("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore", "FlashAttentionScore",
                        "MIX_AIC", t, 400, "2,16,1000,96;2,16,1000,96;2,16,1000,96;;;;1000,1000;;;;;",
                        "2,16,1000,8;2,16,1000,8;;2,16,1000,96", "DT_BF16", "dynamic",
                        cube={"mac": 0.4, "scalar": 0.9, "mte2": 0.85, "fixpipe": 0.5}, vec={"vec": 0.6}))
        t += 405
    return write_kernel_details(folder, rows)


def dynamic(folder, with_state=True):
    """DYNSHAPE002: every task dynamic; without_state: the same tasks without the OP State column."""
    rows, t = [], 0.0
    for _ in range(6):
        rows.append(row("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", t, 20, "4096,4096;4096,4096",
                        "4096,4096", "DT_BF16", "dynamic", vec={"vec": 0.3, "mte2": 0.8, "mte3": 0.4}))
        t += 25
    header = HEADER if with_state else [h for h in HEADER if h != "OP State"]
    return write_kernel_details(folder, rows, header)


def fusible(folder):
    """FUSE010: 8 times a 200 us matmul, then three cube-side ops moving data (MTE-bound), then
    three small vector ops with 40 us host gaps between them (host-bound). All static."""
    rows, t = [], 0.0
    mte = dict(cube={"mac": 0.1, "scalar": 0.1, "mte2": 0.7, "fixpipe": 0.2})
    for _ in range(8):
        rows.append(row("aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE", t, 200,
                        "4096,4096;4096,4096", "4096,4096", "DT_BF16", **MATMUL))
        t += 202
        for name, op_type in (("TransData_1", "TransData"), ("aclnnCast_CastAiCore_Cast", "Cast"),
                              ("TransData_2", "TransData")):
            rows.append(row(name, op_type, "AI_CORE", t, 30, "4096,4096", "4096,4096", "DT_BF16", **mte))
            t += 31
        for name, op_type in (("aclnnMul_MulAiCore_Mul", "Mul"), ("aclnnAdd_AddAiCore_Add", "Add"),
                              ("aclnnSigmoid_SigmoidAiCore_Sigmoid", "Sigmoid")):
            rows.append(row(name, op_type, "AI_VECTOR_CORE", t, 10, "1024", "1024", "FLOAT",
                            vec={"vec": 0.3, "mte2": 0.3, "mte3": 0.2}))
            t += 50
    return write_kernel_details(folder, rows)


def optimizer(folder):
    """FUSE009: trace_view.json of one step whose AdamW.step runs per-parameter aten ops."""
    out = os.path.join(folder, "x_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    pid, ev, ts = 4242, [], BASE_US

    def x(name, start, dur, cat="cpu_op"):
        ev.append({"ph": "X", "name": name, "pid": pid, "tid": pid, "ts": "%.3f" % start, "dur": dur, "cat": cat,
                   "args": {"Sequence number": -1, "Fwd thread id": 0}})

    ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "Python"}})
    x("ProfilerStep#1", ts, 5000)
    x("aten::mm", ts + 10, 100)
    x("Optimizer.step#AdamW.step", ts + 1000, 3000)
    t = ts + 1010
    for _ in range(8):   # one parameter: mul_, add_, addcmul_, sqrt, div, add_
        for op in ("aten::mul_", "aten::add_", "aten::addcmul_", "aten::sqrt", "aten::div", "aten::add_"):
            x(op, t, 40)
            t += 50
    with open(os.path.join(out, "trace_view.json"), "w") as f:
        json.dump(ev, f)
    return os.path.join(folder, "x_ascend_pt")


def freq(folder):
    """FREQ001: 20 AI_CORE matmuls of 100 us; the AI Core clock drops from 1800 to 1400 MHz for
    calls 10-14 (an "AI Core Freq" counter), and info.json gives the rated 1800 MHz."""
    root = os.path.join(folder, "x_ascend_pt")
    out = os.path.join(root, "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out, exist_ok=True)
    ev = [{"ph": "M", "name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}},
          {"ph": "M", "name": "thread_name", "pid": 800, "tid": 3, "args": {"name": "Stream 3"}},
          {"ph": "M", "name": "process_name", "pid": 900, "tid": 0, "args": {"name": "AI Core Freq"}}]
    t = BASE_US
    ev.append({"ph": "C", "name": "AI Core Freq", "pid": 900, "tid": 0, "ts": "%.3f" % (t - 10), "args": {"MHz": 1800}})
    for i in range(20):
        if i == 10:
            ev.append({"ph": "C", "name": "AI Core Freq", "pid": 900, "tid": 0, "ts": "%.3f" % (t - 5),
                       "args": {"MHz": 1400}})
        if i == 15:
            ev.append({"ph": "C", "name": "AI Core Freq", "pid": 900, "tid": 0, "ts": "%.3f" % (t - 5),
                       "args": {"MHz": 1800}})
        name = "aclnnMatmul_MatMulV3Common_MatMulV3" if i % 2 else "aclnnAdd_AddAiCore_Add"
        ev.append({"ph": "X", "name": name, "pid": 800, "tid": 3, "ts": "%.3f" % t, "dur": 100.0,
                   "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Stream Id": 3, "Task Id": i}})
        t += 110
    with open(os.path.join(out, "trace_view.json"), "w") as f:
        json.dump(ev, f)
    dev = os.path.join(root, "PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP", "device_0")
    os.makedirs(dev, exist_ok=True)
    with open(os.path.join(dev, "info.json.0"), "w") as f:
        json.dump({"DeviceInfo": [{"id": 0, "aiv_num": 40, "aic_frequency": "1800", "ai_core_num": 20}]}, f)
    return root


FOLDERS = {"shapes": shapes, "dynamic": dynamic, "no-op-state": lambda d: dynamic(d, with_state=False),
           "fusible": fusible, "optimizer": optimizer, "freq": freq}


def write_all(root):
    return {name: make(os.path.join(root, name)) for name, make in FOLDERS.items()}


if __name__ == "__main__":
    for name, path in write_all(sys.argv[1]).items():
        print(name, path)
