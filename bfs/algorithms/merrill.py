"""merrill: Merrill, Garland and Grimshaw's linear-work GPU BFS (CuPy + CUDA C++).

Paper: D. Merrill, M. Garland, A. Grimshaw, "Scalable GPU Graph Traversal", PPoPP 2012
(slides: "High Performance and Scalable GPU Graph Traversal").

Algorithm. Level-synchronous expand-contract over the undirected CSR held in device memory
(offsets int64, columns uint32, built by bfs.build.csr_gpu.build_csr_gpu). Per level:

1. The vertex frontier queue comes with each vertex's degree (written when the vertex was
   claimed). An inclusive prefix sum of the degrees (tiles.Scan: one to three launches; CuPy's
   cumsum cost more host time than a small level's kernels) gives every frontier vertex its
   slice of the edge frontier: no global atomics allocate the edge frontier.
2. Partition and gather (bfs/algorithms/tiles.py, shared with 2d on the GPU): the edge frontier
   is cut into tiles of TILE = 1024 edges; one small kernel finds every tile's first frontier
   vertex; one CTA per tile stages its vertices in shared memory and each edge finds its vertex
   by a 32-bit binary search there, so column reads are coalesced whatever the degrees
   (Merrill's CTA / warp / scan gather tiers, load-balanced, in one code path).
3. Contraction in the same CTA (expand_tiles below): a status lookup in a visited bitmask (1 bit
   per vertex, small enough to stay in L2) drops most visited neighbours; warp-local duplicate
   culling (Merrill's hash in shared memory) drops a neighbour another lane holds too; the
   survivor claims the vertex with atomicOr on its visited bit, so each vertex is claimed
   exactly once and only the winner touches parent and level (plain stores). Winners are
   compacted in shared memory and appended to the next queue with one global atomic per tile,
   which also sums their degrees for the next level's edge-frontier size.

Measured on an H100 at scale 25 (BENCHMARKS.md): the first version's per-256-edge global binary
search ("v0", kept as expand="v0") took 52 ms a search; partitioned tiles 15.9 ms; the bitmask
claim 14.7 ms; the 32-bit tile search 13.9 ms (38 GTEPS). The middle level (955M edges, 75% of
the search) is then bound by L2 (Nsight Compute: L2 at 70% of its throughput, DRAM at 17%): each
edge's status lookup is a random 32-byte L2 sector, ~30 GB of L2 traffic for that level alone,
so top-down cannot approach the 1.3 ms its column bytes need. merrill-do
(bfs/algorithms/merrill_do.py) runs those levels bottom-up instead.

Vertex order (opt-in, order="degree", beyond the paper). Kernel 1 renames the vertices by
falling degree and re-sorts every row, so rows list their hub neighbours first and a warp's
status lookups share words read through L1; claims write the output under the graph's ids.
At scale 25: 12.3 ms against 13.9 (BENCHMARKS.md); with rows not re-sorted it was slower.

Small frontiers: the level loop. Road-like graphs have thousands of levels with tiny
frontiers, where launch overhead and host round trips dominate. Per multi-block level there is
one scan, two kernels and one 64-byte device-to-host copy of the counters (queue size and
edge-frontier size) that the host waits on (~95 us a level on the H100). While a frontier has
at most LOOP_Q vertices and loop_edges edges (2^20) and no row over LOOP_DEGREE, one persistent
kernel on the whole resident grid (level_loop.cu, level_loop; loop="grid", the default) runs level
after level inside one launch: each block takes frontier vertices (Merrill's block / warp / lane
gather tiers by row length; a frontier of at most 32 vertices, a root, has each row walked by the
whole grid), and the blocks meet at a grid barrier a level (grid_barrier.cuh, bounded: a wait
past LOOP_TIMEOUT_S raises naming the level) whose arrival word carries the level's counts, so
the device decides the next level, the frontier's kind and the search's end, and the host reads
one result block when the loop ends: once a search on a lattice (merrill-do: Beamer's rule
tested in the loop too). On a 2000 x 2000 lattice (H100, BENCHMARKS.md): 82.1 ms a search with
Merrill's single-CTA kernel (loop="cta", ~28 us a level, its 1024 threads walking a level's edges
a step at a time), 15.9 ms with the grid's loop (~5.5 us a level: the chain of dependent memory
steps of a level and the barrier's two L2 round trips).

Profiling. Setting searcher.profile_levels to a list makes search() record every level step
(kind, frontier vertices and edges, CUDA-event milliseconds); `bfs bench --profile-levels`.
With BFS_NVTX=1 every level step is an NVTX range, bfs:merrill:level <k> <kind> (bfs.nvtx), for
Nsight Systems and `ncu --nvtx --nvtx-include`.

Outputs. search(root) returns after the device is synchronized, with a SearchResult holding
the device arrays (parent int64, level int32); gather(n) copies them to the host (outside the
harness's timed region). Vertex ids must be below 2^32; edge offsets are int64 everywhere.
"""
from __future__ import annotations


from pathlib import Path

import numpy as np

from . import device_csr
from ..build import csr_gpu, memory
from ..device import load_module
from .. import device, nvtx
from ..errors import BfsError
from . import SearchResult, tiles

BLOCK, TILE = tiles.BLOCK, tiles.TILE   # threads and edges per CTA in expand_tiles
SMALL_THREADS = 1024
SMALL_Q = 4096       # the single-CTA kernel scans 4 frontier vertices per thread
SMALL_E = 32768      # ... and walks at most this many edges per level (32 block-wide steps);
                     # a 2000 x 2000 grid's wavefront (<= ~4000 vertices) stays in one launch
MAX_SMALL_LEVELS = 1 << 30
# the level loop (level_loop.cu, level_loop; loop="grid", the default): level after level on the
# whole grid in one launch while the frontier has at most LOOP_Q vertices and LOOP_E edges
# (a level's found vertices, at most its edges, fit the counters' bounds) and no row over
# LOOP_DEGREE; the host starts one on a frontier of at most LOOP_DEGREE edges (no hub in it) or
# of at most LOOP_SPLIT_Q vertices (a root: rows walked grid-wide); a grid barrier waits at most
# LOOP_TIMEOUT_S before the launch gives up and the search raises
LOOP_Q = 1 << 18
LOOP_E = 1 << 20         # the default bound (loop_edges); the barrier word holds up to
LOOP_E_MAX = 1 << 20     # ... 2^21 - 1 found vertices (level_loop.cu)
LOOP_DEGREE = 4096       # ... and no row over this (a block walks a row ~256 edges a step,
                         # ~2 us each: a longer one costs more than the host's tiled level)
LOOP_SPLIT_Q = 32        # level_loop.cu's: a frontier this small has its rows walked grid-wide
LOOP_WORDS = 20          # three level slots (barrier word, exact edges, 2 spare), the error word,
                         # the exit barrier, 2 spare, the result (q, edges, levels, all edges)
LOOP_TIMEOUT_S = 10.0
LOOP_CLOCK_WORDS = 8     # level_loop.cu's: the level clock's stamps a level (a probe's), for
LOOP_CLOCK_LEVELS = 1 << 14   # ... a launch's first this many levels
LOOPS = ("grid", "cta")  # cta: the single-CTA small_frontier kernel, kept to measure against
# a frontier smaller than the loop's grid dealt one entry a block in turn, on every SM (1), not
# 256 entries a block on the fewest (0): a 2000 x 2000 lattice's search 0.79x the time on one
# H200, 2d-do's on two 0.84x; Kronecker s26 the same (BENCHMARKS.md, "The frontier dealt over
# every SM")
LOOP_SPREAD = 1

EXPAND_VARIANTS = {
    "tiles": "expand_tiles<false, false>",      # partitioned tiles, bitmask claim (the default)
    "tiles-l1": "expand_tiles<false, true>",    # ... status words through L1 (order="degree")
    "tiles-cas": "expand_tiles<true, false>",   # partitioned tiles, CAS on parent
    "v0": "expand_contract",             # per-block global binary search, CAS, per-warp atomics
}


def _module():
    templates = tuple(v for v in EXPAND_VARIANTS.values() if "<" in v)
    return load_module(Path(__file__).with_name("merrill.cu"), templates)


def loop_module():
    """The level loop's kernels (level_loop.cu: level_loop, and 2d-do's level_loop_peers)."""
    return load_module(Path(__file__).with_name("level_loop.cu"))


def check_loop_blocks(loop_blocks, algorithm: str) -> int:
    """The loop_blocks option (merrill, merrill-do, 2d-do): a whole number of blocks, 0 for
    one an SM; raises naming the algorithm and the value."""
    if not (isinstance(loop_blocks, int) and loop_blocks >= 0):
        raise BfsError(f"{algorithm} loop_blocks must be a whole number of blocks (0: one an "
                       f"SM), got {loop_blocks!r}")
    return loop_blocks


def check_loop_spread(loop_spread, algorithm: str) -> int:
    """The loop_spread option (merrill, merrill-do, 2d-do): how a frontier smaller than the
    level loop's grid goes to its blocks: 0, BLOCK entries a block; 1 (LOOP_SPREAD, the
    default), one entry a block in turn (level_loop.cu). Raises naming the algorithm and the
    value."""
    if loop_spread not in (0, 1):
        raise BfsError(f"{algorithm} loop_spread must be 0 or 1, got {loop_spread!r}")
    return int(loop_spread)


def loop_grid(kernel, loop_blocks: int) -> int:
    """A level loop's blocks: loop_blocks (0: one an SM), at most as many as can be resident
    at once (its blocks meet at a barrier every level, so all must be)."""
    return min(device.resident_grid(kernel, BLOCK), loop_blocks or device.sm_count())


QUEUE_BYTES_PER_VERTEX = 24   # two uint32 queues and two int64 degree arrays


def search_state_bytes(n: int, nnz: int = 0, queue_cap: int | None = None) -> int:
    """Device bytes of the search state over n vertices, its queues holding queue_cap (n where
    not given: the model's bound before the degrees are known)."""
    cap = n if queue_cap is None else queue_cap
    return (device.SEARCH_BYTES_PER_VERTEX - QUEUE_BYTES_PER_VERTEX) * n \
        + QUEUE_BYTES_PER_VERTEX * cap + 8 * (nnz // TILE + 2) + 64 + 16 * loop_slots(cap)


def loop_slots(queue_cap: int, loop_edges: int = LOOP_E) -> int:
    """Entries of each of the level loop's two row-start arrays: a level it runs finds at most
    its frontier's edges (<= loop_edges), and at most the queue's capacity."""
    return min(queue_cap, loop_edges) + 1


def hubs_first_bytes(n_rows: int, n_ids: int, nnz: int, in_place: bool = False) -> int:
    """Device bytes hubs_first needs: ranks of the n_ids entry ids, the copy of the CSR (none
    in place), one bucket's sort (keys and the sort's buffers, 32 bytes an entry)."""
    copy = 0 if in_place else 8 * (n_rows + 1) + 4 * nnz
    return 20 * n_ids + copy + 32 * min(nnz, resort_bucket(n_rows))


def degree_ranks(degree):
    """The ids 0..n-1 (degree[id] each one's degree) ranked by falling degree, ties by id:
    (perm: rank -> id, rank: id -> rank), uint32 device arrays; 24 bytes an id at the peak (the
    keys and the sort's buffer)."""
    cp = device.require_gpu()
    n_ids = int(degree.size)
    keys = degree.astype(cp.uint64)                 # (2^32-1 - degree) << 32 | id, in place
    cp.subtract(cp.uint64(0xFFFFFFFF), keys, out=keys)
    cp.left_shift(keys, cp.uint64(32), out=keys)
    cp.bitwise_or(keys, cp.arange(n_ids, dtype=cp.uint64), out=keys)
    keys.sort()
    perm = (keys & cp.uint64(0xFFFFFFFF)).astype(cp.uint32)
    del keys
    rank = cp.empty(n_ids, cp.uint32)
    rank[perm] = cp.arange(n_ids, dtype=cp.uint32)
    return perm, rank


def resort_bucket(n_rows: int) -> int:
    """Entries a bucket of hubs_first's re-sort holds: at most half the rows (a power of two;
    RESORT_LIMIT at most, 2^20 at least). The bucket's keys and the sort's buffers take ~32
    bytes an entry, so beside the ranks (8 bytes a row) the re-sort holds less than the search
    state allocated after it and is never a run's peak (at scale 28 a 2^28-entry bucket was:
    47.2 GiB against the search's 43.4)."""
    half = max(1, n_rows // 2)
    return max(1 << 20, min(memory.RESORT_LIMIT, 1 << (half.bit_length() - 1)))


def hubs_first(offsets, columns, rename: bool, what: str, in_place: bool = False):
    """A square CSR's vertices ranked by falling degree, ties by id: perm (rank -> id) and
    rank; and a CSR whose rows list their entries by that rank (hubs first), rows and entries
    renamed to ranks (rename) or kept under their ids. in_place (rows kept, not rename): the
    columns themselves are re-sorted, a bucket of rows at a time (resort_bucket), and no copy
    is made (the caller owns them); else a copy. merrill's order=degree and merrill-do's
    rows=degree. Returns (offsets, columns, perm, rank)."""
    cp = device.require_gpu()
    if in_place and rename:
        raise BfsError(f"{what}: renamed rows move, so they cannot be re-sorted in place")
    n_rows, nnz = int(offsets.size) - 1, int(columns.size)
    # each phase starts from an empty pool cache: what Kernel 1 and the rank sort leave cached
    # is not sized for the next phase's requests, and a cached block is device memory in use
    device.free_pool()
    perm, rank = degree_ranks(cp.diff(offsets))      # the degrees freed as it returns
    device.free_pool()
    if rename:
        rows, new_offsets = perm, cp.zeros(n_rows + 1, cp.int64)
        cp.cumsum(cp.diff(offsets)[perm], out=new_offsets[1:])
    else:
        rows, new_offsets = np.uint64(0), offsets   # null: row r is row r (renamed_keys)
    # in place: a bucket's keys come from its own rows' range, written back once sorted
    new_columns = columns if in_place else cp.empty_like(columns)
    renamed_keys = _module().get_function("renamed_keys")

    def fill_bucket(r0, r1, keys):
        base = int(offsets_h[r0])
        renamed_keys((device.grid_for((r1 - r0) * 32, BLOCK),), (BLOCK,),
                     (offsets, columns, rows, rank, new_offsets, np.int64(r0),
                      np.int64(r1), np.int64(base), keys))
        return int(offsets_h[r1]) - base    # a row's entries, all renamed

    offsets_h = new_offsets.get()
    bucket = resort_bucket(n_rows)
    csr_gpu.sort_rows(offsets_h, new_columns, fill_bucket, bucket, what)
    if not rename:      # the sorted ranks back to the ids, a slice at a time
        for lo in range(0, nnz, bucket):
            part = new_columns[lo:lo + bucket]
            part[...] = perm[part]
    return new_offsets, new_columns, perm, rank


class MerrillSearcher(device_csr.DeviceCsrSearcher):
    level_profiling = True
    nvtx_name = "merrill"     # the algorithm in the level steps' NVTX ranges (bfs.nvtx)
    """Searches over a device CSR (offsets int64[n+1], columns uint32).

    expand: which multi-block level kernel runs (EXPAND_VARIANTS; "tiles" unless measuring).
    order: "graph" searches the CSR as given; "degree" first renames the vertices by falling
    degree (ties by id) so the hubs' visited bits share a few cache lines, searches in those
    ids with status words read through L1, and writes parent and level under the graph's own ids
    at each claim. That renaming is Kernel-1 work: kernel1_extra_s holds its time.
    profile_levels: when set to a list, each search() replaces its content with one dict per
    level step (kind, depth, frontier vertices and edges, GPU milliseconds by CUDA events).
    """

    def __init__(self, offsets, columns, expand: str = "tiles", order: str = "graph",
                 loop: str = "grid", loop_blocks: int = 0, loop_edges: int = LOOP_E,
                 loop_spread: int = LOOP_SPREAD):
        n = self._check_csr(offsets, columns, "merrill")
        cp = self.cp
        if expand not in EXPAND_VARIANTS:
            raise BfsError(f"unknown merrill expand variant {expand!r}")
        if loop not in LOOPS:
            raise BfsError(f"merrill loop must be one of {LOOPS}, got {loop!r}")
        if not (isinstance(loop_edges, int) and 1 <= loop_edges <= LOOP_E_MAX):
            raise BfsError(f"merrill loop_edges must be 1..{LOOP_E_MAX}, got {loop_edges!r}")
        self.loop_edges = loop_edges
        check_loop_blocks(loop_blocks, "merrill")
        self.loop_spread = check_loop_spread(loop_spread, "merrill")
        if order not in ("graph", "degree"):
            raise BfsError(f"merrill order must be graph or degree, got {order!r}")
        if order == "degree" and expand != "tiles":
            raise BfsError(f"order=degree runs with expand=tiles only, not {expand!r}")
        self.nnz = int(columns.size)
        self.degree = cp.diff(offsets).get()  # host copy: the root's degree without a sync
        # A queue holds vertices claimed once each (the visited bit's atomicOr or parent's CAS),
        # and a vertex with no edge is never claimed: the queues and their degrees hold the
        # vertices with an edge, plus an isolated root. Half the vertices of a Kronecker graph
        # at scale 26 have no edge: at scale 28 this is ~3 GiB of the 24 bytes a vertex.
        # Counted on the host: a device sum's first call on a large array compiles a reduction
        # inside Kernel 1 (5.5 s on a cold kernel cache).
        self.n_active = int(np.count_nonzero(self.degree))
        self.queue_cap = min(n, self.n_active + 1)
        device.check_fits(search_state_bytes(n, self.nnz, self.queue_cap),
                          f"merrill search state ({n} vertices)",
                       lambda free: memory.largest_kronecker_scale(free, stage="search"))
        self.n = n
        self.expand = expand
        self.offsets_out = offsets   # the CSR under the output's ids (nedge's degrees)
        self.out_id, self.rank_h, self.kernel1_extra_s = np.uint64(0), None, 0.0   # null: as given
        self.visited_init = np.uint64(0)     # null: every search starts from a clear bitmask
        self.clear_outputs = 1               # reset writes parent = level = -1 (see merrill.cu)
        # re-sorted before the search state is allocated: the two never peak together
        offsets, columns = self._reorder(offsets, columns, order)
        if order == "degree":
            self.degree = cp.diff(offsets).get()   # renamed rows
        # the diff, a re-sort's ranks and its bucket stay cached in CuPy's pool: handed back, so
        # the search state takes fresh blocks and the peak is CSR + state, not CSR + cache + state
        device.free_pool()
        if order == "degree":
            expand = "tiles-l1"
        self.offsets, self.columns = offsets, columns
        self.n_words = (n + 31) // 32
        self.parent = cp.empty(n, dtype=cp.int64)
        self.level = cp.empty(n, dtype=cp.int32)
        self.visited = cp.empty(self.n_words, dtype=cp.uint32)
        cap = self.queue_cap
        self.queues = (cp.empty(cap, dtype=cp.uint32), cp.empty(cap, dtype=cp.uint32))
        # a top-down level scans its queue's degrees in place (nothing reads them after):
        # no separate scan array, 8 bytes a vertex (2 GiB at scale 28)
        self.degs = (cp.empty(cap, dtype=cp.int64), cp.empty(cap, dtype=cp.int64))
        self.tile_first = cp.empty(self.nnz // TILE + 2, dtype=cp.int64)
        self.ctl = cp.zeros(8, dtype=cp.uint64)
        self.ctl_slots = (self.ctl[0:2], self.ctl[2:4])  # multi-block counters, by level parity
        import cupyx
        self.host_ctl = cupyx.empty_pinned((8,), dtype=np.uint64)
        mod = _module()
        self.scanner = tiles.Scan(cp, mod, cap)
        self.k_reset = mod.get_function("reset_search")
        self.k_expand = mod.get_function(EXPAND_VARIANTS[expand])
        self.k_partition = mod.get_function("partition_tiles")
        self.k_small = mod.get_function("small_frontier")
        self.loop = loop
        self.k_loop = loop_module().get_function("level_loop")
        # each more arrival costs the barrier an atomic (one block an SM, measured in
        # BENCHMARKS.md)
        self.loop_blocks = loop_grid(self.k_loop, loop_blocks)
        self.loop_state = cp.zeros(LOOP_WORDS, dtype=cp.uint64)
        self.loop_starts = (cp.empty(loop_slots(cap, loop_edges), dtype=cp.int64),
                            cp.empty(loop_slots(cap, loop_edges), dtype=cp.int64))
        self.host_loop = cupyx.empty_pinned((LOOP_WORDS,), dtype=np.uint64)
        self.loop_clock = None      # a probe's level clock: LOOP_CLOCK_WORDS x _LEVELS u64
        self.loop_alpha = 0.0       # merrill-do: Beamer's rule ends a loop (level_loop)
        self.bottom_up_floor = 0    # ... for a frontier of at least this many edges
        self.max_blocks = device.sm_count() * 16
        self.levels_run = 0
        self.launches = {"small": 0, "loop": 0, "expand": 0}
        self.profile_levels: list | None = None
        cp.cuda.get_current_stream().synchronize()

    def _reorder(self, offsets, columns, order: str):
        """The CSR the searches run over: order="degree" renames it (_degree_order)."""
        return self._degree_order(offsets, columns) if order == "degree" else (offsets, columns)

    def _degree_order(self, offsets, columns):
        """order="degree": the renamed CSR (row r = old row perm[r], columns renamed, each row
        hubs first); perm (new id -> graph id) becomes out_id. Timed into kernel1_extra_s."""
        new_offsets, new_columns, perm, rank = self._hubs_first(offsets, columns, rename=True)
        self.out_id, self.rank_h = perm, rank.get()
        return new_offsets, new_columns

    def hubs_first_bytes(self, in_place: bool = False) -> int:
        """Device bytes _hubs_first needs (hubs_first_bytes)."""
        return hubs_first_bytes(self.n, self.n, self.nnz, in_place)

    def _hubs_first(self, offsets, columns, rename: bool, in_place: bool = False):
        """hubs_first over this CSR with its own degrees, timed into kernel1_extra_s (Kernel-1
        work). Returns (offsets, columns, perm, rank)."""
        cp = self.cp
        what = "merrill order=degree" if rename else "merrill-do rows=degree"
        where = "in place" if in_place else "in a copy"
        device.check_fits(self.hubs_first_bytes(in_place),
                          f"{what}: the CSR's rows re-sorted {where} ({self.nnz} columns)")
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        out = hubs_first(offsets, columns, rename, what, in_place)
        end.record()
        end.synchronize()
        self.kernel1_extra_s = cp.cuda.get_elapsed_time(start, end) / 1e3
        return out

    def _read_ctl(self, block=None, out=None):
        """A control block (self.ctl's u64[8] unless given) into its pinned host copy (out,
        else host_ctl): the search's one kind of host read, so counting its calls counts them."""
        out = self.host_ctl if out is None else out
        (self.ctl if block is None else block).get(out=out)  # waits for the stream
        return out

    # -- one level step each; every step leaves (q, edges) of the next frontier ----------------
    def _loop_levels(self, q, depth):
        """Levels on the whole grid in one launch (level_loop.cu, level_loop) until the frontier
        outgrows the loop, empties, or (merrill-do) Beamer's rule goes bottom-up; one read of
        the loop's result block."""
        device.zero_async(self.loop_state)
        self.k_loop((self.loop_blocks,), (BLOCK,),
                    (self.offsets, self.columns, self.queues[self.cur],
                     self.queues[1 - self.cur], self.degs[self.cur], self.degs[1 - self.cur],
                     self.loop_starts[0], self.loop_starts[1],
                     np.int64(q), np.int32(depth), np.int64(LOOP_Q), np.int64(self.loop_edges),
                     np.int64(LOOP_DEGREE), np.int32(MAX_SMALL_LEVELS),
                     np.float64(self.loop_alpha), np.int64(self.bottom_up_floor),
                     np.int64(self.nnz), np.int64(self.visited_edges), self.ctl,
                     self.loop_state, np.uint64(LOOP_TIMEOUT_S * 1e9), self.parent,
                     self.level, self.visited, self.out_id, self.loop_clock,
                     np.int32(self.loop_spread)))
        self.launches["loop"] += 1
        self._read_ctl(self.loop_state, self.host_loop)
        error = int(self.host_loop[12])
        if error:
            raise BfsError(f"merrill level loop: a grid barrier of level {error >> 1} waited "
                           f"more than {LOOP_TIMEOUT_S:g} s ({self.loop_blocks} blocks: not all "
                           f"resident at once?)")
        q, edges, done, launch_edges = (int(x) for x in self.host_loop[16:20])
        # the frontiers before the last one: the caller adds the last's edges
        self.visited_edges += launch_edges - edges
        self.cur ^= done & 1
        return q, edges, done

    def _small_levels(self, q, depth):
        self.k_small((1,), (SMALL_THREADS,),
                     (self.offsets, self.columns, self.queues[self.cur],
                      self.queues[1 - self.cur], self.degs[self.cur], self.degs[1 - self.cur],
                      np.int64(q), np.int32(depth), np.int64(SMALL_E),
                      np.int32(MAX_SMALL_LEVELS), self.ctl, self.parent, self.level,
                      self.visited, self.out_id))
        self.launches["small"] += 1
        ctl = self._read_ctl()
        q, edges, done = int(ctl[4]), int(ctl[5]), int(ctl[6])
        self.cur ^= done & 1
        return q, edges, done

    def _top_down_level(self, q, edges, depth):
        cur, slot = self.cur, self.slot
        scan = self.degs[cur]
        self.scanner(scan, scan, q)
        counter, other = self.ctl_slots[slot], self.ctl_slots[1 - slot]
        if self.expand == "v0":
            blocks = max(1, min(self.max_blocks, -(-edges // BLOCK)))
            self.k_expand((blocks,), (BLOCK,),
                          (self.offsets, self.columns, self.queues[cur], scan,
                           np.int64(q), self.queues[1 - cur], self.degs[1 - cur],
                           counter, other, self.parent, self.level, self.visited,
                           np.int32(depth + 1)))
        else:
            tiles = -(-edges // TILE)
            self.k_partition((device.grid_for(tiles + 1),), (BLOCK,),
                             (scan, np.int64(q), np.int64(tiles), self.tile_first))
            self.k_expand((tiles,), (BLOCK,),
                          (self.offsets, self.columns, self.queues[cur], scan,
                           np.int64(q), self.tile_first, self.queues[1 - cur],
                           self.degs[1 - cur], counter, other, self.parent, self.level,
                           self.visited, np.int32(depth + 1), self.out_id))
        self.launches["expand"] += 1
        ctl = self._read_ctl()
        self.slot ^= 1
        self.cur ^= 1
        return int(ctl[2 * slot]), int(ctl[2 * slot + 1]), 1

    def _top_down_kind(self, q, edges) -> str:
        """Which top-down step a frontier of q vertices and `edges` edges takes: "loop" (the
        grid's level loop, level after level in one launch), "small" (loop=cta: the single-CTA
        kernel, likewise) or "top-down" (one multi-block level from the host)."""
        if self.loop == "grid":
            # a frontier from the host may hold a hub (a row over LOOP_DEGREE) unless all its
            # edges are fewer or it is small enough for the grid to walk each row; the loop
            # itself ends before a frontier with one (level_loop)
            hubless = edges <= LOOP_DEGREE or q <= LOOP_SPLIT_Q   # (split: rows grid-wide)
            return "loop" if q <= LOOP_Q and edges <= self.loop_edges and hubless \
                else "top-down"
        return "small" if q <= SMALL_Q and edges <= SMALL_E else "top-down"

    def _run_top_down(self, kind, q, edges, depth):
        """The top-down step of that kind; returns (q, edges, levels done)."""
        if kind == "loop":
            return self._loop_levels(q, depth)
        if kind == "small":
            return self._small_levels(q, depth)
        return self._top_down_level(q, edges, depth)

    def _step(self, q, edges, depth):
        """Run one level step (an NVTX range with BFS_NVTX=1); returns (kind, q, edges,
        levels done)."""
        kind = self._top_down_kind(q, edges)
        with nvtx.level(self.nvtx_name, depth, kind):
            return (kind,) + self._run_top_down(kind, q, edges, depth)

    def _start(self, root: int) -> None:
        """Hook for subclasses: per-search state beyond the queues."""

    def _finish(self, root: int) -> None:
        """Hook for subclasses: device work after the last level, inside the search."""

    def search(self, root: int) -> SearchResult:
        cp = self.cp
        root = int(root)
        if not 0 <= root < self.n:
            raise BfsError(f"root {root} is not a vertex (0..{self.n - 1})")
        n = self.n
        start = root if self.rank_h is None else int(self.rank_h[root])   # the search's id
        self.k_reset((device.grid_for(n, BLOCK),), (BLOCK,),
                     (np.int64(n), np.int64(self.n_words), np.uint32(start), np.uint32(root),
                      self.parent, self.level, self.visited, self.queues[0], self.degs[0],
                      self.offsets, self.ctl, self.visited_init, np.int32(self.clear_outputs)))
        q, edges, depth = 1, int(self.degree[start]), 0
        self.cur, self.slot = 0, 0
        self._start(root)
        self.visited_edges = edges   # summed degree of every vertex reached so far
        prof = self.profile_levels
        if prof is not None:
            prof.clear()
            ev = cp.cuda.Event
        while q > 0 and edges > 0:
            if prof is not None:
                t0 = ev()
                t0.record()
            q_in, e_in = q, edges
            kind, q, edges, done = self._step(q, edges, depth)
            self.visited_edges += edges
            if prof is not None:
                t1 = ev()
                t1.record()
                t1.synchronize()
                prof.append({"depth": depth, "kind": kind, "levels": done,
                             "frontier_vertices": q_in, "frontier_edges": e_in,
                             "next_vertices": q, "ms": cp.cuda.get_elapsed_time(t0, t1)})
            depth += done
        self._finish(root)
        cp.cuda.get_current_stream().synchronize()
        self.levels_run = depth
        return SearchResult(self.parent, self.level)


# the registry's build / from_csr / warm_up: GPU Kernel 1, then this searcher
build, from_csr, warm_up = device_csr.entry_points(MerrillSearcher)
