"""2d-do's chained levels on the GPU: levels enqueued back to back without the host between
them, each run or skipped on the device by the switch's rule, and a bottom-up level of a grid
of several rows in sub-steps down the grid column (bfs.algorithms.fu_2d_do_gpu's Fu2DDoGpu
takes them as the mixin ChainedLevels; its docstring says where chains sit among the levels).

Chains of bottom-up levels (ahead, default 4): once a level goes bottom-up, the host enqueues
it and `ahead` more back to back, each level's kernels, its exchanges (NCCL on the stream, the
same fixed-size buffers every level) and the all-reduce of the switch words, and between two
levels one thread (fu_2d.cu's decide_levels) applies the bottom-up rule to the all-reduced
words, so each level runs or is skipped on the device; the host reads one control block a
chain (the run count and each level's words, which it replays through DirectionSwitch, so the
directions and counts are the CPU 2d-do's). A skipped level's kernels return at once and its
exchanges move the same buffers again, leaving the last run level's state; each costs its
collectives (tens of us), so the chain is shorter than merrill-do's.
Chains of top-down levels (td_ahead, default 1): the same, with Beamer's top-down rule
(decide_top_down) between levels, and each level's expand sized on the device: the compacted
frontier's degrees scanned, its tiles partitioned and expanded by fixed grids that read the
queue's length from the compaction's counter (tiles.cuh's *_q kernels), so neither the root's
level nor the next waits for a read of the host: a Kronecker search reads the device once a
chain, twice in all. Measured at scale 26 on 1x2 it is no faster than td_ahead=0, the
one-level-a-read loop (BENCHMARKS.md): a top-down level there is ~13 host calls around tens of
microseconds of GPU work, so the GPU waits for the host's launches either way.
Chains as CUDA graphs (graphs, default 1 where the exchanges are NCCL or the grid has one
rank): a chain's launches (kernels, NCCL collectives, decisions) are captured once per key
(kind, first level, write modes, buffers) and replayed by one host call, so a level costs its
GPU work and collectives, not the host's ~13 launches; a search's host calls are the root's
row, two chain starts, two replays and two reads (_chain).

Sub-steps (substeps=1, the default; 0 searches every block at once): on a grid of
several rows a bottom-up level runs as fu_2d_do's does on the CPU (Beamer et al.'s 2D
bottom-up): R launches of the kernel, each over one piece of the column range with that piece's
vertices not to search (visited, or found by a rank before) as its visited words, passed up the
grid column by one NCCL send/recv a sub-step, so a vertex is searched on one rank after another
until one finds it and the in-edges read add up to about one sweep of the column. The finds are
disjoint: the union is one all-reduce (sum) down the column, with no scan and no contract.

What ChainedLevels reads of the searcher: its grid (R, i, rows, cols, pieces, own, col_x), the
block's CSR and CSC (csr_offsets, csr_cols, bu_offsets, csc_rows, csc_offsets, head, closed,
row_ids), kernels dict k and grids (scan_blocks, expand_blocks, bu_blocks), control words (ctl,
chain, totals, counts, level_sums), level state (queue, qdeg, scan, chunk_sums, tile_first,
in_words, out, uni, visited, unfound, pred, level_col, fold, own_levels, dense_done,
level_known, _queued, _fresh), the switch (alpha, beta, n, bottom_up_floor, bottom_up,
_switch), the chain options (ahead, td_ahead, graphs, substeps, _capturer, _captured) and
Fu2DDoGpu's steps (_expand_level, _sum_counts, _share_level, _gather_in, _launch_finish,
_launch_compact, _read_ctl, launches).
"""
from __future__ import annotations

import numpy as np

from .. import device
from ..errors import BfsError
from . import merrill_do
from .fu_2d import WORD
from .fu_2d_gpu import BLOCK

TOTALS, COUNTS, CHAIN = 4, 8, 12   # ctl offsets: all-reduced totals, this rank's counts, chain
AHEAD = 4        # chained bottom-up levels past the host's decision: a Kronecker search's
                 # bottom-up levels at scales 25-27 in one chain, few skipped ones
TD_AHEAD = 1     # chained top-down levels past the host's decision: a Kronecker search's two
                 # (the root's, then its neighbours') in one chain; a level the device skips
                 # still costs its exchanges (tens of us), so no more are enqueued
LOG, LEVEL_WORDS = 4, 5   # chain words before the per-level log, and a level's (fu_2d.cu's
                          # decide_levels: the totals and the device clock)
GRAPHS = 1       # chains replayed as CUDA graphs where the exchanges are NCCL
SUBSTEPS = 1     # bottom-up levels of a grid of several rows in sub-steps down the column:
                 # 2x1 at scale 26 went from 207 to 287 GTEPS (BENCHMARKS.md, 64 roots)


class _NoClock:
    """The level clock while a chain is captured: a CUDA event recorded into a graph is no
    timestamp, so a replayed chain is timed as one step (see _chain)."""

    def mark(self, step: str) -> None:
        pass

    def take(self) -> list:
        return []


class ChainedLevels:
    """2d-do's chains of levels and sub-steps (module docstring), a mixin of Fu2DDoGpu."""

    def _top_down_chain(self, level: int, frontier: int, clock) -> int:
        """The top-down level `level` (the host's decision) and `td_ahead` more (_chain),
        Beamer's top-down rule between them on the device (fu_2d.cu's decide_top_down). Each
        level's expand reads its frontier's size from the device (tiles.cuh's *_q kernels), so
        none waits for the host. A level that does not run leaves Out as the last run level
        left it (its next level clears it first), so its exchanges gather the same union
        again. Returns the levels run."""
        def one_level(lv, go, clock):
            if lv:     # level 0's (the root's row) is enqueued before the chain: see below
                self._chained_top_down(lv, go)
            clock.mark("expand")
            if self.R > 1:
                return self._share_level(lv, clock,
                                         lambda nxt: self._chained_finish(nxt, self.uni, go))
            # no rank above: Out is the union (kept, not swapped with uni as one level at a
            # time does, so a level that does not run gathers the same Out again)
            sent = self._gather_in(self.out[self.own], lv, go)
            clock.mark("union")
            self._chained_finish(lv + 1, self.out, go)
            clock.mark("finish")
            return sent

        if level == 0:
            # the root's row: its arguments change from search to search, a graph's do not
            self._expand_level(0)
        run = self._chain(level, frontier, clock, self.td_ahead, one_level,
                          "decide_top_down", (np.float64(self.alpha),
                                              np.int64(self.bottom_up_floor)))
        self._queued = True            # the last level run compacted the next In
        self.level_known = False
        return run

    def _chain(self, level: int, frontier: int, clock, ahead: int, one_level, decide: str,
               rule: tuple) -> int:
        """A chain: the level `level` (the host's decision) and `ahead` more enqueued back to
        back, one_level(level, go, clock) -> bytes sent enqueueing each level's kernels (which
        do nothing unless go[0]) and exchanges, then the all-reduce of the switch words and the
        one-thread decision (fu_2d.cu's `decide`, with its rule's numbers) of whether the next
        level runs; then _replay_chain's one read. Returns the levels run.

        graphs=1: the chain after chain_start (which takes the host's frontier) is captured as
        one CUDA graph the first time its key comes (the kind, the first level, the write modes
        and the buffers the level steps name: all a chain's launches depend on) and replayed
        from then on: one host launch for the ~13 a level enqueues, which left the GPU waiting
        on the host at the small levels. Events then time the chain as one step; the device
        clock each level's decision reads (fu_2d.cu's log_level) splits it into levels
        (LevelClock.split_chain; graphs=0 times each level's steps by events)."""
        go = self.chain[0:1]
        self.k["chain_start"]((1,), (1,), (self.chain, np.uint64(frontier)))

        def enqueue(clock):
            marks, sent = [], []
            for step in range(ahead + 1):
                bytes_sent = one_level(level + step, go, clock)
                self._sum_counts(level + step, go)
                clock.mark("allreduce")
                self.k[decide]((1,), (1,), (self.totals, self.chain, *rule))
                clock.mark("switch")
                marks.append(clock.take())
                sent.append(bytes_sent + self.counts.nbytes)
            return marks, sent

        if not self.graphs:
            marks, sent = enqueue(clock)
            return self._replay_chain(level, frontier, marks, sent, clock)
        key = (decide, level, ahead, self.dense_done, self.level_known,
               self.out.data.ptr, self.uni.data.ptr)
        if key not in self._captured:
            launches = dict(self.launches)
            graph, (_, sent) = self._capturer.capture(lambda: enqueue(_NoClock()))
            # what enqueueing did to the host's state, which each replay does again
            grown = {k: v - launches.get(k, 0) for k, v in self.launches.items()}
            self._captured[key] = (graph, sent, (self.dense_done, self.level_known), grown)
        else:
            graph, sent, (self.dense_done, self.level_known), grown = self._captured[key]
            for k, v in grown.items():
                self.launches[k] += v
        graph.launch()
        clock.mark("expand")
        marks = [clock.take() for _ in range(ahead + 1)]
        return self._replay_chain(level, frontier, marks, sent, clock)

    def _chained_top_down(self, level: int, go) -> None:
        """A chained top-down level's expand past level 0 (whose root row _top_down_chain
        expands before the chain): Out cleared, the compacted frontier's degrees scanned, its
        tiles partitioned and expanded, sized on the device; counts[3] = its edges (all
        read)."""
        k, q = self.k, self.ctl[0:1]
        nw = self.cols.n_words
        k["clear_words"]((device.grid_for(nw),), (BLOCK,), (go, self.out, np.int64(nw)))
        k["scan_sums_q"]((self.scan_blocks,), (BLOCK,), (self.qdeg, q, self.chunk_sums, go))
        k["scan_totals_q"]((1,), (BLOCK,), (self.chunk_sums, q, go))
        k["scan_chunks_q"]((self.scan_blocks,), (BLOCK,),
                           (self.qdeg, self.scan, q, self.chunk_sums, go))
        k["partition_tiles_q"]((self.scan_blocks,), (BLOCK,), (self.scan, q, self.tile_first, go))
        k["expand_tiles_q"]((self.expand_blocks,), (BLOCK,),
                            (self.csr_offsets, self.csr_cols, self.queue, self.scan, q,
                             self.tile_first, self.visited, self.out, self.ctl, self.pred,
                             *self.row_ids, self.counts[3:4], go))
        self.launches["expand"] += 1

    def _chained_finish(self, level: int, uni, go) -> None:
        """_finish's work for a chained top-down level, if it runs: the counters cleared once
        the expand has read them, levels and the own piece's new vertices (counts[0]) with
        counts[2] -= their block CSC degrees, then the next In compacted (counts[1])."""
        self.k["level_start"]((1,), (1,), (go, self.ctl, self.counts))
        self._launch_finish(uni, level, degrees=self.csc_offsets, unvisited=self.counts[2:3],
                            go=go)
        self._launch_compact(n_edges=self.counts[1:2], go=go)

    def _replay_chain(self, level: int, frontier: int, marks: list, sent: list, clock) -> int:
        """After a chain: one read of ctl (the run count and each run level's totals), each
        level past the first replayed through the host's switch (the device ran it, so the
        host's rule must say the same direction), and the levels added to the clock, the
        skipped levels' time (their collectives) to the last level run. Returns the levels
        run."""
        bottom_up = self.bottom_up
        ctl = self._read_ctl()
        self._fresh = True
        run = int(ctl[CHAIN + 1])
        log = ctl[CHAIN + LOG:CHAIN + LOG + LEVEL_WORDS * run].reshape(run, LEVEL_WORDS)
        first = len(clock.levels)
        for j in range(run):
            if j:
                f = self._switch(level + j, log[j - 1][:4])
                if not (self.bottom_up == bottom_up and f == int(log[j - 1][0])):
                    raise BfsError(f"2d-do: the device and the host switch disagree at level "
                                   f"{level + j}")
            clock.add_level(level + j, frontier if j == 0 else int(log[j - 1][0]), sent[j],
                            marks[j])
        last = clock.levels[-1][3]
        for ms in marks[run:]:
            last.extend(ms[1:])
        if self.graphs:     # one event step for the chain: the device clock splits it
            stamps = np.concatenate(([ctl[CHAIN + 3]], log[:, 4])).astype(np.int64)
            clock.split_chain(first, np.diff(stamps) / 1e9)
        return run

    def _bottom_up_chain(self, level: int, frontier: int, clock) -> int:
        """The bottom-up level `level` (the host's decision) and `ahead` more (_chain), Beamer's
        bottom-up rule between them on the device (fu_2d.cu's decide_levels). The log of each
        run level's totals is replayed through the host's switch (the same rule), so
        directions and edges examined are kept as one level at a time would keep them.
        Returns the levels run."""
        k = self.k

        def one_level(lv, go, clock):
            stepped = self.substeps and not self.own_levels
            self._fold_in(go, self.chain[2:3])    # the level's frontier size: chain[2]
            sent = self._bottom_up_substeps(lv, go, folded=True) if stepped \
                else self._chained_bottom_up(lv, go, folded=True)
            clock.mark("expand")
            if not self.own_levels:
                k["level_counts"]((1,), (1,), (go, self.level_sums, self.counts, np.int32(0)))
                def finish(nxt):
                    self._launch_finish(self.uni, nxt, degrees=self.csc_offsets,
                                        unvisited=self.counts[2:3], go=go)
                if stepped:
                    return sent + self._share_disjoint(lv, clock, finish, go)
                return sent + self._share_level(lv, clock, finish)
            # nothing to union: the kernel marked visited and wrote the levels
            k["level_counts"]((1,), (1,), (go, self.level_sums, self.counts, np.int32(1)))
            clock.mark("finish")
            sent = self._gather_in(self.out[self.own], lv, go)
            clock.mark("union")
            return sent

        run = self._chain(level, frontier, clock, self.ahead, one_level, "decide_levels",
                          (np.float64(self.n / self.beta),))
        self.launches["bottom_up"] += self.ahead + 1
        self._queued = False
        self.level_known = True
        return run

    def _fold_in(self, go, size=None, host_size: int = 0) -> None:
        """In's fold for the level about to run (merrill_do.cu's fold_frontier: made where the
        frontier, size on the device or host_size, is small), where fold is on."""
        if self.fold is not None:
            self.k["fold"]((device.grid_for(self.fold.size),), (BLOCK,),
                           (go, self.in_words.view(self.cp.uint32),
                            np.int64(2 * self.rows.n_words),
                            *merrill_do.fold_args(self.fold, size, host_size)))

    def _chained_bottom_up(self, level: int, go, piece=None, visited=None,
                           folded: bool = False) -> int:
        """One chained bottom-up level's kernel (merrill_do.cu's bottom_up over the block CSC);
        on a grid of one row in merrill-do's write modes (DENSE at the search's first
        bottom-up level), else leaving visited and levels to finish (LEVEL_KNOWN). piece: the
        column words (w0, w1) it searches (default all), visited: that piece's words of the
        vertices not to search (default the column range's visited), both for a sub-step; the
        kernel indexes a column by its place in the piece, so every column-indexed array goes
        in from the piece's first column. folded: _fold_in made In's fold for this level.
        Returns the bytes sent: none."""
        cp = self.cp
        w0, w1 = piece or (0, self.cols.n_words)
        if self.own_levels:
            mode = merrill_do.GUESS | merrill_do.OWN_VISITED \
                | (merrill_do.LEVEL_KNOWN if self.level_known else 0) \
                | (0 if self.dense_done else merrill_do.DENSE)
            self.dense_done = self.level_known = True
        else:
            mode = merrill_do.LEVEL_KNOWN
        first = w0 * WORD
        skip = self.visited[w0:w1] if visited is None else visited
        self.k["bottom_up"]((self.bu_blocks,), (BLOCK,),
                            (self.bu_offsets[first:], self.csc_rows, np.int64(2 * (w1 - w0)),
                             np.int64((w1 - w0) * WORD), self.in_words.view(cp.uint32),
                             self.out[w0:w1].view(cp.uint32), skip.view(cp.uint32),
                             self.closed[2 * w0:2 * w1], self.pred[first:],
                             self.level_col[first:], np.int32(level + 1), np.int32(mode),
                             self.level_sums[0:2], self.level_sums[2:4], self.level_sums[4:5], go,
                             np.uint64(0) if self.head is None else self.head[first:],
                             np.uint64(0), np.uint64(0), np.uint64(0), np.int64(0),
                             *self.row_ids, *self._fold_words(folded)))
        return 0

    def _fold_words(self, folded: bool) -> tuple:
        """The bottom-up kernel's fold and mask: none unless _fold_in made it for the level."""
        if not folded or self.fold is None:
            return np.uint64(0), np.int64(0)
        return self.fold, np.int64(self.fold.size - 2)

    def _bottom_up_substeps(self, level: int, go, first=None, folded: bool = False) -> int:
        """A bottom-up level in R sub-steps down the grid column (fu_2d_do's docstring: Beamer
        et al.'s 2D bottom-up): rank i searches its own piece's open vertices, then passes the
        piece's still-unfound bits to rank i - 1 and takes piece i + s from rank i + 1 (one
        NCCL send/recv of the piece's words), so a vertex is searched on one rank after another
        until one finds it. The buffer passed on holds the vertices not to search (visited, or
        found by a rank before): each rank's own no-in-edge columns stay out of it (closed,
        the kernel's visited_init), as another rank may hold their in-edges. Out ends with this
        rank's finds over the whole column range (each piece written by one sub-step), disjoint
        from every other rank's. first: the own piece's words not to search (default its
        visited; a pushed level's resolve gives those that are no candidate too); folded: as
        _chained_bottom_up's. Returns the bytes sent."""
        R, i = self.R, self.i
        done, spare = self.unfound
        k = i
        w0, w1 = self.pieces[k]
        done[:w1 - w0] = self.visited[w0:w1] if first is None else first
        sent = 0
        for step in range(R):
            w0, w1 = self.pieces[k]
            here = done[:w1 - w0]
            self._chained_bottom_up(level, go, (w0, w1), here, folded)
            if step == R - 1:
                break
            here |= self.out[w0:w1]              # found here: no rank after searches them
            k = (k + 1) % R                      # the piece rank i + 1 searched this sub-step
            a, b = self.pieces[k]
            self.col_x.sendrecv(here, (i - 1) % R, spare[:b - a], (i + 1) % R)
            sent += here.nbytes
            done, spare = spare, done
        return sent

    def _share_disjoint(self, level: int, clock, finish, go=None) -> int:
        """After a bottom-up level in sub-steps: the ranks' finds are disjoint, so their sum
        down the grid column is their union on every rank of it (NCCL has no bitwise OR), and
        no rank above has a claim to drop (no scan, no contract); then the row's all-gather
        into In (_gather_in; go: a chain's) and finish(level + 1). Returns the bytes this rank
        sent."""
        self.col_x.allreduce(self.out, self.uni, "sum")
        sent = self.out.nbytes + self._gather_in(self.uni[self.own], level, go)
        clock.mark("union")
        finish(level + 1)
        clock.mark("finish")
        return sent
