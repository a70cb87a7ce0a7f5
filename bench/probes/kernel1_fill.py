"""GPU Kernel 1's fill variants in one process, on one Kronecker graph (bfs.build.csr_gpu):
"keys" (each sort bucket appends its keys in a pass over the edges: the earlier build) against
"scatter" (one fill pass by atomics, rows sorted in place), at sort buckets of 2^30 and 2^28
entries, for the edge list held on the device and streamed (regenerated chunk by chunk).
Every build's CSR is checked equal to the first; the variants alternate, ROUNDS rounds; each
line gives the wall time (the device synchronized) and the CuPy pool's high-water mark of the
build. Run on a GPU machine:

    python3 bench/probes/kernel1_fill.py SCALE [ROUNDS]
"""
import statistics
import sys
import time

import cupy as cp

from bfs.build import csr_gpu
from bfs.harness.generated import GeneratedKronecker

scale = int(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
graph = GeneratedKronecker(scale)
n = graph.n_vertices
pool = cp.get_default_memory_pool()
for fill in csr_gpu.FILLS:     # both fills' kernels compiled before anything is timed
    csr_gpu.build_csr_gpu(cp.asarray([0, 1], cp.uint32), cp.asarray([1, 2], cp.uint32), 3,
                              fill=fill)

variants = [(where, fill, limit) for where in ("device", "stream")
            for fill, limit in (("keys", 1 << 30), ("scatter", 1 << 30), ("scatter", 1 << 28))]
times = {v: [] for v in variants}
peaks = {}
ref = None
for rnd in range(rounds):
    for where, fill, limit in variants:
        src = dst = None
        pool.free_all_blocks()
        if where == "device":
            src, dst = graph.device_edges()
        base = pool.total_bytes()
        cp.cuda.get_current_stream().synchronize()
        t = time.perf_counter()
        if where == "device":
            off, col = csr_gpu.build_csr_gpu(src, dst, n, sort_limit=limit, fill=fill)
        else:
            off, col = csr_gpu.csr_from_streamed(graph.streamed_device_edges(), n,
                                                    sort_limit=limit, fill=fill)
        cp.cuda.get_current_stream().synchronize()
        times[(where, fill, limit)].append(time.perf_counter() - t)
        peaks[(where, fill, limit)] = pool.total_bytes() - base
        del src, dst
        if ref is None:
            ref = (off.get(), cp.asnumpy(col[:: max(1, col.size // (1 << 24))]),
                   int(cp.sum(col, dtype=cp.uint64)))
        else:   # offsets whole; columns by a strided sample and their sum
            assert (off.get() == ref[0]).all(), (where, fill, limit)
            assert (cp.asnumpy(col[:: max(1, col.size // (1 << 24))]) == ref[1]).all()
            assert int(cp.sum(col, dtype=cp.uint64)) == ref[2]
        del off, col
for v in variants:
    where, fill, limit = v
    print(f"scale {scale} edge list {where:6s} fill {fill:7s} bucket 2^{limit.bit_length() - 1}: "
          f"median {statistics.median(times[v]):.3f} s (runs {', '.join(f'{t:.3f}' for t in times[v])}), "
          f"build peak {peaks[v] / 2**30:.2f} GiB beyond the edge list", flush=True)
