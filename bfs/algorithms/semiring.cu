#include "tiles.cuh"

// semiring on the GPU (semiring_gpu.py): y = A^T x over (select2nd, min) on a block of Fu's
// 2D grid, and the assignment of the level's new vertices. Vectors as semiring.py's: x (rows)
// holds a frontier vertex's own global id, -1 elsewhere; y (columns) the smallest frontier
// neighbour id, NONE elsewhere; parent (columns) -1 while unvisited (the product's mask).
#define NONE 0x7FFFFFFFFFFFFFFFLL

// The product, masked by the unvisited columns. A warp takes 32 rows at a time (one coalesced
// load of their x) and walks each frontier row among them together, 32 coalesced columns a
// step; the min is an atomicMin on y, so the result is the same whatever the order (the
// determinism the semiring is there for). y must hold NONE everywhere before.
extern "C" __global__ void __launch_bounds__(BLOCK)
spmv_select_min(const i64* __restrict__ x, i64 n_rows, const i64* __restrict__ offsets,
                const u32* __restrict__ cols, const i64* __restrict__ parent, i64* y)
{
    const u32 lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    for (i64 r0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; r0 < n_rows;
         r0 += warps * 32) {
        const i64 mine = r0 + lane < n_rows ? x[r0 + lane] : -1;
        u32 rows = __ballot_sync(FULL, mine >= 0);
        while (rows) {
            const int src = __ffs(rows) - 1;
            rows &= rows - 1;
            const i64 value = __shfl_sync(FULL, mine, src);
            const i64 b = offsets[r0 + src], e = offsets[r0 + src + 1];
            for (i64 k = b + lane; k < e; k += 32) {
                const u32 c = cols[k];
                if (parent[c] == -1 && value < y[c]) atomicMin((long long*)(y + c), value);
            }
        }
    }
}

// parent / level of every column vertex y found; the own piece's next x (own global ids, -1
// elsewhere), and its new vertices counted into count[0] (one atomic per warp).
extern "C" __global__ void __launch_bounds__(BLOCK)
assign(const i64* __restrict__ y, i64 n_cols, i64* __restrict__ parent, int* __restrict__ level,
       int depth, const i64* __restrict__ col_global, i64 own_start, i64 own_len,
       i64* __restrict__ next_own, u64* count)
{
    const u32 lane = threadIdx.x & 31;
    for (i64 c = (i64)blockIdx.x * BLOCK + threadIdx.x; c - lane < n_cols;
         c += (i64)gridDim.x * BLOCK) {
        const bool found = c < n_cols && y[c] != NONE;
        if (found) { parent[c] = y[c]; level[c] = depth; }
        const bool own = c >= own_start && c < own_start + own_len;
        if (own) next_own[c - own_start] = found ? col_global[c] : -1;
        const u32 m = __ballot_sync(FULL, found && own);
        if (lane == 0 && m) atomicAdd(count, (u64)__popc(m));
    }
}

// The search's start: x = -1 but the root's row, parent = -1 and level = -1 but the root's
// column (its own parent, level 0).
extern "C" __global__ void reset(i64 n_rows, i64 n_cols, i64* x, i64* parent, int* level,
                                 i64 root_row, i64 root_col, i64 root)
{
    const i64 n = n_rows > n_cols ? n_rows : n_cols;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        if (i < n_rows) x[i] = i == root_row ? root : -1;
        if (i < n_cols) { parent[i] = i == root_col ? root : -1; level[i] = i == root_col ? 0 : -1; }
    }
}

// pred: the parents of the own piece alone (every rank of the grid column holds all of the
// column range's parents; the gather and the validator take each vertex from one rank).
extern "C" __global__ void own_parents(const i64* __restrict__ parent, i64 n_cols, i64 own_start,
                                       i64 own_len, i64* __restrict__ pred)
{
    for (i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x; c < n_cols;
         c += (i64)gridDim.x * blockDim.x)
        pred[c] = c >= own_start && c < own_start + own_len ? parent[c] : -1;
}
