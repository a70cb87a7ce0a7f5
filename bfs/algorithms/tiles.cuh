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

// One CTA's tile in shared memory (declare it __shared__ in the kernel).
struct Tile {
    int end[TILE_CAP];    // inclusive scan end relative to the tile's first edge, <= TILE + 1
    i64 base[TILE_CAP];   // offsets[v] - exclusive scan: column index = base + edge index
    u32 v[TILE_CAP];      // the frontier vertex
    i64 lo, cnt, tile_base, E;
    bool staged;          // false only when degree-0 entries crowd the tile (then: global search)
};

// Every thread of the CTA calls this; it ends with __syncthreads().
__device__ __forceinline__ void stage_tile(Tile& t, const i64* __restrict__ offsets,
                                           const u32* __restrict__ qin,
                                           const i64* __restrict__ scan, i64 q,
                                           const i64* __restrict__ tile_first)
{
    const i64 lo = tile_first[blockIdx.x];
    const i64 hi = min(tile_first[blockIdx.x + 1] + 1, q);
    const i64 tile_base = (i64)blockIdx.x * TILE;
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
