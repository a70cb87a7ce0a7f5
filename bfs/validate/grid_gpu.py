"""The five Graph500 rules for a search distributed over an R x C grid of GPUs, each rank
checking its own block (grid.cu); no rank ever holds the whole parent or level array.

What a rank has after the search: its block's CSR (row range x column range, padded local ids
with their global ids), and for its column range the levels and the parents it assigned. What
the check trusts is only each vertex's owner: the rank owning a vertex's piece speaks for its
level, and the one parent some rank of its grid column recorded for it. Per search:

  1. parents of the column range: an all-reduce (max) of the recorded parents down the grid
     column (-1 where none); the root's parent is the root.
  2. owners' levels: each rank's own piece of its levels, all-gathered along the grid row (the
     row range's levels) and down the grid column (the column range's): the same exchanges
     as the search's frontier, so a rank's stale or wrong copy of someone else's level is
     never what gets checked.
  3. every entry u -> v of the block (a warp per row): both reached or both not (rule 4);
     levels at most one apart (rule 3); nedge counts entries with a reached source (each
     undirected non-loop edge is two entries, in two blocks); where parent[v] == u the tree
     edge exists: found[v] = 1, and level[v] must be level[u] + 1 (rule 2).
  4. found is OR-reduced (max) down the grid column; then each rank checks its own piece:
     parent a vertex or -1 (rule 1), reached exactly where a parent is (rules 1-2), the root at
     level 0, every tree edge found in some block (rule 5). Levels that rise by one along every
     tree edge rule out cycles.
  5. nedge, reached and depth are summed / maxed over the world, and every rank's first culprit
     is gathered (MPI, a few int64 a rank): the lowest rule wins, then the lowest rank, worded as
     the single-process validators word it.

Every exchange goes through the search's own exchanges (bfs.comm.exchange: NCCL on device
buffers, or MPI staged), so validation moves what a level moves, a few times over.

count_grid_device gives what a search left unvalidated records (nedge, depth, reached) by
steps 2 (the row range's levels only), 3's nedge and 5's sums: one all-gather along the grid
row and a degree sum over the reached rows, with no check made.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..comm.mpi import displacements
from ..device import BLOCK, grid_for, load_module, require_gpu
from .cpu import (LEVEL, NOT_EDGE, RANGE, SPAN, SPREAD, Validation, edge_message, failure,
                  level_message, tree_edge_message)

NONE = 0xFFFFFFFFFFFFFFFF
NEDGE, SPREAD_AT, SPAN_AT, TREE_AT, RANGE_AT, LEVEL_AT, UNTIED_AT, REACHED, DEPTH = range(9)
# culprit slots in the order their rules are reported: rule 1, 2, 2, 3, 4, 5
ORDER = [RANGE_AT, LEVEL_AT, TREE_AT, SPREAD_AT, SPAN_AT, UNTIED_AT]


def _module():
    return load_module(Path(__file__).with_name("grid.cu"))


def validate_grid_device(view, root: int, comm, world_x, row_x, col_x) -> Validation:
    """The verdict, the same on every rank. `view` is the search's grid view (attributes:
    n, csr_offsets, csr_cols (None where the block keeps its CSC alone: csc_offsets, csc_rows),
    row_global, col_global, level_col, pred, own (word slice of the
    column range), row_words, col_words (words per piece of the row / column range),
    root_col (the root's column-local index or -1))."""
    cp = require_gpu()
    mod = _module()
    n_row_bits = int(np.sum(view.row_words)) * 64
    # 1. parents of the column range, from whichever rank of the column assigned them
    parent_col = cp.empty_like(view.pred)
    col_x.allreduce(view.pred, parent_col, "max")
    if view.root_col >= 0:
        parent_col[view.root_col] = root
    # 2. the owners' levels of the row and column ranges
    own_bits = slice(view.own.start * 64, view.own.stop * 64)
    own_levels = cp.ascontiguousarray(view.level_col[own_bits])
    level_row = cp.empty(n_row_bits, cp.int32)
    level_col = cp.empty_like(view.level_col)
    row_counts = np.asarray(view.row_words, np.int64) * 64
    col_counts = np.asarray(view.col_words, np.int64) * 64
    row_x.allgatherv(own_levels, level_row, row_counts, displacements(row_counts))
    col_x.allgatherv(own_levels, level_col, col_counts, displacements(col_counts))
    # 3. the block's entries
    ctl = cp.zeros(9, cp.uint64)
    ctl[1:7] = NONE
    found = cp.zeros(level_col.size, cp.uint8)
    if view.csr_offsets is not None:
        n_rows = int(view.csr_offsets.size) - 1
        mod.get_function("check_block")((grid_for(n_rows * 32),), (BLOCK,),
                                        (view.csr_offsets, view.csr_cols, np.int64(n_rows),
                                         view.row_global, level_row, level_col, parent_col,
                                         found, ctl))
    else:     # the block's CSC alone (2d-do adjacency=csc): the same entries by column
        n_cols = int(view.csc_offsets.size) - 1
        mod.get_function("check_block_by_column")(
            (grid_for(n_cols * 32),), (BLOCK,),
            (view.csc_offsets, view.csc_rows, np.int64(n_cols), view.row_global, level_row,
             level_col, parent_col, found, ctl))
    # 4. tree edges found anywhere in the column; the own piece's vertices
    col_x.allreduce(found, found, "max")
    mod.get_function("check_owned")((grid_for(own_bits.stop - own_bits.start),), (BLOCK,),
                                    (level_col, parent_col, found, view.col_global,
                                     np.int64(own_bits.start), np.int64(own_bits.stop),
                                     np.int64(root), np.int64(view.n), ctl))
    # 5. the world's verdict
    local = ctl.get()
    culprit = _culprit(local, view, root, level_row, level_col, parent_col)
    sums = np.array([local[NEDGE], local[REACHED]], np.int64)
    total = np.empty_like(sums)
    comm.Allreduce(sums, total)
    from mpi4py import MPI
    depth = np.empty(1, np.int64)
    comm.Allreduce(np.array([local[DEPTH]], np.int64), depth, op=MPI.MAX)
    everyone = np.empty((comm.Get_size(), 6), np.int64)
    comm.Allgather(culprit, everyone)
    failed = everyone[everyone[:, 0] >= 0]
    reached = int(total[1])
    if len(failed):
        return _failure_of(failed[np.lexsort((np.arange(len(failed)), failed[:, 0]))][0],
                           view.n, reached)
    return Validation(True, int(total[0]) // 2, reached, int(depth[0]), 0, "valid")


# rows per launch of the degree kernel below: bounds its int64 output to 128 MB
COUNT_CHUNK = 1 << 24


def count_grid_device(view, comm, row_x) -> tuple[int, int, int]:
    """(nedge, depth, reached) of the last search over an R x C grid of GPUs, counted where the
    data lies, for a search left unvalidated: the same on every rank, and nothing copied to
    the host but three numbers a rank. `view` is the search's grid view (as for
    validate_grid_device; only n_row_bits' worth of levels are exchanged).

    The owners' levels of the row range are all-gathered along the grid row (step 2 above);
    each rank then sums its block's out-degrees over the rows reached (the block's entries
    with a reached source: self-loops are dropped when the blocks are cut), and the world's
    sum, halved, is nedge (each undirected edge is two entries). reached and depth come from
    each rank's own piece of its levels, summed / maxed over the world."""
    cp = require_gpu()
    own_bits = slice(view.own.start * 64, view.own.stop * 64)
    own_levels = cp.ascontiguousarray(view.level_col[own_bits])
    row_counts = np.asarray(view.row_words, np.int64) * 64
    level_row = cp.empty(int(row_counts.sum()), cp.int32)
    row_x.allgatherv(own_levels, level_row, row_counts, displacements(row_counts))
    # a CSC alone (2d-do adjacency=csc): the entries of the reached columns, whose levels
    # this rank holds (an entry's ends are both reached or neither)
    offsets, levels = ((view.csr_offsets, level_row) if view.csr_offsets is not None
                       else (view.csc_offsets, view.level_col))
    n_rows = min(int(offsets.size) - 1, int(levels.size))
    degree = _reached_degree_kernel(cp)
    entries = cp.zeros((), cp.int64)
    for a in range(0, n_rows, COUNT_CHUNK):
        b = min(a + COUNT_CHUNK, n_rows)
        entries += degree(levels[a:b], offsets[a:b + 1]).sum(dtype=cp.int64)
    local = cp.stack([entries, cp.count_nonzero(own_levels >= 0).astype(cp.int64),
                      own_levels.max().astype(cp.int64) if own_levels.size
                      else cp.full((), -1, cp.int64)]).get()
    from mpi4py import MPI
    sums = np.empty(2, np.int64)
    comm.Allreduce(np.ascontiguousarray(local[:2]), sums, op=MPI.SUM)
    depth = np.empty(1, np.int64)
    comm.Allreduce(np.ascontiguousarray(local[2:]), depth, op=MPI.MAX)
    return int(sums[0]) // 2, int(depth[0]), int(sums[1])


@functools.cache
def _reached_degree_kernel(cp):
    """Per row: its entries in the block CSR where the row's level is >= 0, else 0."""
    return cp.ElementwiseKernel("int32 level, raw int64 offsets", "int64 d",
                                "d = level >= 0 ? offsets[i + 1] - offsets[i] : 0",
                                "bfs_reached_row_degree")


def _culprit(ctl, view, root, level_row, level_col, parent_col) -> np.ndarray:
    """This rank's first failure: [order (-1 none), slot, u, v, level u, level v]."""
    for order, slot in enumerate(ORDER):
        at = int(ctl[slot])
        if at == NONE:
            continue
        if slot in (SPREAD_AT, SPAN_AT, TREE_AT):       # an entry of the CSR (or CSC)
            cp = require_gpu()
            if view.csr_offsets is not None:
                r = int(cp.searchsorted(view.csr_offsets, cp.asarray([at]), side="right")[0]) - 1
                c = int(view.csr_cols[at])
            else:
                c = int(cp.searchsorted(view.csc_offsets, cp.asarray([at]), side="right")[0]) - 1
                r = int(view.csc_rows[at])
            u, v = int(view.row_global[r]), int(view.col_global[c])
            return np.array([order, slot, u, v, int(level_row[r]), int(level_col[c])], np.int64)
        v = int(view.col_global[at])                    # a vertex of the own piece
        return np.array([order, slot, int(parent_col[at]), v, -1, int(level_col[at])],
                        np.int64)
    return np.array([-1, 0, 0, 0, 0, 0], np.int64)


def _failure_of(row, n: int, reached: int) -> Validation:
    _, slot, u, v, lu, lv = (int(x) for x in row)
    if slot == RANGE_AT:
        return failure(RANGE, f"parent[{v}] = {u} is not a vertex (0..{n - 1}) or -1", reached)
    if slot == LEVEL_AT:
        expect = ("0 (the root)" if u == v else "-1 (unreached)" if u == -1
                  else f"level[{u}] + 1 (its parent is {u})")
        return failure(LEVEL, level_message(v, lv, expect), reached)
    if slot == TREE_AT:
        return failure(LEVEL, level_message(v, lv, f"level[{u}] + 1 = {lu + 1}"), reached)
    if slot in (SPREAD_AT, SPAN_AT):
        code = SPREAD if slot == SPREAD_AT else SPAN
        return failure(code, edge_message(code, u, v, lu, lv), reached)
    return failure(NOT_EDGE, tree_edge_message(u, v), reached)
