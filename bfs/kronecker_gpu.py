"""Graph500 Kronecker generator on the GPU, edge for edge identical to bfs.kronecker.

Same algorithm as the CPU generator (see bfs/kronecker.py): edge e's random stream is the seeded
MRG state skipped by e * 2^64 steps; SCALE quadrant draws (with rejection below LIMIT), the
diagonal fold, and the vertex-label scramble.

GPU layout: one thread per run of EDGES_PER_THREAD consecutive edges. A thread pays one
skip-ahead to its first edge (binary powering with bfs.prng.stride_power_table(), rows
A^(2^(64+j)), held in shared memory), then steps edge to edge with one 5x5 matrix-vector product
by row 0 (A^(2^64)). The arithmetic is bfs.prng's: mod 2^31-1 in uint64, each 62-bit product
folded below 2^32 before the five are summed, so nothing overflows. Output dtype is
id_dtype(2^scale): uint32 up to scale 32, uint64 above.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import prng
from .graphdir import BfsError, id_dtype
from .kronecker import (VERSIONS, _SCRAMBLE_MUL0, _SCRAMBLE_MUL1, _U64, _check_args,
                        _seed_state, scramble_keys)

EDGES_PER_THREAD = 32
BLOCK = 128
MAX_TABLE_ROWS = 64

SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;

#define MODULUS 0x7FFFFFFFULL
#define MAX_ROWS 64

__device__ __forceinline__ u64 mod_m(u64 x) {          // x < 2^61
    x = (x & MODULUS) + (x >> 31);
    return x >= MODULUS ? x - MODULUS : x;
}

struct State { u64 z[5]; };

__device__ __forceinline__ State step(State s) {
    State t;
    t.z[0] = mod_m(s.z[0] * 107374182ULL + s.z[4] * 104480ULL);
    t.z[1] = s.z[0]; t.z[2] = s.z[1]; t.z[3] = s.z[2]; t.z[4] = s.z[3];
    return t;
}

__device__ __forceinline__ State mat_vec(const u64* mat, const State& s) {
    State t;
#pragma unroll
    for (int i = 0; i < 5; ++i) {
        u64 acc = 0;
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            u64 p = mat[i * 5 + k] * s.z[k];
            acc += (p & MODULUS) + (p >> 31);
        }
        t.z[i] = mod_m(acc);
    }
    return t;
}

__device__ __forceinline__ u64 scramble(u64 v, int label_shift, u64 key_sum, u64 mul0, u64 mul1) {
    v = (v + key_sum) * mul0;
    v = (__brevll(v) >> label_shift) * mul1;
    return __brevll(v) >> label_shift;
}

template <typename T>
__device__ void kron_edges(const u64* __restrict__ table, int n_rows, const u64* __restrict__ seed,
                           u64 start, i64 n_edges, int per_thread, int scale, u64 limit,
                           u64 key_sum, u64 mul0, u64 mul1, T* __restrict__ src_out,
                           T* __restrict__ dst_out)
{
    __shared__ u64 tab[MAX_ROWS * 25];
    for (int i = threadIdx.x; i < n_rows * 25; i += blockDim.x) tab[i] = table[i];
    __syncthreads();
    const int label_shift = 64 - scale;
    const i64 n_threads = (n_edges + per_thread - 1) / per_thread;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < n_threads;
         t += (i64)gridDim.x * blockDim.x) {
        i64 lo = t * per_thread;
        i64 hi = lo + per_thread < n_edges ? lo + per_thread : n_edges;
        // skip the seed by (start + lo) * 2^64 steps
        State z;
        for (int k = 0; k < 5; ++k) z.z[k] = seed[k];
        u64 count = start + (u64)lo;
        for (int j = 0; count != 0 && j < n_rows; ++j, count >>= 1)
            if (count & 1ULL) z = mat_vec(tab + j * 25, z);
        for (i64 e = lo; e < hi; ++e) {
            State w = z;
            u64 s = 0, d = 0;
            for (int level = 0; level < scale; ++level) {
                w = step(w);
                while (w.z[0] < limit) w = step(w);
                unsigned int r = (unsigned int)w.z[0] % 10000u;
                bool is_d = r >= 9500u;
                bool sbit = (r >= 1900u && r < 3800u) || is_d;
                bool dbit = r < 1900u || is_d;
                bool flip = (s == d) && sbit && !dbit;   // (1,0) on the diagonal -> (0,1)
                s = (s << 1) | (u64)(sbit != flip);
                d = (d << 1) | (u64)(dbit != flip);
            }
            src_out[e] = (T)scramble(s, label_shift, key_sum, mul0, mul1);
            dst_out[e] = (T)scramble(d, label_shift, key_sum, mul0, mul1);
            z = mat_vec(tab, z);                           // next edge: A^(2^64)
        }
    }
}

extern "C" __global__ void kron_edges_u32(const u64* table, int n_rows, const u64* seed, u64 start,
        i64 n_edges, int per_thread, int scale, u64 limit, u64 key_sum, u64 mul0, u64 mul1,
        unsigned int* src_out, unsigned int* dst_out)
{
    kron_edges<unsigned int>(table, n_rows, seed, start, n_edges, per_thread, scale, limit,
                             key_sum, mul0, mul1, src_out, dst_out);
}

extern "C" __global__ void kron_edges_u64(const u64* table, int n_rows, const u64* seed, u64 start,
        i64 n_edges, int per_thread, int scale, u64 limit, u64 key_sum, u64 mul0, u64 mul1,
        u64* src_out, u64* dst_out)
{
    kron_edges<u64>(table, n_rows, seed, start, n_edges, per_thread, scale, limit,
                    key_sum, mul0, mul1, src_out, dst_out);
}
"""


@functools.lru_cache(maxsize=None)
def _module():
    from .gpu import require_gpu
    cp = require_gpu()
    return cp.RawModule(code=SOURCE, options=("-std=c++17",))


@functools.lru_cache(maxsize=None)
def _constants(seeds: tuple, n_rows: int):
    """Device copies of the skip table and seed state, plus the scramble keys."""
    from .gpu import require_gpu
    cp = require_gpu()
    table = cp.asarray(np.ascontiguousarray(prng.stride_power_table(n_rows)))
    seed = cp.asarray(_seed_state(seeds))
    val0, val1 = scramble_keys(seeds)
    return table, seed, (val0, val1)


def generate_edges_gpu(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                       start: int = 0, stop: int | None = None, out=None):
    """Edges [start, stop) of the Graph500 Kronecker graph as device arrays (src, dst).

    Identical to bfs.kronecker.generate_edges(...) with the same arguments. `out`, if given,
    is a pair of device arrays of length stop - start and dtype id_dtype(2^scale) to fill
    (bench generates into slices of one big array this way); the same pair is returned.
    """
    from .gpu import grid_for, require_gpu
    cp = require_gpu()
    n_total = _check_args(scale, edgefactor, version)
    stop = n_total if stop is None else stop
    if not 0 <= start <= stop <= n_total:
        raise BfsError(f"edge range [{start}, {stop}) is not inside [0, {n_total})")
    seeds = tuple(int(s) for s in seeds)
    dtype = id_dtype(2**scale)
    count = stop - start
    if out is None:
        from .gpu import check_fits
        check_fits(2 * count * dtype.itemsize, f"Kronecker edges [{start}, {stop})")
        src = cp.empty(count, dtype=dtype)
        dst = cp.empty(count, dtype=dtype)
    else:
        src, dst = out
        if src.shape != (count,) or dst.shape != (count,) or src.dtype != dtype \
                or dst.dtype != dtype or not (src.flags.c_contiguous and dst.flags.c_contiguous):
            raise BfsError(f"out arrays must be contiguous {dtype} of length {count}")
    if count == 0:
        return src, dst
    n_rows = max(1, math.ceil(math.log2(n_total + 1)))  # covers every edge index below n_total
    if n_rows > MAX_TABLE_ROWS:
        raise BfsError(f"{n_total} edges need a {n_rows}-row skip table (limit {MAX_TABLE_ROWS})")
    table, seed, (val0, val1) = _constants(seeds, n_rows)
    kernel = _module().get_function("kron_edges_u32" if dtype == np.uint32 else "kron_edges_u64")
    n_threads = -(-count // EDGES_PER_THREAD)
    kernel((grid_for(n_threads, BLOCK),), (BLOCK,),
           (table, np.int32(n_rows), seed, np.uint64(start), np.int64(count),
            np.int32(EDGES_PER_THREAD), np.int32(scale), np.uint64(VERSIONS[version]),
            np.uint64((val0 + val1) & _U64), np.uint64(val0 | _SCRAMBLE_MUL0),
            np.uint64(val1 | _SCRAMBLE_MUL1), src, dst))
    return src, dst


def generate_edges_host(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                        start: int = 0, stop: int | None = None):
    """generate_edges_gpu copied to host numpy arrays (drop-in for bfs.kronecker.generate_edges)."""
    src, dst = generate_edges_gpu(scale, edgefactor, seeds, version, start, stop)
    return src.get(), dst.get()


def edge_list_gpu(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                  chunk: int = 1 << 26, out=None):
    """The whole Kronecker edge list in device arrays (fresh ones, or the pair `out`),
    generated in launches of `chunk` edges (what bfs bench times as the generator rate)."""
    from .gpu import check_fits, require_gpu
    cp = require_gpu()
    m = _check_args(scale, edgefactor, version)
    dtype = id_dtype(2**scale)
    if out is None:
        check_fits(2 * m * dtype.itemsize, f"the Kronecker edge list of scale {scale}")
        out = cp.empty(m, dtype=dtype), cp.empty(m, dtype=dtype)
    src, dst = out
    for lo in range(0, m, chunk):
        hi = min(lo + chunk, m)
        generate_edges_gpu(scale, edgefactor, seeds, version, lo, hi, out=(src[lo:hi], dst[lo:hi]))
    return src, dst

