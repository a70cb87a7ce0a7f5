"""Every CPU algorithm's levels equal scipy's BFS distances on random graphs, and validate."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path

from bfs.algorithms import ALGORITHMS, EdgeList, RunContext
from bfs.validate import validate

CPU_SINGLE = [s for s in ALGORITHMS.values() if "cpu" in s.backends and not s.distributed]


def scipy_levels(src, dst, n, root):
    m = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    d = shortest_path(m, directed=False, unweighted=True, indices=root)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@st.composite
def random_graph(draw):
    n = draw(st.integers(1, 60))
    m = draw(st.integers(0, 150))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          min_size=m, max_size=m))
    root = draw(st.integers(0, n - 1))
    a = np.array(pairs, dtype=np.uint32).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy(), n, root


@pytest.mark.parametrize("spec", CPU_SINGLE, ids=lambda s: s.name)
@settings(max_examples=60, deadline=None)
@given(graph=random_graph())
def test_levels_match_scipy(spec, graph):
    src, dst, n, root = graph
    result = spec.load().build(EdgeList(src, dst, n), RunContext()).search(root)
    np.testing.assert_array_equal(result.level, scipy_levels(src, dst, n, root))
    check = validate(src, dst, result.parent, root, result.level)
    assert check.valid, check.message


def test_registry_names_load():
    for spec in ALGORITHMS.values():
        for backend in spec.backends:
            assert hasattr(spec.load(backend), "build"), (spec.name, backend)
