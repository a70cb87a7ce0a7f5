"""semiring on the GPU: BFS as sparse matrix-vector products over (select2nd, min) on Fu's 2D
grid, every rank's product in a CUDA kernel and every exchange on device buffers.

Paper: the SEI report's CombBLAS BFS (E. Werner, S. McMillan, J. Chu, CMU/SEI-2014-TN-001,
Sec. 2.5, Fig. 13; A. Buluc and J. R. Gilbert, IJHPCA 2011). The algorithm, its vectors and
their sizes are bfs.algorithms.semiring's (its docstring is the spec); this class keeps the
layout, device CSR, exchanges and level loop of bfs.algorithms.fu_2d_gpu (it extends Fu2DGpu)
and replaces the level's work with semiring.cu:

  Multiply  spmv_select_min: y = A_ij^T x_i masked by the unvisited columns; a warp takes 32
            rows (one coalesced load of x) and walks each frontier row among them together;
            the min is an atomicMin on y, so y does not depend on the order.
  Reduce    the MIN all-reduce of y down the grid column (NCCL on the device, or MPI staged
            through the host with --comm mpi).
  Assign    assign: parent / level where y is set; the own piece's next x and its count
            (into the control block that fu_2d's count all-reduce sums on the device).
  Next x    the grid row's all-gather of the own pieces, as 2d gathers In.
The level loop reads the device once a level (the all-reduced count, which ends the search at
zero). Every tree is the CPU semiring's, parent for parent: each vertex's parent is its
smallest-id neighbour one level up, whatever the grid or the backend.

One rank (1x1 grid): the same level loop with a one-rank grid's exchanges (device copies), not
fu_2d_gpu's engine (merrill's search, whose parents are not the semiring's). No from_csr (bfs
bench on one GPU): the searcher needs a block and its communicator; `bfs bench --grid` runs it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import device
from ..device import load_module
from . import RunContext, fu_2d_gpu
from .fu_2d import WORD
from .fu_2d_gpu import BLOCK, Fu2DGpu
from .semiring import NONE

KERNELS = ("spmv_select_min", "assign", "reset", "own_parents")


def _module():
    return load_module(Path(__file__).with_name("semiring.cu"))


class SemiringGpu(Fu2DGpu):
    """Fu2DGpu's layout, device CSR and exchanges with the semiring product as a level's work
    (see the module docstring)."""

    ENGINE = None     # one rank runs the level loop too (its exchanges are device copies)

    def _allocate(self) -> None:
        super()._allocate()
        cp = self.cp
        self.col_global    # its search writes global ids from it: made here, in Kernel 1
        n_row_bits, n_col_bits = self.rows.n_words * WORD, self.cols.n_words * WORD
        own_bits = (self.own.stop - self.own.start) * WORD
        device.check_fits(8 * (n_row_bits + 2 * n_col_bits + own_bits),
                          f"semiring vectors ({n_row_bits} rows, {n_col_bits} columns)")
        self.x = cp.empty(n_row_bits, cp.int64)
        self.y = cp.empty(n_col_bits, cp.int64)
        self.parent_col = cp.empty(n_col_bits, cp.int64)
        self.next_own = cp.empty(own_bits, cp.int64)
        mod = _module()
        self.k.update({name: mod.get_function(name) for name in KERNELS})
        self.spmv_blocks = device.resident_grid(self.k["spmv_select_min"], BLOCK)

    def search(self, root: int) -> None:
        cp, rows, cols = self.cp, self.rows, self.cols
        root = int(root)
        self.root = root
        n_rows, n_cols = rows.n_words * WORD, cols.n_words * WORD
        self.k["reset"]((device.grid_for(max(n_rows, n_cols)),), (BLOCK,),
                        (np.int64(n_rows), np.int64(n_cols), self.x, self.parent_col,
                         self.level_col, np.int64(rows.find(root)), np.int64(cols.find(root)),
                         np.int64(root)))
        self.ctl.fill(0)
        self.totals.fill(1)    # level 0's frontier: the root
        self._level_loop()
        own = self.own.start * WORD, (self.own.stop - self.own.start) * WORD
        self.k["own_parents"]((device.grid_for(n_cols),), (BLOCK,),
                              (self.parent_col, np.int64(n_cols), np.int64(own[0]),
                               np.int64(own[1]), self.pred))
        cp.cuda.get_current_stream().synchronize()

    def _begin_level(self, level: int) -> int:
        """The level's one read of the device: the all-reduced count of the last level."""
        return int(self._read_ctl()[4])

    def _level_body(self, level: int, clock) -> int:
        """Multiply, reduce down the grid column, assign, gather the next x along the grid row
        (semiring.SemiringBfs._level_body on device buffers); the bytes this rank sent."""
        n_rows, n_cols = self.rows.n_words * WORD, self.cols.n_words * WORD
        self.y.fill(NONE)
        self.k["spmv_select_min"]((self.spmv_blocks,), (BLOCK,),
                                  (self.x, np.int64(n_rows), self.csr_offsets, self.csr_cols,
                                   self.parent_col, self.y))
        self.launches["expand"] += 1
        clock.mark("expand")
        self.col_x.allreduce(self.y, self.y, "min")
        sent = self.y.nbytes if self.R > 1 else 0
        clock.mark("comm")
        self.counts.fill(0)
        self.k["assign"]((device.grid_for(n_cols),), (BLOCK,),
                         (self.y, np.int64(n_cols), self.parent_col, self.level_col,
                          np.int32(level + 1), self.col_global,
                          np.int64(self.own.start * WORD),
                          np.int64((self.own.stop - self.own.start) * WORD), self.next_own,
                          self.counts))
        clock.mark("finish")
        sent += self._gather_row(self.next_own, self.x, WORD)
        clock.mark("union")
        return sent


def build(block, ctx: RunContext) -> SemiringGpu:
    return SemiringGpu(block, ctx)


def warm_up(ctx: RunContext) -> None:
    """fu_2d_gpu's warm-up on this class (its kernels compiled, a search run)."""
    fu_2d_gpu.warm_up(ctx, SemiringGpu)
