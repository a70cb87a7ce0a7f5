"""merrill-do: direction-optimizing GPU BFS (Merrill's top-down levels + bottom-up levels).

Paper: S. Beamer, K. Asanovic, D. Patterson, "Direction-Optimizing Breadth-First Search",
SC 2012. Top-down levels are bfs.algorithms.merrill's (scan-partitioned expand-contract tiles,
single-CTA small frontiers); in the levels where the frontier holds a large share of the
unexplored edges the search runs bottom-up instead: every unvisited vertex looks through its own
adjacency for a neighbour in the frontier and stops at the first one.

Why. A top-down level must read every edge of the frontier (at scale 25 the middle level alone
is most of the 2^30 directed edges), and almost all of them lead to vertices that are already
visited or claimed by another edge. Bottom-up, a vertex of a Kronecker graph usually meets a
frontier parent within its first few neighbours, so the big levels read a small fraction of the
edges.

Bottom-up kernel: one thread per vertex, 32 consecutive vertices per warp, so the warp owns one
word of the visited bitmask and one word of the next frontier bitmap and writes both with plain
stores (no atomics, no clearing pass: every word of the next bitmap is written). The frontier is
a bitmap (1 bit per vertex, L2-resident); found vertices also go to the vertex queue (block-
aggregated append, with their degrees) so a switch back to top-down needs no conversion.

Switching (Beamer's heuristic, on the host, which learns the frontier size and its summed
degree each level anyway): top-down -> bottom-up when the frontier's edges m_f exceed
m_u / alpha (m_u: edges of the vertices not yet reached); bottom-up -> top-down when the
frontier has shrunk below n / beta. alpha = 14 and beta = 24 as in the paper unless given.
"""
from __future__ import annotations


from pathlib import Path

import numpy as np

from . import kernel1_gpu
from ..device import load_module
from .. import device
from ..errors import BfsError
from .merrill import BLOCK, MerrillSearcher

ALPHA = 14.0
BETA = 24.0


def _module():
    return load_module(Path(__file__).with_name("merrill_do.cu"))


class MerrillDoSearcher(MerrillSearcher):
    """MerrillSearcher whose big levels run bottom-up (see the module docstring)."""

    def __init__(self, offsets, columns, alpha: float = ALPHA, beta: float = BETA, **options):
        if options.get("order", "graph") != "graph":
            raise BfsError("merrill-do runs on the graph's own ids only (order=graph): its "
                           "bottom-up levels write parent and level directly")
        super().__init__(offsets, columns, **options)
        cp = self.cp
        device.check_fits(8 * self.n_words, "merrill-do frontier bitmaps")
        self.alpha, self.beta = float(alpha), float(beta)
        self.fronts = (cp.empty(self.n_words, dtype=cp.uint32),
                       cp.empty(self.n_words, dtype=cp.uint32))
        mod = _module()
        self.k_bitmap = mod.get_function("queue_to_bitmap")
        self.k_bottom_up = mod.get_function("bottom_up")
        self.launches["bottom_up"] = 0
        self.bu_blocks = device.sm_count() * 8

    def _start(self, root):
        self.last_q = 0
        self.bottom_up = False
        self.front = 0

    def _bottom_up_level(self, q, depth):
        cur, slot = self.cur, self.slot
        if not self.bottom_up:  # entering bottom-up: the frontier queue becomes a bitmap
            bm = self.fronts[self.front]
            bm.fill(0)
            self.k_bitmap((device.grid_for(q),), (BLOCK,), (self.queues[cur], np.int64(q), bm))
            self.bottom_up = True
        counter, other = self.ctl_slots[slot], self.ctl_slots[1 - slot]
        blocks = max(1, min(self.bu_blocks, -(-self.n_words * 32 // BLOCK)))
        self.k_bottom_up((blocks,), (BLOCK,),
                         (self.offsets, self.columns, np.int64(self.n), np.int64(self.n_words),
                          self.fronts[self.front], self.fronts[1 - self.front], self.visited,
                          self.parent, self.level, np.int32(depth + 1), self.queues[1 - cur],
                          self.degs[1 - cur], counter, other))
        self.launches["bottom_up"] += 1
        ctl = self._read_ctl()
        self.slot ^= 1
        self.cur ^= 1
        self.front ^= 1
        return int(ctl[2 * slot]), int(ctl[2 * slot + 1]), 1

    def _step(self, q, edges, depth):
        unexplored = self.nnz - self.visited_edges
        if self.bottom_up:
            # stay bottom-up while the frontier is large or still growing
            stay = q >= self.n / self.beta or q > self.last_q
        else:
            stay = edges > unexplored / self.alpha
        self.last_q = q
        if stay:
            return ("bottom-up",) + self._bottom_up_level(q, depth)
        self.bottom_up = False
        return super()._step(q, edges, depth)


# the registry's build / from_csr / warm_up: GPU Kernel 1, then this searcher
build, from_csr, warm_up = kernel1_gpu.entry_points(MerrillDoSearcher, "merrill-do")
