"""gpu-out-of-core: level-synchronous GPU BFS over a CSR kept in host memory and streamed to the
device one edge block at a time; the SEI report's out-of-core single-GPU BFS.

Paper: E. Werner, S. McMillan, J. Chu, "Patterns and Practices for Future Architectures",
CMU/SEI-2014-TN-001 (2014), Sec. 2.4 "Single GPU, Out-of-Core CSR", Figs. 9 and 10: Kernel 1
builds the CSR on the host and cuts it into edge blocks (groups of consecutive vertices whose
adjacencies fit a memory threshold); Kernel 2 copies each block to the GPU when needed and runs
a BFS kernel over it, level after level, so a graph larger than the GPU's memory can be searched.

Algorithm (this implementation; gpu_out_of_core.cu).
  Kernel 1   the undirected CSR (int64 offsets, uint32 columns; self-loops dropped,
             duplicates kept, as bfs.build.csr_cpu) built on the CPU (Numba counting
             sort) straight into pinned host memory, where it stays. plan_blocks cuts it into
             edge blocks of at most `buffer_bytes` each (a block: its offsets slice, 8 bytes a
             row + 8, and its columns, 4 bytes an edge), the budget being what
             --device-memory-limit leaves after the search state, halved for two buffers.
  Kernel 2   the device holds level (int32), parent (int64), the frontier / next / visited
             bitmaps, the block table and two block buffers: 12 n + 3 * 4 ceil(n/32) +
             20 nb + 4 bytes (state_bytes) plus the two buffers. Each level:
               * the blocks whose row range holds a frontier vertex are known from the
                 previous level's summary (an int per block, set on the device by the advance
                 kernel from the new frontier bitmap and the blocks' row ranges, read back with
                 the frontier's size in the level's one device-to-host copy); blocks without
                 frontier vertices, and blocks without edges, are skipped;
               * the active blocks are copied host -> device with cudaMemcpyAsync from the
                 pinned CSR on a copy stream, double-buffered: block k + 1 copies into one
                 buffer while block k is expanded from the other on the compute stream, CUDA
                 events ordering the two (copy done -> expand; expand done -> the buffer's next
                 copy);
               * expand_block: a warp per 32-vertex word of the frontier bitmap within the
                 block's rows; each frontier vertex's edges inside the block are walked by the
                 warp's lanes; an unvisited neighbour is claimed by atomicCAS on its level
                 (first writer wins), which then writes its parent and sets its next bit;
               * advance: next -> frontier (and into visited), the frontier's size counted and
                 the next level's block summary set; the host reads size and summary back
                 (one copy) and stops at an empty frontier.
  Rows larger than a block are split across consecutive blocks (plan_blocks' choice, rather
  than refusing such graphs): every edge lies in exactly one block, a split row's vertex marks
  all of its blocks active, and expand_block clamps each row to the block's edge range.

Every search copies the active blocks of every level again (nothing is cached on the device),
so bytes_copied is usually several times the CSR: it and copy_s (the copies' own time, by CUDA
events on the copy stream) are kept per search for the transfer rate, to be set against
host_to_device_bandwidth(). A run validates on the CPU (bfs.harness.sessions_local: the edge
list on the device that bfs.validate.gpu needs would defeat the point of keeping the graph off
it).
Vertex ids must be below 2^32.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import SearchResult
from .device_csr import DeviceCsrSearcher
from .. import device
from ..device import BLOCK, parse_bytes
from ..errors import BfsError

NAME = "gpu-out-of-core"
OFFSET_BYTES = 8          # int64 offsets
COLUMN_BYTES = 4          # uint32 columns
MIN_BLOCK_BYTES = 2 * OFFSET_BYTES + COLUMN_BYTES   # one row's two offsets and one edge
BLOCK_TABLE_BYTES = 8 + 8 + 4   # per block on the device: row_lo, row_hi (int64), summary int
WARM_UP_LIMIT = 1 << 20


def block_bytes(rows: int, edges: int) -> int:
    """Bytes of one edge block in a buffer: its offsets slice (rows + 1) and its columns."""
    return OFFSET_BYTES * (rows + 1) + COLUMN_BYTES * edges


def vertex_state_bytes(n: int) -> int:
    """Device bytes of the per-vertex search state: level int32, parent int64 and three
    bitmaps (frontier, next, visited) of 32-bit words."""
    return 12 * n + 3 * 4 * ((n + 31) // 32)


def state_bytes(n: int, n_blocks: int) -> int:
    """Device bytes besides the two block buffers: the per-vertex state and the block table
    (row ranges and the per-level summary, one int per block plus the frontier count)."""
    return vertex_state_bytes(n) + BLOCK_TABLE_BYTES * n_blocks + 4


def plan_blocks(offsets, budget: int) -> list[tuple[int, int, int, int]]:
    """Cut a CSR (offsets int64[n+1]) into edge blocks (row_lo, row_hi, edge_lo, edge_hi) of at
    most `budget` bytes each (block_bytes(row_hi - row_lo, edge_hi - edge_lo)).

    Greedy, in row order: a block takes whole rows while they fit; a row that does not fit a
    block on its own (or the rest of one already split) is split, its edges spread over
    consecutive blocks of that one row. So the edge ranges partition [0, nnz) in order, the row
    ranges cover [0, n) in order (consecutive blocks share a row only when it is split; every
    other row lies in exactly one block), and empty rows cost their 8 offset bytes like any
    other. BfsError if the budget is below MIN_BLOCK_BYTES (one row and one edge).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    budget = int(budget)
    n = len(offsets) - 1
    if n < 1:
        raise BfsError("the graph has no vertices")
    if budget < MIN_BLOCK_BYTES:
        raise BfsError(f"an edge block needs at least {MIN_BLOCK_BYTES} bytes (one row's "
                       f"offsets and one edge), the budget is {budget}")
    # block_bytes of rows [r, j) starting at edge e is f[j] - (4 e + 8 r) + 8, f monotone
    f = COLUMN_BYTES * offsets + OFFSET_BYTES * np.arange(n + 1, dtype=np.int64)
    per_split = (budget - 2 * OFFSET_BYTES) // COLUMN_BYTES   # edges of a one-row block
    out = []
    r, e = 0, int(offsets[0])
    while r < n:
        cap = budget + COLUMN_BYTES * e + OFFSET_BYTES * r - OFFSET_BYTES
        j = min(int(np.searchsorted(f, cap, side="right")) - 1, n)
        if j > r:                                  # rows [r, j) fit whole (r's rest, if split)
            out.append((r, j, e, int(offsets[j])))
            r, e = j, int(offsets[j])
        else:                                      # row r alone is too large: split it
            end = min(e + per_split, int(offsets[r + 1]))
            out.append((r, r + 1, e, end))
            e = end
            if e == int(offsets[r + 1]):
                r += 1
    return out


def plan_for_limit(offsets, limit: int, max_block_bytes: int | None = None):
    """(blocks, buffer_bytes, device_bytes) for a device memory limit: the two buffers share
    what the search state leaves, the block table included (it grows with the block count, so
    the budget is refined until it fits); max_block_bytes caps a buffer below that (tests:
    many tiny blocks). BfsError naming both numbers where the state alone, or the state and
    two minimal blocks, exceed the limit."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n, limit = len(offsets) - 1, int(limit)
    need = vertex_state_bytes(n)
    if need > limit:
        raise BfsError(f"--algorithm {NAME}: the search state of {n} vertices needs {need} bytes "
                       f"of GPU memory ({need / 2**20:.1f} MiB; level, parent and three "
                       f"bitmaps), more than the device memory limit of {limit} bytes "
                       f"({limit / 2**20:.1f} MiB)")
    n_blocks = 1
    for _ in range(64):
        budget = (limit - state_bytes(n, n_blocks)) // 2
        if max_block_bytes is not None:
            budget = min(budget, int(max_block_bytes))
        if budget < MIN_BLOCK_BYTES:
            break
        blocks = plan_blocks(offsets, budget)
        buffer = max(block_bytes(rh - rl, eh - el) for rl, rh, el, eh in blocks)
        total = state_bytes(n, len(blocks)) + 2 * buffer
        if total <= limit:
            return blocks, buffer, total
        n_blocks = len(blocks)
    raise BfsError(f"--algorithm {NAME}: the search state of {n} vertices and two edge-block "
                   f"buffers need more than the device memory limit of {limit} bytes (the state "
                   f"alone: {need} bytes; each buffer needs at least {MIN_BLOCK_BYTES} bytes "
                   f"plus the block table's {BLOCK_TABLE_BYTES} bytes a block)")


def csr_bytes(offsets) -> int:
    """Bytes of the host CSR: int64 offsets and uint32 columns."""
    return OFFSET_BYTES * len(offsets) + COLUMN_BYTES * int(offsets[-1])


def default_limit() -> int:
    """Without --device-memory-limit: the GPU's free memory less 1/16 for CuPy's own use."""
    free, _ = device.free_memory()
    return free - free // 16


def _module():
    return device.load_module(Path(__file__).with_name("gpu_out_of_core.cu"))


def pinned_csr(src, dst, n: int):
    """CPU Kernel 1 (bfs.build.csr_cpu's counting sort) into pinned host arrays: (offsets
    int64[n+1], columns uint32[nnz]), so the search's copies are true asynchronous DMA."""
    import cupyx

    from ..build.csr_cpu import build_csr_chunks
    n = int(n)
    if n < 1:
        raise BfsError("the graph has no vertices")
    if n > 2**32:
        raise BfsError(f"--algorithm {NAME} takes at most 2^32 vertices, got {n}")
    src, dst = np.asarray(src), np.asarray(dst)
    csr = build_csr_chunks(lambda: iter([(src, dst)]), n, np.uint32, cupyx.empty_pinned)
    return csr.offsets, csr.columns


def _to_pinned(a, dtype):
    import cupyx
    a = a.get() if hasattr(a, "get") else np.asarray(a)
    out = cupyx.empty_pinned(a.shape, dtype=dtype)
    out[...] = a
    return out


class OutOfCoreSearcher(DeviceCsrSearcher):
    """Searches over a host CSR (offsets int64[n+1], columns uint32, ideally pinned: others
    are copied into pinned memory) within device_memory_limit bytes of GPU memory (an int or a
    string such as 16G; default: default_limit()); max_block_bytes caps the edge blocks
    further (tests and experiments: many small blocks).

    After a search: bytes_copied (host -> device bytes of the blocks copied), copy_s (their
    copy time, CUDA events), levels_run; parent / level stay on the device
    (device_result) until gather(n) copies them to the host.
    """

    def __init__(self, offsets, columns, device_memory_limit=None, max_block_bytes=None):
        cp = self.cp = device.require_gpu()
        offsets = offsets if _is_pinned(offsets, np.int64) else _to_pinned(offsets, np.int64)
        columns = columns if _is_pinned(columns, np.uint32) else _to_pinned(columns, np.uint32)
        n = len(offsets) - 1
        if n < 1:
            raise BfsError("the graph has no vertices")
        if n > 2**32:
            raise BfsError(f"--algorithm {NAME} takes at most 2^32 vertices, got {n}")
        if int(offsets[-1]) != len(columns):
            raise BfsError(f"host CSR: offsets end at {int(offsets[-1])}, columns hold "
                           f"{len(columns)}")
        limit = default_limit() if device_memory_limit is None else \
            parse_bytes(device_memory_limit)
        self.blocks, self.buffer_bytes, self.device_bytes = plan_for_limit(
            offsets, limit, None if max_block_bytes is None else parse_bytes(max_block_bytes))
        device.check_fits(self.device_bytes, f"{NAME} search state and block buffers "
                                             f"({n} vertices, limit {limit} bytes)")
        self.n, self.limit = n, limit
        self.offsets_h, self.columns_h = offsets, columns
        self.words = (n + 31) // 32
        nb = self.n_blocks = len(self.blocks)
        self.level = cp.empty(n, dtype=cp.int32)
        self.parent = cp.empty(n, dtype=cp.int64)
        self.frontier, self.next, self.visited = (cp.empty(self.words, dtype=cp.uint32)
                                                  for _ in range(3))
        table = np.asarray(self.blocks, dtype=np.int64).reshape(nb, 4)
        self.block_lo = cp.asarray(table[:, 0])
        self.block_hi = cp.asarray(table[:, 1])
        self.has_edges = table[:, 3] > table[:, 2]
        self.summary = cp.zeros(nb + 1, dtype=cp.int32)
        import cupyx
        self.summary_h = cupyx.empty_pinned(nb + 1, dtype=np.int32)
        self.buffers = [cp.empty(self.buffer_bytes, dtype=cp.uint8) for _ in range(2)]
        self.copy_stream = cp.cuda.Stream(non_blocking=True)
        self.compute_stream = cp.cuda.Stream(non_blocking=True)
        self.copied = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
        self.expanded = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
        self._timing: list = []      # (start, end) event pairs of copies, reused across levels
        mod = _module()
        self.k_reset = mod.get_function("reset_search")
        self.k_expand = mod.get_function("expand_block")
        self.k_advance = mod.get_function("advance")
        self.grid_vertices = device.grid_for(n, BLOCK)
        self.grid_words = device.grid_for(self.words, BLOCK)
        self.csr_bytes = csr_bytes(offsets)
        self.bytes_copied = self.levels_run = 0
        self.copy_s = 0.0
        cp.cuda.Device().synchronize()

    def _copy(self, k: int, slot: int, i: int) -> None:
        """Block k into buffer `slot` on the copy stream, after the buffer's last expand."""
        cp = self.cp
        rl, rh, el, eh = self.blocks[k]
        rows_bytes = OFFSET_BYTES * (rh - rl + 1)
        cols_bytes = COLUMN_BYTES * (eh - el)
        s = self.copy_stream
        s.wait_event(self.expanded[slot])
        while len(self._timing) <= i:
            self._timing.append((cp.cuda.Event(), cp.cuda.Event()))
        t0, t1 = self._timing[i]
        t0.record(s)
        dst = self.buffers[slot].data.ptr
        h2d = cp.cuda.runtime.memcpyHostToDevice
        cp.cuda.runtime.memcpyAsync(dst, self.offsets_h.ctypes.data + OFFSET_BYTES * rl,
                                    rows_bytes, h2d, s.ptr)
        if cols_bytes:
            cp.cuda.runtime.memcpyAsync(dst + rows_bytes,
                                        self.columns_h.ctypes.data + COLUMN_BYTES * el,
                                        cols_bytes, h2d, s.ptr)
        t1.record(s)
        self.copied[slot].record(s)
        self.bytes_copied += rows_bytes + cols_bytes

    def _expand(self, k: int, slot: int, depth: int) -> None:
        rl, rh, el, eh = self.blocks[k]
        s = self.compute_stream
        s.wait_event(self.copied[slot])
        warps = (rh + 31) // 32 - rl // 32
        with s:
            self.k_expand((device.grid_for(warps * 32, BLOCK),), (BLOCK,),
                          (np.int64(rl), np.int64(rh), np.int64(el), np.int64(eh),
                           self.buffers[slot], self.frontier, self.visited, self.next,
                           self.level, self.parent, np.int32(depth)))
        self.expanded[slot].record(s)

    def _advance(self) -> tuple[int, np.ndarray]:
        """next -> frontier, the block summary; (frontier size, active block ids)."""
        cp = self.cp
        s = self.compute_stream
        nb = self.n_blocks
        cp.cuda.runtime.memsetAsync(self.summary.data.ptr, 0, 4 * (nb + 1), s.ptr)
        with s:
            self.k_advance((self.grid_words,), (BLOCK,),
                           (np.int64(self.words), self.frontier, self.next, self.visited,
                            self.block_lo, self.block_hi, np.int64(nb), self.summary))
        cp.cuda.runtime.memcpyAsync(self.summary_h.ctypes.data, self.summary.data.ptr,
                                    4 * (nb + 1), cp.cuda.runtime.memcpyDeviceToHost, s.ptr)
        s.synchronize()                        # the level's one host read
        active = np.flatnonzero((self.summary_h[:nb] != 0) & self.has_edges)
        return int(self.summary_h[nb]), active

    def search(self, root: int) -> SearchResult:
        root = int(root)
        if not 0 <= root < self.n:
            raise BfsError(f"root {root} is not a vertex (0..{self.n - 1})")
        s = self.compute_stream
        # the previous search's copies may still be pending on the other stream
        self.copy_stream.synchronize()
        with s:
            self.k_reset((self.grid_vertices,), (BLOCK,),
                         (np.int64(self.n), np.int64(self.words), np.uint32(root), self.level,
                          self.parent, self.frontier, self.next, self.visited))
        for ev in self.expanded:
            ev.record(s)                       # the buffers are free once the reset ran
        self.bytes_copied = 0
        self.copy_s = 0.0
        count, active = self._advance()
        depth = 0
        while count:
            depth += 1
            for i, k in enumerate(active):
                slot = i & 1
                self._copy(int(k), slot, i)    # block i + 1 copies while block i expands
                self._expand(int(k), slot, depth)
            # events of this level's copies are complete once the compute stream (which waited
            # on every copy) is synchronized in _advance
            count, active_next = self._advance()
            self.copy_s += sum(self.cp.cuda.get_elapsed_time(*self._timing[i])
                               for i in range(len(active))) / 1e3
            active = active_next
        self.levels_run = depth                # expanded levels; the last found nothing
        return SearchResult(self.parent, self.level)

    def nedge(self) -> int:
        """Graph500 nedge of the last search: half the summed degree of the reached vertices
        (degrees from the host offsets; the level array is copied back for it)."""
        reached = self.level.get() >= 0
        return int(np.diff(self.offsets_h)[reached].sum()) // 2

    def transfer_rate(self) -> float:
        """Bytes per second of the last search's copies (nan before any copy)."""
        return self.bytes_copied / self.copy_s if self.copy_s > 0 else math.nan


def _is_pinned(a, dtype) -> bool:
    """A host numpy array of `dtype` in page-locked memory (cudaHostGetFlags succeeds)."""
    if not isinstance(a, np.ndarray) or a.dtype != dtype or not a.flags.c_contiguous:
        return False
    import cupy as cp
    if a.size == 0:
        return False
    try:
        cp.cuda.runtime.hostGetFlags(a.ctypes.data)
        return True
    except Exception:
        return False


def host_to_device_bandwidth(nbytes: int = 1 << 28, repeats: int = 3) -> float:
    """Measured pinned host -> device copy bandwidth (bytes/s, the best of `repeats` copies of
    nbytes, CUDA events): what a search's transfer_rate() is to be compared with."""
    import cupyx
    cp = device.require_gpu()
    host = cupyx.empty_pinned(nbytes, dtype=np.uint8)
    dev = cp.empty(nbytes, dtype=cp.uint8)
    s = cp.cuda.Stream(non_blocking=True)
    best = math.inf
    for _ in range(repeats):
        t0, t1 = cp.cuda.Event(), cp.cuda.Event()
        t0.record(s)
        cp.cuda.runtime.memcpyAsync(dev.data.ptr, host.ctypes.data, nbytes,
                                    cp.cuda.runtime.memcpyHostToDevice, s.ptr)
        t1.record(s)
        t1.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(t0, t1) / 1e3)
    return nbytes / best


def _limit(options: dict):
    return options.get("device_memory_limit")


def build(graph, ctx):
    """CPU Kernel 1 into pinned host memory, then the searcher (ctx.options'
    device_memory_limit: bytes or a string such as 16G)."""
    device.require_gpu()
    offsets, columns = pinned_csr(graph.src, graph.dst, graph.n_vertices)
    return OutOfCoreSearcher(offsets, columns, _limit(ctx.options),
                             ctx.options.get("max_block_bytes"))


def from_csr(offsets, columns, device_memory_limit=None, max_block_bytes=None):
    """bfs bench's CSR (on the device or the host): copied into pinned host memory first."""
    return OutOfCoreSearcher(offsets, columns, device_memory_limit, max_block_bytes)


def warm_up(ctx) -> None:
    """Compile (or load from CuPy's cache) the kernels on a 3-vertex path before Kernel 1."""
    offsets, columns = pinned_csr(np.array([0, 1], np.uint32), np.array([1, 2], np.uint32), 3)
    OutOfCoreSearcher(offsets, columns, WARM_UP_LIMIT).search(0)
