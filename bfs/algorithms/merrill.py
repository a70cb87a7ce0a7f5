"""merrill: Merrill, Garland and Grimshaw's linear-work GPU BFS (CuPy + CUDA C++).

Paper: D. Merrill, M. Garland, A. Grimshaw, "Scalable GPU Graph Traversal", PPoPP 2012
(slides: "High Performance and Scalable GPU Graph Traversal").

Algorithm. Level-synchronous expand-contract over the undirected CSR held in device memory
(offsets int64, columns uint32, built by bfs.gpu.build_csr_gpu). Per level:

1. The vertex frontier queue comes with each vertex's degree (written when the vertex was
   claimed). An inclusive prefix sum of the degrees (cupy.cumsum, a CUB scan) gives every
   frontier vertex its slice of the edge frontier: no global atomics allocate the edge frontier.
2. Partition and gather (bfs/algorithms/tiles.py, shared with 2d on the GPU): the edge frontier
   is cut into tiles of TILE = 1024 edges; one small kernel finds every tile's first frontier
   vertex; one CTA per tile stages its vertices in shared memory and each edge finds its vertex
   by a 32-bit binary search there, so column reads are coalesced whatever the degrees
   (Merrill's CTA / warp / scan gather tiers, load-balanced, in one code path).
3. Contraction in the same CTA (expand_tiles below): a status lookup in a visited bitmask (1 bit per vertex, small
   enough to stay in L2) drops most visited neighbours; warp-local duplicate culling (Merrill's
   hash in shared memory) drops a neighbour another lane holds too; the survivor claims the
   vertex with atomicOr on its visited bit, so each vertex is claimed exactly once and only the
   winner touches parent and level (plain stores). Winners are compacted in shared memory and
   appended to the next queue with one global atomic per tile, which also sums their degrees
   for the next level's edge-frontier size.

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

Small frontiers. Road-like graphs have thousands of levels with tiny frontiers, where launch
overhead and host round trips dominate. Per multi-block level there is one cumsum, two kernels
and one 64-byte device-to-host copy of the counters (queue size and edge-frontier size) that the
host waits on (~95 us a level on the H100). While a frontier has at most 4096 vertices and 32768
edges, a persistent single-CTA kernel ("small_frontier") runs level after level inside one
launch (block-wide scan in shared memory, __syncthreads between levels, shared-memory counters;
~25 us a level on a 2000 x 2000 grid) and returns to the multi-block path only when the frontier
grows past those bounds or the search ends.

Profiling. Setting searcher.profile_levels to a list makes search() record every level step
(kind, frontier vertices and edges, CUDA-event milliseconds); `bfs bench --profile-levels`.

Outputs. search(root) returns after the device is synchronized, with a SearchResult holding
the device arrays (parent int64, level int32); gather(n) copies them to the host (outside the
harness's timed region). Vertex ids must be below 2^32; edge offsets are int64 everywhere.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import gpu
from ..graphdir import BfsError
from . import EdgeList, RunContext, SearchResult, tiles

BLOCK, TILE = tiles.BLOCK, tiles.TILE   # threads and edges per CTA in expand_tiles
SMALL_THREADS = 1024
SMALL_Q = 4096       # the single-CTA kernel scans 4 frontier vertices per thread
SMALL_E = 32768      # ... and walks at most this many edges per level (32 block-wide steps);
                     # a 2000 x 2000 grid's wavefront (<= ~4000 vertices) stays in one launch
MAX_SMALL_LEVELS = 1 << 30

SOURCE = tiles.CUDA + r"""
#define HASH_SLOTS 128
#define SMALL_THREADS 1024
#define SMALL_Q 4096
#define SMALL_PER_THREAD (SMALL_Q / SMALL_THREADS)

// Status lookup: the visited bit, read through L2 (another SM may have set it this level), or
// through L1 as well with L1 = true (order="degree": the hubs' bits share a few hot lines; with
// the graph's own ids L1 gained nothing, see BENCHMARKS.md). A stale 0 only costs a failed
// claim below: the atomic on the bit (or the CAS on parent) is the arbiter.
template <bool L1 = false>
__device__ __forceinline__ bool is_visited(const u32* visited, u32 w) {
    return ((L1 ? __ldca(visited + (w >> 5)) : __ldcg(visited + (w >> 5))) >> (w & 31)) & 1u;
}

// Merrill's warp culling: lanes holding the same vertex id keep exactly one of them.
// Every lane of the warp must call this (it synchronizes the warp).
__device__ __forceinline__ bool warp_cull(u32 w, bool keep, volatile u32* tbl, u32 lane) {
    const u32 h = w & (HASH_SLOTS - 1);
    if (keep) tbl[h] = w;
    __syncwarp();
    const bool candidate = keep && tbl[h] == w;
    __syncwarp();
    if (candidate) tbl[h] = lane;
    __syncwarp();
    if (candidate && tbl[h] != lane) keep = false;   // another lane with the same id won
    __syncwarp();
    return keep;
}

// Claim w for parent v by CAS on the 64-bit parent (the original arbiter, kept as a measured
// variant): every surviving edge does a random 8-byte atomic in the DRAM-resident parent array.
__device__ __forceinline__ bool claim_cas(u32 w, u32 v, i64* parent, int* level, u32* visited,
                                          int next_level) {
    u64 old = atomicCAS((u64*)(parent + w), ~0ULL, (u64)v);
    if (old != ~0ULL) return false;
    level[w] = next_level;
    atomicOr(visited + (w >> 5), 1u << (w & 31));
    return true;
}

// Claim w by atomicOr on its visited bit: the bitmask (n/8 bytes) stays in L2, so losers never
// touch parent; the one caller that flips the bit writes parent and level with plain stores.
// out_id (order="degree"): the search runs on degree-ordered ids and writes its output under the
// graph's own ids, out_id[x] being x's original id; null when the CSR has the graph's ids.
__device__ __forceinline__ bool claim(u32 w, u32 v, i64* parent, int* level, u32* visited,
                                     int next_level, const u32* __restrict__ out_id = nullptr) {
    const u32 bit = 1u << (w & 31);
    if (atomicOr(visited + (w >> 5), bit) & bit) return false;
    const u32 ow = out_id ? out_id[w] : w;
    parent[ow] = (i64)(out_id ? out_id[v] : v);
    level[ow] = next_level;
    return true;
}

// Warp-aggregated append of the winners to the next queue; counter[0] += winners,
// counter[1] += their degrees. Every lane of the warp must call this.
__device__ __forceinline__ void append(bool won, u32 w, const i64* offsets, u32* qout,
                                       i64* degout, u64* counter, u32 lane) {
    const u32 mask = __ballot_sync(FULL, won);
    if (mask == 0) return;                                  // warp-uniform
    const i64 deg = won ? offsets[(u64)w + 1] - offsets[w] : 0;
    i64 sum = deg;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(FULL, sum, o);
    u64 base = 0;
    if (lane == 0) {
        base = atomicAdd(counter, (u64)__popc(mask));
        atomicAdd(counter + 1, (u64)sum);
    }
    base = __shfl_sync(FULL, base, 0);
    if (won) {
        const u64 pos = base + __popc(mask & ((1u << lane) - 1u));
        qout[pos] = w;
        degout[pos] = deg;
    }
}

// Reset for a new search and seed the root, in one launch: parent = -1, level = -1,
// visited = 0 except the root's bit; queue qa = [root], dega = [deg(root)]; counters zeroed.
// root: the search's id of the root; root_out: its output id (the same unless order="degree").
extern "C" __global__ void reset_search(i64 n, i64 n_words, u32 root, u32 root_out, i64* parent,
                                        int* level, u32* visited, u32* qa, i64* dega,
                                        const i64* offsets, u64* ctl)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const bool is_root = i == (i64)root_out;
        parent[i] = is_root ? (i64)root_out : -1;
        level[i] = is_root ? 0 : -1;
        if (i < n_words) visited[i] = (i == (i64)(root >> 5)) ? (1u << (root & 31)) : 0u;
        if (i == 0) {
            qa[0] = root;
            dega[0] = offsets[(u64)root + 1] - offsets[root];
            for (int k = 0; k < 8; ++k) ctl[k] = 0;
        }
    }
}

// Version 0 of a multi-block level (kept as a measured variant, see NOTES in the module
// docstring): per 256 edges two threads binary-search the whole global scan for the block's
// vertex range, a chain of ~log2(q) dependent loads that the other 254 threads wait on.
extern "C" __global__ void __launch_bounds__(BLOCK)
expand_contract(const i64* __restrict__ offsets, const u32* __restrict__ columns,
                const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
                u32* __restrict__ qout, i64* __restrict__ degout,
                u64* counter, u64* other_counter,
                i64* parent, int* level, u32* visited, int next_level)
{
    __shared__ u32 hash[BLOCK / 32][HASH_SLOTS];
    __shared__ i64 s_lo, s_hi;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = lane; k < HASH_SLOTS; k += 32) hash[warp][k] = FULL;
    __syncwarp();
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    const i64 E = scan[q - 1];
    for (i64 base = (i64)blockIdx.x * BLOCK; base < E; base += (i64)gridDim.x * BLOCK) {
        const i64 j = base + threadIdx.x;
        const bool valid = j < E;
        if (threadIdx.x == 0) s_lo = upper_bound(scan, 0, q, base);
        if (threadIdx.x == BLOCK - 1) {
            const i64 last = (base + BLOCK < E ? base + BLOCK : E) - 1;
            s_hi = upper_bound(scan, 0, q, last) + 1;
        }
        __syncthreads();
        u32 w = 0, v = 0;
        bool keep = false;
        if (valid) {
            const i64 i = upper_bound(scan, s_lo, s_hi, j);
            const i64 first = i > 0 ? scan[i - 1] : 0;
            v = qin[i];
            w = columns[offsets[v] + (j - first)];
            keep = !is_visited(visited, w);
        }
        __syncthreads();                                   // s_lo, s_hi rewritten next round
        keep = warp_cull(w, keep, hash[warp], lane);
        const bool won = keep && claim_cas(w, v, parent, level, visited, next_level);
        append(won, w, offsets, qout, degout, counter, lane);
    }
}

// One multi-block level, one CTA per tile of TILE consecutive edge-frontier entries, staged and
// gathered by tiles.CUDA (stage_tile, gather_tile). Winners are compacted in shared memory and appended with one global atomic per tile (a
// per-warp atomic on one counter serialized ~n operations at the L2 slice that owns it).
// CAS_CLAIM selects the claim: true = CAS on parent (version 1), false = atomicOr on the bit.
template <bool CAS_CLAIM, bool L1_STATUS>
__global__ void __launch_bounds__(BLOCK)
expand_tiles(const i64* __restrict__ offsets, const u32* __restrict__ columns,
             const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
             const i64* __restrict__ tile_first,
             u32* __restrict__ qout, i64* __restrict__ degout,
             u64* counter, u64* other_counter,
             i64* parent, int* level, u32* visited, int next_level,
             const u32* __restrict__ out_id)
{
    __shared__ Tile tile;
    __shared__ u32 hash[BLOCK / 32][HASH_SLOTS];
    __shared__ u32 s_out[TILE];
    __shared__ u32 s_outdeg[TILE];
    __shared__ u32 s_count;
    __shared__ u64 s_degsum, s_gbase;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = lane; k < HASH_SLOTS; k += 32) hash[warp][k] = FULL;
    if (threadIdx.x == 0) { s_count = 0; s_degsum = 0; }
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    stage_tile(tile, offsets, qin, scan, q, tile_first);
    u32 w[ITEMS], v[ITEMS];
    bool keep[ITEMS];
    gather_tile(tile, offsets, columns, qin, scan, q, v, w, keep);
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        bool k = keep[it] && !is_visited<L1_STATUS>(visited, w[it]);
        k = warp_cull(w[it], k, hash[warp], lane);
        bool won = false;
        if (k) won = CAS_CLAIM ? claim_cas(w[it], v[it], parent, level, visited, next_level)
                               : claim(w[it], v[it], parent, level, visited, next_level, out_id);
        const u32 mask = __ballot_sync(FULL, won);
        if (mask) {
            const u32 deg = won ? (u32)(offsets[(u64)w[it] + 1] - offsets[w[it]]) : 0u;
            u64 sum = deg;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(FULL, sum, o);
            u32 b = 0;
            if (lane == 0) { b = atomicAdd(&s_count, (u32)__popc(mask)); atomicAdd(&s_degsum, sum); }
            b = __shfl_sync(FULL, b, 0);
            if (won) {
                const u32 pos = b + __popc(mask & ((1u << lane) - 1u));
                s_out[pos] = w[it];
                s_outdeg[pos] = deg;
            }
        }
    }
    __syncthreads();
    const u32 found = s_count;
    if (found == 0) return;                                  // block-uniform
    if (threadIdx.x == 0) {
        s_gbase = atomicAdd(counter, (u64)found);
        atomicAdd(counter + 1, s_degsum);
    }
    __syncthreads();
    const u64 gbase = s_gbase;
    for (u32 k = threadIdx.x; k < found; k += BLOCK) {
        qout[gbase + k] = s_out[k];
        degout[gbase + k] = s_outdeg[k];
    }
}

// order="degree" (Kernel 1's extra step), one bucket of new rows [r0, r1): new row r is old row
// perm[r] with its columns renamed by rank (old id -> new id), written as keys r<<32|column at
// new_offsets[r] - base, to be radix-sorted so each renamed row is sorted again (hubs first:
// a warp's status lookups then share words). A warp per row: a hub's row moves 32 entries a step.
extern "C" __global__ void renamed_keys(const i64* __restrict__ offsets,
                                        const u32* __restrict__ columns,
                                        const u32* __restrict__ perm, const u32* __restrict__ rank,
                                        const i64* __restrict__ new_offsets, i64 r0, i64 r1,
                                        i64 base, u64* __restrict__ keys)
{
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const u32 lane = threadIdx.x & 31;
    for (i64 r = r0 + (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5); r < r1; r += warps) {
        const u32 old = perm[r];
        const i64 from = offsets[old], len = offsets[(u64)old + 1] - from;
        u64* out = keys + (new_offsets[r] - base);
        for (i64 k = lane; k < len; k += 32)
            out[k] = ((u64)r << 32) | rank[columns[from + k]];
    }
}

// Inclusive block-wide scan of one value per thread (blockDim.x == SMALL_THREADS).
__device__ __forceinline__ i64 block_scan(i64 x, i64* s_warp) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const i64 y = __shfl_up_sync(FULL, x, o);
        if (lane >= (u32)o) x += y;
    }
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    if (warp == 0) {
        i64 t = lane < (SMALL_THREADS / 32) ? s_warp[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(FULL, t, o);
            if (lane >= (u32)o) t += y;
        }
        s_warp[lane] = t;
    }
    __syncthreads();
    if (warp > 0) x += s_warp[warp - 1];
    __syncthreads();                                       // s_warp reused by the next call
    return x;
}

// Persistent single-CTA levels while the frontier is small (q <= SMALL_Q, edges <= max_edges).
// Each level in one launch costs ~10 us of dependent loads instead of ~95 us for a multi-block
// level (cumsum, partition, expand, a blocking counter copy), which is what grids pay per level.
// Queue/degree buffers alternate each level; ctl[4..6] = (q, edges, levels run) at exit, and
// ctl[0..3] (the multi-block counters) are zeroed.
extern "C" __global__ void __launch_bounds__(SMALL_THREADS)
small_frontier(const i64* __restrict__ offsets, const u32* __restrict__ columns,
               u32* qa, u32* qb, i64* dega, i64* degb, i64 q, int level0, i64 max_edges,
               int max_levels, u64* ctl, i64* parent, int* level, u32* visited,
               const u32* __restrict__ out_id)
{
    __shared__ u32 scan_s[SMALL_Q];   // u32: at most max_edges (< 2^32) edges per level
    __shared__ i64 s_warp[32];
    __shared__ u32 hash[SMALL_THREADS / 32][HASH_SLOTS];
    __shared__ u64 s_counter[2];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = lane; k < HASH_SLOTS; k += 32) hash[warp][k] = FULL;
    __syncwarp();
    u32* qin = qa; u32* qout = qb; i64* din = dega; i64* dout = degb;
    int lv = level0, done = 0;
    i64 E = 0;
    for (;;) {
        // SMALL_PER_THREAD consecutive queue entries per thread: local scan, then block scan
        u32 local[SMALL_PER_THREAD];
        i64 x = 0;
#pragma unroll
        for (int k = 0; k < SMALL_PER_THREAD; ++k) {
            const i64 i = (i64)threadIdx.x * SMALL_PER_THREAD + k;
            x += i < q ? din[i] : 0;
            local[k] = (u32)x;
        }
        const u32 excl = (u32)(block_scan(x, s_warp) - x);
#pragma unroll
        for (int k = 0; k < SMALL_PER_THREAD; ++k)
            scan_s[threadIdx.x * SMALL_PER_THREAD + k] = excl + local[k];
        if (threadIdx.x == 0) { s_counter[0] = 0; s_counter[1] = 0; }
        __syncthreads();
        E = scan_s[q - 1];
        for (i64 base = 0; base < E; base += SMALL_THREADS) {
            const i64 j = base + threadIdx.x;
            u32 w = 0, v = 0;
            bool keep = false;
            if (j < E) {
                i64 a = 0, b = q;                      // first i with scan_s[i] > j
                while (a < b) { const i64 m = (a + b) >> 1; if ((i64)scan_s[m] > j) b = m; else a = m + 1; }
                const i64 i = a;
                const i64 first = i > 0 ? scan_s[i - 1] : 0;
                v = qin[i];
                w = columns[offsets[v] + (j - first)];
                keep = !is_visited(visited, w);
            }
            keep = warp_cull(w, keep, hash[warp], lane);
            const bool won = keep && claim(w, v, parent, level, visited, lv + 1, out_id);
            // shared-memory counters: same aggregation as append(), atomics on shared memory
            const u32 mask = __ballot_sync(FULL, won);
            if (mask != 0) {
                const i64 deg = won ? offsets[(u64)w + 1] - offsets[w] : 0;
                i64 sum = deg;
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(FULL, sum, o);
                u64 b = 0;
                if (lane == 0) {
                    b = atomicAdd(&s_counter[0], (u64)__popc(mask));
                    atomicAdd(&s_counter[1], (u64)sum);
                }
                b = __shfl_sync(FULL, b, 0);
                if (won) {
                    const u64 pos = b + __popc(mask & ((1u << lane) - 1u));
                    qout[pos] = w;
                    dout[pos] = deg;
                }
            }
            __syncthreads();   // claims of this step visible to the whole CTA before the next
        }
        __syncthreads();
        q = (i64)s_counter[0];
        E = (i64)s_counter[1];
        ++lv; ++done;
        u32* tq = qin; qin = qout; qout = tq;
        i64* td = din; din = dout; dout = td;
        __syncthreads();   // everyone has read s_counter and the queue before they change
        if (q == 0 || q > SMALL_Q || E > max_edges || done >= max_levels) break;
    }
    if (threadIdx.x == 0) {
        ctl[4] = (u64)q; ctl[5] = (u64)E; ctl[6] = (u64)done;
        ctl[0] = 0; ctl[1] = 0; ctl[2] = 0; ctl[3] = 0;
    }
}
"""

EXPAND_VARIANTS = {
    "tiles": "expand_tiles<false, false>",      # partitioned tiles, bitmask claim (the default)
    "tiles-l1": "expand_tiles<false, true>",    # ... status words through L1 (order="degree")
    "tiles-cas": "expand_tiles<true, false>",   # partitioned tiles, CAS on parent
    "v0": "expand_contract",             # per-block global binary search, CAS, per-warp atomics
}


@functools.lru_cache(maxsize=None)
def _module():
    cp = gpu.require_gpu()
    return cp.RawModule(code=SOURCE, options=("-std=c++17",),
                        name_expressions=[v for v in EXPAND_VARIANTS.values() if "<" in v])


def search_state_bytes(n: int, nnz: int = 0) -> int:
    return gpu.SEARCH_BYTES_PER_VERTEX * n + 8 * (nnz // TILE + 2) + 64


class MerrillSearcher:
    """Searches over a device CSR (offsets int64[n+1], columns uint32).

    expand: which multi-block level kernel runs (EXPAND_VARIANTS; "tiles" unless measuring).
    order: "graph" searches the CSR as given; "degree" first renames the vertices by falling
    degree (ties by id) so the hubs' visited bits share a few cache lines, searches in those
    ids with status words read through L1, and writes parent and level under the graph's own ids
    at each claim. That renaming is Kernel-1 work: kernel1_extra_s holds its time.
    profile_levels: when set to a list, each search() replaces its content with one dict per
    level step (kind, depth, frontier vertices and edges, GPU milliseconds by CUDA events).
    """

    def __init__(self, offsets, columns, expand: str = "tiles", order: str = "graph"):
        cp = gpu.require_gpu()
        self.cp = cp
        n = int(offsets.size) - 1
        if n < 1:
            raise BfsError("the graph has no vertices")
        if n > 2**32:
            raise BfsError(f"--algorithm merrill takes at most 2^32 vertices, got {n}")
        if offsets.dtype != cp.int64 or columns.dtype != cp.uint32:
            raise BfsError(f"device CSR must be int64 offsets and uint32 columns, got "
                           f"{offsets.dtype} and {columns.dtype}")
        if expand not in EXPAND_VARIANTS:
            raise BfsError(f"unknown merrill expand variant {expand!r}")
        if order not in ("graph", "degree"):
            raise BfsError(f"merrill order must be graph or degree, got {order!r}")
        if order == "degree" and expand != "tiles":
            raise BfsError(f"order=degree runs with expand=tiles only, not {expand!r}")
        self.nnz = int(columns.size)
        gpu.check_fits(search_state_bytes(n, self.nnz), f"merrill search state ({n} vertices)",
                       lambda free: gpu.largest_kronecker_scale(free, stage="search"))
        self.n = n
        self.expand = expand
        self.offsets_out = offsets   # the CSR under the output's ids (nedge's degrees)
        self.out_id, self.rank_h, self.kernel1_extra_s = np.uint64(0), None, 0.0   # null: as given
        if order == "degree":
            offsets, columns = self._degree_order(offsets, columns)
            expand = "tiles-l1"
        self.offsets, self.columns = offsets, columns
        self.n_words = (n + 31) // 32
        self.parent = cp.empty(n, dtype=cp.int64)
        self.level = cp.empty(n, dtype=cp.int32)
        self.visited = cp.empty(self.n_words, dtype=cp.uint32)
        self.queues = (cp.empty(n, dtype=cp.uint32), cp.empty(n, dtype=cp.uint32))
        self.degs = (cp.empty(n, dtype=cp.int64), cp.empty(n, dtype=cp.int64))
        self.scan = cp.empty(n, dtype=cp.int64)
        self.tile_first = cp.empty(self.nnz // TILE + 2, dtype=cp.int64)
        self.ctl = cp.zeros(8, dtype=cp.uint64)
        self.ctl_slots = (self.ctl[0:2], self.ctl[2:4])  # multi-block counters, by level parity
        import cupyx
        self.host_ctl = cupyx.empty_pinned((8,), dtype=np.uint64)
        self.degree = cp.diff(offsets).get()  # host copy: the root's degree without a sync
        mod = _module()
        self.k_reset = mod.get_function("reset_search")
        self.k_expand = mod.get_function(EXPAND_VARIANTS[expand])
        self.k_partition = mod.get_function("partition_tiles")
        self.k_small = mod.get_function("small_frontier")
        self.max_blocks = gpu.sm_count() * 16
        self.levels_run = 0
        self.launches = {"small": 0, "expand": 0}
        self.profile_levels: list | None = None
        cp.cuda.get_current_stream().synchronize()

    def _degree_order(self, offsets, columns):
        """order="degree": perm (new id -> graph id, falling degree, ties by id), the renamed
        CSR (row r = old row perm[r], columns renamed); times itself into kernel1_extra_s."""
        cp, n = self.cp, self.n
        gpu.check_fits(8 * n + 12 * n + 8 * (n + 1) + 4 * self.nnz
                       + 16 * min(self.nnz, gpu.SORT_LIMIT),
                       f"merrill order=degree: a renamed copy of the CSR ({self.nnz} columns)")
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        deg = cp.diff(offsets)
        keys = ((cp.uint64(0xFFFFFFFF) - deg.astype(cp.uint64)) << cp.uint64(32)) \
            | cp.arange(n, dtype=cp.uint64)
        keys.sort()
        perm = (keys & cp.uint64(0xFFFFFFFF)).astype(cp.uint32)
        del keys
        rank = cp.empty(n, cp.uint32)
        rank[perm] = cp.arange(n, dtype=cp.uint32)
        new_offsets = cp.zeros(n + 1, cp.int64)
        cp.cumsum(deg[perm], out=new_offsets[1:])
        del deg
        new_columns = cp.empty_like(columns)
        renamed_keys = _module().get_function("renamed_keys")

        def fill_bucket(r0, r1, keys):
            base = int(offsets_h[r0])
            renamed_keys((gpu.grid_for((r1 - r0) * 32, BLOCK),), (BLOCK,),
                         (offsets, columns, perm, rank, new_offsets, np.int64(r0),
                          np.int64(r1), np.int64(base), keys))
            return int(offsets_h[r1]) - base    # a row's entries, all renamed

        offsets_h = new_offsets.get()
        gpu.sort_rows(offsets_h, new_columns, fill_bucket, what="merrill order=degree")
        end.record()
        end.synchronize()
        self.kernel1_extra_s = cp.cuda.get_elapsed_time(start, end) / 1e3
        self.out_id, self.rank_h = perm, rank.get()
        return new_offsets, new_columns

    def _read_ctl(self):
        self.ctl.get(out=self.host_ctl)  # blocking: waits for the stream
        return self.host_ctl

    # -- one level step each; every step leaves (q, edges) of the next frontier ----------------
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
        cp = self.cp
        cur, slot = self.cur, self.slot
        cp.cumsum(self.degs[cur][:q], out=self.scan[:q])
        counter, other = self.ctl_slots[slot], self.ctl_slots[1 - slot]
        if self.expand == "v0":
            blocks = max(1, min(self.max_blocks, -(-edges // BLOCK)))
            self.k_expand((blocks,), (BLOCK,),
                          (self.offsets, self.columns, self.queues[cur], self.scan,
                           np.int64(q), self.queues[1 - cur], self.degs[1 - cur],
                           counter, other, self.parent, self.level, self.visited,
                           np.int32(depth + 1)))
        else:
            tiles = -(-edges // TILE)
            self.k_partition((gpu.grid_for(tiles + 1),), (BLOCK,),
                             (self.scan, np.int64(q), np.int64(tiles), self.tile_first))
            self.k_expand((tiles,), (BLOCK,),
                          (self.offsets, self.columns, self.queues[cur], self.scan,
                           np.int64(q), self.tile_first, self.queues[1 - cur],
                           self.degs[1 - cur], counter, other, self.parent, self.level,
                           self.visited, np.int32(depth + 1), self.out_id))
        self.launches["expand"] += 1
        ctl = self._read_ctl()
        self.slot ^= 1
        self.cur ^= 1
        return int(ctl[2 * slot]), int(ctl[2 * slot + 1]), 1

    def _step(self, q, edges, depth):
        """Run one level step; returns (kind, q, edges, levels done)."""
        if q <= SMALL_Q and edges <= SMALL_E:
            return ("small",) + self._small_levels(q, depth)
        return ("top-down",) + self._top_down_level(q, edges, depth)

    def _start(self, root: int) -> None:
        """Hook for subclasses: per-search state beyond the queues."""

    def search(self, root: int) -> SearchResult:
        cp = self.cp
        root = int(root)
        if not 0 <= root < self.n:
            raise BfsError(f"root {root} is not a vertex (0..{self.n - 1})")
        n = self.n
        start = root if self.rank_h is None else int(self.rank_h[root])   # the search's id
        self.k_reset((gpu.grid_for(n, BLOCK),), (BLOCK,),
                     (np.int64(n), np.int64(self.n_words), np.uint32(start), np.uint32(root),
                      self.parent, self.level, self.visited, self.queues[0], self.degs[0],
                      self.offsets, self.ctl))
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
        cp.cuda.get_current_stream().synchronize()
        self.levels_run = depth
        return SearchResult(self.parent, self.level)

    def gather(self, n_vertices: int | None = None) -> SearchResult:
        """The last search's parent and level arrays copied to the host."""
        if n_vertices is not None and int(n_vertices) != self.n:
            raise BfsError(f"gather({n_vertices}) on a graph of {self.n} vertices")
        return SearchResult(self.parent.get().astype(np.int64, copy=False),
                            self.level.get().astype(np.int32, copy=False))

    def device_result(self) -> SearchResult:
        """The last search's parent and level arrays, still on the device."""
        return SearchResult(self.parent, self.level)

    def nedge(self) -> int:
        """Graph500 nedge of the last search: input edges (self-loops excluded, duplicates
        counted) with both ends reached = half the summed degree of the reached vertices."""
        return int(self.cp.sum(self.cp.diff(self.offsets_out)[self.level >= 0])) // 2


def build(graph: EdgeList, ctx: RunContext) -> MerrillSearcher:
    """Kernel 1 on the GPU: host edges -> device -> sorted CSR; then the search buffers."""
    offsets, columns = gpu.csr_from_edges(graph.src, graph.dst, graph.n_vertices)
    return MerrillSearcher(offsets, columns, **ctx.options.get("merrill", {}))


def from_csr(offsets, columns, **options) -> MerrillSearcher:
    """A searcher over a CSR already in device memory (bfs bench)."""
    return MerrillSearcher(offsets, columns, **options)


def warm_up(ctx: RunContext) -> None:
    """Called by the harness before Kernel 1 is timed."""
    gpu.warm_up(from_csr)
