"""2d on the GPU: Fu et al.'s 2D bitmap BFS with its local kernels in CUDA (fu_2d.cu) and its
per-level exchanges on device buffers.

The layout, the level loop and the exchange pattern (scan / wave down the grid column, column
broadcast, row all-gather, one count all-reduce a level) are bfs.algorithms.fu_2d's; this
module runs the local work on the GPU:

  CSR         built on the GPU from the block: padded local ids by one kernel (binary search
              of each id's piece in the bounds), then Kernel 1's kernels and sort
              (bfs.build.csr_gpu.block_csr: keys row<<32|col radix-sorted per bucket of rows);
              bench's 1x1 searcher (from_csr) takes the symmetric device CSR. No CSC: see
              Parents.
  Bitmaps     cupy uint64 arrays, piece by piece as in fu_2d (PaddedRange).
  Expand      In_i -> Out_ij minus visited, load-balanced like merrill: the frontier bitmap is
              compacted into a vertex queue with degrees (one warp-aggregated atomic per warp),
              a CUB scan of the degrees gives the edge
              frontier, a tile partition finds each 1024-edge tile's first vertex, and one CTA
              per tile stages its vertices in shared memory and reads its columns coalesced; a
              neighbour not visited and not yet in Out gets atomicOr'd into Out's word.
  Parents     the edge whose atomicOr flips a bit of Out records its source as the parent, on
              every grid; contract drops the ones a rank above in the column claimed, so pred
              >= 0 exactly where this rank assigned the vertex. This replaces Fu's Fig. 7
              pass over the CSC after the traversal (~6 ms at scale 25 on one GPU).
  Contract    uni = out | prefix, parents of prefix's bits dropped (one kernel; no Assigned
              bitmap: the parents are it). On a grid of one row (R = 1: 1x1, 1xC) there is no
              rank above: no scan, no contract, uni is Out (the buffers are swapped).
  Levels      one kernel: visited |= uni, level_col = t + 1, and the own piece's new bits
              counted into the word the count all-reduce sends.

Exchanges (bfs.comm.exchange): with --comm nccl (the default) every bitmap and count moves
through NCCL on the current stream, and the only host wait of a level is one read of a few
control words (frontier vertices and edges for sizing the expand launch, and the last
all-reduce's frontier size, which ends the search); --comm mpi stages the same buffers through
host memory.

One rank (1x1 grid, or from_csr): no exchange at all, so the search is a one-GPU search and
runs the single-GPU code (ENGINE: merrill, and merrill-do for 2d-do) over the block, which is
the graph's CSR in the graph's own ids: a 1x1 grid costs what merrill costs, and the curve of a
scaling study starts from the best one-GPU search. Validation and gather read the engine's
outputs (grid_view).
"""
from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..build import csr_gpu
from ..device import load_module
from .. import device
from ..errors import BfsError
from . import Block, RunContext, SearchResult, device_csr, merrill, tiles
from .fu_2d import WORD, Fu2D, PaddedRange

BLOCK, TILE = tiles.BLOCK, tiles.TILE


def _module():
    return load_module(Path(__file__).with_name("fu_2d.cu"))


def _engine_option(options: dict) -> bool:
    """engine=1 (the default): a grid of one rank runs the single-GPU engine; engine=0 runs the
    grid's level loop there too (bench measures the per-block path on one GPU with it)."""
    engine = options.get("engine", 1)
    if engine not in (0, 1):
        raise BfsError(f"engine must be 1 (one rank runs the single-GPU search) or 0 (the grid's "
                       f"level loop), got {engine!r}")
    return bool(engine)


class EngineAnswers:
    """A search statistic or setting (levels_run, launches, directions, profile_levels, ...)
    that the level loop keeps on a multi-rank search and the engine holds on a single rank
    (Fu2DGpu.engine): read from it, and set on it (bench's profile_levels list)."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        engine = obj.__dict__.get("engine")
        if engine is not None:
            return getattr(engine, self.name)
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, obj, value):
        engine = obj.__dict__.get("engine")
        if engine is not None:
            setattr(engine, self.name, value)
        else:
            obj.__dict__[self.name] = value


class Fu2DGpu(Fu2D):
    """Fu2D with device-resident bitmaps, CSR/CSC and CUDA kernels (see the module docstring).

    comm None (from_csr): a 1x1 grid with no MPI at all.
    engine: on a grid of one rank, the single-GPU search (ENGINE) over the block, which is then
    the whole graph's CSR in the graph's own ids; None on a multi-rank grid.
    """

    # The per-GPU search a single rank runs: with no exchange the block's search is a one-GPU
    # search, so it runs the single-GPU code itself (2d: merrill's top-down levels; 2d-do:
    # merrill-do's) and a 1x1 grid costs what merrill / merrill-do cost. None: the level loop
    # on one rank too (semiring's own product).
    ENGINE: type | None = merrill.MerrillSearcher
    engine = None
    _profile = None
    _clock = _steps = None       # the last search's LevelClock and its steps, read on request
    levels_run = EngineAnswers()
    launches = EngineAnswers()
    profile_levels = EngineAnswers()
    grid_validation = True   # grid_view(), on any grid

    @property
    def device_resident(self) -> bool:
        """device_result() and nedge(): only where one GPU holds the whole graph (the engine)."""
        return self.engine is not None

    @property
    def level_profiling(self) -> bool:
        return self.engine is not None and self.engine.level_profiling

    def __init__(self, block, ctx: RunContext):
        """The block's CSR in padded local ids, built on the GPU. block.src / dst: global ids,
        host or device arrays (the in-place generator hands device ones); or None, and
        block.chunks() routes the block again a chunk at a time for each pass of the build
        (the largest scales: the block is never whole beside its CSR). Only the CSR is kept:
        parents are recorded by the expand, so Fu's CSC (for the predecessor pass) is not
        needed on the GPU."""
        cp = device.require_gpu()
        self._start_build(block, ctx, cp.cuda.get_current_stream().synchronize)
        n_row_bits, n_col_bits = self.rows.n_words * WORD, self.cols.n_words * WORD
        if max(n_row_bits, n_col_bits) >= 2**32:
            raise BfsError("2d --backend gpu takes at most 2^32 vertices per row / column range")
        if int(self.bounds[-1]) > 2**32:
            raise BfsError("2d --backend gpu takes vertex ids below 2^32")
        # whole: the block's local ids, kept by entries; streamed: a chunk's, made as its pass
        # (collective where routed) brings it
        fill = "scatter" if block.src is None else "keys"
        with self.phase("local ids"):
            entries = block.entries(self._local_entries)
        if self.R * self.C == 1 and self.ENGINE is not None and _engine_option(ctx.options):
            # one rank: padded local ids are the graph's ids (one piece, padded at its end)
            with self.phase("block CSR"):
                offsets, columns = csr_gpu.block_csr(entries, n_row_bits, fill=fill)
            del entries
            with self.phase("engine"):
                self._start_engine(offsets, columns, ctx.options, own=True)
            return
        self._build_blocks(entries, fill)
        del entries    # the routed block's local ids: gone before the blocks are finished
        with self.phase("finish blocks"):
            self._finish_blocks()
        with self.phase("search state"):
            self._allocate()

    def _local_entries(self, src, dst):
        """A block's (or a routed chunk's) entries in padded local ids: (rows, columns)."""
        return (self._local_ids(src, self.rows, self.i * self.C, 1),
                self._local_ids(dst, self.cols, self.j, self.C))

    def _start_engine(self, offsets, columns, options: dict, own: bool = False) -> None:
        """The single-GPU search over the whole graph's device CSR (see ENGINE). own: the CSR
        was built for the engine alone (the build's block CSR; not from_csr's, which bench
        shares), so an engine that re-sorts its rows (merrill-do's rows=degree) does it in
        place, not in a copy beside it: 2d-do on 1x1 at scale 28 took its pool to 73.9 GiB
        with the copy (BENCHMARKS.md, the memory-limit weak scaling), merrill-do built alone
        43.4 GiB."""
        self.cp = device.require_gpu()
        owned = {"own_csr": True} if own and getattr(self.ENGINE, "sorts_rows_in_place",
                                                     False) else {}
        self.engine = self.ENGINE(offsets, columns, **owned, **self._engine_options(options))
        self.nnz = int(columns.size)
        self._profile = None
        self._identity = None

    def _engine_options(self, options: dict) -> dict:
        """The engine's options from this algorithm's (2d has none that the engine takes)."""
        return {}

    def _build_blocks(self, entries, fill: str) -> None:
        """The block's device CSR from entries(), its (rows, columns) padded local ids, whole
        or a routed chunk at a time (csr_gpu.block_csr's fill); 2d-do adds its CSC."""
        with self.phase("block CSR"):   # streamed: its passes' generation and routing too
            self.csr_offsets, self.csr_cols = csr_gpu.block_csr(
                entries, self.rows.n_words * WORD, fill=fill)

    def _finish_blocks(self) -> None:
        """What the blocks need once the entries' local ids are freed (2d-do's CSC order)."""

    def _local_ids(self, ids, rng: PaddedRange, first_piece: int, stride: int):
        """Global ids -> padded local ids of a row or column range (uint32, on the device),
        by one kernel that finds each id's piece by binary search in the bounds."""
        cp = self.cp = device.require_gpu()
        out = cp.empty(len(ids), cp.uint32)
        bounds = cp.asarray(self.bounds)
        word_offset, lo = cp.asarray(rng.word_offset), cp.asarray(rng.lo)
        step = 1 << 28     # host blocks go up in slices: never the whole list twice
        for a in range(0, len(ids), step):
            part = ids[a:a + step]
            part = cp.asarray(part if isinstance(part, cp.ndarray) else
                              np.ascontiguousarray(part, np.uint32)).astype(cp.uint32, copy=False)
            _module().get_function("local_ids")(
                (device.grid_for(part.size),), (BLOCK,),
                (part, np.int64(part.size), bounds, np.int32(len(self.bounds) - 1),
                 np.int32(first_piece), np.int32(stride), word_offset, lo, out[a:a + step]))
        return out

    @classmethod
    def from_csr(cls, offsets, columns, exchange: str = "scan") -> "Fu2DGpu":
        cp = device.require_gpu()
        self = cls.__new__(cls)
        n = int(offsets.size) - 1
        if n < 1 or n > 2**32 - 64:
            raise BfsError(f"2d from_csr takes 1..2^32-64 vertices, got {n}")
        if offsets.dtype != cp.int64 or columns.dtype != cp.uint32:
            raise BfsError("device CSR must be int64 offsets and uint32 columns")
        self.comm = None
        self.R = self.C = 1
        self.i = self.j = 0
        self.exchange = exchange
        self.bounds = np.array([0, n], np.int64)
        self.rows = self.cols = PaddedRange(self.bounds, [0])
        self.own = slice(0, self.cols.n_words)
        pad = self.rows.n_words * WORD - n
        if pad:
            offsets = cp.concatenate([offsets, cp.full(pad, offsets[-1], cp.int64)])
        self.n = n
        if cls.ENGINE is not None:
            self._start_engine(offsets, columns, {"exchange": exchange})
            return self
        self.csr_offsets, self.csr_cols = offsets, columns
        self._allocate()
        return self

    def _allocate(self) -> None:
        cp = device.require_gpu()
        self.cp = cp
        rows, cols = self.rows, self.cols
        n_row_bits, n_col_bits = rows.n_words * WORD, cols.n_words * WORD
        self.nnz = self._block_entries()
        q_bits = self._queue_bits()
        need = (4 * n_col_bits + 8 * n_col_bits  # levels (columns only), pred
                + 20 * q_bits  # queue, degrees, scan
                + 8 * (self.nnz // TILE + 2) + 9 * 8 * max(rows.n_words, cols.n_words))
        device.check_fits(need, f"2d search state ({n_row_bits} x {n_col_bits} local vertices)")
        self.level_col = cp.empty(n_col_bits, cp.int32)
        self.pred = cp.empty(n_col_bits, cp.int64)
        # the row range's pieces (padded_to_global in tiles.cuh): parents go to global ids by a
        # search over C words, not a random read of row_global per parent
        self.row_ids = (cp.asarray(rows.word_offset), cp.asarray(rows.lo),
                        np.int32(len(rows.pieces)))
        self.in_words = cp.empty(rows.n_words, cp.uint64)
        self.out, self.visited, self.uni, self.inclusive, self.received = (
            cp.empty(cols.n_words, cp.uint64) for _ in range(5))
        self.prefix = cp.zeros(cols.n_words, cp.uint64)   # stays 0 where R = 1 (no scan)
        self.queue = cp.empty(max(q_bits, 1), cp.uint32)
        self.qdeg = cp.empty(max(q_bits, 1), cp.int64)
        self.scan = cp.empty(max(q_bits, 1), cp.int64)
        self.tile_first = cp.empty(self.nnz // TILE + 2, cp.int64)
        # ctl: [0] frontier vertices, [1] frontier edges, [2] Out bits (after the compaction
        # and expand of a level); [4] the global frontier size (the count all-reduce's result),
        # [5] this rank's new own vertices (its input). The level loop reads [0:5] once.
        self.ctl = cp.zeros(8, cp.uint64)
        self.totals, self.counts = self.ctl[4:5], self.ctl[5:6]
        self.profile_levels: list | None = None   # bench --profile-levels sets a list
        import cupyx
        self.host_ctl = cupyx.empty_pinned((8,), dtype=np.uint64)
        mod = _module()
        self.scanner = tiles.Scan(cp, mod, self.qdeg.size)
        self.k = {name: mod.get_function(name) for name in
                  ("reset", "compact", "partition_tiles", "expand_tiles", "contract", "finish",
                   "subtract_degrees", "reset_bitmaps", "chain_start", "decide_levels",
                   "level_counts", "expand_root")}
        self.launches = {"expand": 0, "levels": 0}
        cp.cuda.get_current_stream().synchronize()

    def _block_entries(self) -> int:
        """The block's directed entries (the CSR's; 2d-do's CSC alone holds the same)."""
        return int(self.csr_cols.size)

    def _queue_bits(self) -> int:
        """The frontier queue's most vertices: the row range's (a top-down level expands In
        through the block CSR; 2d-do's CSC alone pushes the column range's frontier)."""
        return self.rows.n_words * WORD

    # The global id of every padded row / column index (-1 on padding), 8 bytes a vertex: only
    # the validation (grid_view) and semiring's search read them, so they are made on the
    # device when first read, not in Kernel 1 (made on the host and copied up, they took
    # 0.4 s of a scale-26 1x2 build and 0.75 GiB a rank through every search)
    @functools.cached_property
    def row_global(self):
        return self._global_ids(self.rows)

    @functools.cached_property
    def col_global(self):
        return self._global_ids(self.cols)

    def _global_ids(self, rng: PaddedRange):
        cp = self.cp
        ids = cp.full(rng.n_words * WORD, -1, cp.int64)
        for p in range(len(rng.pieces)):
            start, lo, size = int(rng.word_offset[p]) * WORD, int(rng.lo[p]), int(rng.size[p])
            ids[start:start + size] = cp.arange(lo, lo + size, dtype=cp.int64)
        return ids

    def _read_ctl(self, words=None, host=None):
        """ctl (or `words`) into its pinned host copy (or `host`): the host's one kind of read
        of the device, blocking (it waits for the stream)."""
        words = self.ctl if words is None else words
        host = self.host_ctl if host is None else host
        words.get(out=host)
        return host

    def _compact(self, level: int) -> tuple[int, int, int]:
        """In -> the frontier queue, Out cleared; then the level's one read of the device:
        (queue vertices, their edges, the global frontier size)."""
        self._launch_compact()
        ctl = self._read_ctl()
        return int(ctl[0]), int(ctl[1]), int(ctl[4])

    def _launch_compact(self, n_edges=None, go=None) -> None:
        """In -> the frontier queue: ctl[0:4] cleared, then ctl[0] = its vertices and n_edges
        (default ctl[1:2]) += their edges; Out cleared for the expand. go (a chained level's
        flag, whose level_start cleared the counters and whose next level clears Out): the
        compaction alone, if go[0]."""
        words, offsets = self._frontier_words()
        if go is None:
            device.zero_async(self.ctl[0:4])
        self.k["compact"]((device.grid_for(words.size),), (BLOCK,),
                          (words, np.int64(words.size), offsets, self.queue,
                           self.qdeg, self.ctl[0:1], self.ctl[1:2] if n_edges is None
                           else n_edges, np.uint64(0) if go is None else go))
        if go is None:
            device.zero_async(self.out)

    def _frontier_words(self):
        """The frontier a top-down level expands and the offsets of the structure it expands
        through: In and the block CSR (2d-do's CSC alone: the column's union and the CSC)."""
        return self.in_words, self.csr_offsets

    def _expand_tiles(self, q: int, edges: int, through=None, seen=None, out=None,
                      won=None) -> None:
        """The compacted frontier's edges -> Out minus visited; the winner of each new bit
        records its parent (so no predecessor pass, Fu's Fig. 7, is needed). through (offsets,
        ends), seen and out name other buffers, won (kernel, its last arguments) another
        winner's record (2d-do's push through the CSC alone: rows found, less the rows seen,
        the hub rows' parents as pairs: fu_2d.cu's push_tiles)."""
        if not edges:
            return
        k = self.k
        offsets, ends = through or (self.csr_offsets, self.csr_cols)
        self.scanner(self.qdeg, self.scan, q)
        tiles = -(-edges // TILE)
        k["partition_tiles"]((device.grid_for(tiles + 1),), (BLOCK,),
                             (self.scan, np.int64(q), np.int64(tiles), self.tile_first))
        kernel, record = won or ("expand_tiles", (self.pred, *self.row_ids))
        k[kernel]((tiles,), (BLOCK,),
                  (offsets, ends, self.queue, self.scan, np.int64(q), self.tile_first,
                   self.visited if seen is None else seen, self.out if out is None else out,
                   self.ctl, *record))
        self.launches["expand"] += 1

    def _launch_finish(self, uni, level: int, counted: slice | None = None,
                       count_into=None, degrees=None, unvisited=None, go=None) -> None:
        """visited |= uni, levels; the bits of uni in the words `counted` (default: the own
        piece) are added to count_into (default: self.counts); degrees (offsets) given, the
        degrees of uni's vertices are taken off unvisited[0] in the same pass (2d-do); go (a
        chained level's flag, 2d-do) given, nothing happens unless go[0]."""
        nw = self.cols.n_words
        counted = counted or self.own
        self.k["finish"]((device.grid_for(nw),), (BLOCK,),
                         (uni, np.int64(nw), self.visited, self.level_col, np.int32(level),
                          np.int64(counted.start), np.int64(counted.stop),
                          self.counts if count_into is None else count_into,
                          np.uint64(0) if degrees is None else degrees,
                          np.uint64(0) if unvisited is None else unvisited,
                          np.uint64(0) if go is None else go))

    def search(self, root: int) -> None:
        cp = self.cp
        root = int(root)
        self.root = root
        self._clock = self._steps = self._profile = None
        if self.engine is not None:
            self.engine.search(root)
            return
        rows, cols = self.rows, self.cols
        r_local, c_local = rows.find(root), cols.find(root)
        self._reset_device(r_local, c_local)
        device.zero_async(self.ctl)
        self.totals.fill(1)    # level 0's frontier: the root
        self._level_loop()
        self._complete(c_local)
        cp.cuda.get_current_stream().synchronize()

    def _reset_device(self, r_local: int, c_local: int) -> None:
        """A new search's bitmaps, with every column's level and parent -1 (the root's level
        0); r_local / c_local: the root's padded local ids (-1 where not in the range)."""
        rows, cols = self.rows, self.cols
        n = max(rows.n_words, cols.n_words) * WORD
        self.k["reset"]((device.grid_for(n),), (BLOCK,),
                        (np.int64(rows.n_words * WORD), np.int64(cols.n_words * WORD),
                         self.level_col, self.in_words, self.visited,
                         np.int64(r_local), np.int64(c_local), self.pred))

    def _complete(self, c_local: int) -> None:
        """After the level loop: nothing here (the reset wrote every level and parent); 2d-do
        on a grid of one row marks what no level reached."""

    def _keep_profile(self, clock) -> None:
        """The clock is kept and its events read when profile or profile_steps is asked for,
        after the search: reading ~60 events inside it cost the timed search ~0.1 ms."""
        self._clock, self._profile, self._steps = clock, None, None

    @property
    def profile_steps(self) -> np.ndarray | None:
        """Seconds per level and LevelClock step of the last search (None on the engine)."""
        if self._steps is None and self._clock is not None:
            self._steps = self._clock.steps()
        return self._steps

    @profile_steps.setter
    def profile_steps(self, steps) -> None:
        self._steps = steps

    @property
    def profile(self) -> np.ndarray:
        """Per level (level, frontier, expand s, comm s, bytes sent): the level loop's CUDA
        events; on a single rank the engine chains levels without per-level events, so its
        rows hold each level's frontier size from the level array (after the search, outside
        its timing) and NaN seconds."""
        if self._profile is None and self._clock is not None:
            self._profile = self._clock.rows(self.profile_steps)
        if self._profile is None and self.engine is not None:
            e = self.engine
            sizes = device_csr.level_sizes(e.level)    # no n-entry temporaries
            self._profile = np.array([(lv, f, np.nan, 0.0, 0) for lv, f in enumerate(sizes)],
                                     np.float64).reshape(-1, 5)
        return self._profile

    @profile.setter
    def profile(self, rows: np.ndarray) -> None:
        self._profile = rows

    # --- Fu2D's level hooks on the GPU: no host wait but _begin_level's one read ------------
    on_device = True

    def _begin_level(self, level: int) -> int:
        self._q, self._edges, frontier = self._compact(level)
        return frontier

    def _expand_level(self, level: int) -> None:
        self._expand_tiles(self._q, self._edges)

    def _contract(self, rest=None) -> None:
        if self.R == 1 and rest is None:
            # nothing above to drop: uni is Out (swapped; Out is rewritten by the next expand)
            self.uni, self.out = self.out, self.uni
            return
        nw = self.cols.n_words
        self.k["contract"]((device.grid_for(nw),), (BLOCK,),
                           (self.out, self.prefix, self.prefix if rest is None else rest,
                            np.int64(nw), self.uni, self.pred))

    def _finish(self, level: int) -> None:
        device.zero_async(self.counts)
        self._launch_finish(self.uni, level)

    def grid_view(self) -> SimpleNamespace:
        """What bfs.validate.grid_gpu checks the last search by: this rank's block CSR with the
        global ids of its rows and columns, the column range's levels and the parents this rank
        assigned (device arrays), and the layout of the row and column ranges. On a single rank
        (the engine) the graph's CSR, its ids and the engine's outputs."""
        e = self.engine
        if e is not None and self._identity is None:    # made once, for validation only
            self._identity = self.cp.arange(e.n, dtype=self.cp.int64)
        return SimpleNamespace(
            n=int(self.bounds[-1]),
            csr_offsets=self.csr_offsets if e is None else e.offsets,
            csr_cols=self.csr_cols if e is None else e.columns,
            # a block with no CSR (2d-do adjacency=csc) is checked through its CSC
            csc_offsets=getattr(self, "csc_offsets", None) if e is None else None,
            csc_rows=getattr(self, "csc_rows", None) if e is None else None,
            row_global=self.row_global if e is None else self._identity,
            col_global=self.col_global if e is None else self._identity,
            level_col=self.level_col if e is None else e.level,
            pred=self.pred if e is None else e.parent, own=self.own,
            row_words=np.diff(self.rows.word_offset), col_words=np.diff(self.cols.word_offset),
            root_col=self.cols.find(self.root))

    def _results(self):
        if self.engine is not None:
            return self.engine.level.get(), self.engine.parent.get()
        return self.level_col.get(), self.pred.get()

    def gather(self, n_vertices: int | None = None) -> SearchResult | None:
        if self.comm is not None:
            return super().gather(n_vertices)
        if n_vertices is not None and int(n_vertices) != self.n:
            raise BfsError(f"gather({n_vertices}) on a graph of {self.n} vertices")
        res = self.device_result()
        return SearchResult(res.parent.get(), res.level.get())

    def device_result(self) -> SearchResult:
        """The last search's parent (int64) and level (int32) arrays as device arrays, for
        bfs.validate.gpu: only where one GPU holds the whole graph (the engine)."""
        if self.engine is None:
            raise BfsError("device_result() needs the whole graph on this GPU (one rank)")
        n = int(self.bounds[-1])
        return SearchResult(self.engine.parent[:n], self.engine.level[:n])

    def nedge(self) -> int:
        """Graph500 nedge of the last search, where one GPU holds the whole graph."""
        if self.engine is None:
            raise BfsError("nedge() needs the whole graph's CSR on this GPU (one rank)")
        return self.engine.nedge()


def build(block, ctx: RunContext) -> Fu2DGpu:
    return Fu2DGpu(block, ctx)


def from_csr(offsets, columns, **options) -> Fu2DGpu:
    """A 1x1-grid GPU searcher over a symmetric CSR already in device memory (bfs bench): no
    MPI, the CSC is the CSR itself."""
    return Fu2DGpu.from_csr(offsets, columns, **options)


@functools.cache
def level_loop_class(cls: type) -> type:
    """cls with no engine: the grid's level loop also on one rank (its kernels compiled by
    warm_up; the tests run a 1x1 grid's levels through it)."""
    return type(cls.__name__, (cls,), {"ENGINE": None, "__doc__": level_loop_class.__doc__})


def warm_up(ctx: RunContext, cls: type = Fu2DGpu) -> None:
    """Called by the harness before Kernel 1 is timed: the CUDA kernels and the CuPy
    element-wise code of the block's CSR/CSC build compiled on a 3-vertex block of a 1x1 grid
    over MPI.COMM_SELF, so every rank warms up alone (cls: a subclass warms up its own), with
    the engine and with the grid's level loop."""
    from mpi4py import MPI
    tiny = Block(comm=MPI.COMM_SELF, manifest={"grid": [1, 1], "bounds": [0, 3]},
                 src=np.array([0, 1], np.int64), dst=np.array([1, 2], np.int64))
    for kind in {cls, level_loop_class(cls)}:
        kind(tiny, ctx).search(0)
