"""A grid's blocks without files, and how each rank builds from its block: each rank's share
of the input edges routed to the ranks that own them, whole or a chunk at a time, for the
distributed searchers' block CSR (and CSC) builds (bfs.build.csr_gpu.block_csr on GPUs).

Where the edges go (place_block): every rank takes its contiguous share [rank * m / P,
(rank + 1) * m / P) of the edge list, edges(lo, hi) (generated in place: the generator is
splittable, edge e's stream is the seed skipped by e * 2^64; or read from a graph directory's
row groups) and routes both directions of every non-loop edge to the rank owning its block, so
each rank holds the block `bfs partition` would write for it (the same directed edges as a
multiset: rows come out in arbitrary order, and every consumer sorts them): on GPUs by
route_to_blocks (route.cu, one all-to-all through the world exchange: NCCL for `bfs bench
--grid`), on CPUs by the partitioner's router (bfs.partition.blocks._Router) and one MPI
Alltoallv per column (route_cpu).

How a rank builds (choose_build, before anything is generated or routed): from its block whole
(place_gpu / place_cpu), or, where it does not fit whole beside its build (bfs.build.memory's
grid_build; every rank streams if one must: agreed_stream), from the block routed again a chunk
at a time for each pass of the build (RoutedBlock); a block read whole into host memory from a
partition directory is handed to a streamed build a slice at a time (BlockSlices).

route_to_blocks, per rank: count each directed edge's owner (a shared-memory histogram per CUDA
block), reserve each owner's region, scatter the pairs packed as a << 32 | b, swap region sizes
(one small MPI all-to-all), then one grouped send/recv of the regions; the received pairs are
unpacked into the block's src / dst (device uint32, global ids).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import device
from ..comm.mpi import allreduce_scalar, displacements
from ..device import BLOCK, grid_for, load_module, require_gpu
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, id_dtype
from ..log import logger
from ..partition.layout import GridLayout, squarest_grid
from .memory import ROUTE_CHUNK, grid_build

log = logger("bfs")


def _module():
    return load_module(Path(__file__).with_name("route.cu"))


def route_to_blocks(layout: GridLayout, src, dst, exchange):
    """This rank's input edges (device uint32 src, dst) -> its block's directed edges (device
    uint32 src, dst). Collective over the exchange's ranks (one per block, rank order)."""
    cp = require_gpu()
    p, C = layout.n_ranks, layout.cols
    if exchange.size != p:
        raise BfsError(f"routing to a {layout.rows}x{C} grid needs {p} ranks, got "
                       f"{exchange.size}")
    if p > 1024:
        raise BfsError(f"GPU routing takes at most 1024 ranks, got {p}")
    if layout.n_vertices > 2**32:
        raise BfsError("GPU routing takes vertex ids below 2^32")
    mod = _module()
    m = int(src.size)
    bounds = cp.asarray(layout.bounds)
    counts = cp.zeros(p, cp.uint64)
    if m:
        mod.get_function("count_owners")((grid_for(m),), (BLOCK,),
                                         (src, dst, np.int64(m), bounds, np.int32(p),
                                          np.int32(C), counts))
    send_counts = counts.get().astype(np.int64)
    send_displs = displacements(send_counts)
    packed = cp.empty(int(send_counts.sum()), cp.uint64)
    if m:
        cursor = cp.asarray(send_displs.astype(np.uint64))
        mod.get_function("scatter_owners")((grid_for(m),), (BLOCK,),
                                           (src, dst, np.int64(m), bounds, np.int32(p),
                                            np.int32(C), cursor, packed))
    if p == 1:
        received = packed     # one block: nothing moves
    else:
        recv_counts = exchange.alltoall_counts(send_counts)
        received = cp.empty(int(recv_counts.sum()), cp.uint64)
        exchange.alltoallv(packed, send_counts, received, recv_counts)
    del packed
    out_src = cp.empty(received.size, cp.uint32)
    out_dst = cp.empty(received.size, cp.uint32)
    if received.size:
        mod.get_function("unpack_pairs")((grid_for(received.size),), (BLOCK,),
                                         (received, np.int64(received.size), out_src, out_dst))
    cp.cuda.get_current_stream().synchronize()
    return out_src, out_dst


def share(n_edges: int, rank: int, size: int) -> tuple[int, int]:
    """The contiguous range of edges [lo, hi) rank generates or routes."""
    return rank * n_edges // size, (rank + 1) * n_edges // size


def _share(comm, n_edges: int, edges):
    """edges(lo, hi) of this rank's share of the n_edges, timed from a barrier (the slowest
    rank's seconds); then a barrier, so the routing is timed alone."""
    comm.Barrier()
    t = time.perf_counter()
    src, dst = edges(*share(n_edges, comm.Get_rank(), comm.Get_size()))
    placed = {"generation_s": allreduce_scalar(comm, time.perf_counter() - t, "MAX")}
    comm.Barrier()
    return src, dst, placed


def place_gpu(comm, exchange, layout, n_edges: int, edges):
    """This rank's share, edges(lo, hi) as device arrays (generated on its GPU, say), routed
    to the layout's blocks: (block src, block dst, timings). Collective."""
    src, dst, placed = _share(comm, n_edges, edges)
    t = time.perf_counter()
    block_src, block_dst = route_to_blocks(layout, src, dst, exchange)
    del src, dst
    placed["route_s"] = allreduce_scalar(comm, time.perf_counter() - t, "MAX")
    return block_src, block_dst, placed


def world_exchange(comm):
    """The exchange that carries the routing all-to-all: the world's, NCCL unless ranks share a
    GPU (as the searches choose; MPI on one rank, which sends nothing)."""
    from ..comm.exchange import choose_comm, make_exchange
    return make_exchange("mpi" if comm.Get_size() == 1 else choose_comm(None, "gpu", comm),
                         comm)


def chunk_ranges(n_edges: int, rank: int, size: int, chunk: int) -> list[tuple[int, int]]:
    """The ranges [a, b) of this rank's share a streamed block routes, one per pass step; every
    rank gets as many (each routing step is collective), the last ones empty where its share
    is shorter than the longest."""
    lo, hi = share(n_edges, rank, size)
    longest = -(-n_edges // size)     # the last rank's share, ceil(m / P)
    steps = max(1, -(-longest // chunk))
    return [(min(lo + k * chunk, hi), min(lo + (k + 1) * chunk, hi)) for k in range(steps)]


class RoutedBlock:
    """This rank's block of the grid, never whole in memory: chunks() makes (edges(lo, hi)) and
    routes this rank's share a chunk at a time and yields the block's entries that chunk
    brought, global ids, the same entries at every call. On GPUs (device uint32 arrays) through
    route_to_blocks and its own world exchange, ROUTE_CHUNK edges a step; on CPUs (host
    arrays) through route_cpu, STREAM_CHUNK a step. Each call is a collective pass: every rank
    iterates chunks() to the end together. The searcher builds its block CSR (and CSC) from two
    passes each (csr_gpu.block_csr with fill "scatter"; fu_2d.compress on the CPU);
    survey() is place_block's pass."""

    def __init__(self, comm, layout, n_edges: int, edges, gpu: bool = True,
                 chunk: int | None = None):
        from ..graphs.edge_chunks import STREAM_CHUNK
        self.comm, self.layout, self.edges, self.gpu = comm, layout, edges, gpu
        self.chunk = chunk or (ROUTE_CHUNK if gpu else STREAM_CHUNK)
        self.ranges = chunk_ranges(n_edges, comm.Get_rank(), comm.Get_size(), self.chunk)
        self.exchange = world_exchange(comm) if gpu else None
        self.passes = 0

    def chunks(self):
        self.passes += 1
        for a, b in self.ranges:
            src, dst = self.edges(a, b)
            yield (route_to_blocks(self.layout, src, dst, self.exchange) if self.gpu
                   else route_cpu(self.comm, self.layout, src, dst))
            del src, dst

    def survey(self, n_vertices: int) -> tuple[int, object, dict]:
        """One pass: (this rank's block entries, a bool mark, on the block's device, of the
        vertices that are the source of a non-loop entry here, placement timings: the pass's
        seconds, generation and routing interleaved, the slowest rank's)."""
        xp = device.cupy() if self.gpu else np
        self.comm.Barrier()
        t = time.perf_counter()
        entries, mark = 0, xp.zeros(n_vertices, xp.bool_)
        for src, dst in self.chunks():
            entries += int(src.size)
            device.mark_sources(mark, src, dst)
        if self.gpu:
            xp.cuda.get_current_stream().synchronize()
        seconds = allreduce_scalar(self.comm, time.perf_counter() - t, "MAX")
        return entries, mark, {"generation_s": seconds, "route_s": seconds,
                               "edge_list": "streamed", "route_chunk_edges": self.chunk}

    def free(self) -> None:
        if self.exchange is not None:
            self.exchange.free()


def place_cpu(comm, layout, n_edges: int, edges):
    """This rank's share, edges(lo, hi) as host arrays (generated on the CPU, say), routed to
    the layout's blocks (route_cpu): (block src, block dst, timings). Collective."""
    src, dst, placed = _share(comm, n_edges, edges)
    t = time.perf_counter()
    block_src, block_dst = route_cpu(comm, layout, src, dst)
    placed["route_s"] = allreduce_scalar(comm, time.perf_counter() - t, "MAX")
    return block_src, block_dst, placed


def route_cpu(comm, layout, src, dst):
    """Host edges -> this rank's block's directed edges (host arrays, global ids), with the
    partitioner's router and MPI Alltoallv (buffers, no pickles). Collective."""
    from mpi4py import MPI

    from ..partition.blocks import _Router
    dtype = id_dtype(layout.n_vertices)
    parts = _Router(layout, dtype).route(src, dst)   # (rank, src, dst) per non-empty block
    send_counts = np.zeros(comm.Get_size(), np.int64)
    for rank, s, _ in parts:
        send_counts[rank] = len(s)
    recv_counts = np.empty_like(send_counts)
    comm.Alltoall(send_counts, recv_counts)
    mpi_type = MPI._typedict[dtype.char]
    received = []
    for column in (1, 2):   # src, then dst: the router's output is already in rank order
        send = (np.concatenate([p[column] for p in parts]) if parts
                else np.empty(0, dtype))
        recv = np.empty(int(recv_counts.sum()), dtype)
        comm.Alltoallv([send, send_counts, displacements(send_counts), mpi_type],
                       [recv, recv_counts, displacements(recv_counts), mpi_type])
        received.append(recv)
    return received[0], received[1]


def choose_build(algorithm: str, backend: str, n_vertices: int, n_edges: int, rows: int,
                 cols: int, edge_list: str, adjacency: str = "both") -> str:
    """This rank's choice of how its searcher builds its block: "device" (whole) or "stream"
    (a chunk at a time). On GPUs bfs.build.memory.grid_build (auto: whole where it fits;
    refused where neither fits; adjacency: 2d-do's, whose csc keeps no block CSR); CPU ranks
    stream only when asked (--edge-list stream)."""
    if backend == "gpu":
        return grid_build(algorithm, n_vertices, n_edges, rows, cols, edge_list, adjacency)
    if edge_list not in ("auto", "device", "stream"):
        raise BfsError(f"--edge-list {edge_list!r}: choose one of auto, device, stream")
    return "stream" if edge_list == "stream" else "device"


def agreed_stream(comm, build: str) -> bool:
    """Whether every rank streams: one rank whose GPU has less free memory streams them all
    (a routed block's passes are collective)."""
    return bool(allreduce_scalar(comm, int(build == "stream"), "MAX", np.int64))


class PlacedBlock(NamedTuple):
    """place_block's block of this rank: src, dst (global ids), or None where it is streamed,
    with chunked (the RoutedBlock routing it again) and marked (its survey's mark
    of the vertices with an edge here); entries: its directed entries."""
    src: object
    dst: object
    entries: int
    chunked: object = None
    marked: object = None


class BlockSlices:
    """A block held whole in host memory (read from a partition directory) that the searcher
    builds from a slice of ROUTE_CHUNK entries at a time, so its GPU never holds it whole
    beside the block CSR and CSC (nor, on CPUs, its whole local ids)."""

    def __init__(self, src, dst):
        self.src, self.dst, self.step = src, dst, ROUTE_CHUNK

    def chunks(self):
        for a in range(0, max(len(self.src), 1), self.step):
            yield self.src[a:a + self.step], self.dst[a:a + self.step]

    def free(self) -> None:
        pass


def place_block(comm, algorithm: str, kind: str, backend: str, grid, n_vertices: int,
                n_edges: int, edges, edge_list: str = "auto", adjacency: str = "both"):
    """The layout (grid, default the squarest one of the ranks; a partition kind "1d" on
    P x 1), this rank's block of the edges (a PlacedBlock), each rank routing its share
    edges(lo, hi), and the placement's record. The block is whole, or, where edge_list is
    "stream" (on GPUs also "auto" where the block's build does not fit whole:
    bfs.build.memory.grid_build, every rank agreeing), a RoutedBlock that routes it again a
    chunk at a time for each pass of the searcher's build, with the survey pass's entries and
    mark. Collective."""
    from ..comm import mpi
    p = comm.Get_size()
    rows, cols = grid or squarest_grid(p)
    if kind == "1d":   # 1d runs on the P x 1 grid of the same ranks
        rows, cols = rows * cols, 1
    with mpi.collective_errors(comm):
        mpi.check_world_size(comm, rows * cols, f"a {rows}x{cols} grid")
        layout = GridLayout(n_vertices, rows, cols)
        # refused before minutes of generation and routing, not by the allocator mid-way
        build = choose_build(algorithm, backend, n_vertices, n_edges, rows, cols, edge_list,
                             adjacency)
    if agreed_stream(comm, build):
        routed = RoutedBlock(comm, layout, n_edges, edges, gpu=backend == "gpu")
        entries, marked, placed = routed.survey(n_vertices)
        placed["block_entries_max"] = int(mpi.allreduce_scalar(comm, entries, "MAX",
                                                               np.int64))
        if comm.Get_rank() == 0:
            log(f"the {rows}x{cols} blocks routed a chunk of {routed.chunk} edges a rank at "
                f"a time, never whole (largest block {placed['block_entries_max']} "
                f"entries; {placed['route_s']:.3f} s a pass)")
        return layout, PlacedBlock(None, None, entries, routed, marked), placed
    # generation and routing interleave local work and collectives, so an error is not
    # agreed on: it aborts every rank (run()'s and bench's abort_on_error)
    if backend == "gpu":
        x = world_exchange(comm)
        src, dst, placed = place_gpu(comm, x, layout, n_edges, edges)
        x.free()
    else:
        src, dst, placed = place_cpu(comm, layout, n_edges, edges)
    placed["edge_list"] = "whole"
    placed["block_entries_max"] = int(mpi.allreduce_scalar(comm, int(src.size), "MAX",
                                                           np.int64))
    if comm.Get_rank() == 0:
        log(f"routed to the {rows}x{cols} blocks in {placed['route_s']:.3f} s (largest "
            f"block {placed['block_entries_max']} entries)")
    return layout, PlacedBlock(src, dst, int(src.size)), placed


def manifest(kind: str, layout, meta: GraphMeta, n_directed_edges: int) -> dict:
    """The partition manifest's fields a distributed searcher and the session read, for blocks
    made in memory."""
    return {"kind": kind, "grid": [layout.rows, layout.cols], "bounds": layout.bounds.tolist(),
            "n_vertices": layout.n_vertices, "n_directed_edges": int(n_directed_edges),
            "graph": {"graph_json": meta.to_json()}}
