"""Every CPU algorithm's levels equal scipy's BFS distances on random graphs, and validate;
semiring's local product and its one-rank search."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path

from bfs.algorithms import ALGORITHMS, EdgeList, RunContext
from bfs.algorithms.fu_2d import compress
from bfs.algorithms.semiring import NONE, spmv_select_min
from bfs.validate import validate
from helpers import smallest_parents

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


def test_semiring_spmv_small_example():
    # rows 0..2 -> columns 0..3: 0->1, 0->2, 1->2, 2->0, 2->3; x: rows 0 and 2 hold values 7, 4
    offsets = np.array([0, 2, 3, 5], np.int64)
    columns = np.array([1, 2, 2, 0, 3], np.int64)
    x = np.array([7, -1, 4], np.int64)
    parent = np.array([-1, -1, -1, 9], np.int64)   # column 3 is visited: masked out
    y = np.empty(4, np.int64)
    spmv_select_min(x, offsets, columns, parent, y)
    # column 0 from row 2 (4); 1 from row 0 (7); 2 from rows 0 and 1, row 1 not in x (7);
    # 3 masked
    np.testing.assert_array_equal(y, [4, 7, 7, NONE])


@pytest.mark.parametrize("seed", range(8))
def test_semiring_spmv_is_masked_select_min(seed):
    """y[c] = min of x[r] over the edges r -> c with x[r] set and c unvisited, else NONE:
    the kernel against the definition, on random blocks with duplicate edges."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 200)), int(rng.integers(1, 200))
    m = int(rng.integers(0, 1000))
    r, c = rng.integers(0, n_rows, m), rng.integers(0, n_cols, m)
    r[: m // 10], c[: m // 10] = r[m // 10: 2 * (m // 10)], c[m // 10: 2 * (m // 10)]
    x = np.where(rng.random(n_rows) < 0.3, rng.integers(0, 10**12, n_rows), -1)
    parent = np.where(rng.random(n_cols) < 0.4, rng.integers(0, 100, n_cols), -1)
    offsets, columns = compress(lambda: [(r, c)], n_rows)
    y = np.empty(n_cols, np.int64)
    spmv_select_min(x, offsets, columns, parent, y)
    want = np.full(n_cols, NONE, np.int64)
    for a, b in zip(r, c):
        if x[a] >= 0 and parent[b] == -1:
            want[b] = min(want[b], x[a])
    np.testing.assert_array_equal(y, want)


@settings(max_examples=40, deadline=None)
@given(graph=random_graph())
def test_semiring_one_rank_levels_and_smallest_parents(graph):
    """semiring on a 1x1 grid in this process: scipy's levels, a valid tree, and every parent
    the smallest-id neighbour one level up."""
    from mpi4py import MPI

    from bfs.algorithms import Block
    src, dst, n, root = graph
    keep = src != dst   # a partition block: both directions of every non-loop edge
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]},
                  np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]]))
    searcher = ALGORITHMS["semiring"].load().build(block, RunContext())
    searcher.search(root)
    result = searcher.gather(n)
    np.testing.assert_array_equal(result.level, scipy_levels(src, dst, n, root))
    check = validate(src, dst, result.parent, root, result.level)
    assert check.valid, check.message
    np.testing.assert_array_equal(result.parent, smallest_parents(src, dst, result.level, root))


@pytest.mark.parametrize("step", [1, 7, 64, 1 << 30])
def test_mark_sources_in_slices_equals_one_pass(step):
    """The sources of an edge list marked a slice at a time (device.mark_sources: CuPy's mask
    indexing stops past 2^31 - 1 entries, a scale-27 block on 1x2 has 2^31) equal the one-pass
    marking, self-loops left out, for any slice length: the arithmetic of the slices is tested
    with short ones, without the memory of a 2^31-entry list."""
    from bfs import device
    rng = np.random.default_rng(step)
    src = rng.integers(0, 400, 300)
    dst = rng.integers(0, 400, 300)
    dst[::9] = src[::9]                      # self-loops: never a source's mark
    want = np.zeros(400, bool)
    want[src[src != dst]] = True
    got = np.zeros(400, bool)
    device.mark_sources(got, src, dst, step=step)
    assert (got == want).all() and not want.all()
