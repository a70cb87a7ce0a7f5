"""hybrid: task-based hybrid CPU/GPU BFS, level-synchronous over T tasks.

Paper: L.-M. Munguia, D. A. Bader, E. Ayguade, "Task-based Parallel Breadth-First Search in
Heterogeneous Environments", HiPC 2012 (Sec. III tasks and Algorithm 2; Sec. IV-A workload-
aware and IV-B fixed-partitioned-space hybrid BFS; Sec. V's GPU and CPU task implementations).

Tasks. The vertices are cut into T contiguous ranges of (nearly) equal size, each with its CSR
rows (TaskGraph; --tasks, default 16). A task owns the frontier vertices in its range: each level
it expands them top-down (scans their rows, claims every unvisited neighbour for the next level,
which may lie in any task). The frontier is kept sorted, so a task's share is one slice.

CPU task (cpu_level): Numba, parallel over the task's frontier, atomic-free. The frontier is cut
into chunks; each thread lists, for its chunk, every (neighbour, parent) pair whose neighbour is
still unvisited, writing nothing shared; then one serial pass claims them in chunk order, the
first pair of a vertex winning (first writer: level and parent set together), and returns the
newly discovered vertices. The serial claim pass is O(frontier edges that see an unvisited end).

GPU task (hybrid.cu): one warp per frontier vertex, its lanes striding over the row.

--mode workload (default; the paper's workload-aware scheme, Fig. 6). Per level a task whose
frontier share exceeds --lambda vertices runs on the GPU, the others on the CPU threads, at the
same time (the GPU tasks' kernel is launched first, asynchronously, then the CPU tasks run).
lambda = 0 puts every task on the GPU, lambda = inf every task on the CPU. State: the
authoritative level / parent arrays are on the host and mirrored on the device (level int32,
parent int64). The GPU claims by atomicCAS on its level mirror (expand_cas) and appends what it
won to a compact list; after the level the host copies that list and those vertices' parents
back (12 bytes a GPU discovery) and accepts each vertex the CPU did not claim in the same level
(the CPU's claim wins; both are one level up, so either is a valid parent). The host's
discoveries go to the device as a compact list (vertex, parent: 12 bytes each, scatter_found),
lazily: they are queued and sent only before the next level that runs a GPU task, so an all-CPU
search never copies, and a run of CPU levels costs one transfer of everything they found. Cost
per GPU level: two 8-byte counter/list reads plus 12 bytes per vertex found on either side
since the last GPU level, and the frontier of the GPU tasks (4 bytes a vertex) uploaded. The
alternative, whole-array copies (5 n bytes each way a level), is what the paper's per-task
state migration amounts to and dominates small levels; lists cost nothing when nothing changed.

--mode fixed (the paper's fixed-partitioned-space scheme, Fig. 7). The first
round(--gpu-share * T) tasks (default share 0.5) are always the GPU's, the rest the CPU's; both
run every level at once. As the paper does, the sides exchange bitmaps each level: the device
builds its new-frontier bitmap NVF_G (claims by atomicOr, expand_bits), the host its NVF_C (from
cpu_level's claims); NVF_G goes to the host and NVF_C to the device (n/8 bytes each way, however
small the level), and both update their visited bitmap with NVF_C | NVF_G (the visited bitmaps'
change is exactly that union, so it carries the paper's VB_C / VB_G exchange). The device
extracts its own tasks' part as its next frontier list (advance_bits). Each side records parents
only of the vertices it claimed; the host's level array is the union's, and at the end of a
search the parents of vertices only the GPU claimed are taken from the device (one n * 8-byte
copy a search).

Race safety: the CPU claims serially after its parallel scan; the GPU's first writer is the
thread whose CAS / atomicOr flipped the vertex; between the sides the host's claim wins
(workload) or either one-level-up parent is kept (fixed). Every tree is validated by the Graph500
rules like every algorithm's.

Kernel 1: GPU Kernel 1 (bfs.build.csr_gpu) on the device, whose CSR is copied to the host for
the CPU tasks (rows sorted by column on both). Vertex ids must be below 2^32. The searcher's
`task_levels` counts, for the last search, the (task, level) pairs each side ran.

HostHybrid is the same driver with no device: it runs any setting whose tasks all fall to the
CPU (workload with lambda = inf, fixed with gpu-share 0) without importing CuPy (the tests').
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from numba import prange

from . import EdgeList, RunContext, SearchResult, Searcher
from ..errors import BfsError

DEFAULTS = {"tasks": 16, "mode": "workload", "lambda": 1000.0, "gpu_share": 0.5}
MODES = ("workload", "fixed")


@dataclass
class TaskGraph:
    """A host CSR cut into T contiguous vertex ranges: task t owns [bounds[t], bounds[t+1])
    and the CSR rows of those vertices, entries offsets[bounds[t]]..offsets[bounds[t+1]]."""
    offsets: np.ndarray   # int64[n+1]
    columns: np.ndarray   # uint32 (or the edge list's id dtype)
    bounds: np.ndarray    # int64[T+1], bounds[0] = 0, bounds[T] = n

    @classmethod
    def split(cls, offsets, columns, tasks: int) -> "TaskGraph":
        n = len(offsets) - 1
        if tasks < 1:
            raise BfsError(f"--tasks must be >= 1, got {tasks}")
        t = max(1, min(int(tasks), n))   # no empty task (a graph of n vertices: n tasks at most)
        bounds = (np.arange(t + 1, dtype=np.int64) * n) // t
        return cls(np.asarray(offsets, np.int64), columns, bounds)

    @property
    def n_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_tasks(self) -> int:
        return len(self.bounds) - 1

    def rows(self, t: int) -> tuple[int, int]:
        """Task t's vertex range [lo, hi)."""
        return int(self.bounds[t]), int(self.bounds[t + 1])

    def edges(self, t: int) -> tuple[int, int]:
        """Task t's CSR entries [lo, hi)."""
        lo, hi = self.rows(t)
        return int(self.offsets[lo]), int(self.offsets[hi])

    def task_slices(self, frontier: np.ndarray) -> np.ndarray:
        """cuts[T+1]: task t's frontier vertices are frontier[cuts[t]:cuts[t+1]] (sorted
        frontier)."""
        return np.searchsorted(frontier, self.bounds)


@dataclass
class SearchState:
    """The host's authoritative arrays of one search."""
    level: np.ndarray    # int32, -1 unreached
    parent: np.ndarray   # int64, -1 unreached (fixed mode: also -1 where only the GPU claimed)

    @classmethod
    def fresh(cls, n: int, root: int) -> "SearchState":
        level = np.full(n, -1, np.int32)
        parent = np.full(n, -1, np.int64)
        level[root], parent[root] = 0, root
        return cls(level, parent)


@numba.njit(parallel=True, cache=True)
def _scan_chunks(offsets, columns, frontier, level, n_chunks):
    """Per chunk of the frontier (in parallel), the (neighbour, parent) pairs whose neighbour
    is unvisited, in chunk order; nothing shared is written. Returns the pairs, each chunk's
    start in them and each chunk's count."""
    k = len(frontier)
    starts = np.empty(n_chunks + 1, np.int64)
    for c in range(n_chunks + 1):
        starts[c] = (c * k) // n_chunks
    room = np.zeros(n_chunks + 1, np.int64)
    for c in range(n_chunks):
        total = 0
        for i in range(starts[c], starts[c + 1]):
            u = frontier[i]
            total += offsets[u + 1] - offsets[u]
        room[c + 1] = room[c] + total
    cand_v = np.empty(room[n_chunks], np.int64)
    cand_u = np.empty(room[n_chunks], np.int64)
    counts = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        pos = room[c]
        for i in range(starts[c], starts[c + 1]):
            u = frontier[i]
            for e in range(offsets[u], offsets[u + 1]):
                v = columns[e]
                if level[v] == -1:
                    cand_v[pos] = v
                    cand_u[pos] = u
                    pos += 1
        counts[c] = pos - room[c]
    return cand_v, cand_u, room, counts


@numba.njit(cache=True)
def _claim(cand_v, cand_u, room, counts, level, parent, next_depth):
    """The serial first-writer pass: in chunk order, a still-unvisited vertex takes the pair's
    parent and next_depth. Returns the vertices claimed, each once."""
    total = 0
    for c in range(len(counts)):
        total += counts[c]
    found = np.empty(total, np.int64)
    k = 0
    for c in range(len(counts)):
        for j in range(room[c], room[c] + counts[c]):
            v = cand_v[j]
            if level[v] == -1:
                level[v] = next_depth
                parent[v] = cand_u[j]
                found[k] = v
                k += 1
    return found[:k]


def cpu_level(tg: TaskGraph, t: int, frontier: np.ndarray, state: SearchState,
              depth: int) -> np.ndarray:
    """One CPU task's level: expand `frontier` (task t's frontier vertices, all at `depth`)
    top-down over their rows, claim the unvisited neighbours in state (level depth + 1, parent
    the first frontier vertex in chunk order that saw them) and return them (int64, each
    once)."""
    lo, hi = tg.rows(t)
    if len(frontier) and (frontier[0] < lo or frontier[-1] >= hi):
        raise BfsError(f"task {t} owns vertices [{lo}, {hi}); its frontier is outside them")
    if len(frontier) == 0:
        return np.empty(0, np.int64)
    chunks = max(1, min(len(frontier), 4 * numba.get_num_threads()))
    pairs = _scan_chunks(tg.offsets, tg.columns, frontier, state.level, chunks)
    return _claim(*pairs, state.level, state.parent, np.int32(depth + 1))


def parse_options(options: dict) -> dict:
    """tasks, mode, lambda, gpu_share from ctx.options (defaults where absent), checked."""
    opts = {**DEFAULTS, **{k: options[k] for k in DEFAULTS if options.get(k) is not None}}
    if opts["mode"] not in MODES:
        raise BfsError(f"--mode must be one of {', '.join(MODES)}, got {opts['mode']!r}")
    opts["tasks"] = int(opts["tasks"])
    if opts["tasks"] < 1:
        raise BfsError(f"--tasks must be >= 1, got {opts['tasks']}")
    opts["lambda"] = float(opts["lambda"])
    if not opts["lambda"] >= 0:
        raise BfsError(f"--lambda must be >= 0, got {opts['lambda']}")
    opts["gpu_share"] = float(opts["gpu_share"])
    if not 0 <= opts["gpu_share"] <= 1:
        raise BfsError(f"--gpu-share must be in [0, 1], got {opts['gpu_share']}")
    return opts


class HostHybrid(Searcher):
    """The level-synchronous task driver. `device` is a DeviceSide (GPU tasks) or None (only
    settings whose tasks all run on the CPU; a GPU task then raises)."""

    def __init__(self, tg: TaskGraph, options: dict | None = None, device=None):
        self.tg = tg
        self.opts = parse_options(options or {})
        self.device = device
        self.gpu_tasks = int(math.floor(self.opts["gpu_share"] * tg.n_tasks + 0.5))
        self.task_levels = {"cpu": 0, "gpu": 0}
        self.levels_run = 0

    @property
    def n(self) -> int:
        return self.tg.n_vertices

    def _need_device(self):
        if self.device is None:
            raise BfsError("hybrid: this setting runs tasks on the GPU, and this driver has none "
                           "(host-only: --mode workload --lambda inf, or --mode fixed "
                           "--gpu-share 0)")
        return self.device

    def search(self, root: int) -> SearchResult:
        root = int(root)
        if not 0 <= root < self.n:
            raise BfsError(f"root {root} is not a vertex (0..{self.n - 1})")
        self.task_levels = {"cpu": 0, "gpu": 0}
        state = SearchState.fresh(self.n, root)
        if self.opts["mode"] == "workload":
            self._search_workload(root, state)
        else:
            self._search_fixed(root, state)
        return SearchResult(state.parent, state.level)

    def _cpu_tasks(self, frontier, cuts, tasks, state, depth) -> list[np.ndarray]:
        found = []
        for t in tasks:
            part = frontier[cuts[t]:cuts[t + 1]]
            found.append(cpu_level(self.tg, t, part, state, depth))
            self.task_levels["cpu"] += 1
        return found

    def _search_workload(self, root: int, state: SearchState) -> None:
        tg, lam = self.tg, self.opts["lambda"]
        pending: list[tuple[int, np.ndarray]] = []   # host discoveries not yet on the device
        if self.device is not None:
            self.device.reset_workload(root)
        frontier, depth = np.array([root], np.int64), 0
        while len(frontier):
            cuts = tg.task_slices(frontier)
            sizes = np.diff(cuts)
            active = np.flatnonzero(sizes > 0)
            on_gpu = active[sizes[active] > lam]
            on_cpu = active[sizes[active] <= lam]
            if len(on_gpu):
                dev = self._need_device()
                for d, found in pending:
                    dev.scatter_found(found, state.parent[found], d)
                pending.clear()
                gpu_front = np.concatenate([frontier[cuts[t]:cuts[t + 1]] for t in on_gpu])
                dev.launch_expand_cas(gpu_front, depth + 1)     # asynchronous
                self.task_levels["gpu"] += len(on_gpu)
            cpu_found = self._cpu_tasks(frontier, cuts, on_cpu, state, depth)
            cpu_found = np.concatenate(cpu_found) if cpu_found else np.empty(0, np.int64)
            if len(on_gpu):
                g_found, g_parent = dev.collect_expand_cas()   # waits for the kernel
                keep = state.level[g_found] == -1              # the CPU's claim wins
                g_found, g_parent = g_found[keep], g_parent[keep]
                state.level[g_found] = depth + 1
                state.parent[g_found] = g_parent
                # the GPU's claims the CPU beat: the mirror's level is right (depth + 1),
                # its parent is fixed when the host's discoveries are scattered
            else:
                g_found = np.empty(0, np.int64)
            if len(cpu_found) and self.device is not None:
                pending.append((depth + 1, cpu_found))
            frontier = np.sort(np.concatenate([cpu_found, g_found]))
            depth += 1
        self.levels_run = depth

    def _search_fixed(self, root: int, state: SearchState) -> None:
        tg = self.tg
        k = self.gpu_tasks
        gpu_end = int(tg.bounds[k])            # the GPU's tasks own [0, gpu_end)
        cpu_tasks_all = np.arange(k, tg.n_tasks)
        dev = self._need_device() if k > 0 else None
        if dev is not None:
            dev.reset_fixed(root, gpu_end)
        frontier, depth = np.array([root], np.int64), 0
        while len(frontier):
            cuts = tg.task_slices(frontier)
            sizes = np.diff(cuts)
            n_gpu_front = int(cuts[k])
            if dev is not None and n_gpu_front:
                dev.launch_expand_bits(n_gpu_front)            # its own frontier list
                self.task_levels["gpu"] += int(np.count_nonzero(sizes[:k]))
            on_cpu = cpu_tasks_all[sizes[k:] > 0]
            cpu_found = self._cpu_tasks(frontier, cuts, on_cpu, state, depth)
            cpu_found = np.concatenate(cpu_found) if cpu_found else np.empty(0, np.int64)
            if dev is not None:
                # exchange: NVF_G to the host, NVF_C to the device; both OR them into visited
                g_found = dev.exchange_bits(cpu_found, self.n)
                g_found = g_found[state.level[g_found] == -1]   # parents stay on the device
                state.level[g_found] = depth + 1
                frontier = np.sort(np.concatenate([cpu_found, g_found]))
                dev.advance_bits(int(np.searchsorted(frontier, gpu_end)))
            else:
                frontier = np.sort(cpu_found)
            depth += 1
        self.levels_run = depth
        if dev is not None:
            missing = (state.level >= 0) & (state.parent == -1)
            state.parent[missing] = dev.parents()[missing]


class DeviceSide:
    """The GPU's half: the device CSR, the mirror / bitmaps and the kernels of hybrid.cu."""

    def __init__(self, offsets, columns):
        from .. import device
        from ..device import BLOCK, load_module, require_gpu
        cp = self.cp = require_gpu()
        n = int(offsets.size) - 1
        if n > 2**32:
            raise BfsError(f"--algorithm hybrid takes at most 2^32 vertices, got {n}")
        device.check_fits(4 * n + 8 * n + 4 * n + 4 * n + 2 * ((n + 31) // 32 * 4),
                          f"hybrid device state ({n} vertices)")
        self.n, self.block, self.grid_for = n, BLOCK, device.grid_for
        self.offsets, self.columns = offsets, columns
        self.level = cp.empty(n, cp.int32)
        self.parent = cp.empty(n, cp.int64)
        self.frontier = cp.empty(n, cp.uint32)
        self.out = cp.empty(n, cp.uint32)
        self.count = cp.zeros(1, cp.uint64)
        self.n_words = (n + 31) // 32
        self.visited = cp.zeros(self.n_words, cp.uint32)
        self.gpu_end = 0
        self.next = cp.zeros(self.n_words, cp.uint32)
        self.k = {name: load_module(Path(__file__).with_name("hybrid.cu")).get_function(name)
                  for name in ("reset_search", "expand_cas", "scatter_found", "expand_bits",
                               "advance_bits")}

    def _grid(self, items: int) -> tuple:
        return (self.grid_for(max(items, 1), self.block),)

    # workload mode
    def reset_workload(self, root: int) -> None:
        self.k["reset_search"](self._grid(self.n), (self.block,),
                               (np.int64(self.n), np.uint32(root), self.level, self.parent))

    def scatter_found(self, found: np.ndarray, parents: np.ndarray, depth: int) -> None:
        cp = self.cp
        v = cp.asarray(found.astype(np.uint32))
        p = cp.asarray(parents.astype(np.int64))
        self.k["scatter_found"](self._grid(len(v)), (self.block,),
                                (v, p, np.int64(len(v)), np.int32(depth), self.level,
                                 self.parent))

    def launch_expand_cas(self, frontier: np.ndarray, next_depth: int) -> None:
        k = len(frontier)
        self.frontier[:k].set(frontier.astype(np.uint32))
        self.count.fill(0)
        self.k["expand_cas"](self._grid(32 * k), (self.block,),
                             (self.frontier, np.int64(k), self.offsets, self.columns, self.level,
                              self.parent, np.int32(next_depth), self.out, self.count))

    def collect_expand_cas(self) -> tuple[np.ndarray, np.ndarray]:
        got = int(self.count.get()[0])
        found = self.out[:got]
        return found.get().astype(np.int64), self.parent[found].get()

    # fixed mode
    def reset_fixed(self, root: int, gpu_end: int) -> None:
        self.gpu_end = gpu_end
        self.parent.fill(-1)
        self.parent[root] = root
        self.visited.fill(0)
        self.visited[root >> 5] = np.uint32(1 << (root & 31))
        self.next.fill(0)
        if root < gpu_end:
            self.frontier[:1].set(np.array([root], np.uint32))

    def launch_expand_bits(self, k: int) -> None:
        self.k["expand_bits"](self._grid(32 * k), (self.block,),
                              (self.frontier, np.int64(k), self.offsets, self.columns,
                               self.visited, self.next, self.parent))

    def exchange_bits(self, cpu_found: np.ndarray, n: int) -> np.ndarray:
        """NVF_G to the host (its set vertices, sorted), NVF_C (cpu_found) ORed into next."""
        nvf_g = self.next.get()   # waits for expand_bits
        g_found = np.flatnonzero(np.unpackbits(nvf_g.view(np.uint8), count=n,
                                               bitorder="little")).astype(np.int64)
        if len(cpu_found):
            bits = np.zeros(self.n_words * 32, np.bool_)
            bits[cpu_found] = True
            nvf_c = np.packbits(bits, bitorder="little").view(np.uint32)
            self.next |= self.cp.asarray(nvf_c)
        return g_found

    def advance_bits(self, expect: int) -> None:
        """visited |= next; the GPU's tasks' part of next becomes its frontier list; next
        cleared for the next level."""
        self.count.fill(0)
        self.k["advance_bits"](self._grid(self.n_words), (self.block,),
                               (np.int64(self.n_words), np.int64(self.gpu_end), self.next,
                                self.visited, self.frontier, self.count))
        got = int(self.count.get()[0])
        if got != expect:   # the device and host disagree on the frontier: never go on
            raise BfsError(f"hybrid: the GPU's next frontier has {got} vertices, the host "
                           f"counts {expect}")
        self.next.fill(0)

    def parents(self) -> np.ndarray:
        return self.parent.get()


class HybridSearcher(HostHybrid):
    """The registry's searcher: HostHybrid with a DeviceSide, and the single-GPU searchers'
    outputs (bfs bench): the last search's tree (on the host, where the driver keeps it),
    on the device for the GPU validator, and its Graph500 nedge."""
    device_resident = True   # device_result(): a device copy of the host outputs

    def search(self, root: int) -> SearchResult:
        self.last = super().search(root)
        return self.last

    def gather(self, n_vertices: int | None = None) -> SearchResult:
        return self.last

    def device_result(self) -> SearchResult:
        cp = self.device.cp
        return SearchResult(cp.asarray(self.last.parent), cp.asarray(self.last.level))

    def nedge(self) -> int:
        """Input edges (self-loops excluded, duplicates counted) with both ends reached."""
        return int(np.diff(self.tg.offsets)[self.last.level >= 0].sum()) // 2


def from_csr(offsets_dev, columns_dev, **options) -> HybridSearcher:
    """A searcher over a device CSR (offsets int64, columns uint32), copied to the host for
    the CPU tasks."""
    opts = parse_options(options)
    dev = DeviceSide(offsets_dev, columns_dev)
    tg = TaskGraph.split(offsets_dev.get(), columns_dev.get(), opts["tasks"])
    return HybridSearcher(tg, opts, dev)


def build(graph: EdgeList, ctx: RunContext) -> HybridSearcher:
    from ..build.csr_gpu import csr_from_edges
    offsets, columns = csr_from_edges(graph.src, graph.dst, graph.n_vertices)
    return from_csr(offsets, columns, **{k: ctx.options[k] for k in DEFAULTS
                                         if ctx.options.get(k) is not None})


def build_host(graph: EdgeList, options: dict | None = None) -> HostHybrid:
    """The host-only driver over the CPU Kernel 1 (no CuPy): the tests' entry point."""
    from ..build.csr_cpu import build_csr
    opts = parse_options(options or {})
    csr = build_csr(graph.src, graph.dst, graph.n_vertices)
    return HostHybrid(TaskGraph.split(csr.offsets, csr.columns, opts["tasks"]), opts)


def warm_up(ctx: RunContext) -> None:
    """Compile hybrid.cu and the Numba kernels (a 3-vertex path, every GPU and CPU path) before
    Kernel 1 is timed."""
    from ..device import require_gpu
    from ..build.csr_gpu import build_csr_gpu
    cp = require_gpu()
    offsets, columns = build_csr_gpu(cp.asarray([0, 1], cp.uint32),
                                     cp.asarray([1, 2], cp.uint32), 3)
    for opts in ({"mode": "workload", "lambda": 0}, {"mode": "workload", "lambda": math.inf},
                 {"mode": "fixed", "gpu_share": 0.5}):
        from_csr(offsets, columns, tasks=2, **opts).search(0)
