// A grid-wide barrier for persistent kernels whose blocks are all resident at once (the grid
// no larger than device.resident_grid's), with a bounded wait.
//
// Why not cooperative groups' grid.sync(): it needs a cooperative launch (CuPy's RawModule
// compiles such kernels apart) and it waits forever. A level loop must leave its wait when
// something is wrong (a grid that is not all resident, a block that faulted), say where, and let
// the host raise: the bounded wait below flags the loop's error word with the level and every
// block leaves at its next barrier.
//
// Protocol: one u64 word per barrier instance (the level loop keeps one per level, in three
// rotating slots, so no word needs a reset between two barriers that use it). Each block's
// thread 0, after a __syncthreads, adds its arrival with a release atomic and polls the word
// with acquire loads until every block has arrived. Costs, by design: one atomic a block and
// the poll's round trips through L2 (~0.5 us each on an H100).
#include "../comm/sys_memory.cuh"
__device__ __forceinline__ u64 ld_acquire_u64(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}


// Arrive at *word by adding `add` (which holds a one at bit `shift`: the arrivals count in the
// bits `shift` up, under `mask` once shifted down; the other bits carry what the blocks add up,
// so that the word a waiting block sees last holds the level's totals and no second read is
// needed) and wait until `blocks` blocks have arrived. Every thread of the block calls it; the
// word as the last arrival left it comes back in `seen` (on every thread). The arrival is a
// release (the block's writes, ordered before thread 0's by the CTA barrier, are visible
// GPU-wide first), the poll an acquire. Returns false (on every thread of the block) when the
// wait outlasted timeout_ns or another block had flagged *error: then *error holds
// (level << 1) | 1 of the first block that timed out.
__device__ __forceinline__ bool grid_barrier(u64* word, u64 add, int shift, u64 mask,
                                             u64 blocks, u64* error, u64 timeout_ns,
                                             int level, u64& seen) {
    __shared__ int s_ok;
    __shared__ u64 s_seen;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 v;
        asm volatile("atom.add.release.gpu.global.u64 %0, [%1], %2;"
                     : "=l"(v) : "l"(word), "l"(add) : "memory");
        v += add;
        const u64 t0 = global_timer_ns();
        int ok = 1;
        while (((v >> shift) & mask) < blocks) {
            if (ld_acquire_u64(error)) { ok = 0; break; }
            if (global_timer_ns() - t0 > timeout_ns) {
                atomicCAS(error, 0ULL, ((u64)(unsigned)level << 1) | 1ULL);
                ok = 0;
                break;
            }
            v = ld_acquire_u64(word);
        }
        // no fence here: the acquire above, then the CTA barrier below, order every thread's
        // later reads after the other blocks' released writes (causality is transitive)
        s_ok = ok;
        s_seen = v;
    }
    __syncthreads();
    seen = s_seen;
    return s_ok != 0;
}
