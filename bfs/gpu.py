"""Shared GPU plumbing: CuPy access, memory checks, device edge lists and GPU Kernel 1.

Only modules that run on the GPU import this, and it imports CuPy lazily, so a CPU run never
needs CuPy.

Memory model (what `check_fits` is told; all in bytes, m = input edges, n = vertices):

    device edge list                      8 m        (src, dst as uint32)
    Kernel 1 (sort-based CSR)            40 m + 16 n   (at most 2m uint64 keys, the radix
                                                      sort's equal-sized buffer, 2m uint32
                                                      columns; degrees and int64 offsets)
    CSR kept for the searches             8 m + 8 n
    merrill search state                 8 n + 4 n + n/8 + 8 n + 8 n   (parent int64, level
                                                      int32, visited bits, two uint32 queues,
                                                      queue degrees and their scan, int64 each)
                                          + 8 nnz/1024  (merrill's tile starts) and, for
                                                      merrill-do, n/4 (two frontier bitmaps)

A Kronecker graph of scale s has n = 2^s and m = edgefactor * 2^s, so bench and tests state the
largest scale that fits from these per-edge / per-vertex figures (`largest_kronecker_scale`).

GPU Kernel 1 (`build_csr_gpu`), sort-based: degrees by atomics (self-loops dropped), int64
offsets by one cumsum; the rows are cut into buckets of at most 2^30 directed entries (one bucket
below scale 25; scale 26 has 2^31 entries, past what a sort library with 32-bit item counts
takes); per bucket the keys row<<32|col of both directions of every edge are appended (one
atomicAdd per warp), radix-sorted (CuPy's sort) and their low halves written at the bucket's
offset. Rows come out sorted by column; duplicates are kept, as in bfs.kernel1.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .graphdir import BfsError

# Bytes per input edge / per vertex of each stage (see the module docstring).
EDGE_LIST_BYTES_PER_EDGE = 8
KERNEL1_BYTES_PER_EDGE = 40
KERNEL1_BYTES_PER_VERTEX = 16
CSR_BYTES_PER_EDGE = 8
CSR_BYTES_PER_VERTEX = 8
SEARCH_BYTES_PER_VERTEX = 29  # 8 + 4 + 1/8 + 8 + 8 rounded up

BLOCK = 256


def cupy():
    """The cupy module, or BfsError saying how to get it."""
    try:
        import cupy as cp
    except ImportError as e:
        raise BfsError("the GPU backend needs CuPy (pip install 'bfs[gpu]', i.e. cupy-cuda13x; "
                       f"cupy-cuda12x on a CUDA 12 driver): {e}") from None
    return cp


def require_gpu():
    """CuPy with at least one visible CUDA device, or a BfsError that says which is missing."""
    cp = cupy()
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError: no driver, no device
        raise BfsError(f"no usable CUDA GPU: {e}") from None
    if count < 1:
        raise BfsError("no CUDA GPU is visible to this process (CuPy found none)")
    return cp


def gpu_usable() -> bool:
    try:
        require_gpu()
        return True
    except BfsError:
        return False


def kronecker_bytes(scale: int, edgefactor: int = 16, stage: str = "bench") -> int:
    """Peak device bytes of a stage for a Kronecker graph (the module docstring's model).

    stage "kernel1": edge list + Kernel 1; "search": CSR + search state;
    "bench": the larger of the two (the edge list freed before searching);
    "bench-validated": Kernel 1, or the search with the edge list kept for bfs.validate_gpu.
    """
    n = 2 ** scale
    m = edgefactor * n
    k1 = (EDGE_LIST_BYTES_PER_EDGE + KERNEL1_BYTES_PER_EDGE) * m + KERNEL1_BYTES_PER_VERTEX * n
    search = CSR_BYTES_PER_EDGE * m + (CSR_BYTES_PER_VERTEX + SEARCH_BYTES_PER_VERTEX) * n
    validated = search + EDGE_LIST_BYTES_PER_EDGE * m + n   # + bfs.validate_gpu's n marks
    return {"kernel1": k1, "search": search, "bench": max(k1, search),
            "bench-validated": max(k1, validated)}[stage]


def largest_kronecker_scale(free_bytes: int, edgefactor: int = 16, stage: str = "bench") -> int:
    """Largest scale s whose stage fits in free_bytes (0 if none does)."""
    s = 0
    while s < 40 and kronecker_bytes(s + 1, edgefactor, stage) <= free_bytes:
        s += 1
    return s


def free_memory() -> tuple[int, int]:
    cp = cupy()
    free, total = cp.cuda.runtime.memGetInfo()
    # CuPy's pool holds freed blocks that cudaMemGetInfo counts as used: they are ours to reuse.
    pool = cp.get_default_memory_pool()
    return int(free) + int(pool.free_bytes()), int(total)


def check_fits(bytes_needed: int, what: str, largest_scale_fn=None) -> None:
    """BfsError naming both numbers (and the largest scale that fits) if the GPU lacks memory."""
    free, total = free_memory()
    if bytes_needed <= free:
        return
    msg = (f"{what} needs {bytes_needed / 2**30:.2f} GiB of GPU memory "
           f"({bytes_needed} bytes); the GPU has {free / 2**30:.2f} GiB free "
           f"({free} bytes) of {total / 2**30:.2f} GiB")
    if largest_scale_fn is not None:
        msg += f"; the largest Kronecker scale that fits is {largest_scale_fn(free)}"
    raise BfsError(msg)


def to_device_edges(src: np.ndarray, dst: np.ndarray):
    """Host edge arrays -> device uint32 arrays (the ids every GPU kernel here takes)."""
    cp = require_gpu()
    if len(src) != len(dst):
        raise BfsError(f"edge arrays differ in length: {len(src)} sources, {len(dst)} targets")
    if len(src) and max(int(np.max(src)), int(np.max(dst))) >= 2**32:
        raise BfsError("the GPU backend takes vertex ids below 2^32")
    check_fits(EDGE_LIST_BYTES_PER_EDGE * len(src), f"the edge list ({len(src)} edges)")
    return (cp.asarray(np.ascontiguousarray(src, dtype=np.uint32)),
            cp.asarray(np.ascontiguousarray(dst, dtype=np.uint32)))


def read_edges_to_device(graph_dir, batch_rows: int = 1 << 22):
    """A graph directory's edge list into device uint32 arrays (src, dst), batch by batch of
    Parquet row groups through two pinned host buffers: each batch's copy to the device runs
    while the next is decoded, and the host never holds the whole list."""
    cp = require_gpu()
    import cupyx

    from .graphdir import iter_edge_batches, read_meta
    meta = read_meta(graph_dir)
    n, m = meta.n_vertices, meta.n_edges
    if n > 2**32:
        raise BfsError(f"{graph_dir}: {n} vertices; the GPU backend takes ids below 2^32")
    check_fits(EDGE_LIST_BYTES_PER_EDGE * m, f"the edge list of {graph_dir} ({m} edges)")
    src_d = cp.empty(m, cp.uint32)
    dst_d = cp.empty(m, cp.uint32)
    staging = [cupyx.empty_pinned((2, batch_rows), np.uint32) for _ in range(2)]
    done = [None, None]              # the event after each buffer's last copy
    stream = cp.cuda.Stream(non_blocking=True)
    pos = 0
    for k, (src, dst) in enumerate(iter_edge_batches(graph_dir, batch_rows)):
        buf, size = staging[k % 2], len(src)
        if pos + size > m:
            raise BfsError(f"{graph_dir}: the edge files hold more than the {m} edges "
                           f"graph.json declares")
        if done[k % 2] is not None:
            done[k % 2].synchronize()   # the copy that last read this buffer has finished
        buf[0, :size] = src
        buf[1, :size] = dst
        src_d[pos:pos + size].set(buf[0, :size], stream=stream)
        dst_d[pos:pos + size].set(buf[1, :size], stream=stream)
        done[k % 2] = stream.record()
        pos += size
    stream.synchronize()
    if pos != m:
        raise BfsError(f"{graph_dir}: graph.json says {m} edges, the edge files hold {pos}")
    return src_d, dst_d


def nonloop_degrees_device(src_d, dst_d, n: int) -> np.ndarray:
    """Undirected degree of every vertex, self-loops excluded (bfs.kernel1.nonloop_degrees),
    counted on the device; returned on the host for root selection."""
    cp = require_gpu()
    keep = src_d != dst_d
    return (cp.bincount(src_d[keep], minlength=n)
            + cp.bincount(dst_d[keep], minlength=n)).get().astype(np.int64)


def grid_for(n_items: int, block: int = BLOCK, per_thread: int = 1) -> int:
    """Blocks for n_items with grid-stride loops: capped, so > 2^31 items still launch."""
    blocks = max(1, math.ceil(n_items / (block * per_thread)))
    return min(blocks, sm_count() * 32)


@functools.lru_cache(maxsize=None)
def sm_count() -> int:
    cp = require_gpu()
    dev = cp.cuda.Device()
    return int(dev.attributes["MultiProcessorCount"])


KERNEL1_SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// Undirected degree of every vertex, self-loops excluded (2 atomics per non-loop edge).
extern "C" __global__ void count_degrees(const u32* __restrict__ src, const u32* __restrict__ dst,
                                         i64 m, u64* __restrict__ deg)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 u = src[i], v = dst[i];
        if (u != v) { atomicAdd(deg + u, 1ULL); atomicAdd(deg + v, 1ULL); }
    }
}

// Keys row<<32|col of the directed entries whose row is in [r0, r1), appended (in any order)
// at keys[*count...] with one atomicAdd per warp and step. Every thread of a warp runs the
// same number of steps (the loop bound is block-uniform), as the ballots need.
extern "C" __global__ void bucket_keys(const u32* __restrict__ src, const u32* __restrict__ dst,
                                       i64 m, u64 r0, u64 r1, u64* __restrict__ keys,
                                       u64* count)
{
    const u32 lane = threadIdx.x & 31;
    for (i64 b = (i64)blockIdx.x * blockDim.x; b < m; b += (i64)gridDim.x * blockDim.x) {
        const i64 i = b + threadIdx.x;
        u64 u = 0, v = 0;
        bool e1 = false, e2 = false;
        if (i < m) {
            u = src[i]; v = dst[i];
            if (u != v) {
                e1 = u >= r0 && u < r1;       // entry u -> v
                e2 = v >= r0 && v < r1;       // entry v -> u
            }
        }
        const u32 m1 = __ballot_sync(0xFFFFFFFFu, e1), m2 = __ballot_sync(0xFFFFFFFFu, e2);
        const u32 total = __popc(m1) + __popc(m2);
        u64 base = 0;
        if (lane == 0 && total) base = atomicAdd(count, (u64)total);
        base = __shfl_sync(0xFFFFFFFFu, base, 0);
        const u32 below = (1u << lane) - 1u;
        if (e1) keys[base + __popc(m1 & below)] = (u << 32) | v;
        if (e2) keys[base + __popc(m1) + __popc(m2 & below)] = (v << 32) | u;
    }
}

// columns[i] = low 32 bits of keys[i] (the sorted bucket's column ids).
extern "C" __global__ void low_words(const u64* __restrict__ keys, i64 count,
                                     u32* __restrict__ columns)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (i64)gridDim.x * blockDim.x)
        columns[i] = (u32)(keys[i] & 0xFFFFFFFFULL);
}
"""

# Most keys one radix sort handles: below 2^31 so that 32-bit item counts in the sort library
# (CUB/Thrust builds that take int) can never overflow; scale 26 has exactly 2^31 entries.
SORT_LIMIT = 1 << 30


@functools.lru_cache(maxsize=None)
def _kernel1_module():
    cp = require_gpu()
    return cp.RawModule(code=KERNEL1_SOURCE, options=("-std=c++17",))


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


def low_words(keys, out) -> None:
    """out[i] = the low 32 bits of keys[i] (sorted row<<32|column keys -> CSR columns)."""
    if keys.size:
        _kernel1_module().get_function("low_words")((grid_for(keys.size),), (BLOCK,),
                                                    (keys, np.int64(keys.size), out))


def _check_vertices(n: int) -> None:
    if n < 1 or n > 2**32:
        raise BfsError(f"GPU Kernel 1 takes 1..2^32 vertices, got {n}")


def _csr_from_chunks(edge_chunks, n: int, sort_limit: int, what: str):
    """The Kernel 1 passes over edge_chunks() (a callable yielding device uint32 (src, dst)
    pairs, the same edges each call): degrees in one pass, then one pass per row bucket."""
    cp = require_gpu()
    mod = _kernel1_module()
    deg = cp.zeros(n, dtype=cp.uint64)
    for src, dst in edge_chunks():
        if src.size:
            mod.get_function("count_degrees")((grid_for(src.size),), (BLOCK,),
                                              (src, dst, np.int64(src.size), deg))
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
                                                 np.uint64(r1), keys, count))
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
        got = fill_bucket(r0, r1, keys)
        if got != want:  # cannot happen unless the device misbehaves: never return junk
            raise BfsError(f"{what}: rows [{r0}, {r1}) produced {got} entries, "
                           f"their degrees say {want}")
        part = keys[:want]
        part.sort()  # CuPy: radix sort for unsigned integer keys
        base = int(offsets_h[r0])
        low_words(part, columns[base:base + want])
        del part
    del keys


def streamed_kernel1_bytes(m: int, n: int, chunk: int, sort_limit: int = SORT_LIMIT) -> int:
    """Peak device bytes of build_csr_streamed: degrees and offsets (16 n), the columns (8 m:
    2m uint32), one chunk of edges (8 chunk), one bucket of keys and the sort's buffer
    (16 sort_limit). No edge list is kept."""
    return 16 * (n + 1) + 8 * m + 8 * chunk + 16 * min(sort_limit, 2 * m)


def build_csr_streamed(generate, m: int, n: int, chunk: int, sort_limit: int = SORT_LIMIT):
    """GPU Kernel 1 without the edge list in memory: generate(lo, hi, (src, dst)) fills device
    uint32 arrays with edges [lo, hi) (deterministically: it is called again per bucket).
    Pass 1 counts degrees chunk by chunk; then per bucket of rows every chunk is regenerated
    and its keys appended, the bucket sorted and written. Same output as build_csr_gpu; the
    peak is streamed_kernel1_bytes (scale 28: ~51 GiB instead of the ~196 GiB model of an edge
    list plus build_csr_gpu)."""
    cp = require_gpu()
    n, m = int(n), int(m)
    _check_vertices(n)
    check_fits(streamed_kernel1_bytes(m, n, chunk, sort_limit),
               f"streamed GPU Kernel 1 ({m} edges, {n} vertices)")
    src = cp.empty(min(chunk, max(m, 1)), cp.uint32)
    dst = cp.empty_like(src)

    def regenerated():
        for lo in range(0, m, chunk):
            k = min(lo + chunk, m) - lo
            generate(lo, lo + k, (src[:k], dst[:k]))
            yield src[:k], dst[:k]

    return _csr_from_chunks(regenerated, n, sort_limit, "streamed GPU Kernel 1")
