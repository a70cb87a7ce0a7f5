"""2d-do: direction-optimizing 2D BFS on Fu et al.'s bitmap layout.

Paper: S. Beamer, A. Buluc, K. Asanovic, D. Patterson, "Distributed Memory Breadth-First
Search Revisited: Enabling Bottom-Up Search", IPDPSW 2013 (the switch: S. Beamer, K. Asanovic,
D. Patterson, "Direction-Optimizing Breadth-First Search", SC 2012). Layout, exchanges and
level loop are bfs.algorithms.fu_2d's (Fu et al. 2014); only the expand of a level changes.

Each level runs in one of two directions, the same on every rank:
  Top-down   fu_2d's expand: In_i through the block CSR -> Out_ij minus visited.
  Bottom-up  every vertex v of ColRange(j) not yet visited walks its in-edges in the block CSC
             (rows of RowRange(i)) and stops at the first u in In_i; v goes into Out_ij with
             parent u. On a Kronecker graph most vertices of the big middle levels meet a
             frontier neighbour within their first few edges, so those levels read a small
             share of the edges a top-down level would.
Bottom-up sub-steps (substeps=1, the default; the paper's 2D bottom-up). A vertex's in-edges
are spread over the R blocks of its grid column, so a rank that searches its whole block reads
in-edges of vertices another rank of the column finds. Instead a bottom-up level takes R
sub-steps around the grid column: rank i starts on its own piece of the column range (the
vertices not visited), searches its block's in-edges for them, then passes the piece's
still-unfound bits to rank i - 1 and takes piece i + t + 1 from rank i + 1 (one sendrecv of
n / (C R) bits), so each vertex is searched on one rank after another until one finds it, and
the in-edges read add up to about one sweep of the column however many ranks hold it. The
ranks' finds are then disjoint: no scan picks a claimer, and the union is one all-reduce down
the column (a sum of disjoint words is their OR; NCCL has no bitwise OR). substeps=0: every rank
searches its own block at once and the level goes on as a top-down one (below), at the price of
the in-edges the other R - 1 ranks read for a vertex one of them finds. On a 1 x C grid, where
one block holds all of a column's in-edges, the two are the same level.

After a top-down expand everything is fu_2d's: the exclusive OR scan down the grid column picks
the one rank that claims (Assigned) each new vertex, the column broadcasts the union, the row
gathers the next In.

One adjacency (adjacency=csc; the default, both, keeps fu_2d's block CSR beside the CSC).
For an undirected graph a block's CSC holds every edge a top-down level needs, indexed from
the other end: the CSC of block (i, j) lists, for each vertex v of ColRange(j), its neighbours
in RowRange(i). So a top-down level can run on the CSC alone, and the block keeps one
structure (half the edge bytes: what lets a GPU grid hold twice the scale, issue 49):
  Push       every rank of grid column j walks the CSC of the frontier's column vertices (the
             last level's union, which the column already shares) and marks their neighbours
             not yet seen in a RowRange(i) bitmap. Each edge lives in one block, so the ranks
             read the frontier's edges once between them.
  Scatter    the grid row exchanges those bitmaps piece by piece (one alltoallv over the
             row, n / (R C) bits from each rank): rank (i, j) receives the C bitmaps of its own
             piece and ORs them into the piece's candidates, less the visited.
  Resolve    the candidates' parents are found as a bottom-up level finds them, in the R
             sub-steps down the grid column that start at the own piece (below), restricted to
             the candidates: a candidate has a neighbour in the frontier, so one rank of the
             column finds it, and the level's finds are disjoint as a bottom-up level's are.
The GPU runs the same levels (bfs.algorithms.fu_2d_do_gpu), and there the push also carries
the parents of the hub rows, whose in-edge walks are long (its hub_degree), so that the resolve
walks no hub. The levels and directions are the two-structure search's; the parents are valid
ones (each a neighbour one level up) but may be other ones; the edges examined are the push's
plus the resolve's. m_f (word [1] below) is summed over CSC degrees of the column's frontier
instead of CSR degrees of the row's: over all ranks both are the frontier's degree sum.

Parents: a bottom-up level knows the parent at discovery; where a rank above in the grid column
claimed the vertex, contract drops this rank's parent, so pred >= 0 exactly where this rank
assigned the vertex (as in bfs.algorithms.fu_2d_gpu). Top-down levels keep Fu's predecessor
pass after the traversal (Fig. 7), which skips the parents already recorded.

Direction (Beamer's heuristic, from globally summed numbers, so every rank decides alike):
  top-down -> bottom-up  when m_f > m_u / alpha, m_f = edges of the frontier, m_u = edges of
                         the vertices not reached before this level (the frontier's included,
                         as GAPBS counts them: so alpha <= 1 never goes bottom-up), and
                         m_f >= n * floor (merrill-do's floor; 0 here, GAPBS's rule);
  bottom-up -> top-down  when n_f < n / beta and the frontier is not growing (GAPBS's form:
                         n_f = frontier vertices, n = all vertices).
alpha = 15, beta = 18 (GAPBS's defaults) and floor = 0 unless the options give others. Level
0 (the root alone) is always top-down: it reads the root's edges, where bottom-up would walk
every other vertex's in-edges to find the root (and m_f would cost a collective before the
first level).
The numbers ride on fu_2d's one all-reduce a level, four int64 words instead of one:
  [0] n_f    new vertices of the own piece (fu_2d's count)
  [1] m_f    block (CSR) degrees of the next In_i: every rank of grid row i holds In_i, and a
             vertex's block degrees over its grid row add up to its degree
  [2]        block (CSC) degrees of the column range's unvisited vertices, kept by subtracting
             each level's new ones: a vertex's block degrees down its grid column add up to
             its degree; m_u = [1] + [2]
  [3]        edges this rank's expand read (top-down: the frontier's block edges, that is
             word [1] of the level before; bottom-up: in-edges walked up to the early exit)
Degrees count directed edges, so m_f and m_u are both in the units of the block CSR's nnz.

After a search every rank has self.directions ("top-down" / "bottom-up" per level),
self.level_edges_examined (per level, summed over the ranks) and self.edges_examined (their
sum). The per-level profile rows and levels_run are fu_2d's.

This module is the CPU backend (Numba loops). The GPU backend (--backend gpu) is
bfs.algorithms.fu_2d_do_gpu: fu_2d_gpu's kernels and exchanges with a bottom-up kernel and the
four words kept on the device, its bottom-up levels in the same sub-steps (substeps=0 there
too searches every block at once); both take the switch from DirectionSwitch below.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import BfsError
from . import RunContext
from .options import bottom_up_floor
from .fu_2d import WORD, Fu2D, _set_levels

ALPHA = 15.0
BETA = 18.0
FLOOR = 0.0
TOP_DOWN, BOTTOM_UP = "top-down", "bottom-up"


@numba.njit(cache=True)
def _bottom_up(in_words, csc_offsets, csc_rows, todo, lo, row_global, out_words, pred):
    """Every column vertex of words [lo, lo + len(todo)) whose todo bit is set looks through
    its in-edges for a frontier vertex and stops at the first: it leaves todo, Out gets it and
    pred its global parent id. Returns the in-edges read."""
    examined = 0
    for k in range(len(todo)):
        w = lo + k
        bits = todo[k]
        found = np.uint64(0)
        b = 0
        while bits:
            if bits & np.uint64(1):
                v = w * WORD + b
                start, stop = csc_offsets[v], csc_offsets[v + 1]
                e = start
                while e < stop:
                    u = csc_rows[e]
                    e += 1
                    if in_words[u >> 6] & (np.uint64(1) << np.uint64(u & 63)):
                        found |= np.uint64(1) << np.uint64(b)
                        pred[v] = row_global[u]
                        break
                examined += e - start
            bits >>= np.uint64(1)
            b += 1
        todo[k] &= ~found
        out_words[w] |= found
    return examined


def _set_bits(words) -> np.ndarray:
    """The vertices whose bits are set in a bitmap (bit b of word w: vertex WORD w + b), in
    order."""
    return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))


def _push(frontier, csc_offsets, csc_rows, seen_row, found_row):
    """Every column vertex whose frontier bit is set marks its in-neighbours (rows) that are
    not in seen_row in found_row. Returns the in-edges read (all of the frontier's)."""
    return _push_columns(_set_bits(frontier), csc_offsets, csc_rows, seen_row, found_row)


@numba.njit(cache=True)
def _push_columns(columns, csc_offsets, csc_rows, seen_row, found_row):
    examined = 0
    for v in columns:
        start, stop = csc_offsets[v], csc_offsets[v + 1]
        for e in range(start, stop):
            u = csc_rows[e]
            bit = np.uint64(1) << np.uint64(u & 63)
            if not seen_row[u >> 6] & bit:
                found_row[u >> 6] |= bit
        examined += stop - start
    return examined


def _degree_sum(words, offsets) -> int:
    """Edges of the vertices whose bits are set: the sum of their offsets ranges."""
    ids = _set_bits(words)
    return int((offsets[ids + 1] - offsets[ids]).sum())


def _positive(options: dict, key: str, default: float) -> float:
    value = float(options.get(key, default))
    if not value > 0:
        raise BfsError(f"2d-do: {key} must be > 0, got {value}")
    return value


class DirectionSwitch:
    """Beamer's switch (see the module docstring) from the level's four all-reduced words:
    what Fu2DDo and bfs.algorithms.fu_2d_do_gpu.Fu2DDoGpu (which keeps the words on the
    device) share. Sets alpha, beta, n, and per search bottom_up, directions,
    level_edges_examined and edges_examined."""
    resolved_options = ("alpha", "beta", "floor")   # run.json records them as the search ran

    def _switch_options(self, options: dict, n: int, alpha: float = ALPHA,
                        beta: float = BETA, floor: float = FLOOR) -> None:
        """alpha, beta, floor: the defaults where options give none (the GPU's are
        merrill-do's). bottom_up_floor: the frontier's edges below which a level stays
        top-down (n * floor; none where alpha is inf, which sends every frontier bottom-up)."""
        self.alpha = _positive(options, "alpha", alpha)
        self.beta = _positive(options, "beta", beta)
        self.floor, self.bottom_up_floor = bottom_up_floor(n, options.get("floor", floor),
                                                           self.alpha, "2d-do")
        self.n = n

    def _switch_reset(self) -> None:
        """A new search: top-down, no levels yet."""
        self.bottom_up = False
        self.last_frontier = 0
        self.directions: list[str] = []
        self.level_edges_examined: list[int] = []
        self.edges_examined = 0

    def _switch(self, level: int, totals) -> int:
        """The last all-reduce's totals -> this level's direction (the same on every rank);
        returns the frontier size (0 ends the search)."""
        frontier, m_f, unreached, examined = (int(x) for x in totals)
        if level > 0:
            self.level_edges_examined.append(examined)
        if frontier == 0:
            self.edges_examined = sum(self.level_edges_examined)
            return 0
        if level == 0:
            self.bottom_up = False
        elif self.bottom_up:
            # stay while the frontier is large or still growing
            self.bottom_up = frontier >= self.n / self.beta or frontier > self.last_frontier
        else:
            self.bottom_up = (m_f > (m_f + unreached) / self.alpha
                              and m_f >= self.bottom_up_floor)
        self.last_frontier = frontier
        self.directions.append(BOTTOM_UP if self.bottom_up else TOP_DOWN)
        return frontier


ADJACENCIES = ("both", "csc")   # a block's structures: CSR and CSC, or the CSC alone


def adjacency_option(options: dict) -> str:
    """The adjacency option (module docstring, "One adjacency"), checked."""
    adjacency = options.get("adjacency", "both")
    if adjacency not in ADJACENCIES:
        raise BfsError(f"2d-do adjacency must be both (the block CSR and CSC) or csc (the CSC "
                       f"alone, top-down levels pushed through it), got {adjacency!r}")
    return adjacency


class Fu2DDo(DirectionSwitch, Fu2D):
    """Fu2D whose levels run top-down or bottom-up (see the module docstring)."""

    def __init__(self, block, ctx: RunContext):
        self.adjacency = adjacency_option(ctx.options)     # before the build reads it
        super().__init__(block, ctx)
        self._switch_options(ctx.options, int(self.bounds[-1]))
        self.substeps = int(ctx.options.get("substeps", 1))
        if self.substeps not in (0, 1):
            raise BfsError(f"2d-do: substeps must be 1 (bottom-up levels in sub-steps down "
                           f"the grid column) or 0, got {self.substeps}")
        # the column range's pieces, the slices of the sub-steps (piece k: rank k's own)
        self.pieces = [slice(int(a), int(b)) for a, b in zip(self.cols.word_offset[:-1],
                                                             self.cols.word_offset[1:])]

    def _build_csr(self, entries) -> None:
        if self.adjacency == "both":
            super()._build_csr(entries)
        else:       # the one structure is the CSC, which Fu2D builds next
            self.csr_offsets = self.csr_cols = None

    @property
    def _pushes(self) -> bool:
        """This level runs top-down through the CSC alone (push, scatter, resolve)."""
        return not self.bottom_up and self.adjacency == "csc"

    @property
    def _in_substeps(self) -> bool:
        """This level searches in sub-steps down the grid column (and there is a column to
        step down): a bottom-up level with substeps, or a pushed level's resolve."""
        return self.R > 1 and ((self.bottom_up and self.substeps == 1) or self._pushes)

    def _reset(self, root: int) -> None:
        super()._reset(root)
        # the level's one all-reduce: [n_f, m_f, unreached edges, edges examined] (see above)
        self.counts, self.totals = np.zeros(4, np.int64), np.zeros(4, np.int64)
        self.totals[0] = 1
        r_local, c_local = self.rows.find(root), self.cols.find(root)
        root_in_edges = (int(self.csc_offsets[c_local + 1] - self.csc_offsets[c_local])
                         if c_local >= 0 else 0)
        if self.adjacency == "csc":
            # the root's edges from its column's side (the push reads them there); the column
            # shares the frontier as the last level's union, and the rows seen are the frontiers
            self.frontier_edges = root_in_edges
            if c_local >= 0:
                self.uni[c_local >> 6] |= np.uint64(1) << np.uint64(c_local & 63)
            self.seen_row = self.in_words.copy()
            self.found_row = np.zeros(self.rows.n_words, np.uint64)
            self.scattered = np.zeros(self.C * (self.own.stop - self.own.start), np.uint64)
        else:
            # this rank's share of the root's edges: what level 0's top-down expand reads
            self.frontier_edges = (int(self.csr_offsets[r_local + 1]
                                       - self.csr_offsets[r_local]) if r_local >= 0 else 0)
        self.unvisited_edges = len(self.csc_rows) - root_in_edges
        self._switch_reset()

    def _begin_level(self, level: int) -> int:
        return self._switch(level, self.totals)

    def _expand_level(self, level: int) -> None:
        if not self.bottom_up and not self._pushes:
            super()._expand_level(level)
            self.counts[3] = self.frontier_edges
            return
        self.out.fill(0)
        pushed = 0
        if self._pushes:
            pushed, todo = self._push_level()
        elif self._in_substeps:
            todo = ~self.visited[self.own]
        else:   # the whole block at once
            self.counts[3] = self._search_piece(slice(0, len(self.visited)), ~self.visited)
            return
        if self.R == 1:     # the own piece is the whole column range: no sub-steps
            self.counts[3] = pushed + self._search_piece(self.own, todo)
            return
        R, i = self.R, self.i
        k, examined, sent = i, 0, 0
        for step in range(R):
            examined += self._search_piece(self.pieces[k], todo)
            if step == R - 1:
                break
            k = (k + 1) % R          # the piece rank i + 1 searched this sub-step
            unfound = np.empty(self.pieces[k].stop - self.pieces[k].start, np.uint64)
            self.col_x.sendrecv(todo, (i - 1) % R, unfound, (i + 1) % R)
            sent += todo.nbytes
            todo = unfound
        self.counts[3] = pushed + examined
        self.substep_bytes = sent + (self.scatter_bytes if self._pushes else 0)

    def _push_level(self) -> tuple[int, np.ndarray]:
        """A top-down level's push and scatter (module docstring, "One adjacency"): the
        frontier's in-neighbours not seen, then the own piece's candidates (OR of the grid
        row's bitmaps, less the visited). Returns (edges read, the candidates' todo words)."""
        found = self.found_row
        found.fill(0)
        pushed = _push(self.uni, self.csc_offsets, self.csc_rows, self.seen_row, found)
        own_words = self.own.stop - self.own.start
        self.row_x.alltoallv(found, self.row_counts, self.scattered,
                             np.full(self.C, own_words))
        self.scatter_bytes = found.nbytes - own_words * 8
        todo = np.bitwise_or.reduce(self.scattered.reshape(self.C, own_words), axis=0)
        todo &= ~self.visited[self.own]
        return pushed, todo

    def _search_piece(self, piece: slice, todo) -> int:
        """_bottom_up over the column words of piece for the vertices todo names (cleared as
        they are found). Returns the in-edges read."""
        return _bottom_up(self.in_words, self.csc_offsets, self.csc_rows, todo, piece.start,
                          self.rows.global_id, self.out, self.pred)

    def _scan(self) -> int:
        if self._in_substeps:     # the finds are disjoint: no rank above to defer to
            self.prefix.fill(0)
            return self.substep_bytes
        if self._pushes:          # one row of ranks: nothing above, the scatter's bytes
            return self.scatter_bytes
        return super()._scan()

    def _contract(self) -> None:
        super()._contract()
        if self.bottom_up and not self._in_substeps:
            # a rank above in the grid column claimed these: its parent stands, not ours
            _set_levels(self.out & self.prefix, self.pred, -1)

    def _share_union(self, level: int) -> int:
        if not self._in_substeps:
            return super()._share_union(level)
        # disjoint finds: their sum down the column is their union, on every rank of it
        self.col_x.allreduce(self.uni, self.uni)
        return self.uni.nbytes + self._gather_in(self.uni[self.own], level)

    def _finish(self, level: int) -> None:
        super()._finish(level)   # visited, levels, counts[0]; In is the next frontier now
        if self.adjacency == "csc":
            # the next push's frontier is uni (the column's new vertices) and its degrees
            # are CSC degrees here: summed over the grid, the frontier's degree sum as well
            self.seen_row |= self.in_words
            self.frontier_edges = _degree_sum(self.uni, self.csc_offsets)
        else:
            self.frontier_edges = _degree_sum(self.in_words, self.csr_offsets)
        self.unvisited_edges -= _degree_sum(self.uni, self.csc_offsets)
        self.counts[1] = self.frontier_edges
        self.counts[2] = self.unvisited_edges


def build(block, ctx: RunContext) -> Fu2DDo:
    return Fu2DDo(block, ctx)
