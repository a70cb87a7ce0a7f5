// The grid row's all-gather of a bitmap's pieces through peer memory (bfs/comm/peer.py's
// PeerShare): every rank's window holds the row-range bitmap (In) after a flag area, and each
// rank writes the nonzero words of its own piece straight into every rank's copy over NVLink.
// One share is three launches on the stream, each a no-op unless *go (a chained level that
// does not run, the same on every rank):
//   share_clear   this rank's copy zeroed (its readers, the level's kernels, are done with it)
//   share_meet 0  "cleared" flags: each rank tells every peer, then waits for every peer's, so
//                 that no rank writes into a copy still being read or not yet cleared
//   share_write   the own piece's nonzero words into every copy (its own included)
//   share_meet 1  "written" flags after a system fence: the copies are whole once every
//                 peer's flag is in
// A sparse level (a tail level: a few thousand vertices found) writes a few words where NCCL's
// all-gather moved the whole piece (32 MiB a rank at scale 30 on 1x4).
// share_sum: the level's switch words (4 a rank) summed on every rank, in place of NCCL's
// all-reduce: each rank writes its words into its slot of every peer's window, then (after a
// system fence) the slot's flag; each waits for every peer's flag and adds the slots up. The
// slots alternate by the tag's parity, so a slot is rewritten only two sums on, after its
// reader has met the sum between: a slot is never overwritten before it is read. Its tags are
// counted apart (tags[1]), as a level may sum without sharing.
// A window's flag area, in words: [kind * C + source] the meetings' flags (2 C words), then
// from SUM_SLOTS a slot of SUM_SLOT words for each parity and source (parity * 16 + source):
// 4 switch words and the slot's flag.
// Flags carry the share's tag, *tag + 1 at its first meet, counted on the device so that a
// CUDA graph replays the chain's shares with new tags; a wait past timeout_ns gives up and
// leaves *error = (level << 16) | (peer + 1) << 3 | kind << 1 | 1 (kind 0 "cleared", 1
// "written", 2 the sum's flag; a word of the caller's: 2d-do keeps it in the control words its
// every read brings), and every later meet returns at once (the host raises at its next read,
// naming the peer and the level).

typedef unsigned long long u64;
typedef long long i64;
#define SUM_SLOTS 32      // the sums' slots from this word (bfs/comm/peer.py's SHARE_FLAGS_BYTES)
#define SUM_SLOT 8
#define SUM_WORDS 4

#include "sys_memory.cuh"

// Waits until *flag (a peer writes it) reaches tag, at most timeout_ns; true where it gave up.
__device__ __forceinline__ bool late_for(const u64* flag, u64 tag, u64 timeout_ns) {
    const u64 start = global_timer_ns();
    while (ld_acquire_sys_u64(flag) < tag)
        if (global_timer_ns() - start > timeout_ns) return true;
    return false;
}

// The first wait that gave up, in the error word (the layout above).
__device__ __forceinline__ void set_error(u64* error, int level, int peer, int kind) {
    atomicCAS(error, 0ULL,
              ((u64)level << 16) | ((u64)(peer + 1) << 3) | ((u64)kind << 1) | 1ULL);
}

extern "C" __global__ void share_clear(const u64* go, u64* words, i64 n) {
    if (!go[0]) return;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n;
         i += (i64)gridDim.x * blockDim.x)
        words[i] = 0;
}

// One block of at least C threads. A window's flags: [kind * C + source].
extern "C" __global__ void share_meet(const u64* go, u64* tags, u64* error, const u64* bases,
                                      u64* own_flags, int me, int C, int kind, int level,
                                      u64 timeout_ns) {
    __shared__ u64 tag;
    __shared__ bool skip;        // one decision for the block: its threads meet at syncthreads
    if (threadIdx.x == 0) {
        skip = !go[0] || *error;
        tag = *tags + (kind == 0 ? 1 : 0);
    }
    __threadfence_system();      // this rank's earlier writes (the clear, the pieces) first
    __syncthreads();
    if (skip) return;
    const int t = threadIdx.x;
    if (t < C && t != me) st_relaxed_sys_u64((u64*)bases[t] + kind * C + me, tag);
    if (t < C && t != me && late_for(own_flags + kind * C + t, tag, timeout_ns))
        set_error(error, level, t, kind);
    __syncthreads();
    if (t == 0 && kind == 0) *tags = tag;
}

// The own piece (words, at word `at` of the row range) into every rank's copy, which starts
// `in_at` bytes into each window.
extern "C" __global__ void share_write(const u64* go, const u64* piece, i64 words, i64 at,
                                       const u64* bases, i64 in_at, int C) {
    if (!go[0]) return;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < words;
         i += (i64)gridDim.x * blockDim.x) {
        const u64 w = piece[i];
        if (!w) continue;
        for (int t = 0; t < C; ++t)
            ((u64*)((char*)bases[t] + in_at))[at + i] = w;
    }
}

// One block of at least C threads: totals[k] = the sum over the ranks of their counts[k].
extern "C" __global__ void share_sum(const u64* go, u64* tags, u64* error, const u64* bases,
                                     u64* own_area, int me, int C, int level, u64 timeout_ns,
                                     const u64* counts, u64* totals) {
    __shared__ u64 tag;
    __shared__ bool skip;
    __shared__ u64 words[SUM_WORDS * 32];
    if (threadIdx.x == 0) {
        skip = !go[0] || *error;
        tag = tags[1] + 1;
    }
    __syncthreads();
    if (skip) return;
    const int t = threadIdx.x;
    if (t < C && t != me) {
        u64* slot = (u64*)bases[t] + SUM_SLOTS + ((tag & 1) * 16 + me) * SUM_SLOT;
        for (int k = 0; k < SUM_WORDS; ++k) st_relaxed_sys_u64(slot + k, counts[k]);
        __threadfence_system();
        st_relaxed_sys_u64(slot + SUM_WORDS, tag);
    }
    if (t < C) {
        const u64* slot = own_area + SUM_SLOTS + ((tag & 1) * 16 + t) * SUM_SLOT;
        if (t != me && late_for(slot + SUM_WORDS, tag, timeout_ns)) set_error(error, level, t, 2);
        for (int k = 0; k < SUM_WORDS; ++k)
            words[t * SUM_WORDS + k] = t == me ? counts[k] : ld_relaxed_sys_u64(slot + k);
    }
    __syncthreads();
    if (t < SUM_WORDS) {
        u64 sum = 0;
        for (int r = 0; r < C; ++r) sum += words[r * SUM_WORDS + t];
        totals[t] = sum;
    }
    if (t == 0) tags[1] = tag;
}
