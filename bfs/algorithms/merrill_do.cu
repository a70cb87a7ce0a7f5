typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
#define FULL 0xFFFFFFFFu
#define BLOCK 256

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

// One bottom-up level; a warp takes WPW words of the visited bitmask (32 * WPW vertices, a
// lane one vertex of each word) at a time, grid-stride. Why WPW words: every step of a vertex
// waits for the one before (visited word -> row offsets -> columns -> frontier bits), so a
// warp with one word has one load in flight per lane and the level is latency-bound; WPW
// independent words put WPW (and WPW * HEAD) loads in flight instead.
// Vertices already visited (the isolated ones are marked visited at the reset) are skipped.
// Each open vertex reads its first HEAD neighbours with independent loads (most vertices of a
// Kronecker graph meet a frontier parent there); longer rows the warp then walks together, 32
// coalesced neighbours a step, one row at a time, stopping at the first frontier neighbour.
// No queue is written (a switch back to top-down builds one from the bitmap) and no barrier
// inside the loop: each block sums its counts once, at the end, into counter[0] (found),
// counter[1] (their degrees: the next frontier's edges) and read[0] (neighbours loaded,
// summed over the search: the edges examined).
template <int WPW, int HEAD>
__global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ offsets, const u32* __restrict__ columns, i64 n_words,
          const u32* __restrict__ frontier, u32* __restrict__ next_frontier,
          u32* __restrict__ visited, i64* __restrict__ parent, int* __restrict__ level,
          int next_level, u64* counter, u64* other_counter, u64* read)
{
    const u32 lane = threadIdx.x & 31;
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    u64 n_found = 0, deg_found = 0, n_read = 0;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    const i64 groups = (n_words + WPW - 1) / WPW;
    for (i64 g = ((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5; g < groups; g += warps) {
        const i64 w0 = g * WPW;
        u32 word[WPW];
#pragma unroll
        for (int j = 0; j < WPW; ++j) word[j] = w0 + j < n_words ? visited[w0 + j] : FULL;
        i64 b[WPW], len[WPW];
#pragma unroll
        for (int j = 0; j < WPW; ++j) {
            b[j] = 0; len[j] = 0;
            if (!((word[j] >> lane) & 1u)) {
                const u64 v = (u64)(w0 + j) * 32 + lane;
                b[j] = offsets[v];
                len[j] = offsets[v + 1] - b[j];
            }
        }
        u32 u[WPW][HEAD];
#pragma unroll
        for (int j = 0; j < WPW; ++j)
#pragma unroll
            for (int t = 0; t < HEAD; ++t) u[j][t] = t < len[j] ? columns[b[j] + t] : 0u;
        bool found[WPW];
        u32 p[WPW];
#pragma unroll
        for (int j = 0; j < WPW; ++j) {
            int hit = HEAD;
#pragma unroll
            for (int t = HEAD - 1; t >= 0; --t)
                if (t < len[j] && ((__ldg(frontier + (u[j][t] >> 5)) >> (u[j][t] & 31)) & 1u))
                    hit = t;
            found[j] = hit < HEAD;
            p[j] = 0;
#pragma unroll
            for (int t = 0; t < HEAD; ++t) if (t == hit) p[j] = u[j][t];
            n_read += (u64)(len[j] < HEAD ? len[j] : HEAD);
        }
#pragma unroll
        for (int j = 0; j < WPW; ++j) {
            // the rest of the long rows, the warp on one row at a time
            u32 rest = __ballot_sync(FULL, !found[j] && len[j] > HEAD);
            while (rest) {
                const int src = __ffs(rest) - 1;
                rest &= rest - 1;
                const i64 rb = __shfl_sync(FULL, b[j], src) + HEAD;
                const i64 re = rb - HEAD + __shfl_sync(FULL, len[j], src);
                for (i64 k0 = rb; k0 < re; k0 += 32) {
                    const i64 k = k0 + lane;
                    const u32 x = k < re ? columns[k] : 0u;
                    const bool h = k < re && ((__ldg(frontier + (x >> 5)) >> (x & 31)) & 1u);
                    const u32 m = __ballot_sync(FULL, h);
                    if (lane == (u32)src) n_read += (u64)(re - k0 < 32 ? re - k0 : 32);
                    if (m) {
                        const u32 px = __shfl_sync(FULL, x, __ffs(m) - 1);
                        if (lane == (u32)src) { found[j] = true; p[j] = px; }
                        break;
                    }
                }
            }
            const u32 mask = __ballot_sync(FULL, found[j]);
            if (w0 + j < n_words && lane == 0) {
                next_frontier[w0 + j] = mask;
                if (mask) visited[w0 + j] = word[j] | mask;
            }
            if (found[j]) {
                const u64 v = (u64)(w0 + j) * 32 + lane;
                parent[v] = (i64)p[j];
                level[v] = next_level;
                ++n_found;
                deg_found += (u64)len[j];
            }
        }
    }
    add_block_counts(n_found, deg_found, n_read, counter, read);
}
