"""The Graph500 reference's random number generator, reproduced exactly.

L'Ecuyer's multiple recursive generator of order 5 with modulus m = 2^31 - 1:

    x_n = (107374182 * x_{n-1} + 104480 * x_{n-5}) mod m

The reference gives every Kronecker edge, the scramble keys and the BFS-root candidates
their own stretch of this one stream, reached by skipping ahead; matching its edge list
bit for bit therefore needs the same seeding, the same step and exact skip-ahead.

Skip-ahead is a power of the 5x5 companion matrix A (state z = (z1..z5), z1 newest):
z <- A^n z (mod m). Powers needed once per run (n like 50*2^128 + 7*2^64) are done with
Python ints; the per-edge work is Numba code on uint64 with every product reduced before
summing (five unreduced 62-bit products would overflow 64 bits).

Data layout, shared with any other backend (e.g. a CUDA kernel):
  * a state is a uint64 array of 5 values (z1..z5), each in [0, m);
  * `stride_power_table()` is a (64, 5, 5) uint64 array whose row j is A^(2^(64+j)):
    row 0 steps from one edge's stream to the next, and the rows together skip a state
    by any edge index with at most 64 matrix-vector products.
"""
from __future__ import annotations

import functools

import numba
import numpy as np

MODULUS = 2**31 - 1
MULT_NEWEST = 107374182
MULT_OLDEST = 104480
STATE_SIZE = 5
EDGE_STRIDE_LOG2 = 64  # each Kronecker edge owns a 2^64-step stretch of the stream

COMPANION = (
    (MULT_NEWEST, 0, 0, 0, MULT_OLDEST),
    (1, 0, 0, 0, 0),
    (0, 1, 0, 0, 0),
    (0, 0, 1, 0, 0),
    (0, 0, 0, 1, 0),
)

_M = np.uint64(MODULUS)
_SHIFT = np.uint64(31)
_MULT_NEWEST = np.uint64(MULT_NEWEST)
_MULT_OLDEST = np.uint64(MULT_OLDEST)
_ONE = np.uint64(1)


# --- setup-time arithmetic on Python ints -------------------------------------------------

def _matmul(a, b):
    return tuple(
        tuple(sum(a[i][k] * b[k][j] for k in range(STATE_SIZE)) % MODULUS
              for j in range(STATE_SIZE))
        for i in range(STATE_SIZE))


@functools.lru_cache(maxsize=None)
def _companion_power_of_two(k: int):
    """A^(2^k); cached because every skip reuses the same squarings."""
    if k == 0:
        return COMPANION
    half = _companion_power_of_two(k - 1)
    return _matmul(half, half)


def skip_matrix_exact(n: int):
    """A^n as a tuple of Python-int rows (n >= 0, any size)."""
    if n < 0:
        raise ValueError("skip count must be non-negative")
    result = tuple(tuple(int(i == j) for j in range(STATE_SIZE)) for i in range(STATE_SIZE))
    k = 0
    while n:
        if n & 1:
            result = _matmul(_companion_power_of_two(k), result)
        n >>= 1
        k += 1
    return result


def seed_state(u1: int, u2: int) -> np.ndarray:
    """The reference's state from two uint64 seeds; every value lands in [1, 2^30 + 16]."""
    for u in (u1, u2):
        if not 0 <= int(u) < 2**64:
            raise ValueError(f"seed {u} is not a uint64")
    u1, u2 = int(u1), int(u2)
    mask30 = 0x3FFFFFFF
    return np.array([
        (u1 & mask30) + 1,
        ((u1 >> 30) & mask30) + 1,
        (u2 & mask30) + 1,
        ((u2 >> 30) & mask30) + 1,
        ((u2 >> 60) << 4) + (u1 >> 60) + 1,
    ], dtype=np.uint64)


def skip(state: np.ndarray, n: int) -> np.ndarray:
    """The state n steps ahead (exact for any n >= 0)."""
    mat = skip_matrix_exact(n)
    z = [int(v) for v in state]
    return np.array([sum(mat[i][k] * z[k] for k in range(STATE_SIZE)) % MODULUS
                     for i in range(STATE_SIZE)], dtype=np.uint64)


@functools.lru_cache(maxsize=None)
def stride_power_table(n_bits: int = 64) -> np.ndarray:
    """(n_bits, 5, 5) uint64, row j = A^(2^(64+j)): skips by edge indices below 2^n_bits."""
    table = np.array([_companion_power_of_two(EDGE_STRIDE_LOG2 + j) for j in range(n_bits)],
                     dtype=np.uint64)
    table.flags.writeable = False  # shared through the cache
    return table


# --- hot-path arithmetic (Numba, uint64 throughout) -----------------------------------------
# States inside Numba code are 5-tuples of uint64 so that they live in registers.

@numba.njit(cache=True)
def mod_m(x):
    """x mod (2^31 - 1) for x < 2^61: one Mersenne fold leaves x < 2m, one subtract ends it."""
    x = (x & _M) + (x >> _SHIFT)
    return x - _M if x >= _M else x


@numba.njit(cache=True)
def step(z):
    """One MRG step; the new state's first value is the draw."""
    # Both products fit together in 59 bits, so one reduction of their sum is exact.
    new = mod_m(z[0] * _MULT_NEWEST + z[4] * _MULT_OLDEST)
    return (new, z[0], z[1], z[2], z[3])


@numba.njit(cache=True)
def _row_dot(mat, i, z):
    # Each 62-bit product is folded below 2^32 first: five of them then sum below 2^35,
    # inside mod_m's domain.
    acc = np.uint64(0)
    for k in range(STATE_SIZE):
        p = mat[i, k] * z[k]
        acc += (p & _M) + (p >> _SHIFT)
    return mod_m(acc)


@numba.njit(cache=True)
def mat_vec(mat, z):
    """mat @ z mod m for a (5, 5) uint64 matrix and a state tuple."""
    return (_row_dot(mat, 0, z), _row_dot(mat, 1, z), _row_dot(mat, 2, z),
            _row_dot(mat, 3, z), _row_dot(mat, 4, z))


@numba.njit(cache=True)
def skip_by_table(table, z, count):
    """z skipped by count * 2^64 steps, using stride_power_table()."""
    j = 0
    while count:
        if count & _ONE:
            z = mat_vec(table[j], z)
        count >>= _ONE
        j += 1
    return z


@numba.njit(cache=True)
def as_tuple(state):
    return (state[0], state[1], state[2], state[3], state[4])


@numba.njit(cache=True)
def draws(state, count):
    """(the next `count` outputs, the state after them) from a uint64 state array."""
    z = as_tuple(state)
    out = np.empty(count, dtype=np.uint64)
    for i in range(count):
        z = step(z)
        out[i] = z[0]
    return out, np.array(z, dtype=np.uint64)
