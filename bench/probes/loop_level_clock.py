"""Where a level of the one-GPU level loop goes (merrill and merrill-do on a road-like lattice):
block 0's thread 0 stamps its SM's cycle counter at seven points of every level
(level_loop.cu's LOOP_CLOCK_WORDS), medians over a search's levels of more than LOOP_SPLIT_Q
vertices. Run on a GPU machine:

    PYTHONPATH=. python3 bench/probes/loop_level_clock.py 2000 merrill-do

Per level: entry (level start -> thread 0's frontier entry in registers), columns (-> its
first column), claims (-> its claims, the found rows' offsets and its warp's queue slots),
walk (-> the block's walk done, after its CTA barrier), arrive (-> the block's arrival back),
wait (-> every block arrived), and the whole level; in cycles and in microseconds at the SM
clock. First the search's median wall time with the clock off, the same process. Its answers
are in bench/results/HISTORY.md ("A lane's claims issued together")."""
import sys
from pathlib import Path

import cupy as cp
import numpy as np

from bfs.algorithms import EdgeList, RunContext, get_algorithm
from bfs.algorithms import merrill as m
from bfs.graphs.lattice import lattice_edges

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/'s shared harness
from kronecker_searcher import wall_times  # noqa: E402

side = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
name = sys.argv[2] if len(sys.argv) > 2 else "merrill-do"
src, dst, n = lattice_edges(side, side)
s = get_algorithm(name).load("gpu").build(EdgeList(src, dst, n), RunContext("gpu", {}))
roots = [n // 2 + side // 2, 0, n - 1, side * 7 + 11]
mhz = cp.cuda.runtime.deviceGetAttribute(cp.cuda.runtime.cudaDevAttrClockRate, 0) / 1e3
walls = wall_times(s, roots)
print(f"{name}, lattice {side}x{side}: search {np.median(walls) * 1e3:.3f} ms median wall "
      f"(clock off), {s.levels_run} levels in the last, SM clock {mhz:.0f} MHz")
s.loop_clock = cp.zeros(m.LOOP_CLOCK_WORDS * m.LOOP_CLOCK_LEVELS, dtype=cp.uint64)
names = ["entry", "columns", "claims", "walk", "arrive", "wait"]
for root in roots:
    s.loop_clock[:] = 0
    s.search(root)
    c = s.loop_clock.get().reshape(-1, m.LOOP_CLOCK_WORDS).astype(np.int64)
    used = (c[:, 0] > 0) & (c[:, 7] > m.LOOP_SPLIT_Q) & (c[:, 1:7] > 0).all(axis=1)
    c = c[used]
    level = np.diff(c[:, 0])
    steps = {k: np.median(c[:, i + 1] - c[:, i]) for i, k in enumerate(names)}
    steps["level"] = np.median(level) if level.size else float("nan")
    print(f"root {root}: {used.sum()} levels, frontier median {int(np.median(c[:, 7]))}: "
          + " ".join(f"{k}={v:.0f}c/{v / mhz:.2f}us" for k, v in steps.items()))
