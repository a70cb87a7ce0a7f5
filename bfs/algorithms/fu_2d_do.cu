#include "tiles.cuh"

// 2d-do on the GPU (fu_2d_do_gpu.py): the bottom-up level and the degree sums of Beamer's switch.
// Everything else of a level is fu_2d.cu's (compact, expand_tiles, contract, finish).

// Bottom-up (one level): every column vertex v not visited walks its in-edges in the block CSC
// (row ids, each column's rows sorted) and stops at the first row u in In: v goes into Out with
// pred[v] = row_global[u]. A warp owns one 64-bit word of Out and visited (lane l: vertices
// 64w + l, then 64w + 32 + l), so Out is written with plain stores, every word of it (no
// clearing, no atomics). examined += the in-edges read, up to and including the hit (one
// atomic per warp). Rows are walked by one thread each, as merrill_do.cu's bottom_up walks
// adjacency lists; next to try where a few long rows hold a level back: a warp per long row
// (ballot over 32 in-edges at a time), and merrill_do's four independent loads per step.
extern "C" __global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ csc_offsets, const u32* __restrict__ csc_rows,
          const u64* __restrict__ in_words, const u64* __restrict__ visited, i64 nw,
          u64* __restrict__ out, i64* __restrict__ pred, const i64* __restrict__ row_global,
          u64* examined)
{
    const u32 lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (BLOCK / 32);
    u64 read = 0;
    // w is the same on every lane of a warp: the ballots below see all 32 lanes
    for (i64 w = ((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5; w < nw; w += warps) {
        const u64 todo = ~visited[w];
        u64 found = 0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int b = half * 32 + (int)lane;
            bool hit = false;
            if ((todo >> b) & 1ULL) {
                const i64 v = w * 64 + b;
                const i64 start = csc_offsets[v], stop = csc_offsets[v + 1];
                i64 e = start;
                while (e < stop) {
                    const u32 u = csc_rows[e++];
                    if ((__ldg(in_words + (u >> 6)) >> (u & 63)) & 1ULL) {
                        pred[v] = row_global[u];
                        hit = true;
                        break;
                    }
                }
                read += (u64)(e - start);
            }
            found |= (u64)__ballot_sync(FULL, hit) << (half * 32);
        }
        if (lane == 0) out[w] = found;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) read += __shfl_down_sync(FULL, read, o);
    if (lane == 0 && read) atomicAdd(examined, read);
}

// *sum += (subtract: -=, modulo 2^64) the degrees offsets[v + 1] - offsets[v] of the vertices v
// whose bits are set in words[0, nw): 2d-do's m_f share (block CSR over the next In) and its
// unvisited edges (block CSC, minus the level's new vertices). One thread per word, one atomic
// per warp.
extern "C" __global__ void degree_sum(const u64* __restrict__ words, i64 nw,
                                      const i64* __restrict__ offsets, int subtract, u64* sum)
{
    u64 s = 0;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 bits = words[w];
        while (bits) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            const i64 v = w * 64 + k;
            s += (u64)(offsets[v + 1] - offsets[v]);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(FULL, s, o);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, subtract ? 0ULL - s : s);
}
