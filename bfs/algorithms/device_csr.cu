// Counts over a search's int32 level array on the device, for the searchers over a device CSR
// (bfs/algorithms/device_csr.py): each level's vertex count and the reached vertices' summed
// degree. Kernel 1's own kernels are bfs/build/kernel1.cu.
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// How many vertices each level of a search holds: sizes[l] += |{v : level[v] == l}| for
// 0 <= l < bins (the caller takes bins = the deepest level + 1, so every reached vertex has its
// bin). A block counts into shared memory and adds its bins once, so the few hot bins of a
// Kronecker search take shared, not global, atomics; no n-entry mask or compacted copy (the
// bincount of level[level >= 0] it replaces held 5 bytes a vertex beside the search state, and
// its host copy took seconds a search at scale 28).
extern "C" __global__ void level_sizes(const int* __restrict__ level, i64 n, int bins, u64* sizes)
{
    extern __shared__ unsigned int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (i64)gridDim.x * blockDim.x) {
        const int l = level[v];
        if (l >= 0 && l < bins) atomicAdd(&local[l], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&sizes[b], (u64)local[b]);
}

// The summed degree of a search's vertices at level at_level (at_level < 0: every reached
// vertex, level >= 0: Graph500 nedge is half of it; a top-down level's edges examined are its
// vertices' degrees), one atomic a block, no temporaries (the array expressions it replaces held
// n-entry degree, mask and gathered copies: ~5 GiB at scale 28, beside the CSR and the state).
extern "C" __global__ void reached_degrees(const i64* __restrict__ offsets,
                                           const int* __restrict__ level, i64 n, int at_level,
                                           u64* sum)
{
    u64 s = 0;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (i64)gridDim.x * blockDim.x) {
        const int l = level[v];
        if (at_level < 0 ? l >= 0 : l == at_level) s += (u64)(offsets[v + 1] - offsets[v]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    __shared__ u64 warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 t = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += warp_sums[w];
        atomicAdd(sum, t);
    }
}
