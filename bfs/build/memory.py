"""The memory models of Kernel 1 and the refusals they make before a build starts: how many
device bytes each build holds at its peak, from the edge and vertex counts, and the largest
Kronecker scale that fits a GPU's free memory. The CSR the searches keep and their search state
(CSR_BYTES_PER_*, SEARCH_BYTES_PER_VERTEX) and the device edge list (EDGE_LIST_BYTES_PER_EDGE)
are bfs.device's rows of the model; the rows here are Kernel 1's, and the models that add a
build and the search after it up (all in bytes, m = input edges, n = vertices):

    Kernel 1 (sort-based CSR)            40 m + 16 n   (at most 2m uint64 keys, the radix
                                                      sort's equal-sized buffer, 2m uint32
                                                      columns; degrees and int64 offsets)
    streamed Kernel 1 (no list kept)      8 m + 8 n + max(8 n + 8 chunk, 16 * 2^28)
                                                      (the columns and offsets; the fill's
                                                      cursors and one chunk, or one in-place
                                                      sort bucket: streamed_kernel1_bytes)
    a grid's block and its build          grid_block_bytes (routed whole or a chunk at a time)

A Kronecker graph of scale s has n = 2^s and m = edgefactor * 2^s, so bench and tests state the
largest scale that fits from these per-edge / per-vertex figures (`largest_kronecker_scale`).
"""
from __future__ import annotations

from .. import device
from ..device import (CSR_BYTES_PER_EDGE, CSR_BYTES_PER_VERTEX, EDGE_LIST_BYTES_PER_EDGE,
                      SEARCH_BYTES_PER_VERTEX, check_fits, largest_scale)
from ..errors import BfsError

# Bytes per input edge / per vertex of the in-memory Kernel 1 (the module docstring).
KERNEL1_BYTES_PER_EDGE = 40
KERNEL1_BYTES_PER_VERTEX = 16

# Most keys one radix sort handles: below 2^31 so that 32-bit item counts in the sort library
# (CUB/Thrust builds that take int) can never overflow; scale 26 has exactly 2^31 entries.
SORT_LIMIT = 1 << 30        # fill="keys": each bucket costs a pass over the edges
RESORT_LIMIT = 1 << 28      # a sort in place (fill="scatter", rows hubs first): 4 GiB of keys and
                            # buffer; 2^30 was 2% faster at scale 26 and took 12 GiB more


def kronecker_bytes(scale: int, edgefactor: int = 16, stage: str = "bench") -> int:
    """Peak device bytes of a stage for a Kronecker graph (the model: this module's rows and
    bfs.device's).

    stage "kernel1": edge list + Kernel 1; "search": CSR + search state;
    "bench": the larger of the two (the edge list freed before searching);
    "bench-validated": Kernel 1, or the search with the edge list kept for bfs.validate.gpu.
    """
    n = 2 ** scale
    m = edgefactor * n
    k1 = (EDGE_LIST_BYTES_PER_EDGE + KERNEL1_BYTES_PER_EDGE) * m + KERNEL1_BYTES_PER_VERTEX * n
    search = CSR_BYTES_PER_EDGE * m + (CSR_BYTES_PER_VERTEX + SEARCH_BYTES_PER_VERTEX) * n
    validated = search + EDGE_LIST_BYTES_PER_EDGE * m + n   # + bfs.validate.gpu's n marks
    return {"kernel1": k1, "search": search, "bench": max(k1, search),
            "bench-validated": max(k1, validated)}[stage]


def resident_edges_bytes(m: int, n: int) -> int:
    """Peak device bytes of a one-GPU run that keeps its edge list on the device (for Kernel 1
    and bfs.validate.gpu): the list beside the in-memory Kernel 1, then beside the CSR and the
    search state (the model above, for any m and n)."""
    k1 = KERNEL1_BYTES_PER_EDGE * m + KERNEL1_BYTES_PER_VERTEX * n
    search = CSR_BYTES_PER_EDGE * m + (CSR_BYTES_PER_VERTEX + SEARCH_BYTES_PER_VERTEX + 1) * n
    return EDGE_LIST_BYTES_PER_EDGE * m + max(k1, search)


def largest_kronecker_scale(free_bytes: int, edgefactor: int = 16, stage: str = "bench") -> int:
    """Largest scale s whose stage fits in free_bytes (0 if none does)."""
    return largest_scale(lambda s: kronecker_bytes(s, edgefactor, stage), free_bytes, 40)


def streamed_kernel1_bytes(m: int, n: int, chunk: int, sort_limit: int = RESORT_LIMIT) -> int:
    """Peak device bytes of csr_gpu.csr_from_streamed: the columns (8 m: 2m uint32) and the int64
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

    Routed a chunk at a time (streamed, bfs.build.routing.RoutedBlock): beside the CSR and
    CSC only the fill's cursors (8 B a key) and one routed chunk (72 B a ROUTE_CHUNK edge), or
    one bucket of the sort in place (16 B an entry, up to RESORT_LIMIT).

    Either way, at least the search after it: the CSR and CSC with the search state, 32 B a
    row-range vertex (queue, degrees, the rows' ids and degree order) and 24 a column-range
    vertex (levels, parents, ids, head copy); what sets the largest streamed scale.

    csr False (2d-do adjacency=csc: the CSC alone): no CSR; the build counts the rows' degrees
    first (16 B a row-range vertex: this rank's and the grid row's sums), and the search
    queues the column range (44 B a column-range vertex: queue, degrees, scan, levels,
    parents, head copy) beside five row-range bitmaps (In, the push's rows found and seen,
    the hub rows whose parents the push carries, and the grid row's bitmaps of the own piece
    scattered to it: C pieces, a row range)."""
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
        return max(build, kept + 16 * row_range, kept + 44 * col_range + 5 * row_range // 8)
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
