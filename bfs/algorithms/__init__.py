"""The algorithm registry: every BFS the tool can run, by the name users pass to --algorithm.

Each algorithm lives in its own module under bfs/algorithms/, one module per backend where the
backends differ (fu_2d for the CPU, fu_2d_gpu for the GPU; the registry picks, so no CPU module
imports its GPU twin). A module provides

    build(graph: EdgeList, ctx: RunContext) -> Searcher      # Kernel 1, timed as construction_time
    Searcher.search(root) -> SearchResult                    # Kernel 2, timed per search
    warm_up(ctx: RunContext) -> None                         # optional, untimed: JIT / CUDA
                                                             # compilation before Kernel 1

`search` returns only when its result is complete (a GPU searcher synchronizes its stream, a
distributed one has every rank's part), so the harness can time it with a host clock. Modules are
imported only when chosen, so a CPU run never imports CuPy or MPI.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import BfsError


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    modules: dict[str, str]    # backend -> module implementing it
    summary: str
    distributed: bool = False  # True: input is a partition directory, one MPI rank per block
    partition: str = "2d"      # a distributed one's partition kind (bfs partition --grid / --1d)
    host_graph: bool = False   # a GPU algorithm whose graph stays in host memory (out-of-core):
                               # `bfs run` keeps the edge list on the host and validates there

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(self.modules)

    def load(self, backend: str = "cpu"):
        try:
            return importlib.import_module(self.modules[backend])
        except KeyError:
            raise BfsError(f"algorithm {self.name!r} has no {backend} backend; it runs on: "
                           + ", ".join(self.backends)) from None


@dataclass
class EdgeList:
    src: np.ndarray
    dst: np.ndarray
    n_vertices: int


@dataclass
class RunContext:
    backend: str = "cpu"
    options: dict = field(default_factory=dict)


@dataclass
class Block:
    """What a distributed algorithm's build() gets: its rank's block and the layout (the
    partition manifest's grid and bounds)."""
    comm: object
    manifest: dict
    src: np.ndarray
    dst: np.ndarray


@dataclass
class SearchResult:
    parent: np.ndarray  # int64, -1 = unreached, parent[root] == root
    level: np.ndarray   # int32, -1 = unreached, level[root] == 0


from .searcher import Searcher  # noqa: E402,F401  (re-exported; it needs SearchResult)


ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in [
        AlgorithmSpec("seq-list", {"cpu": "bfs.algorithms.seq_list"},
                      "Graph500 reference seq-list: queue BFS over head/next edge lists"),
        AlgorithmSpec("seq-csr", {"cpu": "bfs.algorithms.seq_csr"},
                      "level-synchronous queue BFS over the undirected CSR"),
        AlgorithmSpec("2d", {"cpu": "bfs.algorithms.fu_2d",
                             "gpu": "bfs.algorithms.fu_2d_gpu"},
                      "Fu et al. 2D bitmap BFS over an RxC grid (--exchange scan|wave)",
                      distributed=True),
        AlgorithmSpec("2d-do", {"cpu": "bfs.algorithms.fu_2d_do",
                                "gpu": "bfs.algorithms.fu_2d_do_gpu"},
                      "direction-optimizing 2d (Beamer et al. 2013): bottom-up levels over the "
                      "block CSC when the frontier holds many edges (--alpha, --beta)",
                      distributed=True),
        AlgorithmSpec("1d", {"cpu": "bfs.algorithms.racherla_1d",
                             "gpu": "bfs.algorithms.racherla_1d_gpu"},
                      "Racherla 1D BFS: discoveries all-gathered (CPU: pairs, small frontiers "
                      "on rank 0; GPU: Out bitmaps, lists for small frontiers)",
                      distributed=True, partition="1d"),
        AlgorithmSpec("semiring", {"cpu": "bfs.algorithms.semiring",
                                   "gpu": "bfs.algorithms.semiring_gpu"},
                      "CombBLAS BFS of the SEI report: y = A^T x over (select2nd, min) on the "
                      "2D grid; each parent is the smallest-id neighbour one level up",
                      distributed=True),
        AlgorithmSpec("merrill", {"gpu": "bfs.algorithms.merrill"},
                      "Merrill-Garland-Grimshaw GPU BFS: scan-allocated expand-contract, "
                      "bitmask + warp culling, single-CTA small frontiers"),
        AlgorithmSpec("merrill-do", {"gpu": "bfs.algorithms.merrill_do"},
                      "direction-optimizing merrill (Beamer et al. 2012): bottom-up levels "
                      "over a frontier bitmap when the frontier holds many edges"),
        AlgorithmSpec("cupy-baseline", {"gpu": "bfs.algorithms.cupy_baseline"},
                      "plain level-synchronous BFS in CuPy array operations (searchsorted "
                      "expansion, gather, unique): bench's baseline"),
        AlgorithmSpec("gpu-quadratic", {"gpu": "bfs.algorithms.gpu_quadratic"},
                      "Harish-Narayanan GPU BFS (the SEI report's baseline): a thread per vertex "
                      "every level, frontier / next / visited flags"),
        AlgorithmSpec("hybrid", {"gpu": "bfs.algorithms.hybrid"},
                      "Munguia-Bader-Ayguade task-based hybrid BFS: T vertex-range tasks per "
                      "level on CPU threads or the GPU (--mode workload|fixed, --tasks, "
                      "--lambda, --gpu-share)"),
        AlgorithmSpec("gpu-out-of-core", {"gpu": "bfs.algorithms.gpu_out_of_core"},
                      "the SEI report's out-of-core GPU BFS: the CSR in pinned host memory, "
                      "streamed per level in edge blocks (--device-memory-limit), "
                      "double-buffered copies", host_graph=True),
    ]
}


def get_algorithm(name: str) -> AlgorithmSpec:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise BfsError(f"unknown algorithm {name!r}; choose one of: "
                       + ", ".join(sorted(ALGORITHMS))) from None
