"""BFS root selection against the Graph500 3.0 reference's SCALE-10 roots."""
import numpy as np
import pytest

from bfs.graphs import kronecker
from bfs.errors import BfsError
from bfs.harness.roots import check_root, graph500_roots

REFERENCE_ROOTS_SCALE10 = [
    458, 214, 220, 966, 395, 9, 848, 777, 344, 236, 900, 440, 806, 712, 116, 163, 206, 131,
    377, 96, 535, 981, 140, 479, 267, 835, 182, 76, 269, 64, 373, 41, 641, 570, 580, 939, 745,
    898, 197, 627, 710, 857, 569, 670, 1017, 308, 97, 879, 680, 678, 35, 177, 531, 698, 555,
    485, 816, 521, 332, 888, 209, 825, 171, 149]


def has_edge_from(src, dst, n_vertices):
    has_edge = np.zeros(n_vertices, dtype=bool)
    proper = src != dst
    has_edge[src[proper]] = True
    has_edge[dst[proper]] = True
    return has_edge


def test_scale10_roots():
    src, dst = kronecker.generate_edges(10, 16)
    roots = graph500_roots(1024, has_edge_from(src, dst, 1024))
    assert roots.dtype == np.int64
    assert roots.tolist() == REFERENCE_ROOTS_SCALE10


def test_roots_skip_vertices_without_edges():
    # Only vertices 3 and 7 have edges: the first two roots must be exactly those, the
    # counter then passes 2N and later roots are taken unchecked (so repeats may appear).
    has_edge = np.zeros(10, dtype=bool)
    has_edge[[3, 7]] = True
    roots = graph500_roots(10, has_edge, count=6)
    assert sorted(roots[:2].tolist()) == [3, 7]
    assert all(0 <= r < 10 for r in roots.tolist())


def test_roots_after_exhaustion_are_unchecked():
    has_edge = np.zeros(5, dtype=bool)
    has_edge[2] = True
    roots = graph500_roots(5, has_edge, count=4)
    assert roots[0] == 2
    assert not all(has_edge[roots])  # beyond counter > 2N candidates are not checked


def test_roots_prefix_is_stable():
    src, dst = kronecker.generate_edges(10, 16)
    has_edge = has_edge_from(src, dst, 1024)
    assert graph500_roots(1024, has_edge, count=10).tolist() == REFERENCE_ROOTS_SCALE10[:10]


def test_roots_distinct_when_plenty_of_candidates():
    has_edge = np.ones(1000, dtype=bool)  # N need not be a power of two
    roots = graph500_roots(1000, has_edge, count=64)
    assert len(set(roots.tolist())) == 64
    assert roots.min() >= 0 and roots.max() < 1000


def test_no_edges_is_an_error():
    with pytest.raises(BfsError, match="no vertex"):
        graph500_roots(8, np.zeros(8, dtype=bool))


def test_has_edge_shape_checked():
    with pytest.raises(BfsError, match="shape"):
        graph500_roots(8, np.ones(7, dtype=bool))


@pytest.mark.parametrize("root", [-1, 1024, 5000, 2.5, "x"])
def test_check_root_rejects(root):
    with pytest.raises(BfsError):
        check_root(root, 1024)


@pytest.mark.parametrize("root", [0, 1023, np.int64(7), np.uint32(9)])
def test_check_root_accepts(root):
    assert check_root(root, 1024) == int(root)
