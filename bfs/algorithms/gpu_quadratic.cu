// gpu-quadratic: Harish and Narayanan's GPU BFS (HiPC 2007) as the SEI report's Fig. 8 runs it;
// launched by bfs/algorithms/gpu_quadratic.py. Every kernel takes one thread per vertex (grid-
// stride loops, since bfs.device.grid_for caps the grid), so each level inspects all n
// vertices whatever the frontier holds: O(n) work a level, O(n * depth + m) a search.

typedef long long i64;
typedef unsigned int u32;
typedef unsigned char u8;

// A fresh search from root: parent and level -1 except the root's (itself, 0); the root alone
// in the frontier and in visited; next empty.
extern "C" __global__ void reset_search(i64 n, u32 root, i64* parent, int* level, u8* frontier,
                                        u8* next, u8* visited)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const bool is_root = v == (i64)root;
        parent[v] = is_root ? v : -1;
        level[v] = is_root ? 0 : -1;
        frontier[v] = is_root;
        visited[v] = is_root;
        next[v] = 0;
    }
}

// Phase 1 (Fig. 8 bfs_phase1): a frontier vertex leaves the frontier and offers itself as the
// parent of every unvisited neighbour, which it marks in next. Frontier vertices that share a
// neighbour race on its parent: benign, as in the paper, since each of them is one level up
// and an aligned 8-byte store is never torn. Only phase 2 writes visited, so it holds still
// here. The first thread sets the terminate flag (Fig. 8 line 7, there a host-to-device copy
// each level); phase 2 clears it when any vertex joins the next frontier, and the kernel
// boundary orders the two.
extern "C" __global__ void expand(i64 n, const i64* __restrict__ offsets,
                                  const u32* __restrict__ columns, u8* frontier, u8* next,
                                  const u8* visited, i64* parent, int* terminate)
{
    const i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    if (first == 0) *terminate = 1;
    for (i64 v = first; v < n; v += stride) {
        if (!frontier[v]) continue;
        frontier[v] = 0;
        const i64 end = offsets[v + 1];
        for (i64 e = offsets[v]; e < end; ++e) {
            const u32 w = columns[e];
            if (!visited[w]) {
                parent[w] = v;
                next[w] = 1;
            }
        }
    }
}

// Phase 2 (Fig. 8 bfs_phase2): the vertices marked in next form the new frontier, are visited
// and take their level (depth = the new frontier's level); any of them clears terminate.
extern "C" __global__ void advance(i64 n, int depth, u8* frontier, u8* next, u8* visited,
                                   int* level, int* terminate)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        if (!next[v]) continue;
        next[v] = 0;
        frontier[v] = 1;
        visited[v] = 1;
        level[v] = depth;
        *terminate = 0;
    }
}
