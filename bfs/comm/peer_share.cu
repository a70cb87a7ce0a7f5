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
// Flags carry the share's tag, *tag + 1 at its first meet, counted on the device so that a
// CUDA graph replays the chain's shares with new tags; a wait past timeout_ns gives up and
// leaves *error = (level << 16) | (peer + 1) << 2 | kind << 1 | 1 (a word of the caller's: 2d-do
// keeps it in the control words its every read brings), and every later meet returns at once
// (the host raises at its next read, naming the peer and the level).

typedef unsigned long long u64;
typedef long long i64;

#include "sys_memory.cuh"

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
    if (!go[0] || *error) return;
    if (threadIdx.x == 0) tag = *tags + (kind == 0 ? 1 : 0);
    __threadfence_system();      // this rank's earlier writes (the clear, the pieces) first
    __syncthreads();
    const int t = threadIdx.x;
    if (t < C && t != me) st_relaxed_sys_u64((u64*)bases[t] + kind * C + me, tag);
    bool late = false;
    if (t < C && t != me) {
        const u64 start = global_timer_ns();
        while (ld_acquire_sys_u64(own_flags + kind * C + t) < tag) {
            if (global_timer_ns() - start > timeout_ns) { late = true; break; }
        }
    }
    if (late) atomicCAS(error, 0ULL,
                        ((u64)level << 16) | ((u64)(t + 1) << 2) | ((u64)kind << 1) | 1ULL);
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
