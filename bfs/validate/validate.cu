typedef unsigned long long u64;
typedef long long i64;

#define OK 0
#define ROOT 1
#define RANGE 2
#define UNROOTED 3
#define LEVEL 5
#define SPREAD 6
#define SPAN 7
#define NOT_EDGE 8
#define SIZE 9
#define REACHED 12
#define DEPTH 13
#define NEDGE 14

// Rules 1 and 2 from the reported levels; counts reached vertices and the depth.
extern "C" __global__ void check_vertices(const i64* __restrict__ parent,
                                          const int* __restrict__ level, i64 n, i64 root,
                                          u64* ctl)
{
    u64 reached = 0;
    int depth = 0;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const i64 p = parent[v];
        const int l = level[v];
        int code = OK;
        if (v == root) {
            if (p != root) code = ROOT;
            else if (l != 0) code = LEVEL;
        } else if (p == -1) {
            if (l != -1) code = LEVEL;
        } else if (p < -1 || p >= n) {
            code = RANGE;
        } else {
            const int lp = level[p];
            if (parent[p] == -1) code = UNROOTED;
            else if (l != lp + 1) code = LEVEL;
        }
        if (code != OK) atomicMin(ctl + code, (u64)v);
        if (p != -1 && code == OK) { ++reached; depth = max(depth, l); }
    }
    atomicAdd(ctl + REACHED, reached);
    atomicMax((unsigned int*)(ctl + DEPTH), (unsigned int)depth);
}

// Rules 3 and 4 over one chunk of the edge list (edge index base + i), nedge, rule-5 marks.
template <typename E>
__global__ void check_edges(const E* __restrict__ src, const E* __restrict__ dst, i64 m,
                            i64 base, const i64* __restrict__ parent,
                            const int* __restrict__ level, i64 n, int both_directions,
                            unsigned char* tree_edge_seen, u64* ctl)
{
    u64 count = 0;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        const i64 u = (i64)src[i], v = (i64)dst[i];
        if (u < 0 || v < 0 || u >= n || v >= n) { atomicMin(ctl + SIZE, (u64)(base + i)); continue; }
        const int lu = level[u], lv = level[v];
        if (lu < 0 && lv < 0) continue;
        if (lu < 0 || lv < 0) { atomicMin(ctl + SPAN, (u64)(base + i)); continue; }
        if (lu - lv > 1 || lv - lu > 1) { atomicMin(ctl + SPREAD, (u64)(base + i)); continue; }
        if (u == v) continue;
        ++count;
        if (parent[v] == u) tree_edge_seen[v] = 1;
        if (both_directions && parent[u] == v) tree_edge_seen[u] = 1;
    }
    atomicAdd(ctl + NEDGE, count);
}

// Rule 5: every reached vertex but the root has its tree edge among the input edges.
extern "C" __global__ void check_tree_edges(const i64* __restrict__ parent, i64 n, i64 root,
                                            const unsigned char* __restrict__ tree_edge_seen,
                                            u64* ctl)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride)
        if (v != root && parent[v] != -1 && !tree_edge_seen[v]) atomicMin(ctl + NOT_EDGE, (u64)v);
}
