// GPU Kernel 1 (bfs/build/csr_gpu.py): the degrees, the fill of the columns, the sort's keys and
// their low words, for a CSR built from device edges: one GPU's or a grid block's.
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// Undirected degree of every vertex, self-loops excluded (2 atomics per non-loop edge); with
// directed = 1 the entries are already both directions of a block in local ids (2d's block CSR
// and CSC: a row id equal to a column id is no loop there), so each counts once, for its row.
extern "C" __global__ void count_degrees(const u32* __restrict__ src, const u32* __restrict__ dst,
                                         i64 m, u64* __restrict__ deg, int directed)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 u = src[i], v = dst[i];
        if (directed) atomicAdd(deg + u, 1ULL);
        else if (u != v) { atomicAdd(deg + u, 1ULL); atomicAdd(deg + v, 1ULL); }
    }
}

// The fill pass (one pass over the edges, whatever the graph's size): each directed entry takes
// the next free slot of its row (cursor[row]: the row's offset at first, its end after the pass)
// and writes its column there, in whatever order the atomics give; sort_rows then sorts every
// row in place (row_keys), so the CSR's bytes do not depend on that order. directed: as above.
// A slot at or past nnz is not written: edges other than the degrees' pass saw (a streamed
// source gone wrong) leave cursors off their rows' ends, which the caller checks, and never
// write outside the columns.
extern "C" __global__ void scatter_columns(const u32* __restrict__ src,
                                           const u32* __restrict__ dst, i64 m,
                                           u64* __restrict__ cursor, u32* __restrict__ columns,
                                           u64 nnz, int directed)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 u = src[i], v = dst[i];
        if (!directed && u == v) continue;
        u64 p = atomicAdd(cursor + u, 1ULL);
        if (p < nnz) columns[p] = v;
        if (directed) continue;
        p = atomicAdd(cursor + v, 1ULL);
        if (p < nnz) columns[p] = u;
    }
}

// Keys row<<32|col of the filled CSR's rows [r0, r1), written at offsets[row] - base (the rows'
// own places): the sort of one bucket in place. A warp per row, 32 entries a step.
extern "C" __global__ void row_keys(const i64* __restrict__ offsets,
                                    const u32* __restrict__ columns, i64 r0, i64 r1, i64 base,
                                    u64* __restrict__ keys)
{
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const u32 lane = threadIdx.x & 31;
    for (i64 r = r0 + (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5); r < r1; r += warps) {
        const i64 from = offsets[r], end = offsets[r + 1];
        for (i64 k = from + lane; k < end; k += 32)
            keys[k - base] = ((u64)r << 32) | columns[k];
    }
}

// Keys row<<32|col of the directed entries whose row is in [r0, r1), appended (in any order)
// at keys[*count...] with one atomicAdd per warp and step (directed: count_degrees' meaning). Every thread of a warp runs the
// same number of steps (the loop bound is block-uniform), as the ballots need.
extern "C" __global__ void bucket_keys(const u32* __restrict__ src, const u32* __restrict__ dst,
                                       i64 m, u64 r0, u64 r1, u64* __restrict__ keys,
                                       u64* count, int directed)
{
    const u32 lane = threadIdx.x & 31;
    for (i64 b = (i64)blockIdx.x * blockDim.x; b < m; b += (i64)gridDim.x * blockDim.x) {
        const i64 i = b + threadIdx.x;
        u64 u = 0, v = 0;
        bool e1 = false, e2 = false;
        if (i < m) {
            u = src[i]; v = dst[i];
            if (directed || u != v) {
                e1 = u >= r0 && u < r1;                   // entry u -> v
                e2 = !directed && v >= r0 && v < r1;      // entry v -> u
            }
        }
        const u32 m1 = __ballot_sync(0xFFFFFFFFu, e1), m2 = __ballot_sync(0xFFFFFFFFu, e2);
        const u32 total = __popc(m1) + __popc(m2);
        u64 base = 0;
        if (lane == 0 && total) base = atomicAdd(count, (u64)total);
        base = __shfl_sync(0xFFFFFFFFu, base, 0);
        const u32 below = (1u << lane) - 1u;
        if (e1) keys[base + __popc(m1 & below)] = (u << 32) | v;
        if (e2) keys[base + __popc(m1) + __popc(m2 & below)] = (v << 32) | u;
    }
}

// columns[i] = low 32 bits of keys[i] (the sorted bucket's column ids).
extern "C" __global__ void low_words(const u64* __restrict__ keys, i64 count,
                                     u32* __restrict__ columns)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (i64)gridDim.x * blockDim.x)
        columns[i] = (u32)(keys[i] & 0xFFFFFFFFULL);
}
