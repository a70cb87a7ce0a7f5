"""Real MPI ranks (oversubscribed): the distributed algorithms agree with seq-csr and validate."""
import json
import shutil

import pytest

from helpers import SNAP_DIR, bfs_cli, random_graph, searches

pytestmark = pytest.mark.mpi
if shutil.which("mpiexec") is None:
    pytestmark = [pytest.mark.mpi, pytest.mark.skip(reason="no mpiexec on PATH")]

ROOTS = 4
LAYOUTS = [("2d", "1x1"), ("2d", "1x2"), ("2d", "2x1"), ("2d", "2x2"), ("2d", "2x3"),
           ("2d", "1x3"), ("1d", "1"), ("1d", "2"), ("1d", "3"), ("1d", "4")]


def ranks_of(kind, shape):
    if kind == "1d":
        return int(shape)
    r, c = shape.split("x")
    return int(r) * int(c)


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
    bfs_cli("partition", g, "--grid" if kind == "2d" else "--1d", shape, "--out", part)
    schemes = ["scan", "wave"] if kind == "2d" and shape != "1x1" else [None]
    for scheme in schemes:
        out = tmp_path / f"run-{scheme}"
        extra = ["--exchange", scheme] if scheme else ["--small-frontier", 50]
        bfs_cli("run", part, "--algorithm", kind, "--roots", ROOTS, "--save-parents", 1,
                *extra, "--out", out, ranks=ranks_of(kind, shape))
        assert comparable(searches(out)) == comparable(reference)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"] and info["parameters"]["mpi_size"] == ranks_of(kind, shape)
        assert info["environment"]["mpi_size"] == ranks_of(kind, shape)
        # the saved tree re-validates against the graph's own edge list in a fresh process
        bfs_cli("validate", out)


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


def test_algorithm_and_partition_kind_must_match(graph, tmp_path):
    g, _ = graph
    bfs_cli("partition", g, "--1d", 2, "--out", tmp_path / "part")
    proc = bfs_cli("run", tmp_path / "part", "--algorithm", "2d", "--out", tmp_path / "run",
                   ranks=2, check=False, timeout=120)
    assert proc.returncode != 0 and "1d partition" in proc.stderr
