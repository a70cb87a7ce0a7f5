"""The algorithm registry: every BFS the tool can run, by the name users pass to --algorithm.

Each algorithm lives in its own module under bfs/algorithms/ and provides

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
from typing import Protocol

import numpy as np

from ..graphdir import BfsError


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    module: str
    summary: str
    backends: tuple[str, ...] = ("cpu",)
    distributed: bool = False  # True: input is a partition directory, one MPI rank per block

    def load(self):
        return importlib.import_module(self.module)


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
class SearchResult:
    parent: np.ndarray  # int64, -1 = unreached, parent[root] == root
    level: np.ndarray   # int32, -1 = unreached, level[root] == 0


class Searcher(Protocol):
    def search(self, root: int) -> SearchResult: ...


ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in [
        AlgorithmSpec("seq-list", "bfs.algorithms.seq_list",
                      "Graph500 reference seq-list: queue BFS over head/next edge lists"),
        AlgorithmSpec("seq-csr", "bfs.algorithms.seq_csr",
                      "level-synchronous queue BFS over the undirected CSR"),
        AlgorithmSpec("2d", "bfs.algorithms.fu_2d",
                      "Fu et al. 2D bitmap BFS over an RxC grid (--exchange scan|wave)",
                      backends=("cpu", "gpu"), distributed=True),
        AlgorithmSpec("1d", "bfs.algorithms.racherla_1d",
                      "Racherla 1D BFS: Allgatherv frontiers, small frontiers on rank 0",
                      distributed=True),
        AlgorithmSpec("merrill", "bfs.algorithms.merrill",
                      "Merrill-Garland-Grimshaw GPU BFS: scan-allocated expand-contract, "
                      "bitmask + warp culling, single-CTA small frontiers",
                      backends=("gpu",)),
        AlgorithmSpec("merrill-do", "bfs.algorithms.merrill_do",
                      "direction-optimizing merrill (Beamer et al. 2012): bottom-up levels "
                      "over a frontier bitmap when the frontier holds many edges",
                      backends=("gpu",)),
    ]
}


def get_algorithm(name: str) -> AlgorithmSpec:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise BfsError(f"unknown algorithm {name!r}; choose one of: "
                       + ", ".join(sorted(ALGORITHMS))) from None
