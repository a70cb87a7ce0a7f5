"""Why some roots are slow: every Graph500 root timed (median of REPEATS searches, CUDA events),
then the level steps of the slowest and fastest ones (bfs.harness.timing.profile_search).

    python3 bench/probes/profile_roots.py SCALE ALGORITHM[@options] [ROOTS] [REPEATS]

The graph is Graph500's Kronecker graph built on the GPU, roots as `bfs bench` picks them."""
import sys
from pathlib import Path

import numpy as np

from bfs.harness.timing import profile_search
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/'s shared harness
from kronecker_searcher import kronecker_searcher, time_searches

scale, spec = int(sys.argv[1]), sys.argv[2]
n_roots = int(sys.argv[3]) if len(sys.argv) > 3 else 32
repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
searcher, roots, degree, _ = kronecker_searcher(scale, spec, n_roots)
times = []
for root in roots:
    t = time_searches(searcher, root, repeats)
    examined = getattr(searcher, "level_edges_examined", [])
    times.append((float(np.median(t)), min(t), max(t), int(root), list(searcher.directions),
                  examined))
times.sort()
for med, lo, hi, root, dirs, examined in times:
    print(f"root {root:>10} degree {int(degree[root]):>6} median {med:.3f} ms "
          f"[{lo:.3f}, {hi:.3f}] {''.join(d[0] for d in dirs)} read/level (M) "
          + " ".join(f"{x / 1e6:.1f}" for x in examined))
for med, _, _, root, _, _ in times[:2] + times[-4:]:
    print(f"-- root {root}, median {med:.3f} ms")
    profile_search(searcher, root, spec)
