"""Graphs generated in place: `bfs run --generate kronecker:scale=S[,edgefactor=16][,seeds=2:3]
[,version=3.0]` and `bfs bench --scales`, no graph or partition directory on disk.

Where the edges are made and go:
  * one process on the CPU: the whole edge list by bfs.graphs.kronecker.generate_edges;
  * one process on a GPU: the whole edge list on the device (bfs.graphs.kronecker_gpu);
  * P ranks (distributed algorithms): every rank generates its contiguous share
    [rank * m / P, (rank + 1) * m / P) of the edge list (the generator is splittable: edge e's
    stream is the seed skipped by e * 2^64) and routes both directions of every non-loop edge
    to the rank owning its block, so each rank holds the block `bfs partition` would write
    for it (the same directed edges as a multiset): on GPUs by bfs.partition.route_gpu (one
    all-to-all through the world exchange), on CPUs by the partitioner's router
    (bfs.partition.blocks._Router) and one MPI Alltoallv per column.
The edges are bit-identical to `bfs generate kronecker` with the same parameters, so a run
from a generated graph and one from its graph directory search the same graph.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, id_dtype

GEN_CHUNK = 1 << 26  # edges per generator launch on a GPU
DEFAULT_SEEDS = (2, 3)



@dataclass(frozen=True)
class GeneratedKronecker:
    scale: int
    edgefactor: int = 16
    seeds: tuple[int, int] = DEFAULT_SEEDS
    version: str = "3.0"
    name: str | None = None   # the graph's name in run.json (default kron-sS-eE): the edges
                              # do not depend on it

    @property
    def n_vertices(self) -> int:
        return 2 ** self.scale

    @property
    def n_edges(self) -> int:
        return self.edgefactor * 2 ** self.scale

    @property
    def spec(self) -> str:
        """The --generate text that makes this graph again (recorded in run.json)."""
        return (f"kronecker:scale={self.scale},edgefactor={self.edgefactor},"
                f"seeds={self.seeds[0]}:{self.seeds[1]},version={self.version}"
                + (f",name={self.name}" if self.name else ""))

    def meta(self, generation_time: float) -> GraphMeta:
        """The graph.json `bfs generate kronecker` writes for the same graph (the same name,
        so the report pools runs of either)."""
        return GraphMeta(name=self.name or f"kron-s{self.scale}-e{self.edgefactor}",
                         source="kronecker",
                         n_vertices=self.n_vertices, n_edges=self.n_edges,
                         directed_source=False, scale=self.scale, edgefactor=self.edgefactor,
                         seeds=list(self.seeds), graph500_version=self.version,
                         extra={"generation_time": generation_time})

    def record(self, meta: GraphMeta) -> dict:
        """run.json's graph: as a graph directory's, with `generated` instead of `dir`."""
        return {"generated": self.spec, **meta.to_json()}

    # ------------------------------------------------------------------ the edges

    def host_edges(self, start: int = 0, stop: int | None = None):
        from ..graphs.kronecker import generate_edges
        return generate_edges(self.scale, self.edgefactor, self.seeds, self.version, start, stop)

    def device_edges(self, start: int = 0, stop: int | None = None):
        """Edges [start, stop) into fresh device arrays, GEN_CHUNK edges per launch."""
        import cupy as cp

        from ..graphs.kronecker_gpu import generate_edges_gpu
        stop = self.n_edges if stop is None else stop
        dtype = id_dtype(self.n_vertices)
        src, dst = cp.empty(stop - start, dtype), cp.empty(stop - start, dtype)
        for a in range(start, stop, GEN_CHUNK):
            b = min(a + GEN_CHUNK, stop)
            generate_edges_gpu(self.scale, self.edgefactor, self.seeds, self.version, a, b,
                               out=(src[a - start:b - start], dst[a - start:b - start]))
        cp.cuda.get_current_stream().synchronize()
        return src, dst

    def streamed_device_edges(self, chunk: int = GEN_CHUNK):
        """The edges regenerated on the device chunk by chunk at each pass, into two reused
        buffers (bfs.graphs.device_edges.DeviceEdges): never the whole list."""
        from ..graphs.device_edges import DeviceEdges
        m, rows = self.n_edges, max(1, min(chunk, self.n_edges))

        def chunks():
            import cupy as cp

            from ..graphs.kronecker_gpu import generate_edges_gpu
            dtype = id_dtype(self.n_vertices)
            src, dst = cp.empty(rows, dtype), cp.empty(rows, dtype)
            for a in range(0, m, rows):
                k = min(a + rows, m) - a
                generate_edges_gpu(self.scale, self.edgefactor, self.seeds, self.version, a,
                                   a + k, out=(src[:k], dst[:k]))
                yield src[:k], dst[:k]

        return DeviceEdges(m, chunks, chunk_edges=rows)

    def streamed_host_edges(self, chunk: int | None = None):
        """The edges regenerated on the CPU chunk by chunk at each pass (counter-based: any
        range of edges on its own), never the whole list (EdgeChunks)."""
        from ..graphs.edge_chunks import STREAM_CHUNK, EdgeChunks
        m = self.n_edges
        rows = max(1, min(chunk or STREAM_CHUNK, m))

        def chunks():
            for a in range(0, m, rows):
                yield self.host_edges(a, min(a + rows, m))

        return EdgeChunks(m, chunks, chunk_edges=rows)

    def share(self, rank: int, size: int) -> tuple[int, int]:
        return share(self.n_edges, rank, size)


def share(n_edges: int, rank: int, size: int) -> tuple[int, int]:
    """The contiguous range of edges [lo, hi) rank generates or routes."""
    return rank * n_edges // size, (rank + 1) * n_edges // size


def parse_generate(text: str) -> GeneratedKronecker:
    """'kronecker:scale=27,edgefactor=16,seeds=2:3,version=3.0[,name=kron-s27]' ->
    GeneratedKronecker; errors name the bad key or value."""
    kind, colon, rest = text.partition(":")
    if kind != "kronecker":
        raise BfsError(f"--generate {text!r}: unknown graph kind {kind!r} (only kronecker)")
    values: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise BfsError(f"--generate {text!r}: {item!r} is not KEY=VALUE")
        try:
            if key in ("scale", "edgefactor"):
                values[key] = int(value)
                if values[key] < 1:
                    raise ValueError
            elif key == "seeds":
                a, b = value.split(":")
                values[key] = (int(a, 0), int(b, 0))
                if min(values[key]) < 0:
                    raise ValueError
            elif key == "version":
                if value not in ("3.0", "2.1.4"):
                    raise ValueError
                values[key] = value
            elif key == "name":
                if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
                    raise ValueError
                values[key] = value
            else:
                raise BfsError(f"--generate {text!r}: unknown key {key!r} (keys: scale, "
                               "edgefactor, seeds, version, name)")
        except ValueError:
            expected = {"scale": "an integer >= 1", "edgefactor": "an integer >= 1",
                        "seeds": "two integers U1:U2 >= 0", "version": "3.0 or 2.1.4",
                        "name": "a plain name (letters, digits, . _ -)"}[key]
            raise BfsError(f"--generate {text!r}: {key}={value!r} is not {expected}") from None
    if "scale" not in values:
        raise BfsError(f"--generate {text!r}: scale=S is required")
    return GeneratedKronecker(**values)


# ---------------------------------------------------------------------- blocks of a grid

def _share(comm, n_edges: int, edges):
    """edges(lo, hi) of this rank's share of the n_edges, timed from a barrier (the slowest
    rank's seconds); then a barrier, so the routing is timed alone."""
    from ..comm.mpi import allreduce_scalar
    comm.Barrier()
    t = time.perf_counter()
    src, dst = edges(*share(n_edges, comm.Get_rank(), comm.Get_size()))
    placed = {"generation_s": allreduce_scalar(comm, time.perf_counter() - t, "MAX")}
    comm.Barrier()
    return src, dst, placed


def place_gpu(comm, exchange, layout, n_edges: int, edges):
    """This rank's share, edges(lo, hi) as device arrays (generated on its GPU, say), routed
    to the layout's blocks: (block src, block dst, timings). Collective."""
    from ..comm.mpi import allreduce_scalar
    from ..partition.route_gpu import route_to_blocks
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
    bfs.partition.route_gpu and its own world exchange, ROUTE_CHUNK edges a step; on CPUs (host
    arrays) through route_cpu, STREAM_CHUNK a step. Each call is a collective pass: every rank
    iterates chunks() to the end together. The searcher builds its block CSR (and CSC) from two
    passes each (kernel1_gpu.block_csr with fill "scatter"; fu_2d.compress on the CPU);
    survey() is the session's pass."""

    def __init__(self, comm, layout, n_edges: int, edges, gpu: bool = True,
                 chunk: int | None = None):
        from ..build.memory import ROUTE_CHUNK
        from ..graphs.edge_chunks import STREAM_CHUNK
        self.comm, self.layout, self.edges, self.gpu = comm, layout, edges, gpu
        self.chunk = chunk or (ROUTE_CHUNK if gpu else STREAM_CHUNK)
        self.ranges = chunk_ranges(n_edges, comm.Get_rank(), comm.Get_size(), self.chunk)
        self.exchange = world_exchange(comm) if gpu else None
        self.passes = 0

    def chunks(self):
        from ..partition.route_gpu import route_to_blocks
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
        from .. import device
        from ..comm.mpi import allreduce_scalar
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
    from ..comm.mpi import allreduce_scalar
    src, dst, placed = _share(comm, n_edges, edges)
    t = time.perf_counter()
    block_src, block_dst = route_cpu(comm, layout, src, dst)
    placed["route_s"] = allreduce_scalar(comm, time.perf_counter() - t, "MAX")
    return block_src, block_dst, placed


def route_cpu(comm, layout, src, dst):
    """Host edges -> this rank's block's directed edges (host arrays, global ids), with the
    partitioner's router and MPI Alltoallv (buffers, no pickles). Collective."""
    from mpi4py import MPI

    from ..comm.mpi import displacements
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


def manifest(kind: str, layout, meta: GraphMeta, n_directed_edges: int) -> dict:
    """The partition manifest's fields a distributed searcher and the session read, for blocks
    made in memory."""
    return {"kind": kind, "grid": [layout.rows, layout.cols], "bounds": layout.bounds.tolist(),
            "n_vertices": layout.n_vertices, "n_directed_edges": int(n_directed_edges),
            "graph": {"graph_json": meta.to_json()}}
