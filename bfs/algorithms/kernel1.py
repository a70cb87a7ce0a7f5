"""Kernel 1: edge list -> undirected CSR (Graph500 "construction", SEI's Kernel 1).

Every input edge (u, v) with u != v becomes two directed entries u->v and v->u; self-loops are
dropped; duplicates are kept (they cost the search a redundant check, as in the reference's
CSR). Counting sort: one pass counts degrees, an exclusive prefix sum gives row offsets, a second
pass scatters. Two passes over the edge list and one over the vertices: O(n + m), no sort.
Column indices keep the edge list's id dtype (uint32 for graphs up to 2^32 vertices), which halves
the bytes every search reads compared with int64.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass
class CSR:
    offsets: np.ndarray  # int64, n+1
    columns: np.ndarray  # id dtype, offsets[-1]

    @property
    def n_vertices(self) -> int:
        return len(self.offsets) - 1


@numba.njit(cache=True)
def nonloop_degrees(src, dst, n_vertices):
    """Undirected degree of every vertex, self-loops excluded."""
    degree = np.zeros(n_vertices, np.int64)
    for i in range(len(src)):
        u = src[i]
        v = dst[i]
        if u != v:
            degree[u] += 1
            degree[v] += 1
    return degree


@numba.njit(cache=True)
def _scatter(src, dst, offsets, columns):
    cursor = offsets[:-1].copy()
    for i in range(len(src)):
        u = src[i]
        v = dst[i]
        if u != v:
            columns[cursor[u]] = v
            cursor[u] += 1
            columns[cursor[v]] = u
            cursor[v] += 1


def build_csr(src: np.ndarray, dst: np.ndarray, n_vertices: int) -> CSR:
    degree = nonloop_degrees(src, dst, n_vertices)
    offsets = np.zeros(n_vertices + 1, np.int64)
    np.cumsum(degree, out=offsets[1:])
    columns = np.empty(offsets[-1], dtype=src.dtype)
    _scatter(src, dst, offsets, columns)
    return CSR(offsets, columns)
