"""GPU: 2d and 2d-do on the GPU (bfs.algorithms.fu_2d_gpu, fu_2d_do_gpu) on one GPU, its grid
ranks sharing it: one rank's searches and engine, the chains and their CUDA graphs, mpiexec
runs against seq-csr, and the level loop across ranks through peer memory (the four-GPU tests:
test_gpu_grid.py). Skipped (with the reason) without CuPy or a CUDA device; on a GPU machine:
python3 -m pytest -q -m gpu tests/test_gpu_2d.py
"""
import numpy as np
import pytest

from gpu_helpers import require_gpu  # noqa: E402

require_gpu()
pytestmark = pytest.mark.gpu

from bfs.build import csr_gpu
from bfs.graphs import device_edges
from bfs.algorithms import RunContext, get_algorithm  # noqa: E402
from bfs.algorithms.seq_csr import bfs_csr  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.graphs.kronecker import generate_edges  # noqa: E402
from bfs.harness.roots import graph500_roots  # noqa: E402
from bfs.validate import validate  # noqa: E402

from helpers import bfs_cli, searches  # noqa: E402

from gpu_helpers import random_edges  # noqa: E402


# --- 2d --backend gpu (bfs.algorithms.fu_2d_gpu) ----------------------------------------------

def symmetric_block(src, dst):
    """Both directions of every non-self-loop edge: what a 1x1 partition's block holds."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    keep = src != dst
    return np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])


def check_2d_gpu(src, dst, n, roots):
    """2d --backend gpu on a 1x1 grid, both ways it is built: from a block with a communicator
    of one rank (bfs run's path) and from a device CSR with no MPI (bfs bench's path)."""
    from mpi4py import MPI

    from bfs.algorithms.fu_2d_gpu import Fu2DGpu
    from bfs.algorithms import Block
    fu_2d = get_algorithm("2d").load("gpu")   # the registry's pick for --backend gpu
    bsrc, bdst = symmetric_block(src, dst)
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]}, bsrc, bdst)
    from_block = fu_2d.build(block, RunContext("gpu"))
    assert isinstance(from_block, Fu2DGpu)
    d_src, d_dst = device_edges.to_device_edges(src, dst)
    offsets, columns = csr_gpu.build_csr_gpu(d_src, d_dst, n)
    from_csr = fu_2d.from_csr(offsets, columns)
    csr = build_csr(src, dst, n)
    for root in roots:
        root = int(root)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        for name, s in (("block", from_block), ("csr", from_csr)):
            s.search(root)
            res = s.gather(n)
            assert res.parent.shape == (n,) and res.level.shape == (n,)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"{name} root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"{name} root {root}: {check.message}"
            if name == "csr":
                assert s.nedge() == check.nedge


@pytest.mark.parametrize("seed", range(6))
def test_2d_gpu_random_graphs(seed):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(2, 40_000))   # n not a multiple of 64 most of the time: padded words
    src, dst = random_edges(rng, n, int(rng.integers(n, 12 * n)))
    check_2d_gpu(src, dst, n, rng.integers(0, n, 3))


def test_2d_gpu_kronecker():
    src, dst = generate_edges(15, 16)
    n = 2 ** 15
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_2d_gpu(src, dst, n, roots)


def test_2d_gpu_path_and_isolated_root():
    n = 3000
    perm = np.random.default_rng(4).permutation(n).astype(np.uint32)
    check_2d_gpu(perm[:-2], perm[1:-1], n, [perm[0], perm[n // 2], perm[-1]])  # last: isolated


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("grid", ["1x1", "1x2", "2x1", "2x2"])
def test_2d_gpu_mpirun_equals_seq_csr(tmp_path, grid):
    """bfs run --algorithm 2d and 2d-do --backend gpu under mpiexec, ranks sharing the one GPU
    (the exchanges through MPI): on one rank the engine (merrill, merrill-do), on more the
    grid's levels with merrill-do's bottom-up kernel over each block (2d-do bottom-up from
    level 1, and the defaults). Every search valid on the GPU (grid_gpu: parents and levels),
    the same depths, reached counts and nedge as seq-csr."""
    from helpers import random_graph
    g = tmp_path / "graph"
    bfs_cli("generate", "kronecker", "--scale", 12, "--edgefactor", 8, "--out", g)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    r, c = map(int, grid.split("x"))
    runs = [("2d",), ("2d-do",), ("2d-do", "--alpha", 1e9)]
    for graph in (g, random_graph(tmp_path / "random")):
        ref = graph.parent / f"{graph.name}-ref"
        bfs_cli("run", graph, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
        part = graph.parent / f"{graph.name}-part"
        bfs_cli("partition", graph, "--grid", grid, "--out", part)
        for k, (name, *options) in enumerate(runs):
            out = graph.parent / f"{graph.name}-run{k}"
            bfs_cli("run", part, "--algorithm", name, "--backend", "gpu", *options,
                    "--roots", 4, "--save-parents", 1, "--out", out, ranks=r * c)
            assert comparable(searches(out)) == comparable(searches(ref)), (name, options)


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
def test_grid_too_big_for_the_gpus_is_refused_before_generation(tmp_path):
    """A GPU grid whose blocks no GPU holds (scale 31 on 1x2: ~1 TiB a rank) stops at once,
    before generating, every rank exiting non-zero, with the need, the free memory and the
    largest scale this grid holds (ranks sharing the one GPU here)."""
    import time
    t = time.perf_counter()
    proc = bfs_cli("run", "--generate", "kronecker:scale=31", "--algorithm", "2d-do",
                   "--backend", "gpu", "--grid", "1x2", "--roots", 1, "--out", tmp_path / "r",
                   ranks=2, check=False, timeout=120)
    assert proc.returncode != 0
    assert "2d-do on a 1x2 grid (2147483648 vertices" in proc.stderr, proc.stderr[-2000:]
    said = __import__("re").search(r"largest Kronecker scale that fits is (\d+) on this 1x2 grid",
                                   proc.stderr)
    assert said and 20 <= int(said.group(1)) < 31, proc.stderr[-2000:]
    assert time.perf_counter() - t < 60            # generating scale 31 would take minutes
    assert not (tmp_path / "r" / "run.json").exists()


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("name,grid", [("2d", "1x1"), ("2d", "1x2"), ("2d-do", "2x1"),
                                       ("1d", "2"), ("semiring", "2x2")])
def test_unvalidated_grid_search_is_counted_on_the_gpus(tmp_path, name, grid):
    """Under mpiexec (ranks sharing the one GPU), a distributed GPU search left unvalidated is
    counted on the GPUs (bfs.validate.grid_gpu.count_grid_device, no gather, no host copy of
    the block): the same nedge, depth and reached as the GPU validator gives."""
    from helpers import random_graph
    from bfs.algorithms import ALGORITHMS
    graph = random_graph(tmp_path / "graph", n=2000, m=12000)
    part = tmp_path / "part"
    one_d = ALGORITHMS[name].partition == "1d"
    bfs_cli("partition", graph, "--1d" if one_d else "--grid", grid, "--out", part)
    ranks = int(grid) if one_d else int(grid[0]) * int(grid[2])
    runs = {}
    for mode in ("every", "none"):
        out = tmp_path / mode
        bfs_cli("run", part, "--algorithm", name, "--backend", "gpu", "--roots", 4,
                "--validate", mode, "--save-parents", 0, "--out", out, ranks=ranks)
        runs[mode] = searches(out)
    key = lambda rows: [(r["root"], r["nedge"], r["depth"], r["reached"]) for r in rows]
    assert all(r["valid"] for r in runs["every"])
    assert all(r["valid"] is None for r in runs["none"])
    assert key(runs["none"]) == key(runs["every"])


def test_count_grid_device_one_rank_engine_and_level_loop():
    """count_grid_device over a 1x1 grid, with the single-GPU engine's view and with the
    grid's level loop (engine=0): validate_grid_device's nedge, depth and reached."""
    from mpi4py import MPI

    from bfs.algorithms import Block, fu_2d_gpu
    from bfs.validate.grid_gpu import count_grid_device, validate_grid_device
    src, dst = generate_edges(11, 16)
    keep = src != dst     # a block holds both directions of every non-loop edge
    src, dst = np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])
    block = Block(comm=MPI.COMM_SELF, src=src, dst=dst,
                  manifest={"grid": [1, 1], "bounds": [0, 2 ** 11]})
    roots = graph500_roots(2 ** 11, np.bincount(src, minlength=2 ** 11) > 0, count=3)
    for engine in (1, 0):
        s = fu_2d_gpu.build(block, RunContext("gpu", {"engine": engine}))
        try:
            for root in roots:
                s.search(int(root))
                check = validate_grid_device(s.grid_view(), int(root), MPI.COMM_SELF,
                                             s.world_x, s.row_x, s.col_x)
                assert check.valid
                assert count_grid_device(s.grid_view(), MPI.COMM_SELF, s.row_x) == \
                    (check.nedge, check.depth, check.reached)
        finally:
            s.close()


def test_one_rank_searches_with_the_single_gpu_engine(monkeypatch):
    """2d and 2d-do on a 1x1 grid run merrill and merrill-do over the block (Fu2DGpu.ENGINE):
    the same levels as seq-csr and as merrill-do built from Kernel 1 on the same graph, the
    same directions and edges examined as that merrill-do, valid by the grid validator
    (grid_view) and the single-GPU one; and one host read per level step, where a run-ahead
    chain of bottom-up levels is one step, so a Kronecker search reads fewer times than it has
    levels. 2d-do's engine owns the block CSR it was built over (rows re-sorted in place)."""
    from mpi4py import MPI

    from bfs.algorithms.merrill import MerrillSearcher
    from bfs.algorithms.merrill_do import MerrillDoSearcher
    from bfs.validate.grid_gpu import validate_grid_device
    from bfs.comm.exchange import MpiExchange
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    csr = build_csr(src, dst, n)
    d_src, d_dst = device_edges.to_device_edges(src, dst)
    alone = MerrillDoSearcher(*csr_gpu.build_csr_gpu(d_src, d_dst, n))
    x = MpiExchange(MPI.COMM_SELF)
    for name, engine in (("2d", MerrillSearcher), ("2d-do", MerrillDoSearcher)):
        s = do_1x1(src, dst, n, "gpu", name)
        assert type(s.engine) is engine
        reads, steps = [0], [0]
        read_ctl, step = s.engine._read_ctl, s.engine._step
        monkeypatch.setattr(s.engine, "_read_ctl",
                            lambda *a: (reads.__setitem__(0, reads[0] + 1), read_ctl(*a))[1])
        monkeypatch.setattr(s.engine, "_step",
                            lambda *a: (steps.__setitem__(0, steps[0] + 1), step(*a))[1])
        chained = False
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
            root = int(root)
            reads[0] = steps[0] = 0
            s.search(root)
            res = s.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"{name} root {root}")
            verdict = validate_grid_device(s.grid_view(), root, MPI.COMM_SELF, x, x, x)
            check = validate(src, dst, res.parent, root, res.level)
            assert verdict.valid and check.valid, (verdict.message, check.message)
            assert verdict.nedge == check.nedge == s.nedge()
            assert reads[0] == steps[0] and reads[0] <= s.levels_run
            assert s.profile[:, 1].sum() == check.reached      # frontier sizes of every level
            if name == "2d-do":
                alone.search(root)
                assert s.directions == alone.directions
                assert s.level_edges_examined == alone.level_edges_examined
                chained |= reads[0] < s.levels_run
        if name == "2d-do":
            assert chained, "no search ran a chain of bottom-up levels past one host read"
            # the block CSR was built for the engine alone: its rows re-sorted in place, where
            # a CSR from_csr shares (bench's) is re-sorted in a copy
            assert s.engine.own_csr
            shared = type(s).from_csr(*csr_gpu.build_csr_gpu(d_src, d_dst, n))
            assert not shared.engine.own_csr


# --- 2d-do --backend gpu (bfs.algorithms.fu_2d_do_gpu) -------------------------------------------

def do_1x1(src, dst, n, backend, algorithm="2d-do", cls=None, **options):
    """A grid algorithm (2d-do, semiring) built from a 1x1 block over MPI.COMM_SELF (bfs run's
    path on one rank); cls: that searcher class instead of the registry's."""
    from mpi4py import MPI

    from bfs.algorithms import Block
    bsrc, bdst = symmetric_block(src, dst)
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]}, bsrc, bdst)
    if cls is not None:
        return cls(block, RunContext(backend, options))
    return get_algorithm(algorithm).load(backend).build(block, RunContext(backend, options))


def test_semiring_gpu_one_rank_equals_cpu_semiring():
    """semiring --backend gpu on a 1x1 grid, a Kronecker and a random graph (n not a multiple
    of 64): levels equal seq-csr's, every tree valid and the CPU semiring's, parent for parent
    (each vertex's smallest-id neighbour one level up)."""
    rng = np.random.default_rng(901)
    n_random = 3000 + 5
    for src, dst, n in [(*generate_edges(12, 16), 2 ** 12),
                        (*random_edges(rng, n_random, 8 * n_random), n_random)]:
        gpu = do_1x1(src, dst, n, "gpu", "semiring")
        cpu = do_1x1(src, dst, n, "cpu", "semiring")
        csr = build_csr(src, dst, n)
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=3):
            root = int(root)
            gpu.search(root)
            cpu.search(root)
            got, want = gpu.gather(n), cpu.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(got.level, ref_level, err_msg=f"root {root}")
            np.testing.assert_array_equal(got.parent, want.parent, err_msg=f"root {root}")
            check = validate(src, dst, got.parent, root, got.level)
            assert check.valid, f"root {root}: {check.message}"


@pytest.mark.parametrize("alpha,rows,floor", [(1.0, "auto", 0.0), (15.0, "graph", 1 / 64),
                                              (1e9, "degree", 0.0)])
def test_2d_do_gpu_one_rank_both_directions(alpha, rows, floor):
    """2d-do --backend gpu's grid levels on a 1x1 grid (fu_2d_gpu.level_loop_class: Fu2D's
    level loop with one rank's exchanges, merrill-do's bottom_up over the block CSC) on a
    Kronecker graph and a random one (n not a multiple of 64: padded words): levels equal
    seq-csr's, every tree valid, the directions the CPU 2d-do's (both switch on the same n_f,
    m_f and m_u, and the same floor: 1/64 is the GPU's default), and a search that stays
    top-down examines the same edges per level."""
    from bfs.algorithms.fu_2d_do_gpu import Fu2DDoGpu
    from bfs.algorithms.fu_2d_gpu import level_loop_class
    rng = np.random.default_rng(900)
    n_random = 5000 + 17
    graphs = [(*generate_edges(12, 16), 2 ** 12),
              (*random_edges(rng, n_random, 12 * n_random), n_random)]
    for src, dst, n in graphs:
        gpu = do_1x1(src, dst, n, "gpu", cls=level_loop_class(Fu2DDoGpu), alpha=alpha,
                     beta=18.0, rows=rows, floor=floor)
        cpu = do_1x1(src, dst, n, "cpu", alpha=alpha, beta=18.0, floor=floor)
        assert isinstance(gpu, Fu2DDoGpu) and gpu.engine is None
        # rows hubs first: each column's rows by falling degree (ties by id), the head first
        offsets, col_rows = gpu.csc_offsets.get(), gpu.csc_rows.get()
        degree = np.diff(gpu.csr_offsets.get())
        key = -degree[col_rows].astype(np.int64) * (2 * n) + col_rows
        column = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        in_order = (np.diff(key) >= 0) | (np.diff(column) != 0)   # duplicates: equal keys
        assert gpu.rows_order == ("graph" if rows == "graph" else "degree")
        assert in_order.all() == (rows != "graph") or not col_rows.size
        np.testing.assert_array_equal(gpu.head.get()[np.diff(offsets) > 0],
                                      col_rows[offsets[:-1][np.diff(offsets) > 0]])
        csr = build_csr(src, dst, n)
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=3):
            root = int(root)
            gpu.search(root)
            res = gpu.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"root {root}: {check.message}"
            cpu.search(root)
            assert gpu.directions == cpu.directions, (root, gpu.directions, cpu.directions)
            assert len(gpu.directions) == gpu.levels_run == len(gpu.level_edges_examined)
            assert gpu.edges_examined == sum(gpu.level_edges_examined)
            if alpha == 1.0:
                assert set(gpu.directions) == {"top-down"}
                assert gpu.level_edges_examined == cpu.level_edges_examined
            if alpha == 1e9:   # bottom-up from level 1: the bottom-up kernel ran
                assert gpu.directions[:2] == ["top-down", "bottom-up"]
    if alpha == 1e9:
        assert gpu.launches["bottom_up"] > 0


def _count_reads(searcher) -> None:
    """searcher.reads += 1 at each read of the device's control block."""
    read = searcher._read_ctl

    def counted(*where):
        searcher.reads += 1
        return read(*where)
    searcher.reads, searcher._read_ctl = 0, counted


@pytest.mark.parametrize("options", [{}, {"beta": 18.0, "ahead": 1}, {"alpha": 1.0}],
                         ids=["defaults", "back-to-top-down", "top-down"])
def test_2d_do_gpu_chains_replayed_as_cuda_graphs(options):
    """2d-do's grid levels on a 1x1 grid (NCCL over one rank): each chain of levels captured
    once as a CUDA graph and replayed (graphs=1, the default) searches as the chains launched
    one by one (graphs=0): levels equal seq-csr's, trees valid, the same directions and edges
    examined per level; a second search from a root replays what the first captured (no new
    graph) and reads the device as often."""
    from bfs.algorithms.fu_2d_do_gpu import Fu2DDoGpu
    from bfs.algorithms.fu_2d_gpu import level_loop_class
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    cls = level_loop_class(Fu2DDoGpu)
    replayed = do_1x1(src, dst, n, "gpu", cls=cls, **options)
    launched = do_1x1(src, dst, n, "gpu", cls=cls, graphs=0, **options)
    assert (replayed.graphs, launched.graphs) == (1, 0)
    for s in (replayed, launched):
        _count_reads(s)
    csr = build_csr(src, dst, n)
    for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
        root = int(root)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        seen = []
        for s in (replayed, launched, replayed):
            s.reads = 0
            s.search(root)
            res = s.gather(n)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"root {root}: {check.message}"
            seen.append((s.directions, s.level_edges_examined, s.reads,
                         len(replayed._captured)))
        (d1, e1, r1, kept1), (d0, e0, r0, _), (d2, e2, r2, kept2) = seen
        assert d1 == d0 == d2 and e1 == e0 == e2, (root, seen)
        assert r1 == r0 == r2, (root, seen)      # a replayed chain still ends in one read
        assert kept2 == kept1 > 0, (root, seen)  # the second search captured nothing new
    assert not launched._captured
    if options.get("alpha") == 1.0:
        assert set(replayed.directions) == {"top-down"}
    else:
        assert "bottom-up" in replayed.directions


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
def test_2d_do_gpu_run_equals_seq_csr(tmp_path):
    """bfs run --algorithm 2d-do --backend gpu on a 1x1 partition of a small Kronecker graph,
    with the default switch and bottom-up from level 1: every search valid (on the GPU), the
    same depths, reached counts and nedge as seq-csr."""
    import json
    g = tmp_path / "graph"
    bfs_cli("generate", "kronecker", "--scale", 12, "--edgefactor", 16, "--out", g)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    ref = tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
    part = tmp_path / "part"
    bfs_cli("partition", g, "--grid", "1x1", "--out", part)
    for alpha in (15, 1e9):
        out = tmp_path / f"run-{alpha}"
        bfs_cli("run", part, "--algorithm", "2d-do", "--backend", "gpu", "--alpha", alpha,
                "--roots", 4, "--save-parents", 1, "--out", out, ranks=1)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"] and "grid_gpu" in info["validation"]
        assert info["parameters"]["alpha"] == alpha
        assert comparable(searches(out)) == comparable(searches(ref))



@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("grid", ["1x2", "1x4"])
def test_peer_level_loop_searches_as_seq_csr(tmp_path, grid):
    """2d-do on a grid of one row with peer=on (ranks sharing the one GPU: their windows are
    the same device's memory, opened by CUDA IPC from the other processes): a lattice's every
    level runs in the ranks' level loops (no host-launched top-down level), a Kronecker graph's
    hand the hub levels back to the host's chains and return; every search valid, with the
    depths, reached counts and nedge of seq-csr, as peer=off gives them (and loop_spread=0,
    the frontier on the fewest blocks, the default's other choice)."""
    import json
    from helpers import random_graph
    ranks = int(grid[2])
    lattice, kron = tmp_path / "lattice", tmp_path / "kron"
    bfs_cli("generate", "lattice", "--rows", 30, "--cols", 41, "--out", lattice)
    bfs_cli("generate", "kronecker", "--scale", 11, "--edgefactor", 8, "--out", kron)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    for graph in (lattice, kron, random_graph(tmp_path / "random")):
        ref = graph.parent / f"{graph.name}-ref"
        bfs_cli("run", graph, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
        part = graph.parent / f"{graph.name}-part"
        bfs_cli("partition", graph, "--grid", grid, "--out", part)
        for mode, options in (("on", "peer=on"), ("spread", "peer=on,loop_spread=0"),
                              ("off", "peer=off")):
            out = graph.parent / f"{graph.name}-{mode}"
            bfs_cli("run", part, "--algorithm", f"2d-do@{options}", "--backend", "gpu",
                    "--roots", 4, "--save-parents", 1, "--out", out, ranks=ranks, timeout=600)
            assert comparable(searches(out)) == comparable(searches(ref)), (graph.name, mode)
            launches = json.loads((out / "run.json").read_text())["measurements"]["launches"]
            if mode == "off":
                assert "loop" not in launches
            elif graph is lattice:       # every level in the loop: one launch a search
                assert launches["loop"] >= 4 and launches["expand"] == 0, launches
            else:
                assert launches["loop"] >= 4, launches


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("graph", ["lattice", "hub"])
def test_peer_level_loop_leaves_its_wait_when_a_rank_stops(tmp_path, graph):
    """A rank that stops before a search (here: it never starts it) leaves the others waiting
    on its flag: the lattice's level loop (PEER_TIMEOUT_S), or on a graph with a hub, which the
    loop does not take, the peer share of In (SHARE_TIMEOUT_S); they leave within the bounded
    wait and the search raises one line naming the rank waited on and the level (ranks sharing
    the one GPU; a BfsError ends a run non-zero with nothing half written, the CPU fault
    tests')."""
    import os
    import subprocess
    import sys
    import time
    from helpers import ROOT
    script = tmp_path / "stall.py"
    script.write_text(
        "import sys\n"
        "from mpi4py import MPI\n"
        "from bfs.algorithms import Block, RunContext, get_algorithm\n"
        "from bfs.errors import BfsError\n"
        "from bfs.graphs.lattice import lattice_edges\n"
        "from bfs.harness.sessions_mpi import select_gpu\n"
        "from bfs.partition import GridLayout\n"
        "import numpy as np\n"
        "comm = MPI.COMM_WORLD\n"
        "rank = comm.Get_rank()\n"
        "select_gpu(rank)\n"
        f"src, dst, n = lattice_edges({'20, 20' if graph == 'lattice' else '80, 80'})\n"
        "if n > 400:   # a hub (vertex 0 joined to every other): the level loop does not run\n"
        "    src = np.concatenate([src, np.zeros(n - 1, src.dtype)])\n"
        "    dst = np.concatenate([dst, np.arange(1, n, dtype=dst.dtype)])\n"
        "src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])\n"
        "layout = GridLayout(n, 1, 2)\n"
        "mine = (dst >= layout.bounds[rank]) & (dst < layout.bounds[rank + 1])\n"
        "manifest = {'grid': [1, 2], 'bounds': layout.bounds.tolist(), 'n_vertices': n}\n"
        "s = get_algorithm('2d-do').load('gpu').build(\n"
        "    Block(comm, manifest, src[mine], dst[mine]), RunContext('gpu', {'peer': 'on'}))\n"
        "assert s.peers is not None and s.in_share is not None\n"
        "s.search(0)\n"
        "comm.Barrier()\n"
        "if rank == 1:\n"
        "    print('rank 1 stops', flush=True)\n"
        "    comm.Barrier()\n"
        "    sys.exit(0)\n"
        "try:\n"
        "    s.search(5)\n"
        "except BfsError as e:\n"
        "    print('raised:', e, flush=True)\n"
        "    comm.Barrier()\n"
        "    sys.exit(0)\n"
        "print('no error', flush=True)\n"
        "comm.Barrier()\n")
    t = time.perf_counter()
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "OMPI_ALLOW_RUN_AS_ROOT": "1",
                               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    from bfs.algorithms.fu_2d_do_peer import PEER_TIMEOUT_S
    from bfs.comm.peer import SHARE_TIMEOUT_S
    out = proc.stdout + proc.stderr
    if graph == "lattice":
        assert "raised: 2d-do level loop, rank 0 of the grid row: level 0: rank 1 did not " \
               f"arrive within {PEER_TIMEOUT_S:g} s" in out, out[-3000:]
    else:
        assert "raised: peer share, rank 0 of the grid row: level 0: rank 1 did not arrive " \
               f"('cleared' flag) within {SHARE_TIMEOUT_S:g} s" in out, out[-3000:]
    assert time.perf_counter() - t < 120, out[-3000:]
