#include "tiles.cuh"
#include "bottom_up.cuh"

// 2d-do on the GPU (fu_2d_do_gpu.py): the bottom-up level and the degree sums of Beamer's switch.
// Everything else of a level is fu_2d.cu's (compact, expand_tiles, contract, finish).

// Bottom-up (one level): every column vertex v not visited and with in-edges in this block
// (open = ~visited & has_rows) looks through its in-edges in the block CSC (row ids, each
// column's rows sorted) for a row u in In: v goes into Out with pred[v] = row_global[u].
// The shape is merrill-do's (bottom_up.cuh says why): a warp takes 32 words of 64 column
// vertices and deals their open vertices to its lanes, K at a time; each walks its in-edges
// (find_in_frontier). Out's bits gather in shared memory and every word of Out is written
// whole (no clearing, no global atomics on it). examined += the in-edges loaded (one atomic
// per warp).
template <int K, int HEAD>
__global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ csc_offsets, const u32* __restrict__ csc_rows,
          const u64* __restrict__ in_words, const u64* __restrict__ visited,
          const u64* __restrict__ has_rows, i64 nw, u64* __restrict__ out,
          i64* __restrict__ pred, const i64* __restrict__ row_global, u64* examined)
{
    __shared__ u64 s_out[BLOCK];
    const u32 lane = threadIdx.x & 31;
    u64* out_words = s_out + (threadIdx.x & ~31u);
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    u64 read = 0;
    for (i64 w0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; w0 < nw;
         w0 += warps * 32) {
        const i64 my_word = w0 + lane;
        const u64 open = my_word < nw ? ~visited[my_word] & has_rows[my_word] : 0ULL;
        u32 incl;
        const u32 total = deal_count(open, incl);
        out_words[lane] = 0;
        __syncwarp();
        for (u32 base = 0; base < total; base += 32 * K) {
            i64 v[K], b[K], len[K];
            u32 owner[K];
            bool on[K];
            deal_round(open, incl, total, base, w0, v, owner, on);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                b[k] = on[k] ? csc_offsets[v[k]] : 0;
                len[k] = on[k] ? csc_offsets[v[k] + 1] - b[k] : 0;
            }
            bool found[K];
            u32 p[K];
            find_in_frontier<K, HEAD>(csc_rows, BitmapFrontier<u64>{in_words}, b, len, found, p, read);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                if (!found[k]) continue;
                pred[v[k]] = row_global[p[k]];
                atomicOr(out_words + owner[k], 1ULL << (v[k] & 63));
            }
        }
        __syncwarp();
        if (my_word < nw) out[my_word] = out_words[lane];
        __syncwarp();                    // out_words is cleared for the next 32 words
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) read += __shfl_down_sync(FULL, read, o);
    if (lane == 0 && read) atomicAdd(examined, read);
}

// *sum -= (modulo 2^64) the degrees offsets[v + 1] - offsets[v] of the vertices v whose bits are
// set in words[0, nw): at a search's start, 2d-do's unvisited block-CSC entries less the root's
// (finish subtracts each level's new vertices itself). One thread per word, one atomic per block.
extern "C" __global__ void subtract_degrees(const u64* __restrict__ words, i64 nw,
                                            const i64* __restrict__ offsets, u64* sum)
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
    block_sum_add(0ULL - s, sum);           // the negated sums add up to minus their total
}
