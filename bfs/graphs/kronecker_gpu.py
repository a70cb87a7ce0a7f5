"""Graph500 Kronecker generator on the GPU, edge for edge identical to bfs.graphs.kronecker.

Same algorithm as the CPU generator (see bfs/graphs/kronecker.py): edge e's random stream is the seeded
MRG state skipped by e * 2^64 steps; SCALE quadrant draws (with rejection below LIMIT), the
diagonal fold, and the vertex-label scramble.

GPU layout: one thread per run of EDGES_PER_THREAD consecutive edges. A thread pays one
skip-ahead to its first edge (binary powering with bfs.graphs.prng.stride_power_table(), rows
A^(2^(64+j)), held in shared memory), then steps edge to edge with one 5x5 matrix-vector product
by row 0 (A^(2^64)). The arithmetic is bfs.graphs.prng's: mod 2^31-1 in uint64, each 62-bit product
folded below 2^32 before the five are summed, so nothing overflows. Output dtype is
id_dtype(2^scale): uint32 up to scale 32, uint64 above.
"""
from __future__ import annotations

import functools
import math

from pathlib import Path

import numpy as np

from . import prng
from ..device import load_module
from ..errors import BfsError
from .graphdir import id_dtype
from .kronecker import (VERSIONS, _SCRAMBLE_MUL0, _SCRAMBLE_MUL1, _U64, _check_args, _seed_state,
                        scramble_keys)

EDGES_PER_THREAD = 32
BLOCK = 128
MAX_TABLE_ROWS = 64


def _module():
    return load_module(Path(__file__).with_name("kronecker.cu"))


@functools.lru_cache(maxsize=None)
def _constants(seeds: tuple, n_rows: int):
    """Device copies of the skip table and seed state, plus the scramble keys."""
    from ..device import require_gpu
    cp = require_gpu()
    table = cp.asarray(np.ascontiguousarray(prng.stride_power_table(n_rows)))
    seed = cp.asarray(_seed_state(seeds))
    val0, val1 = scramble_keys(seeds)
    return table, seed, (val0, val1)


def generate_edges_gpu(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                       start: int = 0, stop: int | None = None, out=None):
    """Edges [start, stop) of the Graph500 Kronecker graph as device arrays (src, dst).

    Identical to bfs.graphs.kronecker.generate_edges(...) with the same arguments. `out`, if given,
    is a pair of device arrays of length stop - start and dtype id_dtype(2^scale) to fill
    (bench generates into slices of one big array this way); the same pair is returned.
    """
    from ..device import grid_for, require_gpu
    cp = require_gpu()
    n_total = _check_args(scale, edgefactor, version)
    stop = n_total if stop is None else stop
    if not 0 <= start <= stop <= n_total:
        raise BfsError(f"edge range [{start}, {stop}) is not inside [0, {n_total})")
    seeds = tuple(int(s) for s in seeds)
    dtype = id_dtype(2**scale)
    count = stop - start
    if out is None:
        from ..device import check_fits
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
    """generate_edges_gpu copied to host numpy arrays (drop-in for bfs.graphs.kronecker.generate_edges)."""
    src, dst = generate_edges_gpu(scale, edgefactor, seeds, version, start, stop)
    return src.get(), dst.get()


def edge_list_gpu(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                  chunk: int = 1 << 26, out=None):
    """The whole Kronecker edge list in device arrays (fresh ones, or the pair `out`),
    generated in launches of `chunk` edges (what bfs bench times as the generator rate)."""
    from ..device import check_fits, require_gpu
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

