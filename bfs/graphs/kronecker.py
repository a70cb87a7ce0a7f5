# Graph500 Kronecker (R-MAT) edge generator, bit-identical to the reference implementation
# (graph500 3.0.x `generator/graph_generator.c`, and 2.1.4 where its rejection limit differs).
#
# Algorithm: edge ei of edgefactor * 2^SCALE has its own random stream, the seeded MRG state
# skipped by ei * 2^64 steps. For each of the SCALE levels, most significant bit first, one
# draw (rejecting draws below LIMIT so that `v % 10000` is unbiased) picks a quadrant with
# probabilities A=0.57, B=0.19, C=0.19, D=0.05; on the diagonal the (1,0) quadrant is
# folded onto (0,1). Both endpoints then go through a fixed bijection of [0, 2^SCALE)
# (add, multiply, bit-reverse the low SCALE bits, twice) keyed by two values drawn far
# down the stream, so vertex ids carry no locality. Self-loops and duplicates stay.
#
# Tricks: edges are generated in blocks, one per parallel task; a block pays a single
# skip-ahead (binary powering with the table A^(2^(64+j))) and then walks through its edges
# two at a time, each pair member stepping by A^(2^65) with one 5x5 matrix-vector product,
# so any [start, stop) range is cheap and blocks are independent. Two edges run side by side
# because each edge's draws form one serial chain of multiplies. The quadrant choice is
# branch-free because its outcome is random and a mispredicted branch per level would cost
# more than the arithmetic.
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numba
import numpy as np

from . import prng
from ..errors import BfsError
from .graphdir import EdgeWriter, GraphMeta, atomic_dir, id_dtype, write_meta

VERSIONS = {"3.0": 3647, "2.1.4": 7295}  # rejection LIMIT: 0x7FFFFFFF % 10000 in 3.0.x
MAX_SCALE = 40
BLOCK_EDGES = 4096  # one skip-ahead per block; small enough to balance two threads

# Quadrant thresholds on v % 10000: (0,1) below B, (1,0) below B+C, (0,0) below A+B+C.
# uint32 because draws are below 2^31 and 32-bit remainders are cheaper.
_QUAD_B = np.uint32(1900)
_QUAD_BC = np.uint32(3800)
_QUAD_ABC = np.uint32(9500)
_PERCENT_BASE = np.uint32(10000)

_SCRAMBLE_MUL0 = 0x4519840211493211
_SCRAMBLE_MUL1 = 0x3050852102C843A5
_SCRAMBLE_KEY_SKIP = 50 * 2**128 + 7 * 2**64
_U64 = 2**64 - 1

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_SWAP_MASKS = tuple(np.uint64(m) for m in (
    0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
    0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF))
_SWAP_SHIFTS = tuple(np.uint64(s) for s in (1, 2, 4, 8, 16))
_HALF_SHIFT = np.uint64(32)


def scramble_keys(seeds=(2, 3)) -> tuple[int, int]:
    """(val0, val1): the keys of the vertex-label bijection, drawn at 50*2^128 + 7*2^64."""
    state = prng.skip(_seed_state(seeds), _SCRAMBLE_KEY_SKIP)
    u1, u2, u3, u4 = (int(v) for v in prng.draws(state, 4)[0])
    return (u1 * 0xFFFFFFFF + u2) & _U64, (u3 * 0xFFFFFFFF + u4) & _U64


def _seed_state(seeds) -> np.ndarray:
    try:
        u1, u2 = (int(s) for s in seeds)
        return prng.seed_state(u1, u2)
    except (TypeError, ValueError) as e:
        raise BfsError(f"seeds must be two integers in [0, 2^64): {seeds!r} ({e})") from None


@numba.njit(cache=True)
def _bitreverse64(v):
    for mask, shift in zip(_SWAP_MASKS, _SWAP_SHIFTS):
        v = ((v >> shift) & mask) | ((v & mask) << shift)
    return (v >> _HALF_SHIFT) | (v << _HALF_SHIFT)


@numba.njit(cache=True)
def _scramble(v, label_shift, key_sum, mul0, mul1):
    v = (v + key_sum) * mul0
    v = (_bitreverse64(v) >> label_shift) * mul1
    return _bitreverse64(v) >> label_shift


@numba.njit(cache=True)
def _quadrant_bits(v, src, dst):
    """Append one level's bits to the unscrambled (src, dst) prefixes from a draw v."""
    r = np.uint32(v) % _PERCENT_BASE
    is_d = r >= _QUAD_ABC
    src_bit = ((r >= _QUAD_B) & (r < _QUAD_BC)) | is_d
    dst_bit = (r < _QUAD_B) | is_d
    # (1,0) on the diagonal becomes (0,1): flip both bits in exactly that case.
    flip = (src == dst) & src_bit & (not dst_bit)
    return (src << _ONE) | np.uint64(src_bit ^ flip), (dst << _ONE) | np.uint64(dst_bit ^ flip)


@numba.njit(cache=True)
def _edge_pair_endpoints(za, zb, scale, limit):
    """Unscrambled endpoints of two edges from their own states za, zb.

    Each edge's draws are one chain of dependent multiplies; interleaving two independent
    chains lets the CPU overlap them.
    """
    src_a = dst_a = src_b = dst_b = _ZERO
    for _ in range(scale):
        za = prng.step(za)
        zb = prng.step(zb)
        while za[0] < limit:
            za = prng.step(za)
        while zb[0] < limit:
            zb = prng.step(zb)
        src_a, dst_a = _quadrant_bits(za[0], src_a, dst_a)
        src_b, dst_b = _quadrant_bits(zb[0], src_b, dst_b)
    return src_a, dst_a, src_b, dst_b


@numba.njit(parallel=True, cache=True)
def _generate_range(seed, stride_table, start, src_out, dst_out, scale, limit,
                    key_sum, mul0, mul1):
    n_edges = src_out.shape[0]
    n_blocks = (n_edges + BLOCK_EDGES - 1) // BLOCK_EDGES
    label_shift = np.uint64(64 - scale)
    scale_levels = np.int64(scale)
    seed_z = prng.as_tuple(seed)
    two_edges = stride_table[1]
    for block in numba.prange(n_blocks):
        lo = block * BLOCK_EDGES
        hi = min(lo + BLOCK_EDGES, n_edges)
        za = prng.skip_by_table(stride_table, seed_z, start + np.uint64(lo))
        zb = prng.mat_vec(stride_table[0], za)
        for i in range(lo, hi, 2):
            src_a, dst_a, src_b, dst_b = _edge_pair_endpoints(za, zb, scale_levels, limit)
            src_out[i] = _scramble(src_a, label_shift, key_sum, mul0, mul1)
            dst_out[i] = _scramble(dst_a, label_shift, key_sum, mul0, mul1)
            if i + 1 < hi:
                src_out[i + 1] = _scramble(src_b, label_shift, key_sum, mul0, mul1)
                dst_out[i + 1] = _scramble(dst_b, label_shift, key_sum, mul0, mul1)
            za = prng.mat_vec(two_edges, za)
            zb = prng.mat_vec(two_edges, zb)


def _check_args(scale, edgefactor, version) -> int:
    if not isinstance(scale, (int, np.integer)) or not 1 <= scale <= MAX_SCALE:
        raise BfsError(f"scale must be an integer in 1..{MAX_SCALE}, got {scale!r}")
    if not isinstance(edgefactor, (int, np.integer)) or edgefactor < 1:
        raise BfsError(f"edgefactor must be an integer >= 1, got {edgefactor!r}")
    if version not in VERSIONS:
        raise BfsError(f"graph500 version must be one of {sorted(VERSIONS)}, got {version!r}")
    n_edges = int(edgefactor) << int(scale)
    if n_edges >= 2**63:
        raise BfsError(f"edgefactor * 2^scale = {n_edges} edges is too many (limit 2^63)")
    return n_edges


def generate_edges(scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                   start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Edges [start, stop) of the Graph500 Kronecker graph, as (src, dst) in reference order.

    The dtype is `id_dtype(2**scale)`; stop defaults to edgefactor * 2^scale.
    """
    n_total = _check_args(scale, edgefactor, version)
    stop = n_total if stop is None else stop
    if not 0 <= start <= stop <= n_total:
        raise BfsError(f"edge range [{start}, {stop}) is not inside [0, {n_total})")
    seed = _seed_state(seeds)
    val0, val1 = scramble_keys(seeds)
    dtype = id_dtype(2**scale)
    src = np.empty(stop - start, dtype=dtype)
    dst = np.empty(stop - start, dtype=dtype)
    n_bits = max(1, math.ceil(math.log2(n_total + 1)))  # covers every block start
    _generate_range(seed, prng.stride_power_table(n_bits), np.uint64(start), src, dst,
                    np.int64(scale), np.uint64(VERSIONS[version]),
                    np.uint64((val0 + val1) & _U64), np.uint64(val0 | _SCRAMBLE_MUL0),
                    np.uint64(val1 | _SCRAMBLE_MUL1))
    return src, dst


def write_kronecker(out, scale: int, edgefactor: int = 16, seeds=(2, 3), version: str = "3.0",
                    name: str | None = None, force: bool = False, chunk_edges: int = 1 << 22,
                    progress: Callable[[int, int], None] | None = None,
                    generate=generate_edges) -> GraphMeta:
    """Generate the graph chunk by chunk into the graph directory `out` (see graphdir).

    generate(scale, edgefactor, seeds, version, lo, hi) -> host (src, dst) of edges [lo, hi):
    this module's generate_edges, or bfs.graphs.kronecker_gpu.generate_edges_host (identical
    edges, generated on the GPU).
    """
    n_total = _check_args(scale, edgefactor, version)
    if chunk_edges < 1:
        raise BfsError(f"chunk_edges must be >= 1, got {chunk_edges}")
    seeds = [int(s) for s in seeds]
    _seed_state(seeds)  # reject bad seeds before touching the file system
    meta = GraphMeta(
        name=name or f"kron-s{scale}-e{edgefactor}", source="kronecker",
        n_vertices=2**scale, n_edges=n_total, directed_source=False,
        scale=int(scale), edgefactor=int(edgefactor), seeds=seeds, graph500_version=version)
    with atomic_dir(out, force) as tmp:
        with EdgeWriter(Path(tmp), id_dtype(meta.n_vertices)) as writer:
            for lo in range(0, n_total, chunk_edges):
                hi = min(lo + chunk_edges, n_total)
                writer.write(*generate(scale, edgefactor, seeds, version, lo, hi))
                if progress is not None:
                    progress(hi, n_total)
        if writer.n_edges != n_total:
            raise BfsError(f"wrote {writer.n_edges} edges, expected {n_total}")
        write_meta(tmp, meta)
    return meta
