"""Does a search run slower right after the host validated the previous one? (It does: the
reason bench times each search right after an untimed one from the same root.)

    python3 bench/probes/idle_slowdown.py SCALE [ALGORITHM[@options]]

Kronecker graph built on the GPU, 48 Graph500 roots, CUDA events around each search; modes:
back to back; each search after a GPU validation of the previous one; after a validation and
20 ms idle. Prints the median and the searches slower than 1.4 x the median."""
import statistics
import sys
from pathlib import Path
import time

import cupy as cp

from bfs.validate.gpu import validate_device
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/'s shared harness
from kronecker_searcher import kronecker_searcher, time_searches

scale = int(sys.argv[1])
spec = sys.argv[2] if len(sys.argv) > 2 else "merrill-do"
searcher, roots, _, (src, dst) = kronecker_searcher(scale, spec, 48, keep_edges=True)


def run(mode):
    times = []
    for root in roots:
        times.append(time_searches(searcher, root, 1)[0])
        if mode != "back to back":
            res = searcher.device_result()
            validate_device(lambda: [(src, dst)], res.parent, res.level, int(root))
        if mode == "validate, idle":
            cp.cuda.runtime.deviceSynchronize()
            time.sleep(0.02)
    med = statistics.median(times)
    slow = [round(t, 3) for t in times if t > 1.4 * med]
    print(f"{mode:16s} median {med:.3f} ms, slower than 1.4 x median: {slow}", flush=True)


for mode in ("back to back", "validate", "validate, idle", "back to back", "validate"):
    run(mode)
