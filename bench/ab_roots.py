"""Variants of one GPU algorithm side by side in one process, root by root: every root is
searched by each variant in turn (median of REPEATS, CUDA events), so the drift that moves a
whole `bfs bench` call by up to 10% falls on all variants alike.

    python3 bench/ab_roots.py SCALE ROOTS ALGORITHM[@options] ALGORITHM[@options] ...

Prints each variant's mean and median search time and its mean against the first variant's.
The graph is Graph500's Kronecker graph built on the GPU, roots as `bfs bench` picks them."""
import importlib
import sys

import cupy as cp
import numpy as np

from bfs.algorithms import ALGORITHMS, kernel1_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.harness.bench import parse_algorithm
from bfs.harness.roots import graph500_roots

REPEATS = 4
scale, n_roots, specs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
n = 2 ** scale
src, dst = edge_list_gpu(scale)
offsets, columns = kernel1_gpu.build_csr_gpu(src, dst, n)
del src, dst
roots = graph500_roots(n, cp.diff(offsets).get() > 0, count=n_roots, seeds=(2, 3))
searchers = []
for spec in specs:
    name, options = parse_algorithm(spec)
    searcher = importlib.import_module(ALGORITHMS[name].modules["gpu"]).from_csr(
        offsets, columns, **options)
    searcher.search(int(roots[0]))          # compilation, first touch
    searchers.append(searcher)
start, end = cp.cuda.Event(), cp.cuda.Event()
times = np.zeros((len(specs), len(roots)))
for r, root in enumerate(roots):
    for v, searcher in enumerate(searchers):
        t = []
        for _ in range(REPEATS):
            start.record()
            searcher.search(int(root))
            end.record()
            end.synchronize()
            t.append(cp.cuda.get_elapsed_time(start, end))
        times[v, r] = np.median(t)
for spec, t in zip(specs, times):
    print(f"{spec:>28}: mean {t.mean():.4f} ms, median {np.median(t):.4f} ms, "
          f"mean / first {t.mean() / times[0].mean():.4f}")
