"""The one harness: `bfs run --generate`, `--validate`, `bfs bench` writing run directories the
report reads, and the Searcher protocol every registered searcher follows (CPU; the GPU paths
are in the test_gpu_*.py files)."""
import importlib
import inspect
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bfs.algorithms import ALGORITHMS, Searcher
from bfs.errors import BfsError
from bfs.harness.generated import GeneratedKronecker, parse_generate
from helpers import ROOT, bfs_cli, plant_parent, searches

GENERATE = "kronecker:scale=10"
KEY = ("root", "reached", "nedge", "depth")


@pytest.fixture(scope="module")
def kron10(tmp_path_factory):
    """The graph --generate kronecker:scale=10 makes, as a graph directory, and seq-csr's run."""
    base = tmp_path_factory.mktemp("kron10")
    bfs_cli("generate", "kronecker", "--scale", 10, "--out", base / "g")
    bfs_cli("run", base / "g", "--algorithm", "seq-csr", "--roots", 4, "--out", base / "ref")
    return base / "g", [tuple(r[k] for k in KEY) for r in searches(base / "ref")]


def test_every_searcher_class_is_a_searcher():
    """Each class of a registered module that searches inherits the protocol (the harness
    reads its attributes, never probes for them)."""
    found = []
    for spec in ALGORITHMS.values():
        for module_name in spec.modules.values():
            module = importlib.import_module(module_name)
            for name, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module_name and callable(getattr(cls, "search", None)):
                    assert issubclass(cls, Searcher), f"{module_name}.{name}"
                    found.append(name)
    assert {"SeqCsr", "SeqList", "Fu2D", "Fu2DGpu", "Racherla1D", "MerrillSearcher",
            "MerrillDoSearcher", "CupyBaseline", "HybridSearcher"} <= set(found)


def test_generated_run_is_the_graph_dirs_run(kron10, tmp_path):
    g, reference = kron10
    run = tmp_path / "run"
    bfs_cli("run", "--generate", GENERATE, "--algorithm", "seq-csr", "--roots", 4,
            "--out", run)
    assert [tuple(r[k] for k in KEY) for r in searches(run)] == reference
    info = json.loads((run / "run.json").read_text())
    graph = info["graph"]
    assert graph["generated"] == "kronecker:scale=10,edgefactor=16,seeds=2:3,version=3.0"
    assert (graph["name"], graph["n_vertices"], graph["n_edges"]) == ("kron-s10-e16", 1024,
                                                                       16384)
    assert info["measurements"]["n_validated"] == 4
    assert info["measurements"]["timing"].startswith("host clock")
    # bfs validate generates the graph again; --graph reads a directory instead
    assert "valid (1/1" in bfs_cli("validate", run).stdout
    assert "valid (1/1" in bfs_cli("validate", run, "--graph", g).stdout
    bfs_cli("report", "table", "graphs", run, "--out", tmp_path / "t")


def test_bfs_validate_finds_a_wrong_saved_tree_by_the_rules(kron10, tmp_path):
    """A saved search whose tree is wrong (a vertex given the root as its parent, two levels
    up), its file intact: `bfs validate` exits 1 naming the vertex, and its report says which
    search failed; a run over an in-place graph likewise (the graph generated again)."""
    g, _ = kron10
    for source in ([g], ["--generate", "kronecker:scale=10,edgefactor=16"]):
        run = tmp_path / f"run-{len(source)}"
        bfs_cli("run", *source, "--algorithm", "seq-csr", "--roots", 2, "--out", run)
        v, root = plant_parent(run)
        out = bfs_cli("validate", run, "--report", tmp_path / "r.json", check=False)
        assert out.returncode == 1 and "INVALID (0/1 saved searches valid)" in out.stdout
        report = json.loads((tmp_path / "r.json").read_text())
        assert not report["valid"] and report["searches"][0]["root"] == root
        assert f"vertex {v}" in report["searches"][0]["message"] \
            or f"[{v}]" in report["searches"][0]["message"], report


def test_unvalidated_searches_are_recorded_and_reported(kron10, tmp_path):
    g, reference = kron10
    run = tmp_path / "run"
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", 4, "--validate", "first",
            "--out", run)
    rows = searches(run)
    assert [r["valid"] for r in rows] == [True, None, None, None]
    # nedge, depth and reach of the unvalidated ones counted from their levels: the same
    assert [tuple(r[k] for k in KEY) for r in rows] == reference
    info = json.loads((run / "run.json").read_text())
    assert info["valid"] and info["parameters"]["validate"] == "first"
    assert info["measurements"]["n_validated"] == 1
    bfs_cli("report", "table", "graphs", run, "--out", tmp_path / "t")
    assert "kron-s10-e16" in (tmp_path / "t.md").read_text()
    # run directories after --out too (argparse leaves them over): the same run twice is a
    # point of two repeats
    bfs_cli("report", "table", "graphs", run, "--out", tmp_path / "u", run)
    import csv
    with open(tmp_path / "u.csv") as table:
        assert [row["repeats"] for row in csv.DictReader(table)] == ["2"]
    wrong = bfs_cli("report", "table", "graphs", "--out", tmp_path / "v", run, "--rows", "2",
                    check=False)
    assert wrong.returncode == 2 and "unrecognized arguments:" in wrong.stderr \
        and wrong.stderr.rstrip().endswith("--rows 2")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's clear_refs")
def test_host_memory_peak_starts_again():
    from bfs.harness import envinfo
    block = np.ones(2**25)   # 256 MiB, touched
    high = envinfo.host_memory_peak()
    del block
    assert envinfo.reset_host_memory_peak()
    assert envinfo.host_memory_peak() <= high - 200 * 2**20


def test_cpu_lists_read_and_write_as_the_kernel_writes_them():
    from bfs.harness import envinfo
    assert envinfo.parse_cpulist("0-3,8,10-11\n") == {0, 1, 2, 3, 8, 10, 11}
    assert envinfo.format_cpulist({11, 10, 8, 3, 2, 1, 0}) == "0-3,8,10-11"
    assert envinfo.parse_cpulist(envinfo.format_cpulist({5})) == {5}


BIND = """
import json, os, sys
from pathlib import Path
from bfs.harness import envinfo
devices, mode = Path(sys.argv[1]), sys.argv[2]
before = os.sched_getaffinity(0)
narrowed = envinfo.bind_near_gpu("00000000:1B:00.0", mode, devices)
print(json.dumps({"narrowed": narrowed, "before": sorted(before),
                  "after": sorted(os.sched_getaffinity(0)),
                  "rank": envinfo.rank_info()}))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity") or
                    len(__import__("os").sched_getaffinity(0)) < 2, reason="needs 2 cores")
@pytest.mark.parametrize("mode", ["gpu", "inherit"])
def test_a_gpu_rank_binds_to_its_gpus_numa_node_when_asked(tmp_path, mode):
    """BFS_CPU_AFFINITY=gpu narrows a rank's cores to those of its GPU's NUMA node (sysfs's
    local_cpulist of the GPU's PCI address, CUDA's spelling of it lower-cased, a domain of 8
    digits cut to 4); inherit keeps them; run.json's rank record names both lists."""
    import os
    import subprocess
    import sys
    from bfs.harness import envinfo
    first = min(os.sched_getaffinity(0))
    gpu = tmp_path / "0000:1b:00.0"
    gpu.mkdir()
    (gpu / "local_cpulist").write_text(f"{first},4096-4100\n")
    out = subprocess.run([sys.executable, "-c", BIND, str(tmp_path), mode], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(out.stdout)
    assert seen["narrowed"] == (mode == "gpu")
    assert seen["after"] == ([first] if mode == "gpu" else seen["before"])
    assert seen["rank"]["gpu_numa_cpus"] == f"{first},4096-4100"
    assert envinfo.parse_cpulist(seen["rank"]["cpus"]) == set(seen["after"])


def test_an_unknown_affinity_mode_is_refused_and_a_gpu_without_sysfs_leaves_the_cores(tmp_path):
    import os
    from bfs.harness import envinfo
    with pytest.raises(BfsError, match="BFS_CPU_AFFINITY='near': expected one of inherit, gpu"):
        envinfo.bind_near_gpu("0000:1B:00.0", "near", tmp_path)
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    assert envinfo.bind_near_gpu("0000:1B:00.0", "gpu", tmp_path) is False
    assert (os.sched_getaffinity(0) if before is not None else None) == before


def test_host_memory_peak_is_the_runs_own(tmp_path):
    """run.json's host_memory_peak_bytes grows with the graph a run holds (scale 17's edge list
    alone is 16 MiB), and starts from the run, not from what the process held before."""
    # a first run fills Numba's cache: a run that compiles holds the compiler's hundreds of MiB,
    # more than scale 17's edge list, so with a cold cache the scale-8 run peaked higher
    bfs_cli("run", "--generate", "kronecker:scale=8", "--algorithm", "seq-csr", "--roots", 1,
            "--validate", "none", "--out", tmp_path / "warm")
    peaks = {}
    for scale in (8, 17):
        run = tmp_path / f"s{scale}"
        bfs_cli("run", "--generate", f"kronecker:scale={scale}", "--algorithm", "seq-csr",
                "--roots", 1, "--validate", "none", "--out", run)
        m = json.loads((run / "run.json").read_text())["measurements"]
        (peaks[scale],) = m["host_memory_peak_bytes"]
        directed = 2 * 16 * 2**scale   # with self-loops, which the per-edge figure leaves out
        assert 1 <= m["host_bytes_per_directed_edge"] / (peaks[scale] / directed) < 1.1
    assert peaks[17] - peaks[8] >= 16 * 2**20, peaks


@pytest.mark.mpi
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("algorithm,validate,grid,placed", [
    ("2d", "every", None, [2, 2]), ("2d", "first", "1x4", [1, 4]), ("1d", "none", "2x2", [4, 1])])
def test_generated_in_place_on_4_ranks(kron10, tmp_path, algorithm, validate, grid, placed):
    """Each rank generates its share and routes it to the blocks: the squarest grid (2d: 2x2,
    1d: 4x1) or the one --grid names (the shape a workflow run id gives; 1d: R*C x 1)."""
    _, reference = kron10
    run = tmp_path / "run"
    bfs_cli("run", "--generate", GENERATE, "--algorithm", algorithm, "--roots", 4,
            "--validate", validate, *(["--grid", grid] if grid else []), "--out", run, ranks=4)
    assert [tuple(r[k] for k in KEY) for r in searches(run)] == reference
    info = json.loads((run / "run.json").read_text())
    assert info["partition"]["grid"] == placed
    assert info["partition"]["kind"] == ALGORITHMS[algorithm].partition
    assert info["measurements"]["n_validated"] == {"every": 4, "first": 1, "none": 0}[validate]
    assert info["measurements"]["placement"]["route_s"] >= 0
    assert len(info["measurements"]["host_memory_peak_bytes"]) == 4   # one a rank
    bfs_cli("validate", run)


@pytest.mark.parametrize("args,message", [
    (["GRAPH", "--generate", GENERATE], "not both"),
    ([], "not neither"),
    (["--generate", "kronecker:scale=ten"], "scale='ten' is not an integer"),
    (["--generate", "kronecker:scale=10,colour=red"], "unknown key 'colour'"),
    (["--generate", "kronecker:scale=10,seeds=2"], "seeds='2' is not two integers"),
    (["--generate", "kronecker:edgefactor=8"], "scale=S is required"),
    (["--generate", "rmat:scale=10"], "unknown graph kind 'rmat'"),
    (["GRAPH", "--grid", "1x2"], "--grid RxC places a generated graph"),
])
def test_input_errors_name_the_problem(kron10, tmp_path, args, message):
    g, _ = kron10
    args = [g if a == "GRAPH" else a for a in args]
    proc = bfs_cli("run", *args, "--algorithm", "seq-csr", "--out", tmp_path / "r",
                   check=False)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "r").exists()


def test_parse_generate_defaults():
    assert parse_generate("kronecker:scale=12") == GeneratedKronecker(12, 16, (2, 3), "3.0")
    g = parse_generate("kronecker:scale=12,edgefactor=8,seeds=0x5:7,version=2.1.4")
    assert g == GeneratedKronecker(12, 8, (5, 7), "2.1.4")
    assert parse_generate(g.spec) == g
    with pytest.raises(BfsError, match="version='4'"):
        parse_generate("kronecker:scale=12,version=4")


def test_bench_writes_run_dirs_the_report_reads(kron10, tmp_path):
    _, reference = kron10
    out = tmp_path / "b.json"
    proc = bfs_cli("bench", "--backend", "cpu", "--scales", 10, "--algorithms",
                   "seq-csr,seq-list", "--roots", 4, "--validate", "first", "--out", out)
    summary = json.loads(out.read_text())
    assert summary == json.loads((tmp_path / "b" / "bench.json").read_text())
    rec = summary["records"][0]
    assert rec["graph"] == "kron-s10-e16" and set(rec["algorithms"]) == {"seq-csr", "seq-list"}
    for name, a in rec["algorithms"].items():
        run = tmp_path / "b" / "kron-s10-e16" / name
        assert a["run_dir"] == str(run) and a["valid"] and a["n_validated"] == 1
        rows = searches(run)
        assert [tuple(r[k] for k in KEY) for r in rows] == reference
        # us/level: each search's time over its levels (0 to its depth), the median
        want = np.median([r["time_s"] / (r["depth"] + 1) * 1e6 for r in rows])
        assert a["level_us_median"] == pytest.approx(want) and want > 0
    head, *_, last = proc.stdout.splitlines()
    assert head.split()[-1] == "us/level"
    assert "seq-list" in last and float(last.split()[-1]) == pytest.approx(
        rec["algorithms"]["seq-list"]["level_us_median"], abs=0.006)   # the table comes last
    bfs_cli("report", "table", "graphs", *sorted((tmp_path / "b").glob("*/*")),
            "--out", tmp_path / "t")
    table = (tmp_path / "t.md").read_text()
    assert "seq-csr" in table and "seq-list" in table


def test_bench_baseline_default_named_or_none():
    """--baseline: by default cupy-baseline on the GPU without --grid (none otherwise), run
    first unless listed; a named variant on either backend; none: no baseline at all."""
    from bfs.harness.bench import BASELINE, baseline_of, bench_variants
    assert baseline_of("gpu", None, None) == BASELINE
    assert baseline_of("gpu", (1, 2), None) is None and baseline_of("cpu", None, None) is None
    assert baseline_of("gpu", None, "none") is None
    assert baseline_of("cpu", (2, 2), "seq-list") == "seq-list"
    assert bench_variants(["merrill"], BASELINE) == [BASELINE, "merrill"]
    assert bench_variants(["merrill", BASELINE], BASELINE) == ["merrill", BASELINE]
    assert bench_variants(["merrill"], None) == ["merrill"]
    assert bench_variants(["2d"], "merrill@expand=v0") == ["merrill@expand=v0", "2d"]


def test_bench_baseline_on_the_cpu(tmp_path, capsys):
    """bench --baseline NAME runs that variant first and measures the table against it;
    --baseline none leaves the table without one; an unknown one is refused before any graph."""
    from bfs.cli import main
    out = tmp_path / "b.json"
    args = ["bench", "--backend", "cpu", "--scales", "8", "--algorithms", "seq-csr",
            "--roots", "2", "--validate", "none"]
    assert main([*args, "--baseline", "seq-list", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["algorithms"] == ["seq-list", "seq-csr"] and summary["baseline"] == "seq-list"
    assert list(summary["records"][0]["algorithms"]) == ["seq-list", "seq-csr"]
    line = [x for x in capsys.readouterr().out.splitlines() if " seq-csr " in x][0]
    assert "nan" not in line.split()[4:6]     # base GTEPS and the ratio against it
    assert float(line.split()[9]) > 0           # B/edge: on the CPU, the host's peak per edge
    assert main([*args, "--baseline", "none", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["algorithms"] == ["seq-csr"] and summary["baseline"] is None
    capsys.readouterr()
    assert main([*args, "--baseline", "no-such-bfs", "--out", str(tmp_path / "x.json")]) == 1
    assert "no-such-bfs" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def test_bench_summary_is_written_atomically(tmp_path, monkeypatch):
    """bench's JSON goes through bfs.atomic: a write that fails leaves the summary written
    before it whole, and no temporary beside it."""
    from pathlib import Path

    from bfs.harness import bench
    path = tmp_path / "bench.json"
    bench._write_summary(path, {"records": [1]})
    before = path.read_text()

    def broken(self, text, *a, **k):
        Path.write_bytes(self, text[:5].encode())
        raise OSError("disk full")
    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(OSError, match="disk full"):
        bench._write_summary(path, {"records": [1, 2]})
    monkeypatch.undo()
    assert path.read_text() == before and json.loads(before) == {"records": [1]}
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]


@pytest.mark.mpi
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec on PATH")
def test_bench_grid_on_cpu_ranks(kron10, tmp_path):
    """bench --grid runs the distributed algorithms through the same harness; variants are
    series of their own in the report."""
    _, reference = kron10
    bfs_cli("bench", "--backend", "cpu", "--grid", "2x2", "--scales", 10, "--algorithms",
            "2d,2d@exchange=wave,1d", "--roots", 4, "--out", tmp_path / "b", ranks=4)
    rec = json.loads((tmp_path / "b" / "bench.json").read_text())["records"][0]
    assert {n: a["grid"] for n, a in rec["algorithms"].items()} == \
        {"2d": "2x2", "2d@exchange=wave": "2x2", "1d": "4x1"}
    for name in rec["algorithms"]:
        run = tmp_path / "b" / "kron-s10-e16" / name
        assert [tuple(r[k] for k in KEY) for r in searches(run)] == reference
    bfs_cli("report", "table", "graphs", *sorted((tmp_path / "b").glob("*/*")),
            "--out", tmp_path / "t")
    assert "2d@exchange=wave" in (tmp_path / "t.md").read_text()


def test_generated_graph_takes_a_name_that_leaves_its_edges_alone():
    """name= (the workflow's graph name) goes into run.json's graph and the spec `bfs validate`
    reads back; the edges are those of the unnamed graph."""
    named = parse_generate("kronecker:scale=10,edgefactor=8,name=kron-s10")
    assert named.meta(0.0).name == "kron-s10" and parse_generate(named.spec) == named
    assert parse_generate("kronecker:scale=10,edgefactor=8").meta(0.0).name == "kron-s10-e8"
    for a, b in zip(named.host_edges(), GeneratedKronecker(10, 8).host_edges()):
        assert (a == b).all()
    with pytest.raises(BfsError, match="name='a b'"):
        parse_generate("kronecker:scale=10,name=a b")


def test_one_gpu_search_state_and_resort_within_the_memory_target():
    """merrill-do at scale 28 on one 80 GB GPU (issue 35's target: 4.5 B a directed edge + 32 B
    a vertex, 44 GiB): the queues hold the vertices with an edge (121,162,769 were reached from
    one root at scale 28, BENCHMARKS.md), so the CSR, the search state and the head copy fit
    the target where queues of every vertex did not; the in-place re-sort of the rows hubs
    first sorts half the rows a bucket (2^27 entries at scale 28, where 2^28 made the run's
    peak, 47.2 GiB), never less than 2^20 nor more than RESORT_LIMIT."""
    from bfs.algorithms import merrill
    from bfs.build import memory
    n, nnz, active = 2 ** 28, 2 ** 33, 121_162_769
    target = 4.5 * nnz + 32 * n
    csr = 4 * nnz + 8 * (n + 1)
    head = 4 * n
    assert csr + merrill.search_state_bytes(n, nnz, active + 1) + head <= target
    assert csr + merrill.search_state_bytes(n, nnz) + head > target     # every vertex queued
    assert merrill.resort_bucket(n) == 2 ** 27
    assert merrill.resort_bucket(3000) == 2 ** 20
    assert merrill.resort_bucket(2 ** 31) == memory.RESORT_LIMIT == 2 ** 28


def test_grid_memory_model_names_the_largest_scale_a_grid_holds(monkeypatch):
    """A GPU grid run chooses, before generation, how each rank builds its block: the routed
    block whole where it fits, else routed again a chunk at a time; and is refused where even
    that does not fit, naming the largest scale this grid holds either way. On 80 GB GPUs
    (78 GiB free), 2d-do's scale 27 fits 1x2 whole and 28 streamed only; 29 not at all (the
    whole model is a lower bound of the measured pool peaks: 48 B an entry at scale 26,
    BENCHMARKS.md)."""
    from bfs import device
    from bfs.build import memory
    gib = 2 ** 30
    s26_1x2 = memory.grid_block_bytes(2 ** 26, 2 ** 30, 1, 2, csc=True)
    assert s26_1x2 < 48 * 2 ** 30                    # under the measured peak (2^30 entries)
    assert memory.grid_block_bytes(2 ** 26, 2 ** 30, 1, 2, csc=False) < s26_1x2
    # streamed: the CSR and CSC (8 B an entry) and the search state, no routed block beside
    s28 = memory.grid_block_bytes(2 ** 28, 2 ** 32, 1, 2, csc=True, streamed=True)
    assert 35 * gib < s28 < memory.grid_block_bytes(2 ** 28, 2 ** 32, 1, 2, csc=True) / 2
    assert [memory.largest_grid_scale(78 * gib, 16, r, c, True, streamed)
            for r, c in ((1, 2), (1, 4), (2, 4)) for streamed in (False, True)] \
        == [27, 28, 28, 29, 29, 30]
    monkeypatch.setattr(device, "free_memory", lambda: (78 * gib, 80 * gib))
    build = memory.grid_build
    assert build("2d-do", 2 ** 27, 2 ** 31, 1, 2) == "device"        # fits whole
    assert build("2d-do", 2 ** 27, 2 ** 31, 1, 2, "stream") == "stream"
    assert build("2d-do", 2 ** 28, 2 ** 32, 1, 2) == "stream"        # auto: only streamed
    with pytest.raises(BfsError) as e:
        build("2d-do", 2 ** 28, 2 ** 32, 1, 2, "device")
    msg = str(e.value)
    assert "2d-do on a 1x2 grid (268435456 vertices, 4294967296 edges, the routed block " \
        "whole)" in msg
    assert "78.00 GiB free" in msg and "largest Kronecker scale that fits is 27 on this 1x2 " \
        "grid with the routed block whole, 28 routed a chunk at a time" in msg, msg
    with pytest.raises(BfsError, match=r"a chunk at a time\)(.|\n)* fits is 27 on this 1x2"):
        build("2d-do", 2 ** 29, 2 ** 33, 1, 2)
    with pytest.raises(BfsError, match="--edge-list 'disk': choose one of auto, device, "
                                       "stream"):
        build("2d", 2 ** 20, 2 ** 24, 1, 2, "disk")


def test_the_csc_alone_holds_scale_30_on_four_gpus(monkeypatch):
    """2d-do with the block's CSC alone (adjacency=csc): the model keeps 4 bytes an entry and
    the column range's state, so scale 30 fits 1x4 and 2x2 on 80 GB GPUs streamed (both
    structures: 28 and 29 at most) and its bytes in use during the search (the CSC, its
    offsets, 44 B a column vertex, 4 row bitmaps: 50 GiB on 1x4) sit under the measured 54
    GiB (BENCHMARKS.md, nvidia-h100-x4) and under the issue's 8 B an entry + 16 a vertex; the
    refusal names the largest scale of the adjacency asked for."""
    from bfs import device
    from bfs.build import memory
    gib, n, m = 2 ** 30, 2 ** 30, 2 ** 34
    entries = 2 * m // 4
    search = memory.grid_block_bytes(n, m, 1, 4, True, True, csr=False)
    assert 4 * entries + 8 * n // 4 < search <= 54 * gib
    assert search <= 8 * entries + 16 * n // 4
    assert memory.grid_block_bytes(n, m, 1, 4, True, True) == 112 * gib   # both structures
    assert [memory.largest_grid_scale(78 * gib, 16, r, c, True, True, csr)
            for r, c in ((1, 4), (2, 2), (1, 2)) for csr in (True, False)] \
        == [29, 30, 29, 30, 28, 29]
    monkeypatch.setattr(device, "free_memory", lambda: (78 * gib, 80 * gib))
    assert memory.grid_build("2d-do", n, m, 1, 4, "auto", "csc") == "stream"
    with pytest.raises(BfsError, match="fits is 28 on this 1x4 grid with the routed block "
                                       "whole, 29 routed a chunk at a time"):
        memory.grid_build("2d-do", n, m, 1, 4)
    with pytest.raises(BfsError, match="fits is 28 on this 1x4 grid with the routed block "
                                       "whole, 30 routed a chunk at a time"):
        memory.grid_build("2d-do", 2 * n, 2 * m, 1, 4, "auto", "csc")


MEASURED = Path(__file__).resolve().parents[1] / "bench/results/h100x4-issue49-hubs"


@pytest.mark.parametrize("run", ["s26-1x4", "s28-1x1", "s29-1x2", "s30-2x2"])
def test_the_csc_alone_model_against_the_peaks_measured_at_four_scales(run):
    """The byte model of 2d-do adjacency=csc (grid_block_bytes, csr False) against the device
    pool peaks its benches recorded on nvidia-h100-x4 (bench.json, committed with BENCHMARKS.md,
    scales 26 to 30, whole and streamed blocks): a lower bound every rank's peak is above, by
    at most a third (the pool's rounding and the sort's buffers it leaves out)."""
    from bfs.build import memory
    record = json.loads((MEASURED / run / "bench.json").read_text())["records"][0]
    name, result = next((k, v) for k, v in record["algorithms"].items() if "adjacency=csc" in k)
    rows, cols = (int(x) for x in result["grid"].split("x"))
    model = memory.grid_block_bytes(record["n_vertices"], record["n_edges"], rows, cols, True,
                                    result["placement"]["edge_list"] == "streamed", csr=False)
    peaks = [p["pool"] for p in result["device_memory_peak_bytes"]]
    assert len(peaks) == rows * cols and result["valid"], (run, name)
    assert all(model <= p <= 4 * model // 3 for p in peaks), (run, model, peaks)


def test_streamed_block_chunks_cover_each_share_in_as_many_steps_on_every_rank():
    """A block routed a chunk at a time: each rank's steps cover exactly its share, in order,
    and every rank takes as many steps (each is a collective all-to-all), empty ones where its
    share is the shorter."""
    from bfs.build.routing import chunk_ranges, share
    for m, p, chunk in ((1000, 3, 64), (7, 4, 2), (2 ** 20, 2, 2 ** 18), (5, 8, 1), (0, 2, 4)):
        steps = [chunk_ranges(m, r, p, chunk) for r in range(p)]
        assert len({len(s) for s in steps}) == 1
        for r, ranges in enumerate(steps):
            lo, hi = share(m, r, p)
            assert ranges[0][0] == lo and ranges[-1][1] == hi
            assert all(a <= b <= a + chunk for a, b in ranges)
            assert all(b == a2 for (_, b), (a2, _) in zip(ranges, ranges[1:]))


def test_device_memory_peak_names_the_stage_that_first_saw_it(monkeypatch):
    """bfs.device.memory_peak over a pool that grows, stays and is handed back: the largest
    size, the bytes its arrays held then and the function that noted it first (run.json's
    device_memory_peak_bytes); reset starts again. CuPy's pool and runtime are faked."""
    import types
    from bfs import device
    state = {"total": 0, "used": 0}
    pool = types.SimpleNamespace(total_bytes=lambda: state["total"],
                                 used_bytes=lambda: state["used"],
                                 free_all_blocks=lambda: state.update(total=state["used"]))
    fake = types.SimpleNamespace(
        get_default_memory_pool=lambda: pool,
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(
            memGetInfo=lambda: (80 - state["total"] - 1, 80))))
    monkeypatch.setattr(device, "cupy", lambda: fake)
    device.memory_peak(reset=True)

    def sort_stage():
        state.update(total=23, used=19)
        device.note_memory()

    def release_stage():            # sees the same size, then hands the cache back
        device.free_pool()

    sort_stage()
    release_stage()
    state.update(total=21, used=21)
    peak = device.memory_peak()
    assert (peak["pool"], peak["in_use"], peak["device_used"]) == (23, 19, 24)
    assert peak["stage"].startswith("test_device_memory_peak_names_the_stage_that_first_saw_it"
                                    ".<locals>.sort_stage:")
    assert device.memory_peak(reset=True)["pool"] == 23
    assert device.memory_peak()["pool"] == 21 and device.memory_peak()["in_use"] == 21
