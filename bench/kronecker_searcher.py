"""Shared by the GPU probes in bench/ (profile_search_kernels.py, profile_roots.py,
idle_slowdown.py): Graph500's Kronecker graph built on the GPU, its first Graph500 roots as
`bfs bench` picks them, and a warmed-up searcher given as ALGORITHM[@options]."""
import importlib

import cupy as cp

from bfs.algorithms import ALGORITHMS, kernel1_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.harness.bench import parse_algorithm
from bfs.harness.roots import graph500_roots


def kronecker_searcher(scale: int, spec: str, n_roots: int, keep_edges: bool = False):
    """(searcher, roots, host degrees, device (src, dst) or None). The searcher has run once
    from the first root (compilation, first touch)."""
    name, options = parse_algorithm(spec)
    module = importlib.import_module(ALGORITHMS[name].modules["gpu"])
    n = 2 ** scale
    src, dst = edge_list_gpu(scale)
    offsets, columns = kernel1_gpu.build_csr_gpu(src, dst, n)
    edges = (src, dst) if keep_edges else None
    del src, dst
    degree = cp.diff(offsets).get()
    roots = graph500_roots(n, degree > 0, count=n_roots, seeds=(2, 3))
    searcher = module.from_csr(offsets, columns, **options)
    searcher.search(int(roots[0]))
    return searcher, roots, degree, edges
