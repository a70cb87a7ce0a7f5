// bench/probes/halo_rounds.py's kernels: the rounds of a search whose ranks meet every K levels
// (ghost zones), each rank's K levels run by level_loop.cu's one-GPU level_loop over its own
// vertices and the K-hop halo around them. Local ids: the own vertices first, then the halo's.
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// A search's start on one rank: parent and level -1, visited clear, both loop-state blocks and
// both counters zeroed; the root (a local id, or -1 where it is not in this rank's vertices)
// visited at level 0, its own parent, the first round's queue.
extern "C" __global__ void halo_reset(i64 n, i64 n_words, u32* visited, int* level, i64* parent,
                                      u32* queue, i64* degree, const i64* offsets, i64 root,
                                      u64* state, i64 state_words, u64* count) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n || i < n_words
         || i < state_words; i += stride) {
        if (i < n) {
            level[i] = i == root ? 0 : -1;
            parent[i] = i == root ? root : -1;
        }
        if (i < n_words)
            visited[i] = root >= 0 && i == (root >> 5) ? 1u << (root & 31) : 0u;
        if (i < state_words) state[i] = 0;
        if (i < 2) count[i] = 0;
        if (i == 0 && root >= 0) {
            queue[0] = (u32)root;
            degree[0] = offsets[root + 1] - offsets[root];
        }
    }
}

// The levels of the own vertices another rank holds in its halo (levels ride as int32: -1 not
// reached yet).
extern "C" __global__ void halo_pack(const int* level, const i64* ids, i64 m, int* out) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
        out[i] = level[ids[i]];
}

// After a round of K levels (ending at level `next_level`): the halo's true state from its
// owners (visited where the owner reached it; the local search only ever reaches a halo vertex
// at its true level or later, so its bits are a subset), and the next round's queue: the own
// vertices of the round's last frontier (the loop's, in qa or qb by the parity of the levels it
// ran) and the halo vertices whose owners reached them at next_level. state: this round's loop
// block (q at [16], levels run at [18]); the next round's block and counter zeroed here.
extern "C" __global__ void halo_merge(const u64* state, const u32* qa, const u32* qb,
                                      i64 n_own, const int* got, const u32* halo_ids, i64 m,
                                      int next_level, u32* visited, int* level,
                                      const i64* offsets, u32* qout, i64* dout, u64* count,
                                      u64* next_state, i64 state_words, u64* next_count) {
    const i64 q = (i64)state[16];
    const u32* last = (state[18] & 1) ? qb : qa;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < q + m || i < state_words;
         i += stride) {
        if (i < state_words) next_state[i] = 0;
        if (i == 0) *next_count = 0;
        if (i >= q + m) continue;
        u32 v;
        bool keep;
        if (i < q) {
            v = last[i];
            keep = (i64)v < n_own;
        } else {
            const i64 k = i - q;
            const int lv = got[k];
            v = halo_ids[k];
            if (lv >= 0) {
                atomicOr(visited + (v >> 5), 1u << (v & 31));
                level[v] = lv;
            }
            keep = lv == next_level;
        }
        if (keep) {
            const u64 pos = atomicAdd(count, 1ULL);
            qout[pos] = v;
            dout[pos] = offsets[(u64)v + 1] - offsets[v];
        }
    }
}
