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

// One bottom-up level over vertices [0, 32 * n_words). Warps are aligned to bitmask words.
extern "C" __global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ offsets, const u32* __restrict__ columns, i64 n, i64 n_words,
          const u32* __restrict__ frontier, u32* __restrict__ next_frontier,
          u32* __restrict__ visited, i64* __restrict__ parent, int* __restrict__ level,
          int next_level, u32* __restrict__ qout, i64* __restrict__ degout,
          u64* counter, u64* other_counter)
{
    __shared__ u32 s_count;
    __shared__ u64 s_degsum, s_gbase;
    const u32 lane = threadIdx.x & 31;
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    const i64 total = n_words * 32;
    for (i64 base = (i64)blockIdx.x * BLOCK; base < total; base += (i64)gridDim.x * BLOCK) {
        if (threadIdx.x == 0) { s_count = 0; s_degsum = 0; }
        __syncthreads();
        const i64 v = base + threadIdx.x;
        const bool in_range = v < total;
        const u32 word = in_range ? visited[v >> 5] : FULL;
        bool found = false;
        u32 p = 0;
        i64 deg = 0;
        if (v < n && !((word >> lane) & 1u)) {
            const i64 b = offsets[v], e = offsets[v + 1];
            deg = e - b;
            // four neighbours per step: four independent column loads, then four independent
            // bitmap loads, instead of a chain of two dependent loads per neighbour
            i64 k = b;
            for (; k + 4 <= e; k += 4) {
                u32 u[4];
                bool hit[4];
#pragma unroll
                for (int t = 0; t < 4; ++t) u[t] = columns[k + t];
#pragma unroll
                for (int t = 0; t < 4; ++t) hit[t] = (__ldg(frontier + (u[t] >> 5)) >> (u[t] & 31)) & 1u;
                if (hit[0] | hit[1] | hit[2] | hit[3]) {
                    p = hit[0] ? u[0] : hit[1] ? u[1] : hit[2] ? u[2] : u[3];
                    found = true;
                    break;
                }
            }
            for (; !found && k < e; ++k) {
                const u32 u = columns[k];
                if ((frontier[u >> 5] >> (u & 31)) & 1u) { p = u; found = true; }
            }
        }
        const u32 mask = __ballot_sync(FULL, found);
        if (in_range && lane == 0) {
            next_frontier[v >> 5] = mask;
            if (mask) visited[v >> 5] = word | mask;
        }
        u32 pos = 0;
        if (mask) {
            i64 sum = found ? deg : 0;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(FULL, sum, o);
            u32 b = 0;
            if (lane == 0) { b = atomicAdd(&s_count, (u32)__popc(mask)); atomicAdd(&s_degsum, (u64)sum); }
            pos = __shfl_sync(FULL, b, 0) + __popc(mask & ((1u << lane) - 1u));
        }
        __syncthreads();
        if (threadIdx.x == 0 && s_count) {
            s_gbase = atomicAdd(counter, (u64)s_count);
            atomicAdd(counter + 1, s_degsum);
        }
        __syncthreads();
        if (found) {
            parent[v] = (i64)p;
            level[v] = next_level;
            qout[s_gbase + pos] = (u32)v;
            degout[s_gbase + pos] = deg;
        }
    }
}
