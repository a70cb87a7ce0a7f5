"""2d-do's level loop across GPUs through peer memory: the small levels of a grid of one row, on
GPUs of one host, in one persistent kernel a rank (bfs.algorithms.fu_2d_do_gpu's Fu2DDoGpu
takes it as the mixin PeerLoop; its docstring says where the loop sits among the levels).

The level loop across GPUs (peer; a grid of one row on one host): a road-like search is
thousands of small levels, and each of fu_2d_do_gpu's chained levels costs its collectives
and the host (~76 us a level on 1x2 of a 2000 x 2000 lattice). There, every rank runs the
small levels in one persistent kernel (level_loop.cu's level_loop_peers, merrill's level loop
with the rank's block CSR for the CSR): each frontier row is walked over the rank's own
columns, a claimed column's row is written, tagged with its level, into every rank's window
in peer memory (bfs.comm.peer: CUDA IPC over NVLink), and every block of every rank adds its
arrival and counts into each rank's meeting words, one hop a level, so each rank decides the
next level, the direction (Beamer's rule, as the host's switch words would) and the end
alike. A level costs ~8.1 us on 1x2 (~9.0 when each GPU met its own blocks first and then
the others' flags; BENCHMARKS.md). The host reads one block of words and a per-level log a
launch, whose levels it files as its own (directions, edges examined, the device clock);
where the loop stops short of the end (a frontier too big, Beamer's rule), the last frontier
goes back into In and the chains go on.
Only graphs without a vertex of over LOOP_DEGREE edges take it (_loop_takes): a Kronecker
search would run a level in it and hand back at the hubs, which costs more than it saves.
peer=auto (the default) takes it where every rank has a GPU of its own on one host; on (the
tests: ranks sharing a GPU); off (the chains over --comm). A rank that stops leaves the others
waiting at most PEER_TIMEOUT_S, and the search raises naming the rank and the level.

What PeerLoop reads of the searcher: its grid (C, j, row_comm, comm, rows, cols), block CSR and
CSC, kernels dict k, control words (ctl, counts, _host_totals(): the last all-reduce's four
switch words on the host), level state (queue, in_words, visited, pred, level_col, row_ids) and
the switch (alpha, directions, level_edges_examined, last_frontier), and loop_blocks_request
(2d-do's loop_blocks option).
"""
from __future__ import annotations

import numpy as np

from .. import device
from ..comm import peer
from ..errors import BfsError
from ..log import log
from . import fu_2d_gpu, merrill
from .fu_2d import WORD
from .fu_2d_do import TOP_DOWN
from .fu_2d_gpu import BLOCK

PEER = "auto"    # the level loop across a grid row's GPUs through peer memory (comm/peer.py)
PEER_STATE = 32  # level_loop.cu's level_loop_peers: the loop's words, then its per-level log
PEER_LOG = 8     # ... LOOP_LOG_WORDS: found, found here, edges examined, and block 0's
                 # device clock (ns): level met, walk done, peers' adds issued, own add done
PEER_LEVELS = 8192   # levels one launch runs at most (its log): a 2000 x 2000 lattice's ~4000
PEER_MEET_WORDS = 4  # level_loop.cu's LOOP_MEET_WORDS: a meeting line's words
PEER_BLOCKS_MAX = 511  # level_loop.cu's LOOP_PEER_BLOCKS_MAX: the blocks a meeting word counts
PEER_RANKS_MAX = 8     # level_loop.cu's LOOP_PEERS_MAX: the ranks of a row one loop meets
PEER_TIMEOUT_S = 5.0  # a rank waits this long for another's flag before the search fails
PEER_TAGS = 2**22 - 2    # level_loop.cu's LOOP_TAG_PERIOD: an entry's tag runs 1 .. PEER_TAGS


class PeerLoop:
    """The level loop across a grid row's GPUs (module docstring), a mixin of Fu2DDoGpu."""

    def _open_peers(self) -> None:
        """A grid of one row on GPUs of one host: the small levels run in one persistent
        kernel a rank (level_loop.cu's level_loop_peers), each rank pushing its finds into the
        others' windows (comm/peer.py). A rank finds at most a level's edges, and at most its
        own columns, so a window's segment holds min(LOOP_E, columns) entries (8 bytes: a
        row and its level's tag)."""
        import cupyx
        cp, C = self.cp, self.C
        if C > PEER_RANKS_MAX and peer.choose(self.peer_request, self.row_comm):
            log(f"2d-do: the level loop across GPUs meets at most {PEER_RANKS_MAX} ranks of a "
                f"row, this grid has {C}: its small levels go through the host's chains",
                comm=self.comm)
            return
        cap = min(merrill.LOOP_E, self.cols.n_words * WORD)
        meet_bytes = 2 * C * PEER_MEET_WORDS * 8
        window = peer.open_window(self.peer_request, self.row_comm, meet_bytes + 2 * C * cap * 8)
        if window is None:
            return
        self.peers, self.peer_cap, self.peer_tag = window, cap, 0
        # each meeting word's value at its last complete level (level_loop.cu's LoopPeers), and
        # the levels run so far, whose parity the next launch's first level meets at
        self.peer_seen, self.peer_levels = cp.zeros(4 * C, cp.uint64), 0
        memory = cp.cuda.UnownedMemory(window.address, window.nbytes, window)
        self.peer_entries = cp.ndarray((2, C, cap), cp.uint64,
                                       cp.cuda.MemoryPointer(memory, meet_bytes))
        self.peer_degs = (cp.empty(cap, cp.int64), cp.empty(cap, cp.int64))
        self.peer_starts = (cp.empty(cap, cp.int64), cp.empty(cap, cp.int64))
        self.loop_state = cp.zeros(PEER_STATE + PEER_LOG * PEER_LEVELS, cp.uint64)
        self.host_loop = cupyx.empty_pinned((self.loop_state.size,), dtype=np.uint64)
        self.k["loop"] = merrill.loop_module().get_function("level_loop_peers")
        self.k["queue_to_bits"] = fu_2d_gpu._module().get_function("queue_to_bits")
        # every rank's meeting counts the same number of blocks (the fewest any GPU holds;
        # loop_blocks asks for fewer: fewer arrivals a level to meet)
        self.loop_blocks = self.row_comm.allreduce(
            min(merrill.loop_grid(self.k["loop"], self.loop_blocks_request), PEER_BLOCKS_MAX),
            op=self.MPI.MIN)
        self.nnz_total = self.comm.allreduce(int(self.csc_nnz))
        # a column's degree in a grid row's block CSC is the vertex's whole degree
        top = int(cp.diff(self.csc_offsets).max()) if self.csc_offsets.size > 1 else 0
        self.hubless = self.comm.allreduce(top, op=self.MPI.MAX) <= merrill.LOOP_DEGREE
        self.launches["loop"] = 0

    def _loop_takes(self, level: int, frontier: int) -> bool:
        """The peer level loop starts on a top-down frontier of at most LOOP_Q vertices and
        LOOP_E edges with no hub in it (merrill's rule; a root of any degree: its row is walked
        grid-wide), the edges being the last all-reduce's (global) m_f; and only on a graph with
        no hub (a road-like graph, whose every level it runs): on a Kronecker graph the loop
        ran a level or two before a hub sent the search back to the host's chains, and that
        hand-back cost 2d-do at scale 26 on 1x2 (four H100s) 571 -> 502 GTEPS (BENCHMARKS.md)."""
        if not self.hubless:
            return False
        if level == 0:
            return True
        edges = int(self._host_totals()[1])
        no_hub_row = edges <= merrill.LOOP_DEGREE or frontier <= merrill.LOOP_SPLIT_Q
        return frontier <= merrill.LOOP_Q and edges <= merrill.LOOP_E and no_hub_row

    def _peer_levels(self, level: int, frontier: int, clock) -> int:
        """Levels from `level` on in one launch a rank (level_loop.cu's level_loop_peers) until the
        frontier outgrows the loop, empties, or Beamer's rule goes bottom-up; one read of the
        loop's words and log, whose levels are then filed as the host's would be (directions,
        edges examined, the device clock's times). Where the frontier empties the search ends
        without another read; else the last frontier goes back into In, is compacted and its
        counts all-reduced for the host's next level. Returns the levels run."""
        cp, C = self.cp, self.C
        if level == 0:
            self.queue[0:1].fill(self._r_root)
            unreached = self.nnz_total
        else:
            unreached = int(self._host_totals()[2])
        device.zero_async(self.loop_state[:PEER_STATE])
        self.k["loop"]((self.loop_blocks,), (BLOCK,),
                       (self.csr_offsets, self.csr_cols, self.queue, self.peer_degs[0],
                        self.peer_degs[1], self.peer_starts[0], self.peer_starts[1],
                        np.int64(frontier), np.int32(level), np.int64(merrill.LOOP_Q),
                        np.int64(merrill.LOOP_E), np.int64(merrill.LOOP_DEGREE),
                        np.int32(PEER_LEVELS), np.float64(self.alpha),
                        np.int64(self.bottom_up_floor), np.int64(unreached),
                        self.ctl, self.loop_state, np.uint64(PEER_TIMEOUT_S * 1e9), self.pred,
                        self.level_col, self.visited.view(cp.uint32), self.peers.bases,
                        np.int32(self.j), np.int32(C), np.int64(self.peer_cap),
                        np.uint64(self.peer_tag), np.int32(self.peer_levels & 1),
                        self.peer_seen,
                        np.int64(int(self.rows.word_offset[self.j]) * WORD),
                        self.csc_offsets, self.row_ids[0], self.row_ids[1], self.counts,
                        self.loop_state[PEER_STATE:], np.int32(self.loop_spread)))
        self.launches["loop"] += 1
        clock.mark("expand")
        marks = clock.take()
        state = self._read_ctl(self.loop_state, self.host_loop)
        error = int(state[12])
        if error:
            raise BfsError(_peer_error(error, self.j, level))
        q, run = int(state[16]), int(state[18])
        self.peer_tag = (self.peer_tag + run) % PEER_TAGS   # the next launch's tags: new ones
        self.peer_levels += run
        log = state[PEER_STATE:PEER_STATE + PEER_LOG * run].reshape(run, PEER_LOG)
        first = len(clock.levels)
        # filed in bulk: a Python step a level cost a 2000 x 2000 lattice's search 5-10 ms
        # after its ~3,200 loop levels (the "begin" of the level after the loop, 1x2 and 1x4)
        found = log[:run - 1, 0].tolist()           # the frontiers of levels level+1 ..
        self.directions.extend([TOP_DOWN] * (run - 1))
        self.level_edges_examined.extend(log[:run - 1, 2].tolist())
        if run > 1:
            self.last_frontier = found[-1]
        arrivals = 8 * (C - 1) * self.loop_blocks   # bytes: each block's add to each peer
        clock.add_levels(level, [frontier, *found],
                         (8 * (C - 1) * log[:, 1] + arrivals).tolist(), marks)
        # block 0's clock (ns): a level from the previous one's end (the launch's start) to
        # its rows walked, its adds to the peers issued, its own (the release) done, and
        # every block of every rank met
        ends = np.concatenate(([state[30]], log[:, 3])).astype(np.int64)
        walked, arrived, sent = (log[:, w].astype(np.int64) for w in (4, 5, 6))
        clock.split_chain(first, np.diff(ends) / 1e9, {
            "walk": (walked - ends[:-1]) / 1e9, "arrive": (arrived - walked) / 1e9,
            "flags": (sent - arrived) / 1e9, "peers": (ends[1:] - sent) / 1e9})
        self.level_known = False
        if q == 0:
            # the search is over: the totals the next level's switch reads, set here (no read)
            self._host_totals()[:] = (0, 0, 0, int(log[run - 1][2]))
            self._fresh = True
            return run
        # the last frontier (its segments, one a source rank) back into In, for the host
        device.zero_async(self.in_words)
        parity = run & 1
        for s in range(C):
            a, b = int(state[20 + s]), int(state[21 + s])
            if b > a:
                self.k["queue_to_bits"]((device.grid_for(b - a),), (BLOCK,),
                                        (self.peer_entries[parity, s], np.int64(b - a),
                                         self.in_words))
        self._launch_compact(n_edges=self.counts[1:2])
        self._sum_counts(level + run)
        self._queued, self._fresh = True, False
        return run


def _peer_error(error: int, me: int, level0: int) -> str:
    """The message of a level loop's error word (level_loop.cu: (level << 8) | (rank + 1) << 1 |
    1 for a meeting that waited on another rank, rank -1 on this GPU's own blocks)."""
    level, waited = error >> 8, ((error >> 1) & 0x7F) - 1
    if waited < 0:
        return (f"2d-do level loop, rank {me} of the grid row: level {level}: this GPU's own "
                f"blocks did not all arrive within {PEER_TIMEOUT_S:g} s (not all resident at "
                f"once?)")
    return (f"2d-do level loop, rank {me} of the grid row: level {level}: rank {waited} did "
            f"not arrive within {PEER_TIMEOUT_S:g} s (it stopped, failed or was killed; the "
            f"loop started at level {level0})")
