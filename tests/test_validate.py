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
