"""One GPU search inside a CUDA profiler range, for Nsight Compute's per-kernel counters.

    ncu --profile-from-start off --clock-control none --csv --metrics gpu__time_duration.sum,\
dram__bytes_read.sum,dram__bytes_write.sum python3 bench/profile_search_kernels.py 26 merrill-do

Arguments: SCALE ALGORITHM[@options] [ROOT_INDEX]. The graph is Graph500's Kronecker graph
built on the GPU; two untimed searches warm the searcher up, then the search from the
Graph500 root number ROOT_INDEX (default 0) runs between cudaProfilerStart and Stop, so ncu
sees that search's kernels only, in launch order."""
import importlib
import sys

import cupy as cp

from bfs.algorithms import ALGORITHMS, kernel1_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.harness.bench import parse_algorithm
from bfs.harness.roots import graph500_roots

scale, spec = int(sys.argv[1]), sys.argv[2]
root_index = int(sys.argv[3]) if len(sys.argv) > 3 else 0
name, options = parse_algorithm(spec)
module = importlib.import_module(ALGORITHMS[name].modules["gpu"])
n = 2 ** scale
src, dst = edge_list_gpu(scale)
offsets, columns = kernel1_gpu.build_csr_gpu(src, dst, n)
del src, dst
roots = graph500_roots(n, cp.diff(offsets).get() > 0, count=root_index + 1, seeds=(2, 3))
searcher = module.from_csr(offsets, columns, **options)
for r in roots[:2]:
    searcher.search(int(r))
root = int(roots[root_index])
cp.cuda.runtime.deviceSynchronize()
cp.cuda.runtime.profilerStart()
searcher.search(root)
cp.cuda.runtime.deviceSynchronize()
cp.cuda.runtime.profilerStop()
print(f"{spec} scale {scale} root {root}: {searcher.levels_run} levels, "
      f"directions {getattr(searcher, 'directions', None)}, launches {searcher.launches}")
