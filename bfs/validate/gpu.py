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
the edges chunk by chunk (bfs.graphs.kronecker_gpu is bit-identical to the reference generator).
"""
from __future__ import annotations


from pathlib import Path

import numpy as np

from ..device import load_module
from .. import device
from .cpu import (LEVEL, NOT_EDGE, RANGE, ROOT, SIZE, SPAN, SPREAD, UNROOTED, Validation,
                  edge_message, failure, level_message, tree_edge_message)

NONE = 0xFFFFFFFFFFFFFFFF     # "no culprit" in a first-index slot
SLOTS = 16                    # ctl[code] = first culprit of that code; then the counters
REACHED, DEPTH, NEDGE = 12, 13, 14

EDGE_TYPES = {np.dtype(np.uint32): "check_edges<unsigned int>",
              np.dtype(np.int32): "check_edges<int>",
              np.dtype(np.int64): "check_edges<long long>",
              np.dtype(np.uint64): "check_edges<unsigned long long>"}


def _module():
    return load_module(Path(__file__).with_name("validate.cu"), tuple(EDGE_TYPES.values()))


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
    cp = device.require_gpu()
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
    grid = (device.grid_for(n, threads),)
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
            mod.get_function(kernel)((device.grid_for(m, threads),), (threads,),
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
