"""The distributed session of the harness: MpiSession, one per MPI rank, holding only the rank's
block of the graph (read from a partition directory, or generated in place or read from host
memory and routed to the blocks by the build stage, bfs.build.routing), on the rank's GPU
(select_gpu) or in host memory. It answers runner.py's search loop as the one-process sessions
(sessions_local.py) do, with every answer agreed across the ranks: roots chosen on rank 0 and
broadcast, results gathered on rank 0 only where needed, validation each rank its block
(bfs.validate.grid_gpu on the GPUs, bfs.validate.validate_blocks on the CPUs).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import device
from ..build import routing
from ..comm import exchange
from . import envinfo
from ..algorithms import Block, RunContext
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta
from ..log import logger
from .generated import GeneratedKronecker
from .roots import choose_roots
from .timing import Clock

if TYPE_CHECKING:
    from .run_options import RunOptions

log = logger("bfs")


def select_gpu(local: int) -> int:
    """Make device gpu_index(local, visible devices) current for this process, its host threads
    placed by BFS_CPU_AFFINITY (envinfo.bind_near_gpu); its index."""
    import cupy
    index = envinfo.gpu_index(local, cupy.cuda.runtime.getDeviceCount())
    cupy.cuda.Device(index).use()
    try:
        bus_id = cupy.cuda.runtime.deviceGetPCIBusId(index)
    except cupy.cuda.runtime.CUDARuntimeError:   # no PCI address (a virtual device): no node
        bus_id = None
    envinfo.bind_near_gpu(bus_id)
    return index


class MpiSession:
    """One rank of a distributed run: it holds only its own block (read from a partition
    directory, or generated in place and routed: bfs.build.routing.place_block)."""
    validated_on_gpus = False   # set by validate(): what run.json names
    gathered = True             # set by result(): whether rank 0 holds the last search whole
    _sources = None             # the host path of count(): the block's non-loop sources

    def __init__(self, comm, manifest: dict, src, dst, backend: str, gpu_index: int | None,
                 graph_record: dict, partition_record: dict, extra: dict | None = None,
                 chunked=None, marked=None):
        """src, dst: the rank's block (host or device arrays of global ids), or None; chunked:
        what the searcher builds from a chunk at a time where the block is streamed (its
        chunks()): the block routed again (bfs.build.routing.RoutedBlock; src and dst None,
        and marked, its survey's mark of the vertices with an edge here) or a block held on
        the host handed over in slices (routing.BlockSlices)."""
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.is_root = self.rank == 0
        # every searcher built in this session on its grid shares one set of communicators
        # (made and connected by the untimed first build, not inside the timed Kernel 1)
        exchange.open_grid_scope()
        self.manifest, self.src, self.dst = manifest, src, dst
        self.backend, self.gpu = backend, backend == "gpu"
        self.meta = GraphMeta.from_json(manifest["graph"]["graph_json"])
        self.graph_record, self.partition_record = graph_record, partition_record
        self.extra = extra or {}
        self.chunked = chunked
        self.hostnames = envinfo.hostnames(comm)
        self.ranks = envinfo.rank_infos(comm, {"gpu_index": gpu_index})
        self.clock = Clock(self.gpu, self.barrier, self.max)
        self.has_edge = self._has_edge(marked)
        rows, cols = manifest["grid"]
        if self.is_root:
            log(f"{self.size} ranks, {rows}x{cols} grid, {self.meta.n_vertices} vertices, "
                f"{manifest['n_directed_edges']} directed edges")

    @classmethod
    def open(cls, source: Path | GeneratedKronecker, spec, backend: str,
             grid: tuple[int, int] | None = None, edge_list: str = "auto",
             adjacency: str = "both"):
        """The rank's block of a partition directory, or of a generated graph placed on
        `grid` (default: the squarest grid of the ranks; P x 1 for a 1d algorithm); on GPUs
        the generated block routed whole or a chunk at a time (edge_list:
        bfs.build.routing.place_block)."""
        from ..comm import mpi
        comm = mpi.world()
        # each rank drives its own GPU: the one SLURM bound it to, or its node-local turn
        gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm))) if backend == "gpu" else None
        if isinstance(source, GeneratedKronecker):
            return cls._generated(comm, source, spec, backend, gpu, grid, edge_list,
                                  adjacency)
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
            build = routing.choose_build(spec.name, backend, manifest["n_vertices"],
                                         manifest["n_directed_edges"] // 2, rows, cols,
                                         edge_list, adjacency)
        chunked = routing.BlockSlices(src, dst) if routing.agreed_stream(comm, build) else None
        return cls(comm, manifest, src, dst, backend, gpu,
                   {"dir": manifest["graph"]["dir"], **manifest["graph"]["graph_json"]},
                   {"dir": str(Path(source).resolve()), "kind": manifest["kind"],
                    "grid": manifest["grid"]},
                   {"block": "host, a slice at a time" if chunked else "whole"}, chunked)

    @classmethod
    def _generated(cls, comm, graph: GeneratedKronecker, spec, backend, gpu, grid,
                   edge_list: str = "auto", adjacency: str = "both"):
        edges = graph.device_edges if backend == "gpu" else graph.host_edges
        layout, block, placed = routing.place_block(comm, spec.name, spec.partition, backend,
                                                    grid, graph.n_vertices, graph.n_edges,
                                                    edges, edge_list, adjacency)
        meta = graph.meta(placed["generation_s"])
        if comm.Get_rank() == 0:
            log(f"generated {graph.spec} on {layout.rows}x{layout.cols} in "
                f"{placed['generation_s']:.3f} s")
        return cls._from_blocks(comm, spec, backend, gpu, layout, block, placed, meta,
                                graph.record(meta))

    @classmethod
    def from_edges(cls, meta: GraphMeta, host_edges, graph_record: dict, spec, backend: str,
                   grid: tuple[int, int] | None = None, edge_list: str = "auto",
                   adjacency: str = "both"):
        """Each rank reads host_edges(lo, hi) (host arrays: a graph directory's row groups,
        bfs.graphs.graphdir.edge_range_reader, or a list every rank holds, bench's lattices)
        for its share, or each chunk of it where the block is streamed, and routes it to the
        blocks: no rank reads more of a graph directory than its share."""
        from ..comm import mpi
        comm = mpi.world()
        gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm))) if backend == "gpu" else None
        if backend == "gpu":
            from ..graphs.device_edges import to_device_edges

            def edges(lo, hi):
                return to_device_edges(*host_edges(lo, hi))
        else:
            edges = host_edges
        layout, block, placed = routing.place_block(comm, spec.name, spec.partition, backend,
                                                    grid, meta.n_vertices, meta.n_edges,
                                                    edges, edge_list, adjacency)
        return cls._from_blocks(comm, spec, backend, gpu, layout, block, placed, meta,
                                graph_record)

    @classmethod
    def _from_blocks(cls, comm, spec, backend, gpu, layout, block, placed, meta,
                     graph_record):
        """The session over place_block's PlacedBlock."""
        from ..comm import mpi
        total = int(mpi.allreduce_scalar(comm, block.entries, "SUM", np.int64))
        return cls(comm, routing.manifest(spec.partition, layout, meta, total), block.src,
                   block.dst, backend, gpu, graph_record,
                   {"in_memory": True, "kind": spec.partition,
                    "grid": [layout.rows, layout.cols]},
                   {"placement": placed}, block.chunked, block.marked)

    def build(self, spec, backend: str, options: dict):
        if self.chunked is not None:   # the searcher builds from a chunk at a time
            block = Block(self.comm, self.manifest, None, None, self.chunked.chunks)
        else:
            block = Block(self.comm, self.manifest, self.src, self.dst)
        return spec.load(backend).build(block, RunContext(backend, options))

    def _has_edge(self, marked=None) -> np.ndarray | None:
        """Vertices with an edge, from every block's sources (rank 0 only; None elsewhere);
        marked: a streamed block's, from its survey pass."""
        from mpi4py import MPI
        src, dst = self.src, self.dst
        if marked is not None:
            has_edge = marked if isinstance(marked, np.ndarray) else marked.get()
        elif self.gpu and not isinstance(src, np.ndarray):   # a block generated on the GPU
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

    def gather(self, values: np.ndarray) -> np.ndarray | None:
        """Every rank's 1-D values concatenated in rank order on rank 0 (None elsewhere)."""
        from ..comm.mpi import gatherv
        return gatherv(self.comm, np.asarray(values))

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
        return validate_blocks(self.comm, self.block_chunks, result, root,
                               self.meta.n_vertices)

    def block_chunks(self):
        """The rank's block as (src, dst) pairs: whole, or routed again a chunk at a time (a
        collective pass)."""
        if self.src is None:
            return self.chunked.chunks()
        return iter([(self.src, self.dst)])

    def count(self, searcher, result, root):
        """(nedge, depth, reached) of a search left unvalidated (rank 0; None elsewhere),
        counted where the search left its data.

        GPU ranks whose searcher has a device view (grid_validation: every distributed GPU
        searcher today, 2d, 2d-do, 1d and semiring, on any grid) count on their GPUs from the
        searcher's own state (bfs.validate.grid_gpu.count_grid_device): the rows' levels
        all-gathered along the grid row, each rank's degree sum over its reached rows and
        its own piece's reached count and depth all-reduced; nothing is gathered to rank 0
        or copied to the host.

        Otherwise (CPU ranks, and any GPU searcher without a device view) the host path:
        rank 0 broadcasts which vertices were reached (from the result gathered for it),
        each rank counts its block's entries leaving them (both directions of every edge
        are in some block), and the sum is halved. The block's non-loop sources are kept
        from the first count on, so a search copies nothing more of the block."""
        if self.grid_validation(searcher):
            from ..validate.grid_gpu import count_grid_device
            counted = count_grid_device(searcher.grid_view(), self.comm, searcher.row_x)
            return counted if self.is_root else None
        from mpi4py import MPI
        if not self.gathered:
            result = searcher.gather(self.meta.n_vertices)
        n = self.meta.n_vertices
        bits = (np.packbits(result.level >= 0) if self.is_root
                else np.empty((n + 7) // 8, np.uint8))
        self.comm.Bcast(bits, root=0)
        reached = np.unpackbits(bits, count=n).astype(np.bool_)
        if self.src is None:   # a pass over the block routed again (CPU ranks)
            local = np.array([sum(int(np.count_nonzero(reached[s[s != d]]))
                                  for s, d in self.chunked.chunks())], np.int64)
        else:
            local = np.array([np.count_nonzero(reached[self._count_sources()])], np.int64)
        total = np.zeros(1, np.int64)
        self.comm.Reduce(local, total, op=MPI.SUM, root=0)
        if not self.is_root:
            return None
        return (int(total[0]) // 2, int(result.level.max()),
                int(np.count_nonzero(result.level >= 0)))

    def _count_sources(self) -> np.ndarray:
        """The block's sources of non-loop entries on the host, made on the first count (a
        block on the GPU copied once, not once a search)."""
        if self._sources is None:
            src, dst = self.src, self.dst
            if not isinstance(src, np.ndarray):    # a block on the GPU
                src, dst = src.get(), dst.get()
            self._sources = np.ascontiguousarray(src[src != dst])
        return self._sources

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
        exchange.close_grid_scope()
        if self.chunked is not None:
            self.chunked.free()
