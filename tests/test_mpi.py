"""Real MPI ranks (oversubscribed): the distributed algorithms agree with seq-csr and validate."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bfs.algorithms import ALGORITHMS
from bfs.graphs.graphdir import read_edges
from helpers import ROOT, SNAP_DIR, bfs_cli, random_graph, searches, smallest_parents

pytestmark = pytest.mark.mpi
if shutil.which("mpiexec") is None:
    pytestmark = [pytest.mark.mpi, pytest.mark.skip(reason="no mpiexec on PATH")]

ROOTS = 4


def ranks_of(kind, shape):
    if ALGORITHMS[kind].partition == "1d":
        return int(shape)
    r, c = shape.split("x")
    return int(r) * int(c)


# (graph, algorithm, layout, options of each run). On the Kronecker graph, each algorithm on
# the shapes that differ: one rank, one grid row, one grid column, a square, three columns, the
# 8-GPU grid (2x4); the random graph (several components, self-loops, duplicates) and the SNAP
# one on one layout of each algorithm, which is where a graph's own shape can matter. 2d's
# exchange schemes differ only where a grid column has ranks to scan through (R > 1): each
# algorithm runs each scheme on such a grid, one scheme a layout. 1d's threshold is one that some levels cross. Each
# run is an mpiexec of R*C fresh interpreters (tens of seconds on a 2-core CI machine), so the
# matrix covers each shape and each scheme rather than every product.
def case(graph, kind, shape, exchange=None):
    if kind in ("2d", "2d-do"):
        runs = [["--exchange", exchange]]
    elif kind == "1d":
        runs = [["--small-frontier", 50]]
    else:
        runs = [[]]
    return graph, kind, shape, runs


CASES = [case("kronecker", "2d", "1x1", "scan"), case("kronecker", "2d", "1x2", "scan"),
         case("kronecker", "2d", "2x1", "wave"), case("kronecker", "2d", "2x2", "scan"),
         case("kronecker", "2d", "2x3", "wave"),
         case("kronecker", "2d-do", "1x2", "scan"), case("kronecker", "2d-do", "2x1", "wave"),
         case("kronecker", "2d-do", "2x4", "scan"),   # 8 ranks: the 8-GPU grid's shape
         case("kronecker", "1d", "1"), case("kronecker", "1d", "4"),
         case("kronecker", "semiring", "1x2"), case("kronecker", "semiring", "2x2"),
         case("random", "2d", "2x3", "scan"), case("random", "2d-do", "2x2", "wave"),
         case("random", "1d", "3"), case("random", "semiring", "2x1"),
         case("snap", "2d", "1x2", "scan"), case("snap", "2d-do", "2x1", "wave"),
         case("snap", "1d", "2"), case("snap", "semiring", "2x2")]
# the saved tree re-validated in a fresh process: once per algorithm
REVALIDATED = {("kronecker", "2d", "2x3"), ("kronecker", "2d-do", "2x4"), ("kronecker", "1d", "4"),
               ("kronecker", "semiring", "2x2")}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    """graphs(kind) -> (graph dir, the seq-csr reference run), each kind made once."""
    made = {}

    def get(kind):
        if kind not in made:
            base = tmp_path_factory.mktemp(kind)
            g = base / "graph"
            if kind == "kronecker":
                bfs_cli("generate", "kronecker", "--scale", 9, "--edgefactor", 8, "--out", g)
            elif kind == "random":
                random_graph(g)
            elif kind == "lattice":     # a road-like graph: ~100 levels
                bfs_cli("generate", "lattice", "--rows", 30, "--cols", 41, "--out", g)
            else:
                bfs_cli("generate", "snap", SNAP_DIR / "email-Eu-core.txt", "--out", g)
            bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", ROOTS, "--out", base / "ref")
            made[kind] = g, searches(base / "ref")
        return made[kind]

    return get


@pytest.fixture(scope="module")
def graph(graphs):
    """The Kronecker graph, for the tests of failures (the graph plays no part in them)."""
    return graphs("kronecker")


def comparable(rows):
    return [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"]) for r in rows]


@pytest.mark.parametrize("graph_kind,kind,shape,runs", CASES,
                         ids=[f"{g}-{k}-{s}" for g, k, s, _ in CASES])
def test_distributed_equals_seq_csr(graphs, graph_kind, kind, shape, runs, tmp_path):
    g, reference = graphs(graph_kind)
    part = tmp_path / "part"
    bfs_cli("partition", g, "--grid" if ALGORITHMS[kind].partition == "2d" else "--1d", shape,
            "--out", part)
    # semiring's trees are checked whole below: save them all
    saved = ROOTS if kind == "semiring" else 1
    for k, extra in enumerate(runs):
        out = tmp_path / f"run-{k}"
        bfs_cli("run", part, "--algorithm", kind, "--roots", ROOTS, "--save-parents", saved,
                *extra, "--out", out, ranks=ranks_of(kind, shape))
        assert comparable(searches(out)) == comparable(reference)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"] and info["parameters"]["mpi_size"] == ranks_of(kind, shape)
        assert info["environment"]["mpi_size"] == ranks_of(kind, shape)
        # which MPI library ran (the pip wheel's MPICH here, a site's MPI on a cluster)
        assert re.search(r"MPICH|Open MPI|MVAPICH|Intel", info["environment"]["mpi_library"])
        # the saved tree re-validates against the graph's own edge list in a fresh process
        if (graph_kind, kind, shape) in REVALIDATED:
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


@pytest.fixture(scope="module")
def kron10(tmp_path_factory):
    """A Kronecker graph big enough for bottom-up levels under the default alpha and beta."""
    g = tmp_path_factory.mktemp("kron10") / "graph"
    bfs_cli("generate", "kronecker", "--scale", 10, "--edgefactor", 16, "--out", g)
    return g


def do_checks(part, *settings, roots=4, ranks=4):
    """tests/do_checks.py under mpiexec, one launch for every (alpha, beta, exchange) setting:
    per setting and root, 2d-do's directions and edges examined (it has already checked levels
    against seq-csr and validated every tree)."""
    cmd = ["mpiexec", "-n", str(ranks), sys.executable, str(ROOT / "tests" / "do_checks.py"),
           str(part), str(roots), *(",".join(map(str, s)) for s in settings)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    assert len(reports) == len(settings), proc.stdout
    return reports


@pytest.mark.parametrize("shape", ["2x2"])   # a grid with rows and columns to exchange along
def test_2d_do_runs_both_directions(kron10, shape, tmp_path):
    part = tmp_path / "part"
    bfs_cli("partition", kron10, "--grid", shape, "--out", part)
    ranks = ranks_of("2d", shape)
    top_down, default, bottom_up = do_checks(part, (1.0, 18, "scan"), (15, 18, "wave"),
                                             (1e9, 18, "scan"), ranks=ranks)
    # alpha <= 1: m_f never exceeds m_u / alpha (m_u counts the frontier): all top-down, which
    # reads every edge of every reached vertex exactly once
    for r in top_down:
        assert set(r["directions"]) == {"top-down"}
        assert r["edges_examined"] == r["reached_edges"] == sum(r["level_edges_examined"])
    # the defaults go bottom-up in the big middle levels and read fewer edges for it
    assert any("bottom-up" in r["directions"] for r in default)
    for r in default:
        if "bottom-up" in r["directions"]:
            assert r["edges_examined"] < r["reached_edges"]
    # a huge alpha goes bottom-up from level 1 (level 0, the root alone, is always top-down)
    for r in bottom_up:
        assert r["directions"][:2] == ["top-down", "bottom-up"]
    # the CLI passes --alpha / --beta through and run.json records them
    out = tmp_path / "run"
    bfs_cli("run", part, "--algorithm", "2d-do", "--roots", 2, "--alpha", 1e9, "--beta", 2,
            "--out", out, ranks=ranks)
    params = json.loads((out / "run.json").read_text())["parameters"]
    assert (params["alpha"], params["beta"], params["exchange"]) == (1e9, 2, "scan")
    # searches.parquet / levels.parquet carry the edges read and each level's direction: per
    # search, the level rows (rank 0 holds the sums) add up to the search's count
    levels = pq.read_table(out / "levels.parquet").to_pandas()
    for row in searches(out):
        mine = levels[(levels["root"] == row["root"]) & (levels["rank"] == 0)]
        assert row["edges_examined"] == mine["edges_examined"].sum() > 0
        assert list(mine["direction"].dropna())[:2] == ["top-down", "bottom-up"]
    assert levels[levels["rank"] > 0]["edges_examined"].isna().all()
    # top-down only algorithms do not count: the column is there, null
    out2d = tmp_path / "run2d"
    part2d = tmp_path / "part"
    bfs_cli("run", part2d, "--algorithm", "2d", "--roots", 1, "--out", out2d, ranks=ranks)
    assert [r["edges_examined"] for r in searches(out2d)] == [None]


# (graph, grid): one grid row, one grid column, a square, and four in a row, over the three
# kinds of graph (the Kronecker one's hubs, a SNAP graph, a lattice's thousands of levels)
ONE_ADJACENCY = [("kronecker", "1x2"), ("kronecker", "2x2"), ("kronecker", "1x4"),
                 ("snap", "2x1"), ("lattice", "1x2")]


@pytest.mark.parametrize("kind,shape", ONE_ADJACENCY)
def test_one_adjacency_searches_as_two(graphs, kind, shape, tmp_path):
    """2d-do with the block's CSC alone (adjacency=csc: top-down levels pushed through it,
    scattered along the grid row, resolved in the column's sub-steps) on real ranks: every
    search's levels equal seq-csr's and its tree validates (do_checks), and its directions
    are the two-structure search's, all top-down, with the defaults and from level 1
    bottom-up; a top-down level reads at least the frontier's edges."""
    part = tmp_path / "part"
    bfs_cli("partition", graphs(kind)[0], "--grid", shape, "--out", part)
    settings = [(1.0, 18, "scan"), (15, 18, "scan"), (1e9, 18, "wave")]
    reports = do_checks(part, *[(*s, 1, adjacency) for adjacency in ("both", "csc")
                                for s in settings], roots=3, ranks=ranks_of("2d", shape))
    for two, one in zip(reports[:3], reports[3:]):
        assert [r["directions"] for r in one] == [r["directions"] for r in two]
        for a, b in zip(one, two):
            for direction, x, y in zip(a["directions"], a["level_edges_examined"],
                                       b["level_edges_examined"]):
                assert x >= y if direction == "top-down" else x == y
    assert all(set(r["directions"]) == {"top-down"} for r in reports[3])


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


# a missing block: test_a_failure_is_one_line_and_every_rank_exits_1's "rank 2 alone"
@pytest.mark.parametrize("damage", ["corrupt"])
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


@pytest.mark.parametrize("algorithm", ["2d-do", "semiring"])
def test_algorithm_and_partition_kind_must_match(graph, tmp_path, algorithm):
    g, _ = graph
    bfs_cli("partition", g, "--1d", 2, "--out", tmp_path / "part")
    proc = bfs_cli("run", tmp_path / "part", "--algorithm", algorithm, "--out",
                   tmp_path / "run", ranks=2, check=False, timeout=120)
    assert proc.returncode != 0 and "1d partition" in proc.stderr
    assert f"--algorithm {algorithm} needs a 2d one" in proc.stderr


def test_mpi_library_is_recorded_only_where_mpi_ran():
    """envinfo.mpi_library names the library a run loaded and starts no MPI of its own."""
    probe = ("import sys; from bfs.harness import envinfo; print(envinfo.mpi_library()); "
             "from mpi4py import MPI; print(envinfo.mpi_library().splitlines()[0]); "
             "print('mpi4py.MPI' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         check=True).stdout.splitlines()
    assert out[0] == "None"
    assert re.search(r"MPICH|Open MPI|MVAPICH|Intel", out[1]), out


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


def test_grid_communicators_made_once_a_session_scope():
    """grid_comms: outside a scope each searcher makes its own communicators and frees them at
    its close; inside one (a harness session), every build on the same grid and kind shares
    one set, which a searcher's close leaves alone and the scope's close frees."""
    import numpy as np
    from mpi4py import MPI

    from bfs.algorithms import Block, RunContext, fu_2d
    from bfs.comm import exchange
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, 3]},
                  np.array([0, 1, 1, 2], np.int64), np.array([1, 0, 2, 1], np.int64))

    def build():
        return fu_2d.build(block, RunContext("cpu", {}))

    a, b = build(), build()
    assert a._comms is not b._comms and a._comms.owned
    row_comm = a.row_comm
    a.close()
    assert row_comm == MPI.COMM_NULL          # freed with its searcher
    b.close()
    exchange.open_grid_scope()
    try:
        a, b = build(), build()
        assert a._comms is b._comms and not a._comms.owned
        a.search(0)
        assert a.levels_run == 3              # levels 0, 1, 2 and the empty frontier's end
        row_comm = a.row_comm
        a.close()
        b.close()
        assert row_comm != MPI.COMM_NULL      # kept for the session's next build
    finally:
        exchange.close_grid_scope()
    assert row_comm == MPI.COMM_NULL and exchange._scope is None


def ranks_exits(*args, ranks: int):
    """`mpiexec -n RANKS bfs ARGS`, each rank's exit status written after it to stderr: (the
    error lines, `bfs: error: ...` or argparse's `bfs run: error: ...`, {rank: exit status})."""
    report = ('python3 -m bfs "$@"; s=$?; echo "exit-status ${PMI_RANK:-$OMPI_COMM_WORLD_RANK} '
              '$s" >&2; exit $s')
    proc = subprocess.run(["mpiexec", "-n", str(ranks), "sh", "-c", report, "sh",
                           *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"},
                          cwd=ROOT)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    exits = dict(tuple(map(int, line.split()[1:])) for line in lines
                 if line.startswith("exit-status "))
    return [line for line in lines if re.match(r"bfs( \w+)*: error: ", line)], exits


@pytest.fixture(scope="module")
def part2x2(tmp_path_factory):
    base = tmp_path_factory.mktemp("p2x2")
    bfs_cli("generate", "kronecker", "--scale", 8, "--out", base / "graph")
    bfs_cli("partition", base / "graph", "--grid", "2x2", "--out", base / "part")
    return base / "part"


@pytest.mark.parametrize("case", ["every rank", "rank 2 alone", "rank 0 alone, writing"])
def test_a_failure_is_one_line_and_every_rank_exits_1(part2x2, tmp_path, case):
    """One line per failure, not one per rank: the first failing rank's message, naming it."""
    part, out, algorithm = part2x2, tmp_path / "run", "2d"
    if case == "every rank":
        algorithm = "1d"   # a 2x2 partition: every rank finds the same bad combination
    elif case == "rank 2 alone":
        part = tmp_path / "part"
        shutil.copytree(part2x2, part)
        (part / "block-1-0.parquet").unlink()   # rank 2's block (row 1, column 0)
    else:
        (tmp_path / "file").touch()
        out = tmp_path / "file" / "run"   # every search runs; rank 0 cannot write the run
    errors, exits = ranks_exits("run", part, "--algorithm", algorithm, "--roots", 2, "--out", out,
                                ranks=4)
    assert exits == {0: 1, 1: 1, 2: 1, 3: 1}
    assert len(errors) == 1, errors
    expected = {"every rank": f"rank 0: {part} is a 2d partition; --algorithm 1d needs a 1d one",
                "rank 2 alone": "rank 2: ",
                "rank 0 alone, writing": "rank 0: "}[case]
    assert errors[0].startswith(f"bfs: error: {expected}")
    assert errors[0].endswith(" (4 of 4 ranks failed)") == (case == "every rank")
    assert ("block-1-0.parquet" in errors[0]) == (case == "rank 2 alone")
    assert (f"{tmp_path / 'file'}: " in errors[0]) == (case == "rank 0 alone, writing")
    assert not out.exists()


def test_a_usage_error_is_one_message_and_every_rank_exits_2(part2x2):
    errors, exits = ranks_exits("run", part2x2, "--algorithm", "2d", ranks=4)   # no --out
    assert exits == {0: 2, 1: 2, 2: 2, 3: 2}
    assert errors == ["bfs run: error: the following arguments are required: --out"]


# the count is the session's own; what differs is each searcher's gather and its partition kind
COUNTED = [("2d-do", "2x1"), ("1d", "3"), ("semiring", "1x2")]


@pytest.fixture(scope="module")
def counted_graph(tmp_path_factory):
    """A random graph with duplicate edges and self-loops (which nedge leaves out)."""
    return random_graph(tmp_path_factory.mktemp("counted") / "graph")


@pytest.mark.parametrize("kind,shape", COUNTED, ids=[f"{k}-{s}" for k, s in COUNTED])
def test_unvalidated_count_equals_validated(counted_graph, kind, shape, tmp_path):
    """A search left unvalidated (--validate none, and every search but the first of
    --validate first) is counted by the ranks themselves (MpiSession.count): the same nedge,
    depth and reached as the validator gives for the same roots."""
    part = tmp_path / "part"
    bfs_cli("partition", counted_graph, "--grid" if ALGORITHMS[kind].partition == "2d"
            else "--1d", shape, "--out", part)
    runs = {}
    for mode in ("every", "none", "first"):
        out = tmp_path / mode
        bfs_cli("run", part, "--algorithm", kind, "--roots", ROOTS, "--validate", mode,
                "--save-parents", 0, "--out", out, ranks=ranks_of(kind, shape))
        runs[mode] = searches(out)
    key = lambda rows: [(r["root"], r["nedge"], r["depth"], r["reached"]) for r in rows]
    assert all(r["valid"] for r in runs["every"])
    assert [r["valid"] for r in runs["none"]] == [None] * ROOTS
    assert [r["valid"] for r in runs["first"]] == [True] + [None] * (ROOTS - 1)
    assert key(runs["none"]) == key(runs["every"]) == key(runs["first"])
    assert all(r["nedge"] > 0 for r in runs["none"])


@pytest.mark.parametrize("shape,graph", [("1x1", "kronecker"), ("1x2", "kronecker"),
                                         ("2x2", "kronecker"), ("1x2", "snap"),
                                         ("2x2", "lattice")])
def test_blocks_routed_a_chunk_at_a_time(shape, graph, tmp_path):
    """tests/streamed_checks.py under mpiexec: on CPU ranks, 2d, 2d-do, semiring and 1d built
    from their blocks routed again a chunk of 333 edges at a time for each pass hold the same
    rows as from the blocks routed whole, and search and validate alike: a generated
    Kronecker graph, and SNAP and lattice graph directories read a row range at a time."""
    from bfs.graphs.lattice import write_lattice
    from bfs.graphs.snap import convert_snap
    more = []
    if graph == "snap":
        convert_snap(SNAP_DIR / "email-Eu-core.txt", tmp_path / "g")
        more = [str(tmp_path / "g")]
    elif graph == "lattice":
        write_lattice(tmp_path / "g", 60, 80, diagonal_prob=0.1)
        more = [str(tmp_path / "g")]
    r, c = map(int, shape.split("x"))
    cmd = ["mpiexec", "-n", str(r * c), sys.executable,
           str(ROOT / "tests" / "streamed_checks.py"), str(r), str(c), *more]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and "ok" in proc.stdout.split(), proc.stdout + proc.stderr


def test_run_with_blocks_routed_a_chunk_at_a_time(tmp_path):
    """bfs run --generate --edge-list stream on 2 CPU ranks: the blocks are never whole (the
    placement says streamed) and the searches are the whole blocks' run's."""
    runs = {}
    for mode in ("auto", "stream"):
        runs[mode] = tmp_path / mode
        bfs_cli("run", "--generate", "kronecker:scale=10", "--algorithm", "2d-do", "--backend",
                "cpu", "--grid", "1x2", "--roots", 3, "--edge-list", mode, "--out", runs[mode],
                ranks=2)
    key = ("root", "depth", "reached", "nedge")
    assert [tuple(r[k] for k in key) for r in searches(runs["stream"])] == \
        [tuple(r[k] for k in key) for r in searches(runs["auto"])]
    placed = {m: json.loads((d / "run.json").read_text())["measurements"]["placement"]
              for m, d in runs.items()}
    assert placed["auto"]["edge_list"] == "whole" and placed["stream"]["edge_list"] == "streamed"
    # where Kernel 1's time went: the build's phases, each the slowest rank's, within the
    # slowest rank's total
    info = json.loads((runs["stream"] / "run.json").read_text())
    phases = info["measurements"]["kernel1_phases_s"]
    assert list(phases) == ["grid layout", "local ids", "block CSR", "block CSC"], phases
    assert all(0 <= t <= info["construction_time"] for t in phases.values()), phases


def test_bench_grid_over_a_graph_directory_reads_each_share(kron10, tmp_path):
    """bench --graphs with a distributed algorithm on 2 CPU ranks (the 1x2 grid, and 2x1 named
    by --grid beside a lattice): each rank reads only its share of the graph directory's rows
    (edge_range_reader) and routes it, whole and a chunk at a time; the searches are
    seq-csr's from the same roots."""
    key = ("root", "depth", "reached", "nedge")

    def bench(algorithm, *more, ranks=None):
        out = tmp_path / f"{algorithm}{len(more)}.json"
        bfs_cli("bench", "--backend", "cpu", "--graphs", kron10, "--algorithms", algorithm,
                "--roots", 3, "--out", out, *more, ranks=ranks)
        a = json.loads(out.read_text())["records"][0]["algorithms"][algorithm]
        assert a["valid"] and a["n_validated"] == 3
        return [tuple(r[k] for k in key) for r in searches(Path(a["run_dir"]))]
    want = bench("seq-csr")
    assert bench("2d-do", ranks=2) == want
    assert bench("2d-do", "--edge-list", "stream", ranks=2) == want
    # on a grid named, beside a lattice made in memory (--grid took --scales only before)
    out = tmp_path / "grid.json"
    bfs_cli("bench", "--backend", "cpu", "--grid", "2x1", "--graphs", kron10, "--lattice-graphs",
            "6x5", "--algorithms", "2d-do,seq-csr", "--roots", 3, "--out", out, ranks=2)
    records = {r["graph"]: r["algorithms"] for r in json.loads(out.read_text())["records"]}
    assert set(records) == {"kron-s10-e16", "lattice-6x5"}
    for graph, algorithms in records.items():
        assert algorithms["2d-do"]["grid"] == "2x1" and algorithms["2d-do"]["valid"], graph
        runs = {a: [tuple(r[k] for k in key) for r in searches(Path(v["run_dir"]))]
                for a, v in algorithms.items()}
        assert runs["2d-do"] == runs["seq-csr"], graph
    assert runs["2d-do"] and records["kron-s10-e16"]["2d-do"]["n_validated"] == 3


def test_partition_block_built_a_slice_at_a_time(kron10, tmp_path):
    """bfs run PART_DIR --edge-list stream on 2 CPU ranks: each rank's block, read from its
    file, is built a slice at a time (BlockSlices); the same searches as the whole block's."""
    part = tmp_path / "part"
    bfs_cli("partition", kron10, "--grid", "1x2", "--out", part)
    key = ("root", "depth", "reached", "nedge")
    got = {}
    for mode in ("auto", "stream"):
        out = tmp_path / mode
        bfs_cli("run", part, "--algorithm", "2d-do", "--backend", "cpu", "--roots", 3,
                "--edge-list", mode, "--out", out, ranks=2)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"]
        got[mode] = ([tuple(r[k] for k in key) for r in searches(out)],
                     info["measurements"]["block"])
    assert got["stream"][0] == got["auto"][0]
    assert (got["auto"][1], got["stream"][1]) == ("whole", "host, a slice at a time")


def test_run_places_a_graph_directory_on_the_ranks(kron10, tmp_path):
    """bfs run GRAPH_DIR with a distributed algorithm on 4 CPU ranks (--grid 2x2): each rank
    reads its share of the rows and routes it, no partition directory needed; the searches
    are those of the graph's 2x2 partition, and bfs validate re-checks the run."""
    part = tmp_path / "part"
    bfs_cli("partition", kron10, "--grid", "2x2", "--out", part)
    key = ("root", "depth", "reached", "nedge")
    runs = {}
    for name, source, more in (("part", part, []), ("graph", kron10, ["--grid", "2x2"])):
        runs[name] = tmp_path / f"run-{name}"
        bfs_cli("run", source, "--algorithm", "2d-do", "--backend", "cpu", "--roots", 3,
                "--out", runs[name], *more, ranks=4)
    assert [tuple(r[k] for k in key) for r in searches(runs["graph"])] == \
        [tuple(r[k] for k in key) for r in searches(runs["part"])]
    info = json.loads((runs["graph"] / "run.json").read_text())
    assert info["partition"]["grid"] == [2, 2] and info["graph"]["dir"] == str(kron10.resolve())
    assert "valid" in bfs_cli("validate", runs["graph"]).stdout


def test_bench_on_ranks_runs_one_process_algorithms_on_rank_0(tmp_path):
    """mpiexec -n 2 bfs bench --grid 1x2 with a one-process algorithm beside a distributed one
    (the COST baseline in the same call): rank 0 alone runs seq-csr (before, every rank ran it
    into the same run directory and the last one's summary won); the summary has both, with
    the same searches."""
    out = tmp_path / "mix.json"
    bfs_cli("bench", "--backend", "cpu", "--scales", 9, "--grid", "1x2", "--algorithms",
            "seq-csr,2d-do", "--baseline", "seq-csr", "--roots", 3, "--out", out, ranks=2)
    summary = json.loads(out.read_text())
    record = summary["records"][0]["algorithms"]
    assert list(record) == ["seq-csr", "2d-do"] and summary["valid"]
    key = ("root", "depth", "reached", "nedge")
    runs = {name: [tuple(r[k] for k in key) for r in searches(Path(a["run_dir"]))]
            for name, a in record.items()}
    assert runs["seq-csr"] == runs["2d-do"]
    assert json.loads((Path(record["seq-csr"]["run_dir"]) / "run.json").read_text())[
        "parameters"]["mpi_size"] == 1


def test_one_process_algorithm_started_on_two_ranks_runs_once(kron10, tmp_path):
    """bfs run / bfs bench of a one-process algorithm started by mpiexec -n 2: rank 0 runs it
    and writes its directory; rank 1 says so and leaves (before, both ran it into the same
    directory)."""
    out = tmp_path / "run"
    proc = bfs_cli("run", kron10, "--algorithm", "seq-csr", "--roots", 2, "--out", out, ranks=2)
    assert "seq-csr runs on one process: rank 1 of this launch leaves it to rank 0" \
        in proc.stderr
    assert json.loads((out / "run.json").read_text())["valid"]
    proc = bfs_cli("bench", "--backend", "cpu", "--scales", 8, "--algorithms", "seq-csr",
                   "--roots", 2, "--out", tmp_path / "b.json", ranks=2)
    assert proc.stdout.count("GTEPS(hm)") == 1     # one table: rank 0's
    assert list(json.loads((tmp_path / "b.json").read_text())["records"][0]["algorithms"]) \
        == ["seq-csr"]


@pytest.mark.parametrize("shape", ["3x1", "2x2"])   # a ring of 3; a grid with rows and columns
def test_2d_do_substeps_search_a_vertex_on_one_rank_after_another(kron10, shape, tmp_path):
    """Bottom-up levels in sub-steps down the grid column (substeps=1, the default) against
    every rank searching its whole block (substeps=0): each search's levels match seq-csr and
    its tree validates (do_checks), the directions are the same, and a vertex's in-edges are
    read on one rank after another only until one finds it, so no root reads more in-edges
    and the graph's searches read fewer in all."""
    part = tmp_path / "part"
    bfs_cli("partition", kron10, "--grid", shape, "--out", part)
    ranks = ranks_of("2d", shape)
    steps, whole, steps_wave, all_bu = do_checks(
        part, (15, 18, "scan", 1), (15, 18, "scan", 0), (15, 18, "wave", 1),
        (1e9, float("inf"), "scan", 1), roots=6, ranks=ranks)
    for a, b, c in zip(steps, whole, steps_wave):
        assert a["directions"] == b["directions"] == c["directions"]
        assert a["edges_examined"] <= b["edges_examined"], (a, b)
        assert a["level_edges_examined"] == c["level_edges_examined"]   # the scan's kind: moot
    assert any("bottom-up" in r["directions"] for r in steps)
    assert sum(r["edges_examined"] for r in steps) < sum(r["edges_examined"] for r in whole)
    for r in all_bu:             # alpha 1e9, beta inf: bottom-up from level 1 to the end
        assert r["directions"][0] == "top-down" and set(r["directions"][1:]) == {"bottom-up"}
