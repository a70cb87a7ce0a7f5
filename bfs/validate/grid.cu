// Graph500 rules for a search distributed over an R x C grid, checked on each rank's GPU
// against its own block (bfs/validate/grid_gpu.py). Local ids are the padded row / column
// ids of the block's CSR; levels and parents are the owners' values, already exchanged.
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned char u8;

#define FULL 0xFFFFFFFFu
#define NONE 0xFFFFFFFFFFFFFFFFULL

// ctl slots
#define NEDGE 0        // directed entries with a reached source
#define SPREAD_AT 1    // first entry joining levels more than one apart
#define SPAN_AT 2      // first entry joining a reached and an unreached vertex
#define TREE_AT 3      // first tree edge (parent[v], v) whose levels do not differ by one
#define RANGE_AT 4     // first own vertex whose parent is no vertex
#define LEVEL_AT 5     // first own vertex whose level and parent disagree (or the root's level)
#define UNTIED_AT 6    // first own vertex whose tree edge is in no block
#define REACHED 7
#define DEPTH 8

// One entry u -> v of the block (r: u's padded row id, c: v's column id, e: its index in the
// structure read): the Graph500 edge rules, found[c] = 1 where u is v's parent.
__device__ __forceinline__ void check_entry(i64 r, u32 c, i64 e,
                                            const i64* __restrict__ row_global,
                                            const int* __restrict__ level_row,
                                            const int* __restrict__ level_col,
                                            const i64* __restrict__ parent_col, u8* found,
                                            u64* ctl, u64& reached_edges)
{
    const int lu = level_row[r], lv = level_col[c];
    if ((lu < 0) != (lv < 0)) { atomicMin(ctl + SPAN_AT, (u64)e); return; }
    if (lu < 0) return;
    ++reached_edges;
    if (lu - lv > 1 || lv - lu > 1) atomicMin(ctl + SPREAD_AT, (u64)e);
    if (parent_col[c] == row_global[r]) {
        found[c] = 1;
        if (lv != lu + 1) atomicMin(ctl + TREE_AT, (u64)e);
    }
}

// One warp per list of the block's structure (off, ends: n lists): every entry of each, by
// check_entry; the lists are rows and the ends columns (the CSR), or, BY_COLUMN, the lists
// columns and the ends rows (the CSC: 2d-do with the CSC alone).
template <bool BY_COLUMN>
__device__ __forceinline__ void check_entries(const i64* __restrict__ off,
                                              const u32* __restrict__ ends, i64 n,
                                              const i64* __restrict__ row_global,
                                              const int* __restrict__ level_row,
                                              const int* __restrict__ level_col,
                                              const i64* __restrict__ parent_col, u8* found,
                                              u64* ctl)
{
    const u32 lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    u64 reached_edges = 0;
    for (i64 m = warp; m < n; m += warps) {
        const i64 a = off[m], b = off[m + 1];
        for (i64 e = a + lane; e < b; e += 32) {
            const u32 x = ends[e];
            check_entry(BY_COLUMN ? (i64)x : m, BY_COLUMN ? (u32)m : x, e, row_global,
                        level_row, level_col, parent_col, found, ctl, reached_edges);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) reached_edges += __shfl_down_sync(FULL, reached_edges, o);
    if (lane == 0 && reached_edges) atomicAdd(ctl + NEDGE, reached_edges);
}

// Through the block's CSR: one warp per row, every entry u -> v of it.
extern "C" __global__ void check_block(const i64* __restrict__ off, const u32* __restrict__ cols,
                                       i64 n_rows, const i64* __restrict__ row_global,
                                       const int* __restrict__ level_row,
                                       const int* __restrict__ level_col,
                                       const i64* __restrict__ parent_col, u8* found, u64* ctl)
{
    check_entries<false>(off, cols, n_rows, row_global, level_row, level_col, parent_col, found,
                         ctl);
}

// Through the block's CSC (2d-do with the CSC alone): one warp per column v, every entry
// u -> v of it (u a row id).
extern "C" __global__ void check_block_by_column(const i64* __restrict__ off,
                                                 const u32* __restrict__ rows, i64 n_cols,
                                                 const i64* __restrict__ row_global,
                                                 const int* __restrict__ level_row,
                                                 const int* __restrict__ level_col,
                                                 const i64* __restrict__ parent_col, u8* found,
                                                 u64* ctl)
{
    check_entries<true>(off, rows, n_cols, row_global, level_row, level_col, parent_col, found,
                        ctl);
}

// One thread per vertex of the own piece [lo, hi) (padding, col_global < 0, skipped).
extern "C" __global__ void check_owned(const int* __restrict__ level_col,
                                       const i64* __restrict__ parent_col,
                                       const u8* __restrict__ found,
                                       const i64* __restrict__ col_global, i64 lo, i64 hi,
                                       i64 root, i64 n, u64* ctl)
{
    u64 reached = 0, depth = 0;
    for (i64 x = lo + (i64)blockIdx.x * blockDim.x + threadIdx.x; x < hi;
         x += (i64)gridDim.x * blockDim.x) {
        const i64 v = col_global[x];
        if (v < 0) continue;
        const int lv = level_col[x];
        const i64 p = parent_col[x];
        if (lv >= 0) { ++reached; if ((u64)lv > depth) depth = lv; }
        if (p < -1 || p >= n) { atomicMin(ctl + RANGE_AT, (u64)x); continue; }
        if (v == root) { if (lv != 0) atomicMin(ctl + LEVEL_AT, (u64)x); continue; }
        if ((p >= 0) != (lv >= 0)) { atomicMin(ctl + LEVEL_AT, (u64)x); continue; }
        if (p >= 0 && !found[x]) atomicMin(ctl + UNTIED_AT, (u64)x);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        reached += __shfl_down_sync(FULL, reached, o);
        const u64 d = __shfl_down_sync(FULL, depth, o);
        depth = d > depth ? d : depth;
    }
    if ((threadIdx.x & 31) == 0) {
        if (reached) atomicAdd(ctl + REACHED, reached);
        if (depth) atomicMax(ctl + DEPTH, depth);
    }
}
