"""Multi-GPU 2d, 2d-do and 1d: NCCL exchanges, in-place generation and routing, distributed GPU
validation, and `bfs run` / `bfs bench --grid` on 2 ranks (and grids of 4 where there are 4
GPUs). Marked gpu; skipped without 2 GPUs and mpiexec. On a 2-GPU machine: python3 -m pytest -q
-m gpu tests/test_gpu_grid.py
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, bfs_cli, searches

try:
    import cupy as cp
    _N_GPUS = cp.cuda.runtime.getDeviceCount()
except Exception:   # ImportError, or a CUDA runtime/driver error
    _N_GPUS = 0

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_N_GPUS < 2 or shutil.which("mpiexec") is None,
                                 reason=f"needs 2 GPUs and mpiexec ({_N_GPUS} GPUs)")]
GRIDS = [(1, 2), (2, 1)]
# NVLink multicast stays off wherever NCCL starts; Open MPI may run as root in containers
ENV = {"NCCL_NVLS_ENABLE": "0", "OMPI_ALLOW_RUN_AS_ROOT": "1",
       "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "PYTHONPATH": str(ROOT)}


def mpi_check(check, rows, cols):
    proc = subprocess.run(["mpiexec", "-n", str(rows * cols), sys.executable,
                           str(ROOT / "tests" / "gpu_grid_checks.py"), check, str(rows),
                           str(cols)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **ENV}, cwd=ROOT)
    assert proc.returncode == 0 and f"ok {check} {rows}x{cols}" in proc.stdout, \
        proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: f"{g[0]}x{g[1]}")
@pytest.mark.parametrize("check", ["exchange", "route", "search", "search_do", "search_csc",
                                   "search_semiring", "faults", "streamed", "share"])
def test_grid_checks(check, grid):
    out = mpi_check(check, *grid)
    if check == "faults":   # every planted fault was named, on each rank
        assert out.count("fault ") == 8


@pytest.mark.skipif(_N_GPUS < 4, reason=f"needs 4 GPUs ({_N_GPUS} GPUs)")
@pytest.mark.parametrize("grid", [(1, 4), (2, 2), (4, 1)], ids=lambda g: f"{g[0]}x{g[1]}")
@pytest.mark.parametrize("check", ["exchange", "search", "search_do", "search_csc", "share"])
def test_grid_checks_four_gpus(check, grid):
    """The same checks on a grid of one rank per GPU of a 4-GPU machine: nothing assumes two."""
    mpi_check(check, *grid)


def test_1d_checks():
    mpi_check("search1d", 2, 1)


@pytest.mark.parametrize("comm", ["nccl", "mpi"])
def test_run_two_gpus(tmp_path, comm):
    """bfs run on a 1x2 partition: every search validated on the GPUs, the same depths,
    reached counts and nedge as the CPU backend."""
    graph, part = tmp_path / "g", tmp_path / "p"
    bfs_cli("generate", "kronecker", "--scale", 12, "--out", graph)
    bfs_cli("partition", graph, "--grid", "1x2", "--out", part)
    gpu, cpu = tmp_path / "gpu", tmp_path / "cpu"
    bfs_cli("run", part, "--algorithm", "2d", "--backend", "gpu", "--comm", comm,
            "--roots", 6, "--out", gpu, ranks=2, env=ENV)
    bfs_cli("run", part, "--algorithm", "2d", "--backend", "cpu", "--roots", 6, "--out", cpu,
            ranks=2, env=ENV)
    info = json.loads((gpu / "run.json").read_text())
    assert info["valid"] and info["parameters"]["comm"] == comm
    assert "grid_gpu" in info["validation"]
    key = [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(gpu)]
    assert key == [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(cpu)]
    # 2d-do on the GPUs over the same partition: bottom-up from level 1 (alpha huge), validated
    # on the GPUs, the same searches
    do = tmp_path / "do"
    bfs_cli("run", part, "--algorithm", "2d-do", "--backend", "gpu", "--comm", comm,
            "--alpha", 1e9, "--roots", 6, "--out", do, ranks=2, env=ENV)
    info = json.loads((do / "run.json").read_text())
    assert info["valid"] and info["parameters"]["comm"] == comm
    assert info["parameters"]["alpha"] == 1e9 and "grid_gpu" in info["validation"]
    assert key == [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(do)]
    # 1d on the GPUs over a 1d partition of the same graph, against the same CPU searches
    part1d, gpu1d = tmp_path / "p1d", tmp_path / "gpu1d"
    bfs_cli("partition", graph, "--1d", 2, "--out", part1d)
    bfs_cli("run", part1d, "--algorithm", "1d", "--backend", "gpu", "--comm", comm,
            "--roots", 6, "--out", gpu1d, ranks=2, env=ENV)
    info = json.loads((gpu1d / "run.json").read_text())
    assert info["valid"] and info["parameters"]["comm"] == comm
    assert "grid_gpu" in info["validation"]
    assert key == [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(gpu1d)]


@pytest.mark.parametrize("algorithm", ["2d", "1d", "2d-do"])
def test_run_generate_two_gpus(tmp_path, algorithm):
    """bfs run --generate on 2 ranks: each GPU generates its share and routes it to the blocks;
    the same searches as the partition's run of the same graph."""
    graph, part, ref, run = (tmp_path / x for x in ("g", "p", "ref", "run"))
    bfs_cli("generate", "kronecker", "--scale", 12, "--out", graph)
    kind = ["--1d", 2] if algorithm == "1d" else ["--grid", "1x2"]
    bfs_cli("partition", graph, *kind, "--out", part)
    bfs_cli("run", part, "--algorithm", algorithm, "--backend", "gpu", "--roots", 4,
            "--out", ref, ranks=2, env=ENV)
    bfs_cli("run", "--generate", "kronecker:scale=12", "--algorithm", algorithm, "--backend",
            "gpu", "--roots", 4, "--out", run, ranks=2, env=ENV)
    # the blocks routed again a chunk at a time for each pass of their build: the same graph
    bfs_cli("run", "--generate", "kronecker:scale=12", "--algorithm", algorithm, "--backend",
            "gpu", "--roots", 4, "--edge-list", "stream", "--out", tmp_path / "streamed",
            ranks=2, env=ENV)
    key = ("root", "depth", "reached", "nedge")
    for out in (run, tmp_path / "streamed"):
        assert [tuple(r[k] for k in key) for r in searches(out)] == \
            [tuple(r[k] for k in key) for r in searches(ref)]
    info = json.loads((run / "run.json").read_text())
    assert info["partition"]["grid"] == ([2, 1] if algorithm == "1d" else [1, 2])
    assert "grid_gpu" in info["validation"]
    assert info["measurements"]["timing"].endswith("the maximum over the ranks")
    assert info["measurements"]["placement"]["edge_list"] == "whole"
    streamed = json.loads((tmp_path / "streamed" / "run.json").read_text())
    assert streamed["valid"] and streamed["measurements"]["placement"]["edge_list"] == "streamed"


def test_bench_grid_two_gpus(tmp_path):
    import pyarrow.parquet as pq
    out = tmp_path / "bench.json"
    bfs_cli("bench", "--backend", "gpu", "--grid", "1x2", "--scales", 12,
            "--algorithms", "2d,2d@comm=mpi,1d,2d-do", "--roots", 4, "--out", out,
            ranks=2, env=ENV)
    summary = json.loads(out.read_text())
    assert summary["grid"] == [1, 2] and summary["valid"]
    rec = summary["records"][0]
    assert rec["algorithms"]["1d"]["grid"] == "2x1"    # 1d runs on the P x 1 grid
    assert rec["algorithms"]["2d-do"]["grid"] == "1x2"
    for name in ("2d", "2d@comm=mpi", "1d", "2d-do"):
        a = rec["algorithms"][name]
        assert a["valid"] and a["n_validated"] == 4 and "placement" in a
        levels = pq.read_table(Path(a["run_dir"]) / "levels.parquet").to_pylist()
        assert {r["rank"] for r in levels} == {0, 1}
    assert rec["algorithms"]["2d"]["comm"] == "nccl"
    assert rec["algorithms"]["2d@comm=mpi"]["comm"] == "mpi"
    # the run directories are the report's like any other
    bfs_cli("report", "table", "graphs", *sorted((tmp_path / "bench").glob("*/*")),
            "--out", tmp_path / "t")
