"""Shared by bench/ab_roots.py and the GPU probes in bench/probes/ (profile_search_kernels.py,
profile_roots.py, idle_slowdown.py, loop_level_clock.py, halo_rounds.py): Graph500's Kronecker
graph built on the GPU, its first Graph500 roots as `bfs bench` picks them, a warmed-up
searcher given as ALGORITHM[@options] (built by the registry's build(), as the harness builds
it; ab_roots.py's searchers share one CSR through from_csr), and searches timed with CUDA
events, or by the host's clock after an untimed search from the same root (wall_times)."""
import importlib
import time

import cupy as cp

from bfs.algorithms import ALGORITHMS
from bfs.build import csr_gpu
from bfs.graphs.kronecker_gpu import edge_list_gpu
from bfs.algorithms.options import parse_algorithm
from bfs.harness.roots import graph500_roots


def kronecker_csr(scale: int, n_roots: int, keep_edges: bool = False):
    """(device offsets, device columns, roots, host degrees, device (src, dst) or None)."""
    n = 2 ** scale
    src, dst = edge_list_gpu(scale)
    offsets, columns = csr_gpu.build_csr_gpu(src, dst, n)
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
    """(searcher, roots, host degrees, device (src, dst) or None), built as `bfs run
    --generate kronecker:scale=S` builds it: the edge list generated on the GPU, then the
    algorithm's own build() (Kernel 1 included). The searcher has run once from the first
    root."""
    from bfs.algorithms import EdgeList, RunContext
    from bfs.graphs.device_edges import nonloop_degrees_device
    from bfs.harness.generated import GeneratedKronecker
    graph = GeneratedKronecker(scale)
    src, dst = graph.device_edges()
    degree = nonloop_degrees_device(src, dst, graph.n_vertices)
    roots = graph500_roots(graph.n_vertices, degree > 0, count=n_roots, seeds=graph.seeds)
    name, options = parse_algorithm(spec)
    searcher = ALGORITHMS[name].load("gpu").build(EdgeList(src, dst, graph.n_vertices),
                                                  RunContext("gpu", options))
    searcher.search(int(roots[0]))
    return searcher, roots, degree, (src, dst) if keep_edges else None


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


def wall_times(searcher, roots) -> list[float]:
    """Seconds of one search from each root by the host's clock, the device synchronized
    around it, after an untimed search from the same root (as bench times a search): what a
    search driven by the host across several GPUs can be timed by too."""
    times = []
    for root in roots:
        searcher.search(int(root))
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        searcher.search(int(root))
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t)
    return times
