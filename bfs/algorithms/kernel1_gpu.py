"""GPU Kernel 1 (`build_csr_gpu`), sort-based, CUDA in kernel1.cu: degrees by atomics
(self-loops dropped), int64 offsets by one cumsum; the rows are cut into buckets of at most 2^30
directed entries (one bucket below scale 25; scale 26 has 2^31 entries, past what a sort library
with 32-bit item counts takes); per bucket the keys row<<32|col of both directions of every edge
are appended (one atomicAdd per warp), radix-sorted (CuPy's sort) and their low halves written at
the bucket's offset. Rows come out sorted by column; duplicates are kept, as in
bfs.algorithms.kernel1. With BFS_NVTX=1 each phase is an NVTX range, bfs:kernel1:<phase> (copy
edges, degrees, offsets, and per bucket keys, sort, columns; bfs.nvtx).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import SearchResult, Searcher
from .. import device, nvtx
from ..device import (BLOCK, EDGE_LIST_BYTES_PER_EDGE, KERNEL1_BYTES_PER_EDGE,
                      KERNEL1_BYTES_PER_VERTEX, check_fits, grid_for, largest_kronecker_scale,
                      load_module, require_gpu)
from ..errors import BfsError
from ..graphs.device_edges import to_device_edges

SORT_LIMIT = 1 << 30


def _kernel1_module():
    return load_module(Path(__file__).with_name("kernel1.cu"))


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


def build_csr_gpu(src_dev, dst_dev, n: int, sort_limit: int = SORT_LIMIT):
    """GPU Kernel 1: device edges -> (offsets int64[n+1], columns uint32[nnz]) on the device.

    Both directions of every non-self-loop edge; duplicates kept; rows sorted by column.
    Degrees by atomics, offsets by a cumsum (CUB scan), then per bucket of rows (one bucket up
    to 2^30 directed entries): keys row<<32|col appended, radix-sorted, low halves written at
    the bucket's offset.
    """
    cp = require_gpu()
    n = int(n)
    _check_vertices(n)
    m = int(src_dev.size)
    if int(dst_dev.size) != m:
        raise BfsError(f"edge arrays differ in length: {m} sources, {dst_dev.size} targets")
    src_dev = cp.ascontiguousarray(src_dev, dtype=cp.uint32)
    dst_dev = cp.ascontiguousarray(dst_dev, dtype=cp.uint32)
    check_fits(KERNEL1_BYTES_PER_EDGE * m + KERNEL1_BYTES_PER_VERTEX * (n + 1),
               f"GPU Kernel 1 ({m} edges, {n} vertices)",
               lambda free: largest_kronecker_scale(free + EDGE_LIST_BYTES_PER_EDGE * m,
                                                    stage="kernel1"))
    return _csr_from_chunks(lambda: [(src_dev, dst_dev)], n, sort_limit, "GPU Kernel 1")


def csr_from_edges(src, dst, n: int):
    """Kernel 1 for an edge list on the host (copied to the device first) or the device."""
    cp = require_gpu()
    if not isinstance(src, cp.ndarray):
        with nvtx.kernel1("copy edges"):
            src, dst = to_device_edges(src, dst)
    return build_csr_gpu(src, dst, n)


def warm_up(from_csr) -> None:
    """Compile (or load from CuPy's cache) what a GPU run uses before Kernel 1 is timed: Kernel 1
    and a searcher from from_csr(offsets, columns), on a 3-vertex path. On a cold kernel cache
    this took ~1 s, which the first run's construction_time would otherwise carry."""
    cp = require_gpu()
    offsets, columns = build_csr_gpu(cp.asarray([0, 1], cp.uint32),
                                     cp.asarray([1, 2], cp.uint32), 3)
    from_csr(offsets, columns).search(0)


class DeviceCsrSearcher(Searcher):
    """What the single-GPU searchers over a Kernel-1 device CSR share (merrill, merrill-do,
    gpu-quadratic): the CSR's checks, and the last search's outputs, which a subclass keeps
    in self.parent (int64) and self.level (int32) on the device, with self.offsets_out the
    CSR's offsets under the output's vertex ids (for nedge)."""
    device_resident = True

    def _check_csr(self, offsets, columns, name: str) -> int:
        """Sets self.cp; the vertex count of the CSR, or BfsError if `name` cannot take it."""
        cp = self.cp = require_gpu()
        n = int(offsets.size) - 1
        if n < 1:
            raise BfsError("the graph has no vertices")
        if n > 2**32:
            raise BfsError(f"--algorithm {name} takes at most 2^32 vertices, got {n}")
        if offsets.dtype != cp.int64 or columns.dtype != cp.uint32:
            raise BfsError(f"device CSR must be int64 offsets and uint32 columns, got "
                           f"{offsets.dtype} and {columns.dtype}")
        return n

    def gather(self, n_vertices: int | None = None):
        """The last search's parent and level arrays copied to the host."""
        if n_vertices is not None and int(n_vertices) != self.n:
            raise BfsError(f"gather({n_vertices}) on a graph of {self.n} vertices")
        return SearchResult(self.parent.get().astype(np.int64, copy=False),
                            self.level.get().astype(np.int32, copy=False))

    def device_result(self):
        """The last search's parent and level arrays, still on the device."""
        return SearchResult(self.parent, self.level)

    def nedge(self) -> int:
        """Graph500 nedge of the last search: input edges (self-loops excluded, duplicates
        counted) with both ends reached = half the summed degree of the reached vertices."""
        return int(self.cp.sum(self.cp.diff(self.offsets_out)[self.level >= 0])) // 2


def entry_points(searcher):
    """The registry's module functions for a searcher class over a device CSR (merrill,
    merrill-do, gpu-quadratic): build (GPU Kernel 1 from the edge list; the searcher's options are
    ctx.options, which `bfs run` checked against the registry's declarations),
    from_csr (bfs bench's device CSR) and warm_up (Kernel 1 and a search compiled on a
    3-vertex path before Kernel 1 is timed)."""
    def build(graph, ctx):
        if graph.src is None:     # a streamed edge list (a one-GPU session's DeviceEdges)
            offsets, columns = csr_from_streamed(graph.device_edges, graph.n_vertices)
        else:
            offsets, columns = csr_from_edges(graph.src, graph.dst, graph.n_vertices)
        return searcher(offsets, columns, **ctx.options)

    build.streams_edges = True    # builds from graph.device_edges chunk by chunk

    def from_csr(offsets, columns, **options):
        return searcher(offsets, columns, **options)

    def warm_up_searcher(ctx) -> None:
        warm_up(from_csr)

    return build, from_csr, warm_up_searcher


def low_words(keys, out) -> None:
    """out[i] = the low 32 bits of keys[i] (sorted row<<32|column keys -> CSR columns)."""
    if keys.size:
        _kernel1_module().get_function("low_words")((grid_for(keys.size),), (BLOCK,),
                                                    (keys, np.int64(keys.size), out))


def _check_vertices(n: int) -> None:
    if n < 1 or n > 2**32:
        raise BfsError(f"GPU Kernel 1 takes 1..2^32 vertices, got {n}")


def block_csr(keys, values, n_keys: int, sort_limit: int = SORT_LIMIT,
              what: str = "2d block CSR"):
    """Directed CSR (keys -> values) of a distributed block on the device: int64
    offsets[n_keys + 1], uint32 values, each row sorted; keys and values are device uint32
    local ids of entries that already hold both directions (2d's block CSR, and with keys and
    values swapped its CSC). The same kernels and sort as Kernel 1, one direction per entry."""
    _check_vertices(n_keys)
    return _csr_from_chunks(lambda: [(keys, values)], n_keys, sort_limit, what, directed=True)


def _csr_from_chunks(edge_chunks, n: int, sort_limit: int, what: str, directed: bool = False):
    """The Kernel 1 passes over edge_chunks() (a callable yielding device uint32 (src, dst)
    pairs, the same edges each call): degrees in one pass, then one pass per row bucket.
    directed: each pair is one CSR entry src -> dst (block_csr); else an undirected edge."""
    cp = require_gpu()
    mod = _kernel1_module()
    with nvtx.kernel1("degrees"):
        deg = cp.zeros(n, dtype=cp.uint64)
        for src, dst in edge_chunks():
            if src.size:
                mod.get_function("count_degrees")((grid_for(src.size),), (BLOCK,),
                                                  (src, dst, np.int64(src.size), deg,
                                                   np.int32(directed)))
    with nvtx.kernel1("offsets"):
        offsets = cp.zeros(n + 1, dtype=cp.int64)
        cp.cumsum(deg.view(cp.int64), out=offsets[1:])
        del deg
        offsets_h = offsets.get()
    columns = cp.empty(int(offsets_h[-1]), dtype=cp.uint32)
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
    offset, so every row comes out sorted by column."""
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


def streamed_kernel1_bytes(m: int, n: int, chunk: int, sort_limit: int = SORT_LIMIT) -> int:
    """Peak device bytes of csr_from_streamed: degrees and offsets (16 n), the columns (8 m:
    2m uint32), one chunk of edges (8 chunk), one bucket of keys and the sort's buffer
    (16 sort_limit). No edge list is kept."""
    return 16 * (n + 1) + 8 * m + 8 * chunk + 16 * min(sort_limit, 2 * m)


def streamed_sort_limit(m: int, n: int, chunk: int, free: int) -> int:
    """The sort bucket of a streamed Kernel 1: the largest power of two up to SORT_LIMIT whose
    keys and sort buffer fit beside the columns, offsets and chunk in `free` bytes. Every
    bucket regenerates (or re-reads) the whole edge list once, so bigger buckets are faster:
    scale 28 on an 80 GB GPU takes 2^30 (9 passes), not 2^28 (33)."""
    limit = SORT_LIMIT
    while limit > 1 << 20 and streamed_kernel1_bytes(m, n, chunk, limit) > free:
        limit //= 2
    return limit


def largest_streamed_scale(free: int, edgefactor: int, chunk: int) -> int:
    """The largest Kronecker scale whose streamed Kernel 1 (with its smallest sort bucket)
    and the CSR-resident search after it fit in `free` bytes."""
    scale = 0
    while scale < 40:
        n = 2 ** (scale + 1)
        m = edgefactor * n
        search = device.CSR_BYTES_PER_EDGE * m + (device.CSR_BYTES_PER_VERTEX
                                                  + device.SEARCH_BYTES_PER_VERTEX) * n
        if max(streamed_kernel1_bytes(m, n, chunk, 1 << 20), search) > free:
            break
        scale += 1
    return scale


def csr_from_streamed(edges, n: int, sort_limit: int | None = None):
    """GPU Kernel 1 over a streamed edge list (bfs.graphs.device_edges.DeviceEdges, never
    whole on the device): one pass over its chunks counts degrees, then every sort bucket
    passes over them again and keeps its rows' keys. Same output as build_csr_gpu; the peak is
    streamed_kernel1_bytes."""
    n, m = int(n), edges.n_edges
    _check_vertices(n)
    if sort_limit is None:
        sort_limit = streamed_sort_limit(m, n, edges.chunk_edges, device.free_memory()[0])
    check_fits(streamed_kernel1_bytes(m, n, edges.chunk_edges, sort_limit),
               f"streamed GPU Kernel 1 ({m} edges, {n} vertices)",
               lambda free: largest_streamed_scale(free, max(1, m // max(n, 1)),
                                                   edges.chunk_edges))
    return _csr_from_chunks(edges.chunks, n, sort_limit, "streamed GPU Kernel 1")


def nonloop_degrees(chunks, n: int) -> np.ndarray:
    """Every vertex's undirected degree, self-loops left out (bfs.algorithms.kernel1's
    nonloop_degrees), counted on the device over the edge chunks; on the host, int64."""
    cp = require_gpu()
    deg = cp.zeros(int(n), dtype=cp.uint64)
    count = _kernel1_module().get_function("count_degrees")
    for src, dst in chunks():
        if src.size:
            count((grid_for(src.size),), (BLOCK,), (src, dst, np.int64(src.size), deg,
                                                     np.int32(0)))
    return deg.get().view(np.int64)
