// merrill's kernels (Merrill, Garland and Grimshaw, "Scalable GPU Graph Traversal", PPoPP 2012;
// merrill.py says the algorithm and its tricks): the search's reset, the multi-block level
// (edge tiles gathered by tiles.cuh, warp culling, the claim of claim.cuh, one append a tile),
// Kernel 1's degree renaming, and the single-CTA small-frontier loop kept to measure the
// grid-wide level loop (level_loop.cu) against.
#include "tiles.cuh"
#include "claim.cuh"

#define HASH_SLOTS 128
#define SMALL_THREADS 1024
#define SMALL_Q 4096
#define SMALL_PER_THREAD (SMALL_Q / SMALL_THREADS)

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
// visited_init (merrill-do): the bitmask to start from (isolated vertices and the padding past
// n marked visited, so bottom-up levels skip them); null: all clear. clear_outputs = 0
// (merrill-do) leaves parent and level alone but for the root's: its levels write every entry
// (merrill_do.cu says how), and a full pass here would write 12 bytes a vertex once more.
extern "C" __global__ void reset_search(i64 n, i64 n_words, u32 root, u32 root_out, i64* parent,
                                        int* level, u32* visited, u32* qa, i64* dega,
                                        const i64* offsets, u64* ctl,
                                        const u32* __restrict__ visited_init,
                                        int clear_outputs)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    const i64 end = clear_outputs ? n : n_words;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < end; i += stride) {
        if (clear_outputs) {
            const bool is_root = i == (i64)root_out;
            parent[i] = is_root ? (i64)root_out : -1;
            level[i] = is_root ? 0 : -1;
        }
        if (i < n_words)
            visited[i] = (visited_init ? visited_init[i] : 0u)
                         | ((i == (i64)(root >> 5)) ? (1u << (root & 31)) : 0u);
        if (i == 0) {
            if (!clear_outputs) { parent[root_out] = (i64)root_out; level[root_out] = 0; }
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
// gathered by tiles.CUDA (stage_tile, gather_tile). Winners are compacted in shared memory and
// appended with one global atomic per tile (a per-warp atomic on one counter serialized ~n
// operations at the L2 slice that owns it).
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
// merrill-do rows=degree passes perm = null (row r is old row r: no n-entry identity array) and
// new_offsets = offsets: rows keep their ids and only their entries are ordered by rank.
extern "C" __global__ void renamed_keys(const i64* __restrict__ offsets,
                                        const u32* __restrict__ columns,
                                        const u32* __restrict__ perm, const u32* __restrict__ rank,
                                        const i64* __restrict__ new_offsets, i64 r0, i64 r1,
                                        i64 base, u64* __restrict__ keys)
{
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const u32 lane = threadIdx.x & 31;
    for (i64 r = r0 + (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5); r < r1; r += warps) {
        const u32 old = perm ? perm[r] : (u32)r;
        const i64 from = offsets[old], len = offsets[(u64)old + 1] - from;
        u64* out = keys + (new_offsets[r] - base);
        for (i64 k = lane; k < len; k += 32)
            out[k] = ((u64)r << 32) | rank[columns[from + k]];
    }
}

// Persistent single-CTA levels while the frontier is small (q <= SMALL_Q, edges <= max_edges):
// Merrill's small-frontier kernel, now loop="cta", kept to measure the grid's level_loop
// (level_loop.cu) against (a 2000 x 2000 lattice: 82.1 ms a search here, 15.9 there). Each
// level in one launch avoids the ~95 us of a multi-block level from the host, but its 1024
// threads walk the level's edges a step at a time, each step a chain of dependent loads (~28
// us a lattice level).
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
        i64 level_edges;
        const u32 excl = (u32)(block_scan<SMALL_THREADS>(x, s_warp, level_edges) - x);
#pragma unroll
        for (int k = 0; k < SMALL_PER_THREAD; ++k)
            scan_s[threadIdx.x * SMALL_PER_THREAD + k] = excl + local[k];
        if (threadIdx.x == 0) { s_counter[0] = 0; s_counter[1] = 0; }
        __syncthreads();
        E = level_edges;
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
            // the counters live in shared memory: append()'s atomics work on them through
            // the generic pointer
            append(won, w, offsets, qout, dout, s_counter, lane);
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
