#include "tiles.cuh"

// New search: column levels -1 (the root's 0), bitmaps cleared, the root's bits set (r_root /
// c_root are padded local indices, -1 where the root is not in this rank's row / column range).
// No row levels: parents are recorded at discovery, and the validation gathers the row range's
// levels from the column ranges' (bfs.validate.grid_gpu).
extern "C" __global__ void reset(i64 n_row_bits, i64 n_col_bits, int* level_col,
                                 u64* in_words, u64* visited, i64 r_root, i64 c_root, i64* pred)
{
    const i64 n = n_row_bits > n_col_bits ? n_row_bits : n_col_bits;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        if (i < n_row_bits && (i & 63) == 0)
            in_words[i >> 6] = (r_root >= 0 && (r_root >> 6) == (i >> 6))
                               ? (1ULL << (r_root & 63)) : 0ULL;
        if (i < n_col_bits) {
            level_col[i] = i == c_root ? 0 : -1;
            pred[i] = -1;
            if ((i & 63) == 0)
                visited[i >> 6] = (c_root >= 0 && (c_root >> 6) == (i >> 6))
                                  ? (1ULL << (c_root & 63)) : 0ULL;
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
// *n_vertices += vertices, *n_edges += edges; go: null, or a chained level's flag. A warp takes
// 32 words and deals their bits out to its lanes (tiles.cuh), so the queue, degree and offset
// accesses of a warp are runs, not 32 scattered words; one atomic per warp reserves its queue
// slots, one per block adds the edges.
extern "C" __global__ void __launch_bounds__(BLOCK)
compact(const u64* __restrict__ words, i64 nw, const i64* __restrict__ offsets,
        u32* __restrict__ q, i64* __restrict__ deg, u64* n_vertices, u64* n_edges,
        const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;           // a chained level that does not run
    const u32 lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    u64 dsum = 0;
    for (i64 w0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; w0 < nw;
         w0 += warps * 32) {
        const u64 bits = w0 + lane < nw ? words[w0 + lane] : 0ULL;
        u32 incl;
        const u32 total = deal_count(bits, incl);
        if (total == 0) continue;                               // warp-uniform
        u64 pos = 0;
        if (lane == 0) pos = atomicAdd(n_vertices, (u64)total);
        pos = __shfl_sync(FULL, pos, 0);
        for_each_dealt_bit(bits, incl, total, w0, [&](u32 idx, i64 v) {
            const i64 d = offsets[v + 1] - offsets[v];
            q[pos + idx] = (u32)v;
            deg[pos + idx] = d;
            dsum += (u64)d;
        });
    }
    block_sum_add(dsum, n_edges);
}

// Expand: one CTA per TILE edges of the edge frontier (merrill's staging); a neighbour c not
// visited and not yet in out is atomicOr'd into out; ctl[2] += bits this tile flipped, and
// won(c, v) is called for each, v the frontier vertex whose edge flipped it (the searches'
// parents: Parents below, or push_tiles' pairs). Every thread of the CTA calls it
// (block-uniform tile).
template <typename Won>
__device__ __forceinline__ void expand_tile(i64 tile_idx, const i64* __restrict__ offsets,
                                            const u32* __restrict__ columns,
                                            const u32* __restrict__ qin,
                                            const i64* __restrict__ scan, i64 q,
                                            const i64* __restrict__ tile_first,
                                            const u64* __restrict__ visited, u64* out, u64* ctl,
                                            const Won& won_by)
{
    __shared__ Tile tile;
    __shared__ u32 s_count;
    const u32 lane = threadIdx.x & 31;
    if (threadIdx.x == 0) s_count = 0;
    stage_tile_at(tile, tile_idx, offsets, qin, scan, q, tile_first);
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
            won_by(c[it], v[it]);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) won += __shfl_down_sync(FULL, won, o);
    if (lane == 0 && won) atomicAdd(&s_count, won);
    __syncthreads();
    if (threadIdx.x == 0 && s_count) atomicAdd(ctl + 2, (u64)s_count);
    __syncthreads();                        // the tile and s_count are staged again next
}

// pred (may be null): the edge that flips c's bit records its row vertex's global id as c's
// parent, so no predecessor pass runs (contract drops the parents a rank above in the grid
// column claimed).
struct Parents {
    i64* pred;
    const i64* __restrict__ row_word_offset;
    const i64* __restrict__ row_lo;
    int row_pieces;
    __device__ __forceinline__ void operator()(u32 c, u32 v) const {
        if (pred) pred[c] = padded_to_global(v, row_word_offset, row_lo, row_pieces);
    }
};

// A CTA per tile, the grid sized by the host (it read the frontier's edges).
extern "C" __global__ void __launch_bounds__(BLOCK)
expand_tiles(const i64* __restrict__ offsets, const u32* __restrict__ columns,
             const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
             const i64* __restrict__ tile_first, const u64* __restrict__ visited,
             u64* out, u64* ctl, i64* pred, const i64* __restrict__ row_word_offset,
             const i64* __restrict__ row_lo, int row_pieces)
{
    expand_tile(blockIdx.x, offsets, columns, qin, scan, q, tile_first, visited, out, ctl,
                Parents{pred, row_word_offset, row_lo, row_pieces});
}

// 2d-do's push through the block's CSC alone (adjacency=csc, fu_2d_do_gpu's _pushed_level):
// expand_tiles from the column range's frontier into the row range's bitmap out, less seen,
// with no parents but those of the hub rows: a won row marked in hubs (a row of high degree,
// whose in-edges the resolve would otherwise walk, one warp a row, to the few frontier
// vertices of a top-down level: at scale 26 on 1x4 that resolve held level 0 for 4.5 ms) is
// appended to its piece's segment of pairs as (its offset in the piece, the frontier vertex's
// global id). Segment k starts at pairs + 2 * base[k]: a count (pairs[2 * base[k]], cleared by
// the host), then the pairs; it holds the piece's hub rows, and a row is won once a push, so
// it never overflows. The segments go to their pieces' ranks as they are (one alltoallv), and
// take_pairs settles them there. hubs null: every won row is a pair (a small push: segments of
// room for all the level's edges, _paired_level), and the bitmaps are not sent at all.
struct HubPairs {
    const u64* __restrict__ hubs;
    i64* pairs;
    const i64* __restrict__ base;
    const i64* __restrict__ row_word_offset;
    int row_pieces;
    const i64* __restrict__ col_word_offset;
    const i64* __restrict__ col_lo;
    int col_pieces;
    __device__ __forceinline__ void operator()(u32 c, u32 v) const {
        if (hubs && !((__ldg(hubs + (c >> 6)) >> (c & 63)) & 1ULL)) return;
        const int k = piece_of(c, row_word_offset, row_pieces);
        i64* seg = pairs + 2 * __ldg(base + k);
        const i64 at = (i64)atomicAdd((u64*)seg, 1ULL);
        seg[2 + 2 * at] = (i64)c - __ldg(row_word_offset + k) * 64;
        seg[3 + 2 * at] = padded_to_global(v, col_word_offset, col_lo, col_pieces);
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
push_tiles(const i64* __restrict__ offsets, const u32* __restrict__ rows,
           const u32* __restrict__ qin, const i64* __restrict__ scan, i64 q,
           const i64* __restrict__ tile_first, const u64* __restrict__ seen, u64* out, u64* ctl,
           const u64* __restrict__ hubs, i64* pairs, const i64* __restrict__ base,
           const i64* __restrict__ row_word_offset, int row_pieces,
           const i64* __restrict__ col_word_offset, const i64* __restrict__ col_lo,
           int col_pieces)
{
    expand_tile(blockIdx.x, offsets, rows, qin, scan, q, tile_first, seen, out, ctl,
                HubPairs{hubs, pairs, base, row_word_offset, row_pieces, col_word_offset,
                         col_lo, col_pieces});
}

// The own piece's side of push_tiles' pairs: n_segments segments of 2 * (cap + 1) words, one
// from each rank of the grid row. A pair's row (column first_col + its offset, in the column
// range) that is no candidate in skip is dropped; else the first pair of it, by paired's bit,
// settles it: its parent, its bit in paired (which the host ORs into skip, so the resolve does
// not walk it, and into out after the resolve), found[0] += 1 and found[1] += its block CSC
// degree (the bottom-up kernel's sums, which level_counts moves).
extern "C" __global__ void take_pairs(const i64* __restrict__ segs, int n_segments, i64 cap,
                                      i64 first_col, const u64* __restrict__ skip,
                                      u64* paired, i64* pred,
                                      const i64* __restrict__ offsets, u64* found)
{
    const i64 stride = 2 * (cap + 1);
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n_segments * cap;
         i += (i64)gridDim.x * blockDim.x) {
        const i64* seg = segs + (i / cap) * stride;
        const i64 at = i % cap;
        if (at >= seg[0]) continue;
        const i64 off = seg[2 + 2 * at];
        const u64 bit = 1ULL << (off & 63);
        if (skip[off >> 6] & bit) continue;
        if (atomicOr(paired + (off >> 6), bit) & bit) continue;
        const i64 col = first_col + off;
        pred[col] = seg[3 + 2 * at];
        atomicAdd(found, 1ULL);
        atomicAdd(found + 1, (u64)(offsets[col + 1] - offsets[col]));
    }
}

// The rows of at least `least` entries of degree (hub rows, push_tiles), one bit a row, and
// count[k] += those of piece k (pieces by word_offset): a thread a word.
extern "C" __global__ void hub_rows(const i64* __restrict__ degree, i64 nw, i64 least,
                                    const i64* __restrict__ word_offset, int pieces, u64* hubs,
                                    u64* count)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 bits = 0;
        for (int b = 0; b < 64; ++b) bits |= (u64)(degree[w * 64 + b] >= least) << b;
        hubs[w] = bits;
        if (bits) atomicAdd(count + piece_of(w * 64, word_offset, pieces), (u64)__popcll(bits));
    }
}

// How many rows have a degree in [2^b, 2^(b+1)) (b = 0 .. 62; degree 0 in none): the host
// picks the hub rows' least degree from it (hub_rows).
extern "C" __global__ void degree_classes(const i64* __restrict__ degree, i64 n, u64* classes)
{
    __shared__ u64 local[64];
    if (threadIdx.x < 64) local[threadIdx.x] = 0;
    __syncthreads();
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        const i64 d = degree[i];
        if (d > 0) atomicAdd(local + (63 - __clzll(d)), 1ULL);
    }
    __syncthreads();
    if (threadIdx.x < 64 && local[threadIdx.x])
        atomicAdd(classes + threadIdx.x, local[threadIdx.x]);
}

// The same with the queue's length read from the device (*q_ptr) and its edges from the scan:
// a fixed grid takes the tiles grid-stride (a chained top-down level, tiles.cuh's *_q kernels).
// examined (non-null): = the frontier's edges here, every one of which the level reads (2d-do's
// edges-examined word, counts[3]). go: a chained level's flag.
extern "C" __global__ void __launch_bounds__(BLOCK)
expand_tiles_q(const i64* __restrict__ offsets, const u32* __restrict__ columns,
               const u32* __restrict__ qin, const i64* __restrict__ scan,
               const u64* __restrict__ q_ptr, const i64* __restrict__ tile_first,
               const u64* __restrict__ visited, u64* out, u64* ctl, i64* pred,
               const i64* __restrict__ row_word_offset, const i64* __restrict__ row_lo,
               int row_pieces, u64* examined, const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;
    const i64 q = (i64)*q_ptr;
    const i64 edges = q ? scan[q - 1] : 0;
    if (examined && blockIdx.x == 0 && threadIdx.x == 0) *examined = (u64)edges;
    const i64 tiles = (edges + TILE - 1) / TILE;
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x)     // block-uniform
        expand_tile(t, offsets, columns, qin, scan, q, tile_first, visited, out, ctl,
                    Parents{pred, row_word_offset, row_lo, row_pieces});
}

// Contract (Fig. 5): uni = out | prefix | rest, and the parents the expand recorded for bits a
// rank above in the grid column found (prefix) are dropped, so pred >= 0 exactly where this rank
// assigned the vertex: Fu's Assigned bitmap, kept as parents (the CPU 2d keeps the bitmap for its
// predecessor pass; the GPU records parents at discovery and needs none). rest: what ranks after
// this one found (1d's all-gather); 2d passes prefix again (its scan ends in a bcast).
extern "C" __global__ void contract(const u64* __restrict__ out, const u64* __restrict__ prefix,
                                    const u64* __restrict__ rest, i64 nw, u64* uni, i64* pred)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        const u64 o = out[w], p = prefix[w];
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
// degrees (2d-do, else null): *unvisited -= the degrees in it of uni's vertices (the block CSC
// edges of the level's new vertices, taken off the unvisited count of Beamer's switch) in the
// same pass. Bits dealt out to the lanes as in compact; one atomic per block for each sum.
// go: null, or a chained level's flag (decide_levels): the level does nothing unless go[0].
extern "C" __global__ void __launch_bounds__(BLOCK)
finish(const u64* __restrict__ uni, i64 nw, u64* visited, int* level_col, int lvl, i64 own_lo,
       i64 own_hi, u64* own_new, const i64* __restrict__ degrees, u64* unvisited,
       const u64* __restrict__ go)
{
    if (go && go[0] == 0) return;           // a chained level past the search's end (see below)
    const u32 lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    u64 count = 0, reached = 0;
    for (i64 w0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; w0 < nw;
         w0 += warps * 32) {
        const i64 w = w0 + lane;
        const u64 u = w < nw ? uni[w] : 0ULL;
        if (u) {
            visited[w] |= u;
            if (w >= own_lo && w < own_hi) count += __popcll(u);
        }
        u32 incl;
        const u32 total = deal_count(u, incl);
        for_each_dealt_bit(u, incl, total, w0, [&](u32, i64 v) {
            level_col[v] = lvl;
            if (degrees) reached += (u64)(degrees[v + 1] - degrees[v]);
        });
    }
    block_sum_add(count, own_new);
    if (degrees) block_sum_add(0ULL - reached, unvisited);
}

// *sum -= (modulo 2^64) the degrees offsets[v + 1] - offsets[v] of the vertices v whose bits are
// set in words[0, nw): at a search's start, 2d-do's unvisited block-CSC entries less the root's
// (finish subtracts each level's new vertices itself). One thread per word, one atomic per block.
extern "C" __global__ void subtract_degrees(const u64* __restrict__ words, i64 nw,
                                            const i64* __restrict__ offsets, u64* sum)
{
    u64 s = 0;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x) {
        u64 bits = words[w];
        while (bits) {
            const int k = __ffsll((long long)bits) - 1;
            bits &= bits - 1;
            const i64 v = w * 64 + k;
            s += (u64)(offsets[v + 1] - offsets[v]);
        }
    }
    block_sum_add(0ULL - s, sum);           // the negated sums add up to minus their total
}

// A new search whose parent and level arrays need no reset pass (2d-do on a grid of one row:
// its first bottom-up level writes every entry no earlier level reached, whole sectors, and
// complete_outputs the rest; merrill_do.cu's DENSE): In holds the root, visited the root and
// the closed columns (init: no in-edge, as merrill-do's isolated vertices start visited, so that
// complete_outputs leaves the entries DENSE wrote for them), and only the root's entries are set.
extern "C" __global__ void reset_bitmaps(i64 row_words, i64 col_words, int* level_col,
                                         u64* in_words, u64* visited, i64 r_root, i64 c_root,
                                         i64* pred, const u64* __restrict__ init)
{
    const i64 n = row_words > col_words ? row_words : col_words;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < n;
         w += (i64)gridDim.x * blockDim.x) {
        if (w < row_words)
            in_words[w] = (r_root >= 0 && (r_root >> 6) == w) ? (1ULL << (r_root & 63)) : 0ULL;
        if (w < col_words)
            visited[w] = init[w]
                       | ((c_root >= 0 && (c_root >> 6) == w) ? (1ULL << (c_root & 63)) : 0ULL);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && c_root >= 0) { level_col[c_root] = 0; pred[c_root] = -1; }
}

// Chains of bottom-up levels (fu_2d_do_gpu.py): the host enqueues a chain's levels (kernels and
// NCCL exchanges) back to back and reads the control block once, at the chain's end; between
// two levels this one thread applies Beamer's bottom-up rule (fu_2d_do.DirectionSwitch, same
// doubles) to the all-reduced totals. chain (u64): [0] go, [1] levels run, [2] the frontier the
// newest level started from, [3] the device clock (%globaltimer, ns) at the chain's start, then
// 5 words a level run: the totals after it [n_f, m_f, unvisited edges, edges examined] and the
// clock at its decision. A level past go = 0 launches its kernels, which return at once, and
// its exchanges, which move the same buffers again: the state stays the last run level's. The
// clock is how the levels of a chain replayed as one CUDA graph are timed apart (an event
// recorded into a graph is no timestamp); one thread reads it once a level.
__device__ __forceinline__ u64 device_clock_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#define CHAIN_LOG 4     // words before the per-level log
#define LEVEL_WORDS 5   // a level's log: 4 totals, the clock

__device__ __forceinline__ void log_level(const u64* __restrict__ totals, u64* chain, u64 run)
{
    u64* entry = chain + CHAIN_LOG + LEVEL_WORDS * run;
    for (int j = 0; j < 4; ++j) entry[j] = totals[j];
    entry[4] = device_clock_ns();
}

extern "C" __global__ void chain_start(u64* chain, u64 frontier)
{
    chain[0] = 1; chain[1] = 0; chain[2] = frontier; chain[3] = device_clock_ns();
}

extern "C" __global__ void decide_levels(const u64* __restrict__ totals, u64* chain,
                                         double n_over_beta)
{
    if (!chain[0]) return;
    const u64 run = chain[1], f = totals[0];
    log_level(totals, chain, run);
    chain[1] = run + 1;
    chain[0] = f > 0 && ((double)f >= n_over_beta || f > chain[2]);
    chain[2] = f;
}

// A chained bottom-up level's counts for the all-reduce, from the kernel's sums lvl (u64[5]:
// [0] found, [1] their block CSC degrees, [2:4] unused, [4] in-edges read), which it clears:
// counts[3] = edges examined; on a grid of one row (own = 1: the column range is the own
// piece, there is no union) also counts[0] = found and counts[2] -= their degrees, which
// finish does after the union on taller grids (counts[0] cleared for it here).
extern "C" __global__ void level_counts(const u64* __restrict__ go, u64* lvl, u64* counts,
                                        int own)
{
    if (!go[0]) return;
    counts[0] = own ? lvl[0] : 0;
    counts[1] = 0;
    if (own) counts[2] -= lvl[1];
    counts[3] = lvl[4];
    lvl[0] = 0; lvl[1] = 0; lvl[4] = 0;
}

// Level 0 of a search: the root's row of the block (r_root: its padded local row id, -1 where
// this rank's row range lacks it) -> Out minus visited, each new column's parent the root; a
// grid-stride pass over one row, so the host needs neither the row's length nor a compaction of
// In (the level's two reads of the device) before it launches. counts[3] = the entries read
// (the level's edges examined: the whole row, as a top-down level reads).
extern "C" __global__ void expand_root(const i64* __restrict__ offsets,
                                       const u32* __restrict__ columns, i64 r_root,
                                       i64 root_global, const u64* __restrict__ visited, u64* out,
                                       i64* pred, u64* counts)
{
    const i64 b = r_root >= 0 ? offsets[r_root] : 0, e = r_root >= 0 ? offsets[r_root + 1] : 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[3] = (u64)(e - b);
    for (i64 i = b + (i64)blockIdx.x * blockDim.x + threadIdx.x; i < e;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 c = columns[i];
        const u64 bit = 1ULL << (c & 63);
        if ((__ldg(visited + (c >> 6)) & bit) || (__ldcg(out + (c >> 6)) & bit)) continue;
        if (!(atomicOr(out + (c >> 6), bit) & bit)) pred[c] = root_global;
    }
}

// A chained top-down level (fu_2d_do_gpu.py's _top_down_chain), where it runs (go[0]):
// clear_words zeroes Out before its expand; level_start zeroes the compaction's counter (ctl[0])
// and Out-bits word (ctl[2]) and the counts finish and the next compaction add to
// (counts[0:2]), once the expand has read ctl[0].
extern "C" __global__ void clear_words(const u64* __restrict__ go, u64* words, i64 nw)
{
    if (go[0] == 0) return;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < nw;
         w += (i64)gridDim.x * blockDim.x)
        words[w] = 0;
}

extern "C" __global__ void level_start(const u64* __restrict__ go, u64* ctl, u64* counts)
{
    if (go[0] == 0) return;
    ctl[0] = 0; ctl[2] = 0; counts[0] = 0; counts[1] = 0;
}

// Between two chained top-down levels: Beamer's top-down rule (fu_2d_do.DirectionSwitch, same
// doubles) on the all-reduced totals [n_f, m_f, unvisited edges, edges examined]: the next
// level runs while the frontier is nonempty and stays top-down (m_f <= (m_f + m_u) / alpha, or
// m_f under the bottom-up floor).
// chain as decide_levels's: [0] go, [1] levels run, [2] the last frontier, [3] the start clock,
// then 5 words a level.
extern "C" __global__ void decide_top_down(const u64* __restrict__ totals, u64* chain,
                                           double alpha, i64 floor)
{
    if (!chain[0]) return;
    const u64 run = chain[1], f = totals[0], m_f = totals[1];
    log_level(totals, chain, run);
    chain[1] = run + 1;
    chain[0] = f > 0 && !((double)m_f > (double)(m_f + totals[2]) / alpha
                          && (i64)m_f >= floor);
    chain[2] = f;
}

// A level loop's last frontier (level_loop.cu's level_loop_peers: rows in segments, one a source
// rank, each entry tag << 32 | row) back into In's bits, where the host's levels take it up;
// In cleared before.
extern "C" __global__ void queue_to_bits(const u64* __restrict__ entries, i64 n, u64* in_words)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 r = (u32)entries[i];
        atomicOr(in_words + (r >> 6), 1ULL << (r & 63));
    }
}
