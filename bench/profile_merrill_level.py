"""One merrill search at scale 25 for Nsight Compute (the middle level is the 2nd expand launch):
ncu --kernel-name regex:expand_tiles --launch-skip 1 --launch-count 1 --section SpeedOfLight \
    --section InstructionStats python3 bench/profile_merrill_level.py"""
import cupy as cp
from bfs.algorithms import kernel1_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.harness.roots import graph500_roots
from bfs.algorithms import merrill
scale = 25
n, m = 2 ** scale, 16 * 2 ** scale
src, dst = edge_list_gpu(scale)
off, col = kernel1_gpu.build_csr_gpu(src, dst, n)
del src, dst
roots = graph500_roots(n, cp.diff(off).get() > 0, count=1, seeds=(2, 3))
s = merrill.from_csr(off, col)
s.search(int(roots[0]))
print("levels", s.levels_run, "launches", s.launches)
