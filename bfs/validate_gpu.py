"""Graph500 validation of one search on the GPU: bfs.validate's five rules, in three passes.

The CPU validator (bfs.validate) walks parent chains; that is serial and takes seconds per
search at scale 25, so `bfs bench --backend gpu` checks every search here instead, against the
edge list the generator produced (not the CSR built from it: a Kernel-1 bug that dropped edges
would be caught, as with the CPU validator). The tests hold both validators to the same verdicts.

Pass 1, over vertices (rules 1 and 2, with the reported level array): parent[root] == root and
level[root] == 0; an unreached vertex has parent -1 and level -1; every other vertex's parent
is a vertex with level[parent] >= 0 and level[v] == level[parent] + 1. That the levels strictly
fall along every chain is what makes each chain end at the root: a cycle, in the root's
component or any other, must break the +1 rule somewhere, so no chain walk is needed.
Pass 2, over the edge list in device chunks (rules 3 and 4, nedge, rule-5 marks): an edge joins
two unreached vertices, or two reached ones whose levels differ by at most one; u != v with both
reached counts towards nedge; parent[v] == u (and parent[u] == v for the undirected input) marks
v's tree edge as present.
Pass 3, over vertices (rule 5): every reached vertex but the root has its tree edge marked.
Each pass records the smallest offending index per failure kind with atomicMin, so the verdict
names the same first culprit on every run; the host then reads the few values its message needs.

Chunks: validate_device takes a callable that yields (src, dst) device arrays, so a graph whose
edge list does not fit next to its CSR (scale 28 on one 80 GB GPU) is checked by regenerating
the edges chunk by chunk (bfs.kronecker_gpu is bit-identical to the reference generator).
"""
from __future__ import annotations

import functools

import numpy as np

from . import gpu
from .validate import (LEVEL, NOT_EDGE, RANGE, ROOT, SIZE, SPAN, SPREAD, UNROOTED, Validation,
                       edge_message, failure, level_message, tree_edge_message)

NONE = 0xFFFFFFFFFFFFFFFF     # "no culprit" in a first-index slot
SLOTS = 16                    # ctl[code] = first culprit of that code; then the counters
REACHED, DEPTH, NEDGE = 12, 13, 14

SOURCE = r"""
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
"""

EDGE_TYPES = {np.dtype(np.uint32): "check_edges<unsigned int>",
              np.dtype(np.int32): "check_edges<int>",
              np.dtype(np.int64): "check_edges<long long>",
              np.dtype(np.uint64): "check_edges<unsigned long long>"}


@functools.lru_cache(maxsize=None)
def _module():
    cp = gpu.require_gpu()
    return cp.RawModule(code=SOURCE, options=("-std=c++17",),
                        name_expressions=list(EDGE_TYPES.values()))


class _Edges:
    """Reads single edges back for a failure message (index in the chunked list)."""

    def __init__(self, chunks):
        self.chunks = chunks

    def __getitem__(self, index):
        base = 0
        for src, dst in self.chunks():
            if index < base + src.size:
                return int(src[index - base]), int(dst[index - base])
            base += src.size
        raise IndexError(index)


def validate_device(edge_chunks, parent, level, root: int, both_directions: bool = True,
                    threads: int = 256) -> Validation:
    """Check one search held on the device (parent int64[n], level int32[n]).

    edge_chunks: a callable returning an iterable of (src, dst) device arrays (any integer type
    among uint32/int32/int64/uint64), the whole input edge list in order; called once, and once
    more only to quote an offending edge. both_directions as in bfs.validate._check_edges.
    """
    cp = gpu.require_gpu()
    mod = _module()
    n = int(parent.size)
    root = int(root)
    if parent.dtype != cp.int64 or level.dtype != cp.int32:
        raise TypeError(f"validate_device wants int64 parent and int32 level, got "
                        f"{parent.dtype} and {level.dtype}")
    if not 0 <= root < n:
        return failure(ROOT, f"root {root} is outside 0..{n - 1}", 0)
    if level.size != n:
        return failure(SIZE, f"level array has {level.size} entries, parent array {n}", 0)
    ctl = cp.full(SLOTS, NONE, dtype=cp.uint64)
    ctl[REACHED:] = 0
    grid = (gpu.grid_for(n, threads),)
    mod.get_function("check_vertices")(grid, (threads,), (parent, level, np.int64(n),
                                                          np.int64(root), ctl))
    host = ctl.get()
    reached = int(host[REACHED])

    def first(code):
        return int(host[code]) if host[code] != NONE else None

    for code in (ROOT, RANGE, UNROOTED, LEVEL):
        v = first(code)
        if v is None:
            continue
        p = int(parent[v])
        if code == ROOT:
            msg = f"parent[root={root}] = {p}, expected the root itself"
        elif code == RANGE:
            msg = f"parent[{v}] = {p} is not a vertex (0..{n - 1}) or -1"
        elif code == UNROOTED:
            msg = (f"vertex {v} has parent {p}, which has parent -1: "
                   f"its chain never reaches root {root}")
        else:
            expect = ("0" if v == root else "-1 (unreached)" if p == -1
                      else f"level[{p}] + 1 = {int(level[p]) + 1}")
            msg = level_message(v, int(level[v]), expect)
        return failure(code, msg, reached)

    seen = cp.zeros(n, dtype=cp.uint8)
    base = 0
    for src, dst in edge_chunks():
        kernel = EDGE_TYPES.get(np.dtype(src.dtype))
        if kernel is None or src.dtype != dst.dtype or src.size != dst.size:
            raise TypeError(f"edge chunk of {src.dtype}[{src.size}] and {dst.dtype}[{dst.size}]"
                            f": want equal sizes and one of {sorted(map(str, EDGE_TYPES))}")
        m = int(src.size)
        if m:
            mod.get_function(kernel)((gpu.grid_for(m, threads),), (threads,),
                                     (src, dst, np.int64(m), np.int64(base), parent, level,
                                      np.int64(n), np.int32(both_directions), seen, ctl))
        base += m
    mod.get_function("check_tree_edges")(grid, (threads,), (parent, np.int64(n),
                                                            np.int64(root), seen, ctl))
    host = ctl.get()
    for code in (SIZE, SPAN, SPREAD):
        i = first(code)
        if i is None:
            continue
        u, v = _Edges(edge_chunks)[i]
        if code == SIZE:
            msg = f"input edge {i} ({u}, {v}) names a vertex outside 0..{n - 1}"
        else:
            msg = edge_message(code, u, v, int(level[u]), int(level[v]))
        return failure(code, msg, reached)
    v = first(NOT_EDGE)
    if v is not None:
        return failure(NOT_EDGE, tree_edge_message(int(parent[v]), v), reached)
    nedge = int(host[NEDGE])
    return Validation(True, nedge if both_directions else nedge // 2, reached,
                      int(host[DEPTH]), 0, "valid")
