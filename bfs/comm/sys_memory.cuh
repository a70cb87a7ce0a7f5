// Loads and stores that another GPU's threads see (PTX .sys scope: peer memory over NVLink, as
// bfs/comm/peer.py's windows are), and the device clock that bounds a wait on them. Shared by
// the level loop across GPUs (level_loop.cu), the grid barrier (grid_barrier.cuh) and the grid
// row's all-gather through peer memory (peer_share.cu).
#ifndef BFS_SYS_MEMORY_CUH    // inlined as text (bfs.device.cuda_source): once per source
#define BFS_SYS_MEMORY_CUH

__device__ __forceinline__ void st_relaxed_sys_u64(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_relaxed_sys_u64(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long ld_acquire_sys_u64(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
// a reduction (no value back: the thread does not wait for it) another GPU sees, and one whose
// release orders the block's writes before it for this GPU's threads
__device__ __forceinline__ void red_relaxed_sys_add_u64(unsigned long long* p,
                                                        unsigned long long v) {
    asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void red_release_gpu_add_u64(unsigned long long* p,
                                                        unsigned long long v) {
    asm volatile("red.release.gpu.global.add.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#endif
