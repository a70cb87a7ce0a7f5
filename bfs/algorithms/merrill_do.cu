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

// Position of the r-th (0-based) set bit of mask (r < popc(mask)): binary search by counts.
__device__ __forceinline__ u32 nth_set_bit(u32 mask, u32 r) {
    u32 pos = 0;
#pragma unroll
    for (u32 s = 16; s > 0; s >>= 1) {
        const u32 low = __popc(mask & ((1u << (pos + s)) - 1u) & ~((1u << pos) - 1u));
        if (low <= r) { r -= low; pos += s; }
    }
    return pos;
}

#define CAP 64   // neighbours a lane reads on its own; longer rows the warp walks together

// One bottom-up level. A warp takes 32 words of the visited bitmask at a time (1024 vertices,
// one coalesced load) and deals their open vertices (bits still clear) out to its lanes, K
// per lane at a time. Why: a vertex's steps wait on each other (row offsets -> columns ->
// frontier bits), so the level is bound by how many vertices are in flight, not by bytes; a
// warp per word kept only the word's few open lanes busy (after the first bottom-up level
// most lanes of a word are visited or isolated) and swept fully visited words one round trip
// each. Here every lane has K open vertices whatever the density, and visited words cost one
// coalesced load. The isolated vertices start visited (reset), so they are never dealt.
// Per vertex: the first HEAD neighbours with independent loads (most vertices of a Kronecker
// graph meet a frontier parent there); then the lane's own walk, 8 loads at a time, up to
// CAP; rows longer still the warp walks together, 32 coalesced neighbours a step, one row at
// a time. A found vertex writes parent and level and sets its bit in the warp's 32 new
// frontier words (shared memory), written out whole with the visited words at the end: no
// global atomics on bitmaps, no queue (a switch back to top-down builds one from the
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
        u32 incl = __popc(open);
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(FULL, incl, o);
            if (lane >= (u32)o) incl += y;
        }
        const u32 total = __shfl_sync(FULL, incl, 31);
        next_words[lane] = 0;
        __syncwarp();
        for (u32 base = 0; base < total; base += 32 * K) {
            u32 v[K], owner[K];
            bool on[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const u32 idx = base + lane + 32 * k;
                on[k] = idx < total;
                u32 o = 0;                                   // word: first lane with incl > idx
#pragma unroll
                for (u32 s = 16; s > 0; s >>= 1)
                    if (__shfl_sync(FULL, incl, o + s - 1) <= idx) o += s;
                const u32 ow = __shfl_sync(FULL, open, o);
                const u32 before = __shfl_sync(FULL, incl, o) - __popc(ow);
                owner[k] = o;
                v[k] = (u32)((w0 + o) * 32) + (on[k] ? nth_set_bit(ow, idx - before) : 0u);
            }
            i64 b[K], len[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                b[k] = on[k] ? offsets[v[k]] : 0;
                len[k] = on[k] ? offsets[(u64)v[k] + 1] - b[k] : 0;
            }
            u32 u[K][HEAD];
#pragma unroll
            for (int k = 0; k < K; ++k)
#pragma unroll
                for (int t = 0; t < HEAD; ++t) u[k][t] = t < len[k] ? columns[b[k] + t] : 0u;
            bool found[K];
            u32 p[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                int hit = HEAD;
#pragma unroll
                for (int t = HEAD - 1; t >= 0; --t)
                    if (t < len[k] && ((__ldg(frontier + (u[k][t] >> 5)) >> (u[k][t] & 31)) & 1u))
                        hit = t;
                found[k] = hit < HEAD;
                p[k] = 0;
#pragma unroll
                for (int t = 0; t < HEAD; ++t) if (t == hit) p[k] = u[k][t];
                n_read += (u64)(len[k] < HEAD ? len[k] : HEAD);
            }
            // the lane's own walk, 8 independent loads a step, up to CAP neighbours
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const i64 stop = len[k] < CAP ? len[k] : CAP;
                for (i64 t0 = HEAD; !found[k] && t0 < stop; t0 += 8) {
                    u32 x[8];
#pragma unroll
                    for (int t = 0; t < 8; ++t) x[t] = t0 + t < stop ? columns[b[k] + t0 + t] : 0u;
                    int hit = 8;
#pragma unroll
                    for (int t = 7; t >= 0; --t)
                        if (t0 + t < stop && ((__ldg(frontier + (x[t] >> 5)) >> (x[t] & 31)) & 1u))
                            hit = t;
#pragma unroll
                    for (int t = 0; t < 8; ++t) if (t == hit) { p[k] = x[t]; found[k] = true; }
                    n_read += (u64)(stop - t0 < 8 ? stop - t0 : 8);
                }
            }
            // rows past CAP: the warp walks them together, one row at a time
#pragma unroll
            for (int k = 0; k < K; ++k) {
                u32 rest = __ballot_sync(FULL, !found[k] && len[k] > CAP);
                while (rest) {
                    const int src = __ffs(rest) - 1;
                    rest &= rest - 1;
                    const i64 rb = __shfl_sync(FULL, b[k], src);
                    const i64 re = rb + __shfl_sync(FULL, len[k], src);
                    for (i64 k0 = rb + CAP; k0 < re; k0 += 32) {
                        const i64 q = k0 + lane;
                        const u32 x = q < re ? columns[q] : 0u;
                        const bool h = q < re && ((__ldg(frontier + (x >> 5)) >> (x & 31)) & 1u);
                        const u32 m = __ballot_sync(FULL, h);
                        if (lane == (u32)src) n_read += (u64)(re - k0 < 32 ? re - k0 : 32);
                        if (m) {
                            const u32 px = __shfl_sync(FULL, x, __ffs(m) - 1);
                            if (lane == (u32)src) { found[k] = true; p[k] = px; }
                            break;
                        }
                    }
                }
                if (found[k]) {
                    parent[v[k]] = (i64)p[k];
                    level[v[k]] = next_level;
                    atomicOr(next_words + owner[k], 1u << (v[k] & 31));
                    ++n_found;
                    deg_found += (u64)len[k];
                }
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
