"""semiring: BFS as sparse matrix-vector products over the (select2nd, min) semiring.

Paper: E. Werner, S. McMillan, J. Chu, "Patterns and Practices for Future Architectures",
CMU/SEI-2014-TN-001 (2014), Sec. 2.5 "Multi-CPU, CombBLAS" and Fig. 13; the library is
A. Buluc and J. R. Gilbert, "The Combinatorial BLAS: Design, Implementation, and
Applications", IJHPCA 2011, whose BFS runs on A. Buluc and K. Madduri's 2D layout
("Parallel Breadth-First Search on Distributed Memory Systems", SC 2011).

Algorithm. The frontier is a vector x holding, for each frontier vertex, its own id (Fig. 13
line 6: wavefront[v] = indexOf(v)). A level is one product y = A^T x over the semiring whose
multiply selects x's value (select2nd: the edge u -> v carries x[u] = u to v) and whose add is
min, so y[v] is the smallest id among v's frontier neighbours. Masked by the unvisited
vertices (Fig. 13 lines 9-14), y holds exactly the next level, each vertex with its parent:
parent[v] = y[v], and the next x holds those vertices' own ids. The min makes the tree
deterministic: every vertex's parent is its smallest-id neighbour one level up, on any grid
(the report's CombBLAS run has the same property; the other implementations keep whichever
parent a benign race leaves).

Layout. Fu's 2D grid, reused from bfs.algorithms.fu_2d (its PaddedRange pieces, row / column
communicators, level loop and count all-reduce): rank (i, j) holds A's block of edges from
RowRange(i) to ColRange(j). One level, on every rank:
  Multiply  y_ij = A_ij^T x_i over (select2nd, min), masked by the unvisited vertices of
            ColRange(j) (the complemented mask of GraphBLAS: visited columns keep the
            semiring's zero, so the reduction carries only new vertices); a Numba loop over
            the block's CSR rows whose x entry is set (spmv_select_min).
  Reduce    y_j = min of y_ij over the grid column: one MIN all-reduce on the column
            communicator. Every rank of the column receives y_j, so all of them keep the same
            parents and levels for ColRange(j) and the same mask for the next product.
  Assign    parent[v] = y_j[v] and level[v] = t + 1 where y_j[v] is set; the own piece's new
            vertices, as their own ids, are this rank's piece of the next x, and their count
            goes to fu_2d's count all-reduce (which ends the search at zero).
  Next x    the grid row all-gathers its ranks' pieces into x_i, as fu_2d gathers In.
No predecessor pass follows: the parents come out of the product (so no CSC is built).

Vectors: dense int64 over fu_2d's padded ranges (each piece padded to whole 64-vertex words,
so |range| below means 64 x the range's words), where CombBLAS keeps sparse ones:
  x           RowRange(i)   own global id of a frontier vertex, -1 elsewhere
  y           ColRange(j)   smallest frontier neighbour id; NONE (int64 max, min's identity:
                            the semiring's zero) where there is none or the vertex is visited
  parent_col  ColRange(j)   parent global id, -1 while unvisited (the mask)
  level_col   ColRange(j)   int32, -1 while unvisited
  next_own    own piece     the next x's entries of the own piece
Per rank that is 8 |RowRange(i)| + 20 |ColRange(j)| + 8 |own piece| bytes besides the block's
CSR. Per level a rank sends y (8 |ColRange(j)| bytes, when R > 1) into the column's
all-reduce and its 8 |own piece| bytes of x to each of its C - 1 row partners: 64 times
fu_2d's bitmaps, the price of vectors that carry ids rather than bits.

CPU only (Numba kernels, MPI buffer exchanges through bfs.comm.exchange); run it on a 2d
partition: mpiexec -n R*C bfs run PART_DIR --algorithm semiring.
"""
from __future__ import annotations

import numba
import numpy as np

from . import RunContext
from .fu_2d import WORD, Fu2D

NONE = np.iinfo(np.int64).max   # y's "no frontier neighbour": the identity of min


@numba.njit(cache=True)
def spmv_select_min(x, offsets, columns, parent, y):
    """y = A^T x over (select2nd, min), masked by the unvisited columns: for every edge r -> c
    of the CSR with x[r] != -1 and parent[c] == -1, y[c] = min(y[c], x[r]); every other entry
    of y is NONE. x is dense: the loop reads each row's entry once and only set rows' edges."""
    y[:] = NONE
    for r in range(len(x)):
        value = x[r]
        if value < 0:
            continue
        for e in range(offsets[r], offsets[r + 1]):
            c = columns[e]
            if parent[c] == -1 and value < y[c]:
                y[c] = value


@numba.njit(cache=True)
def _assign(y, parent, level, depth, global_id, own_start, next_own):
    """parent / level of every vertex y found; the own piece's next x (own ids, -1 elsewhere).
    Returns how many new vertices the own piece holds."""
    for c in range(len(y)):
        if y[c] != NONE:
            parent[c] = y[c]
            level[c] = depth
    count = 0
    for k in range(len(next_own)):
        c = own_start + k
        if y[c] != NONE:
            next_own[k] = global_id[c]
            count += 1
        else:
            next_own[k] = -1
    return count


class SemiringBfs(Fu2D):
    """Fu2D's layout and level loop with the semiring product as the level's work."""

    def _build_local(self, block) -> None:
        """Only the CSR (row -> column): the parents come with the product, so no CSC."""
        self._build_csr(self._local_edges(block))

    def search(self, root: int) -> None:
        rows, cols = self.rows, self.cols
        self.x = np.full(rows.n_words * WORD, -1, np.int64)
        self.y = np.empty(cols.n_words * WORD, np.int64)
        self.parent_col = np.full(cols.n_words * WORD, -1, np.int64)
        self.level_col = np.full(cols.n_words * WORD, -1, np.int32)
        self.next_own = np.empty((self.own.stop - self.own.start) * WORD, np.int64)
        self.counts, self.totals = np.zeros(1, np.int64), np.ones(1, np.int64)
        r_local, c_local = rows.find(root), cols.find(root)
        if r_local >= 0:
            self.x[r_local] = root
        if c_local >= 0:
            self.parent_col[c_local] = root
            self.level_col[c_local] = 0
        self.root = root
        self._level_loop()

    def _level_body(self, level: int, clock) -> int:
        """Multiply, reduce down the grid column, assign, gather the next x along the grid row;
        returns the bytes this rank sent."""
        spmv_select_min(self.x, self.csr_offsets, self.csr_cols, self.parent_col, self.y)
        clock.mark("expand")
        self.col_x.allreduce(self.y, self.y, "min")
        sent = self.y.nbytes if self.R > 1 else 0
        clock.mark("comm")
        self.counts[0] = _assign(self.y, self.parent_col, self.level_col, level + 1,
                                 self.cols.global_id, self.own.start * WORD, self.next_own)
        clock.mark("finish")
        sent += self._gather_row(self.next_own, self.x, WORD)
        clock.mark("union")
        return sent

    def _results(self) -> tuple[np.ndarray, np.ndarray]:
        """level_col, and the parents of the own piece alone: every rank of the grid column
        holds all of ColRange(j)'s parents, and gather must take each vertex from one rank."""
        pred = np.full_like(self.parent_col, -1)
        own = slice(self.own.start * WORD, self.own.stop * WORD)
        pred[own] = self.parent_col[own]
        return self.level_col, pred


def build(block, ctx: RunContext) -> SemiringBfs:
    return SemiringBfs(block, ctx)
