"""The harness: the one place that builds, times, validates and records a search, behind
`bfs run`, `bfs bench` and `bfs validate`. Kernel 1 once per algorithm, Kernel 2 per root,
searches validated untimed (--validate), Graph500 statistics, and the run directory:

    RUN_DIR/run.json                 parameters, statistics, construction_time, environment, valid
    RUN_DIR/searches.parquet         one row per search (valid null: not validated)
    RUN_DIR/levels.parquet           per search and level: vertices discovered at that level
                                     (and, where counted, edges read and the direction)
    RUN_DIR/parents/root-<r>.parquet columns parent (int64, -1 unreached), level (int32)
    RUN_DIR/graph500.txt             the reference's output block

The directory is written atomically, run.json last: it records every other file (rows, bytes,
sha256; see rundir.py). A search that fails validation marks the run invalid (run.json
"valid": false) and the command exits non-zero.

The input is a graph directory, a partition directory (distributed algorithms, one MPI rank per
block) or a graph generated in place (generated.py). A session holds the graph where the
searches need it (LocalSession: host; GpuSession: one GPU; MpiSession: each rank's block, on
its GPU or in host memory) and is reused by every algorithm `bfs bench` runs over the graph.

Timing (timing.py): CUDA events around each GPU search, after an untimed search from the same
root; a host clock on the CPU; under MPI a barrier first and the maximum over the ranks.
Kernel 1 on a GPU is the second of two builds (the first compiles what the warm-up's tiny graph
cannot; run.json keeps it as kernel1_first_s).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import functools
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__, device
from . import envinfo
from ..algorithms import ALGORITHMS, Block, EdgeList, RunContext, Searcher, get_algorithm
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, atomic_dir, read_edges, read_meta, write_json
from ..integrity import file_records
from .rundir import (GRAPH500_FILE, LEVELS_FILE, LEVELS_SCHEMA, PARENTS_DIR, REMEDY, RUN_JSON,
                     SEARCHES_FILE, SEARCHES_SCHEMA, check_run_file, data_files, read_run_json,
                     read_run_table)
from ..algorithms.kernel1 import nonloop_degrees
from ..comm.exchange import check_comm, default_comm
from .generated import DEFAULT_SEEDS, GeneratedKronecker, parse_generate
from .roots import check_root, graph500_roots
from .stats import examined_per_nedge, graph500_statistics, output_block, summarize
from .timing import Clock, profile_search
from .validation import ValidationPolicy
from ..validate import validate
from ..log import logger


log = logger("bfs")


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU" here
        return False


def select_gpu(local: int) -> int:
    """Make device gpu_index(local, visible devices) current for this process; its index."""
    import cupy
    index = envinfo.gpu_index(local, cupy.cuda.runtime.getDeviceCount())
    cupy.cuda.Device(index).use()
    return index


def resolve_backend(requested: str, spec) -> str:
    if requested == "auto":
        # the first listed backend is the algorithm's default: 2d ("cpu", "gpu") stays on the
        # CPU unless --backend gpu asks for it
        if spec.backends[0] == "gpu" and gpu_available():
            return "gpu"
        if "cpu" in spec.backends:
            return "cpu"
        raise BfsError(f"algorithm {spec.name!r} runs only on the GPU, and no CUDA GPU is "
                       "visible to this process (CuPy found none)")
    if requested not in spec.backends:
        raise BfsError(f"algorithm {spec.name!r} has no {requested} backend "
                       f"(it has: {', '.join(spec.backends)})")
    if requested == "gpu" and not gpu_available():
        raise BfsError("--backend gpu: no CUDA GPU is visible to this process (CuPy found none)")
    return requested


def choose_roots(meta: GraphMeta, degree: np.ndarray, n_roots: int,
                 root: int | None) -> np.ndarray:
    if root is not None:
        check_root(root, meta.n_vertices)
        if degree[root] == 0:
            raise BfsError(f"--root {root}: vertex has no edge other than self-loops; "
                           "a search from it traverses nothing")
        return np.array([root], dtype=np.int64)
    seeds = tuple(meta.seeds) if meta.seeds else DEFAULT_SEEDS
    return graph500_roots(meta.n_vertices, degree > 0, count=n_roots, seeds=seeds)


def graph500_scale(meta: GraphMeta) -> tuple[float, float]:
    """SCALE and edgefactor as printed: exact for Kronecker, log2(n) and m/n for other graphs."""
    if meta.scale is not None:
        return meta.scale, meta.edgefactor
    return math.log2(meta.n_vertices), meta.n_edges / meta.n_vertices


@dataclass
class RunOptions:
    algorithm: str
    backend: str = "auto"
    n_roots: int = 64
    root: int | None = None
    save_parents: int = 1   # one tree for `bfs validate`, as the CLI's default
    force: bool = False
    validate: str = "every"
    profile_levels: bool = False   # GPU searchers that time their level steps (timing.py)
    print_block: bool = True       # the Graph500 output block on stdout (bench: its table)
    grid: tuple[int, int] | None = None   # a generated graph's R x C grid of ranks (default:
                                          # the squarest); a partition directory has its own


# ------------------------------------------------------------------------------- sessions

class LocalSession:
    """One process: the searcher sees the whole edge list, validation reads it too."""
    rank, size, is_root = 0, 1, True
    gpu = False
    ranks = None   # per-rank facts for run.json's environment (MpiSession's)

    def __init__(self, meta: GraphMeta, src, dst, graph_record: dict):
        self.meta, self.src, self.dst = meta, src, dst
        self.graph_record = graph_record
        self.hostnames = envinfo.environment()["hostnames"]
        self.degree = self.degrees()
        self.clock = Clock(self.gpu, self.barrier, self.max)
        self.extra: dict = {}   # what the session measured (the edge list's arrival, ...)

    @classmethod
    def open(cls, source: Path | GeneratedKronecker, backend: str):
        """The session over a graph directory or a generated graph."""
        if isinstance(source, GeneratedKronecker):
            src, dst, seconds = cls._generate(source)
            meta = source.meta(seconds)
            log(f"generated {source.spec}: {meta.n_edges} edges in {seconds:.3f} s "
                f"({meta.n_edges / max(seconds, 1e-9) / 1e6:.1f} M edges/s)")
            return cls(meta, src, dst, source.record(meta))
        meta = read_meta(source)
        log(f"reading {source} ({meta.n_vertices} vertices, {meta.n_edges} edges)")
        src, dst = cls._read(source)
        return cls(meta, src, dst, {"dir": str(Path(source).resolve()), **meta.to_json()})

    @classmethod
    def from_host(cls, meta: GraphMeta, src, dst, graph_record: dict):
        """The session over edges made in host memory (bench's lattices)."""
        return cls(meta, *cls._place(src, dst), graph_record)

    @staticmethod
    def _generate(graph: GeneratedKronecker):
        """(src, dst, seconds) of the whole edge list."""
        t = time.perf_counter()
        src, dst = graph.host_edges()
        return src, dst, time.perf_counter() - t

    @staticmethod
    def _read(graph_dir: Path):
        return read_edges(graph_dir)

    @staticmethod
    def _place(src, dst):
        return src, dst

    def build(self, spec, backend: str, options: dict):
        graph = EdgeList(self.src, self.dst, self.meta.n_vertices)
        return spec.load(backend).build(graph, RunContext(backend, options))

    def degrees(self):
        return nonloop_degrees(self.src, self.dst, self.meta.n_vertices)

    def barrier(self):
        pass

    def collective(self):
        return contextlib.nullcontext()

    def max(self, x: float) -> float:
        return x

    def bcast_roots(self, roots):
        return roots

    def roots(self, opts: RunOptions) -> np.ndarray:
        return choose_roots(self.meta, self.degree, opts.n_roots, opts.root)

    def result(self, searcher, result, keep: bool):
        """The search's parent and level arrays on the host (every search: the per-level
        profile counts the levels)."""
        gathered = searcher.gather(self.meta.n_vertices)
        return gathered if gathered is not None else result

    def validate(self, searcher, result, root, policy):
        return validate(self.src, self.dst, result.parent, root, result.level)

    def count(self, searcher, result, root):
        """(nedge, depth, reached) of a search left unvalidated, from its own levels: nedge is
        half the reached vertices' degree sum (both ends of an edge are reached together)."""
        reached = result.level >= 0
        return (int(self.degree[reached].sum()) // 2, int(result.level.max()),
                int(np.count_nonzero(reached)))

    def profile(self, searcher, result, root, first: bool = False):
        counts = np.bincount(result.level[result.level >= 0])
        # direction-optimizing searchers (merrill-do): each level's direction and edges read
        directions, examined = searcher.directions, searcher.level_edges_examined
        return [{"root": root, "rank": 0, "level": lv, "frontier_size": int(c),
                 "expand_s": math.nan, "comm_s": 0.0, "comm_bytes": 0,
                 "edges_examined": int(examined[lv]) if lv < len(examined) else None,
                 "direction": directions[lv] if lv < len(directions) else None}
                for lv, c in enumerate(counts)]

    def describe(self) -> dict:
        return {"graph": self.graph_record}

    def close(self) -> None:
        pass


@functools.cache
def device_copy_bandwidth() -> float:
    """The device-to-device copy bandwidth (bfs.device.copy_bandwidth), measured once per
    process: every GPU session of a bench uses it."""
    from ..device import copy_bandwidth
    return copy_bandwidth()


class GpuSession(LocalSession):
    """One process on one GPU: the edge list in device memory (from the graph directory's row
    groups through pinned buffers, never whole on the host, or generated there); Kernel 1
    reads it there, and every search is validated on the GPU (bfs.validate.gpu) against it."""
    gpu = True

    def __init__(self, meta, src, dst, graph_record):
        super().__init__(meta, src, dst, graph_record)
        # the bandwidth floor of a search: 4 bytes a directed edge at the copy bandwidth
        self.extra["copy_bandwidth_Bps"] = bw = device_copy_bandwidth()
        self.extra["floor_time_s"] = 4.0 * int(self.degree.sum()) / bw
        log(f"device-to-device copy {bw / 1e12:.3f} TB/s (read + write)")
        self.host_edges = None   # bench --validate cpu: copied on first use

    @staticmethod
    def _generate(graph: GeneratedKronecker):
        graph.device_edges(0, min(graph.n_edges, 1024))   # compiles the generator: untimed
        t = time.perf_counter()
        src, dst = graph.device_edges()
        return src, dst, time.perf_counter() - t

    @staticmethod
    def _place(src, dst):
        from ..graphs.device_edges import to_device_edges
        return to_device_edges(src, dst)

    @staticmethod
    def _read(graph_dir: Path):
        from ..graphs import device_edges
        t = time.perf_counter()
        edges = device_edges.read_edges_to_device(graph_dir)
        t = time.perf_counter() - t
        log(f"edge list on the GPU in {t:.2f} s ({edges[0].size / max(t, 1e-9) / 1e6:.0f} M "
            f"edges/s)")
        return edges

    def degrees(self):
        from ..graphs.device_edges import nonloop_degrees_device
        return nonloop_degrees_device(self.src, self.dst, self.meta.n_vertices)

    def validate(self, searcher, result, root, policy):
        import cupy as cp

        from ..validate.gpu import validate_device
        if policy.on_host:
            if self.host_edges is None:
                self.host_edges = self.src.get(), self.dst.get()
            return validate(*self.host_edges, result.parent, root, result.level)
        if searcher.device_resident:    # no copy back from the host
            res = searcher.device_result()
            return validate_device(lambda: [(self.src, self.dst)], res.parent, res.level, root)
        return validate_device(lambda: [(self.src, self.dst)],
                               cp.asarray(result.parent, dtype=cp.int64),
                               cp.asarray(result.level, dtype=cp.int32), root)

    def describe(self) -> dict:
        return {**super().describe(), "validation": "gpu (bfs.validate.gpu)"}


class HostGraphGpuSession(LocalSession):
    """One process on one GPU for an algorithm that keeps the graph in host memory
    (gpu-out-of-core): the edge list stays on the host, the searcher streams its own CSR to
    the device, and every search is validated on the CPU (bfs.validate), since the edge list
    on the device that bfs.validate.gpu needs would not fit where the algorithm is meant to
    be used."""
    gpu = True

    def describe(self) -> dict:
        return {**super().describe(), "validation": "cpu (bfs.validate): graph kept on the host"}


class MpiSession:
    """One rank of a distributed run: it holds only its own block (read from a partition
    directory, or generated in place and routed: generated.py)."""
    validated_on_gpus = False   # set by validate(): what run.json names
    gathered = True             # set by result(): whether rank 0 holds the last search whole

    def __init__(self, comm, manifest: dict, src, dst, backend: str, gpu_index: int | None,
                 graph_record: dict, partition_record: dict, extra: dict | None = None):
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.is_root = self.rank == 0
        self.manifest, self.src, self.dst = manifest, src, dst
        self.backend, self.gpu = backend, backend == "gpu"
        self.meta = GraphMeta.from_json(manifest["graph"]["graph_json"])
        self.graph_record, self.partition_record = graph_record, partition_record
        self.extra = extra or {}
        self.hostnames = envinfo.hostnames(comm)
        self.ranks = envinfo.rank_infos(comm, {"gpu_index": gpu_index})
        self.clock = Clock(self.gpu, self.barrier, self.max)
        self.has_edge = self._has_edge()
        rows, cols = manifest["grid"]
        if self.is_root:
            log(f"{self.size} ranks, {rows}x{cols} grid, {self.meta.n_vertices} vertices, "
                f"{manifest['n_directed_edges']} directed edges")

    @classmethod
    def open(cls, source: Path | GeneratedKronecker, spec, backend: str,
             grid: tuple[int, int] | None = None):
        """The rank's block of a partition directory, or of a generated graph placed on
        `grid` (default: the squarest grid of the ranks; P x 1 for a 1d algorithm)."""
        from ..comm import mpi
        comm = mpi.world()
        # each rank drives its own GPU: the one SLURM bound it to, or its node-local turn
        gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm))) if backend == "gpu" else None
        if isinstance(source, GeneratedKronecker):
            return cls._generated(comm, source, spec, backend, gpu, grid)
        from ..partition import load_manifest, read_block
        with mpi.collective_errors(comm):
            manifest = load_manifest(source)
            kind = spec.partition
            if manifest["kind"] != kind:
                raise BfsError(f"{source} is a {manifest['kind']} partition; "
                               f"--algorithm {spec.name} needs a {kind} one "
                               f"(bfs partition {'--1d P' if kind == '1d' else '--grid RxC'})")
            rows, cols = manifest["grid"]
            mpi.check_world_size(comm, rows * cols, f"partition {source} ({rows}x{cols} grid)")
        with mpi.collective_errors(comm):
            src, dst = read_block(source, manifest, comm.Get_rank())
        return cls(comm, manifest, src, dst, backend, gpu,
                   {"dir": manifest["graph"]["dir"], **manifest["graph"]["graph_json"]},
                   {"dir": str(Path(source).resolve()), "kind": manifest["kind"],
                    "grid": manifest["grid"]})

    @classmethod
    def _generated(cls, comm, graph: GeneratedKronecker, spec, backend, gpu, grid):
        edges = graph.device_edges if backend == "gpu" else graph.host_edges
        layout, src, dst, placed = cls._place(comm, spec, backend, grid, graph.n_vertices,
                                              graph.n_edges, edges)
        meta = graph.meta(placed["generation_s"])
        if comm.Get_rank() == 0:
            log(f"generated {graph.spec} on {layout.rows}x{layout.cols} in "
                f"{placed['generation_s']:.3f} s")
        return cls._from_blocks(comm, spec, backend, gpu, layout, src, dst, placed, meta,
                                graph.record(meta))

    @classmethod
    def from_host(cls, meta: GraphMeta, src, dst, graph_record: dict, spec, backend: str,
                  grid: tuple[int, int] | None = None):
        """Every rank holding the whole edge list in host memory (bench's lattices and
        graph directories) routes its share of it to the blocks."""
        from ..comm import mpi
        comm = mpi.world()
        gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm))) if backend == "gpu" else None
        if backend == "gpu":
            from ..graphs.device_edges import to_device_edges

            def edges(lo, hi):
                return to_device_edges(src[lo:hi], dst[lo:hi])
        else:
            def edges(lo, hi):
                return src[lo:hi], dst[lo:hi]
        layout, bsrc, bdst, placed = cls._place(comm, spec, backend, grid, meta.n_vertices,
                                                len(src), edges)
        return cls._from_blocks(comm, spec, backend, gpu, layout, bsrc, bdst, placed, meta,
                                graph_record)

    @staticmethod
    def _place(comm, spec, backend, grid, n_vertices: int, n_edges: int, edges):
        """The layout (grid, default the squarest one of the ranks; 1d on P x 1) and this
        rank's block of the edges, each rank routing its share edges(lo, hi)."""
        from ..comm import mpi
        from ..comm.exchange import choose_comm, make_exchange
        from ..partition import GridLayout, squarest_grid
        from . import generated
        p = comm.Get_size()
        rows, cols = grid or squarest_grid(p)
        if spec.partition == "1d":   # 1d runs on the P x 1 grid of the same ranks
            rows, cols = rows * cols, 1
        with mpi.collective_errors(comm):
            mpi.check_world_size(comm, rows * cols, f"a {rows}x{cols} grid")
            layout = GridLayout(n_vertices, rows, cols)
        # generation and routing interleave local work and collectives, so an error is not
        # agreed on: it aborts every rank (run()'s and bench's abort_on_error)
        if backend == "gpu":
            # the world's exchange carries the routing all-to-all (NCCL unless ranks share a
            # GPU, as the searches choose)
            x = make_exchange("mpi" if p == 1 else choose_comm(None, "gpu", comm), comm)
            src, dst, placed = generated.place_gpu(comm, x, layout, n_edges, edges)
            x.free()
        else:
            src, dst, placed = generated.place_cpu(comm, layout, n_edges, edges)
        placed["block_entries_max"] = int(mpi.allreduce_scalar(comm, int(src.size), "MAX",
                                                               np.int64))
        if comm.Get_rank() == 0:
            log(f"routed to the {rows}x{cols} blocks in {placed['route_s']:.3f} s (largest "
                f"block {placed['block_entries_max']} entries)")
        return layout, src, dst, placed

    @classmethod
    def _from_blocks(cls, comm, spec, backend, gpu, layout, src, dst, placed, meta,
                     graph_record):
        from ..comm import mpi
        from . import generated
        total = int(mpi.allreduce_scalar(comm, int(src.size), "SUM", np.int64))
        return cls(comm, generated.manifest(spec.partition, layout, meta, total), src, dst,
                   backend, gpu, graph_record,
                   {"in_memory": True, "kind": spec.partition,
                    "grid": [layout.rows, layout.cols]},
                   {"placement": placed})

    def build(self, spec, backend: str, options: dict):
        block = Block(self.comm, self.manifest, self.src, self.dst)
        return spec.load(backend).build(block, RunContext(backend, options))

    def _has_edge(self) -> np.ndarray | None:
        """Vertices with an edge, from every block's sources (rank 0 only; None elsewhere)."""
        from mpi4py import MPI
        src, dst = self.src, self.dst
        if self.gpu and not isinstance(src, np.ndarray):   # a block generated on the GPU
            import cupy as cp
            mark = cp.zeros(self.meta.n_vertices, cp.bool_)
            device.mark_sources(mark, src, dst)
            has_edge = mark.get()
        else:
            has_edge = np.zeros(self.meta.n_vertices, np.bool_)
            device.mark_sources(has_edge, src, dst)
        bits = np.packbits(has_edge)
        total = np.empty_like(bits) if self.is_root else None
        self.comm.Reduce(bits, total, op=MPI.BOR, root=0)
        if self.is_root:
            return np.unpackbits(total, count=self.meta.n_vertices).astype(np.int64)
        return None

    def roots(self, opts: RunOptions) -> np.ndarray:
        roots = None
        with self.collective():
            if self.is_root:
                roots = choose_roots(self.meta, self.has_edge, opts.n_roots, opts.root)
        return self.bcast_roots(roots)

    def barrier(self):
        self.comm.Barrier()

    def collective(self):
        from ..comm.mpi import collective_errors
        return collective_errors(self.comm)

    def max(self, x: float) -> float:
        from ..comm.mpi import allreduce_scalar
        return allreduce_scalar(self.comm, x, "MAX")

    def bcast_roots(self, roots):
        count = np.array([len(roots) if self.is_root else 0], np.int64)
        self.comm.Bcast(count, root=0)
        buf = np.ascontiguousarray(roots, np.int64) if self.is_root else np.empty(count[0],
                                                                                   np.int64)
        self.comm.Bcast(buf, root=0)
        return buf

    def result(self, searcher, result, keep: bool):
        """Parents and levels gathered on rank 0 only where they are saved (or needed by the
        CPU validator); the GPU grid is validated where it lies."""
        self.gathered = keep or not self.grid_validation(searcher)   # the same on every rank
        return searcher.gather(self.meta.n_vertices) if self.gathered else None

    def grid_validation(self, searcher) -> bool:
        return self.gpu and searcher.grid_validation

    def validate(self, searcher, result, root, policy):
        if policy.on_host:
            raise BfsError("--validate cpu is for one GPU; distributed searches are validated "
                           "on their ranks (every|first|none)")
        self.validated_on_gpus = self.grid_validation(searcher)   # what run.json names
        if self.validated_on_gpus:
            from ..validate.grid_gpu import validate_grid_device
            verdict = validate_grid_device(searcher.grid_view(), root, self.comm,
                                           searcher.world_x, searcher.row_x, searcher.col_x)
            return verdict if self.is_root else None
        from ..validate import validate_blocks
        return validate_blocks(self.comm, self.src, self.dst, result, root,
                               self.meta.n_vertices)

    def count(self, searcher, result, root):
        """(nedge, depth, reached) of a search left unvalidated (rank 0; None elsewhere): rank
        0 broadcasts which vertices were reached, each rank counts its block's entries leaving
        them (both directions of every edge are in some block), and the sum is halved."""
        from mpi4py import MPI
        if not self.gathered:
            result = searcher.gather(self.meta.n_vertices)
        n = self.meta.n_vertices
        bits = (np.packbits(result.level >= 0) if self.is_root
                else np.empty((n + 7) // 8, np.uint8))
        self.comm.Bcast(bits, root=0)
        reached = np.unpackbits(bits, count=n).astype(np.bool_)
        src, dst = self.src, self.dst
        if not isinstance(src, np.ndarray):    # a block on the GPU
            src, dst = src.get(), dst.get()
        local = np.array([np.count_nonzero(reached[src] & (src != dst))], np.int64)
        total = np.zeros(1, np.int64)
        self.comm.Reduce(local, total, op=MPI.SUM, root=0)
        if not self.is_root:
            return None
        return (int(total[0]) // 2, int(result.level.max()),
                int(np.count_nonzero(result.level >= 0)))

    def profile(self, searcher, result, root, first: bool = False):
        """Every rank's levels of the search (rank 0; [] elsewhere); of the first search, where
        the searcher keeps them, rank 0's level steps are logged (where a level's time goes)."""
        from ..comm.mpi import gatherv
        rows = gatherv(self.comm, searcher.profile.ravel())
        ranks = gatherv(self.comm, np.full(len(searcher.profile), self.rank, np.int64))
        if first and searcher.profile_steps is not None and self.is_root:
            self._log_steps(searcher, root)
        if not self.is_root:
            return []
        rows = rows.reshape(-1, 5)
        # direction-optimizing searches: each level's direction and edges read (all ranks)
        directions, examined = searcher.directions, searcher.level_edges_examined
        return [{"root": root, "rank": int(r), "level": int(lv), "frontier_size": int(fs),
                 "expand_s": float(ex), "comm_s": float(cm), "comm_bytes": int(b),
                 "edges_examined": (int(examined[int(lv)]) if r == 0 and lv < len(examined)
                                    else None),
                 "direction": directions[int(lv)] if r == 0 and lv < len(directions) else None}
                for r, (lv, fs, ex, cm, b) in zip(ranks, rows)]

    @staticmethod
    def _log_steps(searcher, root: int) -> None:
        """Rank 0's levels, milliseconds per LevelClock step, with each level's direction where
        the algorithm switches."""
        from ..comm.exchange import LevelClock
        directions = searcher.directions
        for (lv, frontier, *_), steps in zip(searcher.profile, searcher.profile_steps):
            ms = " ".join(f"{name}={s * 1e3:.3f}" for name, s in zip(LevelClock.STEPS, steps)
                          if s > 0)
            way = f" {directions[int(lv)]}" if int(lv) < len(directions) else ""
            log(f"root {root} level {int(lv)}{way} frontier={int(frontier)} ms: {ms}")

    def describe(self) -> dict:
        return {"graph": self.graph_record, "partition": self.partition_record,
                "validation": ("gpu, each rank its block (bfs.validate.grid_gpu)"
                               if self.validated_on_gpus
                               else "cpu, each rank its block (bfs.validate.validate_blocks)")}

    def close(self) -> None:
        pass


# ------------------------------------------------------------------------------- requests

def check_input(input_dir: Path | None, generate: str | None) -> Path | GeneratedKronecker:
    """Exactly one of a graph / partition directory and --generate."""
    if (input_dir is None) == (generate is None):
        raise BfsError("bfs run takes a graph or partition directory, or --generate "
                       "kronecker:scale=S[,...], not " + ("both" if generate else "neither"))
    return parse_generate(generate) if generate is not None else Path(input_dir)


def _is_partition(source) -> bool:
    return isinstance(source, Path) and (source / "manifest.json").is_file()


def check_request(source, opts: RunOptions, extra: dict | None):
    """The algorithm, the backend and the options asked for, checked against each other."""
    spec = get_algorithm(opts.algorithm)
    backend = resolve_backend(opts.backend, spec)
    options = dict(extra or {})
    if opts.validate not in ("every", "first", "none"):
        raise BfsError(f"--validate {opts.validate!r}: choose one of every, first, none")
    if opts.grid is not None and not (spec.distributed and isinstance(source,
                                                                      GeneratedKronecker)):
        raise BfsError("--grid RxC places a generated graph (--generate) on the ranks of a "
                       "distributed algorithm; a partition directory has its own grid")
    if spec.distributed:
        if options.get("comm"):
            check_comm(options["comm"], backend)
    elif "comm" in options:
        raise BfsError(f"--comm is for the distributed algorithms; {spec.name} runs on one "
                       "process")
    elif _is_partition(source):
        raise BfsError(f"{source} is a partition directory; --algorithm {spec.name} runs on "
                       f"a graph directory (distributed algorithms: "
                       f"{', '.join(n for n, s in ALGORITHMS.items() if s.distributed)})")
    return spec, backend, options


def session_class(spec, backend: str) -> type:
    """The single-process session a run of spec on backend needs. An out-of-core algorithm
    (spec.host_graph) gets the host session: GpuSession would put the edge list on the device
    (8 bytes an edge, and bfs.validate.gpu reads it there), the very memory the algorithm is
    built to do without; so it is validated on the CPU."""
    if backend != "gpu":
        return LocalSession
    return HostGraphGpuSession if spec.host_graph else GpuSession


def open_session(source, spec, backend: str, grid=None):
    """The session a run of spec on backend needs over source (a graph or partition directory,
    or a GeneratedKronecker; grid: the ranks' R x C for a generated graph)."""
    if spec.distributed:
        return MpiSession.open(source, spec, backend, grid)
    return session_class(spec, backend).open(source, backend)


def run(input_dir: Path | None, out: Path, opts: RunOptions, extra: dict | None = None,
        generate: str | None = None) -> int:
    """`bfs run`: one algorithm over a graph directory, a partition directory or a graph
    generated in place (--generate)."""
    known = ALGORITHMS.get(opts.algorithm)
    if (known and known.distributed) or (input_dir is not None and _is_partition(Path(input_dir))):
        # one process per rank: every rank checks the same request, so a bad one is agreed
        # and printed once (by rank 0), not once per rank
        from ..comm.mpi import abort_on_error, collective_errors, world
        comm = world()
        with abort_on_error(comm):
            with collective_errors(comm):
                source = check_input(input_dir, generate)
                spec, backend, options = check_request(source, opts, extra)
            session = open_session(source, spec, backend, opts.grid)
            return search_run(session, spec, backend, options, opts, out)
    source = check_input(input_dir, generate)
    spec, backend, options = check_request(source, opts, extra)
    session = open_session(source, spec, backend)
    return search_run(session, spec, backend, options, opts, out)


def out_free(out: Path, force: bool) -> bool:
    return force or not Path(out).exists() or not any(Path(out).iterdir())


# ---------------------------------------------------------------------------- the search loop

def search_run(session, spec, backend: str, options: dict, opts: RunOptions, out: Path,
               label: str = "", summary: dict | None = None, variant: str | None = None) -> int:
    """Kernel 1 and the timed searches of one algorithm over a session's graph, every rank;
    rank 0 validates (as opts.validate says), records and writes the run directory `out`.
    The exit status (1: an invalid search) on every rank; summary (rank 0), where given, gets
    the run.json written. variant: bench's NAME@KEY=VALUE, recorded in the parameters."""
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    options = dict(options)
    policy = ValidationPolicy(opts.validate)
    clock = session.clock
    label = label or spec.name
    with session.collective():
        if session.is_root and not out_free(out, opts.force):
            raise BfsError(f"{out}: already exists (remove it or pass --force)")
    roots = session.roots(opts)

    # a module's optional warm_up (not the searcher's: it runs before any build), e.g. CUDA
    # compilation, untimed
    warm_up = getattr(spec.load(backend), "warm_up", None)
    if warm_up is not None:
        warm_up(RunContext(backend, options))
    # Kernel 1; on a GPU twice, the second timed: the first also compiles what the warm-up's
    # tiny graph cannot (CuPy's kernels with 64-bit indices for arrays past 2^31 elements,
    # ...), which the kernel cache then keeps
    kernel1_first_s = None
    for attempt in range(2 if clock.gpu else 1):
        clock.free_device_memory()
        with session.collective():   # a rank short of memory stops every rank, not itself
            searcher, seconds = clock.build(lambda: session.build(spec, backend, options))
        construction_time = session.max(seconds)
        if not isinstance(searcher, Searcher):   # the harness reads the protocol's attributes
            raise BfsError(f"algorithm {spec.name}: build() returned a "
                           f"{type(searcher).__name__}, not a bfs.algorithms.Searcher")
        if clock.gpu and attempt == 0:
            kernel1_first_s = construction_time
            searcher.close()
            del searcher
    if spec.distributed:   # the exchange the search really uses (run.json, the report)
        options["comm"] = searcher.comm_kind or default_comm(backend)
    for key in searcher.resolved_options:   # e.g. 2d-do's switch: defaults differ by backend
        value = float(getattr(searcher, key))   # (strict JSON: an infinite beta is "inf")
        options[key] = "inf" if value == float("inf") else value
    if session.is_root:
        log(f"kernel 1 ({label}, {backend}): {construction_time:.3f} s")

    # One untimed search and validation first: JIT compilation, module loads and first-touch
    # page faults belong to no search (the device method's warm-up; Graph500 does not forbid it).
    warm = session.result(searcher, searcher.search(int(roots[0])), keep=False)
    if policy.wanted(0):
        session.validate(searcher, warm, int(roots[0]), policy)

    rows, level_rows, parents = [], [], {}
    for i, root in enumerate(roots):
        root = int(root)
        result, search_time = clock.search(searcher, root)
        result = session.result(searcher, result, keep=i < opts.save_parents)
        check, validate_time = None, None
        if policy.wanted(i):
            t = time.perf_counter()
            check = session.validate(searcher, result, root, policy)
            validate_time = session.max(time.perf_counter() - t)
            counted = None
        else:
            counted = session.count(searcher, result, root)
        level_rows += session.profile(searcher, result, root, first=i == 0)
        if not session.is_root:
            continue
        if check is not None:
            valid, (nedge, depth, reached) = check.valid, (check.nedge, check.depth,
                                                           check.reached)
        else:
            valid, (nedge, depth, reached) = None, counted
        teps = nedge / search_time if valid is not False and search_time > 0 else 0.0
        rows.append({"root": root, "time_s": search_time, "nedge": nedge, "teps": teps,
                     "depth": depth, "reached": reached, "valid": valid,
                     "validate_s": validate_time, "edges_examined": searcher.edges_examined,
                     "bytes_copied": searcher.bytes_copied, "copy_s": searcher.copy_s})
        status = {True: "valid", None: "not validated"}.get(
            valid, f"INVALID: {check and check.message}")
        log(f"{label} search {i + 1}/{len(roots)} root={root} depth={depth} "
            f"reached={reached} nedge={nedge} time={search_time:.4g}s "
            f"TEPS={teps:.4g} {status}")
        if i < opts.save_parents:
            parents[root] = (result.parent.astype(np.int64), result.level.astype(np.int32))

    measured = {"kernel1_first_s": kernel1_first_s,
                "kernel1_extra_s": searcher.kernel1_extra_s or None,
                "launches": dict(searcher.launches) if searcher.launches else None,
                "timing": ("CUDA events around each search, after an untimed search from the "
                           "same root" if clock.gpu else "host clock around each search")
                + (", the maximum over the ranks" if session.size > 1 else "")}
    if opts.profile_levels and clock.gpu and searcher.level_profiling:
        measured["level_profile"] = profile_search(searcher, int(roots[0]), label)
    code = 0
    with session.collective():   # a failed write stops every rank, not rank 0 alone
        if session.is_root:
            recorded = {**options, "variant": variant} if variant else options
            code, record = _write_run(session, out, opts, spec, backend, recorded, started,
                                      roots, construction_time, rows, level_rows, parents,
                                      measured, policy)
            if summary is not None:
                summary.update(record)
    searcher.close()
    del searcher
    clock.free_device_memory()
    return int(session.max(code))   # rank 0's exit status (1: an invalid search) on every rank


def _measurements(session, rows, measured) -> dict:
    """run.json's numbers beyond Graph500's: what bench tabulates."""
    times = [r["time_s"] for r in rows]
    out = {k: v for k, v in measured.items() if v is not None}
    out.update(summarize(times, [r["nedge"] for r in rows]))
    out["examined_per_nedge"] = examined_per_nedge(rows)
    out["n_validated"] = sum(r["valid"] is not None for r in rows)
    out.update(session.extra)
    if "floor_time_s" in session.extra and times:
        out["floor_fraction"] = session.extra["floor_time_s"] / out["median_time_s"]
    copied = [r["bytes_copied"] / r["copy_s"] for r in rows
              if r["bytes_copied"] is not None and r["copy_s"]]
    if copied:   # streamed searches (gpu-out-of-core): their rate and the link's, measured
        from ..algorithms.gpu_out_of_core import host_to_device_bandwidth
        out["transfer_rate_Bps"] = float(np.median(copied))
        out["host_to_device_Bps"] = host_to_device_bandwidth()
    # strict JSON: a figure nothing measured (nan) is null
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in out.items()}


def _write_run(session, out, opts, spec, backend, options, started, roots, construction_time,
               rows, level_rows, parents, measured, policy) -> tuple[int, dict]:
    meta = session.meta
    valid = all(r["valid"] is not False for r in rows)
    scale, edgefactor = graph500_scale(meta)
    stats = None
    block = "# no statistics: a search failed validation\n"
    if valid:
        validate_times = [r["validate_s"] for r in rows if r["validate_s"] is not None]
        stats = graph500_statistics([r["time_s"] for r in rows], [r["nedge"] for r in rows],
                                    validate_times or [math.nan])
        block = output_block(scale=scale, edgefactor=edgefactor, nbfs=len(rows),
                             graph_generation=meta.extra.get("generation_time", math.nan),
                             num_mpi_processes=session.size,
                             construction_time=construction_time, stats=stats)
    with atomic_dir(out, opts.force) as tmp:
        if parents:
            (tmp / PARENTS_DIR).mkdir()
        for root, (parent, level) in parents.items():
            pq.write_table(pa.table({"parent": parent, "level": level}),
                           tmp / PARENTS_DIR / f"root-{root}.parquet")
        pq.write_table(pa.Table.from_pylist(rows, schema=SEARCHES_SCHEMA), tmp / SEARCHES_FILE)
        pq.write_table(pa.Table.from_pylist(level_rows, schema=LEVELS_SCHEMA), tmp / LEVELS_FILE)
        (tmp / GRAPH500_FILE).write_text(block)
        record = {
            "valid": valid,
            "bfs_version": __version__,
            "command": sys.argv,
            "started": started,
            "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            **session.describe(),
            "parameters": {"algorithm": spec.name, "backend": backend,
                           "n_roots": len(roots), "roots": [int(r) for r in roots],
                           "root": opts.root, "save_parents": opts.save_parents,
                           "validate": str(policy), "mpi_size": session.size, **options},
            "scale": scale,
            "edgefactor": edgefactor,
            "construction_time": construction_time,
            "graph500": stats,
            "measurements": _measurements(session, rows, measured),
            "environment": envinfo.environment(session.hostnames, session.size,
                                               session.ranks),
        }
        write_json(tmp / RUN_JSON, {**record, "files": file_records(tmp, data_files(tmp))})
    if opts.print_block:
        sys.stdout.write(block)
    if not valid:
        bad = sum(r["valid"] is False for r in rows)
        log(f"{bad} of {len(rows)} searches failed validation: run {out} is marked invalid")
        return 1, record
    return 0, record


def revalidate(run_dir: Path, graph_dir: Path | None = None) -> tuple[bool, list[dict]]:
    """Re-check a run's saved parents against its graph's own edge list (`bfs validate`). A
    run over a graph generated in place (run.json's graph.generated) has its graph generated
    again on the CPU (the same edges), unless --graph names a directory to read instead."""
    run_dir = Path(run_dir)
    run_json = run_dir / RUN_JSON
    info = read_run_json(run_dir)
    graph = info.get("graph")
    generated = None
    if graph_dir is None:
        if isinstance(graph, dict) and isinstance(graph.get("generated"), str):
            generated = parse_generate(graph["generated"])
        elif not isinstance(graph, dict) or not isinstance(graph.get("dir"), str):
            raise BfsError(f"{run_json}: names no graph directory (graph.dir); pass --graph")
        else:
            graph_dir = Path(graph["dir"])
    searches = read_run_table(run_dir, info, SEARCHES_FILE).to_pylist()
    by_root = {r["root"]: r for r in searches}
    listed = [r["path"] for r in info.get("files") or () if r["path"].startswith(f"{PARENTS_DIR}/")]
    found = [f"{PARENTS_DIR}/{p.name}" for p in (run_dir / PARENTS_DIR).glob("*.parquet")]
    rels = sorted(set(listed) | set(found))
    if not rels:
        saved = (info.get("parameters") or {}).get("save_parents")
        if saved:   # only a run from before `files` was recorded gets here with its trees gone
            raise BfsError(f"{run_dir / PARENTS_DIR}: missing, though the run saved {saved} "
                           f"searches' parents; {REMEDY}")
        raise BfsError(f"{run_dir}: no saved parents to validate: the run had --save-parents "
                       f"{saved or 0}; run it again with --save-parents K (K >= 1, the default "
                       f"1) to keep the first K searches' parents")
    roots = {}
    for rel in rels:
        try:
            roots[rel] = int(Path(rel).stem.removeprefix("root-"))
        except ValueError:
            raise BfsError(f"{run_dir / rel}: not a parents file (expected "
                           f"root-<vertex>.parquet)") from None
        check_run_file(run_dir, info, rel)  # every file checked before the long reads
    if generated is not None:
        on_gpu = gpu_available()
        log(f"generating {generated.spec} again (the run's graph) on the "
            f"{'GPU' if on_gpu else 'CPU'} to validate against")
        if on_gpu:   # the same edges bit for bit, tens of times faster than the CPU generator
            src, dst = (edges.get() for edges in generated.device_edges())
            import cupy
            cupy.get_default_memory_pool().free_all_blocks()
        else:
            src, dst = generated.host_edges()
        n = generated.n_vertices
    else:
        src, dst = read_edges(graph_dir)
        n = read_meta(graph_dir).n_vertices
    report, ok = [], bool(info.get("valid"))
    if not ok:
        log(f"{run_json}: the run itself is marked invalid")
    for rel in rels:
        root = roots[rel]
        table = read_run_table(run_dir, info, rel)
        parent = table.column("parent").to_numpy()
        level = table.column("level").to_numpy() if "level" in table.column_names else None
        if len(parent) != n:
            check_msg, good = f"{len(parent)} parents for {n} vertices", False
            nedge = None
        else:
            check = validate(src, dst, parent, root, level)
            recorded = by_root.get(root)
            good = check.valid and recorded is not None and \
                (recorded["nedge"], recorded["depth"], recorded["reached"]) == \
                (check.nedge, check.depth, check.reached)
            check_msg = check.message if not check.valid else (
                "valid" if good else f"valid tree, but searches.parquet records "
                f"{recorded and {k: recorded[k] for k in ('nedge', 'depth', 'reached')}} "
                f"and the tree gives nedge={check.nedge} depth={check.depth} "
                f"reached={check.reached}")
            nedge = check.nedge
        report.append({"root": root, "valid": good, "nedge": nedge, "message": check_msg})
        log(f"root {root}: {check_msg}")
        ok = ok and good
    return ok, report
