"""Graph500 validation of one search: the spec's five rules, and nedge with the 3.0 convention.

Independent of every BFS in this package (it imports none of them): it sees only the input edge
list, the parent array and, when the algorithm reported one, its level array.

1. tree: parent[root] == root and every other reached vertex's parent chain ends at the root.
   Chains are walked once each with an on-path mark, so any cycle is caught, including a
   parent 2-cycle in a component the root does not reach (which the reference validator misses:
   it measures depth with floats that overflow there).
2. levels: level[root] == 0 and level[v] == level[parent[v]] + 1 for every tree edge. Without a
   reported level array the tree depths stand in for it and the rule holds by construction.
3. every input edge joins vertices whose levels differ by at most one, or neither is reached.
4. the tree spans exactly the root's component: no input edge joins a reached vertex to an
   unreached one (with rule 1 this makes reached == component).
5. every tree edge (parent[v], v) is an edge of the input graph, in either direction.
nedge counts input edges u != v with both ends reached; duplicates count, self-loops do not.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

OK, ROOT, RANGE, UNROOTED, CYCLE, LEVEL, SPREAD, SPAN, NOT_EDGE, SIZE = range(10)


@dataclass
class Validation:
    valid: bool
    nedge: int
    reached: int
    depth: int
    rule: int  # 0 when valid, else the Graph500 rule (1-5) that failed
    message: str


@numba.njit(cache=True)
def _tree_depths(parent, root):
    """(code, culprit vertex, depths); depths[v] = hops from v to the root along parents."""
    n = len(parent)
    depth = np.full(n, -1, np.int64)
    state = np.zeros(n, np.uint8)  # 0 unseen, 1 on the chain being walked, 2 depth known
    path = np.empty(n, np.int64)
    if parent[root] != root:
        return ROOT, root, depth
    depth[root] = 0
    state[root] = 2
    for v in range(n):
        if parent[v] == -1 or state[v] == 2:
            continue
        k = 0
        x = v
        while state[x] == 0:
            p = parent[x]
            if p < -1 or p >= n:
                return RANGE, x, depth
            if p == -1:
                return UNROOTED, x, depth
            state[x] = 1
            path[k] = x
            k += 1
            x = p
        if state[x] == 1:
            return CYCLE, x, depth
        d = depth[x]
        for i in range(k - 1, -1, -1):
            d += 1
            depth[path[i]] = d
            state[path[i]] = 2
    return OK, -1, depth


@numba.njit(cache=True)
def _check_levels(parent, level, root):
    if level[root] != 0:
        return LEVEL, root
    for v in range(len(parent)):
        p = parent[v]
        if (p == -1) != (level[v] == -1):
            return LEVEL, v
        if p != -1 and v != root and level[v] != level[p] + 1:
            return LEVEL, v
    return OK, -1


@numba.njit(cache=True)
def _edge_code(u, v, level):
    """Rules 3 and 4 on one edge: OK, SPAN (one end reached, the other not) or SPREAD (levels
    more than one apart); an edge with neither end reached is OK."""
    lu = level[u]
    lv = level[v]
    if lu < 0 and lv < 0:
        return OK
    if lu < 0 or lv < 0:
        return SPAN
    if lu - lv > 1 or lv - lu > 1:
        return SPREAD
    return OK


def _check_edges(src, dst, parent, level, both_directions, tree_edge_seen):
    """Rules 3 and 4 over an edge list (or a chunk of one), counting edges and marking tree
    edges seen in tree_edge_seen (rule 5, carried from chunk to chunk).

    both_directions: the list is the undirected input (an edge may serve as (p, v) or (v, p));
    otherwise it holds directed halves (a partition block), each undirected edge appearing once
    per direction somewhere, so only u -> v with parent[v] == u is marked and the count is
    twice the undirected one. Returns (code, culprit u, culprit v, count, tree_edge_seen): the
    culprit is the list's first failing edge.

    The edges are cut into slices checked on all cores (a scale-27 list is 2^31 edges of random
    reads: a minute on one core). Each slice stops at its own first failure; the earliest of
    those is the list's first. Marks are only ever set to True, so slices may race on them.
    """
    # the slice count is an argument: a compiled function that asks for the thread count
    # cannot be cached
    return _check_edge_slices(src, dst, parent, level, both_directions, tree_edge_seen,
                              4 * numba.get_num_threads())


@numba.njit(parallel=True, cache=True)
def _check_edge_slices(src, dst, parent, level, both_directions, tree_edge_seen, slices):
    m = len(src)
    size = (m + slices - 1) // slices
    first_bad = np.full(slices, m, np.int64)
    counts = np.zeros(slices, np.int64)
    for k in numba.prange(slices):
        count = 0
        for i in range(k * size, min(m, (k + 1) * size)):
            u = src[i]
            v = dst[i]
            if _edge_code(u, v, level) != OK:
                first_bad[k] = i
                break
            if level[u] < 0 or u == v:    # neither end reached (a good edge), or a loop
                continue
            count += 1
            if parent[v] == u:
                tree_edge_seen[v] = True
            if both_directions and parent[u] == v:
                tree_edge_seen[u] = True
        counts[k] = count
    bad = first_bad.min()
    if bad < m:
        u = src[bad]
        v = dst[bad]
        return _edge_code(u, v, level), u, v, counts.sum(), tree_edge_seen
    return OK, -1, -1, counts.sum(), tree_edge_seen


@numba.njit(cache=True)
def _first_untied(parent, root, tree_edge_seen):
    for v in range(len(parent)):
        if v != root and parent[v] != -1 and not tree_edge_seen[v]:
            return v
    return -1


RULE_OF = {ROOT: 1, RANGE: 1, UNROOTED: 1, CYCLE: 1, LEVEL: 2, SPREAD: 3, SPAN: 4,
           NOT_EDGE: 5, SIZE: 1}


def failure(code: int, message: str, reached: int) -> Validation:
    return Validation(False, 0, reached, -1, RULE_OF[code], f"rule {RULE_OF[code]}: {message}")


def _failure(parent, code: int, message: str) -> Validation:
    return failure(code, message, int(np.count_nonzero(parent != -1)))


# The wording of the failures both validators report (bfs.validate.gpu quotes scalars it read
# back from the device).
def level_message(v: int, level_v: int, expect: str) -> str:
    return f"level[{v}] = {level_v}, expected {expect}"


def edge_message(code: int, u: int, v: int, level_u: int, level_v: int) -> str:
    if code == SPAN:
        return (f"input edge ({u}, {v}) joins reached and unreached vertices (levels {level_u}, "
                f"{level_v}): the tree does not span the component")
    return f"input edge ({u}, {v}) joins levels {level_u} and {level_v}, more than one apart"


def tree_edge_message(p: int, v: int) -> str:
    return f"tree edge ({p}, {v}) is not an edge of the input graph"


def check_tree(parent: np.ndarray, root: int, level: np.ndarray | None):
    """Rules 1 and 2. Returns (failure or None, level array to check the edges against)."""
    n = len(parent)
    if not 0 <= root < n:
        return _failure(parent, ROOT, f"root {root} is outside 0..{n - 1}"), None
    code, v, depth = _tree_depths(parent, root)
    messages = {
        ROOT: lambda: f"parent[root={root}] = {parent[root]}, expected the root itself",
        RANGE: lambda: f"parent[{v}] = {parent[v]} is not a vertex (0..{n - 1}) or -1",
        UNROOTED: lambda: f"vertex {v} has a child in the tree but parent -1: "
                          f"its chain never reaches root {root}",
        CYCLE: lambda: f"the parent chain through vertex {v} is a cycle "
                       f"(parent[{v}] = {parent[v]}), not a path to root {root}",
    }
    if code != OK:
        return _failure(parent, code, messages[code]()), None
    if level is None:
        return None, depth.astype(np.int32)
    level = np.ascontiguousarray(level, dtype=np.int32)
    if len(level) != n:
        return _failure(parent, SIZE, f"level array has {len(level)} entries, "
                                      f"parent array {n}"), None
    code, v = _check_levels(parent, level, root)
    if code != OK:
        p = parent[v]
        expect = "0" if v == root else ("-1 (unreached)" if p == -1
                                         else f"level[{p}] + 1 = {level[p] + 1}")
        return _failure(parent, code, level_message(v, level[v], expect)), None
    return None, level


def edge_failure(parent, level, code, u, v) -> Validation:
    return _failure(parent, code, edge_message(code, u, v, level[u], level[v]))


def not_edge_failure(parent, v) -> Validation:
    return _failure(parent, NOT_EDGE, tree_edge_message(parent[v], v))


def success(level, nedge) -> Validation:
    return Validation(True, int(nedge), int(np.count_nonzero(level >= 0)), int(level.max()),
                      0, "valid")


def validate(src: np.ndarray, dst: np.ndarray, parent: np.ndarray, root: int,
             level: np.ndarray | None = None) -> Validation:
    """Check one search's parent (and optional level) array against the input edge list."""
    return validate_chunks(lambda: iter([(src, dst)]), parent, root, level)


def validate_chunks(chunks, parent: np.ndarray, root: int,
                    level: np.ndarray | None = None) -> Validation:
    """validate() over an edge list that chunks() yields as (src, dst) arrays, one pass."""
    parent = np.ascontiguousarray(parent, dtype=np.int64)
    failure, level = check_tree(parent, root, level)
    if failure:
        return failure
    seen = np.zeros(len(parent), np.bool_)
    nedge = 0
    for src, dst in chunks():
        code, u, v, count, _ = _check_edges(src, dst, parent, level, True, seen)
        if code != OK:
            return edge_failure(parent, level, code, int(u), int(v))
        nedge += int(count)
        del src, dst   # before the next chunk is made: one alive at a time
    v = _first_untied(parent, root, seen)
    if v >= 0:
        return not_edge_failure(parent, v)
    return success(level, nedge)


def validate_blocks(comm, chunks, result, root: int, n_vertices: int) -> Validation | None:
    """The same rules for a distributed search, each rank reading only its own block, which
    chunks() yields as (src, dst) pairs: whole, or routed again a chunk at a time (a
    collective pass every rank makes to the end).

    Rank 0 holds the gathered parent/level arrays (`result`) and checks rules 1-2; it then
    broadcasts both arrays and every rank checks rules 3-4 on its block of directed halves;
    rule-5 marks are OR-reduced back to rank 0. Returns the verdict on rank 0, None elsewhere.
    """
    from mpi4py import MPI
    is_root = comm.Get_rank() == 0
    verdict = None
    flag = np.zeros(1, np.int32)
    if is_root:
        parent = np.ascontiguousarray(result.parent, dtype=np.int64)
        verdict, level = check_tree(parent, root, result.level)
        flag[0] = verdict is not None
    comm.Bcast(flag, root=0)
    if flag[0]:
        return verdict
    if not is_root:
        parent = np.empty(n_vertices, np.int64)
        level = np.empty(n_vertices, np.int32)
    comm.Bcast(parent, root=0)
    comm.Bcast(level, root=0)
    code, u, v, count, seen = OK, -1, -1, 0, np.zeros(n_vertices, np.bool_)
    for src, dst in chunks():
        c, cu, cv, counted, seen = _check_edges(src, dst, parent, level, False, seen)
        count += counted
        if code == OK and c != OK:   # the first failure; the pass still goes to its end
            code, u, v = c, cu, cv
    codes = np.empty((comm.Get_size(), 3), np.int64) if is_root else None
    comm.Gather(np.array([code, u, v], np.int64), codes, root=0)
    total = np.zeros(1, np.int64)
    comm.Reduce(np.array([count], np.int64), total, op=MPI.SUM, root=0)
    bits = np.packbits(seen)
    all_bits = np.empty_like(bits) if is_root else None
    comm.Reduce(bits, all_bits, op=MPI.BOR, root=0)
    if not is_root:
        return None
    failed = codes[codes[:, 0] != OK]
    if len(failed):
        code, u, v = (int(x) for x in failed[0])
        return edge_failure(parent, level, code, u, v)
    seen = np.unpackbits(all_bits, count=n_vertices).astype(np.bool_)
    v = _first_untied(parent, root, seen)
    if v >= 0:
        return not_edge_failure(parent, v)
    return success(level, total[0] // 2)
