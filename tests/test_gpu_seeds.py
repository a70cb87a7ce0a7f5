"""GPU: the seeds' other searches against the CPU: gpu-quadratic (Harish and Narayanan's
baseline), hybrid (Munguia et al.'s task-based CPU/GPU) and gpu-out-of-core (the CSR in host
memory). Skipped (with the reason) without CuPy or a CUDA device; on a GPU machine: python3 -m
pytest -q -m gpu tests/test_gpu_seeds.py
"""
import numpy as np
import pytest

from bfs.errors import BfsError
from gpu_helpers import require_gpu  # noqa: E402

require_gpu()
pytestmark = pytest.mark.gpu

from bfs.algorithms import EdgeList, RunContext, get_algorithm  # noqa: E402
from bfs.algorithms.seq_csr import bfs_csr  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.graphs.kronecker import generate_edges  # noqa: E402
from bfs.harness.roots import graph500_roots  # noqa: E402
from bfs.validate import validate  # noqa: E402

from helpers import SNAP_DIR, bfs_cli, searches  # noqa: E402

from gpu_helpers import check_against_cpu, merrill, random_edges  # noqa: E402


# --- gpu-quadratic (bfs.algorithms.gpu_quadratic): Harish and Narayanan's baseline ----------

QUADRATIC = "gpu-quadratic"


@pytest.mark.parametrize("seed", range(8))
def test_quadratic_random_graphs(seed):
    rng = np.random.default_rng(3000 + seed)
    n = int(rng.integers(1, 20_000))
    src, dst = random_edges(rng, n, int(rng.integers(0, 8 * n + 1)))
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, rng.integers(0, n, 4))


def test_quadratic_grid_high_diameter():
    """Grids are the quadratic case: every one of ~n^(1/2) levels inspects all n vertices.
    A labelled 400 x 400 grid with diagonals from a vertex and from the middle, and a
    row-major 100 x 1500 grid from its corner (1598 levels)."""
    from bfs.graphs.lattice import lattice_edges
    src, dst, n = lattice_edges(400, 400, diagonal_prob=0.3, seed=5)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, [0, n // 2])
    src, dst, n = lattice_edges(100, 1500, ordered=True)
    s = merrill(src, dst, n, QUADRATIC)
    check_against_cpu(s, src, dst, n, [0])
    assert s.levels_run == 100 + 1500 - 1   # depth 1598, plus the level that found nothing


def test_quadratic_kronecker_and_snap(tmp_path):
    from bfs.graphs.graphdir import read_edges, read_meta
    from bfs.graphs.snap import convert_snap
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, roots)
    convert_snap(SNAP_DIR / "p2p-Gnutella09.txt", tmp_path / "g")
    src, dst = read_edges(tmp_path / "g")
    n = read_meta(tmp_path / "g").n_vertices
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, roots)


def test_quadratic_path_star_isolated_root_and_empty_graph():
    n = 3000
    perm = np.random.default_rng(4).permutation(n).astype(np.uint32)
    check_against_cpu(merrill(perm[:-1], perm[1:], n, QUADRATIC), perm[:-1], perm[1:], n,
                      [perm[0], perm[n // 2]])
    hub = np.zeros(50_000, np.uint32)   # a hub's row walked by one thread
    leaves = np.arange(1, 50_001, dtype=np.uint32)
    check_against_cpu(merrill(hub, leaves, 50_001, QUADRATIC), hub, leaves, 50_001, [0, 9])
    s = merrill(np.array([0, 1], np.uint32), np.array([1, 1], np.uint32), 4, QUADRATIC)
    s.search(3)
    res = s.gather(4)
    np.testing.assert_array_equal(res.parent, [-1, -1, -1, 3])
    np.testing.assert_array_equal(res.level, [-1, -1, -1, 0])
    assert s.levels_run == 1
    s = merrill(np.empty(0, np.uint32), np.empty(0, np.uint32), 1, QUADRATIC)
    s.search(0)
    np.testing.assert_array_equal(s.gather(1).level, [0])
    with pytest.raises(BfsError, match="not a vertex"):
        s.search(1)


def test_quadratic_level_profile_adds_up():
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    root = int(graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=1)[0])
    s = merrill(src, dst, n, QUADRATIC)
    s.profile_levels = prof = []
    levels = s.search(root).level.get()
    assert len(prof) == s.levels_run == levels.max() + 1
    assert prof[0]["frontier_vertices"] == 1 and prof[-1]["next_vertices"] == 0
    for a, b in zip(prof, prof[1:]):
        assert a["next_vertices"] == b["frontier_vertices"]
    assert [p["frontier_vertices"] for p in prof] == \
        [int((levels == d).sum()) for d in range(len(prof))]


def test_quadratic_cli_run_and_bench_on_a_grid(tmp_path):
    """bfs run (GPU Kernel 1 from the edge list, validated on the GPU, saved parents
    re-validated on the CPU) and bfs bench (from the device CSR) on a high-diameter grid."""
    import json
    g = tmp_path / "grid"
    bfs_cli("generate", "lattice", "--rows", "60", "--cols", "400", "--diagonal-prob", "0.2",
            "--out", g)
    run, ref = tmp_path / "run", tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", QUADRATIC, "--roots", "4", "--save-parents", "1",
            "--out", run)   # --backend auto: its only backend
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", "4", "--out", ref)
    rows = searches(run)
    assert all(r["valid"] for r in rows)
    assert [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in rows] == \
        [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(ref)]
    assert json.loads((run / "run.json").read_text())["parameters"]["backend"] == "gpu"
    bfs_cli("validate", run)
    out = tmp_path / "bench.json"
    bfs_cli("bench", "--backend", "gpu", "--lattice-graphs", "40x300", "--algorithms",
            f"merrill,{QUADRATIC}", "--roots", "3", "--profile-levels", "--out", out)
    rec = json.loads(out.read_text())
    assert rec["valid"]
    a = rec["records"][0]["algorithms"][QUADRATIC]
    # a root's depth on the grid is at least its distance to the farther end: >= 150 columns
    assert a["n_validated"] == 3 and a["level_profile"]["n_steps"] > 150


# hybrid (Munguia et al.): every placement of the tasks against seq-csr, every tree validated
HYBRID_SETTINGS = {"workload-all-gpu": {"mode": "workload", "lambda": 0},
                   "workload-all-cpu": {"mode": "workload", "lambda": float("inf")},
                   "workload-mixed": {"mode": "workload", "lambda": 200},
                   "fixed-0": {"mode": "fixed", "gpu_share": 0.0},
                   "fixed-0.5": {"mode": "fixed", "gpu_share": 0.5},
                   "fixed-1": {"mode": "fixed", "gpu_share": 1.0}}


@pytest.mark.parametrize("tasks", [1, 16])
@pytest.mark.parametrize("setting", list(HYBRID_SETTINGS))
def test_hybrid_levels_equal_seq_csr(setting, tasks):
    src, dst = generate_edges(14, 16)
    n = 1 << 14
    opts = {"tasks": tasks, **HYBRID_SETTINGS[setting]}
    searcher = get_algorithm("hybrid").load("gpu").build(EdgeList(src, dst, n),
                                                          RunContext("gpu", opts))
    csr = build_csr(src, dst, n)
    ran = {"cpu": 0, "gpu": 0}
    for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
        root = int(root)
        res = searcher.search(root)
        _, want = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(res.level, want)
        check = validate(src, dst, res.parent, root, res.level)
        assert check.valid, check.message
        for side in ran:
            ran[side] += searcher.task_levels[side]
    if setting in ("workload-all-gpu", "fixed-1"):
        assert ran["cpu"] == 0 and ran["gpu"] > 0
    if setting in ("workload-all-cpu", "fixed-0"):
        assert ran["gpu"] == 0 and ran["cpu"] > 0
    if setting == "workload-mixed" or (setting == "fixed-0.5" and tasks > 1):
        assert ran["cpu"] > 0 and ran["gpu"] > 0


def test_hybrid_run_records_its_options(tmp_path):
    from bfs.cli import main
    graph = tmp_path / "g"
    assert main(["generate", "kronecker", "--scale", "10", "--out", str(graph)]) == 0
    assert main(["run", str(graph), "--algorithm", "hybrid", "--mode", "fixed", "--tasks", "4",
                 "--roots", "4", "--out", str(tmp_path / "r")]) == 0
    import json
    params = json.loads((tmp_path / "r" / "run.json").read_text())["parameters"]
    assert params["mode"] == "fixed" and params["tasks"] == 4 and params["gpu_share"] == 0.5
    assert all(row["valid"] for row in searches(tmp_path / "r"))


# --- gpu-out-of-core (bfs.algorithms.gpu_out_of_core): the CSR in host memory, streamed -----

OOC = "gpu-out-of-core"


def out_of_core(src, dst, n, limit, **options):
    from bfs.algorithms.gpu_out_of_core import vertex_state_bytes
    limit = vertex_state_bytes(n) + limit      # the state, plus `limit` for buffers and table
    return get_algorithm(OOC).load("gpu").build(
        EdgeList(src, dst, n), RunContext("gpu", {"device_memory_limit": limit, **options}))


def check_out_of_core(src, dst, n, roots, limit=64 * 1024):
    """Levels equal seq-csr's and every search validates, with far more blocks than one; each
    search streams more than the whole CSR (its blocks again at every level)."""
    from bfs.algorithms.gpu_out_of_core import csr_bytes
    s = out_of_core(src, dst, n, limit)
    csr = build_csr(src, dst, n)
    assert s.n_blocks > 4 and s.buffer_bytes * 4 < csr_bytes(csr.offsets)
    assert s.device_bytes <= s.limit
    check_against_cpu(s, src, dst, n, roots)
    for root in roots:
        s.search(int(root))
        res = s.gather(n)
        if (res.level >= 0).sum() > n // 2:    # a search of the giant component
            assert s.bytes_copied > csr_bytes(csr.offsets)
            assert s.copy_s > 0 and s.transfer_rate() > 0
        assert s.nedge() == validate(src, dst, res.parent, int(root), res.level).nedge
    return s


def test_out_of_core_kronecker_12_many_blocks():
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    s = check_out_of_core(src, dst, n, roots)
    assert s.n_blocks > 10


def test_out_of_core_snap_and_grid(tmp_path):
    from bfs.graphs.graphdir import read_edges, read_meta
    from bfs.graphs.lattice import lattice_edges
    from bfs.graphs.snap import convert_snap
    convert_snap(SNAP_DIR / "p2p-Gnutella09.txt", tmp_path / "g")
    src, dst = read_edges(tmp_path / "g")
    n = read_meta(tmp_path / "g").n_vertices
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_out_of_core(src, dst, n, roots)
    src, dst, n = lattice_edges(100, 300, diagonal_prob=0.2, seed=3)
    check_out_of_core(src, dst, n, [0, n // 2], limit=16 * 1024)


def test_out_of_core_hub_rows_split_isolated_root_and_tiny_blocks():
    hub = np.zeros(50_000, np.uint32)           # a hub row split over many blocks
    leaves = np.arange(1, 50_001, dtype=np.uint32)
    s = out_of_core(hub, leaves, 50_001, 16 * 1024)
    assert s.n_blocks > 50
    check_against_cpu(s, hub, leaves, 50_001, [0, 9])
    rng = np.random.default_rng(11)
    src, dst = random_edges(rng, 500, 3000)
    s = out_of_core(src, dst, 500, 1 << 20, max_block_bytes=32)   # a few edges a block
    assert s.buffer_bytes <= 32 and s.n_blocks > 500
    check_against_cpu(s, src, dst, 500, [0, 7])
    s = out_of_core(np.array([0, 1], np.uint32), np.array([1, 1], np.uint32), 4, 1024)
    s.search(3)
    np.testing.assert_array_equal(s.gather(4).level, [-1, -1, -1, 0])
    assert s.levels_run == 1


def test_out_of_core_too_small_limit_is_refused():
    from bfs.algorithms.gpu_out_of_core import vertex_state_bytes
    src, dst = generate_edges(10, 16)
    n = 2 ** 10
    need = vertex_state_bytes(n)
    with pytest.raises(BfsError) as e:
        get_algorithm(OOC).load("gpu").build(EdgeList(src, dst, n),
                                             RunContext("gpu", {"device_memory_limit": 1000}))
    assert str(need) in str(e.value) and "1000" in str(e.value)


def test_out_of_core_cli_run_validates_on_the_cpu(tmp_path):
    import json
    g = tmp_path / "grid"
    bfs_cli("generate", "lattice", "--rows", "60", "--cols", "200", "--diagonal-prob", "0.2",
            "--out", g)
    run, ref = tmp_path / "run", tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", OOC, "--device-memory-limit", "192K", "--roots", "4",
            "--save-parents", "1", "--out", run)
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", "4", "--out", ref)
    rows = searches(run)
    assert all(r["valid"] for r in rows)
    assert [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in rows] == \
        [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(ref)]
    info = json.loads((run / "run.json").read_text())
    assert info["parameters"]["device_memory_limit"] == 192 * 1024
    assert info["validation"].startswith("cpu")
    bfs_cli("validate", run)
    proc = bfs_cli("run", g, "--algorithm", OOC, "--device-memory-limit", "1K", "--out",
                   tmp_path / "small", check=False)
    assert proc.returncode == 1 and "device memory limit of 1024 bytes" in proc.stderr

