"""Every Graph500 validation rule, broken on purpose, must be caught and named."""

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


def test_rule1_root_not_its_own_parent(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[0] = 1
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule == 1 and "parent[root=0]" in check.message


def test_rule1_cycle_in_tree(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[1], parent[2] = 2, 1
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule == 1 and "cycle" in check.message


def test_rule1_two_cycle_in_another_component(square_graph):
    # the case the reference validator accepts: 5 <-> 6 point at each other, far from the root
    src, dst, parent, level = good_search(square_graph)
    parent[5], parent[6] = 6, 5
    check = validate(src, dst, parent, 0)
    assert not check.valid and check.rule == 1 and "cycle" in check.message


def test_rule1_chain_ending_in_unreached(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[1] = -1  # 2's parent is 1, whose chain now stops
    check = validate(src, dst, parent, 0)
    assert not check.valid and check.rule == 1 and "never reaches" in check.message


def test_rule1_parent_out_of_range(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[4] = 99
    check = validate(src, dst, parent, 0)
    assert not check.valid and check.rule == 1 and "not a vertex" in check.message


def test_rule2_tree_edge_levels(square_graph):
    src, dst, parent, level = good_search(square_graph)
    level[2] = 3
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule == 2 and "level[2] = 3" in check.message


def test_rule3_edge_spans_two_levels(square_graph):
    # a depth-first tree: 0 -> 1 -> 2 -> 3 puts 3 at level 3 beside its neighbour 0 at level 0
    src, dst, parent, level = good_search(square_graph)
    parent[2], parent[3] = 1, 2
    check = validate(src, dst, parent, 0)
    assert not check.valid and check.rule == 3 and "more than one apart" in check.message


def test_rule4_tree_misses_part_of_component(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[4], level[4] = -1, -1
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule == 4 and "does not span" in check.message


def test_rule4_tree_reaches_beyond_component(square_graph):
    # 5 hung under 4 with consistent levels: no input edge 4-5, but the tree now claims
    # a vertex outside the root's component; its neighbour 6 is unreached
    src, dst, parent, level = good_search(square_graph)
    parent[5], level[5] = 4, 2
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule in (4, 5)


def test_rule5_tree_edge_not_in_graph(square_graph):
    src, dst, parent, level = good_search(square_graph)
    parent[2] = 4  # 4 is at level 1 like 2's real parents, but 4-2 is no edge
    check = validate(src, dst, parent, 0, level)
    assert not check.valid and check.rule == 5 and "(4, 2)" in check.message


def test_wrong_level_length(square_graph):
    src, dst, parent, level = good_search(square_graph)
    assert not validate(src, dst, parent, 0, level[:-1]).valid
