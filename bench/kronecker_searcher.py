"""Shared by the GPU probes in bench/ (profile_search_kernels.py, profile_roots.py,
idle_slowdown.py, ab_roots.py): Graph500's Kronecker graph built on the GPU, its first
Graph500 roots as `bfs bench` picks them, a warmed-up searcher given as ALGORITHM[@options],
and searches timed with CUDA events."""
import importlib

import cupy as cp

from bfs.algorithms import ALGORITHMS, kernel1_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.algorithms.options import parse_algorithm
from bfs.harness.roots import graph500_roots


def kronecker_csr(scale: int, n_roots: int, keep_edges: bool = False):
    """(device offsets, device columns, roots, host degrees, device (src, dst) or None)."""
    n = 2 ** scale
    src, dst = edge_list_gpu(scale)
    offsets, columns = kernel1_gpu.build_csr_gpu(src, dst, n)
    edges = (src, dst) if keep_edges else None
    del src, dst
    degree = cp.diff(offsets).get()
    roots = graph500_roots(n, degree > 0, count=n_roots, seeds=(2, 3))
    return offsets, columns, roots, degree, edges


def searcher_for(spec: str, offsets, columns, first_root: int):
    """ALGORITHM[@options]'s GPU searcher on a CSR, run once from first_root (compilation,
    first touch)."""
    name, options = parse_algorithm(spec)
    module = importlib.import_module(ALGORITHMS[name].modules["gpu"])
    searcher = module.from_csr(offsets, columns, **options)
    searcher.search(int(first_root))
    return searcher


def kronecker_searcher(scale: int, spec: str, n_roots: int, keep_edges: bool = False):
    """(searcher, roots, host degrees, device (src, dst) or None). The searcher has run once
    from the first root."""
    offsets, columns, roots, degree, edges = kronecker_csr(scale, n_roots, keep_edges)
    return searcher_for(spec, offsets, columns, roots[0]), roots, degree, edges


def time_searches(searcher, root: int, repeats: int) -> list[float]:
    """Milliseconds of `repeats` searches from root, CUDA events around each."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        searcher.search(int(root))
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return times
