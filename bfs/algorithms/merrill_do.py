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

Bottom-up kernel (merrill_do.cu, bottom_up<K, H>). A level's cost is latency, not bytes: each
open vertex's steps wait on one another (row offsets -> columns -> frontier bits), so what
counts is how many vertices are in flight. A warp takes 32 words of the visited bitmask (1024
vertices) in one coalesced load and deals their open vertices out to its lanes, K per lane at a
time, whatever their density (after the first bottom-up level most vertices of a word are
visited); each reads its first H neighbours with independent loads, walks on alone up to 64,
and the warp walks longer rows together, 32 coalesced neighbours a step. New frontier bits
gather in shared memory and go out with the visited words, whole: no bitmap atomics, no queue
(a switch back to top-down builds one from the bitmap: bitmap_to_queue), no block barrier in
the loop. Isolated vertices (half of them at Kronecker scale 26) start visited, so they are
never dealt. Measured on an H100 at scale 26 (BENCHMARKS.md): a thread per vertex with a
queue append, 236 GTEPS; a warp per word, 242; a warp per 4 words, 243; dealt to lanes, 268-287.

Writes (merrill_do.cu, "How a bottom-up level writes"). Nsight Compute showed the reset pass
(parent and level = -1: 0.8 GB, 0.29 ms at scale 26) and, in the first bottom-up level, ~1 GB of
DRAM reads caused by stores of parts of 32-byte sectors. Now no reset pass touches parent and
level: the first bottom-up level writes every entry of its words no earlier level reached, in
whole sectors (found parents staged in shared memory), open vertices get the level they have
if the next bottom-up level finds them, and a pass over the visited bitmask at the end marks
what no level reached. Bottom-up levels read 32-bit row offsets below 2^32 edges. Scale 26,
64 roots: 303 -> 335 GTEPS (writes="reset" is the earlier scheme, kept to measure against).

Rows hubs first (rows="degree"; the default "auto" takes it where the re-sort fits in device
memory, else "graph"; Kernel-1 work timed into kernel1_extra_s; in place, a bucket of rows at a
time, where the searcher was built for the CSR, a copy where bench shares one): every row lists its
neighbours by falling degree, vertex ids unchanged, so a bottom-up vertex's first neighbour is
its biggest hub, the one most likely in the frontier at the big levels. Scale 26: 335 -> 361
GTEPS, 0.47 s more Kernel 1.
Head neighbours (head=1, the default): a vertex-indexed copy of every row's first entry (with
rows hubs first, the vertex's biggest hub; 4 bytes a vertex, Kernel-1 work) is read beside the
row offsets, and the row itself only where that neighbour is not in the frontier, in a second
round of dealing (merrill_do.cu). Simulated at scale 21 (bench/probes/head_hits.py: Graph500 roots,
rows hubs first): 92% of the vertices found at the first bottom-up level, and ~100% at the
next, have their parent there, so most found vertices read no column sector and look up one
frontier bit instead of HEAD. Measured on an H100 (BENCHMARKS.md), same runs: the head copy
386 -> 465 GTEPS at scale 26, the second round of dealing 443 -> 477; 468 with 64 roots.
The kernel's registers capped for 4 blocks of 256 an SM (bu=1x4m4) and a chain of 8 levels
(ahead=8, a whole Kronecker search): 64 roots, 438.8 / 500.2 GTEPS at scales 25 / 26; with
the tail lists below, 468.8 / 514.9.
Tail lists (tail=1, the default; only where beta = inf, so that the search never returns to
top-down): after the big levels a few vertices stay open (at scale 26 ~0.3M, mostly
unreachable), yet every level swept the whole visited bitmask (~40 us a level by Nsight). Once
at most n/4 vertices are open, a level lists the ones it does not find (each warp in its own
segment, no atomics), and once at most n/32 are, the next levels search only that list, the
frontier tested by level (no bitmap). With the 3-block shape and chains of 4 they lost a
little (381 -> 369 GTEPS at scale 25); with 1x4m4 and ahead=8 they win, root by root in one
process, 5.5% at scale 25 and 5.7% at scale 26 (BENCHMARKS.md).
The frontier's fold (fold=auto, the default, for bitmaps of 16 MiB or more; 1; 0): before a
bottom-up level whose frontier has at most 2^20 vertices, fold_frontier ORs the bitmap down to
1 MiB (bit v mod 2^23), which the kernel checks first (bottom_up.cuh's FoldedFrontier): the
first bottom-up level's vertices that find no parent walk their whole rows, every entry a
random bit of a bitmap L2 does not hold; their checks now hit L2. Scale 28, same bench: that
level 10.0 -> 6.4 ms, 360.4 -> 437.6 GTEPS (BENCHMARKS.md, "The frontier's fold").
The kernel counts the neighbours it loads (edges examined); top-down levels read every edge of
their frontier, so their count is the level's degree sum, taken after the search.

Switching (Beamer's heuristic): top-down -> bottom-up when the frontier's edges m_f exceed
m_u / alpha (m_u: edges of the vertices not yet reached); bottom-up -> top-down when the
frontier has shrunk below n / beta. The paper's alpha = 14 and beta = 24 were tuned on CPUs;
here a top-down level is L2-bound (~30 G edges/s: a 79M-edge level took 2.8 ms at scale 26,
where bottom-up took 1.3) and a bottom-up level over a mostly visited bitmask is a ~20 us
pass, so the defaults are alpha = 40 (switch sooner) and beta = inf (never back): at scale 26,
32 roots, 395 GTEPS with the paper's values, 410 with beta = inf, 450 with both (BENCHMARKS.md).
A frontier also goes bottom-up only where it holds at least n * BOTTOM_UP_FLOOR (1/64) edges,
below which a top-down level of the level loop (bfs.algorithms.merrill) costs less than a sweep
of the bitmaps (the last ~80 levels of a 2000 x 2000 lattice went bottom-up by Beamer's rule
alone, each a sweep, 8 a host read: merrill-do took 18.9 ms a search where merrill took 16.8,
and 16.1 beside 16.2 with the floor, H100, same calls); nothing left unexplored keeps top-down.
The level loop applies the same test on the device and ends where it passes.
The host decides where it learns the frontier anyway (after top-down and loop levels). Once
bottom-up, it enqueues the next `ahead` bottom-up levels without reading anything back, each
run or skipped by a one-thread kernel (decide_bottom_up) applying the same rule on the device,
and reads one control block for the whole chain: between bottom-up levels the GPU no longer
waits for the host's round trip and launch (~60 us a level on the H100, BENCHMARKS.md).
ahead=0 is the earlier one-level-per-read loop. A profiled search (--profile-levels) runs the
same chains with a CUDA event after each level's kernels, and split_profile turns a chain's
step into one entry per level. With BFS_NVTX=1 each level of a chain is an NVTX range of its own,
bfs:merrill-do:level <k> bottom-up, around the kernels enqueued for it (bfs.nvtx).
"""
from __future__ import annotations


from pathlib import Path

import numpy as np

from . import device_csr
from ..device import load_module
from .. import device, nvtx
from ..errors import BfsError
from .merrill import BLOCK, MerrillSearcher, search_state_bytes
from .options import bottom_up_floor

ALPHA = 40.0            # the paper's 14 and 24 remain an option (alpha=14,beta=24)
BETA = float("inf")
# bottom-up kernel shapes: "KxH" = K open vertices per lane in flight in the row step, each
# reading the next H neighbours with independent loads (see merrill_do.cu), compiled with
# __launch_bounds__(256, 1): registers as the compiler likes (1x4: 66, 3 blocks of 256 an SM);
# "KxHmB": at least B blocks an SM (registers capped: 1x4m4 62, 1x4m5 48, 1x8m6 40 with spills)
BOTTOM_UP_VARIANTS = {f"{k}x{h}" + (f"m{m}" if m > 1 else ""): (k, h, m)
                      for k, h, m in ((1, 4, 1), (1, 8, 1), (2, 4, 1), (2, 8, 1), (4, 4, 1),
                                      (1, 4, 4), (1, 8, 4), (2, 4, 4), (1, 4, 5), (1, 8, 5),
                                      (1, 8, 6))}
BOTTOM_UP = "1x4m4"     # 4 blocks an SM beat 3 (1x4): 381 -> 407 / 489 -> 507 GTEPS, same call
# top-down -> bottom-up also needs a frontier of at least n * BOTTOM_UP_FLOOR edges: a
# bottom-up level sweeps the visited, frontier and next bitmaps (3n/8 bytes, and the open
# vertices' offsets), a top-down one reads a random 32-byte sector an edge, so below ~n/85
# edges top-down is the cheaper (on a 2000 x 2000 lattice the last ~80 levels went bottom-up
# by Beamer's rule alone, each a sweep and every 8 a host read). alpha = inf keeps its meaning:
# every frontier goes bottom-up. The floor option sets it (2d-do on the GPU: the same default).
BOTTOM_UP_FLOOR = 1 / 64
AHEAD = 8               # bottom-up levels enqueued past a host decision, run or skipped on the device
                        # (8: one chain covers a whole Kronecker search; 4 -> 8: s25 373 -> 409 GTEPS)
LEVEL_SLOTS = 1024      # per-level counts of neighbours read (deeper levels share the last)
TOP_DOWN_PASSES = 8     # level_edges_examined: passes over the level array, one per top-down
                        # level, up to this many (a Kronecker search has 1-3), else a bincount
HEAD_SLICE = 1 << 24    # rows of head_entries' int64 temporary at a time (128 MiB)
# how the search writes parent and level (merrill_do.cu): "dense" = no reset pass, the first
# bottom-up level writes whole words and guesses levels; "reset" = a reset pass writes -1 to
# every entry and bottom-up levels write the vertices they find (the earlier scheme, measured)
WRITES = ("dense", "reset")
DENSE, GUESS, LEVEL_KNOWN, OWN_VISITED = 1, 2, 4, 8     # bottom_up's mode bits
# A bottom-up level with a small frontier checks a fold of its bitmap first (bottom_up.cuh's
# FoldedFrontier): FOLD_WORDS 32-bit words (1 MiB, held in L2), made where the frontier sets
# at most one fold bit in FOLD_DENSITY; fold=auto folds bitmaps of FOLD_FROM words or more
# (16 MiB: scale 27 on one GPU, 2^27 rows of a grid's row range), which L2 does not hold.
FOLD_WORDS = 1 << 18
FOLD_DENSITY = 8
FOLD_FROM = 1 << 22


def fold_words(n_words: int, fold) -> int:
    """The 32-bit words of the fold of a frontier bitmap of n_words words: a power of two, at
    most FOLD_WORDS and an eighth of the bitmap (so that fold=1 aliases on a small graph too);
    0 for none (fold=0, or auto below FOLD_FROM words)."""
    if fold not in ("auto", 0, 1):
        raise BfsError(f"fold must be auto, 1 or 0 (a bottom-up level's frontier bitmap "
                       f"checked through a fold of it first, or not), got {fold!r}")
    if fold == 0 or (fold == "auto" and n_words < FOLD_FROM):
        return 0
    return min(FOLD_WORDS, 1 << max(0, (n_words // 8).bit_length() - 1))


def fold_args(fold, size, host_size: int, tail=None) -> tuple:
    """fold_frontier's last arguments after its bitmap's: the fold (fold_words + 1 words, the
    last its flag), its mask, the frontier's size on the device (size, u64[1]) or from the
    host, the most vertices it is made for, the tail control (merrill-do's, or none)."""
    words = fold.size - 1
    return (fold, np.int64(words - 1), np.uint64(0) if size is None else size,
            np.uint64(host_size), np.uint64(32 * words // FOLD_DENSITY),
            np.uint64(0) if tail is None else tail)


def tail_lists_bytes(n: int) -> int:
    """Device memory the tail lists take at most: two u32 lists of up to n / 4 vertices, and
    4 MiB for the per-warp rounding of their segments."""
    return 2 * n + (1 << 22)


def bottom_up_kernel(bu: str, o_type: str, tail: bool = False, block_ids: bool = False) -> str:
    """The bottom_up instantiation of merrill_do.cu for a shape (BOTTOM_UP_VARIANTS), 32- or
    64-bit offsets, tail lists, and block ids (2d-do's levels over one rank's block)."""
    k, h, min_blocks = BOTTOM_UP_VARIANTS[bu]
    return (f"bottom_up<{k}, {h}, {o_type}, {min_blocks}, {str(tail).lower()}, "
            f"{str(block_ids).lower()}>")


def head_entries(offsets, entries, nnz: int):
    """Every row's first entry, indexed by row (the head copy the bottom-up kernel reads
    before the row itself); None for an empty matrix. An empty row gets any entry: the
    kernel never reads it."""
    import cupy as cp
    if not nnz:
        return None
    rows = int(offsets.size) - 1
    head = cp.empty(rows, dtype=entries.dtype)
    # a slice of rows at a time: the clipped offsets are int64, 8 bytes a row, and at scale 27
    # a whole-array temporary (1 GiB) beside the search state set the run's peak
    for lo in range(0, rows, HEAD_SLICE):
        hi = min(rows, lo + HEAD_SLICE)
        cp.take(entries, cp.minimum(offsets[lo:hi], nnz - 1), out=head[lo:hi])
    return head


def module(kernel: str):
    """merrill_do.cu with one bottom_up instantiation (bottom_up_kernel)."""
    return load_module(Path(__file__).with_name("merrill_do.cu"), (kernel,))


class MerrillDoSearcher(MerrillSearcher):
    """MerrillSearcher whose big levels run bottom-up (see the module docstring).

    Per search: directions[lv] is the direction that expanded level lv's frontier;
    level_edges_examined / edges_examined are computed on request, after the search."""
    # run.json records them as the search ran (rows: auto resolved to degree or graph, which
    # bench's shared CSR can turn to graph where a copy does not fit)
    resolved_options = ("alpha", "beta", "floor", "rows")
    nvtx_name = "merrill-do"
    sorts_rows_in_place = True    # own_csr=True: rows=degree re-sorts the given CSR itself

    def __init__(self, offsets, columns, alpha: float = ALPHA, beta: float = BETA,
                 bu: str = BOTTOM_UP, writes: str = "dense", offset_bits: int = 0,
                 rows: str = "auto", ahead: int = AHEAD, head: int = 1, tail: int = 1,
                 fold="auto", own_csr: bool = False, floor: float = BOTTOM_UP_FLOOR,
                 **options):
        if bu not in BOTTOM_UP_VARIANTS:
            raise BfsError(f"merrill-do bu must be one of {sorted(BOTTOM_UP_VARIANTS)}, "
                           f"got {bu!r}")
        if writes not in WRITES:
            raise BfsError(f"merrill-do writes must be one of {WRITES}, got {writes!r}")
        if offset_bits not in (0, 32, 64):
            raise BfsError(f"merrill-do offset_bits must be 32, 64 or 0 (32 when the graph "
                           f"has fewer than 2^32 directed edges), got {offset_bits!r}")
        if not (isinstance(ahead, (int, float)) and ahead == int(ahead) and 0 <= ahead <= 64):
            raise BfsError(f"merrill-do ahead must be an integer from 0 to 64, got {ahead!r}")
        if head not in (0, 1):
            raise BfsError(f"merrill-do head must be 1 (read each vertex's first neighbour "
                           f"from a vertex-indexed copy) or 0, got {head!r}")
        if tail not in (0, 1):
            raise BfsError(f"merrill-do tail must be 1 (the last levels search a list of the "
                           f"vertices still open) or 0, got {tail!r}")
        if rows not in ("auto", "graph", "degree"):
            raise BfsError(f"merrill-do rows must be auto, graph or degree, got {rows!r}")
        if options.get("order", "graph") != "graph":
            raise BfsError("merrill-do runs on the graph's own ids only (order=graph): its "
                           "bottom-up levels write parent and level directly")
        self.rows, self.own_csr = rows, own_csr     # _reorder's, called by the constructor
        super().__init__(offsets, columns, **options)
        cp = self.cp
        device.check_fits(12 * self.n_words, "merrill-do frontier bitmaps")
        self.alpha, self.beta = float(alpha), float(beta)
        self.loop_alpha = self.alpha    # the level loop ends where Beamer's rule goes bottom-up
        # ... and where the frontier's edges pay for a sweep of the bitmaps (BOTTOM_UP_FLOOR)
        self.floor, self.bottom_up_floor = bottom_up_floor(self.n, floor, self.alpha,
                                                           "merrill-do")
        self.fronts = (cp.empty(self.n_words, dtype=cp.uint32),
                       cp.empty(self.n_words, dtype=cp.uint32))
        words = fold_words(self.n_words, fold)
        self.fold = cp.zeros(words + 1, dtype=cp.uint32) if words else None
        # isolated vertices and the padding past n start visited: bottom-up never reads them
        # (half the vertices of a Kronecker graph at scale 26 have no edge)
        closed = cp.ones(self.n_words * 32, dtype=cp.bool_)
        closed[:self.n] = self.offsets[1:] == self.offsets[:-1]     # no int64 degrees
        self.visited_init = cp.packbits(closed, bitorder="little").view(cp.uint32)
        del closed
        self.queue_count = cp.zeros(1, dtype=cp.uint64)
        self.ahead = int(ahead)
        self.chain = cp.zeros(8, dtype=cp.uint64)          # decide_bottom_up's control block
        self.level_read = cp.zeros(LEVEL_SLOTS, dtype=cp.uint64)
        # bottom-up levels read 32-bit row offsets while every offset fits (a copy: top-down
        # levels keep the int64 ones) and each vertex's first row entry beside them; both
        # copies are Kernel-1 work, timed into kernel1_extra_s
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        if offset_bits == 64 or (offset_bits == 0 and self.nnz >= 2 ** 32):
            self.bu_offsets, o_type = self.offsets, "i64"
        elif self.nnz >= 2 ** 32:
            raise BfsError(f"merrill-do offset_bits=32 needs fewer than 2^32 directed edges, "
                           f"the graph has {self.nnz}")
        else:
            device.check_fits(4 * (self.n + 1), "merrill-do 32-bit row offsets")
            self.bu_offsets, o_type = self.offsets.astype(cp.uint32), "u32"
        self.head = None
        if head and self.nnz:
            device.check_fits(12 * self.n, "merrill-do first row entries")
            self.head = head_entries(self.offsets, self.columns, self.nnz)
        end.record()
        end.synchronize()
        self.kernel1_extra_s += cp.cuda.get_elapsed_time(start, end) / 1e3
        self.dense = writes == "dense"
        # the CAS claims of expand=tiles-cas / v0 test parent == -1: those keep the reset pass
        self.clear_outputs = int(not self.dense or self.expand in ("tiles-cas", "v0"))
        # the tail lists (merrill_do.cu, decide_bottom_up): only where the search never goes
        # back to top-down, which would need the frontier bitmap the listed levels do not keep,
        # and where they fit: else every level sweeps the bitmask, as with tail=0
        use_tail = bool(tail) and self.beta == float("inf") \
            and tail_lists_bytes(self.n) <= device.free_memory()[0]
        kernel = bottom_up_kernel(bu, o_type, use_tail)
        mod = module(kernel)
        self.k_bitmap = mod.get_function("queue_to_bitmap")
        self.k_queue = mod.get_function("bitmap_to_queue")
        self.k_complete = mod.get_function("complete_outputs")
        self.k_bottom_up = mod.get_function(kernel)
        self.k_decide = mod.get_function("decide_bottom_up")
        self.k_fold = mod.get_function("fold_frontier")
        self.launches["bottom_up"] = 0
        self.bu_blocks = device.resident_grid(self.k_bottom_up, BLOCK)
        self.tail = None
        if use_tail:
            warps = self.bu_blocks * BLOCK // 32
            self.collect_max = max(self.n // 4, 32 * warps)
            self.list_cap = -(-self.collect_max // warps)
            device.check_fits(8 * warps * self.list_cap, "merrill-do tail lists")
            self.tail = cp.zeros(8, dtype=cp.uint64)
            self.lists = cp.empty(2 * warps * self.list_cap, dtype=cp.uint32)
            self.list_len = cp.zeros(2 * warps, dtype=cp.uint32)
        self.directions: list[str] = []
        self._examined: list[int] | None = None

    def _reorder(self, offsets, columns, order: str):
        """rows=degree (auto: where the re-sort fits beside the search state to come): each
        row's neighbours by falling degree, in place where the searcher owns the CSR (built for
        it), else in a copy (bench shares one CSR)."""
        if self.rows == "auto":
            n_words = (self.n + 31) // 32
            need = self.hubs_first_bytes(self.own_csr) + search_state_bytes(self.n, self.nnz, self.queue_cap) \
                + 16 * n_words + 16 * (self.n + 1)
            self.rows = "degree" if need <= device.free_memory()[0] else "graph"
        if self.rows == "degree":
            columns = self._hubs_first(offsets, columns, rename=False, in_place=self.own_csr)[1]
        return offsets, columns

    def _start(self, root):
        self.last_q = 0
        self.bottom_up = False
        self.dense_done = False     # a DENSE level has written every entry no level reached
        self.level_known = False    # the last level was bottom-up: open vertices' level guessed
        self.front = 0
        self.directions = []
        self._examined = None
        self._chain_marks = []      # profiled: (depth, levels run, events) of each chain
        device.zero_async(self.level_read)
        if self.tail is not None:
            device.zero_async(self.tail)

    def _bottom_up_level(self, q, depth):
        """The bottom-up level at depth (the host's decision) and up to `ahead` more, each run
        only if decide_bottom_up lets it; one control read for all. Returns (q, edges, levels)."""
        marks = None
        if self.profile_levels is not None:     # an event before the chain, one after each level
            marks = [self.cp.cuda.Event()]
            marks[0].record()
        entering, self.bottom_up = not self.bottom_up, True
        mode = 0
        if self.dense:
            mode = GUESS | (LEVEL_KNOWN if self.level_known else 0) \
                | (0 if self.dense_done else DENSE)
            self.dense_done = self.level_known = True
        n_over_beta = np.float64(self.n / self.beta)
        if self.tail is None:
            tail_args = (np.uint64(0), np.uint64(0), np.uint64(0), np.int64(0))
            decide_tail = (np.uint64(0), np.uint64(0), np.uint64(0))
        else:
            tail_args = (self.tail, self.lists, self.list_len, np.int64(self.list_cap))
            decide_tail = (self.tail, np.uint64(self.n_words), np.uint64(self.collect_max))
        for k in range(self.ahead + 1):
            slot, front = self.slot ^ (k & 1), self.front ^ (k & 1)
            d = min(depth + k, LEVEL_SLOTS - 1)
            # each level of the chain its own range: its kernels, enqueued (run or skipped on
            # the device); the chain's control read below waits outside them
            with nvtx.level(self.nvtx_name, depth + k, "bottom-up"):
                if k == 0 and entering:   # the frontier queue becomes a bitmap
                    bm = self.fronts[self.front]
                    device.zero_async(bm)
                    self.k_bitmap((device.grid_for(q),), (BLOCK,),
                                  (self.queues[self.cur], np.int64(q), bm))
                if self.fold is not None:     # made for the level's frontier, if it runs
                    first = k == 0
                    self.k_fold((device.grid_for(self.fold.size),), (BLOCK,),
                                (np.uint64(0) if first else self.chain, self.fronts[front],
                                 np.int64(self.n_words),
                                 *fold_args(self.fold, None if first else self.chain[2:3], q,
                                            self.tail)))
                self.k_bottom_up((self.bu_blocks,), (BLOCK,),
                                 (self.bu_offsets, self.columns, np.int64(self.n_words),
                                  np.int64(self.n), self.fronts[front], self.fronts[1 - front],
                                  self.visited, self.visited_init, self.parent, self.level,
                                  np.int32(depth + k + 1), np.int32(mode),
                                  self.ctl_slots[slot], self.ctl_slots[1 - slot],
                                  self.level_read[d:d + 1],
                                  np.uint64(0) if k == 0 else self.chain,
                                  np.uint64(0) if self.head is None else self.head, *tail_args,
                                  np.uint64(0), np.uint64(0), np.int32(0),
                                  np.uint64(0) if self.fold is None else self.fold,
                                  np.int64(0 if self.fold is None else self.fold.size - 2)))
                self.k_decide((1,), (1,), (self.ctl_slots[slot], self.chain, np.uint64(q),
                                           np.int32(k == 0), n_over_beta, *decide_tail))
            if self.dense:
                mode = GUESS | LEVEL_KNOWN
            if marks is not None:
                marks.append(self.cp.cuda.Event())
                marks[-1].record()
        self.launches["bottom_up"] += self.ahead + 1
        chain = self._read_ctl(self.chain)
        run, q2, edges2, found_edges, last_q = (int(x) for x in chain[[1, 2, 3, 4, 6]])
        if marks is not None:
            self._chain_marks.append((depth, run, marks))
        self.visited_edges += found_edges - edges2   # the caller adds the newest frontier's
        self.last_q = last_q
        self.slot ^= run & 1
        self.front ^= run & 1
        return q2, edges2, run

    def _leave_bottom_up(self):
        """Back to top-down: the frontier bitmap becomes the vertex queue (its size is the
        level's q, already known)."""
        self.queue_count.fill(0)
        self.k_queue((max(1, min(self.bu_blocks, device.grid_for(self.n_words))),), (BLOCK,),
                     (self.fronts[self.front], np.int64(self.n_words), self.offsets,
                      self.queues[self.cur], self.degs[self.cur], self.queue_count))
        self.bottom_up = False

    def goes_bottom_up(self, edges: int, unexplored: int) -> bool:
        """Top-down -> bottom-up (Beamer's alpha test, the host's and the level loop's): the
        frontier's edges exceed the unexplored edges / alpha and reach n * BOTTOM_UP_FLOOR;
        with nothing unexplored the search ends with this level, top-down."""
        return 0 < unexplored < edges * self.alpha and edges >= self.bottom_up_floor

    def _step(self, q, edges, depth):
        if self.bottom_up:
            # stay bottom-up while the frontier is large or still growing
            stay = q >= self.n / self.beta or q > self.last_q
        else:
            stay = self.goes_bottom_up(edges, self.nnz - self.visited_edges)
        self.last_q = q
        if stay:
            kind, q2, edges2, done = ("bottom-up",) + self._bottom_up_level(q, depth)
            self.directions.extend(["bottom-up"] * done)
            return (kind, q2, edges2, done)
        kind = self._top_down_kind(q, edges)
        with nvtx.level(self.nvtx_name, depth, kind):
            if self.bottom_up:
                self._leave_bottom_up()
            self.level_known = False
            q2, edges2, done = self._run_top_down(kind, q, edges, depth)
        self.directions.extend(["top-down"] * done)
        return (kind, q2, edges2, done)

    def _finish(self, root):
        """dense writes: parent = level = -1 for the vertices no level reached (only the isolated
        ones too when no bottom-up level ran); nothing to do after a reset pass."""
        if self.dense:
            self.k_complete((device.grid_for(self.n_words),), (BLOCK,),
                            (self.visited, self.visited_init, np.int64(self.n_words),
                             np.int64(self.n), np.uint32(root), np.int32(not self.dense_done),
                             self.parent, self.level))

    @property
    def level_edges_examined(self) -> list[int]:
        """Edges read to expand each level's frontier: bottom-up levels count the neighbours
        their kernel loaded; a top-down level reads every edge of its frontier, i.e. the
        degree sum of the vertices at that level (run here, after the search, not inside its
        timing: one pass over the level array per top-down level, by device_csr.degree_sum,
        with no n-entry temporaries, which at scale 28 were the run's memory peak; a bincount
        where there are many top-down levels, as on road graphs, whose n is small)."""
        if self._examined is None:
            cp = self.cp
            top = [lv for lv, d in enumerate(self.directions) if d != "bottom-up"]
            if len(top) <= TOP_DOWN_PASSES:
                top_down = {lv: device_csr.degree_sum(self.offsets, self.level, lv)
                            for lv in top}
            else:
                reached = self.level >= 0
                sums = cp.bincount(self.level[reached],
                                   weights=cp.diff(self.offsets)[reached]).get()
                top_down = {lv: int(sums[lv]) if lv < sums.size else 0 for lv in top}
            read = self.level_read.get()     # levels past the last slot summed in it
            read = np.concatenate([read, np.zeros(max(0, len(self.directions) - read.size),
                                                  dtype=read.dtype)])
            self._examined = [int(read[lv]) if d == "bottom-up" else int(top_down[lv])
                              for lv, d in enumerate(self.directions)]
        return self._examined

    def split_profile(self, steps: list[dict]) -> None:
        """A profiled search's steps (bfs.merrill's dicts, in place) with each run-ahead chain
        of bottom-up levels as one entry per level: ms between the events after its kernels
        (the first level also holds the switch from the queue; the last, the chain's control
        read, so the entries still add up to the search), frontier and next sizes from the
        level array. Run after the search, outside its timing."""
        chains = {depth: (run, marks) for depth, run, marks in self._chain_marks}
        if not chains:
            return
        cp = self.cp
        reached = self.level >= 0
        depth_of = self.level[reached]
        count = cp.bincount(depth_of).get()
        edges = cp.bincount(depth_of, weights=cp.diff(self.offsets)[reached]).get()
        at = lambda a, d: int(a[d]) if d < a.size else 0      # noqa: E731
        out = []
        for step in steps:
            if step["kind"] != "bottom-up" or step["depth"] not in chains:
                out.append(step)
                continue
            run, marks = chains[step["depth"]]
            ms = [cp.cuda.get_elapsed_time(marks[i], marks[i + 1]) for i in range(run)]
            ms[-1] += max(0.0, step["ms"] - sum(ms))
            for i in range(run):
                d = step["depth"] + i
                out.append({**step, "depth": d, "levels": 1, "frontier_vertices": at(count, d),
                            "frontier_edges": at(edges, d), "next_vertices": at(count, d + 1),
                            "ms": ms[i]})
        steps[:] = out

    def step_bytes(self, step: dict, reached_before: int) -> int:
        """The fewest bytes a profiled level step (bfs.harness.bench.profile_search's dict,
        with edges_read) must move: 4 per column read, 12 per vertex found (parent + level);
        bottom-up: the three bitmasks (visited, frontier, next) and a row's two offsets per
        vertex still open (non-isolated, not reached); top-down: a queue entry, its degree
        and row offsets per frontier vertex (28)."""
        found = step["next_vertices"]
        fixed = (3 * self.n_words * 4 + 8 * max(0, self.n_active - reached_before)
                 if step["kind"] == "bottom-up" else 28 * step["frontier_vertices"])
        return 4 * step["edges_read"] + 12 * found + fixed

    @property
    def sparse_levels(self) -> int:
        """Levels of the last search that searched the tail list (read from the device)."""
        return 0 if self.tail is None else int(self.tail[5].get())

    @property
    def edges_examined(self) -> int:
        return sum(self.level_edges_examined)


# the registry's build / from_csr / warm_up: GPU Kernel 1, then this searcher
build, from_csr, warm_up = device_csr.entry_points(MerrillDoSearcher)
