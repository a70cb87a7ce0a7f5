"""Shared GPU plumbing: CuPy access, memory checks, device edge lists and GPU Kernel 1.

Only modules that run on the GPU import this, and it imports CuPy lazily, so a CPU run never
needs CuPy.

Memory model (what `check_fits` is told; all in bytes, m = input edges, n = vertices):

    device edge list                      8 m        (src, dst as uint32)
    Kernel 1 (sort-based CSR)            32 m + 4 m + 8 n   (2m uint64 keys, the radix sort's
                                                      equal-sized buffer, 2m uint32 columns,
                                                      int64 offsets)
    CSR kept for the searches             8 m + 8 n
    merrill search state                 8 n + 4 n + n/8 + 8 n + 8 n   (parent int64, level
                                                      int32, visited bits, two uint32 queues,
                                                      queue degrees and their scan, int64 each)

A Kronecker graph of scale s has n = 2^s and m = edgefactor * 2^s, so bench and tests state the
largest scale that fits from these per-edge / per-vertex figures (`largest_kronecker_scale`).

GPU Kernel 1 (`build_csr_gpu`): every edge (u, v) becomes the two 64-bit keys u<<32|v and v<<32|u,
a self-loop becomes the sentinel 2^64-1 (sorted to the end and cut off, so no compaction pass);
one radix sort of the keys orders them by (row, column); the low halves are the columns and a
boundary kernel writes each row's first position into the offsets. Duplicates are kept, as in
bfs.kernel1 (rows come out sorted by column, which bfs.kernel1 does not promise).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .graphdir import BfsError

# Bytes per input edge / per vertex of each stage (see the module docstring).
EDGE_LIST_BYTES_PER_EDGE = 8
KERNEL1_BYTES_PER_EDGE = 36
KERNEL1_BYTES_PER_VERTEX = 8
CSR_BYTES_PER_EDGE = 8
CSR_BYTES_PER_VERTEX = 8
SEARCH_BYTES_PER_VERTEX = 29  # 8 + 4 + 1/8 + 8 + 8 rounded up

BLOCK = 256


def cupy():
    """The cupy module, or BfsError saying how to get it."""
    try:
        import cupy as cp
    except ImportError as e:
        raise BfsError(f"the GPU backend needs CuPy (pip install cupy-cuda12x or cupy-cuda13x): "
                       f"{e}") from None
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
    "bench": the larger of the two (bench frees the edge list before searching).
    """
    n = 2 ** scale
    m = edgefactor * n
    k1 = (EDGE_LIST_BYTES_PER_EDGE + KERNEL1_BYTES_PER_EDGE) * m + KERNEL1_BYTES_PER_VERTEX * n
    search = CSR_BYTES_PER_EDGE * m + (CSR_BYTES_PER_VERTEX + SEARCH_BYTES_PER_VERTEX) * n
    return {"kernel1": k1, "search": search, "bench": max(k1, search)}[stage]


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

// Two keys per edge: u<<32|v and v<<32|u; a self-loop gives two sentinels (sorted last).
extern "C" __global__ void edge_keys(const unsigned int* __restrict__ src,
                                     const unsigned int* __restrict__ dst,
                                     i64 m, u64* __restrict__ keys)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (i64)gridDim.x * blockDim.x) {
        u64 u = src[i], v = dst[i];
        bool loop = u == v;
        keys[2 * i]     = loop ? ~0ULL : ((u << 32) | v);
        keys[2 * i + 1] = loop ? ~0ULL : ((v << 32) | u);
    }
}

// Sorted keys [0, nnz) -> columns (low halves) and offsets: offsets[r] = first i with row >= r.
extern "C" __global__ void csr_from_keys(const u64* __restrict__ keys, i64 nnz, i64 n,
                                         unsigned int* __restrict__ columns,
                                         i64* __restrict__ offsets)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i <= nnz;
         i += (i64)gridDim.x * blockDim.x) {
        i64 row = i < nnz ? (i64)(keys[i] >> 32) : n;            // n: past the last row
        i64 prev = i > 0 ? (i64)(keys[i - 1] >> 32) : -1;
        if (i < nnz) columns[i] = (unsigned int)(keys[i] & 0xFFFFFFFFULL);
        for (i64 r = prev + 1; r <= row; ++r) offsets[r] = i;     // rows prev+1..row start at i
    }
}
"""


@functools.lru_cache(maxsize=None)
def _kernel1_module():
    cp = require_gpu()
    return cp.RawModule(code=KERNEL1_SOURCE, options=("-std=c++17",))


def build_csr_gpu(src_dev, dst_dev, n: int):
    """GPU Kernel 1: device edges -> (offsets int64[n+1], columns uint32[nnz]) on the device.

    Both directions of every non-self-loop edge; duplicates kept; rows sorted by column.
    """
    cp = require_gpu()
    n = int(n)
    if n < 1 or n > 2**32:
        raise BfsError(f"GPU Kernel 1 takes 1..2^32 vertices, got {n}")
    m = int(src_dev.size)
    if int(dst_dev.size) != m:
        raise BfsError(f"edge arrays differ in length: {m} sources, {dst_dev.size} targets")
    src_dev = cp.ascontiguousarray(src_dev, dtype=cp.uint32)
    dst_dev = cp.ascontiguousarray(dst_dev, dtype=cp.uint32)
    check_fits(KERNEL1_BYTES_PER_EDGE * m + KERNEL1_BYTES_PER_VERTEX * (n + 1),
               f"GPU Kernel 1 ({m} edges, {n} vertices)",
               lambda free: largest_kronecker_scale(free + EDGE_LIST_BYTES_PER_EDGE * m,
                                                    stage="kernel1"))
    mod = _kernel1_module()
    keys = cp.empty(2 * m, dtype=cp.uint64)
    if m:
        mod.get_function("edge_keys")((grid_for(m),), (BLOCK,),
                                      (src_dev, dst_dev, np.int64(m), keys))
        keys.sort()  # CuPy: radix sort for unsigned integer keys
    # Self-loop sentinels sort last; every real key is below them (rows < 2^32 - 1 or v != u).
    nnz = int(cp.searchsorted(keys, cp.full(1, 2**64 - 1, dtype=cp.uint64))[0]) if m else 0
    columns = cp.empty(nnz, dtype=cp.uint32)
    offsets = cp.empty(n + 1, dtype=cp.int64)
    mod.get_function("csr_from_keys")((grid_for(nnz + 1),), (BLOCK,),
                                      (keys, np.int64(nnz), np.int64(n), columns, offsets))
    del keys
    cp.cuda.get_current_stream().synchronize()
    return offsets, columns
