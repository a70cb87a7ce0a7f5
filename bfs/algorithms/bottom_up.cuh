// Bottom-up BFS levels: merrill_do.cu's bottom_up, merrill-do over a graph and 2d-do over one
// rank's block (BLOCK_IDS). Include after tiles.cuh (types, FULL, dealing).
//
// Why this shape. A bottom-up level's cost is latency, not bytes: an open vertex's steps wait
// on one another (row offsets -> its first neighbours -> their frontier bits), so what counts
// is how many vertices are in flight. A warp takes 32 words of the visited bitmask at a time
// (one coalesced load, a word per lane) and deals the open vertices among them (bits clear) out
// to its lanes, K per lane in flight, whatever their density: a warp per word kept only the
// word's few open lanes busy once most vertices were visited, and swept every fully visited
// word with a round trip of its own (BENCHMARKS.md, merrill-do's versions).

template <typename W>
__device__ __forceinline__ bool in_frontier(const W* __restrict__ frontier, u32 u) {
    const u32 bits = 8 * sizeof(W);
    return (__ldg(frontier + u / bits) >> (u % bits)) & 1u;
}

// The frontier find_in_frontier looks in: a bitmap (one bit a vertex), behind its fold where
// there is one. Fold bit u mod (32 * (mask + 1)) is the OR of every frontier bit congruent to it
// (merrill_do.cu's fold_frontier), so a clear fold bit means u is not in the frontier. Why: a
// level with a small frontier (scale 30 on 1x4: 92 thousand vertices in a 128 MiB bitmap, its
// first bottom-up level 13.7 ms of a 27.5 ms search) spends its time on the vertices it does
// not find, each walking its whole row, every entry a check of a random bit: a DRAM sector where
// the bitmap is far larger than L2. Their checks now hit the 1 MiB fold in L2 (~1% of its bits
// set at that level), and only the found ones read the bitmap too. fold null: the bitmap alone.
struct FoldedFrontier {
    const u32* __restrict__ bits;
    const u32* __restrict__ fold;
    u32 mask;
    __device__ __forceinline__ bool operator()(u32 u) const {
        if (fold && !((__ldg(fold + ((u >> 5) & mask)) >> (u & 31)) & 1u)) return false;
        return in_frontier(bits, u);
    }
};

// ... or the vertices whose level is depth (merrill-do's tail levels, which keep no bitmap:
// every vertex not reached has a level other than depth, merrill_do.cu says why)
struct LevelFrontier {
    const int* __restrict__ level;
    int depth;
    __device__ __forceinline__ bool operator()(u32 u) const { return level[u] == depth; }
};

#define WALK_CAP 64   // neighbours a lane reads on its own; longer rows the warp walks together

// For K rows per lane ([b, b + len) of cols; len 0 for none): a neighbour in the frontier
// bitmap, found[k] / p[k]. First the rows' first HEAD entries with independent loads (most
// vertices of a Kronecker graph meet a frontier neighbour there), then each lane on its own,
// 8 loads a step, up to WALK_CAP, then rows longer still by the whole warp, 32 coalesced
// entries a step, one row at a time. n_read += the entries loaded. Every lane must call this.
template <int K, int HEAD, typename F>
__device__ __forceinline__ void find_in_frontier(const u32* __restrict__ cols, const F& in_front,
                                                 const i64 (&b)[K], const i64 (&len)[K],
                                                 bool (&found)[K], u32 (&p)[K], u64& n_read) {
    const u32 lane = threadIdx.x & 31;
    u32 u[K][HEAD];
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int t = 0; t < HEAD; ++t) u[k][t] = t < len[k] ? cols[b[k] + t] : 0u;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int hit = HEAD;
#pragma unroll
        for (int t = HEAD - 1; t >= 0; --t)
            if (t < len[k] && in_front(u[k][t])) hit = t;
        found[k] = hit < HEAD;
        p[k] = 0;
#pragma unroll
        for (int t = 0; t < HEAD; ++t) if (t == hit) p[k] = u[k][t];
        n_read += (u64)(len[k] < HEAD ? len[k] : HEAD);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const i64 stop = len[k] < WALK_CAP ? len[k] : WALK_CAP;
        for (i64 t0 = HEAD; !found[k] && t0 < stop; t0 += 8) {
            u32 x[8];
#pragma unroll
            for (int t = 0; t < 8; ++t) x[t] = t0 + t < stop ? cols[b[k] + t0 + t] : 0u;
            int hit = 8;
#pragma unroll
            for (int t = 7; t >= 0; --t)
                if (t0 + t < stop && in_front(x[t])) hit = t;
#pragma unroll
            for (int t = 0; t < 8; ++t) if (t == hit) { p[k] = x[t]; found[k] = true; }
            n_read += (u64)(stop - t0 < 8 ? stop - t0 : 8);
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
        u32 rest = __ballot_sync(FULL, !found[k] && len[k] > WALK_CAP);
        while (rest) {
            const int src = __ffs(rest) - 1;
            rest &= rest - 1;
            const i64 rb = __shfl_sync(FULL, b[k], src);
            const i64 re = rb + __shfl_sync(FULL, len[k], src);
            for (i64 k0 = rb + WALK_CAP; k0 < re; k0 += 32) {
                const i64 q = k0 + lane;
                const u32 x = q < re ? cols[q] : 0u;
                const u32 m = __ballot_sync(FULL, q < re && in_front(x));
                if (lane == (u32)src) n_read += (u64)(re - k0 < 32 ? re - k0 : 32);
                if (m) {
                    const u32 px = __shfl_sync(FULL, x, __ffs(m) - 1);
                    if (lane == (u32)src) { found[k] = true; p[k] = px; }
                    break;
                }
            }
        }
    }
}
