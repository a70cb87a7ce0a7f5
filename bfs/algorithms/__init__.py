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

Each entry declares its options (bfs.algorithms.options.Option): the ctx.options keys its
modules read. `bfs run`'s flags, NAME@KEY=VALUE variants, the workflow's run ids and the config
schema's option keys are all derived from these declarations, so a new algorithm touches its
module(s) and its entry here, nothing else. BFS_EXTRA_ALGORITHMS=module[,module] adds the
entries of modules outside the package (each module's ALGORITHMS, a list of AlgorithmSpec).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import BfsError
from .options import (Option, auto_or_nonnegative_int, byte_count, extra_registry_modules,
                      integral, nonnegative_float, nonnegative_int, positive_float,
                      positive_int, unit_float)


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    modules: dict[str, str]    # backend -> module implementing it
    summary: str
    distributed: bool = False  # True: input is a partition directory, one MPI rank per block
    partition: str = "2d"      # a distributed one's partition kind (bfs partition --grid / --1d)
    host_graph: bool = False   # a GPU algorithm whose graph stays in host memory (out-of-core):
                               # `bfs run` keeps the edge list on the host and validates there
    options: tuple[Option, ...] = ()   # the ctx.options its modules read

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
    src: np.ndarray | None      # None: streamed, in device_edges only
    dst: np.ndarray | None
    n_vertices: int
    device_edges: object = None  # a one-GPU session's bfs.graphs.device_edges.DeviceEdges
    host_edges: object = None    # a one-process host session's bfs.graphs.edge_chunks.EdgeChunks

    def host_chunks(self):
        """chunks() of the edge list on the host: the session's (streamed, perhaps), or the
        two arrays as one chunk."""
        if self.host_edges is not None:
            return self.host_edges.chunks
        return lambda: iter([(self.src, self.dst)])


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
    src: np.ndarray | None     # None: the block routed again a chunk at a time (GPU grids)
    dst: np.ndarray | None
    chunks: object = None      # then: chunks() yields its (src, dst) chunks, a pass a call
                               # (collective where routed: bfs.build.routing.RoutedBlock)

    def entries(self, convert):
        """entries(): the block's entries as convert(src, dst) gives them (local ids, say),
        the same at each call: the whole block converted once, here, and kept (until the
        callable is dropped); or, streamed, each chunk converted as its pass brings it."""
        if self.src is None:
            return lambda: (convert(src, dst) for src, dst in self.chunks())
        whole = [convert(self.src, self.dst)]
        return lambda: whole


@dataclass
class SearchResult:
    parent: np.ndarray  # int64, -1 = unreached, parent[root] == root
    level: np.ndarray   # int32, -1 = unreached, level[root] == 0


from .searcher import Searcher  # noqa: E402,F401  (re-exported; it needs SearchResult)


# --- options several algorithms share (declared once: one flag, one config key) ----------

COMM = Option(
    "comm", "per-level exchanges on device buffers through NCCL (the GPU default) or through "
    "MPI, device buffers staged on the host (the CPU backend's only choice)",
    choices=("nccl", "mpi"), default={"cpu": "mpi", "gpu": "nccl"}, flag=True,
    # run ids name it only where it is not the backend's default (2d/gpu-1x2-scan-mpi); a GPU
    # run's command names it always, a CPU run's never (MPI is its only exchange)
    sweep=True, id_omits_default=True, fixed_on=("cpu",), between_ranks=True)
EXCHANGE = Option(
    "exchange", "contraction scheme, log p pairwise scan (Fu) or p-step wave (Checconi)",
    choices=("scan", "wave"), default="scan", flag=True, sweep=True, id_always=True,
    between_ranks=True)
ALPHA = Option(
    "alpha", "go bottom-up when the frontier's edges exceed the unreached vertices' edges / "
    "ALPHA (default 15 on the CPU, 40 on the GPU)", parse=positive_float, flag=True)
BETA = Option(
    "beta", "back to top-down when the frontier shrinks below vertices / BETA (default 18 on "
    "the CPU, inf on the GPU: never back)", parse=positive_float, flag=True)
FLOOR = Option(
    "floor", "go bottom-up only from a frontier of at least vertices * FLOOR edges (default 0 "
    "on the CPU, GAPBS's rule; 1/64 on the GPU: below it a top-down level is the cheaper)",
    parse=nonnegative_float)
ROWS = Option("rows", "(GPU) the bottom-up rows' neighbours by falling degree (degree, a copy "
              "of the columns), as given (graph), or degree where the copy fits (auto, the "
              "default)", choices=("auto", "degree", "graph"))
ENGINE = Option("engine", "(GPU) a grid of one rank runs the single-GPU engine (1, the "
                "default) or the grid's level loop (0: bench's per-block path)",
                parse=int, choices=(0, 1))
AHEAD = Option("ahead", "(GPU) bottom-up levels enqueued past a host decision, each run or "
               "skipped on the device, one control read a chain (0-64; default 8 for merrill-do, "
               "4 for 2d-do, whose skipped levels still exchange)", parse=nonnegative_int)
TD_AHEAD = Option("td_ahead", "(GPU, 2d-do) top-down levels enqueued past a host decision, "
                  "each sized, run or skipped on the device (0-64; default 1: a Kronecker "
                  "search's two; 0: one host read a top-down level)", parse=nonnegative_int)
GRAPHS = Option("graphs", "(GPU, 2d-do) each chain of levels captured once as a CUDA graph "
                "and replayed, one host launch a chain (1, the default, where the exchanges are "
                "NCCL), or its kernels and exchanges launched one by one (0: every level step "
                "timed apart)", parse=int, choices=(0, 1))
SUBSTEPS = Option("substeps", "(2d-do) bottom-up levels in R sub-steps down the grid "
                  "column, each rank passing the vertices still unfound to the next (1, the "
                  "default: Beamer et al. 2013's 2D bottom-up), or every rank searching its "
                  "whole block at once (0)", parse=int, choices=(0, 1))
LOOP = Option("loop", "(GPU) small-frontier levels in one launch: on the whole grid, meeting "
              "at a grid barrier each level (grid, the default), or on one CTA (cta, "
              "Merrill's single-CTA kernel, kept to measure against)", choices=("grid", "cta"))
LOOP_BLOCKS = Option("loop_blocks", "(GPU) blocks of the grid's level loop (0, the default: "
                     "one an SM; 2d-do: of its loop across a grid row's GPUs)",
                     parse=nonnegative_int)
LOOP_SPREAD = Option("loop_spread", "(GPU) how the level loop hands a frontier smaller than its "
                     "grid to the blocks: one entry a block in turn, on every SM (1, the "
                     "default), or 256 entries a block, on the fewest SMs (0)", parse=int,
                     choices=(0, 1))
LOOP_EDGES = Option("loop_edges", "(GPU) the level loop runs while a frontier has at most "
                    "this many edges (default 2^20, the most)", parse=positive_int)
PEER = Option("peer", "(GPU, 2d-do on a grid of one row) small-frontier levels in one kernel "
              "a rank, each rank pushing its finds into the others' memory over NVLink (CUDA "
              "IPC), and each level's frontier bitmap written into every rank's In there "
              "(its nonzero words) in place of the all-gather: where every rank has a GPU of "
              "its own on one host (auto, the default), wherever the ranks share a host (on: "
              "ranks sharing a GPU too, the tests), or never (off: the host's chains and "
              "all-gathers over --comm)", choices=("auto", "on", "off"))
ADJACENCY = Option("adjacency", "(2d-do) a block's structures: its CSR and CSC "
                   "(both, the default), or the CSC alone (csc: top-down levels push through "
                   "it, half the edge bytes: the largest scales)", choices=("both", "csc"),
                   flag=True,   # no default given: the module keeps both
                   # run ids name csc alone (2d-do/gpu-1x4-scan-csc); one rank runs the
                   # one-GPU engine whatever the blocks hold
                   sweep=True, id_omits_default=True, between_ranks=True)
HUB_DEGREE = Option("hub_degree", "(GPU, 2d-do adjacency=csc) rows of at least this global "
                    "degree get their parents from the push, not from a walk of their "
                    "in-edges (auto, the default: a power of two >= 256 leaving at most 2^18 "
                    "such rows; 0: none)", parse=auto_or_nonnegative_int)
SMALL_PUSH = Option("small_push", "(GPU, 2d-do adjacency=csc) a top-down level of at most "
                    "this many frontier edges sends (row, parent) pairs, not the row bitmaps, "
                    "and walks no in-edges (auto, the default: 2^18 where the row range's "
                    "bitmap is 16 MiB or more; 0: never)", parse=auto_or_nonnegative_int)
FOLD = Option("fold", "(GPU) a bottom-up level whose frontier is small checks a 1 MiB fold of "
              "its bitmap (the OR of the bits congruent mod 2^23) before the bitmap: auto (the "
              "default: bitmaps of 16 MiB or more, which L2 does not hold), 1, or 0 (never)",
              parse=auto_or_nonnegative_int)
EXPAND = Option("expand", "the multi-block level kernel (merrill.EXPAND_VARIANTS; tiles, the "
                "default, unless measuring)")

# hybrid's setting: a run a sweep chose names all of it (t16-l1000, fixed-t16-s0.5), so that
# no default hides in its id
HYBRID_SETTING = ("tasks", "mode", "lambda", "gpu_share")
HYBRID_OPTIONS = (
    Option("tasks", "contiguous vertex-range tasks", parse=positive_int, default=16,
           metavar="T", flag=True, sweep=True, id_prefix="t", id_text=integral,
           id_pattern="[0-9]+", together=HYBRID_SETTING),
    Option("mode", "per-level task placement by frontier share (workload) or a fixed GPU "
           "share of the tasks (fixed)", choices=("workload", "fixed"), default="workload",
           flag=True, sweep=True, id_omits_default=True, id_rank=0, together=HYBRID_SETTING),
    Option("lambda", "(mode workload) a task's level runs on the GPU when its frontier holds "
           "more than L vertices (0: all GPU, inf: all CPU)", parse=nonnegative_float,
           default=1000.0, dest="lam", metavar="L", flag=True, sweep=True, id_prefix="l",
           id_text=integral, id_pattern="[0-9]+", together=HYBRID_SETTING,
           only_when=("mode", "workload"),
           config_schema={"type": "integer", "minimum": 0}),   # ids name whole numbers
    Option("gpu_share", "(mode fixed) fraction of the tasks the GPU owns", parse=unit_float,
           default=0.5, metavar="S", flag=True, sweep=True, id_prefix="s",
           # repr: the shortest text that reads back as the same float, so the share is exact
           id_text=lambda v: repr(float(v)), id_pattern="[0-9.]+", together=HYBRID_SETTING,
           only_when=("mode", "fixed")),
)

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
                      distributed=True, options=(EXCHANGE, COMM, ENGINE)),
        AlgorithmSpec("2d-do", {"cpu": "bfs.algorithms.fu_2d_do",
                                "gpu": "bfs.algorithms.fu_2d_do_gpu"},
                      "direction-optimizing 2d (Beamer et al. 2013): bottom-up levels over the "
                      "block CSC when the frontier holds many edges (--alpha, --beta)",
                      distributed=True, options=(EXCHANGE, COMM, ALPHA, BETA, FLOOR, ROWS,
                                                 ENGINE, AHEAD, TD_AHEAD, GRAPHS, SUBSTEPS,
                                                 PEER, ADJACENCY, HUB_DEGREE, SMALL_PUSH,
                                                 FOLD, LOOP_BLOCKS, LOOP_SPREAD)),
        AlgorithmSpec("1d", {"cpu": "bfs.algorithms.racherla_1d",
                             "gpu": "bfs.algorithms.racherla_1d_gpu"},
                      "Racherla 1D BFS: discoveries all-gathered (CPU: pairs, small frontiers "
                      "on rank 0; GPU: Out bitmaps, lists for small frontiers)",
                      distributed=True, partition="1d", options=(
                          Option("small_frontier", "levels with fewer frontier vertices run on "
                                 "rank 0 alone", parse=nonnegative_int, default=1000,
                                 metavar="N", flag=True, sweep=True, id_prefix="sf",
                                 id_text=integral, id_pattern="[0-9]+", config_wide=True),
                          COMM)),
        AlgorithmSpec("semiring", {"cpu": "bfs.algorithms.semiring",
                                   "gpu": "bfs.algorithms.semiring_gpu"},
                      "CombBLAS BFS of the SEI report: y = A^T x over (select2nd, min) on the "
                      "2D grid; each parent is the smallest-id neighbour one level up",
                      distributed=True, options=(COMM,)),
        AlgorithmSpec("merrill", {"gpu": "bfs.algorithms.merrill"},
                      "Merrill-Garland-Grimshaw GPU BFS: scan-allocated expand-contract, "
                      "bitmask + warp culling, small frontiers in a grid-wide level loop",
                      options=(EXPAND, Option(
                          "order", "search the CSR as given (graph, the default) or renamed by "
                          "falling degree (degree, expand tiles only)",
                          choices=("graph", "degree")), LOOP, LOOP_BLOCKS, LOOP_SPREAD,
                          LOOP_EDGES)),
        AlgorithmSpec("merrill-do", {"gpu": "bfs.algorithms.merrill_do"},
                      "direction-optimizing merrill (Beamer et al. 2012): bottom-up levels "
                      "over a frontier bitmap when the frontier holds many edges",
                      options=(ALPHA, BETA, FLOOR, ROWS, EXPAND,
                               Option("bu", "the bottom-up kernel's shape KxH[mM] "
                                      "(merrill_do.BOTTOM_UP_VARIANTS; default 1x4m4)"),
                               Option("writes", "bottom-up parent/level writes: dense (the "
                                      "default) or reset", choices=("dense", "reset")),
                               Option("offset_bits", "CSR offsets read as 32 or 64 bits; 0 (the "
                                      "default): 32 below 2^32 directed edges", parse=int,
                                      choices=(0, 32, 64)),
                               AHEAD,
                               Option("head", "1 (the default): each vertex's first neighbour "
                                      "from a vertex-indexed copy; 0: from the CSR", parse=int,
                                      choices=(0, 1)),
                               Option("tail", "1 (the default): the last levels search a list "
                                      "of the vertices still open; 0: the bitmap", parse=int,
                                      choices=(0, 1)), FOLD, LOOP, LOOP_BLOCKS, LOOP_SPREAD,
                               LOOP_EDGES)),
        AlgorithmSpec("cupy-baseline", {"gpu": "bfs.algorithms.cupy_baseline"},
                      "plain level-synchronous BFS in CuPy array operations (searchsorted "
                      "expansion, gather, unique): bench's baseline"),
        AlgorithmSpec("gpu-quadratic", {"gpu": "bfs.algorithms.gpu_quadratic"},
                      "Harish-Narayanan GPU BFS (the SEI report's baseline): a thread per vertex "
                      "every level, frontier / next / visited flags"),
        AlgorithmSpec("hybrid", {"gpu": "bfs.algorithms.hybrid"},
                      "Munguia-Bader-Ayguade task-based hybrid BFS: T vertex-range tasks per "
                      "level on CPU threads or the GPU (--mode workload|fixed, --tasks, "
                      "--lambda, --gpu-share)", options=HYBRID_OPTIONS),
        AlgorithmSpec("gpu-out-of-core", {"gpu": "bfs.algorithms.gpu_out_of_core"},
                      "the SEI report's out-of-core GPU BFS: the CSR in pinned host memory, "
                      "streamed per level in edge blocks (--device-memory-limit), "
                      "double-buffered copies", host_graph=True, options=(
                          Option("device_memory_limit", "GPU memory the search may use (e.g. "
                                 "65536, 512M, 16G; K/M/G/T are powers of 1024): the vertex "
                                 "state plus two edge-block buffers (default: the GPU's free "
                                 "memory less 1/16)", parse=byte_count, metavar="BYTES",
                                 flag=True),
                          Option("max_block_bytes", "cap on an edge-block buffer below what "
                                 "the limit allows (tests: many blocks on a small graph)",
                                 parse=byte_count))),
    ]
}
for _module in extra_registry_modules():
    ALGORITHMS.update((spec.name, spec)
                      for spec in importlib.import_module(_module).ALGORITHMS)


def get_algorithm(name: str) -> AlgorithmSpec:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise BfsError(f"unknown algorithm {name!r}; choose one of: "
                       + ", ".join(sorted(ALGORITHMS))) from None
