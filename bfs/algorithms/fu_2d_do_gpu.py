"""2d-do on the GPU: direction-optimizing 2D BFS on Fu et al.'s bitmap layout, with every
rank's local work in merrill-do's CUDA kernels and every exchange on device buffers.

Paper: S. Beamer, A. Buluc, K. Asanovic, D. Patterson, "Distributed Memory Breadth-First
Search Revisited: Enabling Bottom-Up Search", IPDPSW 2013. The algorithm is
bfs.algorithms.fu_2d_do's (its docstring is the spec: the two directions, Beamer's switch from
four all-reduced words, parents at discovery); the switch itself is the same code
(fu_2d_do.DirectionSwitch), with merrill-do's GPU-tuned alpha = 40, beta = inf and bottom-up
floor n / 64 as the defaults on the GPU (the floor kept a 2000 x 2000 lattice's last ~80
levels, each a bitmap sweep and a hand-back from the level loop across GPUs, top-down: the same
rule as one GPU's). Layout, level loop and exchanges are fu_2d's, the device buffers
fu_2d_gpu's (this class extends Fu2DGpu).

One per-GPU engine. A grid of one rank has no exchange, so its search is a one-GPU search:
it runs merrill-do itself over the block (Fu2DGpu.ENGINE; the block is then the graph's CSR in
the graph's ids), with everything merrill-do has: rows hubs first, the head copy, the two-step
bottom-up, the 4-blocks-an-SM shape, run-ahead chains of levels decided on the device (one
host read a chain), tail lists and whole-sector writes. On more ranks every level's local work
runs merrill-do's kernels over the rank's block:

  Top-down    fu_2d_gpu's level: In compacted into a queue (which also counts the frontier's
              block edges), the load-balanced expand_tiles, parents recorded by the edge that
              flips a bit of Out. Edges examined: all of the compacted frontier's (its edge
              count, known from the control read). Level 0 (the root alone, always
              top-down) expands the root's row by a grid-stride kernel (expand_root):
              no compaction and no read of the device before it.
  Bottom-up   merrill_do.cu's bottom_up with BLOCK_IDS: every unvisited column vertex with
              in-edges here (the others start marked, as merrill-do's isolated vertices) reads
              its head (the block CSC's first row, a column-indexed copy) and then its in-edges,
              and stops at a row in In; Out's words written whole; pred = the row's global id;
              the in-edges read are summed into the level's examined word. In is read as a
              bitmap (see _begin_level). Rows hubs first (rows=degree; auto where the ranks
              fit): each column's rows by falling global degree (merrill.degree_ranks, the
              degrees all-reduced along the grid row), sorted as ranks by the CSC's own build,
              so the head is the biggest in-neighbour.
  Contract    fu_2d_gpu's: parents recorded where a rank above in the grid column claimed the
              vertex are dropped, in both directions, so pred >= 0 exactly where this rank
              assigned (what bfs.validate.grid_gpu checks); no predecessor pass.
  Switch      the four words [n_f, m_f, unvisited CSC edges, edges examined] live in the
              control block: ctl[8:12] this rank's counts, all-reduced (NCCL, on the stream)
              into ctl[4:8]; a read of ctl at the level's start brings them to the host, where
              the direction is decided. [2]: CSC degrees of the level's new vertices, taken
              off a running count (started at the block's CSC entries less the root's) by
              finish in its pass over the new vertices; [1]: after a top-down level, the next
              In is compacted at once and its block CSR edges are [1], and the queue serves
              the next level if it stays top-down (one read a level); after a bottom-up level
              the switch looks at n_f alone, and a level switching back to top-down compacts
              and reads again.
Chains (ahead, td_ahead, graphs): levels enqueued back to back, each run or skipped by the
switch's rule on the device, one host read a chain, replayed as CUDA graphs; and a bottom-up
level of a grid of several rows in sub-steps down the grid column (substeps):
fu_2d_do_chains's ChainedLevels.

A grid of one row (1 x C: every column's in-edges are in its block, the column range is the
own piece): a bottom-up level has nothing to union, so the kernel does all of the level, as
merrill-do's does: visited marked, parent and level written (the first bottom-up level writes
every entry no earlier level reached in whole sectors, so the search needs no reset pass over
parent and level: merrill_do.cu's DENSE and GUESS, and complete_outputs at the end), the found
vertices and their block CSC degrees summed for the switch; then the row all-gathers Out into
In and the switch words are all-reduced. No contract, no finish pass. Parents go to global
ids by tiles.cuh's padded_to_global (a search over the C pieces), not a per-row table. The CSC
offsets are read as 32 bits below 2^32 block entries, as merrill-do's are.

The level loop across GPUs (peer; a grid of one row on one host): fu_2d_do_peer's PeerLoop.
Under the same choice the row's all-gather of Out into In goes through peer memory (In lives
in a window; bfs.comm.peer's PeerShare, _open_in_share): each rank writes its piece's nonzero
words into every rank's In between two flag meetings, captured in the chains' CUDA graphs like
the NCCL calls; a tail level of a few thousand vertices then costs In's clear and a few words,
not the whole bitmap (scale 29 on 1x2, CSC alone: 0.23-0.27 against 0.35-0.39 ms a tail level,
1.07x the search; BENCHMARKS.md). The level's four switch words are summed by the same kind of
flags (PeerShare.sum, _sum_counts), not NCCL's all-reduce: a chain on a grid of one row then
has no collective but its pushed levels' (measured only by the grid check so far).

The block's CSC alone (adjacency=csc; fu_2d_do's docstring, "One adjacency"): fu_2d_do_push's
CscPush.

Options (bench's 2d-do@KEY=VALUE, besides alpha and beta): rows (auto / degree / graph, also
merrill-do's on one rank), engine (1; 0 runs the grid's levels on one rank too, to measure the
per-block path on one GPU), ahead and td_ahead (the chains' lengths past the host's decision),
graphs (1: chains replayed as CUDA graphs; 0: launched one by one, every level step timed
apart), substeps (above), peer (above), adjacency (above), hub_degree (above; 0: no pairs, the
resolve walks every candidate), small_push (fu_2d_do_push.SMALL_PUSH: auto, an edge count, or
0), fold (merrill-do's: In folded to 1 MiB before a small-frontier bottom-up level or
resolve, auto where In is 16 MiB or more; scale 30 on 1x4: the first bottom-up level 14.8 ->
8.3 ms).

Memory it adds to 2d's: the block CSC, built on the device as the CSR is (bfs.build.csr_gpu's
block_csr with keys and values swapped): int64 offsets per column-range vertex + a uint32 row
id per block entry, about as much as the CSR again (and 8 bytes a row-range vertex while it is
built hubs first: the ranks and their inverse); its head copy (4 bytes a column vertex) and the
closed-column bitmap; and 4 words of control. With peer: a window of 2 x C x min(2^20,
columns) 8-byte entries a rank, and four int64 arrays of min(2^20, columns) (the own finds'
row starts and degrees, two parities); In itself moves into a window (cudaMalloc, outside
CuPy's pool).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import device
from ..errors import BfsError
from . import RunContext, fu_2d_gpu, merrill, merrill_do, tiles
from ..build import csr_gpu, memory
from ..comm import peer
from .fu_2d import WORD
from .fu_2d_do import DirectionSwitch, adjacency_option
from .fu_2d_do_chains import (AHEAD, CHAIN, COUNTS, GRAPHS, LEVEL_WORDS, LOG, SUBSTEPS,
                              TD_AHEAD, TOTALS, ChainedLevels)
from .fu_2d_do_peer import PEER, PeerLoop
from .fu_2d_do_push import CscPush
from .fu_2d_gpu import BLOCK, EngineAnswers, Fu2DGpu

class Fu2DDoGpu(ChainedLevels, PeerLoop, CscPush, DirectionSwitch, Fu2DGpu):
    """Fu2DGpu whose levels run top-down or bottom-up (see the module docstring)."""

    ENGINE = merrill_do.MerrillDoSearcher
    directions = EngineAnswers()
    level_edges_examined = EngineAnswers()
    edges_examined = EngineAnswers()
    # the switch's defaults on the GPU, merrill-do's (also from_csr's: a 1x1 searcher built
    # without __init__ runs merrill-do's engine with them)
    alpha, beta, floor, rows_order = (merrill_do.ALPHA, merrill_do.BETA,
                                      merrill_do.BOTTOM_UP_FLOOR, "auto")

    def __init__(self, block, ctx: RunContext):
        self._switch_options(ctx.options, int(block.manifest["bounds"][-1]),    # fail fast
                             self.alpha, self.beta, self.floor)
        self.adjacency = adjacency_option(ctx.options)
        self.rows_order = ctx.options.get("rows", "auto")
        if self.rows_order not in ("auto", "degree", "graph"):
            raise BfsError(f"2d-do rows must be auto, degree or graph, got {self.rows_order!r}")
        for key, default in (("ahead", AHEAD), ("td_ahead", TD_AHEAD)):
            value = ctx.options.get(key, default)
            if not (isinstance(value, int) and 0 <= value <= 64):
                raise BfsError(f"2d-do {key} must be an integer from 0 to 64, got {value!r}")
            setattr(self, key, value)
        if self.adjacency == "csc":
            self.td_ahead = 0      # a pushed top-down level runs one at a time (_pushed_level)
        self._push_options(ctx.options)
        self.fold_option = ctx.options.get("fold", "auto")
        merrill_do.fold_words(0, self.fold_option)      # fail fast on a bad value
        # set before the communicators (the instance's dict frees in that order), so that
        # dropping the searcher frees the graphs first: NCCL will not destroy a communicator
        # while a graph that captured its collectives lives (ncclCommDestroy waits for them
        # forever); close() says it
        self._captured: dict = {}     # chain key -> (graph, bytes sent a level, host state)
        graphs = ctx.options.get("graphs", GRAPHS)
        if graphs not in (0, 1):
            raise BfsError(f"2d-do graphs must be 0 or 1, got {graphs!r}")
        self.substeps = ctx.options.get("substeps", SUBSTEPS)
        self.peer_request = ctx.options.get("peer", PEER)
        if self.peer_request not in peer.PEER_CHOICES:
            raise BfsError(f"2d-do peer must be one of {', '.join(peer.PEER_CHOICES)}, got "
                           f"{self.peer_request!r}")
        self.loop_blocks_request = merrill.check_loop_blocks(ctx.options.get("loop_blocks", 0),
                                                             "2d-do")
        self.loop_spread = merrill.check_loop_spread(
            ctx.options.get("loop_spread", merrill.LOOP_SPREAD), "2d-do")
        self.peers = None
        self.in_share = None      # In's all-gather through peer memory (_open_in_share)
        if self.substeps not in (0, 1):
            raise BfsError(f"2d-do substeps must be 1 (bottom-up levels in sub-steps down the "
                           f"grid column) or 0, got {self.substeps!r}")
        super().__init__(block, ctx)
        # a graph's NCCL calls are captured with it; MPI's host-staged exchanges cannot be
        # (a grid of one rank has none: its exchanges are device copies)
        self.graphs = int(graphs and self.engine is None
                          and (self.comm_kind == "nccl" or self.R * self.C == 1))
        self._capturer = device.GraphCapture() if self.graphs else None

    def close(self) -> None:
        """The captured graphs, the peer window, then the communicators (see __init__)."""
        self._captured.clear()
        if self.peers is not None:
            self.peers.close()
            self.peers = None
        if self.in_share is not None:
            self.in_share.close()
            self.in_share = None
        super().close()

    def _engine_options(self, options: dict) -> dict:
        extra = {key: options[key] for key in ("ahead", "fold", "loop_blocks", "loop_spread")
                 if key in options}
        return {"alpha": self.alpha, "beta": self.beta, "floor": self.floor,
                "rows": self.rows_order, **extra}

    def _build_blocks(self, entries, fill: str) -> None:
        """The block's device CSR, then its CSC (column -> rows) from the same entries, keys
        and values swapped, each column's rows in one order: hubs first (rows=degree, auto
        where it fits: by falling global degree, see _degree_ranks), sorted as ranks in the
        CSC's own sort and turned back to row ids after it; else by row id."""
        n_col_bits, n_row_bits = self.cols.n_words * WORD, self.rows.n_words * WORD
        if self.adjacency == "csc":
            # no CSR: the rows' block degrees (for the CSC's hubs-first order and its size)
            # counted in one pass over the entries
            self.csr_offsets = self.csr_cols = None
            with self.phase("row degrees"):
                row_degree = self._row_degrees(entries, n_row_bits)
                nnz = int(row_degree.sum())
                # the grid row's sum: each row's global degree, in place
                self.row_x.allreduce(row_degree, row_degree, "sum")
                self._mark_hubs(row_degree)
        else:
            super()._build_blocks(entries, fill)
            nnz, row_degree = int(self.csr_cols.size), None
        self.csc_nnz = nnz
        # kept: offsets and row ids; while building: one bucket's keys and the sort's buffer
        # (or, streamed, the fill's cursors)
        need = (8 * (n_col_bits + 1) + 4 * nnz
                + 16 * min(nnz, memory.SORT_LIMIT if fill == "keys"
                           else memory.RESORT_LIMIT) + 4 * n_col_bits)
        device.check_fits(need, f"2d-do block CSC ({n_col_bits} columns, {nnz} entries)")
        with self.phase("block CSC"):
            perm, rank = self._degree_ranks(need, n_row_bits, row_degree)
            row_degree = None
            if rank is None:
                pairs = lambda: ((cols, rows) for rows, cols in entries())  # noqa: E731
            elif fill == "keys":
                # the whole block, kept and read once per bucket: its rows become ranks once,
                # in place (the CSR is built; nothing reads them as rows again)
                for rows, _ in entries():
                    _to_rank(rank, rows)
                pairs = lambda: ((cols, rows) for rows, cols in entries())  # noqa: E731
            else:
                # made again at each pass: each chunk's rows become ranks as it comes
                pairs = lambda: ((cols, _to_rank(rank, rows))  # noqa: E731
                                 for rows, cols in entries())
            self.csc_offsets, self.csc_rows = csr_gpu.block_csr(
                pairs, n_col_bits, what="2d-do block CSC", fill=fill)
            rank = pairs = None       # the ranks, and the closure that holds them
            if perm is not None:      # ranks back to row ids, a slice at a time
                for lo in range(0, nnz, memory.RESORT_LIMIT):
                    part = self.csc_rows[lo:lo + memory.RESORT_LIMIT]
                    part[...] = perm[part]
            del perm

    def _degree_ranks(self, csc_need: int, n_row_bits: int, degree=None):
        """rows=degree (auto: where the ranks fit beside the CSC's build): the row range's
        vertices ranked by falling global degree (degree given, else the grid row's sum of its
        blocks' CSR degrees: one all-reduce), as merrill-do's rows hubs first, so a column's
        head is its biggest in-neighbour here, the one most likely in In at the big levels.
        Returns (perm, rank), or (None, None) for rows=graph. Ordering the CSC's own sort by
        rank replaced a second sort of the whole CSC in place after it (0.25 s of a scale-26
        1x2 Kernel 1)."""
        cp = self.cp
        kept, peak = 8 * n_row_bits, 32 * n_row_bits    # perm + rank; + degrees, keys, sort
        if self.rows_order == "graph" or (self.rows_order == "auto" and max(
                csc_need + kept, peak) > device.free_memory()[0]):
            self.rows_order = "graph"
            return None, None
        device.check_fits(peak, f"2d-do rows=degree: the {n_row_bits} rows ranked by degree")
        if degree is None:
            degree = cp.empty(n_row_bits, cp.int64)
            self.row_x.allreduce(cp.diff(self.csr_offsets), degree, "sum")
        perm, rank = merrill.degree_ranks(degree)
        del degree
        self.rows_order = "degree"
        return perm, rank

    def _finish_blocks(self) -> None:
        """After the entries' local ids are freed: each column's first row (the head copy),
        the columns with no in-edge here (closed: bottom-up never deals them; half the
        vertices of a Kronecker graph have no edge) and the 32-bit offsets bottom-up reads
        below 2^32 entries."""
        cp = device.require_gpu()
        n_col_bits, nnz = self.cols.n_words * WORD, self.csc_nnz
        self.closed = cp.packbits(cp.diff(self.csc_offsets) == 0,
                                  bitorder="little").view(cp.uint32)
        self.head = merrill_do.head_entries(self.csc_offsets, self.csc_rows, nnz)
        if nnz < 2**32:
            device.check_fits(4 * (n_col_bits + 1), "2d-do 32-bit block CSC offsets")
            self.bu_offsets, o_type = self.csc_offsets.astype(cp.uint32), "u32"
        else:
            self.bu_offsets, o_type = self.csc_offsets, "i64"
        self.bu_kernel = merrill_do.bottom_up_kernel(merrill_do.BOTTOM_UP, o_type, block_ids=True)

    def _allocate(self) -> None:
        super()._allocate()
        import cupyx
        cp = self.cp
        # ctl: [0] frontier vertices, [1] frontier edges, [2] Out bits (fu_2d_gpu's; [0:4] are
        # cleared with each compaction); [4:8] the totals, [8:12] this rank's counts of the
        # level's all-reduce: [n_f, m_f, unvisited CSC edges, edges examined]; [12:] a chain's
        # control and log (fu_2d.cu's decide_levels). One read of ctl brings all to the host.
        # the last word: the peer share's error word (_open_in_share), read with the rest
        self.ctl = cp.zeros(CHAIN + LOG + LEVEL_WORDS * (max(self.ahead, self.td_ahead) + 1)
                            + 1, cp.uint64)
        self.totals, self.counts = self.ctl[TOTALS:COUNTS], self.ctl[COUNTS:COUNTS + 4]
        self.chain = self.ctl[CHAIN:-1]
        self.host_ctl = cupyx.empty_pinned((self.ctl.size,), dtype=np.uint64)
        mod = merrill_do.module(self.bu_kernel)
        self.k["bottom_up"] = mod.get_function(self.bu_kernel)
        self.k["complete"] = mod.get_function("complete_outputs")
        self.k["fold"] = mod.get_function("fold_frontier")
        # In's fold, checked before In by the bottom-up kernel (merrill_do.fold_words)
        words = merrill_do.fold_words(2 * self.rows.n_words, self.fold_option)
        self.fold = cp.zeros(words + 1, cp.uint32) if words else None
        self.bu_blocks = device.resident_grid(self.k["bottom_up"], BLOCK)
        self.root_blocks = 2 * device.sm_count()      # expand_root's grid over one row
        # the bottom-up kernel's sums: [0] found, [1] their CSC degrees, [2:4] its other
        # counter (unused here), [4] in-edges read; level_counts moves and clears them
        self.level_sums = cp.zeros(5, cp.uint64)
        self.launches["bottom_up"] = 0
        # a chained top-down level's kernels (fu_2d.cu, tiles.cuh's *_q): fixed grids that
        # read the frontier's size from the device
        mod2d = fu_2d_gpu._module()
        self.k.update({name: mod2d.get_function(name) for name in
                       ("scan_sums_q", "scan_totals_q", "scan_chunks_q", "partition_tiles_q",
                        "expand_tiles_q", "clear_words", "level_start", "decide_top_down",
                        "push_tiles", "take_pairs")})
        q_bits = self._queue_bits()
        self.chunk_sums = cp.empty(max(1, -(-q_bits // tiles.SCAN_CHUNK)), cp.int64)
        sms = device.sm_count()
        self.scan_blocks = max(1, min(-(-q_bits // tiles.SCAN_CHUNK), 4 * sms))
        self.expand_blocks = device.resident_grid(self.k["expand_tiles_q"], BLOCK)
        # a grid of one row: the kernel does the whole level, without a reset pass (docstring);
        # not with the CSC alone, whose pushed levels resolve like a grid of several rows
        self.own_levels = self.R == 1 and self.adjacency == "both"
        self.one = cp.ones(1, cp.uint64)       # the go word of a level not in a chain
        # sub-steps (several rows): the column range's R pieces (piece k: grid row k's own),
        # and two buffers of a piece's words, the vertices not yet found, passed up the column
        offsets = self.cols.word_offset
        self.pieces = [(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]
        if (self.substeps or self.adjacency == "csc") and not self.own_levels:
            most = max(b - a for a, b in self.pieces)
            self.unfound = (cp.empty(most, cp.uint64), cp.empty(most, cp.uint64))
        if self.adjacency == "csc":
            self._allocate_push()
        if self.C > 1 and self.row_comm.Get_rank() != self.j:
            # the peer windows' ranks are the grid row's columns
            raise BfsError("2d-do peer: the grid row's communicator is not in column order")
        if self.adjacency == "both" and self.R == 1 and self.C > 1:
            self._open_peers()
        if self.C > 1:
            self._open_in_share()

    def _open_in_share(self) -> None:
        """A grid row on GPUs of one host (peer's choice, as the level loop's): In lives in a
        peer window, and each level's all-gather of the row's pieces into it writes the own
        piece's nonzero words straight into every rank's In (bfs.comm.peer's PeerShare): a
        tail level's few vertices cost a few words and two flag meetings, not NCCL's
        all-gather of the whole bitmap (128 MiB a rank at scale 30 on 1x4, ~0.6 ms). On a grid
        of one row (the row is the world) the switch words are summed through it too
        (_sum_counts)."""
        self.in_share = peer.PeerShare.open(self.peer_request, self.row_comm, self.rows.n_words,
                                            self.row_displs, self.row_counts, self.ctl[-1:])
        if self.in_share is not None:
            self.in_words = self.in_share.words

    def _gather_in(self, piece, level: int, go=None) -> int:
        """Fu2D's all-gather of the row's pieces into In, through peer memory where
        _open_in_share opened it (nothing done unless go[0], as the chain's kernels)."""
        if self.in_share is None:
            return super()._gather_in(piece, level, go)
        return self.in_share.share(piece, self.one if go is None else go, level)

    def _sum_counts(self, level: int, go=None) -> None:
        """The level's switch words summed over the ranks: by the peer share's flags where In
        is shared so on a grid of one row (the row is the world), else Fu2D's all-reduce."""
        if self.in_share is None or self.R > 1:
            super()._sum_counts(level, go)
        else:
            self.in_share.sum(self.counts, self.totals, self.one if go is None else go, level)

    def _read_ctl(self, words=None, host=None):
        """Fu2DGpu's read; a read of ctl brings the peer share's error word (its last word): a
        peer that did not meet fails the search here."""
        host = super()._read_ctl(words, host)
        if self.in_share is not None and words is None and host[-1]:
            raise BfsError(self.in_share.error_message(int(host[-1])))
        return host

    def _reset_device(self, r_local: int, c_local: int) -> None:
        self._r_root, self._c_root = r_local, c_local
        if not self.own_levels:
            super()._reset_device(r_local, c_local)
            return
        n = max(self.rows.n_words, self.cols.n_words)
        self.k["reset_bitmaps"]((device.grid_for(n),), (BLOCK,),
                                (np.int64(self.rows.n_words), np.int64(self.cols.n_words),
                                 self.level_col, self.in_words, self.visited,
                                 np.int64(r_local), np.int64(c_local), self.pred,
                                 self.closed.view(self.cp.uint64)))

    def _complete(self, c_local: int) -> None:
        """A grid of one row: parent = level = -1 for every column no level reached (with no
        bottom-up level, the closed ones too), as merrill-do ends a search."""
        if not self.own_levels:
            return
        nw = self.cols.n_words
        self.k["complete"]((device.grid_for(2 * nw),), (BLOCK,),
                           (self.visited.view(self.cp.uint32), self.closed, np.int64(2 * nw),
                            np.int64(nw * WORD), np.uint32(c_local if c_local >= 0 else 2**32 - 1),
                            np.int32(not self.dense_done), self.pred, self.level_col))

    def _level_loop(self) -> None:
        """Fu2D's level loop (fu_2d_gpu's search has reset the bitmaps, zeroed ctl and set
        totals[0] = 1: level 0 reads only that word), after a new search's switch state and
        counts[2]: this rank's CSC entries of the column vertices not visited, which after the
        reset is all but the root's, if this column range has it (subtract_degrees over the
        root's word of visited, whose other bits are closed columns of degree 0). counts[2] is
        kept across levels, never zeroed."""
        self._switch_reset()
        self._queued = False           # level 0 compacts the root's In itself
        self._fresh = False            # host_ctl holds the device's ctl (a chain just read it)
        self.dense_done = self.level_known = False
        self.counts[2:3].fill(self.csc_nnz)
        if self._c_root >= 0:
            w = self._c_root // WORD
            self.k["subtract_degrees"]((1,), (BLOCK,),
                                       (self.visited[w:w + 1], np.int64(1),
                                        self.csc_offsets[w * WORD:], self.counts[2:3]))
        super()._level_loop()

    def _host_totals(self):
        """The last all-reduce's four switch words as the host last read them (a view of
        host_ctl: [n_f, m_f, unvisited CSC edges, edges examined])."""
        return self.host_ctl[TOTALS:COUNTS]

    def _begin_level(self, level: int) -> int:
        """The level's direction from the last all-reduce's totals: one read of ctl (none just
        after a chain, which read it). A top-down level takes the queue the last level's
        _finish compacted (its vertices in ctl[0], its edges in counts[1]), or, after a
        bottom-up level or at level 0, compacts In now and reads ctl again. A bottom-up level
        reads In as a bitmap: no queue. Level 0 reads nothing: its frontier is the root, its
        direction top-down, and _expand_level expands the root's row without a queue."""
        if level == 0:
            return self._switch(0, (1, 0, 0, 0))
        ctl = self.host_ctl if self._fresh else self._read_ctl()
        self._fresh = False
        frontier = self._switch(level, ctl[TOTALS:COUNTS])
        if frontier and not self.bottom_up:
            self.level_known = False
            if self._queued:
                self._q, self._edges = int(ctl[0]), int(ctl[COUNTS + 1])
            else:
                self._q, self._edges, _ = self._compact(level)
        return frontier

    def _levels(self, level: int, frontier: int, clock) -> int:
        if self.peers is not None and not self.bottom_up and self._loop_takes(level, frontier):
            return self._peer_levels(level, frontier, clock)
        if self.bottom_up:
            return self._bottom_up_chain(level, frontier, clock)
        if self.td_ahead:
            return self._top_down_chain(level, frontier, clock)
        return super()._levels(level, frontier, clock)

    def _expand_level(self, level: int) -> None:
        """A top-down level (bottom-up ones run in chains): every edge of the compacted
        frontier, ctl[1], read this level; level 0, the root's row (fu_2d.cu's expand_root)."""
        if level == 0:
            device.zero_async(self.out)
            self.k["expand_root"]((self.root_blocks,), (BLOCK,),
                                  (self.csr_offsets, self.csr_cols, np.int64(self._r_root),
                                   np.int64(self.root), self.visited, self.out, self.pred,
                                   self.counts))
            self.launches["expand"] += 1
            return
        self.counts[3:4].fill(self._edges)
        super()._expand_level(level)

    def _finish(self, level: int) -> None:
        """fu_2d_gpu's levels and count of the own piece's new vertices (counts[0]), with
        counts[2] -= the block CSC degrees of the level's new vertices in the same pass; then
        the next In compacted (Fu2D's loop shares the union, the row all-gather into In
        included, before it finishes a level): its block CSR edges are m_f (counts[1]), and
        its queue serves the next level if that stays top-down. counts[3] stays as the expand
        set it."""
        device.zero_async(self.counts[0:2])
        self._launch_finish(self.uni, level, degrees=self.csc_offsets,
                            unvisited=self.counts[2:3])
        self.clock.mark("finish")
        self._queued = True
        self._launch_compact(n_edges=self.counts[1:2])
        self.clock.mark("switch")


@functools.cache
def _rank_kernel():
    import cupy as cp
    return cp.ElementwiseKernel("raw uint32 rank", "uint32 x", "x = rank[x]", "bfs_rows_to_ranks")


def _to_rank(rank, rows):
    """rows[i] = rank[rows[i]] in place (uint32 device arrays); returns rows."""
    _rank_kernel()(rank, rows)
    return rows


def build(block, ctx: RunContext) -> Fu2DDoGpu:
    return Fu2DDoGpu(block, ctx)


def warm_up(ctx: RunContext) -> None:
    """fu_2d_gpu's warm-up on this class: the engine's kernels compiled and a search run."""
    fu_2d_gpu.warm_up(ctx, Fu2DDoGpu)
