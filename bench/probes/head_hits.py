"""Where bottom-up levels find their parents, simulated on the CPU (what merrill-do's head copy
rests on).

    python3 bench/probes/head_hits.py SCALE [ROOTS]      # e.g. 21 8: ~3.5 min, ~6 GB

Graph500's Kronecker graph, rows sorted hubs first (merrill-do's rows=degree), Graph500 roots.
At every level that merrill-do's default switch (alpha = 40) would run bottom-up, each open
vertex (non-isolated, not reached) looks through its row for a neighbour in the frontier; per
level this prints how many are found, the share of those whose parent is the row's first entry
(position 0) or among the first four, and how many neighbours a head-of-4-then-8-a-step scan
loads (the one-step kernel before head=1). Averages over the roots."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bfs.build.csr_cpu import build_csr            # noqa: E402
from bfs.graphs.kronecker import generate_edges         # noqa: E402
from bfs.harness.roots import graph500_roots            # noqa: E402

ALPHA = 40.0
scale = int(sys.argv[1])
n_roots = int(sys.argv[2]) if len(sys.argv) > 2 else 8
n = 1 << scale
csr = build_csr(*generate_edges(scale), n)
off, col = csr.offsets, csr.columns.astype(np.int64)
deg = np.diff(off)
rank = np.empty(n, np.int64)
rank[np.lexsort((np.arange(n), -deg))] = np.arange(n)
row = np.repeat(np.arange(n), deg)
col = col[np.lexsort((rank[col], row))]                  # each row hubs first
pos = np.arange(col.size) - off[row]
NONE = np.iinfo(np.int64).max
totals: dict[int, np.ndarray] = {}
for root in graph500_roots(n, deg > 0, n_roots):
    level = np.full(n, -1)
    level[root] = 0
    frontier, depth, visited_edges = np.array([root]), 0, deg[root]
    while frontier.size:
        if deg[frontier].sum() > (col.size - visited_edges) / ALPHA:
            in_front = level == depth
            open_v = (level < 0) & (deg > 0)
            hit = in_front[col] & open_v[row]
            first = np.full(n, NONE)
            np.minimum.at(first, row[hit], pos[hit])
            found = open_v & (first < NONE)
            loaded = np.where(found, np.where(first < 4, np.minimum(deg, 4),
                                              np.minimum(deg, 4 + ((first - 4) // 8 + 1) * 8)),
                              deg)
            totals.setdefault(depth, np.zeros(5))[:] += [
                open_v.sum(), found.sum(), (found & (first == 0)).sum(),
                (found & (first < 4)).sum(), loaded[open_v].sum()]
        reached = np.unique(col[np.isin(row, frontier)])
        reached = reached[level[reached] < 0]
        level[reached] = depth + 1
        visited_edges += deg[reached].sum()
        frontier, depth = reached, depth + 1
for depth, (n_open, n_found, at0, below4, loaded) in sorted(totals.items()):
    share = (lambda x: x / n_found) if n_found else (lambda x: float("nan"))
    print(f"depth {depth}: open {n_open / n_roots:.0f} found {n_found / n_roots:.0f} "
          f"parent at position 0: {share(at0):.2f}, in the first 4: {share(below4):.2f}, "
          f"neighbours loaded {loaded / n_roots:.0f}")
