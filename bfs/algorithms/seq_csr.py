"""seq-csr: sequential level-synchronous BFS over the undirected CSR.

The Graph500 reference's seq-csr: a FIFO queue processed level by level; each frontier vertex
scans its CSR row and claims every unvisited neighbour (parent == -1) for the next level. Work is
O(n + m); it is the CPU baseline every other algorithm's depth, reach and nedge are checked
against. Kernel 1 is bfs.build.csr_cpu.build_csr_chunks, over the whole list or (--edge-list
stream) over chunks made again for each of its two passes.
"""
from __future__ import annotations

import numba
import numpy as np

from ..build.csr_cpu import build_csr_chunks
from . import EdgeList, RunContext, SearchResult, Searcher


@numba.njit(cache=True)
def start_search(n, root):
    """parent, level (root at level 0, everything else -1) and a queue holding the root."""
    parent = np.full(n, -1, np.int64)
    level = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int64)
    parent[root] = root
    level[root] = 0
    queue[0] = root
    return parent, level, queue


@numba.njit(cache=True)
def bfs_csr(offsets, columns, root):
    parent, level, queue = start_search(len(offsets) - 1, root)
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        next_level = level[u] + 1
        for e in range(offsets[u], offsets[u + 1]):
            v = columns[e]
            if parent[v] == -1:
                parent[v] = u
                level[v] = next_level
                queue[tail] = v
                tail += 1
    return parent, level


class SeqCsr(Searcher):
    def __init__(self, graph: EdgeList):
        # chunk by chunk: a streamed edge list (--edge-list stream) is never whole
        self.csr = build_csr_chunks(graph.host_chunks(), graph.n_vertices)

    def search(self, root: int) -> SearchResult:
        parent, level = bfs_csr(self.csr.offsets, self.csr.columns, root)
        return SearchResult(parent, level)


def build(graph: EdgeList, ctx: RunContext) -> SeqCsr:
    return SeqCsr(graph)


build.streams_edges = True   # builds from graph.host_chunks(), a pass at a time
