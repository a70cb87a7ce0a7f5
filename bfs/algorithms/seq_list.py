"""seq-list: the Graph500 reference's sequential list BFS (SEI report, "seq-list").

Kernel 1 threads the edge list itself into adjacency lists instead of copying it into a CSR:
entry 2e is edge e seen from its src, 2e+1 from its dst; head[v] is v's first entry and
next[k] the one after k. Building it is one pass with no prefix sum, but every search then
chases a pointer per edge (poor locality), which is why the reference keeps it only as the
simplest correct baseline. Self-loops are left out of the lists, duplicates stay.
"""
from __future__ import annotations

import numba
import numpy as np

from . import EdgeList, RunContext, SearchResult, Searcher
from .seq_csr import start_search


@numba.njit(cache=True)
def build_lists(src, dst, n_vertices):
    head = np.full(n_vertices, -1, np.int64)
    nxt = np.full(2 * len(src), -1, np.int64)
    for e in range(len(src)):
        u = src[e]
        v = dst[e]
        if u == v:
            continue
        nxt[2 * e] = head[u]
        head[u] = 2 * e
        nxt[2 * e + 1] = head[v]
        head[v] = 2 * e + 1
    return head, nxt


@numba.njit(cache=True)
def bfs_list(head, nxt, src, dst, root):
    parent, level, queue = start_search(len(head), root)
    qhead = 0
    qtail = 1
    while qhead < qtail:
        u = queue[qhead]
        qhead += 1
        k = head[u]
        while k >= 0:
            e = k >> 1
            v = dst[e] if (k & 1) == 0 else src[e]
            if parent[v] == -1:
                parent[v] = u
                level[v] = level[u] + 1
                queue[qtail] = v
                qtail += 1
            k = nxt[k]
    return parent, level


class SeqList(Searcher):
    def __init__(self, graph: EdgeList):
        self.src, self.dst = graph.src, graph.dst
        self.head, self.next = build_lists(graph.src, graph.dst, graph.n_vertices)

    def search(self, root: int) -> SearchResult:
        parent, level = bfs_list(self.head, self.next, self.src, self.dst, root)
        return SearchResult(parent, level)


def build(graph: EdgeList, ctx: RunContext) -> SeqList:
    return SeqList(graph)
