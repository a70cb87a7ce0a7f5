"""The grid layout of a partition: vertex pieces, row and column ranges of an R x C rank grid.

Layout (one formula for 2D and 1D; a 1D partition over P ranks is the P x 1 grid):

    n vertices, an R x C rank grid, p = R*C ranks.
    piece k       = vertices [bounds[k], bounds[k+1]),  bounds[k] = (k * n) // p
    rank (i, j)   = MPI rank i*C + j; it owns piece i*C + j
    RowRange(i)   = pieces i*C .. i*C+C-1            (contiguous)
    ColRange(j)   = pieces {i*C + j : i < R}          (R pieces, strided by C)
    block (i, j)  = directed edges u -> v with u in RowRange(i) and v in ColRange(j)

Why this layout. The adjacency matrix is cut into an R x C grid of blocks (Fu et al. 2014,
"Parallel Breadth First Search on GPU Clusters", IEEE BigData: 2D partitioning so that each
BFS level communicates only within one processor row and one processor column, O(sqrt p) peers
instead of p). The vertex vectors (levels, parents, frontier) are not split by block rows or block
columns but into p equal pieces, one per rank, with the rows and columns built from those pieces
as above (Buluc & Madduri 2011, "Parallel Breadth-First Search on Distributed Memory Systems",
SC'11): this keeps every rank's share of the vectors at n/p even when R != C. A rank expanding the
frontier of RowRange(i) needs exactly the pieces owned by the ranks of its grid row, and the
vertices it discovers in ColRange(j) are owned by the ranks of its grid column. With C = 1 the
row range is the rank's own piece and the column range is every vertex: the classic 1D split.

Pieces are balanced by floor division so p need not divide n; p <= n keeps every piece non-empty.
"""
from __future__ import annotations

import numpy as np

from ..errors import BfsError


class GridLayout:
    """Vertex pieces, row and column ranges of an R x C grid (exact integer arithmetic)."""

    def __init__(self, n_vertices: int, rows: int, cols: int):
        if rows < 1 or cols < 1:
            raise BfsError(f"grid {rows}x{cols}: rows and columns must be at least 1")
        if rows * cols > n_vertices:
            raise BfsError(f"grid {rows}x{cols}: {rows * cols} ranks for {n_vertices} vertices; "
                           "every rank needs at least one vertex")
        self.n_vertices = int(n_vertices)
        self.rows = int(rows)
        self.cols = int(cols)
        self.n_ranks = self.rows * self.cols
        # Python ints: k * n can pass 2**63 before the division for very large graphs.
        self.bounds = np.array([k * self.n_vertices // self.n_ranks
                                for k in range(self.n_ranks + 1)], dtype=np.int64)
        sizes = np.diff(self.bounds).reshape(self.rows, self.cols)
        # col_offsets[j][i]: local index in ColRange(j) where the piece of grid row i starts
        self.col_offsets = np.zeros((self.cols, self.rows + 1), dtype=np.int64)
        np.cumsum(sizes.T, axis=1, out=self.col_offsets[:, 1:])

    @classmethod
    def from_manifest(cls, manifest: dict) -> "GridLayout":
        rows, cols = manifest["grid"]
        return cls(manifest["n_vertices"], rows, cols)

    def _vertices(self, v) -> np.ndarray:
        # int64 before searchsorted: mixing uint64 ids with int64 bounds would compare as float64
        v = np.asarray(v).astype(np.int64, copy=False)
        if v.size and (v.min() < 0 or v.max() >= self.n_vertices):
            raise ValueError(f"vertex id out of range [0, {self.n_vertices})")
        return v

    def piece_of(self, v) -> np.ndarray:
        return np.searchsorted(self.bounds, self._vertices(v), side="right") - 1

    def row_of(self, u) -> np.ndarray:
        return self.piece_of(u) // self.cols

    def col_of(self, v) -> np.ndarray:
        return self.piece_of(v) % self.cols

    def row_range(self, i: int) -> tuple[int, int]:
        return int(self.bounds[i * self.cols]), int(self.bounds[(i + 1) * self.cols])

    def col_pieces(self, j: int) -> list[tuple[int, int]]:
        return [(int(self.bounds[i * self.cols + j]), int(self.bounds[i * self.cols + j + 1]))
                for i in range(self.rows)]

    def col_size(self, j: int) -> int:
        return int(self.col_offsets[j, -1])

    def col_local(self, j: int, v) -> np.ndarray:
        v = self._vertices(v)
        piece = np.searchsorted(self.bounds, v, side="right") - 1
        if np.any(piece % self.cols != j):
            raise ValueError(f"vertex not in column range {j}")
        return self.col_offsets[j, piece // self.cols] + (v - self.bounds[piece])

    def col_global(self, j: int, local) -> np.ndarray:
        local = np.asarray(local).astype(np.int64, copy=False)
        if local.size and (local.min() < 0 or local.max() >= self.col_size(j)):
            raise ValueError(f"local index out of range [0, {self.col_size(j)}) of column {j}")
        grid_row = np.searchsorted(self.col_offsets[j], local, side="right") - 1
        piece = grid_row * self.cols + j
        return self.bounds[piece] + (local - self.col_offsets[j, grid_row])

    def rank(self, i: int, j: int) -> int:
        return i * self.cols + j

    def coords(self, rank: int) -> tuple[int, int]:
        return divmod(rank, self.cols)


def squarest_grid(ranks: int) -> tuple[int, int]:
    """R x C with R * C == ranks and R <= C as close as possible (Fu's p x p when square)."""
    if ranks < 1:
        raise BfsError(f"rank count must be at least 1, got {ranks}")
    rows = max(r for r in range(1, int(ranks ** 0.5) + 1) if ranks % r == 0)
    return rows, ranks // rows
