// Claiming a vertex in a level: the visited bit read, and the claim whose one winner writes the
// vertex's parent and level. Shared by merrill's kernels (merrill.cu) and the level loop
// (level_loop.cu).
#ifndef BFS_CLAIM_CUH    // inlined as text (bfs.device.cuda_source): once per source
#define BFS_CLAIM_CUH

// Status lookup: the visited bit, read through L2 (another SM may have set it this level), or
// through L1 as well with L1 = true (order="degree": the hubs' bits share a few hot lines; with
// the graph's own ids L1 gained nothing, see BENCHMARKS.md). A stale 0 only costs a failed
// claim below: the atomic on the bit (or the CAS on parent) is the arbiter.
template <bool L1 = false>
__device__ __forceinline__ bool is_visited(const u32* visited, u32 w) {
    return ((L1 ? __ldca(visited + (w >> 5)) : __ldcg(visited + (w >> 5))) >> (w & 31)) & 1u;
}

// Claim w for parent v by CAS on the 64-bit parent (the original arbiter, kept as a measured
// variant): every surviving edge does a random 8-byte atomic in the DRAM-resident parent array.
__device__ __forceinline__ bool claim_cas(u32 w, u32 v, i64* parent, int* level, u32* visited,
                                          int next_level) {
    u64 old = atomicCAS((u64*)(parent + w), ~0ULL, (u64)v);
    if (old != ~0ULL) return false;
    level[w] = next_level;
    atomicOr(visited + (w >> 5), 1u << (w & 31));
    return true;
}

// Claim w by atomicOr on its visited bit: the bitmask (n/8 bytes) stays in L2, so losers never
// touch parent; the one caller that flips the bit writes parent and level with plain stores.
// out_id (order="degree"): the search runs on degree-ordered ids and writes its output under the
// graph's own ids, out_id[x] being x's original id; null when the CSR has the graph's ids.
// claim_all claims several vertices for one thread (the level loop's lanes, LOOP_UNROLL columns
// a step): every atomicOr is issued before any result is used, so their round trips overlap;
// then the winners write parent and level. Claimed one after another (each atomic behind the
// branch on the one before, since a winner writes), a 2000 x 2000 lattice's search took 1.12x
// as long on one GPU (bench/results/HISTORY.md, "A lane's claims issued together"). won[k]:
// w[k] was claimed here (on[k] and its bit was 0).
template <int K>
__device__ __forceinline__ void claim_all(const bool (&on)[K], const u32 (&w)[K], u32 v,
                                          i64* parent, int* level, u32* visited,
                                          int next_level, const u32* __restrict__ out_id,
                                          bool (&won)[K]) {
    u32 old[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
        old[k] = on[k] ? atomicOr(visited + (w[k] >> 5), 1u << (w[k] & 31)) : ~0u;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        won[k] = !((old[k] >> (w[k] & 31)) & 1u);
        if (!won[k]) continue;
        const u32 ow = out_id ? out_id[w[k]] : w[k];
        parent[ow] = (i64)(out_id ? out_id[v] : v);
        level[ow] = next_level;
    }
}

__device__ __forceinline__ bool claim(u32 w, u32 v, i64* parent, int* level, u32* visited,
                                     int next_level, const u32* __restrict__ out_id = nullptr) {
    const bool on[1] = {true};
    const u32 ws[1] = {w};
    bool won[1];
    claim_all<1>(on, ws, v, parent, level, visited, next_level, out_id, won);
    return won[0];
}
#endif
