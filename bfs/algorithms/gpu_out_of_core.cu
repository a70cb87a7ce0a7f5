// gpu-out-of-core: the SEI report's out-of-core single-GPU BFS (Sec. 2.4, Figs. 9-10) as
// bfs/algorithms/gpu_out_of_core.py runs it. The CSR stays in pinned host memory; the device
// holds the per-vertex state (level int32, parent int64, frontier / next / visited bitmaps of
// 32-bit words) and two block buffers, each holding one edge block as it was copied:
//     bytes [0, 8 (rows + 1))    the block's offsets slice offsets[row_lo .. row_hi] (absolute
//                                 edge positions, int64)
//     bytes [8 (rows + 1), ...)  the block's columns columns[edge_lo .. edge_hi) (uint32)
// A row may be split across consecutive blocks (a row with more edges than a block holds):
// each block expands only the part of a row inside its edge range [edge_lo, edge_hi).
// Kernels use grid-stride loops (bfs.device.grid_for caps the grid).

typedef long long i64;
typedef unsigned int u32;

// A fresh search from root: level and parent -1 everywhere but the root's (0, itself); the
// frontier and visited bitmaps empty and the root alone in next, so that the advance kernel
// that follows makes it the level-0 frontier and marks its blocks like any other level's.
extern "C" __global__ void reset_search(i64 n, i64 words, u32 root, int* level, i64* parent,
                                        u32* frontier, u32* next, u32* visited)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    const i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    for (i64 v = first; v < n; v += stride) {
        const bool is_root = v == (i64)root;
        level[v] = is_root ? 0 : -1;
        parent[v] = is_root ? v : -1;
    }
    for (i64 w = first; w < words; w += stride) {
        frontier[w] = 0;
        visited[w] = 0;
        next[w] = (w == (i64)(root >> 5)) ? (1u << (root & 31)) : 0u;
    }
}

// Expand the frontier vertices whose rows lie in one edge block: a warp per 32-vertex word of
// the frontier bitmap, restricted to rows [row_lo, row_hi); for each vertex v set in it, the
// warp's lanes walk v's edges inside [edge_lo, edge_hi). A neighbour not yet visited is
// claimed by the first writer with atomicCAS on its level (-1 -> depth), which then writes
// its parent and sets its bit in next. Vertices found at this level in an earlier block are
// not in visited yet, so the level check is what keeps each vertex's first parent.
extern "C" __global__ void expand_block(i64 row_lo, i64 row_hi, i64 edge_lo, i64 edge_hi,
                                        const unsigned char* __restrict__ buf,
                                        const u32* __restrict__ frontier,
                                        const u32* __restrict__ visited, u32* next, int* level,
                                        i64* parent, int depth)
{
    const i64* offs = (const i64*)buf;                               // offsets[row_lo ..]
    const u32* cols = (const u32*)(buf + 8 * (row_hi - row_lo + 1)); // columns[edge_lo ..]
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 word_lo = row_lo >> 5, word_hi = (row_hi + 31) >> 5;
    for (i64 wd = word_lo + warp; wd < word_hi; wd += warps) {
        u32 bits = frontier[wd];
        const i64 base = wd << 5;
        if (base < row_lo) bits &= ~0u << (row_lo - base);               // rows below the block
        if (base + 32 > row_hi) bits &= ~0u >> (base + 32 - row_hi);     // rows past it
        while (bits) {                                                   // warp-uniform
            const int b = __ffs(bits) - 1;
            bits &= bits - 1;
            const i64 v = base + b;
            i64 e0 = offs[v - row_lo], e1 = offs[v - row_lo + 1];
            if (e0 < edge_lo) e0 = edge_lo;                              // a split row's part
            if (e1 > edge_hi) e1 = edge_hi;
            for (i64 e = e0 + lane; e < e1; e += 32) {
                const u32 w = cols[e - edge_lo];
                if (visited[w >> 5] & (1u << (w & 31))) continue;
                if (level[w] != -1) continue;
                if (atomicCAS(&level[w], -1, depth) == -1) {
                    parent[w] = v;
                    atomicOr(&next[w >> 5], 1u << (w & 31));
                }
            }
        }
    }
}

// First block b with block_hi[b] > v (block_hi is nondecreasing; nb if none).
__device__ static i64 first_block_after(const i64* block_hi, i64 nb, i64 v)
{
    i64 lo = 0, hi = nb;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (block_hi[mid] > v) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// End of a level: next becomes the frontier (and joins visited), next is cleared; the new
// frontier's size is added into summary[nb] and summary[b] set for every block b whose row
// range [block_lo[b], block_hi[b]) holds a frontier vertex (a split row's vertex marks each of
// its blocks). The host clears summary before the launch and reads it back after: the level's
// one device-to-host copy.
extern "C" __global__ void advance(i64 words, u32* frontier, u32* next, u32* visited,
                                   const i64* __restrict__ block_lo,
                                   const i64* __restrict__ block_hi, i64 nb, int* summary)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 wd = (i64)blockIdx.x * blockDim.x + threadIdx.x; wd < words; wd += stride) {
        u32 x = next[wd];
        frontier[wd] = x;
        if (!x) continue;
        next[wd] = 0;
        visited[wd] |= x;
        atomicAdd(&summary[nb], __popc(x));
        i64 last_marked = -1;
        while (x) {
            const i64 v = (wd << 5) + (__ffs(x) - 1);
            x &= x - 1;
            for (i64 b = first_block_after(block_hi, nb, v); b < nb && block_lo[b] <= v; ++b) {
                if (b != last_marked) summary[b] = 1;   // a plain store: every writer writes 1
                last_marked = b;
            }
        }
    }
}
