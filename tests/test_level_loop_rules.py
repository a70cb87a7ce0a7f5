"""The host-side rules of merrill's level loop and of merrill-do's switch, which the loop kernel
applies the same on the device (level_loop.cu, level_loop; the GPU tests hold the two equal on a
lattice): which top-down step a frontier takes, and when a frontier goes bottom-up. Plain
Python: the searchers' methods on a stand-in for their state, no GPU."""
from types import SimpleNamespace

import pytest

from bfs.algorithms import merrill as merrill_module
from bfs.algorithms.merrill import (LOOP_CLOCK_LEVELS, LOOP_CLOCK_WORDS, LOOP_DEGREE, LOOP_E,
                                    LOOP_Q, LOOP_SPLIT_Q, SMALL_E, SMALL_Q, MerrillSearcher)
from bfs.algorithms.merrill_do import BOTTOM_UP_FLOOR, MerrillDoSearcher
from bfs.errors import BfsError
from helpers import kernel_defines


def kind(q, edges, loop="grid", loop_edges=LOOP_E):
    return MerrillSearcher._top_down_kind(SimpleNamespace(loop=loop, loop_edges=loop_edges),
                                          q, edges)


@pytest.mark.parametrize("q,edges,expected", [
    (1, 3, "loop"),                                  # a lattice root
    (1, 200_000, "loop"),                            # a hub root: its row walked grid-wide
    (LOOP_SPLIT_Q, LOOP_E, "loop"),                  # a few vertices: every row grid-wide
    (LOOP_SPLIT_Q, LOOP_E + 1, "top-down"),          # ... but no more edges than the loop holds
    (LOOP_SPLIT_Q + 1, LOOP_DEGREE, "loop"),         # no row can be over LOOP_DEGREE
    (LOOP_SPLIT_Q + 1, LOOP_DEGREE + 1, "top-down"), # a hub may be in it: the host's tiles
    (LOOP_Q + 1, 1, "top-down"),                     # too many vertices for the loop's counts
])
def test_which_top_down_step_a_frontier_takes(q, edges, expected):
    assert kind(q, edges) == expected


def test_loop_edges_and_the_single_cta_kernel_bound_the_loop():
    assert kind(1, 5000, loop_edges=4096) == "top-down"
    assert kind(SMALL_Q, SMALL_E, loop="cta") == "small"
    assert kind(SMALL_Q + 1, 10, loop="cta") == "top-down"
    assert kind(10, SMALL_E + 1, loop="cta") == "top-down"


def goes(edges, unexplored, alpha=40.0, n=64_000):
    floor = int(n * BOTTOM_UP_FLOOR) if alpha != float("inf") else 0
    state = SimpleNamespace(alpha=alpha, bottom_up_floor=floor)
    return MerrillDoSearcher.goes_bottom_up(state, edges, unexplored)


def test_bottom_up_by_beamers_rule_above_the_floor():
    floor = int(64_000 * BOTTOM_UP_FLOOR)                 # 1000 edges
    assert goes(floor, 39 * floor)                        # 39 * floor < floor * 40
    assert not goes(floor, 40 * floor)                    # not over unexplored / alpha
    assert not goes(floor - 1, 1)                         # below the floor: top-down is cheaper
    assert not goes(10**9, 0)                             # nothing unexplored: the last level


def test_alpha_inf_sends_every_frontier_with_edges_bottom_up():
    assert goes(1, 10**12, alpha=float("inf"))
    assert not goes(0, 10, alpha=float("inf"))            # an empty frontier stays where it is
    assert not goes(5, 0, alpha=float("inf"))


def test_the_level_clock_words_match_the_kernel():
    """A probe sizes the one-GPU loop's level clock (bench/probes/loop_level_clock.py) by the
    host's LOOP_CLOCK_WORDS and LOOP_CLOCK_LEVELS: the kernel stamps that many words a level,
    for that many levels of a launch."""
    assert kernel_defines("LOOP_CLOCK_WORDS", "LOOP_CLOCK_LEVELS") == [LOOP_CLOCK_WORDS,
                                                                   LOOP_CLOCK_LEVELS]


def test_loop_spread_takes_0_or_1_and_names_the_searcher():
    assert merrill_module.check_loop_spread(1, "2d-do") == 1
    with pytest.raises(BfsError, match="2d-do loop_spread must be 0 or 1, got 2"):
        merrill_module.check_loop_spread(2, "2d-do")
