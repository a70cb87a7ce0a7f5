"""Kernel 1 on the CPU: edge list -> undirected CSR (Graph500 "construction", SEI's Kernel 1).

Every input edge (u, v) with u != v becomes two directed entries u->v and v->u; self-loops are
dropped; duplicates are kept (they cost the search a redundant check, as in the reference's
CSR). Counting sort: one pass counts degrees, an exclusive prefix sum gives row offsets, a second
pass scatters. Two passes over the edge list and one over the vertices: O(n + m), no sort.
Column indices keep the edge list's id dtype (uint32 for graphs up to 2^32 vertices), which halves
the bytes every search reads compared with int64.

The two passes read the edge list as chunks (build_csr_chunks): a list too big to hold beside
its CSR is made again chunk by chunk for each pass (regenerated, or re-read from the graph
directory's row groups), and since both passes see the edges in the same order, any chunking
gives the same bytes as the whole list at once (build_csr).
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
def _add_degrees(src, dst, degree):
    for i in range(len(src)):
        u = src[i]
        v = dst[i]
        if u != v:
            degree[u] += 1
            degree[v] += 1


@numba.njit(cache=True)
def nonloop_degrees(src, dst, n_vertices):
    """Undirected degree of every vertex, self-loops excluded."""
    degree = np.zeros(n_vertices, np.int64)
    _add_degrees(src, dst, degree)
    return degree


@numba.njit(cache=True)
def _scatter(src, dst, columns, cursor):
    """The chunk's entries into their rows; cursor[u]: row u's next free slot, carried from
    one chunk to the next."""
    for i in range(len(src)):
        u = src[i]
        v = dst[i]
        if u != v:
            columns[cursor[u]] = v
            cursor[u] += 1
            columns[cursor[v]] = u
            cursor[v] += 1


def _chunk_degrees(chunks, n_vertices: int):
    """(nonloop_degrees over the chunks() of an edge list, the chunks' id dtype or None where
    there were none)."""
    degree, dtype = np.zeros(n_vertices, np.int64), None
    for src, dst in chunks():
        _add_degrees(src, dst, degree)
        dtype = src.dtype
        del src, dst   # before the next chunk is made: one chunk alive at a time, not two
    return degree, dtype


def chunk_degrees(chunks, n_vertices: int) -> np.ndarray:
    """nonloop_degrees over the chunks() of an edge list."""
    return _chunk_degrees(chunks, n_vertices)[0]


def build_csr_chunks(chunks, n_vertices: int, dtype=None, empty=np.empty) -> CSR:
    """Kernel 1 over an edge list that chunks() yields as (src, dst) arrays, the same edges in
    the same order at each call: a pass counting degrees, a pass scattering. dtype: the
    columns' (default: the chunks' id dtype); empty(shape, dtype) makes the two arrays (pinned
    host memory for gpu-out-of-core's copies)."""
    degree, chunk_dtype = _chunk_degrees(chunks, n_vertices)
    dtype = chunk_dtype if dtype is None else dtype
    offsets = empty(n_vertices + 1, np.int64)
    offsets[0] = 0
    np.cumsum(degree, out=offsets[1:])
    del degree
    columns = empty(int(offsets[-1]), np.uint32 if dtype is None else dtype)
    cursor = offsets[:-1].copy()
    for src, dst in chunks():
        _scatter(src, dst, columns, cursor)
        del src, dst
    return CSR(offsets, columns)


def build_csr(src: np.ndarray, dst: np.ndarray, n_vertices: int) -> CSR:
    return build_csr_chunks(lambda: iter([(src, dst)]), n_vertices)
