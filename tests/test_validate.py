"""Every Graph500 validation rule, broken on purpose, must be caught and named."""

import pytest

from bfs.algorithms import EdgeList, RunContext
from bfs.algorithms.seq_csr import build
from bfs.validate import validate


def good_search(square_graph, root=0):
    (src, dst), n = square_graph
    result = build(EdgeList(src, dst, n), RunContext()).search(root)
    return src, dst, result.parent.copy(), result.level.copy()


def test_correct_search_is_valid_with_nedge(square_graph):
    src, dst, parent, level = good_search(square_graph)
    check = validate(src, dst, parent, 0, level)
    assert check.valid, check.message
    # edges with both ends reached, self-loop excluded, duplicate counted: 6 of 8
    assert (check.nedge, check.reached, check.depth) == (6, 5, 2)
    assert validate(src, dst, parent, 0).valid  # levels derived from the tree


# Each case breaks one rule of a correct search on the square graph: (changes to parent,
# changes to level, whether the levels go to the validator (else they are derived from the
# tree), the rules it may name, a piece of its message).
BROKEN = {
    "rule1-root-not-its-own-parent": ({0: 1}, {}, True, {1}, "parent[root=0]"),
    "rule1-cycle-in-tree": ({1: 2, 2: 1}, {}, True, {1}, "cycle"),
    # the case the reference validator accepts: 5 <-> 6 point at each other, far from the root
    "rule1-two-cycle-in-another-component": ({5: 6, 6: 5}, {}, False, {1}, "cycle"),
    # 2's parent is 1, whose chain now stops
    "rule1-chain-ending-in-unreached": ({1: -1}, {}, False, {1}, "never reaches"),
    "rule1-parent-out-of-range": ({4: 99}, {}, False, {1}, "not a vertex"),
    "rule2-tree-edge-levels": ({}, {2: 3}, True, {2}, "level[2] = 3"),
    # a depth-first tree: 0 -> 1 -> 2 -> 3 puts 3 at level 3 beside its neighbour 0 at level 0
    "rule3-edge-spans-two-levels": ({2: 1, 3: 2}, {}, False, {3}, "more than one apart"),
    "rule4-tree-misses-part-of-component": ({4: -1}, {4: -1}, True, {4}, "does not span"),
    # 5 hung under 4 with consistent levels: no input edge 4-5, but the tree now claims a
    # vertex outside the root's component; its neighbour 6 is unreached
    "rule4-tree-reaches-beyond-component": ({5: 4}, {5: 2}, True, {4, 5}, ""),
    # 4 is at level 1 like 2's real parents, but 4-2 is no edge
    "rule5-tree-edge-not-in-graph": ({2: 4}, {}, True, {5}, "(4, 2)"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_broken_rule_is_caught_and_named(square_graph, case):
    parents, levels, with_level, rules, message = BROKEN[case]
    src, dst, parent, level = good_search(square_graph)
    for v, p in parents.items():
        parent[v] = p
    for v, lv in levels.items():
        level[v] = lv
    check = validate(src, dst, parent, 0, level if with_level else None)
    assert not check.valid and check.rule in rules and message in check.message, check


def test_wrong_level_length(square_graph):
    src, dst, parent, level = good_search(square_graph)
    assert not validate(src, dst, parent, 0, level[:-1]).valid


def test_the_first_failing_edge_is_named_whatever_the_slices(monkeypatch):
    """The edge pass runs in slices on all cores; a list with failures in several slices still
    names its first failing edge, and a valid list counts the same edges in any slicing."""
    import numba
    import numpy as np
    from bfs.validate import cpu
    n = 4096
    src = np.arange(n - 1, dtype=np.int64)          # a path: 0 - 1 - 2 - ...
    dst = src + 1
    parent = np.concatenate(([0], np.arange(n - 1)))
    level = np.arange(n, dtype=np.int64)
    chords = [(3000, 3003), (100, 105), (2000, 2002)]   # each spans levels > 1 apart
    bad_src = np.concatenate((src[:50], [u for u, _ in chords[1:]], src[50:], [chords[0][0]]))
    bad_dst = np.concatenate((dst[:50], [v for _, v in chords[1:]], dst[50:], [chords[0][1]]))
    for slices in (1, 3, 8, 64):
        monkeypatch.setattr(numba, "get_num_threads", lambda: slices)
        seen = np.zeros(n, np.bool_)
        code, u, v, count, seen = cpu._check_edges(src, dst, parent, level, True, seen)
        assert (code, u, v, count) == (cpu.OK, -1, -1, n - 1) and seen[1:].all(), slices
        code, u, v, _, _ = cpu._check_edges(bad_src, bad_dst, parent, level, True,
                                             np.zeros(n, np.bool_))
        assert (code, u, v) == (cpu.SPREAD, 100, 105), slices
