#include "tiles.cuh"
#include "bottom_up.cuh"

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

// How a bottom-up level writes parent and level (the mode bits of bottom_up), so that no
// 32-byte sector of either array is written in part (a store of part of a sector costs it a
// DRAM read first: ~1 GB of a scale-26 search's first bottom-up level by Nsight Compute) and
// the search needs no reset pass over them (reset_search with clear_outputs = 0):
//  DENSE: the search's first bottom-up level writes every vertex of its words that no earlier
//    level reached: found ones (their parents staged in shared memory while the lanes search),
//    -1 for the isolated ones, parent -1 for the open ones not found; a word's 32 entries go
//    out in one store per array, whole sectors.
//  GUESS: an open vertex not found gets level next_level + 1, the level it has if the next
//    bottom-up level finds it (most vertices of a Kronecker graph are found in two levels).
//  LEVEL_KNOWN: the previous level was bottom-up and guessed, so a found vertex's level already
//    holds next_level and is not written again.
// complete_outputs marks what no level reached (-1) when the search ends.
#define DENSE 1
#define GUESS 2
#define LEVEL_KNOWN 4
#define OWN_VISITED 8    // BLOCK_IDS on a grid of one row: the level marks its finds visited itself
#define TAIL_COLLECT 1   // tail modes (decide_bottom_up)
#define TAIL_SPARSE 2
#define HEAD_K 4      // open vertices per lane in flight while bottom_up reads heads

// A bottom-up level's folded frontier (bottom_up.cuh's FoldedFrontier): fold[w] = the OR of the
// frontier's words w, w + F, w + 2F, ... (F = mask + 1, a power of two), and fold[F] = 1, where
// the frontier holds at most `most` vertices; else only fold[F] = 0 (a fold that dense would
// clear no check), and so where the level searches merrill-do's tail list (tail non-null, mode
// TAIL_SPARSE: no bitmap read). size: the frontier's size on the device (a chain's newest, read
// where the level runs: go[0]); null: host_size. One pass over the bitmap (128 MiB at scale 30
// on 1x4: ~45 us), each thread ORing its word's strided copies, independent loads.
extern "C" __global__ void fold_frontier(const u64* __restrict__ go,
                                         const u32* __restrict__ frontier, i64 n_words,
                                         u32* __restrict__ fold, i64 mask,
                                         const u64* __restrict__ size, u64 host_size, u64 most,
                                         const u64* __restrict__ tail)
{
    if (go && go[0] == 0) return;
    const bool on = (size ? size[0] : host_size) <= most && !(tail && (tail[0] & TAIL_SPARSE));
    if (blockIdx.x == 0 && threadIdx.x == 0) fold[mask + 1] = on ? 1u : 0u;
    if (!on) return;
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w <= mask;
         w += (i64)gridDim.x * blockDim.x) {
        u32 x = 0;
#pragma unroll 8
        for (i64 j = w; j < n_words; j += mask + 1) x |= __ldg(frontier + j);
        fold[w] = x;
    }
}

// One bottom-up level (bottom_up.cuh says why this shape): a warp takes 32 words of the
// visited bitmask (1024 vertices) and deals their open vertices to its lanes in two steps.
// 1. Heads (head non-null): every vertex's first row entry, a vertex-indexed copy read beside
//    the offsets (rows hubs first: its biggest hub), HEAD_K vertices per lane in flight. In the
//    big levels of a Kronecker graph most vertices found have their parent there (92% at the
//    first bottom-up level, ~100% at the next, scale 21), so they never touch their row: a
//    random DRAM sector and two dependent steps fewer each.
// 2. Rows: the vertices whose head missed (all open ones without head), dealt again, K per
//    lane, each looking through the rest of its row (find_in_frontier: the next HEAD entries,
//    then its own walk, then the warp on long rows). Apart, the short chains of step 1 no
//    longer wait for the long ones of step 2 in the same round.
// The isolated vertices start visited (reset), so they are never dealt. A found vertex writes
// parent (and level, see the modes above) and sets its bit in the warp's 32 new frontier words
// (shared memory), written out whole with the visited words at the end: no global atomics on
// bitmaps, no queue (a switch back to top-down builds one from the bitmap), no block barrier in
// the loop. Row offsets are 32-bit (O = u32) when the graph has fewer than 2^32 directed edges.
// Each block sums its counts once, at the end, into counter[0] (found), counter[1] (their
// degrees: the next frontier's edges) and read[0] (neighbours loaded: the level's edges
// examined). go: null for a level the host decided; a run-ahead level (decide_bottom_up) runs
// only while go[0] is 1. TAIL (tail, lists, list_len, list_cap): the tail lists, which
// decide_bottom_up's comment describes; with TAIL false none of that code is compiled in.
// BLOCK_IDS: the same level over one rank's block of a 2D grid (fu_2d_do_gpu.py): offsets and
// columns are the block CSC (column -> rows), frontier is the row range's In, visited and
// next_frontier (Out) the column range's; a found vertex's parent is its row's global id
// (row_global[p]); visited_init marks the columns with no in-edge in the block (never dealt);
// on a grid of several rows visited is left to the level's finish, after the grid column's
// union, and so are the levels (mode LEVEL_KNOWN); on a grid of one row the block holds every
// in-edge of its columns, so nothing is left to a union: the level marks visited itself
// (OWN_VISITED) and writes parent and level as merrill-do does (DENSE, GUESS). Row ids go to
// global ids by padded_to_global. The rest (head step, dealing, whole-word Out) is merrill-do's.
template <int K, int HEAD, typename O, int MIN_BLOCKS, bool TAIL, bool BLOCK_IDS>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
bottom_up(const O* __restrict__ offsets, const u32* __restrict__ columns, i64 n_words, i64 n,
          const u32* __restrict__ frontier, u32* __restrict__ next_frontier,
          u32* __restrict__ visited, const u32* __restrict__ visited_init,
          i64* __restrict__ parent, int* __restrict__ level, int next_level, int mode,
          u64* counter, u64* other_counter, u64* read, const u64* __restrict__ go,
          const u32* __restrict__ head, u64* tail, u32* __restrict__ lists,
          u32* __restrict__ list_len, i64 list_cap, const i64* __restrict__ row_word_offset,
          const i64* __restrict__ row_lo, int row_pieces, const u32* __restrict__ fold,
          i64 fold_mask)
{
    if (go && go[0] == 0) return;            // grid-uniform: decide_bottom_up ran before
    // the frontier's fold where fold_frontier made one for this level (its flag word)
    const FoldedFrontier in_bitmap{frontier, fold && fold[fold_mask + 1] ? fold : nullptr,
                                   (u32)fold_mask};
    // a found vertex's parent: the row's global id over a block (BLOCK_IDS), else the vertex
    auto row_id = [&](u32 p) -> i64 {
        return BLOCK_IDS ? padded_to_global(p, row_word_offset, row_lo, row_pieces) : (i64)p;
    };
    __shared__ u32 s_next[BLOCK];
    __shared__ u32 s_miss[BLOCK];            // open vertices whose head neighbour missed
    __shared__ u32 s_parent[BLOCK * 32];     // DENSE: the parents a warp's 1024 vertices found
    const u32 lane = threadIdx.x & 31;
    u32* next_words = s_next + (threadIdx.x & ~31u);
    u32* miss_words = s_miss + (threadIdx.x & ~31u);
    u32* found_parent = s_parent + (threadIdx.x & ~31u) * 32;
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    u64 n_found = 0, deg_found = 0, n_read = 0, n_open = 0;
    const i64 warps = ((i64)gridDim.x * BLOCK) >> 5;
    // the tail list (TAIL_COLLECT / TAIL_SPARSE, see decide_bottom_up): each warp keeps its
    // own segment of each of the two lists, so appends need no atomics
    const u64 tail_mode = TAIL ? tail[0] : 0;
    const i64 warp_id = ((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5;
    const i64 src = TAIL ? (i64)tail[1] : 0;
    u32* list_out = lists + ((1 - src) * warps + warp_id) * list_cap;
    u32 out_len = 0;                         // warp-uniform
    bool overflow = false;
    if (tail_mode & TAIL_SPARSE) {
        // the vertices still open are the warp's list: no pass over the bitmask, and the
        // frontier is the vertices of level next_level - 1 (no bitmap is kept in the tail)
        const u32* list_in = lists + (src * warps + warp_id) * list_cap;
        const u32 len_in = list_len[src * warps + warp_id];
        const LevelFrontier in_front{level, next_level - 1};
        for (u32 base = 0; base < len_in; base += 32 * K) {
            u32 v[K], h[K], p[K];
            bool on[K], hit[K], found[K];
            i64 deg[K], b[K], len[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const u32 idx = base + lane + 32 * k;
                on[k] = idx < len_in;
                v[k] = on[k] ? list_in[idx] : 0u;
            }
#pragma unroll
            for (int k = 0; k < K; ++k) {
                b[k] = on[k] ? (i64)offsets[v[k]] : 0;
                deg[k] = on[k] ? (i64)offsets[(u64)v[k] + 1] - b[k] : 0;
                h[k] = on[k] && head ? head[v[k]] : 0u;
            }
#pragma unroll
            for (int k = 0; k < K; ++k) {     // the head first, then the rest of the row
                const bool checked = head && deg[k] > 0;
                hit[k] = checked && in_front(h[k]);
                n_read += checked ? 1u : 0u;
                b[k] += checked ? 1 : 0;
                len[k] = hit[k] ? 0 : deg[k] - (checked ? 1 : 0);
            }
            find_in_frontier<K, HEAD>(columns, in_front, b, len, found, p, n_read);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                if (hit[k]) { found[k] = true; p[k] = h[k]; }
                if (on[k] && found[k]) {
                    parent[v[k]] = (i64)p[k];
                    if (!(mode & LEVEL_KNOWN)) level[v[k]] = next_level;
                    atomicOr(visited + (v[k] >> 5), 1u << (v[k] & 31));
                    ++n_found;
                    deg_found += (u64)deg[k];
                } else if (on[k] && (mode & GUESS)) {
                    level[v[k]] = next_level + 1;
                }
                const bool left = on[k] && !found[k];     // still open: the next list
                const u32 m = __ballot_sync(FULL, left);
                if (left) list_out[out_len + __popc(m & ((1u << lane) - 1u))] = v[k];
                out_len += __popc(m);
            }
        }
    } else for (i64 w0 = (((i64)blockIdx.x * BLOCK + threadIdx.x) >> 5) * 32; w0 < n_words;
         w0 += warps * 32) {
        const i64 my_word = w0 + lane;
        const u32 word = my_word >= n_words ? FULL
                       : visited[my_word] | (BLOCK_IDS ? visited_init[my_word] : 0u);
        const u32 open = ~word;
        u32 incl;
        const u32 total = deal_count(open, incl);
        if (TAIL) n_open += lane == 0 ? total : 0u;
        next_words[lane] = 0;
        miss_words[lane] = head ? 0u : open;
        __syncwarp();
        // a found vertex: its parent (staged for a DENSE level's whole-word writes) and its bit
        // in the next frontier; a vertex not found: the level it gets if the next one finds it
        auto settle = [&](bool found, u32 v, u32 owner, u32 p, i64 deg) {
            if (!found) {                    // DENSE levels write these with the whole word
                if ((mode & (GUESS | DENSE)) == GUESS) level[v] = next_level + 1;
                return;
            }
            if (mode & DENSE) {
                found_parent[owner * 32 + (v & 31)] = p;
            } else {
                parent[v] = row_id(p);
                if (!(mode & LEVEL_KNOWN)) level[v] = next_level;
            }
            atomicOr(next_words + owner, 1u << (v & 31));
            ++n_found;
            deg_found += (u64)deg;
        };
        // 1. heads: each open vertex's first neighbour from the vertex-indexed copy (two
        //    dependent loads, HEAD_K vertices per lane in flight); the misses with more row
        //    left go to step 2 as bits of miss_words
        if (head) {
            for (u32 base = 0; base < total; base += 32 * HEAD_K) {
                u32 v[HEAD_K], owner[HEAD_K], h[HEAD_K];
                bool on[HEAD_K];
                i64 deg[HEAD_K];
                deal_round(open, incl, total, base, w0, v, owner, on);
#pragma unroll
                for (int k = 0; k < HEAD_K; ++k) {
                    deg[k] = on[k] ? (i64)offsets[(u64)v[k] + 1] - (i64)offsets[v[k]] : 0;
                    h[k] = on[k] ? head[v[k]] : 0u;
                }
#pragma unroll
                for (int k = 0; k < HEAD_K; ++k) {
                    if (deg[k] <= 0) continue;
                    ++n_read;
                    const bool hit = in_bitmap(h[k]);
                    if (!hit && deg[k] > 1) atomicOr(miss_words + owner[k], 1u << (v[k] & 31));
                    else settle(hit, v[k], owner[k], h[k], deg[k]);
                }
            }
            __syncwarp();
        }
        // 2. rows: the vertices step 1 left (all open ones without head), K per lane, from the
        //    row's second entry (first without head)
        const u32 miss = miss_words[lane];
        u32 miss_incl;
        const u32 miss_total = deal_count(miss, miss_incl);
        const i64 skip = head ? 1 : 0;
        for (u32 base = 0; base < miss_total; base += 32 * K) {
            u32 v[K], owner[K];
            bool on[K];
            i64 b[K], len[K];
            deal_round(miss, miss_incl, miss_total, base, w0, v, owner, on);
#pragma unroll
            for (int k = 0; k < K; ++k) {
                b[k] = on[k] ? (i64)offsets[v[k]] + skip : 0;
                len[k] = on[k] ? (i64)offsets[(u64)v[k] + 1] - b[k] : 0;
            }
            bool found[K];
            u32 p[K];
            find_in_frontier<K, HEAD>(columns, in_bitmap, b, len, found, p, n_read);
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (on[k]) settle(found[k], v[k], owner[k], p[k], len[k] + skip);
        }
        __syncwarp();
        const u32 mask = next_words[lane];
        if (mode & DENSE) {
            // the chunk's 32 words one at a time, a vertex per lane: every vertex that no
            // earlier level reached (found now, open, or isolated) is written
            const u32 init = my_word < n_words ? visited_init[my_word] : FULL;
            for (int j = 0; j < 32 && w0 + j < n_words; ++j) {
                const u32 bit = 1u << lane;
                const u32 seen = __shfl_sync(FULL, word, j) & bit;
                const u32 found = __shfl_sync(FULL, mask, j) & bit;
                const u32 isolated = __shfl_sync(FULL, init, j) & bit;
                const i64 x = (w0 + j) * 32 + lane;
                if (x >= n || (seen && !isolated)) continue;
                parent[x] = found ? row_id(found_parent[j * 32 + lane]) : -1;
                level[x] = found ? next_level
                         : !seen && (mode & GUESS) ? next_level + 1 : -1;
            }
            __syncwarp();                // found_parent is rewritten for the next 32 words
        }
        if (my_word < n_words) {
            next_frontier[my_word] = mask;
            if (mask && (!BLOCK_IDS || (mode & OWN_VISITED))) visited[my_word] = word | mask;
        }
        if (tail_mode & TAIL_COLLECT) {  // the open vertices not found: the warp's list
            u32 left = open & ~mask, left_incl;
            const u32 left_total = deal_count(left, left_incl);
            if (out_len + left_total <= list_cap) {
                for (u32 at = out_len + left_incl - __popc(left); left; left &= left - 1)
                    list_out[at++] = (u32)(my_word * 32) + (u32)(__ffs(left) - 1);
            } else {
                overflow = true;
            }
            out_len += left_total;
        }
        __syncwarp();                    // next_words is cleared for the next 32 words
    }
    if (tail_mode && lane == 0) {
        list_len[(1 - src) * warps + warp_id] = out_len < list_cap ? out_len : (u32)list_cap;
        if (overflow) tail[2] = 1;
    }
    add_block_counts(n_found, deg_found, n_read, counter, read);
    if (TAIL) block_sum_add(n_open, tail + 4);   // a level over the bitmask: the open it dealt
}

// Run-ahead bottom-up levels (merrill_do.py, ahead): the host enqueues a chain of bottom-up
// levels without reading anything back, and between two of them this one thread applies
// Beamer's rule (the host's _step, same doubles) to the level that just ran: the next one runs
// while the frontier is nonempty and large (q >= n / beta) or still growing. chain (u64[8]):
// [0] go, [1] levels run, [2] q and [3] edges of the newest frontier, [4] edges found summed
// over the levels run, [5] the size of the frontier the next level would start from, [6] the
// size of the one the newest level started from (the host's last_q). first: the chain's first
// level (q_in: its frontier size), run by the host's decision.
//
// The tail (tail non-null: merrill_do.py enables it where the search never returns to top-down,
// beta = inf). After the big levels only a few vertices stay open (most of them unreachable),
// yet a level over the bitmask still sweeps every word (~40 us at scale 26). tail (u64[8]):
// [0] what the next level does: TAIL_COLLECT = sweep the bitmask and list the open vertices it
// does not find; TAIL_SPARSE = search only the listed vertices and list those still open;
// [1] the list the next level reads; [2] a collecting warp ran out of room; [3] open vertices
// after the last level; [4] open vertices the last bitmask sweep dealt (its kernel adds them);
// [5] sparse levels run. A level collects when at most collect_max vertices are open before
// it (so the lists, collect_max entries in all, can hold them unless one warp's share is
// over), and the next runs sparse when the list is complete and at most sparse_max long.
extern "C" __global__ void decide_bottom_up(const u64* __restrict__ counter, u64* chain,
                                            u64 q_in, int first, double n_over_beta,
                                            u64* tail, u64 sparse_max, u64 collect_max)
{
    if (first) { chain[0] = 1; chain[1] = 0; chain[4] = 0; chain[5] = q_in; }
    if (!chain[0]) return;
    const u64 q = counter[0], e = counter[1], before = chain[5];
    chain[1] += 1; chain[2] = q; chain[3] = e; chain[4] += e;
    chain[0] = q > 0 && e > 0 && ((double)q >= n_over_beta || q > before);
    chain[5] = q; chain[6] = before;
    if (tail) {
        const u64 mode = tail[0];
        const u64 open = ((mode & TAIL_SPARSE) ? tail[3] : tail[4]) - q;
        const bool listed = mode != 0 && !tail[2];   // this level listed every open vertex
        tail[1] ^= mode != 0;
        tail[5] += (mode & TAIL_SPARSE) != 0;
        tail[0] = listed && open <= sparse_max ? TAIL_SPARSE
                : open <= collect_max ? TAIL_COLLECT : 0;
        tail[2] = 0; tail[3] = open; tail[4] = 0;
    }
}

// The end of a search: parent = level = -1 for every vertex still open (the GUESS levels of
// those no level found); with isolated = 1 (no DENSE level ran and nothing was reset) also for
// the vertices that start visited without an edge. The root is never touched.
extern "C" __global__ void complete_outputs(const u32* __restrict__ visited,
                                            const u32* __restrict__ visited_init, i64 n_words,
                                            i64 n, u32 root, int isolated,
                                            i64* __restrict__ parent, int* __restrict__ level)
{
    for (i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x; w < n_words;
         w += (i64)gridDim.x * blockDim.x) {
        u32 unreached = ~visited[w] | (isolated ? visited_init[w] : 0u);
        if (w == (i64)(root >> 5)) unreached &= ~(1u << (root & 31));
        for (; unreached; unreached &= unreached - 1) {
            const i64 x = w * 32 + (__ffs(unreached) - 1);
            if (x >= n) break;
            parent[x] = -1;
            level[x] = -1;
        }
    }
}
