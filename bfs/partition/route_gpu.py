"""Blocks without files: each rank's share of the input edges routed to the ranks that own them,
on the GPUs (route.cu) and through the world exchange's all-to-all (NCCL for `bfs bench
--grid`). The blocks are those `bfs partition` writes for the same grid (the same directed
edges, as a multiset: rows come out in arbitrary order, and every consumer sorts them).

Per rank: count each directed edge's owner (a shared-memory histogram per CUDA block), reserve
each owner's region, scatter the pairs packed as a << 32 | b, swap region sizes (one small MPI
all-to-all), then one grouped send/recv of the regions; the received pairs are unpacked into the
block's src / dst (device uint32, global ids).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..comm.mpi import displacements
from ..device import BLOCK, grid_for, load_module, require_gpu
from ..errors import BfsError
from .layout import GridLayout


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
