import numpy as np
import pytest


def edges(pairs):
    """(src, dst) uint32 arrays from a list of (u, v) pairs."""
    a = np.array(pairs, dtype=np.uint32).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy()


@pytest.fixture
def square_graph():
    # 0-1, 0-3, 1-2, 3-2 (a square), 0-4 (a pendant at level 1), 5-6 (another component),
    # a self-loop on 2 and a duplicate of 0-1
    return edges([(0, 1), (0, 3), (1, 2), (3, 2), (0, 4), (5, 6), (2, 2), (1, 0)]), 7
