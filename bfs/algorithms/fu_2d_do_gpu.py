"""2d-do on the GPU: direction-optimizing 2D BFS on Fu et al.'s bitmap layout, with every
rank's local work in merrill-do's CUDA kernels and every exchange on device buffers.

Paper: S. Beamer, A. Buluc, K. Asanovic, D. Patterson, "Distributed Memory Breadth-First
Search Revisited: Enabling Bottom-Up Search", IPDPSW 2013. The algorithm is
bfs.algorithms.fu_2d_do's (its docstring is the spec: the two directions, Beamer's switch from
four all-reduced words, parents at discovery); the switch itself is the same code
(fu_2d_do.DirectionSwitch), with merrill-do's GPU-tuned alpha = 40 and beta = inf as the
defaults on the GPU. Layout, level loop and exchanges are fu_2d's, the device buffers
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
              count, known from the control read).
  Bottom-up   merrill_do.cu's bottom_up with BLOCK_IDS: every unvisited column vertex with
              in-edges here (the others start marked, as merrill-do's isolated vertices) reads
              its head (the block CSC's first row, a column-indexed copy) and then its in-edges,
              and stops at a row in In; Out's words written whole; pred = the row's global id;
              the in-edges read are summed into the level's examined word. In is read as a
              bitmap (see _begin_level). Rows hubs first (rows=degree; auto where the copy
              fits): each column's rows by falling global degree (merrill.hubs_first, the
              degrees all-reduced along the grid row), so the head is the biggest in-neighbour.
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
The host read a level on more than one rank: a top-down level's tile grid is sized by the
compacted frontier's edge count, a size only the host knows at launch, and the read also
carries the all-reduced switch words. Run-ahead chains over the grid (bottom-up levels whose
union, all-gather and count all-reduce are enqueued behind the kernel, as merrill-do's chain
is) are the next step; they need two GPUs to measure.

Options (bench's 2d-do@KEY=VALUE, besides alpha and beta): rows (auto / degree / graph, also
merrill-do's on one rank) and engine (1; 0 runs the grid's levels on one rank too, to measure
the per-block path on one GPU).

Memory it adds to 2d's: the block CSC, built on the device as the CSR is (kernel1_gpu's
block_csr with keys and values swapped): int64 offsets per column-range vertex + a uint32 row
id per block entry, about as much as the CSR again (and a second copy while its rows are put
hubs first); its head copy (4 bytes a column vertex) and the closed-column bitmap; and 4 words
of control.
"""
from __future__ import annotations

import numpy as np

from .. import device
from ..errors import BfsError
from . import RunContext, fu_2d_gpu, kernel1_gpu, merrill, merrill_do
from .fu_2d import WORD
from .fu_2d_do import DirectionSwitch
from .fu_2d_gpu import BLOCK, EngineAnswers, Fu2DGpu

# merrill-do's bottom-up shape over a block (64-bit CSC offsets: a block may pass 2^32 entries)
BOTTOM_UP = merrill_do.bottom_up_kernel(merrill_do.BOTTOM_UP, "i64", block_ids=True)
TOTALS, COUNTS = 4, 8      # ctl offsets of the all-reduced totals and of this rank's counts


class Fu2DDoGpu(DirectionSwitch, Fu2DGpu):
    """Fu2DGpu whose levels run top-down or bottom-up (see the module docstring)."""

    ENGINE = merrill_do.MerrillDoSearcher
    directions = EngineAnswers()
    level_edges_examined = EngineAnswers()
    edges_examined = EngineAnswers()

    def __init__(self, block, ctx: RunContext):
        self._switch_options(ctx.options, int(block.manifest["bounds"][-1]),    # fail fast
                             merrill_do.ALPHA, merrill_do.BETA)
        self.rows_order = ctx.options.get("rows", "auto")
        if self.rows_order not in ("auto", "degree", "graph"):
            raise BfsError(f"2d-do rows must be auto, degree or graph, got {self.rows_order!r}")
        super().__init__(block, ctx)

    def _engine_options(self, options: dict) -> dict:
        return {"alpha": self.alpha, "beta": self.beta, "rows": self.rows_order}

    def _build_blocks(self, row_local, col_local) -> None:
        """The block's device CSR, then its CSC (column -> rows, each column's rows sorted),
        each column's first row (the head copy) and the columns with no in-edge here (closed:
        bottom-up never deals them; half the vertices of a Kronecker graph have no edge)."""
        super()._build_blocks(row_local, col_local)
        n_col_bits, nnz = self.cols.n_words * WORD, int(col_local.size)
        self.csc_nnz = nnz
        # kept: offsets and row ids; while building: one bucket's keys and the sort's buffer
        device.check_fits(8 * (n_col_bits + 1) + 4 * nnz
                          + 16 * min(nnz, kernel1_gpu.SORT_LIMIT) + 4 * n_col_bits,
                          f"2d-do block CSC ({n_col_bits} columns, {nnz} entries)")
        self.csc_offsets, self.csc_rows = kernel1_gpu.block_csr(col_local, row_local, n_col_bits,
                                                                what="2d-do block CSC")
        cp = device.require_gpu()
        self._rows_hubs_first(n_col_bits, nnz)
        self.closed = cp.packbits(cp.diff(self.csc_offsets) == 0,
                                  bitorder="little").view(cp.uint32)
        self.head = merrill_do.head_entries(self.csc_offsets, self.csc_rows, nnz)

    def _rows_hubs_first(self, n_col_bits: int, nnz: int) -> None:
        """rows=degree (auto: where the copy fits): each column's rows in the block CSC by
        falling global degree (the grid row's sum of its blocks' CSR degrees: one all-reduce),
        as merrill-do's rows hubs first, so a column's head is its biggest in-neighbour here,
        the one most likely in In at the big levels."""
        cp = self.cp
        n_row_bits = self.rows.n_words * WORD
        need = merrill.hubs_first_bytes(n_col_bits, n_row_bits, nnz) + 8 * n_row_bits
        if self.rows_order == "graph" or (self.rows_order == "auto"
                                          and need > device.free_memory()[0]):
            self.rows_order = "graph"
            return
        device.check_fits(need, f"2d-do rows=degree: a re-sorted copy of the block CSC "
                                f"({nnz} entries)")
        degree = cp.empty(n_row_bits, cp.int64)
        self.row_x.allreduce(cp.diff(self.csr_offsets), degree, "sum")
        self.csc_rows = merrill.hubs_first(self.csc_offsets, self.csc_rows, degree, False,
                                           "2d-do rows=degree")[1]
        self.rows_order = "degree"

    def _allocate(self) -> None:
        super()._allocate()
        import cupyx
        cp = self.cp
        # ctl: [0] frontier vertices, [1] frontier edges, [2] Out bits (fu_2d_gpu's; [0:4] are
        # cleared with each compaction); [4:8] the totals, [8:12] this rank's counts of the
        # level's all-reduce: [n_f, m_f, unvisited CSC edges, edges examined]. A level reads
        # ctl once at its start (totals, and the queue _finish compacted after a top-down
        # level); a top-down level after a bottom-up one compacts and reads again.
        self.ctl = cp.zeros(12, cp.uint64)
        self.totals, self.counts = self.ctl[TOTALS:COUNTS], self.ctl[COUNTS:COUNTS + 4]
        self.host_ctl = cupyx.empty_pinned((12,), dtype=np.uint64)
        self.k[BOTTOM_UP] = merrill_do.module(BOTTOM_UP).get_function(BOTTOM_UP)
        self.bu_blocks = device.resident_grid(self.k[BOTTOM_UP], BLOCK)
        self.bu_counts = cp.zeros(4, cp.uint64)   # the kernel's found / degree sums: unused
        self.launches["bottom_up"] = 0

    def _level_loop(self) -> None:
        """Fu2D's level loop (fu_2d_gpu's search has reset the bitmaps, zeroed ctl and set
        totals[0] = 1: level 0 reads only that word), after a new search's switch state and
        counts[2]: this rank's CSC entries of the column vertices not visited, which after the
        reset is all but the root's (visited holds only the root, if this column range has
        it). counts[2] is kept across levels, never zeroed."""
        self._switch_reset()
        self._queued = False           # level 0 compacts the root's In itself
        self.counts[2:3].fill(self.csc_nnz)
        nw = int(self.visited.size)
        self.k["subtract_degrees"]((device.grid_for(nw),), (BLOCK,),
                                   (self.visited, np.int64(nw), self.csc_offsets, self.counts[2:3]))
        super()._level_loop()

    def _begin_level(self, level: int) -> int:
        """The level's direction from the last all-reduce's totals: one read of ctl. A
        top-down level takes the queue the last level's _finish compacted (its vertices in
        ctl[0], its edges in counts[1]), or, after a bottom-up level or at level 0, compacts
        In now and reads ctl again. A bottom-up level reads In as a bitmap: no queue."""
        ctl = self._read_ctl()
        frontier = self._switch(level, ctl[TOTALS:COUNTS])
        if frontier and not self.bottom_up:
            if self._queued:
                self._q, self._edges = int(ctl[0]), int(ctl[COUNTS + 1])
            else:
                self._q, self._edges, _ = self._compact(level)
        return frontier

    def _expand_level(self, level: int) -> None:
        if not self.bottom_up:
            # top-down reads every edge of the compacted frontier: ctl[1], read this level
            self.counts[3:4].fill(self._edges)
            super()._expand_level(level)
            return
        cp, nw = self.cp, self.cols.n_words
        self.counts[3:4].fill(0)
        self.k[BOTTOM_UP]((self.bu_blocks,), (BLOCK,),
                          (self.csc_offsets, self.csc_rows, np.int64(2 * nw), np.int64(nw * WORD),
                           self.in_words.view(cp.uint32), self.out.view(cp.uint32),
                           self.visited.view(cp.uint32), self.closed, self.pred, self.level_col,
                           np.int32(level + 1), np.int32(merrill_do.LEVEL_KNOWN),
                           self.bu_counts[0:2], self.bu_counts[2:4], self.counts[3:4],
                           np.uint64(0), np.uint64(0) if self.head is None else self.head,
                           np.uint64(0), np.uint64(0), np.uint64(0), np.int64(0),
                           self.row_global))
        self.launches["bottom_up"] += 1

    def _finish(self, level: int) -> None:
        """fu_2d_gpu's levels and count of the own piece's new vertices (counts[0]), with
        counts[2] -= the block CSC degrees of the level's new vertices in the same pass; then,
        after a top-down level, the next In compacted (Fu2D's loop shares the union, the row
        all-gather into In included, before it finishes a level): its block CSR edges are
        m_f (counts[1]), and its queue serves the next level if that stays top-down. After a
        bottom-up level the switch looks at n_f alone: no m_f, no queue. counts[3] stays as
        the expand set it."""
        self.counts[0:2].fill(0)
        self._launch_finish(self.uni, level, degrees=self.csc_offsets,
                            unvisited=self.counts[2:3])
        self.clock.mark("finish")
        self._queued = not self.bottom_up
        if self._queued:
            self._launch_compact(n_edges=self.counts[1:2])
        self.clock.mark("switch")


def build(block, ctx: RunContext) -> Fu2DDoGpu:
    return Fu2DDoGpu(block, ctx)


def warm_up(ctx: RunContext) -> None:
    """fu_2d_gpu's warm-up on this class: the engine's kernels compiled and a search run."""
    fu_2d_gpu.warm_up(ctx, Fu2DDoGpu)
