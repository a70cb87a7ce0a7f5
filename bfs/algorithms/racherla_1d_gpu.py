"""1d on the GPU: Racherla's 1D MPI + CUDA BFS ("BFS over GPU clusters using MPI and CUDA"),
with every rank's work and every exchange on device memory.

Layout: the P x 1 grid of bfs.partition (`--1d P`). Rank r holds the adjacency rows of its vertex
piece; as in the report, every rank keeps the level array and the visited set of all vertices
and the whole next frontier. A P x 1 grid is Fu's 2D layout with one grid column, so the block
CSR, the frontier compaction, the load-balanced expand and the level kernels are
bfs.algorithms.fu_2d_gpu's (this class extends it); only the exchange differs:

  Expand    rank r compacts the frontier vertices it owns and expands their rows into Out_r
            (all vertices, minus visited); the edge that flips a bit records its parent.
  Exchange  every rank needs every rank's discoveries. Big levels: the Out bitmaps are
            all-gathered (NCCL all-gather, n/8 bytes per rank). Small levels (frontier under
            --small-frontier vertices, the report's threshold): each rank sends the list of
            vertices it found instead (an all-gather of variable counts), sized from the
            level's one control read, where every rank's frontier edges bound its list.
            The report expands small frontiers on one process; with each rank holding only
            its own rows that would ship the frontier's rows to rank 0 and its discoveries
            back, where the list exchange ships only the discoveries.
  Claim     the first rank (in rank order) that found a vertex claims it and keeps its parent,
            as the CPU backend's apply-in-rank-order does: below = OR of the ranks before,
            above = OR of the ranks after, and fu_2d.cu's contract gives the union and the
            parents kept (those of bits a rank before found are dropped).
  Levels    visited |= union, levels set, the next frontier is the own piece of the union,
            and the union's size (identical on every rank) ends the search: no all-reduce.
One host read a level: the compaction's counts of every rank (an all-gather of two words), from
which every rank takes the same decisions (frontier size, list or bitmap, list sizes).
With one rank the search is merrill itself (fu_2d_gpu.Fu2DGpu.ENGINE): no exchange to make.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import device
from ..comm.exchange import LevelClock
from ..comm.mpi import displacements
from ..device import load_module
from ..errors import BfsError
from . import RunContext, fu_2d_gpu
from .fu_2d_gpu import BLOCK, Fu2DGpu


def _module():
    return load_module(Path(__file__).with_name("racherla_1d.cu"))


class Racherla1DGpu(Fu2DGpu):
    def __init__(self, block, ctx: RunContext):
        rows, cols = block.manifest["grid"]
        if cols != 1:
            raise BfsError(f"1d takes a P x 1 partition (bfs partition --1d P), got a {rows}x{cols}"
                           " grid")
        super().__init__(block, ctx)
        if self.engine is not None:     # one rank: merrill over the whole graph
            return
        cp = self.cp
        self.small_frontier = int(ctx.options.get("small_frontier", 1000))
        P, nw = self.R, self.cols.n_words
        device.check_fits(8 * P * nw, f"1d exchange buffer ({P} ranks x {nw} words)")
        self.gathered = cp.empty(P * nw, cp.uint64)   # bitmaps, or lists as uint32
        # ctl as in fu_2d_gpu, plus [8 + 2r], [9 + 2r]: rank r's frontier vertices and edges
        import cupyx
        self.ctl = cp.zeros(8 + 2 * P, cp.uint64)
        self.totals, self.counts = self.ctl[4:5], self.ctl[5:6]
        self.host_ctl = cupyx.empty_pinned((8 + 2 * P,), dtype=np.uint64)
        mod = _module()
        self.k.update({name: mod.get_function(name)
                       for name in ("fold_bitmaps", "bits_to_list", "list_to_bits")})
        self.exchanges = {"bitmap": 0, "list": 0}    # levels of each kind, last search

    def _level_loop(self) -> None:
        P, nw = self.R, self.cols.n_words
        pairs, pair_displs = np.full(P, 2), 2 * np.arange(P)
        clock = LevelClock(device=True, pool=self._event_pool)
        clock.start()
        self.exchanges = {"bitmap": 0, "list": 0}
        level = 0
        while True:
            self._launch_compact()
            self.world_x.allgatherv(self.ctl[0:2], self.ctl[8:], pairs, pair_displs)
            ctl = self._read_ctl()
            frontier, q, edges = int(ctl[4]), int(ctl[0]), int(ctl[1])
            if frontier == 0:
                clock.mark("expand")
                clock.end_level(level, 0, 0)
                break
            self._expand_tiles(q, edges)
            clock.mark("expand")
            # what each rank can have found: its frontier edges, at most every vertex
            found_max = np.minimum(ctl[9::2].astype(np.int64), nw * 64)
            lists = found_max + 1
            if (frontier < self.small_frontier and lists.max() <= 2 * nw
                    and lists.sum() <= 2 * P * nw):
                sent = self._exchange_lists(lists, clock)
                self.exchanges["list"] += 1
            else:
                sent = self._exchange_bitmaps(clock)
                self.exchanges["bitmap"] += 1
            self._contract(rest=self.received)
            self.totals.fill(0)
            self._launch_finish(self.uni, level + 1, counted=slice(0, nw),
                                count_into=self.totals)
            self.in_words[...] = self.uni[self.own]
            clock.mark("expand")
            clock.end_level(level, frontier, sent + 16 * (P - 1))
            level += 1
        self.levels_run = level
        self._keep_profile(clock)

    def _exchange_bitmaps(self, clock) -> int:
        """Every rank's Out, all-gathered; folded into below (self.prefix) and above
        (self.received). Returns the bytes this rank sent."""
        P, nw = self.R, self.cols.n_words
        self.world_x.allgatherv(self.out, self.gathered, np.full(P, nw), nw * np.arange(P))
        clock.mark("comm")
        self.k["fold_bitmaps"]((device.grid_for(nw),), (BLOCK,),
                               (self.gathered, np.int32(P), np.int32(self.i), np.int64(nw),
                                self.prefix, self.received))
        return self.out.nbytes * (P - 1)

    def _exchange_lists(self, lists: np.ndarray, clock) -> int:
        """Every rank's discoveries as a list ([count, ids...], lists[r] words reserved for
        rank r), all-gathered and set into below / above."""
        P, me, nw = self.R, self.i, self.cols.n_words
        cp = self.cp
        send = self.inclusive.view(cp.uint32)
        send[0:1].fill(0)
        self.k["bits_to_list"]((device.grid_for(nw),), (BLOCK,), (self.out, np.int64(nw), send))
        self.prefix.fill(0)
        self.received.fill(0)
        clock.mark("expand")
        displs = displacements(lists)
        recv = self.gathered.view(cp.uint32)
        self.world_x.allgatherv(send[:int(lists[me])], recv[:int(lists.sum())], lists, displs)
        clock.mark("comm")
        for r in range(P):
            if r != me and lists[r] > 1:
                self.k["list_to_bits"]((device.grid_for(int(lists[r]) - 1),), (BLOCK,),
                                       (recv[int(displs[r]):],
                                        self.prefix if r < me else self.received))
        return int(lists[me]) * 4 * (P - 1)


def build(block, ctx: RunContext) -> Racherla1DGpu:
    return Racherla1DGpu(block, ctx)


def warm_up(ctx: RunContext) -> None:
    """fu_2d_gpu's warm-up (its kernels run here too), and this module's kernels compiled."""
    fu_2d_gpu.warm_up(ctx)
    mod = _module()
    for name in ("fold_bitmaps", "bits_to_list", "list_to_bits"):
        mod.get_function(name)
