"""Writes a synthetic Kineto-like trace (object form) of at least SIZE_MB megabytes.

The mix follows real torch.profiler GPU traces: per aten op a cpu_op with record_shapes
args, a cudaLaunchKernel runtime call, its kernel, two ac2g flow events; now and then a
memcpy pair, a sync, a ProfilerStep range. Usage: gen_trace.py OUT.json SIZE_MB
"""
import random
import sys

OPS = ["aten::mm", "aten::add", "aten::mul", "aten::linear", "aten::relu", "aten::softmax",
       "aten::layer_norm", "aten::copy_", "aten::to", "aten::view", "aten::addmm", "aten::gelu"]
KERNELS = ["void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
           "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
           "ampere_sgemm_128x64_tn", "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>"
           "(float*, float const*, int, int, int, bool const*, int, bool)",
           "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"]


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    target = int(size_mb * 1e6)
    rnd = random.Random(1)
    pid, tid = 4242, 4242
    ts = 1712195495502094.0
    ext = corr = 0
    step = 0
    written = 0
    with open(out, "w", buffering=1 << 22) as f:
        head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "Synthetic GPU", "totalGlobalMem": 85899345920}],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n  "traceEvents": [\n')
        f.write(head)
        written += len(head)
        first = True
        while written < target:
            parts = []
            if ext % 5000 == 0:
                step += 1
                parts.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d, '
                             '"ts": %.3f, "dur": %.3f, "args": {"External id": %d}}' % (step, pid, tid, ts, 5000 * 30.0, ext))
            ext += 1
            corr += 1
            name = OPS[rnd.randrange(len(OPS))]
            a, b = rnd.choice([64, 128, 256, 1024]), rnd.choice([64, 128, 4096])
            dur = rnd.uniform(5, 40)
            parts.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, '
                         '"args": {"External id": %d, "Sequence number": %d, "Fwd thread id": 0, "Record function id": 0, '
                         '"Concrete Inputs": ["", "", ""], "Input type": ["float", "float", "Scalar"], '
                         '"Input Strides": [[%d, 1], [%d, 1], []], "Input Dims": [[%d, %d], [%d, %d], []], "Ev Idx": %d}}'
                         % (name, pid, tid, ts, dur, ext, ext, b, b, a, b, a, b, ext))
            parts.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, "ts": %.3f, '
                         '"dur": %.3f, "args": {"External id": %d, "cbid": 211, "correlation": %d}}'
                         % (pid, tid, ts + 1.5, 3.2, ext, corr))
            parts.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f, "cat": "ac2g", "name": "ac2g"}'
                         % (corr, pid, tid, ts + 1.5))
            k = KERNELS[rnd.randrange(len(KERNELS))]
            parts.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, '
                         '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, '
                         '"registers per thread": 32, "shared memory": 0, "blocks per SM": 4.5, "warps per SM": 18.0, '
                         '"grid": [%d, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %%": 50}}'
                         % (k, ts + 8.0, dur * 0.7, ext, corr, a))
            parts.append('{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                         % (corr, ts + 8.0))
            if ext % 50 == 0:
                corr += 1
                parts.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": %d, "tid": %d, "ts": %.3f, '
                             '"dur": 9.1, "args": {"External id": %d, "cbid": 41, "correlation": %d}}' % (pid, tid, ts + 20, ext, corr))
                parts.append('{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, '
                             '"ts": %.3f, "dur": 2.0, "args": {"External id": %d, "device": 0, "context": 1, "stream": 7, '
                             '"correlation": %d, "bytes": 4, "memory bandwidth (GB/s)": 0.002}}' % (ts + 25, ext, corr))
                parts.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": %d, "tid": %d, '
                             '"ts": %.3f, "dur": 6.0, "args": {"External id": %d, "cbid": 131, "correlation": %d}}'
                             % (pid, tid, ts + 29.5, ext, corr + 1))
                corr += 1
            ts += 30.0
            chunk = (",\n" if not first else "") + ",\n".join(parts)
            first = False
            f.write(chunk)
            written += len(chunk)
        tail = '\n  ],\n  "traceName": "synthetic",\n  "displayTimeUnit": "ms"\n}\n'
        f.write(tail)


if __name__ == "__main__":
    main()
