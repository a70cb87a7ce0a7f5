#include "tiles.cuh"

// New search: levels -1 (the root's 0), bitmaps cleared, the root's bits set (r_root / c_root
// are padded local indices, -1 where the root is not in this rank's row / column range).
extern "C" __global__ void reset(i64 n_row_bits, i64 n_col_bits, int* level_row, int* level_col,
                                 u64* in_words, u64* visited, u64* assigned, i64 r_root,
                                 i64 c_root, i64* pred)
{
    const i64 n = n_row_bits > n_col_bits ? n_row_bits : n_col_bits;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        if (i < n_row_bits) {
            level_row[i] = i == r_root ? 0 : -1;
            if ((i & 63) == 0)
                in_words[i >> 6] = (r_root >= 0 && (r_root >> 6) == (i >> 6))
                                   ? (1ULL << (r_root & 63)) : 0ULL;
        }
        if (i < n_col_bits) {
            level_col[i] = i == c_root ? 0 : -1;
            pred[i] = -1;
            if ((i & 63) == 0) {
                visited[i >> 6] = (c_root >= 0 && (c_root >> 6) == (i >> 6))
                                  ? (1ULL << (c_root & 63)) : 0ULL;
                assigned[i >> 6] = 0ULL;
            }
        }
    }
}

// Global ids -> padded local ids of a row or column range: v's piece k by binary search in
// bounds[0..n_pieces]; it is the range's ((k - first_piece) / stride)-th piece.
extern "C" __global__ void local_ids(const u32* __restrict__ ids, i64 m,
                                     const i64* __restrict__ bounds, int n_pieces,
                                     int first_piece, int stride,
                                     const i64* __restrict__ word_offset,
                                     const i64* __restrict__ lo, u32* out)
{
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (i64)gridDim.x * blockDim.x) {
        const i64 v = ids[e];
        int a = 0, b = n_pieces;            // bounds[a] <= v < bounds[b]
        while (b - a > 1) {
            const int mid = (a + b) >> 1;
            if (__ldg(bounds + mid) <= v) a = mid; else b = mid;
        }
        const int idx = (a - first_piece) / stride;
        out[e] = (u32)(word_offset[idx] * 64 + v - lo[idx]);
    }
}

// Frontier bitmap -> queue of local row ids with their local degrees, in any order;
// ctl[0] += vertices, ctl[1] += edges; level[v] = lvl for every frontier vertex.
// One thread per word, positions by a warp scan of the popcounts and one atomic per warp.
extern "C" __global__ void compact(const u64* __restrict__ words, i64 nw,
                                   const i64* __restrict__ offsets, u32* __restrict__ q,
                                   i64* __restrict__ deg, u64* ctl, int* level, int lvl)
{
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < nw; base += (i64)gridDim.x * blockDim.x) {
        const i64 w = base + threadIdx.x;
        u64 bits = w < nw ? words[w] : 0ULL;
        u32 total;
        u64 pos = warp_reserve(__popcll(bits), ctl, total);
        if (total == 0) continue;                               // warp-uniform
        i64 dsum = 0;
        while (bits) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            const u64 v = (u64)w * 64 + k;
            const i64 d = offsets[v + 1] - offsets[v];
            q[pos] = (u32)v;
            deg[pos] = d;
            ++pos;
            dsum += d;
            level[v] = lvl;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) dsum += __shfl_down_sync(FULL, dsum, o);
        if ((threadIdx.x & 31) == 0 && dsum) atomicAdd(ctl + 1, (u64)dsum);
    }
}

// Expand: one CTA per TILE edges of the edge frontier (merrill's staging); a neighbour c not
// visited and not yet in out is atomicOr'd into out; ctl[2] += bits this launch flipped.
// pred (one rank only, else null): the edge that flips c's bit records its row vertex as c's
// parent, so no predecessor pass runs (with one rank the discoverer owns c).
extern "C" __global__ void __launch_bounds__(BLOCK)
expand_tiles(const i64* __restrict__ offsets, const u32* __restrict__ columns,
             const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
             const i64* __restrict__ tile_first, const u64* __restrict__ visited,
             u64* out, u64* ctl, i64* pred, const i64* __restrict__ row_global)
{
    __shared__ Tile tile;
    __shared__ u32 s_count;
    const u32 lane = threadIdx.x & 31;
    if (threadIdx.x == 0) s_count = 0;
    stage_tile(tile, offsets, qin, scan, q, tile_first);
    u32 v[ITEMS], c[ITEMS];
    bool keep[ITEMS];
    gather_tile(tile, offsets, columns, qin, scan, q, v, c, keep);
    u32 won = 0;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        if (!keep[it]) continue;
        const u64 bit = 1ULL << (c[it] & 63);
        const u64 w = c[it] >> 6;
        if ((__ldg(visited + w) & bit) || (__ldcg(out + w) & bit)) continue;
        if (!(atomicOr(out + w, bit) & bit)) {
            ++won;
            if (pred) pred[c[it]] = row_global[v[it]];
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) won += __shfl_down_sync(FULL, won, o);
    if (lane == 0 && won) atomicAdd(&s_count, won);
    __syncthreads();
    if (threadIdx.x == 0 && s_count) atomicAdd(ctl + 2, (u64)s_count);
}

// Contract (Fig. 5): assigned |= out & ~prefix (this rank claims what no rank above it in the
// grid column found), uni = out | prefix | rest; the parents the expand recorded for bits a rank
// above claimed are dropped, so pred >= 0 exactly where this rank assigned. rest: what ranks
// after this one found (1d's all-gather); 2d passes prefix again (its scan ends in a bcast).
extern "C" __global__ void contract(const u64* __restrict__ out, const u64* __restrict__ prefix,
                                    const u64* __restrict__ rest, i64 nw, u64* assigned,
                                    u64* uni, i64* pred)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        const u64 o = out[w], p = prefix[w];
        assigned[w] |= o & ~p;
        uni[w] = o | p | rest[w];
        u64 dup = o & p;
        while (dup) {
            const int k = __ffsll((long long)dup) - 1;
            dup &= dup - 1;
            pred[w * 64 + k] = -1;
        }
    }
}

// Levels (Fig. 6): visited |= uni, level_col = lvl for uni's bits; own_new += the bits of uni
// in words [own_lo, own_hi) (this rank's own piece: the next frontier's share it counts).
extern "C" __global__ void finish(const u64* __restrict__ uni, i64 nw, u64* visited,
                                  int* level_col, int lvl, i64 own_lo, i64 own_hi, u64* own_new)
{
    u64 count = 0;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 u = uni[w];
        if (!u) continue;
        visited[w] |= u;
        if (w >= own_lo && w < own_hi) count += __popcll(u);
        while (u) {
            const int k = __ffsll((long long)u) - 1;
            u &= u - 1;
            level_col[w * 64 + k] = lvl;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) count += __shfl_down_sync(FULL, count, o);
    if ((threadIdx.x & 31) == 0 && count) atomicAdd(own_new, count);
}

extern "C" __global__ void reached_degrees(const int* __restrict__ level, i64 n,
                                           const i64* __restrict__ offsets, u64* sum)
{
    u64 s = 0;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (i64)gridDim.x * blockDim.x)
        if (level[v] >= 0) s += (u64)(offsets[v + 1] - offsets[v]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(FULL, s, o);
    if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, s);
}
