"""2d: Fu, Dasari, Bebee, Berzins and Thompson's 2D bitmap BFS for GPU clusters (2014).

Layout (bfs.partition): an R x C rank grid; rank (i, j) holds the directed edges from
RowRange(i) to ColRange(j) and owns one vertex piece. Pieces are cut as in Buluc and Madduri's
2D BFS so rectangular grids work: RowRange(i) is the C pieces of grid row i, ColRange(j) the R
pieces of grid column j. Every bitmap is stored piece by piece, each piece padded to whole 64-bit
words, so a piece is a word slice and moves without bit shifting.

One BFS level (Fu's Figs. 3-6), on every rank:
  Expand    In_i (frontier of RowRange(i)) through the local CSR -> Out_ij, minus visited.
  Count     the new vertices of the own piece; their global sum (one all-reduce) is the next
            level's frontier size, and ends the search at zero.
  Contract  exclusive bitwise-OR scan of Out_ij down grid column j: `scan` is the log R
            pairwise (Hillis-Steele) scheme Fu et al. use, `wave` Checconi's R-step chain they
            replaced (Fu report ~30% TEPS between them). Assigned_ij |= Out_ij & ~Prefix_ij
            marks the single rank that claims each new vertex. The last rank of the column
            holds the union Out_j and broadcasts it down the column (Fig. 5 line 7).
  Levels    every rank of column j sets level t+1 for Out_j (Fig. 6) and marks it visited.
  Next In   In_i^{t+1} is RowRange(i)'s part of the new frontier: each rank contributes its
            own piece and the grid row allgathers them. On a square grid with Fu's contiguous
            ranges this is their diagonal copy + column broadcast; with B&M's pieces no rank
            holds a whole row range, so the row gathers it (the same bytes arrive).
Predecessors (Fig. 7) come after the traversal with no communication: each rank resolves the
vertices it Assigned through its CSC to an in-neighbour one level up.

This module is the CPU backend: the local kernels are Numba loops over the bitmaps. The GPU
backend (--backend gpu) is bfs.algorithms.fu_2d_gpu, which the registry picks: the same class's
layout, level loop and exchange with CUDA kernels for the local work. The exchanges go through
bfs.comm.exchange: MPI buffer calls here (--comm mpi), NCCL on device buffers for the GPU.
"""
from __future__ import annotations

import functools

import numba
import numpy as np

from ..comm.exchange import LevelClock, choose_comm, grid_comms
from . import RunContext, SearchResult, Searcher
from ..errors import BfsError
from .searcher import PhaseClock

WORD = 64


@numba.njit(cache=True)
def _expand(in_words, offsets, columns, visited, out_words):
    for w in range(len(in_words)):
        bits = in_words[w]
        while bits:
            low = bits & (~bits + np.uint64(1))
            b = 0
            t = low
            while t > np.uint64(1):
                t >>= np.uint64(1)
                b += 1
            bits ^= low
            u = w * WORD + b
            for e in range(offsets[u], offsets[u + 1]):
                c = columns[e]
                cw = c >> 6
                mask = np.uint64(1) << np.uint64(c & 63)
                if not (visited[cw] & mask):
                    out_words[cw] |= mask


@numba.njit(cache=True)
def _set_levels(words, level, value):
    for w in range(len(words)):
        bits = words[w]
        b = 0
        while bits:
            if bits & np.uint64(1):
                level[w * WORD + b] = value
            bits >>= np.uint64(1)
            b += 1


@numba.njit(cache=True)
def _predecessors(assigned, csc_offsets, csc_rows, level_row, level_col, row_global, pred):
    for w in range(len(assigned)):
        bits = assigned[w]
        b = 0
        while bits:
            v = w * WORD + b
            # a parent recorded at discovery (2d-do's bottom-up levels) stands
            if bits & np.uint64(1) and pred[v] < 0:
                want = level_col[v] - 1
                for e in range(csc_offsets[v], csc_offsets[v + 1]):
                    u = csc_rows[e]
                    if level_row[u] == want:
                        pred[v] = row_global[u]
                        break
            bits >>= np.uint64(1)
            b += 1


@numba.njit(cache=True)
def _local_ids(ids, bounds, first_piece, stride, word_offset, lo):
    """Global ids -> padded local indices of a row or column range: id v's piece k (binary
    search in bounds) is the range's ((k - first_piece) // stride)-th piece."""
    out = np.empty(len(ids), np.int64)
    n_pieces = len(bounds) - 1
    for e in range(len(ids)):
        v = np.int64(ids[e])
        a, b = 0, n_pieces                 # bounds[a] <= v < bounds[b]
        while b - a > 1:
            mid = (a + b) >> 1
            if bounds[mid] <= v:
                a = mid
            else:
                b = mid
        idx = (a - first_piece) // stride
        out[e] = word_offset[idx] * WORD + v - lo[idx]
    return out


@numba.njit(cache=True)
def _count_keys(keys, offsets):
    for k in keys:
        offsets[k + 1] += 1


@numba.njit(cache=True)
def _place_values(keys, values, cursor, out):
    for e in range(len(keys)):
        out[cursor[keys[e]]] = values[e]
        cursor[keys[e]] += 1


def compress(entries, n_keys: int):
    """CSR (offsets, int64 values) of (keys -> values) by counting sort; entries() yields
    (keys, values) pairs, keys dense local indices, the same entries at each call: the block
    whole (one pair), or routed again a chunk at a time (bfs.build.routing.RoutedBlock),
    then a pass counts and a second places, so the block is never whole beside its CSR. A
    row's values come in entry order (the order chunks bring them)."""
    offsets = np.zeros(n_keys + 1, np.int64)
    for keys, _ in entries():
        _count_keys(keys, offsets)
    np.cumsum(offsets, out=offsets)
    cursor = offsets[:-1].copy()
    out = np.empty(int(offsets[-1]), np.int64)
    for keys, values in entries():
        _place_values(keys, values, cursor, out)
    if not (cursor == offsets[1:]).all():
        raise BfsError("the block's entries differ between the passes of its build")
    return offsets, out


class PaddedRange:
    """Vertices of several pieces laid out piece by piece, each padded to whole words."""

    def __init__(self, bounds: np.ndarray, pieces: list[int]):
        self.pieces = pieces
        self.lo = np.array([bounds[k] for k in pieces], np.int64)
        self.size = np.array([bounds[k + 1] - bounds[k] for k in pieces], np.int64)
        words = (self.size + WORD - 1) // WORD
        self.word_offset = np.concatenate([[0], np.cumsum(words)]).astype(np.int64)
        self.n_words = int(self.word_offset[-1])

    @functools.cached_property
    def global_id(self) -> np.ndarray:
        """Global id of every padded index (-1 on padding): 8 bytes a vertex on the host, made
        on first use (a single GPU rank never needs it inside Kernel 1)."""
        global_id = np.full(self.n_words * WORD, -1, np.int64)
        for p in range(len(self.pieces)):
            start = self.word_offset[p] * WORD
            global_id[start:start + self.size[p]] = np.arange(self.lo[p],
                                                              self.lo[p] + self.size[p])
        return global_id

    def find(self, v: int) -> int:
        """Padded index of global id v, or -1 if v is not in this range."""
        for p in range(len(self.pieces)):
            if self.lo[p] <= v < self.lo[p] + self.size[p]:
                return int(self.word_offset[p] * WORD + v - self.lo[p])
        return -1


class Fu2D(Searcher):
    world_x = row_x = col_x = None   # the exchanges (none on a from_csr searcher)

    @property
    def _event_pool(self) -> list:
        """The CUDA events the level clocks of this searcher's searches record, made once and
        reused (an event made per mark cost the host ~5 us each inside the timed search)."""
        pool = self.__dict__.get("_events")
        if pool is None:
            pool = self.__dict__["_events"] = []
        return pool

    def __init__(self, block, ctx: RunContext):
        self._start_build(block, ctx)
        self._build_local(block)

    def _start_build(self, block, ctx: RunContext, sync=None) -> None:
        """Kernel 1's phase clock (sync: the device's, on a GPU) and the grid layout, its
        first phase (communicators: made once a session, grid_comms)."""
        self.phase = PhaseClock(sync)
        self.build_phases = self.phase.seconds
        with self.phase("grid layout"):
            self._layout(block, ctx)

    def _layout(self, block, ctx: RunContext) -> None:
        """Grid coordinates, padded ranges and the row/column communicators."""
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = block.comm
        R, C = block.manifest["grid"]
        self.R, self.C = R, C
        rank = self.comm.Get_rank()
        self.i, self.j = divmod(rank, C)
        self.exchange = ctx.options.get("exchange", "scan")
        if self.exchange not in ("scan", "wave"):
            raise ValueError(f"unknown exchange {self.exchange!r}")
        bounds = np.asarray(block.manifest["bounds"], np.int64)
        self.rows = PaddedRange(bounds, [self.i * C + jj for jj in range(C)])
        self.cols = PaddedRange(bounds, [ii * C + self.j for ii in range(R)])
        kind = choose_comm(ctx.options.get("comm"), ctx.backend, self.comm)
        self.comm_kind = kind
        self._comms = grid_comms(self.comm, self.i, self.j, R, C, kind)
        self.row_comm, self.col_comm = self._comms.row_comm, self._comms.col_comm
        self.world_x, self.row_x, self.col_x = (self._comms.world_x, self._comms.row_x,
                                                self._comms.col_x)
        self.bounds = bounds
        # the piece this rank owns is the i-th piece of its column
        self.own = slice(int(self.cols.word_offset[self.i]), int(self.cols.word_offset[self.i + 1]))
        self.row_counts = np.diff(self.rows.word_offset)
        self.row_displs = self.rows.word_offset[:-1]

    def _local_edges(self, block):
        """entries() of the block as (row, column) padded local indices, int64: one Numba pass
        per side (the piece of each id by binary search in the bounds, as fu_2d_gpu's local_ids
        kernel), not numpy's searchsorted, int64 copies and fancy indexing (3x the time). The
        block whole, or routed again a chunk at a time for each call (block.chunks)."""
        rows, cols = self.rows, self.cols

        def local(src, dst):
            return (_local_ids(np.asarray(src), self.bounds, self.i * self.C, 1,
                               rows.word_offset, rows.lo),
                    _local_ids(np.asarray(dst), self.bounds, self.j, self.C,
                               cols.word_offset, cols.lo))
        return block.entries(local)

    def _build_csr(self, entries) -> None:
        with self.phase("block CSR"):   # streamed: its passes' generation and routing too
            self.csr_offsets, self.csr_cols = compress(entries, self.rows.n_words * WORD)

    def _build_local(self, block) -> None:
        """The block's CSR (row -> column) and CSC (column -> row) in padded local indices."""
        with self.phase("local ids"):
            entries = self._local_edges(block)
        self._build_csr(entries)
        with self.phase("block CSC"):
            self.csc_offsets, self.csc_rows = compress(
                lambda: ((cols, rows) for rows, cols in entries()), self.cols.n_words * WORD)

    # --- the level loop, shared by both backends -----------------------------------------
    def _scan(self) -> int:
        """self.prefix = exclusive prefix OR of self.out over the ranks above in the grid
        column; returns the bytes this rank sent. `scan`: Hillis-Steele, log R rounds of
        sendrecv; `wave`: Checconi's chain, R - 1 steps."""
        x, me, R = self.col_x, self.i, self.R
        if R == 1:
            return 0      # no rank above: prefix stays as _reset left it, zero
        out, prefix = self.out, self.prefix
        prefix.fill(0)
        sent = 0
        if self.exchange == "wave":
            if me > 0:
                x.sendrecv(None, None, prefix, me - 1)
            if me < R - 1:
                # in place, no temporary: a GPU chain replayed as a CUDA graph allocates nothing
                self.inclusive[...] = prefix
                self.inclusive |= out
                x.sendrecv(self.inclusive, me + 1, None, None)
                sent += out.nbytes
            return sent
        inclusive, received = self.inclusive, self.received
        inclusive[...] = out
        d = 1
        while d < R:
            dest = me + d if me + d < R else None
            source = me - d if me - d >= 0 else None
            x.sendrecv(inclusive, dest, received, source)
            if dest is not None:
                sent += inclusive.nbytes
            if source is not None:
                inclusive |= received
                prefix |= received
            d *= 2
        return sent

    def _share_union(self, level: int) -> int:
        """The grid column's last rank (which holds the full prefix OR) broadcasts the union
        down the column, then each grid row allgathers the ranks' own pieces into In. Returns
        the bytes this rank sent."""
        uni = self.uni
        if self.R > 1:
            self.col_x.bcast(uni, root=self.R - 1)
        sent = uni.nbytes * (self.R - 1) if self.i == self.R - 1 else 0
        return sent + self._gather_in(uni[self.own], level)

    def _gather_in(self, piece, level: int, go=None) -> int:
        """The grid row's all-gather of the own pieces (piece: this rank's) into In (2d-do on
        the GPU does it through peer memory where it can; go: a chain's). Returns the bytes
        this rank sent."""
        return self._gather_row(piece, self.in_words)

    def _gather_row(self, own, row_vector, per_word: int = 1) -> int:
        """The grid row's all-gather of the own pieces: each rank's piece of a column-range
        vector (own) lands at that piece's place in a row-range vector. per_word: elements
        per bitmap word (1 for bitmaps, WORD for one element per vertex). Returns the bytes
        this rank sent."""
        self.row_x.allgatherv(own, row_vector, self.row_counts * per_word,
                              self.row_displs * per_word)
        return own.nbytes * (self.C - 1)

    def _level_loop(self) -> None:
        """The level loop over the grid, for both backends and for the semiring search
        (bfs.algorithms.semiring): per level, _begin_level(level) -> the global frontier size
        (the last level's count all-reduce; the GPU also compacts In here, and reads the
        device once), which ends the search at zero; _level_body(level, clock) does the
        level's work and exchanges, leaving the new own vertices in self.counts; then one
        all-reduce sums them. Sets self.profile (level, frontier, expand s, comm s, bytes
        sent; by CUDA events on the GPU), self.profile_steps (seconds per level and
        LevelClock step: where a level's time goes) and self.levels_run. Hooks may mark
        steps of their own on self.clock."""
        clock = self.clock = LevelClock(device=self.on_device, pool=self._event_pool)
        clock.start()
        level = 0
        while True:
            frontier = self._begin_level(level)
            clock.mark("begin")
            if frontier == 0:
                clock.end_level(level, 0, 0)
                break
            level += self._levels(level, frontier, clock)
        self.levels_run = level
        self._keep_profile(clock)

    def _keep_profile(self, clock: LevelClock) -> None:
        """The search's profile and profile_steps from its clock (the GPU reads its events
        only when they are asked for, after the search: fu_2d_gpu)."""
        self.profile_steps = clock.steps()
        self.profile = clock.rows(self.profile_steps)

    def _levels(self, level: int, frontier: int, clock: LevelClock) -> int:
        """Runs the level (its body and the count all-reduce) and returns the levels run: 1
        here; bfs.algorithms.fu_2d_do_gpu runs chains of bottom-up levels behind one read."""
        sent = self._level_body(level, clock)
        self._sum_counts(level)
        clock.mark("allreduce")
        clock.end_level(level, frontier, sent + self.counts.nbytes)
        return 1

    def _sum_counts(self, level: int, go=None) -> None:
        """One all-reduce a level: every rank's counts summed into totals, the next frontier's
        size, which also ends the search (bfs.algorithms.fu_2d_do_gpu sums them through peer
        memory where it shares In so; go: a chain's)."""
        self.world_x.allreduce(self.counts, self.totals)

    def _level_body(self, level: int, clock: LevelClock) -> int:
        """Fig. 5's level over the grid; returns the bytes this rank sent. The local work goes
        through hooks (numpy here; bfs.algorithms.fu_2d_gpu runs them on the GPU):
          _expand_level(level)   In -> Out minus visited
          _contract()            assigned |= Out & ~prefix, uni = Out | prefix
          _finish(level)         visited |= uni, levels, self.counts = new own vertices"""
        self._expand_level(level)
        clock.mark("expand")
        return self._share_level(level, clock, self._finish)

    def _share_level(self, level: int, clock: LevelClock, finish) -> int:
        """What follows a level's expand: the scan down the grid column, contract, the union
        shared, then finish(level + 1); returns the bytes this rank sent (2d-do's chained
        bottom-up levels pass a finish of their own)."""
        sent = self._scan()
        clock.mark("scan")
        self._contract()
        clock.mark("contract")
        sent += self._share_union(level)
        clock.mark("union")
        finish(level + 1)
        clock.mark("finish")
        return sent

    # --- the CPU hooks --------------------------------------------------------------------
    on_device = False

    def _begin_level(self, level: int) -> int:
        return int(self.totals[0])

    def _expand_level(self, level: int) -> None:
        self.out.fill(0)
        _expand(self.in_words, self.csr_offsets, self.csr_cols, self.visited, self.out)

    def _contract(self) -> None:
        self.assigned |= self.out & ~self.prefix
        np.bitwise_or(self.out, self.prefix, out=self.uni)

    def _finish(self, level: int) -> None:
        self.visited |= self.uni
        _set_levels(self.uni, self.level_col, level)
        _set_levels(self.in_words, self.level_row, level)
        self.counts[0] = int(np.bitwise_count(self.uni[self.own]).sum())

    def search(self, root: int) -> None:
        self._reset(root)
        self._level_loop()
        _predecessors(self.assigned, self.csc_offsets, self.csc_rows, self.level_row,
                      self.level_col, self.rows.global_id, self.pred)

    def _reset(self, root: int) -> None:
        """The search state for a search from root: bitmaps, levels, parents (CPU)."""
        rows, cols = self.rows, self.cols
        self.in_words = np.zeros(rows.n_words, np.uint64)
        self.out, self.prefix, self.uni, self.inclusive, self.received = (
            np.zeros(cols.n_words, np.uint64) for _ in range(5))
        self.counts, self.totals = np.zeros(1, np.int64), np.ones(1, np.int64)
        self.visited = np.zeros(cols.n_words, np.uint64)
        self.assigned = np.zeros(cols.n_words, np.uint64)
        self.level_row = np.full(rows.n_words * WORD, -1, np.int32)
        self.level_col = np.full(cols.n_words * WORD, -1, np.int32)
        r_local, c_local = rows.find(root), cols.find(root)
        if r_local >= 0:
            self.in_words[r_local >> 6] |= np.uint64(1) << np.uint64(r_local & 63)
            self.level_row[r_local] = 0
        if c_local >= 0:
            self.visited[c_local >> 6] |= np.uint64(1) << np.uint64(c_local & 63)
            self.level_col[c_local] = 0
        self.root = root
        self.pred = np.full(cols.n_words * WORD, -1, np.int64)

    def gather(self, n_vertices: int) -> SearchResult | None:
        """Parents and levels of the last search, assembled on rank 0 (untimed)."""
        from ..comm.mpi import gatherv
        cols = self.cols
        own = slice(self.own.start * WORD, self.own.start * WORD + int(cols.size[self.i]))
        # pieces are numbered in rank order, so the own-piece slices concatenate to 0..n-1
        level_col, pred = self._results()
        level = gatherv(self.comm, level_col[own])
        claimed = np.flatnonzero(pred >= 0)
        ids = gatherv(self.comm, cols.global_id[claimed])
        preds = gatherv(self.comm, pred[claimed])
        if self.comm.Get_rank() != 0:
            return None
        parent = np.full(n_vertices, -1, np.int64)
        parent[ids] = preds
        parent[self.root] = self.root
        return SearchResult(parent, level)


    def _results(self) -> tuple[np.ndarray, np.ndarray]:
        """(level_col, pred) of the last search as host arrays (the GPU backend copies)."""
        return self.level_col, self.pred

    def close(self) -> None:
        """The grid's communicators, where this searcher made them (outside a session's grid
        scope: bfs.comm.exchange.grid_comms)."""
        comms = self.__dict__.pop("_comms", None)
        if comms is not None and comms.owned:
            comms.free()


def build(block, ctx: RunContext) -> Fu2D:
    return Fu2D(block, ctx)
