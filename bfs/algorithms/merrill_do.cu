#include "tiles.cuh"
#include "bottom_up.cuh"

// frontier bitmap from the vertex queue (the bitmap was zeroed before)
extern "C" __global__ void queue_to_bitmap(const u32* __restrict__ queue, i64 q,
                                           u32* __restrict__ bitmap)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < q;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 v = queue[i];
        atomicOr(bitmap + (v >> 5), 1u << (v & 31));
    }
}

// Queue of the vertices set in a frontier bitmap, with their degrees (switching back to
// top-down after bottom-up levels, which keep only bitmaps). A thread per word; one global
// atomic per block. counter[0] is left at the queue's length.
extern "C" __global__ void __launch_bounds__(BLOCK)
bitmap_to_queue(const u32* __restrict__ bitmap, i64 n_words, const i64* __restrict__ offsets,
                u32* __restrict__ qout, i64* __restrict__ degout, u64* counter)
{
    __shared__ u32 s_count;
    __shared__ u64 s_base;
    for (i64 w0 = (i64)blockIdx.x * BLOCK; w0 < n_words; w0 += (i64)gridDim.x * BLOCK) {
        if (threadIdx.x == 0) s_count = 0;
        __syncthreads();
        const i64 w = w0 + threadIdx.x;
        u32 bits = w < n_words ? bitmap[w] : 0u;
        const u32 pos = bits ? atomicAdd(&s_count, (u32)__popc(bits)) : 0u;
        __syncthreads();
        if (threadIdx.x == 0 && s_count) s_base = atomicAdd(counter, (u64)s_count);
        __syncthreads();
        for (u32 k = 0; bits; ++k, bits &= bits - 1) {
            const u32 v = (u32)(w * 32) + (u32)(__ffs(bits) - 1);
            qout[s_base + pos + k] = v;
            degout[s_base + pos + k] = offsets[(u64)v + 1] - offsets[v];
        }
        __syncthreads();    // s_base and s_count are rewritten by the next round
    }
}

// Block-wide sums of three per-thread counts: counter[0] += a, counter[1] += b, read[0] += c,
// by one thread of the block.
__device__ __forceinline__ void add_block_counts(u64 a, u64 b, u64 c, u64* counter, u64* read) {
    __shared__ u64 s[3];
    if (threadIdx.x == 0) { s[0] = 0; s[1] = 0; s[2] = 0; }
    __syncthreads();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(FULL, a, o);
        b += __shfl_down_sync(FULL, b, o);
        c += __shfl_down_sync(FULL, c, o);
    }
    if ((threadIdx.x & 31) == 0) { atomicAdd(&s[0], a); atomicAdd(&s[1], b); atomicAdd(&s[2], c); }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (s[0]) { atomicAdd(counter, s[0]); atomicAdd(counter + 1, s[1]); }
        if (s[2]) atomicAdd(read, s[2]);
    }
}

// One bottom-up level (bottom_up.cuh says why this shape): a warp takes 32 words of the
// visited bitmask (1024 vertices) and deals their open vertices to its lanes, K at a time, each
// vertex looking for a frontier neighbour (find_in_frontier: its first HEAD neighbours, then
// its own walk, then the warp on long rows). The isolated vertices start visited (reset), so
// they are never dealt. A found vertex writes parent and level and sets its bit in the warp's
// 32 new frontier words (shared memory), written out whole with the visited words at the end:
// no global atomics on bitmaps, no queue (a switch back to top-down builds one from the
// bitmap), no block barrier in the loop. Each block sums its counts once, at the end, into
// counter[0] (found), counter[1] (their degrees: the next frontier's edges) and read[0]
// (neighbours loaded, summed over the search: the edges examined).
template <int K, int HEAD>
__global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ offsets, const u32* __restrict__ columns, i64 n_words,
          const u32* __restrict__ frontier, u32* __restrict__ next_frontier,
          u32* __restrict__ visited, i64* __restrict__ parent, int* __restrict__ level,
          int next_level, u64* counter, u64* other_counter, u64* read)
{
    __shared__ u32 s_next[BLOCK];
    const u32 lane = threadIdx.x & 31;
    u32* next_words = s_next + (threadIdx.x & ~31u);
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    u64 n_found = 0, deg_found = 0, n_read = 0;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    for (i64 w0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; w0 < n_words;
         w0 += warps * 32) {
        const i64 my_word = w0 + lane;
        const u32 word = my_word < n_words ? visited[my_word] : FULL;
        const u32 open = ~word;
        u32 incl;
        const u32 total = deal_count(open, incl);
        next_words[lane] = 0;
        __syncwarp();
        for (u32 base = 0; base < total; base += 32 * K) {
            u32 v[K], owner[K];
            i64 b[K], len[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const u32 idx = base + lane + 32 * k;
                const u32 bit = deal_item(open, incl, idx, owner[k]);
                v[k] = (u32)((w0 + owner[k]) * 32) + bit;
                const bool on = idx < total;
                b[k] = on ? offsets[v[k]] : 0;
                len[k] = on ? offsets[(u64)v[k] + 1] - b[k] : 0;
            }
            bool found[K];
            u32 p[K];
            find_in_frontier<K, HEAD>(columns, frontier, b, len, found, p, n_read);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                if (!found[k]) continue;
                parent[v[k]] = (i64)p[k];
                level[v[k]] = next_level;
                atomicOr(next_words + owner[k], 1u << (v[k] & 31));
                ++n_found;
                deg_found += (u64)len[k];
            }
        }
        __syncwarp();
        const u32 mask = next_words[lane];
        if (my_word < n_words) {
            next_frontier[my_word] = mask;
            if (mask) visited[my_word] = word | mask;
        }
        __syncwarp();                    // next_words is cleared for the next 32 words
    }
    add_block_counts(n_found, deg_found, n_read, counter, read);
}
