"""The host-side rules of the level loop across GPUs (2d-do on a grid of one row, peer memory):
where peer memory is taken (bfs.comm.peer.choose), when a level loop starts (Fu2DDoGpu's
_loop_takes), how a failed wait is reported (_peer_error), the entry tags' arithmetic
(level_loop.cu's LOOP_TAG_PERIOD) and the meeting words' (LoopPeers). No GPU: the kernels' side is
tests/test_gpu_2d.py's."""

import numpy as np
import pytest

from bfs.algorithms import merrill
from bfs.algorithms.fu_2d_do_gpu import TOTALS, Fu2DDoGpu
from bfs.algorithms.fu_2d_do_peer import (PEER_BLOCKS_MAX, PEER_RANKS_MAX, PEER_TAGS,
                                          PEER_TIMEOUT_S, _peer_error)
from bfs.comm import peer
from bfs.errors import BfsError
from helpers import kernel_defines


class FakeComm:
    def __init__(self, size):
        self.size = size

    def Get_size(self):
        return self.size


@pytest.mark.parametrize("placement,requested,want", [
    ([("a", "0"), ("a", "1")], "auto", True),          # one host, a GPU a rank
    ([("a", "0"), ("a", "0")], "auto", False),         # ranks sharing a GPU time-slice it
    ([("a", "0"), ("a", "0")], "on", True),            # ... unless asked (the tests)
    ([("a", "0"), ("b", "0")], "auto", False),         # two hosts: no peer memory
    ([("a", "0"), ("a", "1")], "off", False),
])
def test_peer_memory_is_taken_on_one_host(monkeypatch, placement, requested, want):
    monkeypatch.setattr(peer, "device_placement", lambda comm: placement)
    assert peer.choose(requested, FakeComm(len(placement))) is want


def test_peer_on_across_hosts_and_unknown_choices_are_refused(monkeypatch):
    monkeypatch.setattr(peer, "device_placement", lambda comm: [("n1", "0"), ("n2", "0")])
    with pytest.raises(BfsError, match=r"peer=on needs the ranks on one host; they are on 2 "
                                       r"\(n1, n2\)"):
        peer.choose("on", FakeComm(2))
    with pytest.raises(BfsError, match="peer must be one of auto, on, off, got 'yes'"):
        peer.choose("yes", FakeComm(2))
    assert peer.choose("on", FakeComm(1)) is False      # one rank: nothing to exchange


def searcher(hubless=True, edges=0):
    s = Fu2DDoGpu.__new__(Fu2DDoGpu)
    s.hubless = hubless
    s.host_ctl = np.zeros(32, np.uint64)
    s.host_ctl[TOTALS + 1] = edges
    return s


def test_a_loop_runs_only_on_a_graph_without_hubs():
    assert searcher(hubless=True)._loop_takes(0, 1)
    assert not searcher(hubless=False)._loop_takes(0, 1)
    assert not searcher(hubless=False, edges=10)._loop_takes(3, 5)


@pytest.mark.parametrize("frontier,edges,want", [
    (1000, merrill.LOOP_DEGREE, True),                   # no row can be a hub
    (1000, merrill.LOOP_DEGREE + 1, False),              # one might be
    (merrill.LOOP_SPLIT_Q, merrill.LOOP_E, True),        # a few rows, walked grid-wide
    (merrill.LOOP_Q + 1, 10, False),                     # too many vertices for the loop
    (merrill.LOOP_SPLIT_Q, merrill.LOOP_E + 1, False),   # too many edges
])
def test_a_loop_starts_mid_search_on_a_small_hubless_frontier(frontier, edges, want):
    assert searcher(hubless=True, edges=edges)._loop_takes(3, frontier) is want


def test_a_failed_wait_names_the_rank_level_and_which_wait():
    waited = _peer_error((37 << 8) | (2 + 1) << 1 | 1, me=0, level0=5)
    assert waited.startswith("2d-do level loop, rank 0 of the grid row: level 37: rank 2 did "
                             f"not arrive within {PEER_TIMEOUT_S:g} s")
    assert "started at level 5" in waited
    local = _peer_error((9 << 8) | 1, me=3, level0=0)
    assert "rank 3 of the grid row: level 9: this GPU's own blocks did not all arrive" in local


def test_the_entry_tags_match_the_kernel_and_never_repeat_within_a_window():
    assert kernel_defines("LOOP_TAG_PERIOD") == [PEER_TAGS]
    # tags of consecutive launches (the host adds the levels each ran): 1 .. PEER_TAGS, never
    # 0 (a new window's memory), and no two of 2 parities' slots alike
    base, seen = PEER_TAGS - 3, []
    for run in (2, 3, 1):
        seen += [((base + k) % PEER_TAGS) + 1 for k in range(run)]
        base = (base + run) % PEER_TAGS
    assert all(1 <= t <= PEER_TAGS for t in seen) and len(set(seen)) == len(seen)
    assert (2 ** 22 - 1) not in seen


def test_the_meeting_words_decode_the_largest_level_exactly_across_wraparound():
    """A level's meeting (level_loop.cu's LoopPeers): each block of a source adds 1 << ARRIVE |
    capped degree sum << EDGE | finds into a word that only grows, and a waiter subtracts the
    value it saw at the last complete level. With the kernel's field widths the largest level
    the loop allows (PEER_BLOCKS_MAX blocks, each at the degree cap, a segment's most finds)
    decodes exactly, also where the word passes 2^64, and a level one block short never
    reads as complete."""
    arrive, edge, found_mask, edge_mask, block_cap, blocks = kernel_defines(
        "LOOP_MEET_ARRIVE_SHIFT", "LOOP_MEET_EDGE_SHIFT", "LOOP_MEET_FOUND_MASK",
        "LOOP_MEET_EDGE_MASK", "LOOP_BLOCK_EDGE_CAP", "LOOP_PEER_BLOCKS_MAX")
    assert blocks == PEER_BLOCKS_MAX and blocks < 1 << (64 - arrive)
    # the ranks a loop meets: the kernel's arrays hold this many (the host opens no loop for
    # a wider row)
    assert kernel_defines("LOOP_PEERS_MAX") == [PEER_RANKS_MAX]
    wrap = 1 << 64
    finds = [merrill.LOOP_E // blocks + (b < merrill.LOOP_E % blocks) for b in range(blocks)]
    last_seen = wrap - 12345                 # the word's value after earlier levels
    word = last_seen
    for b in range(blocks):
        word = (word + (1 << arrive | block_cap << edge | finds[b])) % wrap
        d = (word - last_seen) % wrap
        if b < blocks - 1:
            assert d >> arrive == b + 1      # still waiting
    assert d >> arrive == blocks
    assert d & found_mask == merrill.LOOP_E == sum(finds)
    assert (d >> edge) & edge_mask == blocks * block_cap
