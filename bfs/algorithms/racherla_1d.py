"""1d: Racherla's 1D MPI+CUDA BFS ("BFS over GPU clusters using MPI and CUDA").

1D vertex partition (the P x 1 grid of bfs.partition): rank r holds the adjacency rows of its
vertex range. Every rank keeps the whole level and parent arrays and the global frontier list.
One level: each rank expands the frontier vertices it owns, keeps each unvisited neighbour once
(first claim wins within the rank), and the candidates (vertex, parent) of all ranks are
gathered everywhere with Allgather (counts) + Allgatherv (pairs). Every rank then applies them
in rank order, so all ranks agree on the same parent for each new vertex without more messages.

Small frontiers: Racherla finishes levels whose frontier is under a threshold (1000 in the
report) on the root process's CPU, where a GPU launch and an all-gather cost more than the work.
Here each rank may read only its own block, so the owners send the small frontier's adjacency
rows to rank 0 (Gatherv), rank 0 expands them alone, and broadcasts the discovered pairs.
"""
from __future__ import annotations

import numba
import numpy as np

from .fu_2d import compress
from ..build.csr_cpu import CSR
from ..comm.mpi import Timer, displacements
from . import RunContext, SearchResult, Searcher


@numba.njit(cache=True)
def _claim(v, u, level, seen, out_v, out_p, k):
    """Keep v (reached from u) if unvisited and not yet claimed in this step; returns the count."""
    if level[v] == -1 and not seen[v]:
        seen[v] = True
        out_v[k] = v
        out_p[k] = u
        k += 1
    return k


@numba.njit(cache=True)
def _expand_owned(frontier, lo, hi, offsets, columns, level, seen):
    """Unvisited neighbours of the owned frontier vertices, each once: (vertices, parents)."""
    out_v = np.empty(len(columns), np.int64)
    out_p = np.empty(len(columns), np.int64)
    k = 0
    for f in range(len(frontier)):
        u = frontier[f]
        if u < lo or u >= hi:
            continue
        for e in range(offsets[u - lo], offsets[u - lo + 1]):
            k = _claim(columns[e], u, level, seen, out_v, out_p, k)
    for i in range(k):
        seen[out_v[i]] = False
    return out_v[:k].copy(), out_p[:k].copy()


@numba.njit(cache=True)
def _owned_rows(frontier, lo, hi, offsets, columns):
    """The owned frontier vertices' adjacency as (vertex, degree) and the neighbour list."""
    owned = 0
    n_cols = 0
    for u in frontier:
        if lo <= u < hi:
            owned += 1
            n_cols += offsets[u - lo + 1] - offsets[u - lo]
    heads = np.empty(2 * owned, np.int64)
    neighbours = np.empty(n_cols, np.int64)
    h = 0
    c = 0
    for u in frontier:
        if lo <= u < hi:
            d = offsets[u - lo + 1] - offsets[u - lo]
            heads[2 * h] = u
            heads[2 * h + 1] = d
            neighbours[c:c + d] = columns[offsets[u - lo]:offsets[u - lo + 1]]
            h += 1
            c += d
    return heads, neighbours


@numba.njit(cache=True)
def _expand_rows(heads, neighbours, level, seen):
    out_v = np.empty(len(neighbours), np.int64)
    out_p = np.empty(len(neighbours), np.int64)
    k = 0
    c = 0
    for h in range(len(heads) // 2):
        u = heads[2 * h]
        for e in range(c, c + heads[2 * h + 1]):
            k = _claim(neighbours[e], u, level, seen, out_v, out_p, k)
        c += heads[2 * h + 1]
    for i in range(k):
        seen[out_v[i]] = False
    return out_v[:k].copy(), out_p[:k].copy()


@numba.njit(cache=True)
def _apply(cand_v, cand_p, level, parent, value):
    nxt = np.empty(len(cand_v), np.int64)
    k = 0
    for i in range(len(cand_v)):
        v = cand_v[i]
        if level[v] == -1:
            level[v] = value
            parent[v] = cand_p[i]
            nxt[k] = v
            k += 1
    return nxt[:k].copy()


class Racherla1D(Searcher):
    def __init__(self, block, ctx: RunContext):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = block.comm
        self.small_frontier = int(ctx.options.get("small_frontier", 1000))
        bounds = np.asarray(block.manifest["bounds"], np.int64)
        rank = self.comm.Get_rank()
        self.lo, self.hi = int(bounds[rank]), int(bounds[rank + 1])
        self.n = int(block.manifest["n_vertices"])
        # the block's CSR in local rows (its rows are this rank's range): whole, or routed again
        # a chunk at a time for each pass (block.chunks), by fu_2d's counting sort
        self.csr = CSR(*compress(block.entries(lambda src, dst: (
            np.asarray(src, np.int64) - self.lo, dst)), self.hi - self.lo))
        self.seen = np.zeros(self.n, np.bool_)

    def _allgather_pairs(self, v: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        MPI = self.MPI
        counts = np.zeros(self.comm.Get_size(), np.int64)
        self.comm.Allgather(np.array([len(v)], np.int64), counts)
        displs = displacements(counts)
        all_v = np.empty(int(counts.sum()), np.int64)
        all_p = np.empty_like(all_v)
        self.comm.Allgatherv(v, [all_v, counts, displs, MPI.INT64_T])
        self.comm.Allgatherv(p, [all_p, counts, displs, MPI.INT64_T])
        return all_v, all_p, (v.nbytes + p.nbytes) * (self.comm.Get_size() - 1)

    def _root_step(self, frontier) -> tuple[np.ndarray, np.ndarray, int]:
        from ..comm.mpi import gatherv
        heads, neighbours = _owned_rows(frontier, self.lo, self.hi, self.csr.offsets,
                                        self.csr.columns)
        all_heads = gatherv(self.comm, heads)
        all_neighbours = gatherv(self.comm, neighbours)
        sent = heads.nbytes + neighbours.nbytes
        count = np.zeros(1, np.int64)
        if self.comm.Get_rank() == 0:
            v, p = _expand_rows(all_heads, all_neighbours, self.level, self.seen)
            count[0] = len(v)
        self.comm.Bcast(count, root=0)
        if self.comm.Get_rank() != 0:
            v = np.empty(count[0], np.int64)
            p = np.empty(count[0], np.int64)
        self.comm.Bcast(v, root=0)
        self.comm.Bcast(p, root=0)
        if self.comm.Get_rank() == 0:
            sent += (v.nbytes + p.nbytes) * (self.comm.Get_size() - 1)
        return v, p, sent

    def search(self, root: int) -> None:
        self.level = np.full(self.n, -1, np.int32)
        self.parent = np.full(self.n, -1, np.int64)
        self.level[root] = 0
        self.parent[root] = root
        frontier = np.array([root], np.int64)
        profile = []
        timer = Timer()
        depth = 0
        while len(frontier):
            if len(frontier) < self.small_frontier:
                with timer("comm"):
                    cand_v, cand_p, sent = self._root_step(frontier)
            else:
                with timer("expand"):
                    v, p = _expand_owned(frontier, self.lo, self.hi, self.csr.offsets,
                                         self.csr.columns, self.level, self.seen)
                with timer("comm"):
                    cand_v, cand_p, sent = self._allgather_pairs(v, p)
            with timer("expand"):
                nxt = _apply(cand_v, cand_p, self.level, self.parent, depth + 1)
            profile.append((depth, len(frontier), timer.pop("expand"), timer.pop("comm"), sent))
            frontier = nxt
            depth += 1
        self.profile = np.array(profile, np.float64)

    def gather(self, n_vertices: int) -> SearchResult | None:
        # every rank already holds the whole arrays
        if self.comm.Get_rank() != 0:
            return None
        return SearchResult(self.parent, self.level)


def build(block, ctx: RunContext) -> Racherla1D:
    return Racherla1D(block, ctx)
