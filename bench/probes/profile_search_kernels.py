"""One GPU search inside a CUDA profiler range, for Nsight Compute's per-kernel counters.

    ncu --profile-from-start off --clock-control none --csv --metrics gpu__time_duration.sum,\
dram__bytes_read.sum,dram__bytes_write.sum python3 bench/probes/profile_search_kernels.py 26 merrill-do

Arguments: SCALE ALGORITHM[@options] [ROOT_INDEX]. The graph is Graph500's Kronecker graph
built on the GPU; two untimed searches warm the searcher up, then the search from the
Graph500 root number ROOT_INDEX (default 0) runs between cudaProfilerStart and Stop, so ncu
sees that search's kernels only, in launch order."""
import sys
from pathlib import Path

import cupy as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/'s shared harness
from kronecker_searcher import kronecker_searcher

scale, spec = int(sys.argv[1]), sys.argv[2]
root_index = int(sys.argv[3]) if len(sys.argv) > 3 else 0
searcher, roots, _, _ = kronecker_searcher(scale, spec, max(2, root_index + 1))
searcher.search(int(roots[1]))
root = int(roots[root_index])
cp.cuda.runtime.deviceSynchronize()
cp.cuda.runtime.profilerStart()
searcher.search(root)
cp.cuda.runtime.deviceSynchronize()
cp.cuda.runtime.profilerStop()
print(f"{spec} scale {scale} root {root}: {searcher.levels_run} levels, "
      f"directions {getattr(searcher, 'directions', None)}, launches {searcher.launches}")
