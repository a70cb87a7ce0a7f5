typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define FULL 0xFFFFFFFFu
#define BLOCK 256
#define ITEMS 4
#define TILE (BLOCK * ITEMS)
#define TILE_CAP (TILE + 2)

// First index in [lo, hi) with scan[idx] > x (scan: inclusive, non-decreasing); hi if none.
__device__ __forceinline__ i64 upper_bound(const i64* scan, i64 lo, i64 hi, i64 x) {
    while (lo < hi) {
        i64 mid = lo + ((hi - lo) >> 1);
        if (scan[mid] > x) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// Padded local ids of a 2D grid's row range -> global ids. The range is `pieces` vertex pieces
// laid out one after another, each padded to whole 64-bit words (fu_2d.py's PaddedRange): piece
// k starts at local id 64 * word_offset[k] and holds global ids lo[k], lo[k] + 1, ... A search
// over the pieces' word offsets (the grid's C of them: a few L1-resident words) replaces a
// random 8-byte read of a per-row table for every parent a level records.
__device__ __forceinline__ int piece_of(i64 p, const i64* __restrict__ word_offset, int pieces) {
    int a = 0, b = pieces;                      // 64 * word_offset[a] <= p < 64 * word_offset[b]
    while (b - a > 1) {
        const int mid = (a + b) >> 1;
        if (__ldg(word_offset + mid) * 64 <= p) a = mid; else b = mid;
    }
    return a;
}

__device__ __forceinline__ i64 padded_to_global(i64 p, const i64* __restrict__ word_offset,
                                                const i64* __restrict__ lo, int pieces) {
    const int a = piece_of(p, word_offset, pieces);
    return __ldg(lo + a) + p - __ldg(word_offset + a) * 64;
}

// Appending a variable number of items per lane: each lane brings c items; the warp reserves
// its total with one atomicAdd on *counter (none when the total is 0) and each lane gets its
// first position (a warp inclusive scan of the counts). All 32 lanes must call it.
template <typename T>
__device__ __forceinline__ T warp_reserve(u32 c, T* counter, u32& total) {
    const u32 lane = threadIdx.x & 31;
    u32 x = c;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(FULL, x, o);
        if (lane >= (u32)o) x += y;
    }
    total = __shfl_sync(FULL, x, 31);
    if (total == 0) return 0;                                   // warp-uniform
    T base = 0;
    if (lane == 31) base = atomicAdd(counter, (T)total);
    base = __shfl_sync(FULL, base, 31);
    return base + x - c;
}

// Dealing a warp's set bits out to its lanes: a warp takes 32 bitmap words (one coalesced load,
// a word per lane) and hands their set bits out to the lanes, 32 at a time, whatever the density,
// so that consecutive lanes take consecutive bits of a word (their stores coalesce) and a sparse
// word costs no lane a loop of its own. Used by the bitmap passes of fu_2d.cu and by the
// bottom-up levels (bottom_up.cuh).
__device__ __forceinline__ u32 popcount(u32 x) { return __popc(x); }
__device__ __forceinline__ u32 popcount(u64 x) { return __popcll(x); }

// Position of the r-th (0-based) set bit of mask (r < popcount(mask)): binary search by counts.
__device__ __forceinline__ u32 nth_set_bit(u32 mask, u32 r) {
    u32 pos = 0;
#pragma unroll
    for (u32 s = 16; s > 0; s >>= 1) {
        const u32 low = __popc(mask & ((1u << (pos + s)) - 1u) & ~((1u << pos) - 1u));
        if (low <= r) { r -= low; pos += s; }
    }
    return pos;
}
__device__ __forceinline__ u32 nth_set_bit(u64 mask, u32 r) {
    const u32 c = __popc((u32)mask);
    return r < c ? nth_set_bit((u32)mask, r) : 32 + nth_set_bit((u32)(mask >> 32), r - c);
}

// The warp's open bits, counted: incl = this lane's inclusive prefix of popcount(open) over the
// lanes; returns the total. Every lane of the warp must call this.
template <typename W>
__device__ __forceinline__ u32 deal_count(W open, u32& incl) {
    const u32 lane = threadIdx.x & 31;
    incl = popcount(open);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(FULL, incl, o);
        if (lane >= (u32)o) incl += y;
    }
    return __shfl_sync(FULL, incl, 31);
}

// Open item idx (< the total) -> the lane whose word holds it (owner) and its bit there. Every
// lane of the warp must call this (idx past the total gives an unused answer).
template <typename W>
__device__ __forceinline__ u32 deal_item(W open, u32 incl, u32 idx, u32& owner) {
    u32 o = 0;                                        // the first lane with incl > idx
#pragma unroll
    for (u32 s = 16; s > 0; s >>= 1)
        if (__shfl_sync(FULL, incl, o + s - 1) <= idx) o += s;
    const W ow = __shfl_sync(FULL, open, o);
    const u32 before = __shfl_sync(FULL, incl, o) - popcount(ow);
    owner = o;
    return idx - before < popcount(ow) ? nth_set_bit(ow, idx - before) : 0u;
}

// One round of dealing, K items a lane: item base + lane + 32 k of the warp's set bits (lane l
// holds word w0 + l in bits; incl and total from deal_count) -> its owner lane, its vertex id
// (w0 + owner) * bits-per-word + bit, and on[k] = whether it is one (below the total). Every
// lane of the warp must call this.
template <int K, typename W, typename V>
__device__ __forceinline__ void deal_round(W bits, u32 incl, u32 total, u32 base, i64 w0,
                                           V (&v)[K], u32 (&owner)[K], bool (&on)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const u32 idx = base + (threadIdx.x & 31) + 32 * k;
        const u32 bit = deal_item(bits, incl, idx, owner[k]);
        v[k] = (V)((w0 + owner[k]) * (i64)(8 * sizeof(W)) + bit);
        on[k] = idx < total;
    }
}

// The set bits of the warp's 32 words (lane l holds word w0 + l in bits; incl and total from
// deal_count) dealt out 32 at a time: each(idx, v) runs on the lane that takes the idx-th set
// bit, v = its vertex id (64-bit words). Every lane of the warp must call it.
template <typename F>
__device__ __forceinline__ void for_each_dealt_bit(u64 bits, u32 incl, u32 total, i64 w0,
                                                   F each) {
    for (u32 base = 0; base < total; base += 32) {
        u32 owner;
        const u32 idx = base + (threadIdx.x & 31);
        const u32 bit = deal_item(bits, incl, idx, owner);
        if (idx < total) each(idx, (w0 + owner) * 64 + bit);
    }
}

// Sum x over the block and add it to *target with one atomic (none when the sum is 0): one
// atomic per block, not per warp, on the few control words every block adds to. Every thread of
// the block must call it; it ends with __syncthreads().
__device__ __forceinline__ void block_sum_add(u64 x, u64* target) {
    __shared__ u64 s_part[BLOCK / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL, x, o);
    if ((threadIdx.x & 31) == 0) s_part[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x < 32) {
        x = threadIdx.x < BLOCK / 32 ? s_part[threadIdx.x] : 0ULL;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL, x, o);
        if (threadIdx.x == 0 && x) atomicAdd(target, x);
    }
    __syncthreads();
}

// Inclusive scan of int64 counts (a level's frontier degrees -> its edge numbering), in
// chunks of SCAN_CHUNK items, a block each (tiles.py's Scan launches these): scan_sums writes
// each chunk's total, the totals are scanned (exclusive, recursively), and scan_chunks scans
// every chunk from its base. One to three launches instead of the library scan's host
// overhead, which measured more than the GPU time of a small level.
#define SCAN_ITEMS 16
#define SCAN_CHUNK (BLOCK * SCAN_ITEMS)

// Inclusive prefix of x over a block of THREADS threads (s_warp: THREADS / 32 shared words);
// total gets the block's sum. Every thread calls it.
template <int THREADS>
__device__ __forceinline__ i64 block_scan(i64 x, i64* s_warp, i64& total) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const i64 y = __shfl_up_sync(FULL, x, o);
        if (lane >= (u32)o) x += y;
    }
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    if (warp == 0) {
        i64 t = lane < THREADS / 32 ? s_warp[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(FULL, t, o);
            if (lane >= (u32)o) t += y;
        }
        if (lane < THREADS / 32) s_warp[lane] = t;
    }
    __syncthreads();
    if (warp > 0) x += s_warp[warp - 1];
    total = s_warp[THREADS / 32 - 1];
    __syncthreads();                                       // s_warp reused by the next call
    return x;
}

// Exclusive prefix of x over a block of BLOCK threads; total gets the block's sum.
__device__ __forceinline__ i64 block_exclusive_scan(i64 x, i64& total) {
    __shared__ i64 s_warp[BLOCK / 32];
    return block_scan<BLOCK>(x, s_warp, total) - x;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_sums(const i64* __restrict__ in, i64 q, i64* __restrict__ sums)
{
    const i64 first = (i64)blockIdx.x * SCAN_CHUNK + (i64)threadIdx.x * SCAN_ITEMS;
    i64 x = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) x += first + k < q ? in[first + k] : 0;
    i64 total;
    block_exclusive_scan(x, total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// out[i] = in[0] + ... + in[i] (exclusive: without in[i]) within each chunk, plus base[chunk]
// (an exclusive scan of the chunk totals; null: one chunk). out may be in.
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_chunks(const i64* in, i64* out, i64 q, const i64* __restrict__ base, int exclusive)
{
    const i64 first = (i64)blockIdx.x * SCAN_CHUNK + (i64)threadIdx.x * SCAN_ITEMS;
    i64 v[SCAN_ITEMS], x = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) { v[k] = first + k < q ? in[first + k] : 0; x += v[k]; }
    i64 total;
    i64 run = block_exclusive_scan(x, total) + (base ? base[blockIdx.x] : 0);
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) {
        if (exclusive) { if (first + k < q) out[first + k] = run; run += v[k]; }
        else { run += v[k]; if (first + k < q) out[first + k] = run; }
    }
}

// tile_first[t] = the frontier index owning edge t*TILE, for t in [0, tiles]; the last is q.
extern "C" __global__ void partition_tiles(const i64* __restrict__ scan, i64 q, i64 tiles,
                                           i64* __restrict__ tile_first)
{
    const i64 E = scan[q - 1];
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t <= tiles;
         t += (i64)gridDim.x * blockDim.x) {
        const i64 e = t * TILE;
        tile_first[t] = e >= E ? q : upper_bound(scan, 0, q, e);
    }
}

// The same three steps and the tile partition with the count read from device memory
// (*q_ptr: the compaction's counter), so a level is enqueued before the host knows its frontier
// (2d-do's chained top-down levels, fu_2d_do_gpu.py): fixed grids, each block taking chunks
// (tiles) grid-stride, the idle ones returning; go: null, or a chained level's flag (nothing
// happens unless go[0]). sums: ceil(capacity / SCAN_CHUNK) words. scan_totals_q scans the
// chunk totals in one block, SCAN_CHUNK at a time with a carry (one round below 2^24 items).
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_sums_q(const i64* __restrict__ in, const u64* __restrict__ q_ptr, i64* __restrict__ sums,
            const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;
    const i64 q = (i64)*q_ptr;
    for (i64 chunk = blockIdx.x; chunk * SCAN_CHUNK < q; chunk += gridDim.x) {  // block-uniform
        const i64 first = chunk * SCAN_CHUNK + (i64)threadIdx.x * SCAN_ITEMS;
        i64 x = 0;
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) x += first + k < q ? in[first + k] : 0;
        i64 total;
        block_exclusive_scan(x, total);
        if (threadIdx.x == 0) sums[chunk] = total;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_totals_q(i64* __restrict__ sums, const u64* __restrict__ q_ptr, const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;
    const i64 n = ((i64)*q_ptr + SCAN_CHUNK - 1) / SCAN_CHUNK;
    i64 carry = 0;
    for (i64 at = 0; at < n; at += SCAN_CHUNK) {
        const i64 first = at + (i64)threadIdx.x * SCAN_ITEMS;
        i64 v[SCAN_ITEMS], x = 0;
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) { v[k] = first + k < n ? sums[first + k] : 0; x += v[k]; }
        i64 total;
        i64 run = block_exclusive_scan(x, total) + carry;
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) {       // exclusive: each chunk's base
            if (first + k < n) sums[first + k] = run;
            run += v[k];
        }
        carry += total;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_chunks_q(const i64* __restrict__ in, i64* __restrict__ out, const u64* __restrict__ q_ptr,
              const i64* __restrict__ base, const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;
    const i64 q = (i64)*q_ptr;
    for (i64 chunk = blockIdx.x; chunk * SCAN_CHUNK < q; chunk += gridDim.x) {
        const i64 first = chunk * SCAN_CHUNK + (i64)threadIdx.x * SCAN_ITEMS;
        i64 v[SCAN_ITEMS], x = 0;
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) { v[k] = first + k < q ? in[first + k] : 0; x += v[k]; }
        i64 total;
        i64 run = block_exclusive_scan(x, total) + base[chunk];
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) { run += v[k]; if (first + k < q) out[first + k] = run; }
    }
}

extern "C" __global__ void partition_tiles_q(const i64* __restrict__ scan,
                                             const u64* __restrict__ q_ptr,
                                             i64* __restrict__ tile_first,
                                             const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;
    const i64 q = (i64)*q_ptr;
    if (q == 0) return;
    const i64 E = scan[q - 1], tiles = (E + TILE - 1) / TILE;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t <= tiles;
         t += (i64)gridDim.x * blockDim.x) {
        const i64 e = t * TILE;
        tile_first[t] = e >= E ? q : upper_bound(scan, 0, q, e);
    }
}

// One CTA's tile in shared memory (declare it __shared__ in the kernel).
struct Tile {
    int end[TILE_CAP];    // inclusive scan end relative to the tile's first edge, <= TILE + 1
    i64 base[TILE_CAP];   // offsets[v] - exclusive scan: column index = base + edge index
    u32 v[TILE_CAP];      // the frontier vertex
    i64 lo, cnt, tile_base, E;
    bool staged;          // false only when degree-0 entries crowd the tile (then: global search)
};

// Every thread of the CTA calls this (tile: the tile's index; stage_tile: the block's); it
// ends with __syncthreads().
__device__ __forceinline__ void stage_tile_at(Tile& t, i64 tile, const i64* __restrict__ offsets,
                                              const u32* __restrict__ qin,
                                              const i64* __restrict__ scan, i64 q,
                                              const i64* __restrict__ tile_first)
{
    const i64 lo = tile_first[tile];
    const i64 hi = min(tile_first[tile + 1] + 1, q);
    const i64 tile_base = tile * TILE;
    const bool staged = hi - lo <= TILE_CAP;   // block-uniform
    if (threadIdx.x == 0) {
        t.lo = lo; t.cnt = hi - lo; t.tile_base = tile_base; t.E = scan[q - 1]; t.staged = staged;
    }
    if (staged) {
        for (i64 k = threadIdx.x; k < hi - lo; k += BLOCK) {
            const i64 i = lo + k;
            const u32 v = qin[i];
            const i64 end = scan[i] - tile_base;   // >= 1: vertex lo owns the tile's first edge
            t.end[k] = (int)(end < TILE + 1 ? end : TILE + 1);
            t.base[k] = offsets[v] - (i > 0 ? scan[i - 1] : 0);
            t.v[k] = v;
        }
    }
    __syncthreads();
}

__device__ __forceinline__ void stage_tile(Tile& t, const i64* __restrict__ offsets,
                                           const u32* __restrict__ qin,
                                           const i64* __restrict__ scan, i64 q,
                                           const i64* __restrict__ tile_first)
{
    stage_tile_at(t, blockIdx.x, offsets, qin, scan, q, tile_first);
}

// This thread's ITEMS edges of the tile (edge tile_base + it * BLOCK + threadIdx.x):
// keep[it] = the edge exists, v[it] = its frontier vertex, w[it] = its column (neighbour).
__device__ __forceinline__ void gather_tile(const Tile& t, const i64* __restrict__ offsets,
                                            const u32* __restrict__ columns,
                                            const u32* __restrict__ qin,
                                            const i64* __restrict__ scan, i64 q,
                                            u32 (&v)[ITEMS], u32 (&w)[ITEMS], bool (&keep)[ITEMS])
{
    int a = 0;   // the previous item's vertex: owners never decrease along the tile
    const int cnt = (int)t.cnt;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        const int jr = it * BLOCK + threadIdx.x;
        const i64 j = t.tile_base + jr;
        keep[it] = j < t.E;
        v[it] = 0; w[it] = 0;
        if (keep[it]) {
            i64 col;
            if (t.staged) {
                int b = cnt;                        // first k with end[k] > jr
                while (a < b) { const int m = (a + b) >> 1; if (t.end[m] > jr) b = m; else a = m + 1; }
                v[it] = t.v[a];
                col = t.base[a] + j;
            } else {
                const i64 i = upper_bound(scan, t.lo, q, j);
                v[it] = qin[i];
                col = offsets[v[it]] + (j - (i > 0 ? scan[i - 1] : 0));
            }
            w[it] = columns[col];
        }
    }
}
