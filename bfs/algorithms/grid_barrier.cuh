// A grid-wide barrier for persistent kernels whose blocks are all resident at once (the grid
// no larger than device.resident_grid's), with a bounded wait.
//
// Why not cooperative groups' grid.sync(): it needs a cooperative launch (CuPy's RawModule
// compiles such kernels apart) and it waits forever. A level loop must leave its wait when
// something is wrong (a grid that is not all resident, a block that faulted), say where, and let
// the host raise: the bounded wait below flags the loop's error word with the level and every
// block leaves at its next barrier.
//
// Protocol: one u64 word per barrier instance (the level loop keeps one per level, in rotating
// slots, so no word needs a reset between two barriers that use it). Each block's thread 0,
// after a __syncthreads, adds its arrival with an atomic and polls the word with acquire loads
// until every block has arrived. Costs, by design: one atomic a block and the poll's round
// trips through L2 (~0.5 us each on an H100).
#include "../comm/sys_memory.cuh"
__device__ __forceinline__ u64 ld_acquire_u64(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}


// Thread 0's wait at a barrier word it has arrived at (v: the word just after its own
// arrival): poll with acquire loads until ((v >> shift) & mask) reaches `blocks`. The word as
// the last poll left it comes back in `seen`. Returns false when the wait outlasted timeout_ns
// or another block had flagged *error (then *error holds (level << 1) | 1 of the first block
// that timed out). The acquire orders this block's later reads after every write that another
// block released (or fenced) before its arrival; the CTA barrier that follows carries that to
// the block's other threads (causality is transitive).
__device__ __forceinline__ bool grid_wait(const u64* word, u64 v, int shift, u64 mask,
                                          u64 blocks, u64* error, u64 timeout_ns, int level,
                                          u64& seen) {
    const u64 t0 = global_timer_ns();
    bool ok = true;
    while (((v >> shift) & mask) < blocks) {
        if (ld_acquire_u64(error)) { ok = false; break; }
        if (global_timer_ns() - t0 > timeout_ns) {
            atomicCAS(error, 0ULL, ((u64)(unsigned)level << 1) | 1ULL);
            ok = false;
            break;
        }
        v = ld_acquire_u64(word);
    }
    seen = v;
    return ok;
}

// The SM's cycle counter into *at once `after` is in this thread's registers (the asm takes it
// as an input, so the stamp waits for the load or atomic that made it): a probe's clock.
__device__ __forceinline__ void stamp_after(u64* at, u64 after) {
    u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : "l"(after) : "memory");
    *at = t;
}

// Thread 0's arrival at *word: `add` added by a release atomic (the block's writes, ordered
// before thread 0's by a CTA barrier, are visible GPU-wide first; its cost: the block's
// outstanding stores drained before the add). Returns the word just after it.
__device__ __forceinline__ u64 grid_arrive(u64* word, u64 add) {
    u64 v;
    asm volatile("atom.add.release.gpu.global.u64 %0, [%1], %2;"
                 : "=l"(v) : "l"(word), "l"(add) : "memory");
    return v + add;
}

// Arrive at *word by adding `add` (which holds a one at bit `shift`: the arrivals count in the
// bits `shift` up, under `mask` once shifted down; the other bits carry what the blocks add up,
// so that the word a waiting block sees last holds the level's totals and no second read is
// needed) and wait until `blocks` blocks have arrived: grid_arrive, then grid_wait. Every
// thread of the block calls it; the word as the last arrival left it comes back in `seen` (on
// every thread). Returns false on every thread of the block where grid_wait did. stamps (a
// probe's, else null): the cycle counter when the arrival came back and when the wait ended.
__device__ __forceinline__ bool grid_barrier(u64* word, u64 add, int shift, u64 mask,
                                             u64 blocks, u64* error, u64 timeout_ns,
                                             int level, u64& seen, u64* stamps = nullptr) {
    __shared__ int s_ok;
    __shared__ u64 s_seen;
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 arrived = grid_arrive(word, add);
        if (stamps) stamp_after(stamps, arrived);
        u64 last;
        s_ok = grid_wait(word, arrived, shift, mask, blocks, error, timeout_ns, level, last);
        if (stamps) stamp_after(stamps + 1, last);
        s_seen = last;
    }
    __syncthreads();
    seen = s_seen;
    return s_ok != 0;
}
