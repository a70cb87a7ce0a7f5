"""Variants of GPU searchers side by side in one process, root by root: every root is searched
by each variant in turn (median of REPEATS, CUDA events), so the drift that moves a whole
`bfs bench` call by up to 10% falls on all variants alike.

    python3 bench/ab_roots.py SCALE ROOTS ALGORITHM[@options] ALGORITHM[@options] ...

Prints each variant's mean and median search time and its mean against the first variant's.
The graph is Graph500's Kronecker graph built on the GPU, roots as `bfs bench` picks them."""
import sys

import numpy as np

from kronecker_searcher import kronecker_csr, searcher_for, time_searches

REPEATS = 4
scale, n_roots, specs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
offsets, columns, roots, _, _ = kronecker_csr(scale, n_roots)
searchers = [searcher_for(spec, offsets, columns, roots[0]) for spec in specs]
times = np.zeros((len(specs), len(roots)))
for r, root in enumerate(roots):
    for v, searcher in enumerate(searchers):
        times[v, r] = np.median(time_searches(searcher, root, REPEATS))
for spec, t in zip(specs, times):
    print(f"{spec:>28}: mean {t.mean():.4f} ms, median {np.median(t):.4f} ms, "
          f"mean / first {t.mean() / times[0].mean():.4f}")
