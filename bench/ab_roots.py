"""Variants of GPU searchers side by side in one process, root by root: every root is searched
by each variant in turn (median of REPEATS, CUDA events), so the drift that moves a whole
`bfs bench` call by up to 10% falls on all variants alike.

    python3 bench/ab_roots.py SCALE ROOTS ALGORITHM[@options] ALGORITHM[@options] ... [--out DIR]

Prints each variant's mean and median search time and its mean against the first variant's,
and for every variant after the first the statistics of `bfs compare` (bfs.report.compare:
per-root speedups over the first variant, their geometric mean with its bootstrap 95%
interval, the Wilcoxon signed-rank p-value); --out DIR also writes that comparison's tables
and figure (summary, per_root, speedups) as `bfs compare` does. The graph is Graph500's
Kronecker graph built on the GPU, roots as `bfs bench` picks them."""
import argparse

import numpy as np

from bfs.report.compare import per_root_frame, speedup_stats, summary_row, write_outputs
from kronecker_searcher import kronecker_csr, searcher_for, time_searches

REPEATS = 4
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("scale", type=int)
parser.add_argument("roots", type=int)
parser.add_argument("specs", nargs="+", metavar="ALGORITHM[@options]")
parser.add_argument("--out", help="also write the comparison's tables and figure here")
args = parser.parse_args()
scale, n_roots, specs = args.scale, args.roots, args.specs
offsets, columns, roots, _, _ = kronecker_csr(scale, n_roots)
searchers = [searcher_for(spec, offsets, columns, roots[0]) for spec in specs]
times = np.zeros((len(specs), len(roots)))
nedge = np.zeros(len(roots), np.int64)
for r, root in enumerate(roots):
    for v, searcher in enumerate(searchers):
        times[v, r] = np.median(time_searches(searcher, root, REPEATS))
    nedge[r] = searchers[0].nedge()
for spec, t in zip(specs, times):
    print(f"{spec:>28}: mean {t.mean():.4f} ms, median {np.median(t):.4f} ms, "
          f"mean / first {t.mean() / times[0].mean():.4f}")
graph = f"kron-s{scale}-e16"
pairs = [per_root_frame(graph, specs[0], spec, roots, times[0] / 1e3, t / 1e3, nedge)
         for spec, t in zip(specs[1:], times[1:])]
for frame in pairs:
    st = speedup_stats(frame["speedup B/A"])
    print(f"{frame['B'].iloc[0]:>28}: speedup over {specs[0]} {st['speedup']:.4f} "
          f"(95% CI {st['low']:.4f}-{st['high']:.4f}), Wilcoxon p {st['p']:.2g}, faster on "
          f"{st['faster_roots']}/{st['roots']} roots: {st['verdict']}")
if args.out and pairs:
    import pandas as pd
    summary = pd.DataFrame([summary_row(frame) for frame in pairs])
    for path in write_outputs(summary, pd.concat(pairs, ignore_index=True), args.out, True,
                              {"scale": scale, "roots": n_roots, "variants": specs,
                               "repeats": REPEATS}):
        print(path)
