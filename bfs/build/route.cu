// Routing input edges to the blocks of an R x C grid on the GPU (bfs/build/routing.py).
// Each undirected input edge (u, v), u != v, becomes u->v and v->u; directed edge a->b belongs
// to rank row(a) * C + col(b), where piece(x) is found by binary search in bounds[0..p] and
// row(x) = piece(x) / C, col(x) = piece(x) % C (bfs/partition/layout.py).
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#define BLOCK 256
#define MAX_RANKS 1024

__device__ __forceinline__ int piece_of(const i64* __restrict__ bounds, int p, i64 x)
{
    int a = 0, b = p;                   // bounds[a] <= x < bounds[b]
    while (b - a > 1) {
        const int mid = (a + b) >> 1;
        if (__ldg(bounds + mid) <= x) a = mid; else b = mid;
    }
    return a;
}

// pass 1: counts[r] = directed edges for rank r (a block-local histogram, one global atomic per
// rank and block).
extern "C" __global__ void __launch_bounds__(BLOCK)
count_owners(const u32* __restrict__ src, const u32* __restrict__ dst, i64 m,
             const i64* __restrict__ bounds, int p, int C, u64* counts)
{
    __shared__ u32 hist[MAX_RANKS];
    for (int r = threadIdx.x; r < p; r += BLOCK) hist[r] = 0;
    __syncthreads();
    for (i64 e = (i64)blockIdx.x * BLOCK + threadIdx.x; e < m; e += (i64)gridDim.x * BLOCK) {
        const u32 u = src[e], v = dst[e];
        if (u == v) continue;
        const int pu = piece_of(bounds, p, u), pv = piece_of(bounds, p, v);
        atomicAdd(&hist[(pu / C) * C + pv % C], 1u);
        atomicAdd(&hist[(pv / C) * C + pu % C], 1u);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < p; r += BLOCK)
        if (hist[r]) atomicAdd(counts + r, (u64)hist[r]);
}

// pass 2: each directed edge written as (a << 32 | b) at its rank's region of out; cursor[r]
// starts at the region's offset. Per block, positions come from a shared histogram and one
// global atomic per rank reserves the block's run, so order inside a region is arbitrary (the
// block's CSR sorts its rows anyway).
extern "C" __global__ void __launch_bounds__(BLOCK)
scatter_owners(const u32* __restrict__ src, const u32* __restrict__ dst, i64 m,
               const i64* __restrict__ bounds, int p, int C, u64* cursor, u64* out)
{
    __shared__ u32 hist[MAX_RANKS];
    __shared__ u64 base[MAX_RANKS];
    const i64 stride = (i64)gridDim.x * BLOCK;
    for (i64 start = (i64)blockIdx.x * BLOCK; start < m; start += stride) {
        for (int r = threadIdx.x; r < p; r += BLOCK) hist[r] = 0;
        __syncthreads();
        const i64 e = start + threadIdx.x;
        int r1 = -1, r2 = -1;
        u32 k1 = 0, k2 = 0, u = 0, v = 0;
        if (e < m) {
            u = src[e]; v = dst[e];
            if (u != v) {
                const int pu = piece_of(bounds, p, u), pv = piece_of(bounds, p, v);
                r1 = (pu / C) * C + pv % C;
                r2 = (pv / C) * C + pu % C;
                k1 = atomicAdd(&hist[r1], 1u);
                k2 = atomicAdd(&hist[r2], 1u);
            }
        }
        __syncthreads();
        for (int r = threadIdx.x; r < p; r += BLOCK)
            base[r] = hist[r] ? atomicAdd(cursor + r, (u64)hist[r]) : 0;
        __syncthreads();
        if (r1 >= 0) {
            out[base[r1] + k1] = ((u64)u << 32) | v;
            out[base[r2] + k2] = ((u64)v << 32) | u;
        }
        __syncthreads();
    }
}

// The received (a << 32 | b) pairs -> src = a, dst = b.
extern "C" __global__ void unpack_pairs(const u64* __restrict__ pairs, i64 m, u32* src, u32* dst)
{
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (i64)gridDim.x * blockDim.x) {
        const u64 x = pairs[e];
        src[e] = (u32)(x >> 32);
        dst[e] = (u32)x;
    }
}
