"""Writes RANKS synthetic Kineto rank traces of about SIZE_MB megabytes each, one slow rank planted.

Each rank runs the same steps: layers of compute kernels (a cpu_op, its cudaLaunchKernel and
the kernel per op) and an all-reduce every few layers. The slow rank's compute kernels take
SLOW times longer; every other rank's all-reduce then lasts that much longer (it waits for the
slow rank), as NCCL collectives do. Usage:

    gen_cluster.py OUT_DIR RANKS SIZE_MB [SLOW_RANK [SLOW]]

Files: OUT_DIR/rank-<r>.json with distributedInfo {rank, world_size}. Prints the slow rank.
"""
import os
import sys
from multiprocessing import Pool

KERNELS = [("aten::mm", "ampere_sgemm_128x64_tn", 60.0),
           ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", 12.0),
           ("aten::softmax", "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
            "false, false>(float*, float const*, int, int, int, bool const*, int, bool)", 20.0),
           ("aten::layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
            "(int, float, float const*, float const*, float const*, float*, float*, float*)", 15.0),
           ("aten::gelu", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", 10.0)]
ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
LAYERS_PER_STEP = 48
LAYERS_PER_COLLECTIVE = 8
TRANSFER_US = 400.0


def write_rank(args):
    out_dir, rank, world, size_mb, slow_rank, slow = args
    target = int(size_mb * 1e6)
    factor = slow if rank == slow_rank else 1.0
    pid, tid = 1000 + rank, 1000 + rank
    t = 1712195495502094.0
    ext = 0
    written = 0
    step = 0
    path = os.path.join(out_dir, "rank-%d.json" % rank)
    with open(path, "w", buffering=1 << 22) as f:
        head = ('{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},\n'
                '"deviceProperties": [{"id": 0, "name": "Synthetic GPU"}],\n"traceEvents": [\n' % (rank, world))
        f.write(head)
        written += len(head)
        sep = ""
        while written < target:
            step += 1
            step_start = t
            parts = []
            since = 0.0   # the slowest rank's compute since the last collective
            mine = 0.0
            for layer in range(LAYERS_PER_STEP):
                for op, kernel, dur in KERNELS:
                    ext += 1
                    d = dur * factor
                    parts.append('{"ph":"X","cat":"cpu_op","name":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":8.0,'
                                 '"args":{"External id":%d,"Input Dims":[[64,1024],[1024,1024]],"Input type":["float","float"]}}'
                                 % (op, pid, tid, t, ext))
                    parts.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,"tid":%d,"ts":%.3f,'
                                 '"dur":4.0,"args":{"External id":%d,"correlation":%d}}' % (pid, tid, t + 2, ext, ext))
                    parts.append('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%.3f,"dur":%.3f,'
                                 '"args":{"External id":%d,"correlation":%d,"device":0,"stream":7}}' % (kernel, t + 6, d, ext, ext))
                    t += d + 2.0
                    since += dur * slow
                    mine += d
                if (layer + 1) % LAYERS_PER_COLLECTIVE == 0:
                    ext += 1
                    d = TRANSFER_US + (since - mine)
                    parts.append('{"ph":"X","cat":"cpu_op","name":"nccl:all_reduce","pid":%d,"tid":%d,"ts":%.3f,"dur":10.0,'
                                 '"args":{"External id":%d}}' % (pid, tid, t, ext))
                    parts.append('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":8,"ts":%.3f,"dur":%.3f,'
                                 '"args":{"External id":%d,"correlation":%d,"device":0,"stream":8}}' % (ALLREDUCE, t + 6, d, ext, ext))
                    t += d + 2.0
                    since = mine = 0.0
            parts.append('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,'
                         '"args":{}}' % (step, pid, tid, step_start, t - step_start + 10))
            t += 20.0
            chunk = sep + ",\n".join(parts)
            sep = ",\n"
            f.write(chunk)
            written += len(chunk)
        f.write('\n]}\n')
    return path


def main():
    out_dir, ranks, size_mb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    slow_rank = int(sys.argv[4]) if len(sys.argv) > 4 else ranks // 2 + 1
    slow = float(sys.argv[5]) if len(sys.argv) > 5 else 1.25
    os.makedirs(out_dir, exist_ok=True)
    with Pool() as pool:
        pool.map(write_rank, [(out_dir, r, ranks, size_mb, slow_rank, slow) for r in range(ranks)])
    print("slow rank %d (compute x%.2f)" % (slow_rank, slow))


if __name__ == "__main__":
    main()
