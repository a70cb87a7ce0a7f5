"""Real MPI ranks (oversubscribed): the distributed algorithms agree with seq-csr and validate."""
import json
import shutil

import pyarrow.parquet as pq
import pytest

from bfs.algorithms import ALGORITHMS
from bfs.graphs.graphdir import read_edges
from helpers import SNAP_DIR, bfs_cli, random_graph, searches, smallest_parents

pytestmark = pytest.mark.mpi
if shutil.which("mpiexec") is None:
    pytestmark = [pytest.mark.mpi, pytest.mark.skip(reason="no mpiexec on PATH")]

ROOTS = 4
LAYOUTS = [("2d", "1x1"), ("2d", "1x2"), ("2d", "2x1"), ("2d", "2x2"), ("2d", "2x3"),
           ("2d", "1x3"), ("1d", "1"), ("1d", "2"), ("1d", "3"), ("1d", "4"),
           ("semiring", "1x1"), ("semiring", "1x2"), ("semiring", "2x1"), ("semiring", "2x2")]


def ranks_of(kind, shape):
    if ALGORITHMS[kind].partition == "1d":
        return int(shape)
    r, c = shape.split("x")
    return int(r) * int(c)


def variants(kind, shape):
    """The options of each run: both 2d exchange schemes where a grid column has ranks to scan
    through, a 1d small-frontier threshold that some levels cross."""
    if kind == "2d":
        return [["--exchange", s] for s in (["scan", "wave"] if shape != "1x1" else ["scan"])]
    if kind == "1d":
        return [["--small-frontier", 50]]
    return [[]]


@pytest.fixture(scope="module", params=["kronecker", "random", "snap"])
def graph(request, tmp_path_factory):
    """(graph dir, the seq-csr reference run) for each kind of graph."""
    base = tmp_path_factory.mktemp(request.param)
    g = base / "graph"
    if request.param == "kronecker":
        bfs_cli("generate", "kronecker", "--scale", 9, "--edgefactor", 8, "--out", g)
    elif request.param == "random":
        random_graph(g)
    else:
        bfs_cli("generate", "snap", SNAP_DIR / "email-Eu-core.txt", "--out", g)
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", ROOTS, "--out", base / "ref")
    return g, searches(base / "ref")


def comparable(rows):
    return [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"]) for r in rows]


@pytest.mark.parametrize("kind,shape", LAYOUTS, ids=[f"{k}-{s}" for k, s in LAYOUTS])
def test_distributed_equals_seq_csr(graph, kind, shape, tmp_path):
    g, reference = graph
    part = tmp_path / "part"
    bfs_cli("partition", g, "--grid" if ALGORITHMS[kind].partition == "2d" else "--1d", shape,
            "--out", part)
    # semiring's trees are checked whole below: save them all
    saved = ROOTS if kind == "semiring" else 1
    for k, extra in enumerate(variants(kind, shape)):
        out = tmp_path / f"run-{k}"
        bfs_cli("run", part, "--algorithm", kind, "--roots", ROOTS, "--save-parents", saved,
                *extra, "--out", out, ranks=ranks_of(kind, shape))
        assert comparable(searches(out)) == comparable(reference)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"] and info["parameters"]["mpi_size"] == ranks_of(kind, shape)
        assert info["environment"]["mpi_size"] == ranks_of(kind, shape)
        # the saved tree re-validates against the graph's own edge list in a fresh process
        bfs_cli("validate", out)
        if kind == "semiring":
            check_smallest_parents(g, out)


def check_smallest_parents(graph_dir, run_dir):
    """semiring's min makes its trees deterministic: every parent is the vertex's smallest-id
    neighbour one level up, on every grid."""
    src, dst = read_edges(graph_dir)
    files = sorted((run_dir / "parents").glob("root-*.parquet"))
    assert len(files) == ROOTS
    for f in files:
        table = pq.read_table(f)
        parent, level = table.column("parent").to_numpy(), table.column("level").to_numpy()
        root = int(f.stem.removeprefix("root-"))
        assert (parent == smallest_parents(src, dst, level, root)).all(), f.name


def test_wrong_rank_count_fails_fast(graph, tmp_path):
    g, _ = graph
    bfs_cli("partition", g, "--grid", "2x2", "--out", tmp_path / "part")
    proc = bfs_cli("run", tmp_path / "part", "--algorithm", "2d", "--out", tmp_path / "run",
                   ranks=3, check=False, timeout=120)
    assert proc.returncode != 0
    assert "needs 4 MPI ranks, but 3 were started" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_launcher_without_pmi_is_named(graph, tmp_path):
    g, _ = graph
    bfs_cli("partition", g, "--grid", "1x2", "--out", tmp_path / "part")
    # what plain srun does without --mpi: SLURM says 2 tasks, each process is MPI rank 0 of 1
    proc = bfs_cli("run", tmp_path / "part", "--algorithm", "2d", "--out", tmp_path / "run",
                   env={"SLURM_NTASKS": "2"}, check=False, timeout=120)
    assert proc.returncode != 0
    assert "each reports MPI size 1" in proc.stderr and "--mpi=pmi2" in proc.stderr


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_bad_block_stops_every_rank(graph, tmp_path, damage):
    g, _ = graph
    part = tmp_path / "part"
    bfs_cli("partition", g, "--grid", "2x2", "--out", part)
    block = part / "block-1-0.parquet"
    if damage == "corrupt":
        data = bytearray(block.read_bytes())
        data[len(data) // 2] ^= 0xFF
        block.write_bytes(bytes(data))
    else:
        block.unlink()
    proc = bfs_cli("run", part, "--algorithm", "2d", "--out", tmp_path / "run", ranks=4,
                   check=False, timeout=120)
    assert proc.returncode != 0
    assert "block-1-0.parquet" in proc.stderr
    assert ("sha256" in proc.stderr) if damage == "corrupt" else ("missing" in proc.stderr
                                                                  or "no such" in proc.stderr.lower())
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("algorithm", ["2d", "semiring"])
def test_algorithm_and_partition_kind_must_match(graph, tmp_path, algorithm):
    g, _ = graph
    bfs_cli("partition", g, "--1d", 2, "--out", tmp_path / "part")
    proc = bfs_cli("run", tmp_path / "part", "--algorithm", algorithm, "--out",
                   tmp_path / "run", ranks=2, check=False, timeout=120)
    assert proc.returncode != 0 and "1d partition" in proc.stderr
    assert f"--algorithm {algorithm} needs a 2d one" in proc.stderr


def test_exchange_reduce_ops():
    """allreduce takes "sum", "max" and "min" (semiring's column reduction) and refuses the
    rest by name, on a communicator of one as on many."""
    import numpy as np
    from mpi4py import MPI

    from bfs.comm.exchange import MpiExchange
    from bfs.errors import BfsError
    x = MpiExchange(MPI.COMM_SELF)
    send, recv = np.array([3, -1], np.int64), np.zeros(2, np.int64)
    for op in ("sum", "max", "min"):
        x.allreduce(send, recv, op)
        assert (recv == send).all()
    with pytest.raises(BfsError, match="allreduce op 'prod'"):
        x.allreduce(send, recv, "prod")
