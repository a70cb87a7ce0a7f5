// hybrid: the GPU side of Munguia, Bader and Ayguade's task-based hybrid CPU/GPU BFS; launched
// by bfs/algorithms/hybrid.py. The host picks the tasks (contiguous vertex ranges) a level runs
// here and hands the kernels their frontier vertices as one uint32 list; each kernel takes one
// warp per frontier vertex (grid-stride over warps), whose lanes stride over its CSR row, so a
// hub's row is read by 32 threads and a leaf's by one warp that mostly idles (the paper's warp-
// cooperative expansion, without its warp-vying for very long rows).

typedef long long i64;
typedef unsigned int u32;
typedef unsigned long long u64;

// workload mode: level (int32) and parent (int64) mirror the host's authoritative arrays; a
// fresh search from root.
extern "C" __global__ void reset_search(i64 n, u32 root, int* level, i64* parent)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const bool is_root = v == (i64)root;
        level[v] = is_root ? 0 : -1;
        parent[v] = is_root ? v : -1;
    }
}

// A warp per frontier vertex u (frontier[0..k)), its lanes striding over u's row: visit(u, w)
// for every edge u -> w. Both expand kernels below are this loop with their own claim.
template <typename Visit>
__device__ __forceinline__ void for_each_edge(const u32* __restrict__ frontier, i64 k,
                                              const i64* __restrict__ offsets,
                                              const u32* __restrict__ columns, Visit visit)
{
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 i = warp; i < k; i += warps) {
        const u32 u = frontier[i];
        const i64 end = offsets[(i64)u + 1];
        for (i64 e = offsets[u] + lane; e < end; e += 32) visit(u, columns[e]);
    }
}

// workload mode, top-down expansion of the GPU's tasks: every unvisited neighbour w of a
// frontier vertex u is claimed by atomicCAS on level[w] (-1 -> next_depth); the one thread
// whose CAS succeeds is w's first writer: it alone writes parent[w] = u and appends w to out
// (the level's GPU discoveries, a compact list the host copies back). out holds at most n
// entries: a vertex is claimed once per search.
extern "C" __global__ void expand_cas(const u32* __restrict__ frontier, i64 k,
                                      const i64* __restrict__ offsets,
                                      const u32* __restrict__ columns, int* level, i64* parent,
                                      int next_depth, u32* out, u64* out_count)
{
    for_each_edge(frontier, k, offsets, columns, [&](u32 u, u32 w) {
        if (level[w] == -1 && atomicCAS(&level[w], -1, next_depth) == -1) {
            parent[w] = (i64)u;
            out[atomicAdd(out_count, 1ULL)] = w;
        }
    });
}

// workload mode, the host's discoveries into the mirror: vertices[i] took level `depth` with
// parent parents[i] on the CPU. A vertex the GPU also claimed in that level (its CAS wrote the
// same depth) gets the host's parent, so both copies agree.
extern "C" __global__ void scatter_found(const u32* __restrict__ vertices,
                                         const i64* __restrict__ parents, i64 k, int depth,
                                         int* level, i64* parent)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < k; i += stride) {
        const u32 v = vertices[i];
        level[v] = depth;
        parent[v] = parents[i];
    }
}

// fixed mode, top-down expansion of the GPU's tasks over bitmaps (bit v of word v >> 5): an
// unvisited neighbour w is claimed by atomicOr on the next-frontier bitmap; the thread that saw
// the bit clear is w's first writer on the device and writes parent[w] = u.
extern "C" __global__ void expand_bits(const u32* __restrict__ frontier, i64 k,
                                       const i64* __restrict__ offsets,
                                       const u32* __restrict__ columns,
                                       const u32* __restrict__ visited, u32* next, i64* parent)
{
    for_each_edge(frontier, k, offsets, columns, [&](u32 u, u32 w) {
        const u32 bit = 1u << (w & 31);
        if (visited[w >> 5] & bit) return;
        if (next[w >> 5] & bit) return;            // cheap pre-check, the atomic decides
        if (!(atomicOr(&next[w >> 5], bit) & bit)) parent[w] = (i64)u;
    });
}

// fixed mode, after the exchange (next = NVF_C | NVF_G): visited |= next word by word, and the
// set bits of next in [0, hi) (the GPU's tasks' vertices) appended to out as its next frontier,
// in no particular order; count must be zero on entry.
extern "C" __global__ void advance_bits(i64 n_words, i64 hi, const u32* __restrict__ next,
                                        u32* visited, u32* out, u64* count)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 wd = (i64)blockIdx.x * blockDim.x + threadIdx.x; wd < n_words; wd += stride) {
        u32 bits = next[wd];
        if (!bits) continue;
        visited[wd] |= bits;
        while (bits) {
            const int b = __ffs(bits) - 1;
            bits &= bits - 1;
            const i64 v = (wd << 5) + b;
            if (v < hi) out[atomicAdd(count, 1ULL)] = (u32)v;
        }
    }
}
