// The level loop: level after level of a small frontier on the whole grid, in one persistent
// launch, for merrill and merrill-do on one GPU (level_loop) and for 2d-do's levels across the
// GPUs of a grid row (level_loop_peers, meeting through peer memory). Its host sides:
// merrill.py's Merrill._loop_levels and fu_2d_do_peer.py's PeerLoop. Why and how, below.
#include "tiles.cuh"
#include "claim.cuh"
#include "grid_barrier.cuh"

// Why. A road-like graph's search is thousands of levels of a few thousand vertices; the
// single-CTA kernel (merrill.cu's small_frontier) runs them in one launch but walks a level's
// edges 1024 at a time on one SM, each step a chain of dependent loads (82.6 ms a search on a
// 2000 x 2000 lattice, ~28 us a level), and a multi-block level from the host costs a launch
// and a round trip (~60-95 us). Here every block of a resident grid takes part in every level
// and the levels meet at a grid barrier (grid_barrier.cuh). A level's time is its chain of
// dependent memory steps, so the loop is built to keep that chain short:
//   queue entry, degree and row start (three independent loads: the start comes from the
//   loop's own array, written when the vertex was found) -> its columns (prefetched into L2
//   when the vertex was found) -> the claims (atomicOr on the visited bits, a lane's all
//   issued before any is used: claim.cuh's claim_all), the found vertices' row offsets loaded
//   beside them -> the warp's queue slots reserved (one atomic a warp step)
//   -> the barrier's arrival, which carries the block's found count and degree sum in the
//   same word, so the word that ends the wait holds the next level's size: no further read.
//
// Work per level, vertex-centric (no scan of the frontier's degrees, which would cost a second
// grid barrier): each thread takes a frontier vertex; Merrill's gather tiers split the rows by
// length, so a hub costs no lane a long walk: rows of BLOCK or more edges are walked by the
// whole block (one at a time, 256 edges a step), rows of 32 or more by the warp, and shorter
// ones by their own lane, LOOP_UNROLL independent column loads a step. A frontier of at most
// LOOP_SPLIT_Q vertices (a search's root) has each row walked by the whole grid instead, so the
// host can start the loop on a root of any degree (one block walking a root of 4096 edges cost
// a Kronecker search ~30 us: 1.6% at scale 26).
// With peers, only a launch's first level (the host's frontier) is walked so: a level's entries
// past it have rows of at most max_degree edges, and a row at a time on the whole grid made
// the lattice's early levels of 4-32 vertices cost 16-54 us each on two GPUs.
//
// Counters. Level L uses slot s = L % 3 of `loop`: loop[4 s] is the barrier word, bits 0-20
// the vertices found (at most the level's edges, <= max_edges < 2^21), bits 21-31 the blocks
// arrived, bits 32-63 the frontier's degree sum with each block's part capped at 2^21 - 1 (so
// 2047 blocks cannot overflow it, and a capped sum is still over max_edges: the loop ends; a
// block that found a vertex whose row is over max_degree adds the cap too, for the same end);
// loop[4 s + 1] the exact degree sum (one atomic a block after its arrival, read once, at the
// end, after one more barrier on loop[13]). Block 0 zeroes the next level's slot while this
// level runs (its last readers passed the barrier of the level before: three slots, no race).
// loop[12]: the error word (grid_barrier). The host zeroes loop (LOOP_WORDS) before the
// launch. With peers a slot's word only places the finds in this rank's segment (its found
// bits); the meeting words carry the rest (LoopPeers below).
//
// Exit (every block decides the same from the same word): the frontier is empty, or larger
// than max_q vertices / max_edges edges, or holds a row over max_degree edges (a hub, which
// one block would walk alone: the host's multi-block levels take over), or
// max_levels levels ran, or, with alpha > 0 (merrill-do), Beamer's rule would go bottom-up: the
// frontier's edges exceed the edges not yet reached (nnz - visited_edges - this launch's) /
// alpha and bottom_up_floor, the host's own test, so the host continues bottom-up without a
// level in between.
// loop[16..19] = (q, edges, levels run, edges of every frontier this launch found) at exit,
// read by the host with the error word in one copy; ctl[0..3] (the multi-block counters)
// zeroed, as small_frontier leaves them.
#define LOOP_UNROLL 4
#define LOOP_SPLIT_Q 32          // frontiers this small: every row walked by the whole grid
#define LOOP_FOUND_MASK ((1ULL << 21) - 1)
#define LOOP_ARRIVE_SHIFT 21
#define LOOP_ARRIVE_MASK 0x7FFULL
#define LOOP_EDGE_SHIFT 32
#define LOOP_BLOCK_EDGE_CAP ((1ULL << 21) - 1)

// The ranks of a grid row (2d-do on 1 x C) in one level loop, each on its own GPU: what a level
// found is pushed into every rank's inbox through peer memory (CUDA IPC over NVLink, or the
// same device's memory where ranks share a GPU), and every block of every rank meets the others
// at one set of counting words a level (the meeting). In one loop (PEERS false) every member is
// unused.
//
// Layout. Rank t's window (peer_base[t], the same layout on every rank): 2 parities x C
// sources of meeting lines (LOOP_MEET_WORDS u64: the counts, the edges examined; word 2 of
// parity 0, source 0 is the window's error word), then 2 parities x C sources x cap u64
// entries (tag << 32 | row). A level run as iteration k writes its finds into parity
// (k + 1) & 1, source `me`, of every rank (this one's too); iteration k + 1 reads parity
// (k + 1) & 1 of its own window. A rank is at most one level ahead of another (it meets every
// block of a level before it starts the next), so two parities never collide; tags run on from
// launch to launch (tag_base), so an entry left by an earlier level or launch never passes for
// this one's, and no window is ever cleared.
//
// The meeting: one hop a level. Each block of each rank adds its arrival straight into every
// rank's meeting word of its source (a reduction over NVLink, this rank's own last, as a
// release that orders its own entries, starts and degrees for this GPU's blocks): 1 << 52 |
// its capped degree sum << 22 | its finds, and at a launch's first level 1 << 52 | its edges
// examined into the line's second word. The words only grow (never cleared, so no reset races
// a peer's next add); a block keeps the value each word had at its last complete level (seen,
// carried from launch to launch by the host's array) and waits until every word has grown by
// gridDim arrivals: the difference holds the level's finds, degrees and edges examined,
// exactly (64-bit wrap-around cancels). Words alternate by the level's global parity
// (parity0 + iteration), so no rank adds a level's arrival to a word another still waits on.
// (The loop first met at each GPU's grid barrier and then at flags its block 0 sent to the
// peers: two hops, ~4 us of a 9.0 us level on 1x2 of a lattice; one hop waits ~2.3 us of 8.1,
// BENCHMARKS.md.)
// After a launch's first level the edges examined are the last level's degree sum (each rank
// walks every frontier row over its own columns: the ranks' parts add up to the rows' whole
// degrees), so only that level adds the second word.
//
// No fence before the pushes. A system-scope fence (to make the pushed entries visible first)
// cost ~1.9 us a level (BENCHMARKS.md). Instead every entry carries its level's tag: a rank
// reads a peer's entry until the tag is this level's, so nothing depends on the order the
// stores land in.
//
// Entries are row ids (padded, the same on every rank of a grid row: its rows are all
// pieces); source s's rows are piece s's, so a parent's global id is row - 64 * row_words[s] +
// lo[s]. A rank's finds are its own columns c, row row_base + c; their rows' starts and
// degrees in its own block are kept beside its own segment (as one GPU keeps them); a peer's
// entry is walked from the receiving rank's own offsets (one more load: its block is not the
// finder's). The degree sums that decide the loop's end are global: a column's degree in the
// block CSC of a grid row is the vertex's whole degree.
// Waits. Every wait is bounded (timeout_ns): a rank whose peer stopped, failed or was killed
// leaves the loop with loop[12] = (level << 8) | (rank waited on + 1) << 1 | 1 (0 in those
// bits: this GPU's own blocks), and writes its rank + 1 into every window's error word, so the
// others leave at once rather than at their timeout (a failed search ends the searcher's use:
// the error word stays).
#define LOOP_MEET_WORDS 4
#define LOOP_LOG_WORDS 8
#define LOOP_PEERS_MAX 8
#define LOOP_PEER_BLOCKS_MAX 511      // the blocks a meeting word counts: as many caps (each
                                      // under 2^21) fit its degree field's 30 bits
#define LOOP_SOURCE_EDGE_CAP ((1ULL << 21) - 1)   // a source's degree sum, capped before the
                                                  // sum over sources (a capped sum ends the loop)
#define LOOP_MEET_ARRIVE_SHIFT 52
#define LOOP_MEET_EDGE_SHIFT 22
#define LOOP_MEET_FOUND_MASK ((1ULL << 22) - 1)
#define LOOP_MEET_EDGE_MASK ((1ULL << 30) - 1)
#define LOOP_MEET_VALUE_MASK ((1ULL << 52) - 1)
#define LOOP_TAG_PERIOD ((1ULL << 22) - 2)          // entry tags run 1 .. 2^22 - 2, never 0
                                                    // (a new window)
struct LoopPeers {
    const u64* base;        // C window addresses (u64), this rank's own among them
    int me, C;
    i64 cap;                // entries a source segment holds
    u64 tag_base;           // this launch's first level's tag - 1, the same on every rank
    int parity0;            // this launch's first level's meeting parity, the same everywhere
    u64* seen;              // 2 parities x C sources x 2: each meeting word's value at its last
                            // complete level (this rank's; the next launch starts from them)
    i64 row_base;           // the row id of this rank's column 0
    const i64* csc;         // this rank's block CSC offsets: a column's global degree
    const i64* row_words;   // the row range's pieces (padded_to_global)
    const i64* row_lo;
    u64* counts;            // 2d-do's counts: [0] own finds of the last level, [2] -= own finds'
                            // degrees, [1] cleared, [3] edges examined by the last level (rank 0)
    u64* log;               // per level run (LOOP_LOG_WORDS): frontier found, found here,
                            // edges examined, then block 0's device clock (ns) when the level
                            // met, when its own walk ended, when its adds to the peers were
                            // issued, when its own (the release) was (the level clock's steps)
};

__device__ __forceinline__ u64* meet_line(const LoopPeers P, int t, int parity, int src) {
    return (u64*)P.base[t] + (parity * P.C + src) * LOOP_MEET_WORDS;
}
__device__ __forceinline__ u64* meet_error(const LoopPeers P, int t) {
    return (u64*)P.base[t] + 2;
}
__device__ __forceinline__ u64* peer_entries(const LoopPeers P, int t, int parity, int src) {
    return (u64*)P.base[t] + 2 * P.C * LOOP_MEET_WORDS + ((i64)parity * P.C + src) * P.cap;
}
__device__ __forceinline__ u64 level_tag(const LoopPeers P, int done) {
    return (u64)(((P.tag_base + done) % LOOP_TAG_PERIOD) + 1);
}

// One GPU's level clock (a probe's: bench/probes/loop_level_clock.py; null in a search): block
// 0's thread 0 stamps its SM's cycle counter at LOOP_CLOCK_WORDS points of every level, each
// after the value it names is in its registers (grid_barrier.cuh's stamp_after): the level's
// start, its frontier entry, its first column, its claims (with the found rows' offsets and its
// warp's queue slots), the block's walk done, its arrival back, the wait over; and the level's
// frontier size; the first LOOP_CLOCK_LEVELS levels of a launch.
#define LOOP_CLOCK_WORDS 8
#define LOOP_CLOCK_LEVELS (1 << 14)
__device__ __forceinline__ void clock_stamp(u64* clock, int done, int k, u64 after) {
    stamp_after(clock + LOOP_CLOCK_WORDS * done + k, after);
}

// Claim and append the edges (v -> w[k]) whose on[k] is set: a winner writes parent (pv) and
// level (claim), and its queue entry, degree and row start; its row's first column line is
// prefetched into L2 for the next level. One warp atomic on the barrier word's found bits
// places all the winners of the warp. With peers, the entry (its row id, tagged) goes to every
// rank's window, this one's too, and the degree summed for the loop's end is the column's
// global one. Every lane of the warp must call it.
template <int K, bool PEERS>
__device__ __forceinline__ void loop_visit(const bool (&on)[K], u32 pv, const u32 (&w)[K],
                                           const i64* __restrict__ offsets,
                                           const u32* __restrict__ columns, i64* parent,
                                           int* level, u32* visited, int next_level,
                                           const u32* __restrict__ out_id, u32* qout,
                                           i64* dout, i64* sout, u64* word, i64 max_degree,
                                           const LoopPeers P, int out_parity, u64 tag_hi,
                                           u64& edges, u64& wins, bool& hub) {
    // every neighbour's row offsets are loaded beside its claim, not after it: the claim's
    // round trip and the offsets' (a DRAM sector where ids are scattered) overlap, at the price
    // of the reads of neighbours another edge claimed (one sector each)
    i64 lo[K], hi[K], glo[K], ghi[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const u64 r = PEERS ? (u64)(P.row_base + w[k]) : (u64)w[k];
        lo[k] = on[k] ? offsets[r] : 0;
        hi[k] = on[k] ? offsets[r + 1] : 0;
        if (PEERS) {
            glo[k] = on[k] ? P.csc[w[k]] : 0;
            ghi[k] = on[k] ? P.csc[(u64)w[k] + 1] : 0;
        }
    }
    bool won[K];
    claim_all<K>(on, w, pv, parent, level, visited, next_level, out_id, won);
    u32 c = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) c += won[k] ? 1u : 0u;
    wins += c;
    u32 total;
    u64 pos = warp_reserve<u64>(c, word, total) & LOOP_FOUND_MASK;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (!won[k]) continue;
        const i64 deg = hi[k] - lo[k];
        const i64 gdeg = PEERS ? ghi[k] - glo[k] : deg;
        if (deg > 0) asm volatile("prefetch.global.L2 [%0];" :: "l"(columns + lo[k]));
        dout[pos] = deg;
        sout[pos] = lo[k];
        if (PEERS) {             // the row, tagged with its level: see LoopPeers
            const u64 entry = tag_hi | (u64)(u32)(P.row_base + w[k]);
            for (int t = 0; t < P.C; ++t) peer_entries(P, t, out_parity, P.me)[pos] = entry;
        } else {
            qout[pos] = w[k];
        }
        ++pos;
        edges += (u64)gdeg;
        // a row over max_degree is walked better by the host's multi-block level (tiles): the
        // block's part of the barrier word is then the cap, and the loop ends
        hub |= gdeg > max_degree;
    }
}

// The loop's body, one GPU (PEERS false) or the ranks of a grid row (PEERS: see LoopPeers).
template <bool PEERS>
__device__ __forceinline__ void
level_loop_body(const i64* __restrict__ offsets, const u32* __restrict__ columns,
                u32* qa, u32* qb, i64* dega, i64* degb, i64* starts_a, i64* starts_b, i64 q,
                int level0, i64 max_q, i64 max_edges, i64 max_degree, int max_levels,
                double alpha, i64 bottom_up_floor, i64 nnz, i64 visited_edges, u64* ctl,
                u64* loop, u64 timeout_ns, i64* parent, int* level, u32* visited,
                const u32* __restrict__ out_id, const LoopPeers P, u64* clock, int spread)
{
    __shared__ u32 s_owner;
    __shared__ u32 s_pv;
    __shared__ i64 s_start, s_deg;
    __shared__ u64 s_part[BLOCK / 32];
    __shared__ i64 s_pre[LOOP_PEERS_MAX + 1];   // peers: the frontier's segments, by source
    __shared__ u64 s_met[3];      // peers: the meeting's result (ok, found | degrees, examined)
    __shared__ u64 s_examined[BLOCK / 32];
    __shared__ u64 s_wins[BLOCK / 32];
    __shared__ u64 s_seen[2][2 * LOOP_PEERS_MAX];   // peers: the meeting words (LoopPeers)
    const u32 lane = threadIdx.x & 31;
    u32* qin = qa; u32* qout = qb; i64* din = dega; i64* dout = degb;
    i64* sin = starts_a; i64* sout = starts_b;
    int done = 0;
    i64 E = 0, launch_edges = 0;
    u64 own_degrees = 0;                  // peers: this block's finds' global degrees, all levels
    if (PEERS && threadIdx.x == 0)
        for (int k = 0; k < 4 * P.C; ++k) s_seen[k / (2 * P.C)][k % (2 * P.C)] = P.seen[k];
    if (PEERS && blockIdx.x == 0 && threadIdx.x == 0) loop[30] = global_timer_ns();
    const bool clocked = clock && blockIdx.x == 0 && threadIdx.x == 0 && !PEERS;
    for (;;) {
        const int lv = level0 + done;
        const bool stamp = clocked && done < LOOP_CLOCK_LEVELS;
        if (stamp) {
            clock_stamp(clock, done, 0, 0);
            clock[LOOP_CLOCK_WORDS * done + 7] = (u64)q;
        }
        u64* slot = loop + 4 * (done % 3);
        const int out_parity = (done + 1) & 1;
        const u64 tag_hi = PEERS ? level_tag(P, done) << 32 : 0;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            u64* next = loop + 4 * ((done + 1) % 3);
            next[0] = 0; next[1] = 0; next[2] = 0;
        }
        u64 edges = 0, examined = 0, wins = 0;   // wins: the thread's finds (peers)
        bool hub = false;
        // frontier entry i: its row, the parent id its finds get, its row's start and degree
        auto entry = [&, P](i64 i, u32& v, u32& pv, i64& start, i64& deg) {
            if (!PEERS) {
                v = __ldcg(qin + i);     // written by other blocks last level: from L2
                pv = v;
                start = done ? __ldcg(sin + i) : offsets[v];   // the host's queue has no starts
                deg = __ldcg(din + i);
                return;
            }
            if (done == 0) {             // the host's queue: rows of any piece
                v = __ldcg(qin + i);
                start = offsets[v];
                deg = offsets[(u64)v + 1] - start;
                pv = (u32)padded_to_global(v, P.row_words, P.row_lo, P.C);
                return;
            }
            int s = 0;
            while (i >= s_pre[s + 1]) ++s;
            const i64 k = i - s_pre[s];
            const u64* e = peer_entries(P, P.me, done & 1, s) + k;
            if (s == P.me) {             // this GPU's: ordered by its grid barrier
                v = (u32)__ldcg(e);
                start = __ldcg(sin + k);
                deg = __ldcg(din + k);
            } else {                     // a peer's, no fence before its flag: its tag says
                const u64 want = level_tag(P, done - 1);     // it has landed
                u64 got = ld_relaxed_sys_u64(e);
                for (int spins = 0; (got >> 32) != want; ++spins) {
                    if ((spins & 1023) == 1023 && ld_acquire_u64(loop + 12)) break;
                    got = ld_relaxed_sys_u64(e);
                }
                v = (u32)got;
                start = offsets[v];
                deg = offsets[(u64)v + 1] - start;
            }
            pv = (u32)(v - 64 * __ldg(P.row_words + s) + __ldg(P.row_lo + s));
        };
        // one row's edges walked by a group of threads (the grid, the block or the warp): each
        // round the group takes `stride` edges from `first` on, this thread the one `offset`
        // into them; the rounds are uniform over the group, so a warp's lanes visit together
        auto walk_row = [&, P](u32 pv, i64 rs, i64 rd, i64 first, i64 stride, u32 offset) {
            for (i64 j0 = first; j0 < rd; j0 += stride) {
                const i64 j = j0 + offset;
                const bool on[1] = {j < rd};
                const u32 w[1] = {on[0] ? columns[rs + j] : 0u};
                loop_visit<1, PEERS>(on, pv, w, offsets, columns, parent, level, visited,
                                     lv + 1, out_id, qout, dout, sout, slot, max_degree, P,
                                     out_parity, tag_hi, edges, wins, hub);
            }
        };
        // a frontier of a few vertices (a search's root, hub or not): the whole grid walks
        // each row in turn, every block a slice, so no block walks a long row alone
        if (q <= LOOP_SPLIT_Q && (!PEERS || done == 0))
            for (i64 i = 0; i < q; ++i) {     // grid-uniform
                u32 v, pv;
                i64 start, deg;
                entry(i, v, pv, start, deg);
                if (blockIdx.x == 0 && threadIdx.x == 0) examined += (u64)deg;
                walk_row(pv, start, deg, (i64)blockIdx.x * BLOCK, (i64)gridDim.x * BLOCK,
                         threadIdx.x);
            }
        // a round of gridDim * BLOCK entries: BLOCK of them a block, in order (spread 0: a
        // frontier smaller than the grid on its first blocks' SMs), or dealt out one a block
        // in turn, entry i to block i % gridDim (spread 1: on every SM, so that none holds
        // more of the level's loads and atomics in flight than the others)
        else for (i64 base = spread ? 0 : (i64)blockIdx.x * BLOCK; base < q;
                  base += (i64)gridDim.x * BLOCK) {      // block-uniform (spread: grid-uniform)
            const i64 i = base + (spread ? (i64)threadIdx.x * gridDim.x + blockIdx.x
                                         : (i64)threadIdx.x);
            u32 v = 0, pv = 0;
            i64 deg = 0, start = 0;
            if (i < q) entry(i, v, pv, start, deg);
            if (stamp) clock_stamp(clock, done, 1, (u64)v + (u64)deg + (u64)start);
            examined += (u64)deg;
            // rows of BLOCK or more edges: the block walks them one at a time
            bool big = deg >= BLOCK;
            for (;;) {                        // block-uniform
                if (threadIdx.x == 0) s_owner = FULL;
                __syncthreads();
                if (big) s_owner = threadIdx.x;
                __syncthreads();
                const u32 owner = s_owner;
                if (owner == FULL) break;
                if (threadIdx.x == owner) {
                    s_pv = pv; s_start = start; s_deg = deg; big = false;
                }
                __syncthreads();
                walk_row(s_pv, s_start, s_deg, 0, BLOCK, threadIdx.x);
                __syncthreads();              // s_pv, s_start, s_deg rewritten next round
            }
            // rows of 32 to BLOCK - 1 edges: the warp walks them one at a time
            bool mid = deg >= 32 && deg < BLOCK;
            for (u32 want; (want = __ballot_sync(FULL, mid)) != 0;) {
                const u32 leader = __ffs(want) - 1;
                const u32 wpv = __shfl_sync(FULL, pv, leader);
                const i64 ws = __shfl_sync(FULL, start, leader);
                const i64 wd = __shfl_sync(FULL, deg, leader);
                if (lane == leader) mid = false;
                walk_row(wpv, ws, wd, 0, 32, lane);
            }
            // rows under 32 edges: each lane its own, LOOP_UNROLL loads in flight
            const u32 mine = deg < 32 ? (u32)deg : 0u;
            const u32 steps = __reduce_max_sync(FULL, mine);
            for (u32 k0 = 0; k0 < steps; k0 += LOOP_UNROLL) {
                bool on[LOOP_UNROLL];
                u32 w[LOOP_UNROLL];
#pragma unroll
                for (int k = 0; k < LOOP_UNROLL; ++k) {
                    on[k] = k0 + k < mine;
                    w[k] = on[k] ? columns[start + k0 + k] : 0u;
                }
                if (stamp && k0 == 0) clock_stamp(clock, done, 2, (u64)w[0]);
                loop_visit<LOOP_UNROLL, PEERS>(on, pv, w, offsets, columns, parent, level,
                                               visited, lv + 1, out_id, qout, dout, sout, slot,
                                               max_degree, P, out_parity, tag_hi, edges, wins,
                                               hub);
                if (stamp && k0 == 0) clock_stamp(clock, done, 3, edges);
            }
        }
        // no fence: a peer reads an entry only once its tag says it landed (LoopPeers)
        u64 t_walked = 0, t_arrived = 0, t_sent = 0;
        if (PEERS && blockIdx.x == 0 && threadIdx.x == 0) t_walked = global_timer_ns();
        // the block's degree sum: exact into slot[1], capped into the barrier word (one GPU) or
        // its meeting word (peers, with its finds and edges examined)
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) edges += __shfl_down_sync(FULL, edges, o);
        if (lane == 0) s_part[threadIdx.x >> 5] = edges;
        if (PEERS) {   // the finds (a u32 a thread: one warp reduction); examined: first level
            const u32 w = __reduce_add_sync(FULL, (u32)wins);
            if (lane == 0) s_wins[threadIdx.x >> 5] = w;
            if (done == 0) {
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) examined += __shfl_down_sync(FULL, examined, o);
                if (lane == 0) s_examined[threadIdx.x >> 5] = examined;
            }
        }
        const bool block_hub = __syncthreads_or(hub);
        if (stamp) clock_stamp(clock, done, 4, 0);
        u64 add = 1ULL << LOOP_ARRIVE_SHIFT, sum = 0, part = 0;
        if (threadIdx.x == 0) {
            for (int k = 0; k < BLOCK / 32; ++k) sum += s_part[k];
            part = block_hub || sum > LOOP_BLOCK_EDGE_CAP ? LOOP_BLOCK_EDGE_CAP : sum;
            add |= part << LOOP_EDGE_SHIFT;
            own_degrees += sum;
        }
        u64 seen;
        bool ok = true;
        if (!PEERS) {
            // every block waits for the others (its acquire orders their entries, starts and
            // degrees before their reads next level)
            ok = grid_barrier(slot, add, LOOP_ARRIVE_SHIFT, LOOP_ARRIVE_MASK, (u64)gridDim.x,
                              loop + 12, timeout_ns, lv, seen,
                              stamp ? clock + LOOP_CLOCK_WORDS * done + 5 : nullptr);
            // the exact sum after the arrival, whose release would wait for it: the next
            // level's arrival (or the exit barrier) orders it, and only the exit reads it
            if (threadIdx.x == 0 && sum) atomicAdd(slot + 1, sum);
        } else {
            if (threadIdx.x == 0) {   // the meeting (LoopPeers)
                u64 found = 0, ex = 0;
                const bool first = done == 0;
                for (int k = 0; k < BLOCK / 32; ++k) {
                    found += s_wins[k];
                    if (first) ex += s_examined[k];
                }
                const int par = (P.parity0 + done) & 1;
                const u64 one = 1ULL << LOOP_MEET_ARRIVE_SHIFT;
                const u64 m0 = one | part << LOOP_MEET_EDGE_SHIFT | found;
                for (int k = 1; k < P.C; ++k) {       // the peers' first: no fence holds them
                    u64* line = meet_line(P, (P.me + k) % P.C, par, P.me);
                    red_relaxed_sys_add_u64(line, m0);
                    if (first) red_relaxed_sys_add_u64(line + 1, one | ex);
                }
                if (blockIdx.x == 0) t_arrived = global_timer_ns();
                u64* own = meet_line(P, P.me, par, P.me);
                if (first) red_release_gpu_add_u64(own + 1, one | ex);
                red_release_gpu_add_u64(own, m0);
                if (blockIdx.x == 0) t_sent = global_timer_ns();
                // every source's words, grown by gridDim arrivals since this block last saw
                // them: all 2 C words loaded at once each round (no round trip a word), relaxed
                // (an acquire load a round cost more), one acquire fence once all are in; the
                // error words and the clock checked every 32 rounds
                const u64* lines = meet_line(P, P.me, par, 0);
                const u64 t0 = global_timer_ns();
                u64 got[2 * LOOP_PEERS_MAX];
                for (int round = 0;; ++round) {
                    bool all = true;
                    int missing = -1;
#pragma unroll
                    for (int k = 0; k < 2 * LOOP_PEERS_MAX; ++k)
                        if (k < 2 * P.C && (first || !(k & 1)))
                            got[k] = ld_relaxed_sys_u64(lines + (k >> 1) * LOOP_MEET_WORDS
                                                        + (k & 1)) - s_seen[par][k];
#pragma unroll
                    for (int k = 0; k < 2 * LOOP_PEERS_MAX; ++k)
                        if (k < 2 * P.C && (first || !(k & 1))
                            && (got[k] >> LOOP_MEET_ARRIVE_SHIFT) != (u64)gridDim.x) {
                            all = false;
                            missing = k >> 1;
                        }
                    if (all) {   // this GPU's blocks' writes before their release, visible
                        asm volatile("fence.acq_rel.gpu;" ::: "memory");
                        break;
                    }
                    if ((round & 31) != 31) continue;
                    const u64 err = ld_relaxed_sys_u64(meet_error(P, P.me));
                    if (!err && !ld_acquire_u64(loop + 12) && global_timer_ns() - t0 <= timeout_ns)
                        continue;
                    // the level and the rank waited on: (level << 8) | (s + 1) << 1 | 1, s + 1
                    // = 0 for this GPU's own blocks; the peers told, so they leave at once
                    const int who = err ? (int)err - 1 : missing;
                    atomicCAS(loop + 12, 0ULL, ((u64)(unsigned)lv << 8)
                              | ((u64)(who == P.me ? 0 : who + 1) << 1) | 1ULL);
                    if (!err)
                        for (int t = 0; t < P.C; ++t)
                            if (t != P.me)
                                atomicCAS_system(meet_error(P, t), 0ULL, (u64)(P.me + 1));
                    ok = false;
                    break;
                }
                i64 pre = 0, total_edges = 0;
                u64 total_examined = 0;
                s_pre[0] = 0;
#pragma unroll
                for (int s = 0; s < LOOP_PEERS_MAX; ++s) {
                    if (s >= P.C || !ok) break;
                    const u64 d = got[2 * s];
                    const u64 e = (d >> LOOP_MEET_EDGE_SHIFT) & LOOP_MEET_EDGE_MASK;
                    pre += (i64)(d & LOOP_MEET_FOUND_MASK);
                    total_edges += (i64)(e > LOOP_SOURCE_EDGE_CAP ? LOOP_SOURCE_EDGE_CAP : e);
                    s_pre[s + 1] = pre;
                    s_seen[par][2 * s] += d;
                    if (first) {
                        total_examined += got[2 * s + 1] & LOOP_MEET_VALUE_MASK;
                        s_seen[par][2 * s + 1] += got[2 * s + 1];
                    }
                }
                s_met[0] = ok;
                s_met[1] = (u64)pre | ((u64)total_edges << 32);   // pre < 2^21 * 8
                // after a launch's first level: the last level's degree sum (LoopPeers)
                s_met[2] = first ? total_examined : (u64)E;
            }
            __syncthreads();
            ok = s_met[0] != 0;
            const i64 found = (i64)(s_met[1] & 0xFFFFFFFFULL);
            const i64 degs = (i64)(s_met[1] >> 32);
            if (blockIdx.x == 0 && threadIdx.x == 0 && done < max_levels) {
                P.log[LOOP_LOG_WORDS * done] = (u64)found;
                P.log[LOOP_LOG_WORDS * done + 1] = (u64)(s_pre[P.me + 1] - s_pre[P.me]);
                P.log[LOOP_LOG_WORDS * done + 2] = s_met[2];
                P.log[LOOP_LOG_WORDS * done + 3] = global_timer_ns();
                P.log[LOOP_LOG_WORDS * done + 4] = t_walked;
                P.log[LOOP_LOG_WORDS * done + 5] = t_arrived;
                P.log[LOOP_LOG_WORDS * done + 6] = t_sent;
            }
            seen = (u64)found | ((u64)degs << LOOP_EDGE_SHIFT);
            if (!ok) seen = 0;
            // a search's first launch: the host's unreached edges still hold the root's, which
            // this level examined (2d-do's counts[2] starts without them)
            if (level0 == 0 && done == 0) nnz -= (i64)s_met[2];
        }
        q = (i64)(seen & (PEERS ? 0xFFFFFFFFULL : LOOP_FOUND_MASK));
        E = (i64)(seen >> LOOP_EDGE_SHIFT);   // exact below max_edges (no block capped)
        ++done;
        u32* tq = qin; qin = qout; qout = tq;
        i64* td = din; din = dout; dout = td;
        i64* ts = sin; sin = sout; sout = ts;
        bool stop = !ok || q == 0 || q > max_q || E > max_edges || done >= max_levels;
        const i64 unexplored = nnz - visited_edges - launch_edges - E;
        // merrill-do's rule: the frontier's edges against the edges not yet reached; 2d-do's
        // (peers) counts the frontier's own edges in the rest (fu_2d_do.DirectionSwitch)
        const i64 rest = PEERS ? unexplored + E : unexplored;
        if (!stop && alpha > 0.0 && E >= bottom_up_floor && (PEERS || unexplored > 0)
            && (double)rest < (double)E * alpha) stop = true;
        if (stop) {                           // every block's exact sum landed: one more barrier
            u64 unused;
            if (ok && !PEERS)
                grid_barrier(loop + 13, 1, 0, ~0ULL, (u64)gridDim.x, loop + 12, timeout_ns, lv,
                             unused);
            if (!PEERS) E = (i64)ld_acquire_u64(slot + 1);
            launch_edges += E;
            break;
        }
        launch_edges += E;
    }
    if (PEERS && threadIdx.x == 0 && own_degrees)
        atomicAdd(P.counts + 2, (u64)0 - own_degrees);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        loop[16] = (u64)q; loop[17] = (u64)E; loop[18] = (u64)done; loop[19] = (u64)launch_edges;
        ctl[0] = 0; ctl[1] = 0; ctl[2] = 0; ctl[3] = 0;
        if (PEERS) {
            // the last frontier's segments (where the host builds In from), and 2d-do's counts
            for (int s = 0; s <= P.C; ++s) loop[20 + s] = (u64)s_pre[s];
            for (int k = 0; k < 4 * P.C; ++k) P.seen[k] = s_seen[k / (2 * P.C)][k % (2 * P.C)];
            P.counts[0] = (u64)(s_pre[P.me + 1] - s_pre[P.me]);
            P.counts[1] = 0;
            P.counts[3] = P.me == 0 && done >= 1 ? P.log[LOOP_LOG_WORDS * (done - 1) + 2] : 0;
        }
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
level_loop(const i64* __restrict__ offsets, const u32* __restrict__ columns,
           u32* qa, u32* qb, i64* dega, i64* degb, i64* starts_a, i64* starts_b, i64 q,
           int level0, i64 max_q, i64 max_edges, i64 max_degree, int max_levels, double alpha,
           i64 bottom_up_floor, i64 nnz,
           i64 visited_edges, u64* ctl, u64* loop, u64 timeout_ns, i64* parent, int* level,
           u32* visited, const u32* __restrict__ out_id, u64* clock, int spread)
{
    const LoopPeers none{};
    level_loop_body<false>(offsets, columns, qa, qb, dega, degb, starts_a, starts_b, q, level0,
                           max_q, max_edges, max_degree, max_levels, alpha, bottom_up_floor,
                           nnz, visited_edges, ctl, loop, timeout_ns, parent, level, visited,
                           out_id, none, clock, spread);
}

// The level loop of a grid row's ranks (2d-do on 1 x C, see LoopPeers): offsets / columns are
// the rank's block CSR (rows: every piece; columns: its own), parent / level / visited its
// column range's; q rows of any piece in qa (the host's compacted frontier, or the root).
extern "C" __global__ void __launch_bounds__(BLOCK)
level_loop_peers(const i64* __restrict__ offsets, const u32* __restrict__ columns,
                 u32* qa, i64* dega, i64* degb, i64* starts_a, i64* starts_b, i64 q,
                 int level0, i64 max_q, i64 max_edges, i64 max_degree, int max_levels,
                 double alpha, i64 bottom_up_floor, i64 nnz, u64* ctl, u64* loop,
                 u64 timeout_ns, i64* parent,
                 int* level, u32* visited, const u64* peer_base, int me, int C, i64 cap,
                 u64 tag_base, int parity0, u64* seen, i64 row_base, const i64* csc,
                 const i64* row_words, const i64* row_lo, u64* counts, u64* log, int spread)
{
    const LoopPeers P{peer_base, me, C, cap, tag_base, parity0, seen, row_base, csc, row_words,
                      row_lo, counts, log};
    level_loop_body<true>(offsets, columns, qa, nullptr, dega, degb, starts_a, starts_b, q,
                          level0, max_q, max_edges, max_degree, max_levels, alpha,
                          bottom_up_floor, nnz, 0,
                          ctl, loop, timeout_ns, parent, (int*)level, visited, nullptr, P,
                          nullptr, spread);
}
