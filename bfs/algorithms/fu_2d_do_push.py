"""2d-do's block CSC alone (adjacency=csc): the top-down levels pushed through the CSC, the
hub rows' parents carried by the push, and small pushed levels sent as (row, parent) pairs
(bfs.algorithms.fu_2d_do_gpu's Fu2DDoGpu takes it as the mixin CscPush; fu_2d_do's docstring,
"One adjacency", is the algorithm on the CPU).

No block CSR is built, which halves the bytes an entry costs (issue 49: scale 30 on four
H100s). A top-down level pushes the column's frontier (the last level's union, compacted with
its CSC degrees) through the CSC by the same tiles kernel as a CSR expand, into a row-range
bitmap less the rows seen; the grid row scatters those bitmaps to the pieces' owners (one
alltoallv); the own piece's candidates are resolved by the bottom-up kernel in the column's
sub-steps, as a bottom-up level with the other vertices marked done. A candidate's walk ends at
the first frontier vertex in its in-edges; a hub's runs long (its rows hubs first, the frontier
of a top-down level few and mostly of low degree: the first level, whose frontier is the root,
held scale 26 on 1x4 for 4.5 ms), so the push carries the parents of the hub rows (hub_degree:
the rows of at least that global degree; auto, the least power of two >= HUB_LEAST that leaves
at most HUB_ROWS of them): each rank sends the owners, beside the bitmaps, a fixed segment of
(row, parent) pairs a piece (fu_2d.cu's push_tiles, one more alltoallv), and the owner settles
those rows (take_pairs) before the resolve, which then walks no hub. Such levels run one at a
time (no top-down chains, no peer loop: both walk a CSR), and on a grid of one row the levels
are finished as on a grid of several (reset pass, no whole-level kernel).

The small push (small_push, SMALL_PUSH; auto where the row range's bitmap is 16 MiB or more):
a pushed level of at most that many frontier edges (the grid's) sends every row it wins, with
its parent, in a segment a piece sized to the level's edges (push_tiles with no hub bitmap),
one alltoallv, and the owner settles its rows (take_pairs): no seen gather, no scatter of the
row bitmaps, no resolve (_paired_level; BENCHMARKS.md, "The small push": scale 30 on 1x4
1.08x faster).

What CscPush reads of the searcher: its grid (C, j, own, rows, cols, row_x, comm), the block
CSC and its row ids, kernels dict k, the level state (uni, visited, out, pred, queue,
level_sums, counts, last_frontier) and Fu2DDoGpu's level steps (_compact, _expand_tiles,
_gather_row, _fold_in, _bottom_up_substeps, _share_disjoint, _finish).
"""
from __future__ import annotations

import numpy as np

from .. import device
from ..build import csr_gpu
from ..errors import BfsError
from . import fu_2d_gpu
from .fu_2d import WORD
from .fu_2d_gpu import BLOCK

HUB_LEAST = 256     # adjacency=csc: the hub rows' least degree (auto) is a power of two from
                    # this (a shorter walk is a few warp steps) ...
HUB_ROWS = 2**18    # ... leaving at most this many hub rows in the row range, so that a
                    # pushed level's pair segments (16 B a hub row) cost at most 4 MiB a rank
SMALL_PUSH = 2**18  # adjacency=csc: a pushed level of at most this many frontier edges (the
                    # grid's) sends every row it wins as a (row, parent) pair, in segments of
                    # room for them all (16 B an edge, a segment a piece): no row bitmaps
                    # (128 MiB a rank at scale 30 on 1x4), no seen gather, no resolve ...
SMALL_PUSH_FROM = 2**21  # ... by default (auto) where the row range's bitmap has at least this
                    # many words (16 MiB): there the bitmaps' passes cost more than the pairs'
                    # fixed steps (BENCHMARKS.md, "The small push": s30 1x4, 128 MiB, 1.08x
                    # faster; s29 1x2, 64 MiB, the same; s26 1x2, 8 MiB, 0.90x)


class CscPush:
    """The CSC alone's top-down levels (module docstring), a mixin of Fu2DDoGpu."""

    def _push_options(self, options: dict) -> None:
        """hub_degree and small_push, checked (before the build, which marks the hubs)."""
        self.hub_degree = options.get("hub_degree", "auto")
        if not (self.hub_degree == "auto" or (isinstance(self.hub_degree, int)
                                              and self.hub_degree >= 0)):
            raise BfsError(f"2d-do hub_degree must be auto or an integer >= 0 (0: no hub "
                           f"pairs), got {self.hub_degree!r}")
        self.hubs = None          # the hub rows' bitmap (_mark_hubs)
        self.small_push_option = options.get("small_push", "auto")
        small_push_edges(self.small_push_option, 0)     # fail fast on a bad value
        self.small_push = 0       # the frontier edges a pair-sent level may have (_allocate_push)

    def _row_degrees(self, entries, n_row_bits: int):
        """Each row's entries in this block (int64), counted over entries() by Kernel 1's
        degree kernel (one atomic an entry, as a directed edge list's)."""
        cp = self.cp = device.require_gpu()    # the first pass over a streamed block's chunks
        device.check_fits(8 * n_row_bits, f"2d-do adjacency=csc: {n_row_bits} row degrees")
        degree = cp.zeros(n_row_bits, cp.uint64)
        count = csr_gpu.kernel1_function("count_degrees")
        for rows, cols in entries():
            if rows.size:
                count((device.grid_for(rows.size),), (BLOCK,),
                      (rows, cols, np.int64(rows.size), degree, np.int32(1)))
        return degree.view(cp.int64)

    def _mark_hubs(self, degree) -> None:
        """adjacency=csc: the hub rows (module docstring; degree: the row range's global
        degrees), one bit a row, and how many each piece of the row range holds (hub_caps: its
        pair segment's size). No hub rows (hub_degree 0, or none of that degree): hubs None."""
        cp = self.cp
        least = self.hub_degree
        mod = fu_2d_gpu._module()
        if least == "auto":
            classes = cp.zeros(64, cp.uint64)
            mod.get_function("degree_classes")((device.grid_for(degree.size),), (BLOCK,),
                                               (degree, np.int64(degree.size), classes))
            least = hub_least(classes.get())
        if least == 0:
            return
        words = self.rows.word_offset
        device.check_fits(degree.size // 8, "2d-do adjacency=csc: the hub rows' bitmap")
        self.hubs = cp.empty(self.rows.n_words, cp.uint64)
        count = cp.zeros(len(words) - 1, cp.uint64)
        mod.get_function("hub_rows")((device.grid_for(self.rows.n_words),), (BLOCK,),
                                     (degree, np.int64(self.rows.n_words), np.int64(least),
                                      cp.asarray(words), np.int32(len(words) - 1), self.hubs,
                                      count))
        self.hub_caps = count.get().astype(np.int64)
        self.hub_least = least

    def _allocate_push(self) -> None:
        """The push's buffers, after Fu2DDoGpu's (its _allocate)."""
        cp = self.cp
        # the push's rows found and rows seen (the row range's visited), and the grid
        # row's bitmaps of the own piece, scattered to it (_pushed_level)
        own_words = self.own.stop - self.own.start
        device.check_fits(8 * (2 * self.rows.n_words + (self.C + 1) * own_words),
                          "2d-do adjacency=csc: the push's bitmaps")
        self.found_row = cp.empty(self.rows.n_words, cp.uint64)
        self.seen_row = cp.empty(self.rows.n_words, cp.uint64)
        self.scattered = cp.empty(self.C * own_words, cp.uint64)
        self.candidates = cp.empty(own_words, cp.uint64)
        if self.hubs is not None:
            # a pair segment a piece of the row range (fu_2d.cu's push_tiles): its count,
            # then room for its hub rows; those of the own piece come from every rank
            caps = self.hub_caps + 1
            base = np.concatenate([[0], np.cumsum(caps)[:-1]])
            cap_own = int(self.hub_caps[self.j])
            device.check_fits(16 * (int(caps.sum()) + self.C * (cap_own + 1))
                              + 8 * own_words, "2d-do adjacency=csc: the hub pairs")
            self.pair_base = cp.asarray(base)
            self.pair_heads = cp.asarray(2 * base)
            self.pairs_out = cp.empty(2 * int(caps.sum()), cp.int64)
            self.pair_send = 2 * caps
            self.pairs_in = cp.empty(2 * self.C * (cap_own + 1), cp.int64)
            self.pair_recv = np.full(self.C, 2 * (cap_own + 1), np.int64)
            self.pair_cap = cap_own     # the own piece's hub rows: a segment's room
        self.paired = cp.empty(own_words, cp.uint64)
        cols = self.cols
        self.col_ids = (cp.asarray(cols.word_offset), cp.asarray(cols.lo),
                        np.int32(len(cols.pieces)))
        self.small_push = small_push_edges(self.small_push_option, self.rows.n_words)
        if self.small_push:
            # a small push's segments, one a piece each way, of room for every edge
            # (_paired_level), sized at each level to its edges' power of two
            words = 2 * self.C * (_segment_room(self.small_push) + 1)
            device.check_fits(16 * words, "2d-do adjacency=csc: the small push's pairs")
            self.small_out = cp.empty(words, cp.int64)
            self.small_in = cp.empty(words, cp.int64)

    def _block_entries(self) -> int:
        return int(self.csc_rows.size) if self.csr_cols is None else super()._block_entries()

    def _queue_bits(self) -> int:
        """A push's queue holds the column range's frontier (the CSC's columns)."""
        return self.cols.n_words * WORD if self.adjacency == "csc" else super()._queue_bits()

    def _frontier_words(self):
        """A push expands the column's frontier (the last level's union) through the CSC."""
        if self.adjacency == "csc":
            return self.uni, self.csc_offsets
        return super()._frontier_words()

    def _level_body(self, level: int, clock) -> int:
        if self.adjacency == "both" or self.bottom_up:
            return super()._level_body(level, clock)
        sent = self._pushed_level(level, clock)
        return sent + self._share_disjoint(level, clock, self._finish)

    def _pushed_level(self, level: int, clock) -> int:
        """A top-down level through the CSC alone: push, scatter, resolve (fu_2d_do's
        docstring). The frontier is the column's union of the last level (level 0: the root,
        on its grid column), compacted with its CSC degrees by the last level's _finish; its
        edges are pushed by merrill's tiles (fu_2d.cu's expand_tiles, no parents) into a
        row-range bitmap, less the rows seen (the row range's visited, gathered from the own
        pieces as In is); the grid row's bitmaps are scattered piece by piece (one alltoallv),
        OR'd into the own piece's candidates, and the candidates resolved by the bottom-up
        kernel in the column's sub-steps. counts[3] = the edges pushed + the in-edges the
        resolve read. Returns the bytes sent."""
        cp, k = self.cp, self.k
        if level == 0:
            device.zero_async(self.uni)
            c = self._c_root
            if c >= 0:
                self.uni[c // WORD:c // WORD + 1].fill(np.uint64(1) << np.uint64(c % WORD))
            self._q, self._edges, _ = self._compact(0)
            clock.mark("begin")
        if self.small_push:
            # every rank's frontier edges: their sum (the grid's) decides, the same on every
            # rank; the most a rank has sizes the segments (it wins at most its own edges' rows)
            edges = self._frontier_edges()
            if int(edges.sum()) <= self.small_push:
                return self._paired_level(level, clock, int(edges.max()))
        sent = self._gather_row(self.visited[self.own], self.seen_row)
        clock.mark("comm")
        device.zero_async(self.found_row)
        edges = self._edges
        hubs = self.hubs is not None
        if hubs:
            self.pairs_out[self.pair_heads] = 0
            won = ("push_tiles", (self.hubs, self.pairs_out, self.pair_base, self.row_ids[0],
                                  self.row_ids[2], *self.col_ids))
        else:
            won = ("expand_tiles", (np.uint64(0), *self.row_ids))
        self._expand_tiles(self._q, edges, (self.csc_offsets, self.csc_rows), self.seen_row,
                           self.found_row, won)
        clock.mark("push")
        own_words = self.own.stop - self.own.start
        self.row_x.alltoallv(self.found_row, self.row_counts, self.scattered,
                             np.full(self.C, own_words, np.int64))
        sent += self.found_row.nbytes - 8 * own_words
        if hubs:
            self.row_x.alltoallv(self.pairs_out, self.pair_send, self.pairs_in, self.pair_recv)
            sent += self.pairs_out.nbytes - 8 * int(self.pair_send[self.j])
        # the resolve's words not to search: the visited and what no rank pushed
        cand = self.candidates
        cand[...] = self.scattered[:own_words]
        for c in range(1, self.C):
            cand |= self.scattered[c * own_words:(c + 1) * own_words]
        cp.invert(cand, out=cand)
        cand |= self.visited[self.own]
        clock.mark("scatter")
        cap_own = self.pair_cap if hubs else 0
        if cap_own:
            # the hub rows' parents, as the push found them: settled, and not walked
            device.zero_async(self.paired)
            k["take_pairs"]((device.grid_for(self.C * cap_own),), (BLOCK,),
                            (self.pairs_in, np.int32(self.C), np.int64(cap_own),
                             np.int64(self.own.start * WORD), cand, self.paired, self.pred,
                             self.csc_offsets, self.level_sums))
            cand |= self.paired
        self._fold_in(self.one, host_size=self.last_frontier)
        sent += self._bottom_up_substeps(level, self.one, first=cand, folded=True)
        if cap_own:
            self.out[self.own] |= self.paired
        k["level_counts"]((1,), (1,), (self.one, self.level_sums, self.counts, np.int32(0)))
        self.counts[3:4] += np.uint64(edges)
        self.launches["bottom_up"] += 1
        clock.mark("resolve")
        return sent

    def _frontier_edges(self) -> np.ndarray:
        """Every rank's frontier edges this level (one all-gather of a word a rank)."""
        mine = np.array([self._edges], np.int64)
        if self.comm is None:
            return mine
        every = np.empty(self.comm.Get_size(), np.int64)
        self.comm.Allgather(mine, every)
        return every

    def _paired_level(self, level: int, clock, most: int) -> int:
        """A pushed level of at most small_push frontier edges (the grid's): the push appends every
        row it wins, with its parent, to its piece's segment (push_tiles with no hub bitmap),
        each segment of room for `most` (the most frontier edges a rank has) rounded up to a
        power of two (a rank wins at most its own edges' rows, so a level whose edges are spread
        over the ranks sends segments that much smaller than the grid's sum: at the root's level
        one rank has them all); one alltoallv takes them to the pieces' owners, and take_pairs
        settles the own piece's rows not visited, first pair first. Every row found has its
        parent, so there is no resolve, and nothing filters the push but Out (no seen gather):
        what a rank finds is the paired rows of its own piece. Sent: the segments, not the row
        bitmaps. Returns the bytes sent."""
        cp, k = self.cp, self.k
        cap = _segment_room(most)
        stride = 2 * (cap + 1)
        base = np.arange(self.C, dtype=np.int64) * (cap + 1)
        out, inn = self.small_out[:self.C * stride], self.small_in[:self.C * stride]
        out[::stride] = 0                                  # the segments' counts
        device.zero_async(self.seen_row)
        device.zero_async(self.found_row)
        won = ("push_tiles", (np.uint64(0), out, cp.asarray(base), self.row_ids[0],
                              self.row_ids[2], *self.col_ids))
        self._expand_tiles(self._q, self._edges, (self.csc_offsets, self.csc_rows),
                           self.seen_row, self.found_row, won)
        clock.mark("push")
        counts = np.full(self.C, stride, np.int64)
        self.row_x.alltoallv(out, counts, inn, counts)
        sent = 8 * stride * (self.C - 1)
        clock.mark("scatter")
        device.zero_async(self.paired)
        k["take_pairs"]((device.grid_for(self.C * cap),), (BLOCK,),
                        (inn, np.int32(self.C), np.int64(cap), np.int64(self.own.start * WORD),
                         self.visited[self.own], self.paired, self.pred, self.csc_offsets,
                         self.level_sums))
        device.zero_async(self.out)
        self.out[self.own] = self.paired
        k["level_counts"]((1,), (1,), (self.one, self.level_sums, self.counts, np.int32(0)))
        self.counts[3:4] += np.uint64(self._edges)
        clock.mark("resolve")
        return sent


def hub_least(classes, least: int = HUB_LEAST, most: int = HUB_ROWS) -> int:
    """hub_degree=auto: from the rows' degree classes (classes[b]: rows of degree in
    [2^b, 2^(b+1)), fu_2d.cu's degree_classes), the least power of two >= `least` whose rows
    (degree at least it) number at most `most`; 0 (no hub rows) where none has that degree."""
    at_least = np.cumsum(np.asarray(classes, np.int64)[::-1])[::-1]   # rows of degree >= 2^b
    b = max(int(least), 1).bit_length() - 1
    while b < len(at_least) - 1 and at_least[b] > most:
        b += 1
    return 0 if at_least[b] == 0 else 1 << b


def small_push_edges(option, row_words: int) -> int:
    """The small push's threshold (SMALL_PUSH; 0: off) for a row range of row_words 64-bit
    words: option auto (on from SMALL_PUSH_FROM words) or an integer >= 0 (that many edges,
    whatever the range)."""
    if option == "auto":
        return SMALL_PUSH if row_words >= SMALL_PUSH_FROM else 0
    if not (isinstance(option, int) and not isinstance(option, bool) and option >= 0):
        raise BfsError(f"2d-do small_push must be auto or an integer >= 0 (0: every pushed "
                       f"level sends its bitmaps), got {option!r}")
    return option


def _segment_room(edges: int) -> int:
    """A small push's segment room for a rank of `edges` frontier edges (the most any rank
    has): the power of two at least edges (1 for none), so that a few sizes serve every
    level."""
    return 1 << max(0, edges - 1).bit_length()
