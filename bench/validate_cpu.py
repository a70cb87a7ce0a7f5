"""The CPU validator's edge pass (bfs.validate.cpu._check_edges, rules 3-4 and rule 5's marks) on
1, 2, ... threads in one process: seconds per pass and edges per second, one search of a
Kronecker graph searched by seq-csr. The pass is what a workflow's validate job spends its
time on at large scales (2^31 edges of random reads at scale 27).

    PYTHONPATH=. python bench/validate_cpu.py [SCALE] [REPEATS]
"""
import sys
import time

import numba
import numpy as np

from bfs.build.csr_cpu import build_csr
from bfs.algorithms.seq_csr import bfs_csr
from bfs.graphs.kronecker import generate_edges
from bfs.validate import cpu


def main(scale: int = 22, repeats: int = 3) -> None:
    src, dst = generate_edges(scale, 16)
    n = 1 << scale
    csr = build_csr(src, dst, n)
    root = int(src[0])
    parent, _ = bfs_csr(csr.offsets, csr.columns, root)
    parent = np.ascontiguousarray(parent, np.int64)
    failure, level = cpu.check_tree(parent, root, None)
    assert failure is None, failure
    most = numba.config.NUMBA_NUM_THREADS
    print(f"scale {scale}: {src.size} edges, root {root}; up to {most} threads")
    for threads in sorted({1, min(2, most), most}):
        numba.set_num_threads(threads)
        seen = np.zeros(n, np.bool_)
        cpu._check_edges(src, dst, parent, level, True, seen)     # compiled, warm
        times = []
        for _ in range(repeats):
            seen[:] = False
            t = time.perf_counter()
            code, _, _, count, _ = cpu._check_edges(src, dst, parent, level, True, seen)
            times.append(time.perf_counter() - t)
            assert code == cpu.OK
        best = float(np.median(times))
        print(f"{threads} thread(s): {best:.3f} s a pass (median of {repeats}), "
              f"{src.size / best / 1e6:.1f} M edges/s, {count} edges counted")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
