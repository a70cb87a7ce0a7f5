"""bfs.graphs.lattice (road-like lattices) and `bfs generate lattice`, on the CPU."""
import numpy as np
import pytest

from bfs.algorithms.seq_csr import bfs_csr
from bfs.errors import BfsError
from bfs.graphs.graphdir import read_edges, read_meta
from bfs.graphs.lattice import lattice_edges
from bfs.harness.rundir import read_run_json
from bfs.build.csr_cpu import build_csr

from helpers import bfs_cli


def test_lattice_counts_and_levels():
    rows, cols = 7, 11
    src, dst, n = lattice_edges(rows, cols, ordered=True)
    assert n == rows * cols and src.dtype == np.uint32
    assert len(src) == rows * (cols - 1) + (rows - 1) * cols
    csr = build_csr(src, dst, n)
    _, level = bfs_csr(csr.offsets, csr.columns, 0)
    r, c = np.divmod(np.arange(n), cols)
    np.testing.assert_array_equal(level, r + c)   # Manhattan distance from the corner


def test_lattice_diagonals_and_relabelling():
    rows, cols = 30, 40
    src, dst, n = lattice_edges(rows, cols, diagonal_prob=1.0, seed=3)
    assert len(src) == rows * (cols - 1) + (rows - 1) * cols + (rows - 1) * (cols - 1)
    a = lattice_edges(rows, cols, diagonal_prob=0.5, seed=3)
    b = lattice_edges(rows, cols, diagonal_prob=0.5, seed=3)
    np.testing.assert_array_equal(a[0], b[0])
    csr = build_csr(src, dst, n)
    _, level = bfs_csr(csr.offsets, csr.columns, int(src[0]))
    assert (level >= 0).all()                     # connected under any labelling
    _, level_o = bfs_csr(*(lambda c: (c.offsets, c.columns))(build_csr(
        *lattice_edges(rows, cols, 1.0, ordered=True)[:2], n)), 0)
    assert level_o.max() == max(rows, cols) - 1   # diagonals make it Chebyshev distance


def test_lattice_rejects_bad_arguments():
    with pytest.raises(BfsError):
        lattice_edges(0, 5)
    with pytest.raises(BfsError):
        lattice_edges(3, 5, diagonal_prob=1.5)


def test_cli_generate_lattice(tmp_path):
    out = tmp_path / "g"
    bfs_cli("generate", "lattice", "--rows", "5", "--cols", "9", "--diagonal-prob", "0.5",
            "--out", out)
    meta = read_meta(out)
    src, dst = read_edges(out)
    assert meta.n_vertices == 45 and meta.n_edges == len(src) and meta.source == "lattice"
    ref = lattice_edges(5, 9, 0.5, 1)
    np.testing.assert_array_equal(src, ref[0])
    np.testing.assert_array_equal(dst, ref[1])


def test_old_generate_grid_still_works_and_says_the_new_name(tmp_path):
    """`bfs generate grid` is the old name (a grid is a process grid here): kept for one
    release, with a warning naming `bfs generate lattice`."""
    said = bfs_cli("generate", "grid", "--rows", "3", "--cols", "4", "--out", tmp_path / "g")
    assert "is now `bfs generate lattice`" in said.stderr
    meta = read_meta(tmp_path / "g")
    assert (meta.name, meta.source, meta.n_vertices) == ("lattice-3x4", "lattice", 12)


def test_bench_lattice_graphs_and_the_old_flag(tmp_path):
    """bench --lattice-graphs makes the lattice in memory and writes its run directory;
    --grid-graphs, the old name, still works and says the new one."""
    said = bfs_cli("bench", "--backend", "cpu", "--grid-graphs", "5x6", "--algorithms",
                   "seq-csr", "--roots", "2", "--out", tmp_path / "b")
    assert "--grid-graphs is now --lattice-graphs" in said.stderr
    assert "lattice-5x6" in said.stdout
    info = read_run_json(tmp_path / "b" / "lattice-5x6" / "seq-csr")
    assert info["valid"] and info["graph"]["source"] == "lattice"
    assert info["graph"]["n_vertices"] == 30
