"""BFS search keys chosen exactly as the Graph500 3.0.x reference driver chooses them, and a
run's roots (choose_roots: --root, or the Graph500 keys of the graph's seeds).

Candidate c (c = 0, 1, ...) is read from the seeded MRG stream skipped by 2*2^128 + 4c
steps: two doubles, each from two draws a, b as a * 4.65661287524579692e-10 (about 1/m)
+ b * 2.168404346990492787e-19 (2^-62), and root = int64((d0 + d1) * N) % N. A candidate is skipped if it repeats an earlier root or
has no non-self-loop edge. The reference's counter advances by 2 per candidate and its skip
is 2*counter, so successive candidates are simply consecutive groups of four draws.
Once counter > 2N the candidate is taken unchecked, which bounds the search on graphs
where few vertices have edges.
"""
from __future__ import annotations

import numba
import numpy as np

from ..graphs import prng
from ..graphs.graphdir import GraphMeta
from ..errors import BfsError
from .generated import DEFAULT_SEEDS

NBFS = 64
ROOT_STREAM_SKIP = 2 * 2**128
_HIGH_WEIGHT = 4.65661287524579692e-10
_LOW_WEIGHT = 2.168404346990492787e-19


@numba.njit(cache=True)
def _draw_double(z):
    z = prng.step(z)
    high = z[0]
    z = prng.step(z)
    return high * _HIGH_WEIGHT + z[0] * _LOW_WEIGHT, z


@numba.njit(cache=True)
def _select_roots(state, n_vertices, has_edge, count):
    z = prng.as_tuple(state)
    roots = np.empty(count, dtype=np.int64)
    counter = 0
    for idx in range(count):
        while True:
            d0, z = _draw_double(z)
            d1, z = _draw_double(z)
            root = np.int64((d0 + d1) * n_vertices) % n_vertices
            counter += 2
            if counter > 2 * n_vertices:
                break
            repeated = False
            for earlier in roots[:idx]:
                if earlier == root:
                    repeated = True
                    break
            if not repeated and has_edge[root]:
                break
        roots[idx] = root
    return roots


def graph500_roots(n_vertices: int, has_edge: np.ndarray, count: int = NBFS,
                   seeds=(2, 3)) -> np.ndarray:
    """`count` search keys as int64; has_edge[v]: v has at least one non-self-loop edge."""
    n_vertices = int(n_vertices)
    if n_vertices < 1:
        raise BfsError(f"a graph needs at least one vertex, got n_vertices={n_vertices}")
    has_edge = np.asarray(has_edge, dtype=np.bool_)
    if has_edge.shape != (n_vertices,):
        raise BfsError(f"has_edge has shape {has_edge.shape}, expected ({n_vertices},)")
    if not has_edge.any():
        raise BfsError("no vertex has an edge other than a self-loop: nothing to search from")
    if count < 0:
        raise BfsError(f"root count must be >= 0, got {count}")
    try:
        state = prng.seed_state(*(int(s) for s in seeds))
    except (TypeError, ValueError) as e:
        raise BfsError(f"seeds must be two integers in [0, 2^64): {seeds!r} ({e})") from None
    state = prng.skip(state, ROOT_STREAM_SKIP)
    return _select_roots(state, np.int64(n_vertices), has_edge, np.int64(count))


def check_root(root, n_vertices: int) -> int:
    """root as an int, or BfsError if it is not a vertex of a graph with n_vertices."""
    try:
        value = int(root)
    except (TypeError, ValueError):
        raise BfsError(f"root {root!r} is not an integer") from None
    if value != root or not 0 <= value < n_vertices:
        raise BfsError(f"root {root!r} is out of range: vertices are 0..{n_vertices - 1}")
    return value


def choose_roots(meta: GraphMeta, degree: np.ndarray, n_roots: int,
                 root: int | None) -> np.ndarray:
    if root is not None:
        check_root(root, meta.n_vertices)
        if degree[root] == 0:
            raise BfsError(f"--root {root}: vertex has no edge other than self-loops; "
                           "a search from it traverses nothing")
        return np.array([root], dtype=np.int64)
    seeds = tuple(meta.seeds) if meta.seeds else DEFAULT_SEEDS
    return graph500_roots(meta.n_vertices, degree > 0, count=n_roots, seeds=seeds)
