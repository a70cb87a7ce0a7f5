"""GPU Kernel 1, CUDA in kernel1.cu: degrees by atomics (self-loops dropped), int64 offsets by
one cumsum, then the columns, filled in one of two ways (`fill`); rows come out sorted by
column either way, so the CSR's bytes are the same; duplicates are kept, as in
bfs.algorithms.kernel1.

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

With BFS_NVTX=1 each phase is an NVTX range, bfs:kernel1:<phase> (copy edges, degrees, offsets,
fill, and per bucket keys, sort, columns; bfs.nvtx).
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

SORT_LIMIT = 1 << 30        # fill="keys": each bucket costs a pass over the edges
RESORT_LIMIT = 1 << 28      # a sort in place (fill="scatter", rows hubs first): 4 GiB of keys and
                            # buffer; 2^30 was 2% faster at scale 26 and took 12 GiB more


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
        return degree_sum(self.offsets_out, self.level) // 2


def degree_sum(offsets, level, at_level: int = -1) -> int:
    """The summed degree (offsets: a device CSR's, int64) of the vertices at level at_level
    (-1: every reached vertex) of a search's int32 level array: kernel1.cu's reached_degrees,
    no n-entry temporaries."""
    cp = require_gpu()
    if offsets.dtype != cp.int64 or level.dtype != cp.int32:
        hit = level >= 0 if at_level < 0 else level == at_level
        return int(cp.sum(cp.diff(offsets)[hit]))
    total = cp.zeros(1, cp.uint64)
    n = int(level.size)
    _kernel1_module().get_function("reached_degrees")(
        (min(grid_for(n), 8 * device.sm_count()),), (BLOCK,),
        (offsets, level, np.int64(n), np.int32(at_level), total))
    return int(total.get()[0])


LEVEL_BINS_SHARED = 12 * 1024    # level_sizes' bins in 48 KiB of shared memory


def level_sizes(level) -> np.ndarray:
    """The vertex count of each level 0..depth of a search's int32 level array on the device
    (-1: unreached), as a host int64 array: kernel1.cu's level_sizes, no n-entry temporaries.
    A search deeper than LEVEL_BINS_SHARED levels (a long path) takes cupy's bincount."""
    cp = require_gpu()
    n = int(level.size)
    depth = int(level.max()) if n else -1
    if depth < 0:
        return np.zeros(0, np.int64)
    bins = depth + 1
    if bins > LEVEL_BINS_SHARED or level.dtype != cp.int32:
        return cp.bincount(level[level >= 0], minlength=bins).get().astype(np.int64)
    sizes = cp.zeros(bins, cp.uint64)
    _kernel1_module().get_function("level_sizes")(
        (min(grid_for(n), 8 * device.sm_count()),), (BLOCK,),
        (level, np.int64(n), np.int32(bins), sizes), shared_mem=4 * bins)
    return sizes.get().astype(np.int64)


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
        # the CSR is this searcher's alone: one that re-sorts rows may do it in place
        owned = {"own_csr": True} if getattr(searcher, "sorts_rows_in_place", False) else {}
        return searcher(offsets, columns, **owned, **ctx.options)

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


def streamed_kernel1_bytes(m: int, n: int, chunk: int, sort_limit: int = RESORT_LIMIT) -> int:
    """Peak device bytes of csr_from_streamed: the columns (8 m: 2m uint32) and the int64
    offsets (8 n) throughout; beside them, during the fill, the rows' cursors (8 n) and one
    chunk of edges (8 chunk), and during the sort one bucket of keys and the sort's buffer
    (16 sort_limit). No edge list is kept."""
    csr = 8 * (n + 1) + 8 * m
    return csr + max(8 * n + 8 * chunk, 16 * min(sort_limit, 2 * m))


def streamed_sort_limit(m: int, n: int, chunk: int, free: int) -> int:
    """The sort bucket of a streamed Kernel 1: the largest power of two up to RESORT_LIMIT
    whose keys and sort buffer fit beside the CSR in `free` bytes (the edges are not passed
    over again per bucket, so a smaller bucket costs little)."""
    limit = RESORT_LIMIT
    while limit > 1 << 20 and streamed_kernel1_bytes(m, n, chunk, limit) > free:
        limit //= 2
    return limit


def largest_streamed_scale(free: int, edgefactor: int, chunk: int) -> int:
    """The largest Kronecker scale whose streamed Kernel 1 (with its smallest sort bucket; its
    generator's chunk of `chunk` edges, or the whole list where that is smaller) and the
    CSR-resident search after it fit in `free` bytes."""
    def bytes_at(scale):
        n = 2 ** scale
        m = edgefactor * n
        search = device.CSR_BYTES_PER_EDGE * m + (device.CSR_BYTES_PER_VERTEX
                                                  + device.SEARCH_BYTES_PER_VERTEX) * n
        return max(streamed_kernel1_bytes(m, n, min(chunk, m), 1 << 20), search)

    return device.largest_scale(bytes_at, free, 40)


ROUTE_CHUNK = 1 << 24   # input edges a rank routes at a time where its block is streamed: the
                       # chunk's generated, packed, received and local ids, ~72 B an edge


def grid_block_bytes(n: int, m: int, rows: int, cols: int, csc: bool,
                     streamed: bool = False, csr: bool = True) -> int:
    """At least the device bytes one rank of a rows x cols grid holds while it builds its
    block (2d, 2d-do, 1d and the semiring search on the GPU) of a graph of n vertices and m
    input edges, an average block of 2m / (rows cols) directed entries, into the block CSR's
    columns (4 B an entry) and offsets (8 a row-range vertex) and, with csc (2d-do), the block
    CSC's (4 an entry, 8 a column-range vertex).

    The routed block whole (streamed False): beside them the routed ids (8 B an entry), their
    padded local ids (8) and one sort bucket (16 B an entry, up to SORT_LIMIT). A lower bound:
    the measured pool peaks are above it (BENCHMARKS.md: 48 B an entry at scale 26 on 1x2 and
    1x4, where this gives 41 and 41; 74 GiB at scale 27 on 1x2, where it gives 65.5).

    Routed a chunk at a time (streamed, bfs.harness.generated.RoutedBlock): beside the CSR and
    CSC only the fill's cursors (8 B a key) and one routed chunk (72 B a ROUTE_CHUNK edge), or
    one bucket of the sort in place (16 B an entry, up to RESORT_LIMIT).

    Either way, at least the search after it: the CSR and CSC with the search state, 32 B a
    row-range vertex (queue, degrees, the rows' ids and degree order) and 24 a column-range
    vertex (levels, parents, ids, head copy); what sets the largest streamed scale.

    csr False (2d-do adjacency=csc: the CSC alone): no CSR; the build counts the rows' degrees
    first (16 B a row-range vertex: this rank's and the grid row's sums), and the search
    queues the column range (44 B a column-range vertex: queue, degrees, scan, levels,
    parents, head copy) beside four row-range bitmaps."""
    entries = 2 * m // (rows * cols)
    row_range, col_range = -(-n // rows), -(-n // cols)
    kept = (((4 if csr else 0) + (4 if csc else 0)) * entries
            + 8 * ((row_range if csr else 0) + (col_range if csc else 0)))
    if streamed:
        build = kept + max(8 * max(row_range, col_range) + 72 * min(ROUTE_CHUNK, m),
                           16 * min(entries, RESORT_LIMIT))
    else:
        build = kept + 16 * entries + 16 * min(entries, SORT_LIMIT)
    if not csr:
        return max(build, kept + 16 * row_range, kept + 44 * col_range + row_range // 2)
    return max(build, kept + 32 * row_range + 24 * col_range)


def largest_grid_scale(free: int, edgefactor: int, rows: int, cols: int, csc: bool,
                       streamed: bool = False, csr: bool = True) -> int:
    """The largest Kronecker scale whose grid_block_bytes fits in `free` bytes a GPU."""
    return device.largest_scale(
        lambda s: grid_block_bytes(2 ** s, edgefactor * 2 ** s, rows, cols, csc, streamed, csr),
        free)


EDGE_LISTS = ("auto", "device", "stream")   # --edge-list: where a grid's routed block lives


def grid_build(algorithm: str, n: int, m: int, rows: int, cols: int,
               edge_list: str = "auto", adjacency: str = "both") -> str:
    """How this rank builds its block on its GPU, before anything is generated or routed:
    "device" (the routed block whole on the device: fastest) or "stream" (routed again chunk
    by chunk for each pass: what the largest scales need). edge_list "auto" takes "device"
    where grid_block_bytes says it fits in this GPU's free bytes, else "stream". BfsError
    where even the chosen build does not fit: it names the need, the free memory and the
    largest scale the grid holds either way. 2d-do builds a CSC too, and with
    adjacency=csc the CSC alone."""
    if edge_list not in EDGE_LISTS:
        raise BfsError(f"--edge-list {edge_list!r}: choose one of {', '.join(EDGE_LISTS)}")
    csc = algorithm == "2d-do"
    csr = not (csc and adjacency == "csc")
    if edge_list == "auto":
        edge_list = ("device" if grid_block_bytes(n, m, rows, cols, csc, False, csr)
                     <= device.free_memory()[0] else "stream")
    streamed = edge_list == "stream"
    edgefactor = max(1, m // max(n, 1))
    check_fits(grid_block_bytes(n, m, rows, cols, csc, streamed, csr),
               f"{algorithm} on a {rows}x{cols} grid ({n} vertices, {m} edges, the routed "
               f"block {'a chunk at a time' if streamed else 'whole'}): each rank's block "
               f"and its build, at least,",
               lambda f: f"{largest_grid_scale(f, edgefactor, rows, cols, csc, False, csr)} "
                         f"on this {rows}x{cols} grid with the routed block whole, "
                         f"{largest_grid_scale(f, edgefactor, rows, cols, csc, True, csr)} routed a "
                         f"chunk at a time (--edge-list stream; auto streams where the block "
                         f"does not fit whole); a wider grid holds more")
    return edge_list


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
