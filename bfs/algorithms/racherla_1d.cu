#include "tiles.cuh"

// 1d on the GPU (racherla_1d_gpu.py): after every rank expanded its own frontier rows into its
// Out bitmap (all vertices), the discoveries of the other ranks arrive either as whole bitmaps
// (big levels) or as lists of vertex ids (small levels). Both are folded into two bitmaps:
// below = what ranks before this one found (they claim it), above = what ranks after it found.
// fu_2d.cu's contract then gives assigned / uni / the parents this rank keeps.

// Bitmaps: gathered[r * nw + w] is rank r's Out word w.
extern "C" __global__ void fold_bitmaps(const u64* __restrict__ gathered, int ranks, int me,
                                        i64 nw, u64* below, u64* above)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 b = 0, a = 0;
        for (int r = 0; r < ranks; ++r) {
            const u64 x = gathered[(i64)r * nw + w];
            if (r < me) b |= x; else if (r > me) a |= x;
        }
        below[w] = b;
        above[w] = a;
    }
}

// Out -> list[1..] of padded vertex indices, list[0] = how many; one warp-aggregated atomic per
// warp (list[0] must be 0 on entry).
extern "C" __global__ void bits_to_list(const u64* __restrict__ words, i64 nw, u32* list)
{
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < nw; base += (i64)gridDim.x * blockDim.x) {
        const i64 w = base + threadIdx.x;
        u64 bits = w < nw ? words[w] : 0ULL;
        u32 total;
        u32 pos = 1 + warp_reserve(__popcll(bits), list, total);
        if (total == 0) continue;                               // warp-uniform
        while (bits) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            list[pos++] = (u32)(w * 64 + k);
        }
    }
}

// One rank's list (list[0] ids after it) -> bits of target (below or above).
extern "C" __global__ void list_to_bits(const u32* __restrict__ list, u64* target)
{
    const u32 n = list[0];
    for (u32 k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        const u32 v = list[1 + k];
        atomicOr(target + (v >> 6), 1ULL << (v & 63));
    }
}
