"""GPU Kernel 1, CUDA in kernel1.cu: degrees by atomics (self-loops dropped), int64 offsets by
one cumsum, then the columns, filled in one of two ways (`fill`); rows come out sorted by
column either way, so the CSR's bytes are the same; duplicates are kept, as in
bfs.build.csr_cpu.

fill="keys" (`build_csr_gpu`, the edge list held on the device): the rows are cut into buckets
of at most 2^30 directed entries (scale 26 has 2^31, past what a sort library with 32-bit item
counts takes); per bucket one pass over the edges appends the keys row<<32|col of its rows (one
atomicAdd per warp), CuPy's radix sort sorts them and their low halves land at the bucket's
offset. Fastest where the list and a 2^30-entry bucket fit (scale 26 on an H100: 0.50 s against
0.71 s for scatter, same process, BENCHMARKS.md).

fill="scatter" (`csr_from_streamed`, the list made again chunk by chunk for each pass): one
pass fills the columns, each entry taking its row's next slot by an atomic (the degrees' array
serves as the rows' cursors), so the list is generated (or re-read from Parquet) twice whatever
the graph's size, not once per bucket; then every bucket of rows, 2^28 entries, is sorted in
place from its own columns (row_keys). Beside the CSR only the cursors (the fill) or one
bucket's keys and the sort's buffer, 4 GiB (the sort) are alive: the build that reaches scale 28
on one 80 GB GPU.

A distributed grid's block CSR (and 2d-do's CSC) is built by the same kernels and sort
(`block_csr`), one direction per entry, from its routed block (bfs.build.routing). The bucket
sizes (SORT_LIMIT, RESORT_LIMIT) and the refusals' memory models are bfs.build.memory's.

kernel1.cu holds Kernel 1's kernels only. The two counts over a search's level array that
shared it once (level_sizes, reached_degrees) are the searchers': they sit beside them in
bfs/algorithms/device_csr.cu, loaded by device_csr.py, so each .cu file is loaded by the one
module that launches its kernels and the build stage holds no search code.

With BFS_NVTX=1 each phase is an NVTX range, bfs:kernel1:<phase> (copy edges, degrees, offsets,
fill, and per bucket keys, sort, columns; bfs.nvtx).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import device, nvtx
from ..device import BLOCK, EDGE_LIST_BYTES_PER_EDGE, check_fits, grid_for, load_module, require_gpu
from ..errors import BfsError
from ..graphs.device_edges import to_device_edges
from .memory import (KERNEL1_BYTES_PER_EDGE, KERNEL1_BYTES_PER_VERTEX, RESORT_LIMIT, SORT_LIMIT,
                     largest_kronecker_scale, largest_streamed_scale, streamed_kernel1_bytes,
                     streamed_sort_limit)


def _kernel1_module():
    return load_module(Path(__file__).with_name("kernel1.cu"))


def kernel1_function(name: str):
    """One of kernel1.cu's kernels (a searcher's build counting degrees with Kernel 1's own
    count_degrees, e.g. 2d-do's CSC alone)."""
    return _kernel1_module().get_function(name)


def row_buckets(offsets_h: np.ndarray, limit: int = SORT_LIMIT) -> list[tuple[int, int]]:
    """Split rows [0, n) into consecutive ranges of at most `limit` entries each (a single row
    with more entries gets a range of its own)."""
    n = len(offsets_h) - 1
    out, r0 = [], 0
    while r0 < n:
        r1 = int(np.searchsorted(offsets_h, offsets_h[r0] + limit, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n)
        out.append((r0, r1))
        r0 = r1
    return out


def build_csr_gpu(src_dev, dst_dev, n: int, sort_limit: int = SORT_LIMIT, fill: str = "keys"):
    """GPU Kernel 1: device edges -> (offsets int64[n+1], columns uint32[nnz]) on the device.

    Both directions of every non-self-loop edge; duplicates kept; rows sorted by column.
    Degrees by atomics, offsets by a cumsum (CUB scan), then per bucket of rows (one bucket up
    to 2^30 directed entries): keys row<<32|col appended, radix-sorted, low halves written at
    the bucket's offset (fill="keys"; "scatter": the streamed build's fill, measured against).
    """
    cp = require_gpu()
    n = int(n)
    _check_vertices(n)
    m = int(src_dev.size)
    if int(dst_dev.size) != m:
        raise BfsError(f"edge arrays differ in length: {m} sources, {dst_dev.size} targets")
    src_dev = cp.ascontiguousarray(src_dev, dtype=cp.uint32)
    dst_dev = cp.ascontiguousarray(dst_dev, dtype=cp.uint32)
    def largest(free):      # the list on the device, and the build that streams it instead
        free += EDGE_LIST_BYTES_PER_EDGE * m
        streamed = largest_streamed_scale(free, max(1, m // n), 1 << 26)  # a generator's chunk
        return (f"{largest_kronecker_scale(free, stage='kernel1')} with the edge list on the "
                f"device, {streamed} with it streamed (--edge-list stream; auto streams where "
                f"the list does not fit)")

    check_fits(KERNEL1_BYTES_PER_EDGE * m + KERNEL1_BYTES_PER_VERTEX * (n + 1),
               f"GPU Kernel 1 ({m} edges, {n} vertices)", largest)
    return _csr_from_chunks(lambda: [(src_dev, dst_dev)], n, sort_limit, "GPU Kernel 1", fill=fill)


def csr_from_edges(src, dst, n: int):
    """Kernel 1 for an edge list on the host (copied to the device first) or the device."""
    cp = require_gpu()
    if not isinstance(src, cp.ndarray):
        with nvtx.kernel1("copy edges"):
            src, dst = to_device_edges(src, dst)
    return build_csr_gpu(src, dst, n)


def low_words(keys, out) -> None:
    """out[i] = the low 32 bits of keys[i] (sorted row<<32|column keys -> CSR columns)."""
    if keys.size:
        _kernel1_module().get_function("low_words")((grid_for(keys.size),), (BLOCK,),
                                                    (keys, np.int64(keys.size), out))


def _check_vertices(n: int) -> None:
    if n < 1 or n > 2**32:
        raise BfsError(f"GPU Kernel 1 takes 1..2^32 vertices, got {n}")


def block_csr(entries, n_keys: int, what: str = "2d block CSR", fill: str = "keys",
              sort_limit: int | None = None):
    """Directed CSR (keys -> values) of a distributed block on the device: int64
    offsets[n_keys + 1], uint32 values, each row sorted. entries() yields (keys, values) pairs
    of device uint32 local ids of entries that already hold both directions (2d's block CSR,
    and with keys and values swapped its CSC), the same entries at each call: the routed
    block whole (fill "keys", a pass over it per 2^30-entry bucket), or routed again a chunk
    at a time (fill "scatter": two passes, then each bucket sorted in place; the block is never
    whole beside its CSR). The same kernels and sort as Kernel 1, one direction per entry."""
    _check_vertices(n_keys)
    if sort_limit is None:
        sort_limit = SORT_LIMIT if fill == "keys" else RESORT_LIMIT
    return _csr_from_chunks(entries, n_keys, sort_limit, what, directed=True, fill=fill)


FILLS = ("keys", "scatter")   # how the columns are filled (_csr_from_chunks, module docstring)


def _csr_from_chunks(edge_chunks, n: int, sort_limit: int, what: str, directed: bool = False,
                     fill: str = "keys"):
    """The Kernel 1 passes over edge_chunks() (a callable yielding device uint32 (src, dst)
    pairs, the same edges each call). directed: each pair is one CSR entry src -> dst
    (block_csr); else an undirected edge.

    fill "keys": per bucket one more pass over the edges appends the bucket's keys
    (bucket_keys). "scatter": two passes over the edges whatever the graph's size, the degrees
    and then the fill (each entry atomically takes its row's next slot: the degrees' array
    becomes the rows' cursors), then every bucket of rows is sorted in place from the columns
    themselves (row_keys): nothing but one bucket's keys and the sort's buffer beside the
    CSR."""
    if fill not in FILLS:
        raise BfsError(f"Kernel 1 fill must be one of {FILLS}, got {fill!r}")
    cp = require_gpu()
    mod = _kernel1_module()
    with nvtx.kernel1("degrees"):
        deg = cp.zeros(n, dtype=cp.uint64)
        for src, dst in edge_chunks():
            if src.size:
                mod.get_function("count_degrees")((grid_for(src.size),), (BLOCK,),
                                                  (src, dst, np.int64(src.size), deg,
                                                   np.int32(directed)))
    # the CSR's arrays live as long as the graph, so each gets an allocation of its own, not a
    # cut of a block the degrees' pass cached and freed: scale 27's offsets (1 GiB) cut from a
    # generator block kept 3 GiB beside them that no later free_pool could hand back, the
    # run's peak (BENCHMARKS.md, "scale 27's peak"). The last chunk goes first: a block it
    # holds a cut of cannot be handed back either.
    src = dst = None
    device.free_pool()
    with nvtx.kernel1("offsets"):
        offsets = cp.zeros(n + 1, dtype=cp.int64)
        cp.cumsum(deg.view(cp.int64), out=offsets[1:])
        offsets_h = offsets.get()
    columns = cp.empty(int(offsets_h[-1]), dtype=cp.uint32)
    if fill == "scatter":
        with nvtx.kernel1("fill"):
            cursor = deg        # each row's next free slot, from its offset to its end
            cursor[...] = offsets[:-1].view(cp.uint64)
            scatter = mod.get_function("scatter_columns")
            for src, dst in edge_chunks():
                if src.size:
                    scatter((grid_for(src.size),), (BLOCK,),
                            (src, dst, np.int64(src.size), cursor, columns,
                             np.uint64(columns.size), np.int32(directed)))
            if n and not bool((cursor == offsets[1:].view(cp.uint64)).all()):
                # the chunks gave other edges on this pass than on the degrees' pass
                raise BfsError(f"{what}: the fill pass did not end every row where its degree "
                               f"says (the edge chunks differ between passes)")
        # the cursors and the fill's chunk blocks handed back before the sort's keys and
        # buffer are cut: at scale 27 they stayed cached beside the sort, 3.2 GiB of its
        # 22.7 GiB peak (BENCHMARKS.md, "scale 27's peak at the sort")
        src = dst = None
        del deg, cursor
        device.free_pool()
        row_keys = mod.get_function("row_keys")

        def fill_bucket(r0, r1, keys):
            base = int(offsets_h[r0])
            row_keys((grid_for((r1 - r0) * 32),), (BLOCK,),
                     (offsets, columns, np.int64(r0), np.int64(r1), np.int64(base), keys))
            return int(offsets_h[r1]) - base
    else:
        del deg
        count = cp.zeros(1, dtype=cp.uint64)

        def fill_bucket(r0, r1, keys):
            count.fill(0)
            for src, dst in edge_chunks():
                if src.size:
                    mod.get_function("bucket_keys")((grid_for(src.size),), (BLOCK,),
                                                    (src, dst, np.int64(src.size), np.uint64(r0),
                                                     np.uint64(r1), keys, count,
                                                     np.int32(directed)))
            return int(count.get()[0])

    sort_rows(offsets_h, columns, fill_bucket, sort_limit, what)
    cp.cuda.get_current_stream().synchronize()
    return offsets, columns


def sort_rows(offsets_h: np.ndarray, columns, fill_bucket, sort_limit: int = SORT_LIMIT,
              what: str = "GPU Kernel 1") -> None:
    """The bucketed radix sort every CSR builder here shares. Rows are cut into buckets of at
    most sort_limit entries (row_buckets); fill_bucket(r0, r1, keys) writes the bucket's
    row<<32|column keys into keys, in any order, and returns how many it wrote (checked against
    the offsets); the keys are sorted and their low words land in columns at the bucket's
    offset, so every row comes out sorted by column. fill_bucket may read the bucket's own
    range of columns (a sort in place): it is written only after the keys are sorted."""
    cp = require_gpu()
    if int(offsets_h[-1]) == 0:
        return
    buckets = row_buckets(offsets_h, sort_limit)
    keys = cp.empty(max(int(offsets_h[r1] - offsets_h[r0]) for r0, r1 in buckets), cp.uint64)
    for r0, r1 in buckets:
        want = int(offsets_h[r1] - offsets_h[r0])
        if want == 0:
            continue
        with nvtx.kernel1("keys"):
            got = fill_bucket(r0, r1, keys)
        if got != want:  # cannot happen unless the device misbehaves: never return junk
            raise BfsError(f"{what}: rows [{r0}, {r1}) produced {got} entries, "
                           f"their degrees say {want}")
        part = keys[:want]
        with nvtx.kernel1("sort"):
            part.sort()  # CuPy: radix sort for unsigned integer keys
        device.note_memory()   # keys, the sort's buffer and the columns: Kernel 1's peak
        base = int(offsets_h[r0])
        with nvtx.kernel1("columns"):
            low_words(part, columns[base:base + want])
        del part
    del keys


def csr_from_streamed(edges, n: int, sort_limit: int | None = None, fill: str = "scatter"):
    """GPU Kernel 1 over a streamed edge list (bfs.graphs.device_edges.DeviceEdges, never
    whole on the device): one pass over its chunks counts degrees, a second fills the columns,
    then the rows are sorted in place. Same output as build_csr_gpu; the peak is
    streamed_kernel1_bytes. fill="keys" and other sort_limits are there to measure against
    (bench/probes/kernel1_fill.py)."""
    n, m = int(n), edges.n_edges
    _check_vertices(n)
    if sort_limit is None:
        sort_limit = streamed_sort_limit(m, n, edges.chunk_edges, device.free_memory()[0])
    check_fits(streamed_kernel1_bytes(m, n, edges.chunk_edges, sort_limit),
               f"streamed GPU Kernel 1 ({m} edges, {n} vertices)",
               lambda free: largest_streamed_scale(free, max(1, m // max(n, 1)),
                                                   edges.chunk_edges))
    return _csr_from_chunks(edges.chunks, n, sort_limit, "streamed GPU Kernel 1", fill=fill)


def nonloop_degrees(chunks, n: int) -> np.ndarray:
    """Every vertex's undirected degree, self-loops left out (bfs.build.csr_cpu's
    nonloop_degrees), counted on the device over the edge chunks; on the host, int64."""
    cp = require_gpu()
    deg = cp.zeros(int(n), dtype=cp.uint64)
    count = _kernel1_module().get_function("count_degrees")
    for src, dst in chunks():
        if src.size:
            count((grid_for(src.size),), (BLOCK,), (src, dst, np.int64(src.size), deg,
                                                     np.int32(0)))
    return deg.get().view(np.int64)
