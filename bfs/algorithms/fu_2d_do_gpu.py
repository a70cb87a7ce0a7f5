"""2d-do on the GPU: direction-optimizing 2D BFS on Fu et al.'s bitmap layout, with every
rank's local work in CUDA kernels and every exchange on device buffers.

Paper: S. Beamer, A. Buluc, K. Asanovic, D. Patterson, "Distributed Memory Breadth-First
Search Revisited: Enabling Bottom-Up Search", IPDPSW 2013. The algorithm is
bfs.algorithms.fu_2d_do's (its docstring is the spec: the two directions, Beamer's switch from
four all-reduced words, parents at discovery); the switch itself is the same code
(fu_2d_do.DirectionSwitch). Layout, level loop and exchanges are fu_2d's, the kernels and the
device buffers fu_2d_gpu's (this class extends Fu2DGpu), plus fu_2d_do.cu:

  Top-down    fu_2d_gpu's level: In compacted into a queue (which also counts the frontier's
              block edges), the load-balanced expand_tiles, parents recorded by the edge that
              flips a bit of Out. Edges examined: all of the compacted frontier's (its edge
              count, known from the control read).
  Bottom-up   bottom_up: every unvisited vertex of the column range with in-edges here walks
              them in the block CSC and stops at a row in In; merrill-do's kernel shape
              (bottom_up.cuh: a warp deals the open vertices of 32 words out to its lanes),
              Out's words written whole (no global atomics, no clearing); pred = the row's
              global id; the in-edges read are summed into the level's examined word. No
              compaction: In is read as a bitmap (see _begin_level).
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
One rank (1x1 grid): Fu2D's level loop with the exchanges of a one-rank grid (no-ops and
device copies), not fu_2d_gpu's exchange-free single-rank loop: the switch lives in the loop's
hooks. No from_csr (bfs bench on one GPU): the searcher needs a block and its communicator.

Memory it adds to 2d's: the block CSC, built on the device as the CSR is (device_csr with keys
and values swapped): int64 offsets per column-range vertex + a uint32 row id per block entry,
about as much as the CSR again (none on a 1x1 grid, where the CSC is the CSR); and 4 words of
control.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import device
from ..device import load_module
from . import RunContext, fu_2d_gpu, kernel1_gpu
from .fu_2d import WORD
from .fu_2d_do import DirectionSwitch
from .fu_2d_gpu import BLOCK, Fu2DGpu, device_csr

BOTTOM_UP = "bottom_up<2, 4>"   # K open vertices per lane, H in-edges read at once (merrill-do's)
KERNELS = (BOTTOM_UP, "subtract_degrees")
TOTALS, COUNTS = 4, 8      # ctl offsets of the all-reduced totals and of this rank's counts


def _module():
    return load_module(Path(__file__).with_name("fu_2d_do.cu"), (BOTTOM_UP,))


class Fu2DDoGpu(DirectionSwitch, Fu2DGpu):
    """Fu2DGpu whose levels run top-down or bottom-up (see the module docstring)."""

    def __init__(self, block, ctx: RunContext):
        self._switch_options(ctx.options, int(block.manifest["bounds"][-1]))   # fail fast
        super().__init__(block, ctx)

    def _build_blocks(self, row_local, col_local) -> None:
        """The block's device CSR, then its CSC (column -> rows, each column's rows sorted)."""
        super()._build_blocks(row_local, col_local)
        n_col_bits, nnz = self.cols.n_words * WORD, int(col_local.size)
        self.csc_nnz = nnz
        if self.R == 1 and self.C == 1:
            # one rank holds the whole symmetric edge list, rows and columns in the same ids:
            # the CSC is the CSR (a second copy would not fit at scale 27 on one 141 GB GPU)
            self.csc_offsets, self.csc_rows = self.csr_offsets, self.csr_cols
        else:
            self._build_csc(row_local, col_local, n_col_bits, nnz)
        # the columns with in-edges here: bottom-up deals out only those (half the vertices of
        # a Kronecker graph have no edge at all)
        cp = device.require_gpu()
        self.has_rows = cp.packbits(cp.diff(self.csc_offsets) > 0,
                                    bitorder="little").view(cp.uint64)

    def _build_csc(self, row_local, col_local, n_col_bits: int, nnz: int) -> None:
        # kept: offsets and row ids; while building: one bucket's keys and the sort's buffer
        device.check_fits(8 * (n_col_bits + 1) + 4 * nnz
                          + 16 * min(nnz, kernel1_gpu.SORT_LIMIT),
                          f"2d-do block CSC ({n_col_bits} columns, {nnz} entries)")
        self.csc_offsets, self.csc_rows = device_csr(col_local, row_local, n_col_bits)

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
        mod = _module()
        self.k.update({name: mod.get_function(name) for name in KERNELS})
        self.bu_blocks = device.resident_grid(self.k[BOTTOM_UP], BLOCK)
        self.launches["bottom_up"] = 0
        # one rank runs Fu2D's level loop too, with trivial exchanges: the switch is in its hooks
        self.single = False

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
        nw = self.cols.n_words
        self.counts[3:4].fill(0)
        self.k[BOTTOM_UP]((self.bu_blocks,), (BLOCK,),
                          (self.csc_offsets, self.csc_rows, self.in_words, self.visited,
                           self.has_rows, np.int64(nw), self.out, self.pred, self.row_global,
                           self.counts[3:4]))
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
    """fu_2d_gpu's warm-up on this class: both modules' kernels compiled and a search run (on
    its 3-vertex block the default alpha goes bottom-up at level 1)."""
    fu_2d_gpu.warm_up(ctx, Fu2DDoGpu)
