"""2d on the GPU: Fu et al.'s 2D bitmap BFS with its local kernels in CUDA (CuPy RawModule).

Imported only for `--backend gpu`. The layout, the exchange (scan / wave down the grid column,
column broadcast, row allgather) and the gathering of results are bfs.algorithms.fu_2d's; this
module replaces the local work:

  CSR / CSC   built on the GPU from the block (padded local ids computed on the device, keys
              row<<32|col radix-sorted per bucket of rows, as bfs.gpu's Kernel 1); bench's
              1x1 searcher (from_csr) takes the symmetric device CSR as both.
  Bitmaps     cupy uint64 arrays, piece by piece as in fu_2d (PaddedRange).
  Expand      In_i -> Out_ij minus visited, load-balanced like merrill: the frontier bitmap is
              compacted into a vertex queue with degrees (one warp-aggregated atomic per warp;
              it also sets level_row for the frontier), a CUB scan of the degrees gives the edge
              frontier, a tile partition finds each 1024-edge tile's first vertex, and one CTA
              per tile stages its vertices in shared memory and reads its columns coalesced; a
              neighbour not visited and not yet in Out gets atomicOr'd into Out's word, and the
              winners (bits this CTA flipped) are counted: popcount(Out_ij) comes for free.
  Contract    assigned |= out & ~prefix and union = out | prefix in one elementwise kernel.
  Levels      one kernel: visited |= union and level_col = t + 1 for union's bits.
  Pred        after the traversal (Fig. 7): one thread per column vertex claimed by this rank
              scans the first 32 entries of its CSC for an in-neighbour one level up (level-1
              vertices take the root directly); the few left over (hubs) get a block each.
              With one rank the expand records the parent instead (the edge whose atomicOr
              flips a bit owns that vertex), which removed this pass's ~6 ms at scale 25.

MPI: only the bitmaps move, staged through host numpy (out for the scan, union for the column
broadcast, the own piece for the row allgather); counts through one Allreduce a level as on
the CPU. With one rank (1x1 grid, or from_csr with no communicator at all) the level loop has
no MPI and one host round trip a level (the frontier size, read after the compaction), and the
next frontier is Out itself (swapped, not copied).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import gpu
from ..graphdir import BfsError
from ..mpi import Timer
from . import RunContext, SearchResult, tiles
from .fu_2d import WORD, Fu2D, PaddedRange

BLOCK, TILE = tiles.BLOCK, tiles.TILE

SOURCE = tiles.CUDA + r"""
// New search: levels -1 (the root's 0), bitmaps cleared, the root's bits set (r_root / c_root
// are padded local indices, -1 where the root is not in this rank's row / column range).
extern "C" __global__ void reset(i64 n_row_bits, i64 n_col_bits, int* level_row, int* level_col,
                                 u64* in_words, u64* visited, u64* assigned, i64 r_root,
                                 i64 c_root, i64* pred)
{
    const i64 n = n_row_bits > n_col_bits ? n_row_bits : n_col_bits;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        if (i < n_row_bits) {
            level_row[i] = i == r_root ? 0 : -1;
            if ((i & 63) == 0)
                in_words[i >> 6] = (r_root >= 0 && (r_root >> 6) == (i >> 6))
                                   ? (1ULL << (r_root & 63)) : 0ULL;
        }
        if (i < n_col_bits) {
            level_col[i] = i == c_root ? 0 : -1;
            if (pred) pred[i] = -1;
            if ((i & 63) == 0) {
                visited[i >> 6] = (c_root >= 0 && (c_root >> 6) == (i >> 6))
                                  ? (1ULL << (c_root & 63)) : 0ULL;
                assigned[i >> 6] = 0ULL;
            }
        }
    }
}

// Frontier bitmap -> queue of local row ids with their local degrees, in any order;
// ctl[0] += vertices, ctl[1] += edges; level[v] = lvl for every frontier vertex.
// One thread per word, positions by a warp scan of the popcounts and one atomic per warp.
extern "C" __global__ void compact(const u64* __restrict__ words, i64 nw,
                                   const i64* __restrict__ offsets, u32* __restrict__ q,
                                   i64* __restrict__ deg, u64* ctl, int* level, int lvl)
{
    const u32 lane = threadIdx.x & 31;
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < nw; base += (i64)gridDim.x * blockDim.x) {
        const i64 w = base + threadIdx.x;
        u64 bits = w < nw ? words[w] : 0ULL;
        const u32 c = __popcll(bits);
        u32 x = c;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(FULL, x, o);
            if (lane >= (u32)o) x += y;
        }
        const u32 total = __shfl_sync(FULL, x, 31);
        if (total == 0) continue;                               // warp-uniform
        u64 b = 0;
        if (lane == 31) b = atomicAdd(ctl, (u64)total);
        b = __shfl_sync(FULL, b, 31);
        u64 pos = b + x - c;
        i64 dsum = 0;
        while (bits) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            const u64 v = (u64)w * 64 + k;
            const i64 d = offsets[v + 1] - offsets[v];
            q[pos] = (u32)v;
            deg[pos] = d;
            ++pos;
            dsum += d;
            level[v] = lvl;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) dsum += __shfl_down_sync(FULL, dsum, o);
        if (lane == 0 && dsum) atomicAdd(ctl + 1, (u64)dsum);
    }
}

// Expand: one CTA per TILE edges of the edge frontier (merrill's staging); a neighbour c not
// visited and not yet in out is atomicOr'd into out; ctl[2] += bits this launch flipped.
// pred (one rank only, else null): the edge that flips c's bit records its row vertex as c's
// parent, so no predecessor pass runs (with one rank the discoverer owns c).
extern "C" __global__ void __launch_bounds__(BLOCK)
expand_tiles(const i64* __restrict__ offsets, const u32* __restrict__ columns,
             const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
             const i64* __restrict__ tile_first, const u64* __restrict__ visited,
             u64* out, u64* ctl, i64* pred, const i64* __restrict__ row_global)
{
    __shared__ Tile tile;
    __shared__ u32 s_count;
    const u32 lane = threadIdx.x & 31;
    if (threadIdx.x == 0) s_count = 0;
    stage_tile(tile, offsets, qin, scan, q, tile_first);
    u32 v[ITEMS], c[ITEMS];
    bool keep[ITEMS];
    gather_tile(tile, offsets, columns, qin, scan, q, v, c, keep);
    u32 won = 0;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        if (!keep[it]) continue;
        const u64 bit = 1ULL << (c[it] & 63);
        const u64 w = c[it] >> 6;
        if ((__ldg(visited + w) & bit) || (__ldcg(out + w) & bit)) continue;
        if (!(atomicOr(out + w, bit) & bit)) {
            ++won;
            if (pred) pred[c[it]] = row_global[v[it]];
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) won += __shfl_down_sync(FULL, won, o);
    if (lane == 0 && won) atomicAdd(&s_count, won);
    __syncthreads();
    if (threadIdx.x == 0 && s_count) atomicAdd(ctl + 2, (u64)s_count);
}

// Levels (Fig. 6): visited |= uni, level_col = lvl for uni's bits; with out given (one rank,
// where the prefix is empty) also assigned |= out.
extern "C" __global__ void finish(const u64* __restrict__ uni, i64 nw, u64* visited,
                                  int* level_col, int lvl, u64* assigned,
                                  const u64* __restrict__ out)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 u = uni[w];
        if (!u) continue;
        visited[w] |= u;
        if (out) assigned[w] |= out[w];
        while (u) {
            const int k = __ffsll((long long)u) - 1;
            u &= u - 1;
            level_col[w * 64 + k] = lvl;
        }
    }
}

// Predecessors (Fig. 7): for each column vertex this rank assigned, an in-neighbour in its
// CSC one level up; pred = -1 elsewhere. A thread per vertex: level 1 -> the root (the only
// level-0 vertex, and In held nothing else when this rank found it); otherwise the first
// PRED_K in-neighbours are scanned, and a vertex not resolved there (a hub whose parents sit
// far into its list) goes to `hard` for predecessors_hard, so no thread walks a long list.
#define PRED_K 32
extern "C" __global__ void predecessors(const u64* __restrict__ assigned, i64 n_bits,
                                        const i64* __restrict__ csc_off,
                                        const u32* __restrict__ csc_rows,
                                        const int* __restrict__ level_row,
                                        const int* __restrict__ level_col,
                                        const i64* __restrict__ row_global, i64* pred,
                                        i64 root, u32* hard, u64* ctl)
{
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n_bits;
         v += (i64)gridDim.x * blockDim.x) {
        i64 p = -1;
        if ((assigned[v >> 6] >> (v & 63)) & 1ULL) {
            const int want = level_col[v] - 1;
            if (want == 0) {
                p = root;
            } else {
                const i64 start = csc_off[v], end = csc_off[v + 1];
                const i64 stop = end < start + PRED_K ? end : start + PRED_K;
                for (i64 e = start; e < stop; ++e) {
                    const u32 u = csc_rows[e];
                    if (level_row[u] == want) { p = row_global[u]; break; }
                }
                if (p < 0 && stop < end) hard[atomicAdd(ctl + 3, 1ULL)] = (u32)v;
            }
        }
        pred[v] = p;
    }
}

// The unresolved vertices (hubs whose parents sit deep in a long in-list), a block each:
// blockDim in-neighbours a step, so a long list takes 8x fewer dependent steps than a warp
// would; the block stops at the first step with a match. Several matching threads may write
// pred[v]: every one of them is a valid parent, so any write may win.
extern "C" __global__ void predecessors_hard(const u32* __restrict__ hard, const u64* ctl,
                                             const i64* __restrict__ csc_off,
                                             const u32* __restrict__ csc_rows,
                                             const int* __restrict__ level_row,
                                             const int* __restrict__ level_col,
                                             const i64* __restrict__ row_global, i64* pred)
{
    const i64 count = (i64)ctl[3];
    for (i64 h = blockIdx.x; h < count; h += gridDim.x) {
        const u32 v = hard[h];
        const int want = level_col[v] - 1;
        const i64 end = csc_off[(u64)v + 1];
        for (i64 e = csc_off[v] + PRED_K; e < end; e += blockDim.x) {
            const i64 x = e + threadIdx.x;
            bool hit = false;
            if (x < end) {
                const u32 u = csc_rows[x];
                if (level_row[u] == want) {
                    hit = true;
                    pred[v] = row_global[u];
                }
            }
            if (__syncthreads_or(hit)) break;
        }
    }
}

// Degree sum of the column vertices with level >= 0 (nedge, 1x1 only: the CSR is symmetric).
extern "C" __global__ void reached_degrees(const int* __restrict__ level, i64 n,
                                           const i64* __restrict__ offsets, u64* sum)
{
    u64 s = 0;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (i64)gridDim.x * blockDim.x)
        if (level[v] >= 0) s += (u64)(offsets[v + 1] - offsets[v]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(FULL, s, o);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, s);
}
"""


@functools.lru_cache(maxsize=None)
def _module():
    cp = gpu.require_gpu()
    return cp.RawModule(code=SOURCE, options=("-std=c++17",))


@functools.lru_cache(maxsize=None)
def _elementwise():
    cp = gpu.require_gpu()
    contract = cp.ElementwiseKernel(
        "uint64 out, uint64 prefix", "uint64 assigned, uint64 uni",
        "assigned |= out & ~prefix; uni = out | prefix", "fu2d_contract")
    popcount = cp.ReductionKernel("uint64 x", "int64 y", "__popcll(x)", "a + b", "y = a", "0",
                                  "fu2d_popcount")
    return contract, popcount


@functools.lru_cache(maxsize=None)
def _pack_keys():
    cp = gpu.require_gpu()
    return cp.ElementwiseKernel("int64 k, int64 v", "uint64 key",
                                "key = ((unsigned long long)k << 32) | (unsigned long long)v",
                                "bfs_pack_keys")


def device_csr(keys, values, n_keys: int, limit: int = gpu.SORT_LIMIT):
    """Directed CSR (keys -> values) on the device: int64 offsets[n_keys + 1], uint32 values,
    each row sorted; keys and values are device int64 arrays (local ids < 2^32). Rows are cut
    into buckets of at most `limit` entries, each radix-sorted as row<<32|value keys."""
    cp = gpu.require_gpu()
    deg = cp.bincount(keys, minlength=n_keys) if keys.size else cp.zeros(n_keys, cp.int64)
    offsets = cp.zeros(n_keys + 1, cp.int64)
    cp.cumsum(deg, out=offsets[1:])
    del deg
    out = cp.empty(int(keys.size), cp.uint32)

    def fill_bucket(r0, r1, buf):
        sel = (keys >= r0) & (keys < r1) if (r0, r1) != (0, n_keys) else None
        k = keys if sel is None else keys[sel]
        v = values if sel is None else values[sel]
        _pack_keys()(k, v, buf[:k.size])
        return int(k.size)

    gpu.sort_rows(offsets.get(), out, fill_bucket, limit, "2d block CSR")
    return offsets, out


class Fu2DGpu(Fu2D):
    """Fu2D with device-resident bitmaps, CSR/CSC and CUDA kernels (see the module docstring).

    comm None (from_csr): a 1x1 grid with no MPI at all.
    """

    def __init__(self, block, ctx: RunContext):
        cp = gpu.require_gpu()
        self._layout(block, ctx)
        n_row_bits, n_col_bits = self.rows.n_words * WORD, self.cols.n_words * WORD
        if max(n_row_bits, n_col_bits) >= 2**32:
            raise BfsError("2d --backend gpu takes at most 2^32 vertices per row / column range")
        bounds = cp.asarray(self.bounds)
        C = self.C

        def local(v, rng: PaddedRange, first_piece, stride):
            piece = (cp.searchsorted(bounds, v, side="right") - 1 - first_piece) // stride
            return (cp.asarray(rng.word_offset)[piece] * WORD
                    + v - cp.asarray(rng.lo)[piece])

        src = cp.asarray(np.asarray(block.src, np.int64))
        dst = cp.asarray(np.asarray(block.dst, np.int64))
        row_local = local(src, self.rows, self.i * C, 1)
        col_local = local(dst, self.cols, self.j, C)
        del src, dst
        self.csr_offsets, self.csr_cols = device_csr(row_local, col_local, n_row_bits)
        self.csc_offsets, self.csc_rows = device_csr(col_local, row_local, n_col_bits)
        del row_local, col_local
        self._allocate()

    @classmethod
    def from_csr(cls, offsets, columns, exchange: str = "scan") -> "Fu2DGpu":
        cp = gpu.require_gpu()
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
        self.csr_offsets, self.csr_cols = offsets, columns
        self.csc_offsets, self.csc_rows = offsets, columns   # symmetric: CSC = CSR
        self.n = n
        self._allocate()
        return self

    def _allocate(self) -> None:
        cp = gpu.require_gpu()
        self.cp = cp
        rows, cols = self.rows, self.cols
        n_row_bits, n_col_bits = rows.n_words * WORD, cols.n_words * WORD
        self.nnz = int(self.csr_cols.size)
        need = (4 * n_row_bits + 4 * n_col_bits + 8 * n_col_bits + 8 * n_row_bits  # levels, pred,
                + 4 * n_col_bits + 20 * n_row_bits  # hard queue; queue, degrees, scan
                + 8 * (self.nnz // TILE + 2) + 5 * 8 * max(rows.n_words, cols.n_words))
        gpu.check_fits(need, f"2d search state ({n_row_bits} x {n_col_bits} local vertices)")
        self.level_row = cp.empty(n_row_bits, cp.int32)
        self.level_col = cp.empty(n_col_bits, cp.int32)
        self.pred = cp.empty(n_col_bits, cp.int64)
        self.row_global = cp.asarray(rows.global_id)
        self.in_words = cp.empty(rows.n_words, cp.uint64)
        self.out = cp.empty(cols.n_words, cp.uint64)
        self.visited = cp.empty(cols.n_words, cp.uint64)
        self.assigned = cp.empty(cols.n_words, cp.uint64)
        self.queue = cp.empty(max(n_row_bits, 1), cp.uint32)
        self.qdeg = cp.empty(max(n_row_bits, 1), cp.int64)
        self.scan = cp.empty(max(n_row_bits, 1), cp.int64)
        self.tile_first = cp.empty(self.nnz // TILE + 2, cp.int64)
        self.hard = cp.empty(max(n_col_bits, 1), cp.uint32)
        self.ctl = cp.zeros(4, cp.uint64)
        self.profile_levels: list | None = None   # bench --profile-levels sets a list
        import cupyx
        self.host_ctl = cupyx.empty_pinned((4,), dtype=np.uint64)
        mod = _module()
        self.k = {name: mod.get_function(name) for name in
                  ("reset", "compact", "partition_tiles", "expand_tiles", "finish",
                   "predecessors", "predecessors_hard", "reached_degrees")}
        self.contract, self.popcount = _elementwise()
        self.launches = {"expand": 0, "levels": 0}
        # the single rank of a 1x1 grid (from_csr, or a world of one) needs no MPI in the loop
        self.single = self.comm is None or (self.R == 1 and self.C == 1)
        cp.cuda.get_current_stream().synchronize()

    def _read_ctl(self):
        self.ctl.get(out=self.host_ctl)   # blocking: waits for the stream
        return self.host_ctl

    def _expand(self, level: int) -> tuple[int, int]:
        """Compact In (setting level_row), then expand it into the cleared Out; (q, edges)."""
        cp, k = self.cp, self.k
        rows = self.rows
        self.ctl.fill(0)
        k["compact"]((gpu.grid_for(rows.n_words),), (BLOCK,),
                     (self.in_words, np.int64(rows.n_words), self.csr_offsets, self.queue,
                      self.qdeg, self.ctl, self.level_row, np.int32(level)))
        self.out.fill(0)
        ctl = self._read_ctl()
        q, edges = int(ctl[0]), int(ctl[1])
        if edges:
            cp.cumsum(self.qdeg[:q], out=self.scan[:q])
            tiles = -(-edges // TILE)
            k["partition_tiles"]((gpu.grid_for(tiles + 1),), (BLOCK,),
                                 (self.scan, np.int64(q), np.int64(tiles), self.tile_first))
            k["expand_tiles"]((tiles,), (BLOCK,),
                              (self.csr_offsets, self.csr_cols, self.queue, self.scan,
                               np.int64(q), self.tile_first, self.visited, self.out, self.ctl,
                               self.pred if self.single else np.uint64(0), self.row_global))
            self.launches["expand"] += 1
        return q, edges

    def _finish(self, uni, level: int, out_for_assigned=None) -> None:
        nw = self.cols.n_words
        self.k["finish"]((gpu.grid_for(nw),), (BLOCK,),
                         (uni, np.int64(nw), self.visited, self.level_col, np.int32(level),
                          self.assigned, out_for_assigned if out_for_assigned is not None
                          else np.uint64(0)))

    def search(self, root: int) -> None:
        cp = self.cp
        rows, cols = self.rows, self.cols
        root = int(root)
        r_local, c_local = rows.find(root), cols.find(root)
        self.root = root
        n = max(rows.n_words, cols.n_words) * WORD
        self.k["reset"]((gpu.grid_for(n),), (BLOCK,),
                        (np.int64(rows.n_words * WORD), np.int64(cols.n_words * WORD),
                         self.level_row, self.level_col, self.in_words, self.visited,
                         self.assigned, np.int64(r_local), np.int64(c_local),
                         self.pred if self.single else np.uint64(0)))
        if self.single:   # parents recorded by the expand itself
            self._search_single()
            cp.cuda.get_current_stream().synchronize()
            return
        self._search_mpi(c_local)
        if self.profile_levels is not None:
            t0 = cp.cuda.Event()
            t0.record()
        self.k["predecessors"]((gpu.grid_for(cols.n_words * WORD),), (BLOCK,),
                               (self.assigned, np.int64(cols.n_words * WORD), self.csc_offsets,
                                self.csc_rows, self.level_row, self.level_col, self.row_global,
                                self.pred, np.int64(root), self.hard, self.ctl))
        self.k["predecessors_hard"]((gpu.sm_count() * 8,), (BLOCK,),
                                    (self.hard, self.ctl, self.csc_offsets, self.csc_rows,
                                     self.level_row, self.level_col, self.row_global, self.pred))
        if self.profile_levels is not None:
            t1 = cp.cuda.Event()
            t1.record()
            t1.synchronize()
            self.profile_levels.append({"depth": self.levels_run, "kind": "predecessors",
                                        "levels": 0, "frontier_vertices": int(self.ctl[3].get()),
                                        "frontier_edges": 0, "next_vertices": 0,
                                        "ms": cp.cuda.get_elapsed_time(t0, t1)})
        cp.cuda.get_current_stream().synchronize()

    def _search_single(self) -> None:
        """One rank: Out is the union and the next In; one host round trip a level."""
        timer = Timer()
        profile = []
        level = 0
        prof = self.profile_levels
        if prof is not None:
            prof.clear()
        while True:
            if prof is not None:
                t0 = self.cp.cuda.Event()
                t0.record()
            with timer("expand"):
                q, edges = self._expand(level)
            if q == 0:
                break
            with timer("expand"):
                if edges:
                    self._finish(self.out, level + 1)
                self.in_words, self.out = self.out, self.in_words
            if prof is not None:
                t1 = self.cp.cuda.Event()
                t1.record()
                t1.synchronize()
                prof.append({"depth": level, "kind": "top-down", "levels": 1,
                             "frontier_vertices": q, "frontier_edges": edges,
                             "next_vertices": -1,
                             "ms": self.cp.cuda.get_elapsed_time(t0, t1)})
            profile.append((level, q, timer.pop("expand"), 0.0, 0))
            level += 1
        self.levels_run = level
        self.profile = np.array(profile, np.float64).reshape(-1, 5)

    def _search_mpi(self, c_local: int) -> None:
        """Any grid: Fu2D's level loop, the bitmaps staged through host numpy for MPI."""
        self.in_host = np.empty(self.rows.n_words, np.uint64)
        self.uni = self.cp.empty(self.cols.n_words, self.cp.uint64)
        self._level_loop(c_local)

    # --- Fu2D._level_loop's hooks on the GPU ------------------------------------------------
    def _local_expand(self, level: int) -> int:
        self._expand(level)
        return int(self._read_ctl()[2])

    def _out_host(self) -> np.ndarray:
        return self.out.get()

    def _local_contract(self, out: np.ndarray, prefix: np.ndarray) -> np.ndarray:
        self.contract(self.out, self.cp.asarray(prefix), self.assigned, self.uni)
        return self.uni.get()

    def _local_finish(self, union: np.ndarray, level: int) -> int:
        self.uni.set(union)
        self.in_words.set(self.in_host)
        self._finish(self.uni, level)
        return int(self.popcount(self.uni[self.own]))

    def _results(self):
        return self.level_col.get(), self.pred.get()

    def gather(self, n_vertices: int | None = None) -> SearchResult | None:
        if self.comm is not None:
            return super().gather(n_vertices)
        if n_vertices is not None and int(n_vertices) != self.n:
            raise BfsError(f"gather({n_vertices}) on a graph of {self.n} vertices")
        res = self.device_result()
        return SearchResult(res.parent.get(), res.level.get())

    def device_result(self) -> SearchResult:
        """The last search's parent (int64) and level (int32) arrays as device arrays (from_csr:
        vertex ids are the CSR's), for bfs.validate_gpu."""
        if self.comm is not None:
            raise BfsError("device_result() needs the whole graph on this GPU (from_csr)")
        parent = self.pred[:self.n].copy()
        parent[self.root] = self.root
        return SearchResult(parent, self.level_col[:self.n])

    def nedge(self) -> int:
        """Graph500 nedge of the last search (from_csr: the CSR is the whole symmetric graph)."""
        if self.comm is not None:
            raise BfsError("nedge() needs the whole graph's CSR (from_csr)")
        total = self.cp.zeros(1, self.cp.uint64)
        self.k["reached_degrees"]((gpu.grid_for(self.n),), (BLOCK,),
                                  (self.level_col, np.int64(self.n), self.csr_offsets, total))
        return int(total.get()[0]) // 2
