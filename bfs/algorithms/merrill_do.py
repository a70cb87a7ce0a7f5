"""merrill-do: direction-optimizing GPU BFS (Merrill's top-down levels + bottom-up levels).

Paper: S. Beamer, K. Asanovic, D. Patterson, "Direction-Optimizing Breadth-First Search",
SC 2012. Top-down levels are bfs.algorithms.merrill's (scan-partitioned expand-contract tiles,
single-CTA small frontiers); in the levels where the frontier holds a large share of the
unexplored edges the search runs bottom-up instead: every unvisited vertex looks through its own
adjacency for a neighbour in the frontier and stops at the first one.

Why. A top-down level must read every edge of the frontier (at scale 25 the middle level alone
is most of the 2^30 directed edges), and almost all of them lead to vertices that are already
visited or claimed by another edge. Bottom-up, a vertex of a Kronecker graph usually meets a
frontier parent within its first few neighbours, so the big levels read a small fraction of the
edges.

Bottom-up kernel: one thread per vertex, 32 consecutive vertices per warp, so the warp owns one
word of the visited bitmask and one word of the next frontier bitmap and writes both with plain
stores (no atomics, no clearing pass: every word of the next bitmap is written). The frontier is
a bitmap (1 bit per vertex, L2-resident); found vertices also go to the vertex queue (block-
aggregated append, with their degrees) so a switch back to top-down needs no conversion.

Switching (Beamer's heuristic, on the host, which learns the frontier size and its summed
degree each level anyway): top-down -> bottom-up when the frontier's edges m_f exceed
m_u / alpha (m_u: edges of the vertices not yet reached); bottom-up -> top-down when the
frontier has shrunk below n / beta. alpha = 14 and beta = 24 as in the paper unless given.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import gpu
from ..graphdir import BfsError
from . import EdgeList, RunContext
from .merrill import BLOCK, MerrillSearcher

ALPHA = 14.0
BETA = 24.0

SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
#define FULL 0xFFFFFFFFu
#define BLOCK 256

// frontier bitmap from the vertex queue (the bitmap was zeroed before)
extern "C" __global__ void queue_to_bitmap(const u32* __restrict__ queue, i64 q,
                                           u32* __restrict__ bitmap)
{
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < q;
         i += (i64)gridDim.x * blockDim.x) {
        const u32 v = queue[i];
        atomicOr(bitmap + (v >> 5), 1u << (v & 31));
    }
}

// One bottom-up level over vertices [0, 32 * n_words). Warps are aligned to bitmask words.
extern "C" __global__ void __launch_bounds__(BLOCK)
bottom_up(const i64* __restrict__ offsets, const u32* __restrict__ columns, i64 n, i64 n_words,
          const u32* __restrict__ frontier, u32* __restrict__ next_frontier,
          u32* __restrict__ visited, i64* __restrict__ parent, int* __restrict__ level,
          int next_level, u32* __restrict__ qout, i64* __restrict__ degout,
          u64* counter, u64* other_counter)
{
    __shared__ u32 s_count;
    __shared__ u64 s_degsum, s_gbase;
    const u32 lane = threadIdx.x & 31;
    if (blockIdx.x == 0 && threadIdx.x == 0) { other_counter[0] = 0; other_counter[1] = 0; }
    const i64 total = n_words * 32;
    for (i64 base = (i64)blockIdx.x * BLOCK; base < total; base += (i64)gridDim.x * BLOCK) {
        if (threadIdx.x == 0) { s_count = 0; s_degsum = 0; }
        __syncthreads();
        const i64 v = base + threadIdx.x;
        const bool in_range = v < total;
        const u32 word = in_range ? visited[v >> 5] : FULL;
        bool found = false;
        u32 p = 0;
        i64 deg = 0;
        if (v < n && !((word >> lane) & 1u)) {
            const i64 b = offsets[v], e = offsets[v + 1];
            deg = e - b;
            // four neighbours per step: four independent column loads, then four independent
            // bitmap loads, instead of a chain of two dependent loads per neighbour
            i64 k = b;
            for (; k + 4 <= e; k += 4) {
                u32 u[4];
                bool hit[4];
#pragma unroll
                for (int t = 0; t < 4; ++t) u[t] = columns[k + t];
#pragma unroll
                for (int t = 0; t < 4; ++t) hit[t] = (__ldg(frontier + (u[t] >> 5)) >> (u[t] & 31)) & 1u;
                if (hit[0] | hit[1] | hit[2] | hit[3]) {
                    p = hit[0] ? u[0] : hit[1] ? u[1] : hit[2] ? u[2] : u[3];
                    found = true;
                    break;
                }
            }
            for (; !found && k < e; ++k) {
                const u32 u = columns[k];
                if ((frontier[u >> 5] >> (u & 31)) & 1u) { p = u; found = true; }
            }
        }
        const u32 mask = __ballot_sync(FULL, found);
        if (in_range && lane == 0) {
            next_frontier[v >> 5] = mask;
            if (mask) visited[v >> 5] = word | mask;
        }
        u32 pos = 0;
        if (mask) {
            i64 sum = found ? deg : 0;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(FULL, sum, o);
            u32 b = 0;
            if (lane == 0) { b = atomicAdd(&s_count, (u32)__popc(mask)); atomicAdd(&s_degsum, (u64)sum); }
            pos = __shfl_sync(FULL, b, 0) + __popc(mask & ((1u << lane) - 1u));
        }
        __syncthreads();
        if (threadIdx.x == 0 && s_count) {
            s_gbase = atomicAdd(counter, (u64)s_count);
            atomicAdd(counter + 1, s_degsum);
        }
        __syncthreads();
        if (found) {
            parent[v] = (i64)p;
            level[v] = next_level;
            qout[s_gbase + pos] = (u32)v;
            degout[s_gbase + pos] = deg;
        }
    }
}
"""


@functools.lru_cache(maxsize=None)
def _module():
    cp = gpu.require_gpu()
    return cp.RawModule(code=SOURCE, options=("-std=c++17",))


class MerrillDoSearcher(MerrillSearcher):
    """MerrillSearcher whose big levels run bottom-up (see the module docstring)."""

    def __init__(self, offsets, columns, alpha: float = ALPHA, beta: float = BETA, **options):
        if options.get("order", "graph") != "graph":
            raise BfsError("merrill-do runs on the graph's own ids only (order=graph): its "
                           "bottom-up levels write parent and level directly")
        super().__init__(offsets, columns, **options)
        cp = self.cp
        gpu.check_fits(8 * self.n_words, "merrill-do frontier bitmaps")
        self.alpha, self.beta = float(alpha), float(beta)
        self.fronts = (cp.empty(self.n_words, dtype=cp.uint32),
                       cp.empty(self.n_words, dtype=cp.uint32))
        mod = _module()
        self.k_bitmap = mod.get_function("queue_to_bitmap")
        self.k_bottom_up = mod.get_function("bottom_up")
        self.launches["bottom_up"] = 0
        self.bu_blocks = gpu.sm_count() * 8

    def _start(self, root):
        self.last_q = 0
        self.bottom_up = False
        self.front = 0

    def _bottom_up_level(self, q, depth):
        cur, slot = self.cur, self.slot
        if not self.bottom_up:  # entering bottom-up: the frontier queue becomes a bitmap
            bm = self.fronts[self.front]
            bm.fill(0)
            self.k_bitmap((gpu.grid_for(q),), (BLOCK,), (self.queues[cur], np.int64(q), bm))
            self.bottom_up = True
        counter, other = self.ctl_slots[slot], self.ctl_slots[1 - slot]
        blocks = max(1, min(self.bu_blocks, -(-self.n_words * 32 // BLOCK)))
        self.k_bottom_up((blocks,), (BLOCK,),
                         (self.offsets, self.columns, np.int64(self.n), np.int64(self.n_words),
                          self.fronts[self.front], self.fronts[1 - self.front], self.visited,
                          self.parent, self.level, np.int32(depth + 1), self.queues[1 - cur],
                          self.degs[1 - cur], counter, other))
        self.launches["bottom_up"] += 1
        ctl = self._read_ctl()
        self.slot ^= 1
        self.cur ^= 1
        self.front ^= 1
        return int(ctl[2 * slot]), int(ctl[2 * slot + 1]), 1

    def _step(self, q, edges, depth):
        unexplored = self.nnz - self.visited_edges
        if self.bottom_up:
            # stay bottom-up while the frontier is large or still growing
            stay = q >= self.n / self.beta or q > self.last_q
        else:
            stay = edges > unexplored / self.alpha
        self.last_q = q
        if stay:
            return ("bottom-up",) + self._bottom_up_level(q, depth)
        self.bottom_up = False
        return super()._step(q, edges, depth)


def build(graph: EdgeList, ctx: RunContext) -> MerrillDoSearcher:
    """Kernel 1 on the GPU (as merrill), then the search buffers and frontier bitmaps."""
    offsets, columns = gpu.csr_from_edges(graph.src, graph.dst, graph.n_vertices)
    return MerrillDoSearcher(offsets, columns, **ctx.options.get("merrill-do", {}))


def from_csr(offsets, columns, **options) -> MerrillDoSearcher:
    """A searcher over a CSR already in device memory (bfs bench)."""
    return MerrillDoSearcher(offsets, columns, **options)


def warm_up(ctx: RunContext) -> None:
    """Called by the harness before Kernel 1 is timed."""
    gpu.warm_up(from_csr)
