"""Experiment (device): merrill top-down at scale 25 on the Graph500 ids and on degree-ordered
ids (hubs first; search time only, parents not mapped back). python3 bench/probes/exp_relabel.py 25"""
import sys
import numpy as np
import cupy as cp
from bfs.build import csr_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.harness.roots import graph500_roots
from bfs.algorithms import merrill

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 25
n, m = 2 ** scale, 16 * 2 ** scale
src, dst = edge_list_gpu(scale)
off, col = csr_gpu.build_csr_gpu(src, dst, n)
deg = cp.diff(off)
roots = graph500_roots(n, deg.get() > 0, count=16, seeds=(2, 3))
# degree relabel: rank[v] = position of v in degree-descending order
order = cp.argsort(-deg, kind="stable") if False else cp.argsort(-deg)
rank = cp.empty(n, cp.uint32); rank[order] = cp.arange(n, dtype=cp.uint32)
src2 = rank[src]; dst2 = rank[dst]
del src, dst
off2, col2 = csr_gpu.build_csr_gpu(src2, dst2, n)
del src2, dst2
cp.get_default_memory_pool().free_all_blocks()
rank_h = rank.get()

def run(off, col, expand, roots, label):
    s = merrill.from_csr(off, col, expand=expand)
    s.search(int(roots[0]))
    ts = []
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    for r in roots:
        e0.record(); s.search(int(r)); e1.record(); e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    ne = s.nedge()
    prof = []
    s.profile_levels = prof
    s.search(int(roots[0]))
    lv = " ".join(f"{p['depth']}:{p['kind'][:3]}:{p['frontier_edges']/1e6:.0f}M:{p['ms']:.2f}" for p in prof)
    print(f"{label:28s} median {np.median(ts):7.3f} ms  GTEPS~{ne/np.median(ts)/1e6:7.1f}  {lv}", flush=True)
    del s

for expand in ("tiles",):
    run(off, col, expand, roots, f"orig {expand}")
    run(off2, col2, expand, rank_h[roots], f"relabel {expand}")
