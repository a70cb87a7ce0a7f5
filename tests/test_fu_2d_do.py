"""2d-do's local kernels on hand-made blocks, and whole searches on a 1x1 grid in this process
(MPI.COMM_SELF); the multi-rank runs are in test_mpi.py."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bfs.algorithms import RunContext
from bfs.errors import BfsError
from bfs.algorithms.fu_2d import WORD, compress
from bfs.algorithms.fu_2d_do import _bottom_up, _degree_sum, _push
from bfs.validate import validate

from test_algorithms import random_graph, scipy_levels


def bits(*indices, n_words=2):
    words = np.zeros(n_words, np.uint64)
    for i in indices:
        words[i // WORD] |= np.uint64(1) << np.uint64(i % WORD)
    return words


def test_bottom_up_stops_at_the_first_frontier_in_edge():
    # in-edges (column <- row) of a block with 2 words of rows and of columns; frontier {1, 65}
    in_edges = {0: [2, 1, 65],   # found at its 2nd edge: parent 1, the 3rd is never read
                1: [0, 2],       # no frontier in-edge: both read
                3: [1],          # visited: skipped, nothing read
                64: [3, 65],     # second word: parent 65
                70: []}          # no in-edges at all
    cols = np.array([c for c, rows in in_edges.items() for _ in rows], np.int64)
    rows = np.array([r for rs in in_edges.values() for r in rs], np.int64)
    offsets, csc_rows = compress(lambda: [(cols, rows)], 2 * WORD)
    row_global = np.arange(2 * WORD, dtype=np.int64) + 1000
    out = bits(5)                            # found vertices are added to Out
    pred = np.full(2 * WORD, -1, np.int64)
    todo = ~bits(3)                          # every vertex but the visited 3
    examined = _bottom_up(bits(1, 65), offsets, csc_rows, todo, 0, row_global, out, pred)
    np.testing.assert_array_equal(out, bits(0, 5, 64))
    np.testing.assert_array_equal(todo, ~bits(0, 3, 64))     # found ones leave todo
    assert examined == 2 + 2 + 2
    assert (pred[0], pred[64]) == (1001, 1065)
    assert (np.delete(pred, [0, 64]) == -1).all()
    # a slice: the second word only (lo = 1), its todo naming 64 and 70
    out, pred, todo = bits(), np.full(2 * WORD, -1, np.int64), bits(0, 6, n_words=1)
    assert _bottom_up(bits(1, 65), offsets, csc_rows, todo, 1, row_global, out, pred) == 2
    np.testing.assert_array_equal(out, bits(64))
    np.testing.assert_array_equal(todo, bits(6, n_words=1))
    assert pred[64] == 1065 and pred[0] == -1


def test_push_marks_the_frontiers_unseen_in_neighbours():
    # in-edges (column <- row) of a block with 2 words of rows and of columns
    in_edges = {0: [2, 1, 65], 1: [0, 2], 64: [3, 65, 127], 70: [5]}
    cols = np.array([c for c, rows in in_edges.items() for _ in rows], np.int64)
    rows = np.array([r for rs in in_edges.values() for r in rs], np.int64)
    offsets, csc_rows = compress(lambda: [(cols, rows)], 2 * WORD)
    found = bits(4)                          # marks already there stay
    # frontier columns {0, 64}; rows 2 and 127 seen before: every in-edge read, 4 rows marked
    assert _push(bits(0, 64), offsets, csc_rows, bits(2, 127), found) == 3 + 3
    np.testing.assert_array_equal(found, bits(1, 3, 4, 65))
    found = bits()
    assert _push(bits(), offsets, csc_rows, bits(), found) == 0
    np.testing.assert_array_equal(found, bits())


def test_degree_sum_counts_the_set_vertices_edges():
    offsets = np.concatenate([[0], np.cumsum(np.arange(2 * WORD))]).astype(np.int64)
    assert _degree_sum(bits(0, 5, 64, 127), offsets) == 0 + 5 + 64 + 127
    assert _degree_sum(bits(), offsets) == 0


def searcher_1x1(src, dst, n, **options):
    from mpi4py import MPI

    from bfs.algorithms.fu_2d_do import build
    from bfs.algorithms import Block
    keep = src != dst   # the partition's block: both directions, no self-loops
    s, d = src[keep].astype(np.int64), dst[keep].astype(np.int64)
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]},
                  np.concatenate([s, d]), np.concatenate([d, s]))
    return build(block, RunContext("cpu", options))


@pytest.mark.parametrize("alpha", [1.0, 15.0, 1e9])
@settings(max_examples=30, deadline=None)
@given(graph=random_graph())
def test_levels_match_scipy_in_both_directions(alpha, graph):
    src, dst, n, root = graph
    searcher = searcher_1x1(src, dst, n, alpha=alpha, beta=18.0)
    searcher.search(root)
    result = searcher.gather(n)
    np.testing.assert_array_equal(result.level, scipy_levels(src, dst, n, root))
    check = validate(src, dst, result.parent, root, result.level)
    assert check.valid, check.message
    assert len(searcher.directions) == searcher.levels_run \
        == len(searcher.level_edges_examined)
    if alpha == 1.0:
        assert "bottom-up" not in searcher.directions


@pytest.mark.parametrize("alpha", [1.0, 15.0, 1e9])
@settings(max_examples=30, deadline=None)
@given(graph=random_graph())
def test_one_adjacency_searches_as_two(alpha, graph):
    """adjacency=csc (the block's CSC alone, top-down levels pushed through it): no CSR, the
    same levels and directions as the CSR and CSC give, a valid tree, and a top-down level
    reads at least the frontier's edges (the push's) on top of the resolve's."""
    src, dst, n, root = graph
    one = searcher_1x1(src, dst, n, alpha=alpha, beta=18.0, adjacency="csc")
    two = searcher_1x1(src, dst, n, alpha=alpha, beta=18.0)
    assert one.csr_offsets is None and one.csr_cols is None
    one.search(root)
    two.search(root)
    got, want = one.gather(n), two.gather(n)
    np.testing.assert_array_equal(got.level, want.level)
    check = validate(src, dst, got.parent, root, got.level)
    assert check.valid, check.message
    assert one.directions == two.directions
    for direction, a, b in zip(one.directions, one.level_edges_examined,
                               two.level_edges_examined):
        if direction == "top-down":
            assert a >= b     # b: the frontier's edges, all of which the push reads
        else:
            assert a == b


def test_the_floor_keeps_a_small_frontier_top_down():
    """A frontier goes bottom-up only with at least n * floor edges (merrill-do's floor, the
    GPU 2d-do's default; 0 on the CPU): from a corner of a 60 x 60 lattice Beamer's rule alone
    sends the last levels bottom-up (frontiers of ~27 vertices, ~108 edges); a floor of n/64
    (56 edges) lets it, one of n/16 (225) keeps every level top-down; every switch to
    bottom-up comes at a frontier of at least the floor's edges; the levels are the BFS's."""
    from bfs.graphs.lattice import lattice_edges
    src, dst, n = lattice_edges(60, 60, ordered=True)
    degree = np.bincount(np.concatenate([src, dst]), minlength=n)
    ran = {}
    for floor in (0.0, 1 / 64, 1 / 16):
        s = searcher_1x1(src, dst, n, alpha=15.0, beta=float("inf"), floor=floor)
        s.search(0)
        level = s.gather(n).level
        np.testing.assert_array_equal(level, scipy_levels(src, dst, n, 0))
        edges = np.bincount(level, weights=degree, minlength=s.levels_run)
        for d, direction in enumerate(s.directions):
            if direction == "bottom-up" and s.directions[d - 1] == "top-down":
                assert edges[d] >= int(n * floor), (floor, d, edges[d])
        ran[floor] = s.directions
    assert "bottom-up" in ran[0.0] and ran[1 / 64] == ran[0.0]
    assert set(ran[1 / 16]) == {"top-down"}


def test_alpha_beta_and_substeps_are_checked():
    from bfs.errors import BfsError
    src, dst = np.array([0], np.uint32), np.array([1], np.uint32)
    with pytest.raises(BfsError, match="alpha must be > 0"):
        searcher_1x1(src, dst, 2, alpha=0)
    with pytest.raises(BfsError, match="floor must be >= 0, got -1"):
        searcher_1x1(src, dst, 2, floor=-1)
    with pytest.raises(BfsError, match="substeps must be 1 .* or 0, got 2"):
        searcher_1x1(src, dst, 2, substeps=2)
    with pytest.raises(BfsError, match="adjacency must be both .* or csc .*, got 'csr'"):
        searcher_1x1(src, dst, 2, adjacency="csr")


def test_profile_steps_split_each_level_and_sum_to_its_row():
    """The level loop's clock: one row of step times a level (the search's levels and the final
    empty one), in LevelClock.STEPS order, whose exchange steps sum to the profile's comm column
    and the rest to its expand column; the steps a 1x1 level runs are all timed."""
    from bfs.comm.exchange import LevelClock
    src, dst = np.arange(0, 63, dtype=np.uint32), np.arange(1, 64, dtype=np.uint32)  # a path
    searcher = searcher_1x1(src, dst, 64)
    searcher.search(0)
    steps, profile = searcher.profile_steps, searcher.profile
    assert steps.shape == (searcher.levels_run + 1, len(LevelClock.STEPS))
    comm = np.array([s in LevelClock.COMM for s in LevelClock.STEPS])
    np.testing.assert_allclose(steps[:, comm].sum(axis=1), profile[:, 3])
    np.testing.assert_allclose(steps[:, ~comm].sum(axis=1), profile[:, 2])
    ran = [s for s, t in zip(LevelClock.STEPS, steps[:-1].min(axis=0)) if t > 0]
    assert set(ran) >= {"begin", "expand", "scan", "contract", "union", "finish", "allreduce"}
    with pytest.raises(ValueError, match="unknown step 'typo'"):
        LevelClock(device=False).mark("typo")


def test_a_replayed_chain_is_split_into_levels_by_the_device_clock():
    """A chain replayed as one CUDA graph is one event step (its first level's expand); the
    device clock's seconds per level replace it, as "chained", and what the chain took beyond
    its levels (the graph's start, the levels past its end) is the last level's "replay", an
    exchange step; the steps before the graph and the levels outside the chain stay."""
    from bfs.comm.exchange import LevelClock
    clock = LevelClock(device=False)
    clock.add_level(0, 1, 8, [(None, 0.0), ("begin", 0.001), ("expand", 0.002)])
    clock.add_level(1, 5, 8, [(None, 0.002), ("begin", 0.003), ("expand", 0.013)])  # the graph
    clock.add_level(2, 90, 8, [(None, 0.013)])
    clock.add_level(3, 40, 8, [(None, 0.013)])
    # a level loop's levels, filed at once (the first holds the marks): the same rows
    bulk = LevelClock(device=False)
    bulk.add_level(0, 1, 8, [(None, 0.0), ("begin", 0.001), ("expand", 0.002)])
    bulk.add_levels(1, [5, 90, 40], [8, 8, 8], [(None, 0.002), ("begin", 0.003),
                                                ("expand", 0.013)])
    assert [lv[:3] for lv in bulk.levels] == [lv[:3] for lv in clock.levels]
    assert [len(lv[3]) for lv in bulk.levels] == [3, 3, 0, 0]
    clock.split_chain(1, [0.004, 0.003, 0.002])
    steps, index = clock.steps(), {s: k for k, s in enumerate(LevelClock.STEPS)}
    np.testing.assert_allclose(steps[:, index["chained"]], [0, 0.004, 0.003, 0.002])
    np.testing.assert_allclose(steps[:, index["replay"]], [0, 0, 0, 0.001])
    np.testing.assert_allclose(steps[:, index["expand"]], [0.001, 0, 0, 0])
    np.testing.assert_allclose(steps[:, index["begin"]], [0.001, 0.001, 0, 0])
    rows = clock.rows(steps)            # the chain's 10 ms: 9 of levels, 1 of replay
    np.testing.assert_allclose(rows[1:, 2], [0.005, 0.003, 0.002])
    np.testing.assert_allclose(rows[1:, 3], [0, 0, 0.001])
    # the level loop across GPUs clocks each level's steps: those in place of "chained", the
    # walk and the blocks' meeting local work, the flags and the wait for the peers' exchanges
    parts = {"walk": [0.002, 0.001, 0.001], "arrive": [0.001, 0.001, 0.0],
             "flags": [0.0, 0.0005, 0.0], "peers": [0.001, 0.0005, 0.001]}
    bulk.split_chain(1, [0.004, 0.003, 0.002], {k: np.array(v) for k, v in parts.items()})
    split = bulk.steps()
    assert not split[:, index["chained"]].any()
    for step, part in parts.items():
        np.testing.assert_allclose(split[1:, index[step]], part)
    np.testing.assert_allclose(split[:, index["replay"]], [0, 0, 0, 0.001])
    rows = bulk.rows(split)
    np.testing.assert_allclose(rows[1:, 2], [0.004, 0.002, 0.001])
    np.testing.assert_allclose(rows[1:, 3], [0.001, 0.001, 0.002])


@given(st.lists(st.integers(0, 5000), min_size=1, max_size=300), st.integers(1, 64),
       st.integers(0, 40))
def test_the_hub_rows_least_degree_is_the_least_power_of_two_that_keeps_them_few(
        degrees, least, most):
    """2d-do adjacency=csc's hub_degree=auto (fu_2d_do_push.hub_least) from the degree classes
    fu_2d.cu's degree_classes counts: the least power of two >= least (rounded down to one)
    whose rows of at least that degree number at most `most`, 0 where no row has it."""
    from bfs.algorithms.fu_2d_do_push import hub_least
    d = np.asarray(degrees, np.int64)
    classes = np.bincount(np.floor(np.log2(d[d > 0])).astype(int), minlength=64) \
        if (d > 0).any() else np.zeros(64, np.int64)
    got = hub_least(classes, least, most)
    t = 1 << (least.bit_length() - 1)
    while (d >= t).sum() > most:
        t <<= 1
    assert got == (t if (d >= t).any() else 0)
    if got:
        assert (d >= got).sum() <= most and got >= 1 << (least.bit_length() - 1)


@given(n_words=st.integers(0, 1 << 26))
def test_the_frontier_fold_is_a_power_of_two_an_eighth_of_the_bitmap_or_less(n_words):
    """merrill_do.fold_words (2d-do's and merrill-do's fold option): fold=1 gives a power of
    two of at most FOLD_WORDS words and an eighth of the bitmap (one word for the smallest),
    so the kernels' mask is words - 1 and every fold aliases; auto folds only bitmaps of
    FOLD_FROM words or more, to FOLD_WORDS words; 0 never; any other value is refused."""
    from bfs.algorithms import merrill_do
    from bfs.errors import BfsError
    words = merrill_do.fold_words(n_words, 1)
    assert words >= 1 and words & (words - 1) == 0
    assert words <= merrill_do.FOLD_WORDS and words <= max(1, n_words // 8)
    assert 2 * words > min(merrill_do.FOLD_WORDS, n_words // 8)     # the largest such
    auto = merrill_do.fold_words(n_words, "auto")
    assert auto == (merrill_do.FOLD_WORDS if n_words >= merrill_do.FOLD_FROM else 0)
    assert merrill_do.fold_words(n_words, 0) == 0
    with pytest.raises(BfsError, match="fold must be auto, 1 or 0"):
        merrill_do.fold_words(n_words, 2)


def test_the_small_push_is_on_by_default_where_the_row_bitmaps_are_16_mib_or_more():
    """2d-do's small_push=auto (fu_2d_do_push.small_push_edges): off under 2^21 words of row
    range (scale 26 on 1x2: 2^20), SMALL_PUSH edges from there (s29 on 1x2, s30 on 1x4); an
    integer is the threshold on any range; anything else is refused, naming the value."""
    from bfs.algorithms.fu_2d_do_push import SMALL_PUSH, small_push_edges
    assert small_push_edges("auto", 2**26 // 64) == 0
    assert small_push_edges("auto", 2**21 - 1) == 0
    assert small_push_edges("auto", 2**21) == SMALL_PUSH == 2**18
    assert small_push_edges("auto", 2**30 // 64) == SMALL_PUSH
    assert small_push_edges(1000, 1) == 1000 and small_push_edges(0, 2**30) == 0
    for bad in (-1, "on", 2.5, True):
        with pytest.raises(BfsError, match="small_push must be auto or an integer"):
            small_push_edges(bad, 2**21)


@given(st.integers(0, 1 << 40))
def test_a_small_push_segment_holds_every_edge_of_its_level(edges):
    """2d-do adjacency=csc's small push (fu_2d_do_push._segment_room): a segment has room for
    every frontier edge of the level (a rank wins at most one row an edge), as a power of two
    under twice that, so the buffers made for small_push serve every level up to it."""
    from bfs.algorithms.fu_2d_do_push import _segment_room
    room = _segment_room(edges)
    assert room >= max(edges, 1) and room & (room - 1) == 0 and room < 2 * max(edges, 1)
    assert _segment_room(min(edges, 1000)) <= _segment_room(1000)
