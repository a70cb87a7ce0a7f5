"""The Snakemake workflow on a tiny config in a temporary directory: dry run, lint, full run,
tables equal to the runs' own searches, figures, report, nothing left to do afterwards."""
import fcntl
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from helpers import ROOT, SNAP_DIR, load_experiment_plan, planned_jobs

PLAN = load_experiment_plan()   # workflow/experiment_plan.py

pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None or shutil.which("mpiexec") is None,
                                reason="needs snakemake and mpiexec")

GNUTELLA = SNAP_DIR / "p2p-Gnutella09.txt"


def tiny_config(url: str) -> dict:
    return {
        "results": "results",
        "roots": 4,
        "save_parents": 1,
        "graphs": {
            "kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8},
                          "kron-s9": {"scale": 9, "edgefactor": 8}},
            "snap": {"gnutella": {"url": url,
                                  "sha256": hashlib.sha256(GNUTELLA.read_bytes()).hexdigest()}},
        },
        "experiments": {
            "strong_scaling": {"graph": "kron-s9", "algorithm": "2d", "ranks": [1, 2],
                               "reference": "seq-csr"},
            "weak_scaling": {"algorithm": "2d", "repeats": 2,
                             "points": [{"ranks": 1, "graph": "kron-s8"},
                                        {"ranks": 2, "graph": "kron-s9"}]},
            "real_graphs": {"graphs": ["gnutella"], "algorithms": ["seq-csr", "2d"], "ranks": 2},
            "implementations": {"graphs": ["kron-s8", "kron-s9"],
                                "algorithms": ["seq-list", "1d"], "ranks": 2},
            "small_frontier_sweep": {"graphs": ["kron-s8"], "ranks": 2,
                                     "small_frontier": [0, 100]},
        },
        "comparisons": {"2d-vs-seq-csr": {"a": "gnutella/seq-csr/cpu-serial-default",
                                          "b": "gnutella/2d/cpu-1x2-scan"}},
    }


@pytest.fixture(scope="module")
def loopback_server():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SNAP_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def snakemake(workdir: Path, *args, check=True, env=None):
    cmd = ["snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir),
           "--configfile", str(workdir / "config.yaml"), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stderr[-5000:]}")
    return proc


# The tests of one finished workflow run share it: under pytest -n (xdist) their group keeps
# them on one worker, which makes the run once.
@pytest.fixture(scope="module")
def finished(tmp_path_factory, loopback_server):
    work = tmp_path_factory.mktemp("workflow")
    config = tiny_config(f"{loopback_server}/{GNUTELLA.name}")
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "-c", "2")
    return work, config


def test_dry_run_lists_every_stage(tmp_path, loopback_server):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(tiny_config(f"{loopback_server}/x")))
    out = snakemake(tmp_path, "-n").stdout
    for rule in ["kronecker", "snap_download", "snap_convert", "partition", "bfs_serial",
                 "bfs_mpi", "validate", "table", "figure"]:
        assert f"rule {rule}:" in out or f"{rule} " in out, rule


def test_lint_is_clean(tmp_path, loopback_server):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(tiny_config(f"{loopback_server}/x")))
    proc = snakemake(tmp_path, "--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def harmonic_gteps(run_dir: Path) -> float:
    t = pq.read_table(run_dir / "searches.parquet").to_pandas()
    return len(t) / (t.time_s / t.nedge).sum() / 1e9


@pytest.mark.xdist_group("finished_workflow")
def test_tables_equal_the_runs(finished):
    work, _ = finished
    tables = work / "results" / "tables"
    strong = pd.read_csv(tables / "strong_scaling.csv")
    runs = work / "results" / "runs" / "kron-s9" / "2d"
    expected = {1: harmonic_gteps(runs / "cpu-1x1-scan"), 2: harmonic_gteps(runs / "cpu-1x2-scan")}
    rank_col = "ranks" if "ranks" in strong.columns else "GPUs"
    distributed = strong[strong["algorithm"] == "2d"]
    got = dict(zip(distributed[rank_col], distributed["GTEPS"]))
    for ranks, gteps in expected.items():
        assert np.isclose(got[ranks], gteps, rtol=1e-6), (ranks, got, expected)
    for name in ["weak_scaling", "real_graphs", "implementations", "kernel1", "source_lines",
                 "small_frontier"]:
        assert (tables / f"{name}.csv").stat().st_size > 0
        assert (tables / f"{name}.md").read_text().count("|") > 4
    sweep = pd.read_csv(tables / "small_frontier.csv")
    ones = sweep[sweep["algorithm"] == "1d"]
    assert sorted(ones["small frontier"]) == [0, 100]
    sf0 = work / "results" / "runs" / "kron-s8" / "1d" / "cpu-p2-sf0"
    got = ones.loc[ones["small frontier"] == 0, "GTEPS"].iloc[0]
    assert np.isclose(got, harmonic_gteps(sf0), rtol=1e-6)
    assert list(sweep.loc[sweep["small frontier"].isna(), "algorithm"]) == ["seq-csr"]
    lines = pd.read_csv(tables / "source_lines.csv")
    assert set(lines["algorithm"]) == {"seq-list", "1d"} and (lines["source lines"] > 10).all()


@pytest.mark.xdist_group("finished_workflow")
def test_figures_and_report(finished):
    work, _ = finished
    figures = work / "results" / "figures"
    for name in ["strong_scaling", "weak_scaling", "frontier", "comm_vs_compute", "teps_vs_scale",
                 "kernel1_vs_scale", "teps_vs_source_lines", "small_frontier"]:
        for ext in ["png", "svg"]:
            assert (figures / f"{name}.{ext}").stat().st_size > 1000, name
    compared = work / "results" / "comparisons" / "2d-vs-seq-csr"
    summary = pd.read_csv(compared / "summary.csv")
    assert list(summary["A"]) == ["seq-csr/cpu"] and list(summary["B"]) == ["2d/cpu/1x2"]
    assert summary.loc[0, "roots"] == 4 and (compared / "speedups.png").stat().st_size > 1000
    snakemake(work, "--report", str(work / "results" / "report.html"))
    html = (work / "results" / "report.html").read_text(errors="replace")
    assert "strong_scaling" in html and "Fu et al" in html
    assert "Comparisons" in html and "Paired comparison" in html and "per_root.csv" in html


@pytest.mark.xdist_group("finished_workflow")
def test_a_run_left_out_is_named_on_the_landing_page(finished, tmp_path):
    """--omit-from a run (a serial baseline too long for now) leaves out the tables that need
    it, not the landing page: that is made from the other runs and names the one left out, and
    the report opens on it (it opened on "No runs yet")."""
    work = tmp_path / "work"
    shutil.copytree(finished[0], work, symlinks=True)
    serial = "results/runs/kron-s8/seq-csr/cpu-serial-default"
    shutil.rmtree(work / serial)
    (work / "results/validation/kron-s8/seq-csr/cpu-serial-default.json").unlink()
    snakemake(work, "-c", "2", "--omit-from", serial)
    assert not (work / serial).exists()
    landing = json.loads((work / "results/report/landing.json").read_text())
    assert landing["left_out"] == [serial]
    assert landing["experiments"]["small_frontier_sweep"]["runs"] == 2   # its two 1d runs
    snakemake(work, "--report", str(work / "report.html"), "--omit-from", serial)
    html = (work / "report.html").read_text(errors="replace")
    assert "Left out" in html and serial in html and "No runs yet" not in html


@pytest.mark.xdist_group("finished_workflow")
def test_repeats_and_the_cost_reference_are_planned_and_reported(finished):
    """weak_scaling's repeats: 2 makes a -r2 run of each point, pooled in the table; the
    strong-scaling reference runs once per graph and names the COST."""
    work, _ = finished
    runs = work / "results" / "runs"
    assert (runs / "kron-s8" / "2d" / "cpu-1x1-scan-r2" / "run.json").is_file()
    assert (runs / "kron-s9" / "seq-csr" / "cpu-serial-default" / "run.json").is_file()
    weak = pd.read_csv(work / "results" / "tables" / "weak_scaling.csv")
    assert set(weak["repeats"]) == {2}
    strong = pd.read_csv(work / "results" / "tables" / "strong_scaling.csv")
    assert set(strong["COST reference"]) == {"seq-csr/cpu"}
    reference = harmonic_gteps(runs / "kron-s9" / "seq-csr" / "cpu-serial-default")
    assert strong["reference GTEPS"].tolist() == pytest.approx([reference] * len(strong))
    scaling = strong[strong["algorithm"] == "2d"]
    faster = scaling.loc[scaling["GTEPS"] > reference, "ranks"]
    assert set(scaling["COST"]) == {str(faster.min()) if len(faster) else "not reached"}


def test_a_distributed_cost_reference_is_refused(tmp_path, loopback_server):
    config = tiny_config(f"{loopback_server}/x")
    config["experiments"]["strong_scaling"]["reference"] = "2d"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    assert "reference names the single-process search" in proc.stdout + proc.stderr


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """Debian's chromium, installed with apt-get where missing (CI is a fresh Debian machine
    run as root): the report is a JavaScript app, so only a browser shows what a reader sees."""
    found = shutil.which("chromium")
    if found:
        return found
    assert os.geteuid() == 0, "the report test needs Debian's chromium: apt-get install chromium"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # one apt-get at a time with the SLURM tests' installs (tests/slurm/lib.sh, the same lock)
    with open("/var/lock/bfs-tests-apt.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True,
                       timeout=900)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                        "chromium"], check=True, env=env, capture_output=True, timeout=1800)
    return shutil.which("chromium")


@pytest.mark.xdist_group("finished_workflow")
def test_report_landing_page_in_a_browser(finished, tmp_path):
    """The built report opened in headless Chromium: the rendered landing page says what
    was run, on what and the headline numbers (with the COST), and shows the strong-scaling
    figure, the very PNG the workflow wrote."""
    import base64
    work, _ = finished
    html = work / "results" / "report.html"
    snakemake(work, "--report", str(html))
    proc = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=20000", "--dump-dom", html.as_uri()],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    dom = proc.stdout
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))
    for words in ["What was run", "On what", "Headline numbers", "How to rerun one point",
                  "kron-s9: 2d/cpu/scan peaks at", "COST:", "seq-csr/cpu",
                  "snakemake -c 2 --force results/runs/"]:
        assert words in text, words
    import platform
    assert f"python {platform.python_version()}" in text
    # docutils renders a markup problem as a "System Message" in the page (a multi-line MPI
    # library version once broke the "On what" list)
    assert "System Message" not in text, text[text.find("System Message") - 300:][:600]
    shown = re.search(r'<img alt="strong_scaling figure" src="data:image/png;base64,([^"]+)"',
                      dom)
    assert shown, "the landing page shows no figure"
    figure = work / "results" / "figures" / "strong_scaling.png"
    assert base64.b64decode(shown.group(1)) == figure.read_bytes()


@pytest.mark.xdist_group("finished_workflow")
def test_second_run_has_nothing_to_do(finished):
    work, _ = finished
    out = snakemake(work, "-n").stdout + snakemake(work, "-n").stderr
    assert "Nothing to be done" in out


def test_wrong_checksum_stops_before_conversion(tmp_path, loopback_server):
    config = tiny_config(f"{loopback_server}/{GNUTELLA.name}")
    config["graphs"]["snap"]["gnutella"]["sha256"] = "0" * 64
    config["experiments"] = {"real_graphs": {"graphs": ["gnutella"], "algorithms": ["seq-csr"]}}
    del config["comparisons"]   # its 2d run is no longer planned
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-c", "1", check=False)
    assert proc.returncode != 0
    log = (tmp_path / "results" / "logs" / "downloads" / "gnutella.log").read_text()
    assert "sha256" in log.splitlines()[-1]
    assert not (tmp_path / "results" / "graphs" / "gnutella").exists()
    assert not (tmp_path / "results" / "downloads" / "gnutella.txt").exists()


def test_small_frontier_sweep_plans_a_run_per_threshold(tmp_path):
    """small_frontier_sweep: 1d runs named sf{N} with --small-frontier N, the serial baseline
    once; a 1d run of another experiment keeps its name and the config's threshold."""
    config = {"results": "results", "roots": 4, "small_frontier": 7,
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
              "experiments": {
                  "small_frontier_sweep": {"graphs": ["kron-s8"], "ranks": 2,
                                           "small_frontier": [0, 100, 10000]},
                  "real_graphs": {"graphs": ["kron-s8"], "algorithms": ["seq-csr", "1d"],
                                  "ranks": 2}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    plan = snakemake(tmp_path, "-n", "-p").stdout
    jobs = planned_bfs_jobs(plan)
    expected = {"kron-s8/1d/cpu-p2-sf0": 0, "kron-s8/1d/cpu-p2-sf100": 100,
                "kron-s8/1d/cpu-p2-sf10000": 10000, "kron-s8/1d/cpu-p2-default": 7,
                "kron-s8/seq-csr/cpu-serial-default": None}
    assert set(jobs) == set(expected)
    for run, threshold in expected.items():
        flags = re.findall(r"--small-frontier (\d+)", jobs[run]["shell"])
        assert flags == ([] if threshold is None else [str(threshold)]), run
    assert "results/tables/small_frontier.csv" in plan
    assert "results/figures/small_frontier.png" in plan


def test_racherla_sweep_on_gpus_keeps_its_serial_line_on_the_cpu(tmp_path):
    """Racherla's experiment on the GPUs: a lattice graph made by the lattice rule with its
    parameters, 1d swept on one GPU and on two (ranks: [1, 2]), seq-csr once on the CPU
    without GPUs; the old key `graphs: grid:` still read, with a warning; a lattice name that
    is also a Kronecker name is refused."""
    config = {"results": "results", "roots": 4,
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}},
                         "lattice": {"road": {"rows": 30, "cols": 20, "diagonal_prob": 0.25,
                                              "seed": 7}}},
              "experiments": {
                  "small_frontier_sweep": {"graphs": ["kron-s8", "road"], "backend": "gpu",
                                           "ranks": [1, 2], "small_frontier": [0, 100]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    planned = snakemake(tmp_path, "-n", "-p")
    assert "graphs.grid" not in planned.stderr
    plan = planned.stdout
    jobs = planned_bfs_jobs(plan)
    expected = {f"{g}/1d/gpu-p{p}-sf{sf}" for g in ("kron-s8", "road") for p in (1, 2)
                for sf in (0, 100)} | {f"{g}/seq-csr/cpu-serial-default" for g in ("kron-s8", "road")}
    assert set(jobs) == expected
    for run, job in jobs.items():
        gpus = job["resources"].get("gpu", "0")
        assert gpus == ("0" if "seq-csr" in run else run.split("-p")[1][0]), (run, job)
    lattice_job = re.search(r"rule lattice:\n(.*?)\n\n", plan, re.S).group(1)
    assert ("bfs generate lattice --rows 30 --cols 20 --diagonal-prob 0.25 --seed 7 --name road"
            in lattice_job), lattice_job
    # ordered: numbered row by row
    config["graphs"]["lattice"]["road"]["ordered"] = True
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    lattice_job = re.search(r"rule lattice:\n(.*?)\n\n", snakemake(tmp_path, "-n", "-p").stdout,
                            re.S).group(1)
    assert "--seed 7 --ordered --name road" in lattice_job, lattice_job
    del config["graphs"]["lattice"]["road"]["ordered"]

    config["graphs"]["grid"] = config["graphs"].pop("lattice")    # the old name
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    old = snakemake(tmp_path, "-n", "-p")
    assert "config: graphs.grid is now graphs.lattice" in old.stderr, old.stderr
    assert set(planned_bfs_jobs(old.stdout)) == expected

    config["graphs"]["grid"]["kron-s8"] = {"rows": 2, "cols": 2}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    refused = snakemake(tmp_path, "-n", check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "graph names defined twice: ['kron-s8']" in said, said


def hybrid_sweeps_config() -> dict:
    """Munguia's two sweeps of hybrid on Kronecker graphs of two edge factors, beside a hybrid
    run of another experiment."""
    return {"results": "results", "roots": 4,
            "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8},
                                     "kron-s8-e32": {"scale": 8, "edgefactor": 32}}},
            "experiments": {
                "task_count_sweep": {"graphs": ["kron-s8"], "tasks": [1, 16, 64],
                                     "mode": ["workload", "fixed"], "gpu_share": 0.25},
                "lambda_sweep": {"graphs": ["kron-s8", "kron-s8-e32"], "lambda": [0, 1000]},
                "real_graphs": {"graphs": ["kron-s8"], "algorithms": ["hybrid"],
                                "backend": "gpu"}}}


def test_hybrid_sweeps_plan_a_run_per_setting(tmp_path):
    """task_count_sweep: a GPU hybrid run per (mode, T), named by its whole setting
    (t{T}-l{lambda}; fixed-t{T}-s{share}) and given exactly those flags; lambda_sweep: a run
    per (graph, lambda) at T = 16, the run both sweeps need planned once; a hybrid run of
    another experiment keeps `default` and the CLI's defaults (no flags)."""
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(hybrid_sweeps_config()))
    plan = snakemake(tmp_path, "-n", "-p").stdout
    jobs = planned_bfs_jobs(plan)

    def workload(tasks, lam):
        return {"tasks": str(tasks), "mode": "workload", "lambda": str(lam)}
    expected = {  # run -> its hybrid flags
        **{f"kron-s8/hybrid/gpu-serial-t{t}-l1000": workload(t, 1000) for t in (1, 16, 64)},
        **{f"kron-s8/hybrid/gpu-serial-fixed-t{t}-s0.25":
           {"tasks": str(t), "mode": "fixed", "gpu-share": "0.25"} for t in (1, 16, 64)},
        **{f"{g}/hybrid/gpu-serial-t16-l{lam}": workload(16, lam)
           for g in ("kron-s8", "kron-s8-e32") for lam in (0, 1000)},
        "kron-s8/hybrid/gpu-serial-default": {}}
    assert set(jobs) == set(expected)
    for run, flags in expected.items():
        job = jobs[run]
        assert job["rule"] == "bfs_serial" and job["resources"]["gpu"] == "1", run
        assert "--backend gpu" in job["shell"], run
        got = dict(re.findall(r"--(tasks|mode|lambda|gpu-share) (\S+)", job["shell"]))
        assert got == flags, (run, job["shell"])
    for name in ("task_count", "lambda"):
        assert f"results/tables/{name}.csv" in plan and f"results/figures/{name}.png" in plan


@pytest.mark.parametrize("experiment, says", [
    ({"task_count_sweep": {"graphs": ["kron-s8"], "tasks": [1], "backend": "cpu"}},
     "'cpu' is not one of ['gpu']"),
    ({"task_count_sweep": {"graphs": ["kron-s8"], "tasks": [0]}}, "less than the minimum"),
    ({"task_count_sweep": {"graphs": ["kron-s8"]}}, "'tasks' is a required property"),
    ({"task_count_sweep": {"graphs": ["kron-s8"], "tasks": [4], "mode": ["greedy"]}},
     "'greedy' is not one of"),
    ({"lambda_sweep": {"graphs": ["kron-s8"], "lambda": [-1]}}, "less than the minimum"),
    ({"lambda_sweep": {"graphs": ["kron-s8"], "lambda": [10], "algorithm": "merrill"}},
     "'merrill' is not one of ['hybrid']"),
    ({"lambda_sweep": {"graphs": ["kron-s8"], "lambda": [10], "gpu_share": 0.5}},
     "Additional properties are not allowed")])
def test_schema_refuses_a_wrong_hybrid_sweep(tmp_path, experiment, says):
    config = hybrid_sweeps_config()
    config["experiments"] = experiment
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert says in said, said[-3000:]
    assert "rule bfs_" not in said


@pytest.mark.parametrize("experiment", [
    {"implementations": {"graphs": ["kron-s8"], "algorithms": ["seq-csr", "merrill"]}},
    {"real_graphs": {"graphs": ["kron-s8"], "algorithms": ["gpu-quadratic"],
                     "backend": "cpu"}},
    {"implementations": {"graphs": ["kron-s8"], "algorithms": ["seq-list"],
                         "backend": "gpu"}}])
def test_algorithm_without_the_backend_is_refused(tmp_path, experiment):
    config = {"results": "results",
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
              "experiments": experiment}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    name, = experiment
    assert f"config: experiments.{name} has backend" in said and "no " in said
    assert "rule bfs_" not in said


def test_one_gpu_config_plans_the_gpu_algorithms(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    shutil.copy(ROOT / "config" / "one_gpu.yaml", tmp_path / "config.yaml")
    jobs = planned_bfs_jobs(snakemake(tmp_path, "-n").stdout)
    for graph in ["kron-s20", "kron-s24", "email-Eu-core"]:
        for algorithm in ["gpu-quadratic", "merrill", "merrill-do", "hybrid",
                          "gpu-out-of-core"]:
            assert f"results/one_gpu/runs/{graph}/{algorithm}/gpu-serial-default" in jobs
    # Munguia's sweeps: T per mode, and lambda on every edge factor from 8 to 128
    for run in ["kron-s22/hybrid/gpu-serial-t1-l1000",
                "kron-s22/hybrid/gpu-serial-fixed-t1024-s0.5",
                *(f"kron-s20{e}/hybrid/gpu-serial-t16-l0" for e in
                  ["-e8", "", "-e32", "-e64", "-e128"])]:
        assert f"results/one_gpu/runs/{run}" in jobs, run


def test_schema_rejects_a_name_that_would_reach_the_shell(tmp_path):
    config = tiny_config("http://127.0.0.1:1/x")
    config["graphs"]["kronecker"]["x;rm -rf ~"] = {"scale": 4}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert "x;rm -rf ~" in said and "does not match" in said


def planned_bfs_jobs(plan: str) -> dict:
    """run directory below results/runs/ -> {"rule", "input", "resources", "shell"} of each
    BFS job in a `snakemake -n` plan (the shell command with -p)."""
    return {job["output"].removeprefix("results/runs/"):
            {**job, "resources": {k: str(v) for k, v in job["resources"].items()}}
            for job in planned_jobs(plan) if job["rule"].startswith("bfs_")}


def comm_config(**strong) -> dict:
    """kron-s8: 2d and 1d on the GPU over three grid shapes, both exchanges, both comms; a CPU
    weak-scaling pair beside it."""
    return {
        "results": "results", "roots": 4, "save_parents": 1,
        "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
        "experiments": {
            "strong_scaling": {"graph": "kron-s8", "algorithms": ["2d", "1d"], "backend": "gpu",
                               "exchange": ["scan", "wave"], "comm": ["nccl", "mpi"],
                               "grids": ["1x1", "1x2", "2x1"], **strong},
            "weak_scaling": {"algorithm": "2d", "points": [{"ranks": 1, "graph": "kron-s8"},
                                                          {"ranks": 2, "graph": "kron-s8"}]},
        },
    }


def test_comm_and_grid_shapes_plan_their_runs(tmp_path):
    """comm: [nccl, mpi] and explicit grids: one run per shape, exchange and comm, the GPU's
    default comm (nccl) keeping the plain name; one run on one rank (it exchanges nothing),
    under the first exchange and comm listed; --comm, --exchange and the partition follow the
    run id; CPU runs keep their names and get no --comm."""
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(comm_config()))
    jobs = planned_bfs_jobs(snakemake(tmp_path, "-n", "-p").stdout)
    gpu_2d = {f"2d/gpu-{grid}-{ex}{suffix}": (grid, ex, comm)
              for grid in ["1x2", "2x1"] for ex in ["scan", "wave"]
              for suffix, comm in [("", "nccl"), ("-mpi", "mpi")]}
    gpu_2d["2d/gpu-1x1-scan"] = ("1x1", "scan", "nccl")
    gpu_1d = {"1d/gpu-p1-default": ("p1", None, "nccl"), "1d/gpu-p2-default": ("p2", None, "nccl"),
              "1d/gpu-p2-mpi": ("p2", None, "mpi")}
    cpu = {"2d/cpu-1x1-scan": ("1x1", "scan", None), "2d/cpu-1x2-scan": ("1x2", "scan", None)}
    expected = {f"kron-s8/{run}": how for run, how in {**gpu_2d, **gpu_1d, **cpu}.items()}
    assert set(jobs) == set(expected)
    for run, (layout, exchange, comm) in expected.items():
        job = jobs[run]
        assert job["input"] == f"results/partitions/kron-s8/{layout}", run
        flags = re.findall(r"--(comm|exchange) (\w+)", job["shell"])
        assert flags == ([("exchange", exchange)] if exchange else []) \
            + ([("comm", comm)] if comm else []), (run, job["shell"])
        ranks = 1 if layout in ("1x1", "p1") else 2
        assert job["rule"] == ("bfs_single_rank" if ranks == 1 else "bfs_mpi"), run
        if ranks == 2:
            assert job["shell"].startswith("NUMBA_NUM_THREADS=1 mpiexec -n 2 "), run
        # one GPU per rank for the GPU runs; none for the CPU ones
        assert job["resources"]["gpu"] == str(ranks if comm else 0), run


def test_exclusive_gpus_gives_each_gpu_job_the_whole_box(tmp_path):
    config = comm_config()
    config["exclusive_gpus"] = 2
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_bfs_jobs(snakemake(tmp_path, "-n").stdout)
    gpu = {run: int(job["resources"]["gpu"]) for run, job in jobs.items()}
    assert {g for run, g in gpu.items() if "/gpu-" in run} == {2}  # 1-rank jobs too
    assert {g for run, g in gpu.items() if "/cpu-" in run} == {0}
    config["exclusive_gpus"] = 1  # a 2-rank run could never start on one GPU
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    assert "exclusive_gpus is 1" in proc.stdout + proc.stderr


LAUNCHER = re.compile(r"python3 -m workflow\.gpu_slots --dir results/gpu_box_small/\.gpu-slots "
                      r"--slots 4 --take (\d+) -- ")


def test_the_small_box_config_shares_its_gpus_through_the_slot_launcher(tmp_path):
    """config/gpu_box_small.yaml planned for 4 GPUs (share_gpus: true): every GPU job asks for
    the GPUs it uses (its ranks) and its command starts through the slot launcher taking as
    many; CPU jobs neither. Not shared (--config share_gpus=False): every GPU job asks for all
    four and starts as it is."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    shutil.copy(ROOT / "config" / "gpu_box_small.yaml", tmp_path / "config.yaml")
    jobs = planned_jobs(snakemake(tmp_path, "-n", "-p", "--config", "gpus=4").stdout)
    runs = [j for j in jobs if j["rule"].startswith("bfs_")]
    asked = {}
    for job in runs:
        run = job["output"].removeprefix("results/gpu_box_small/runs/")
        layout = run.split("/")[2].split("-")[1]
        ranks = 1 if layout == "serial" else int(layout[1:]) if layout.startswith("p") \
            else int(layout.split("x")[0]) * int(layout.split("x")[1])
        gpus = job["resources"]["gpu"]
        # Numba's threads first (test_a_run_job_tells_numba_the_cores_it_holds), then the launcher
        shell = re.sub(r"^NUMBA_NUM_THREADS=\d+ ", "", job["shell"])
        launched = LAUNCHER.match(shell)
        if "/gpu-" in run:
            assert gpus == ranks and launched and int(launched.group(1)) == ranks, (run, job)
            # the launcher goes first, then the MPI launcher of a run of several ranks
            rest = shell[launched.end():]
            assert rest.startswith(f"mpiexec -n {ranks} " if job["rule"] == "bfs_mpi"
                                   else "python3 -m bfs run "), (run, rest)
            asked[ranks] = asked.get(ranks, 0) + 1
        else:
            assert gpus == 0 and not launched, (run, job)
    # 74 GPU runs side by side on 4 slots (the memory-limit 1x1 point is its own run: csc; the
    # road-like scaling's two lattices on 1, 2 and 4 GPUs and merrill-do on each, 8 of them)
    assert asked == {1: 32, 2: 23, 4: 19}, asked
    # its validations read graph directories on the CPU: no slot
    assert all(j["resources"]["gpu"] == 0 and "gpu_slots" not in j["shell"]
               for j in jobs if j["rule"] == "validate")
    whole = planned_jobs(snakemake(tmp_path, "-n", "-p", "--config", "gpus=4",
                                   "share_gpus=False").stdout)
    gpu_runs = [j for j in whole if j["rule"].startswith("bfs_") and "/gpu-" in j["output"]]
    assert len(gpu_runs) == 74 and {j["resources"]["gpu"] for j in gpu_runs} == {4}
    assert not [j for j in whole if "gpu_slots" in (j["shell"] or "")]


def test_a_run_job_tells_numba_the_cores_it_holds(tmp_path):
    """config/gpu_box_small.yaml planned for 4 GPUs on 64 cores: a hybrid run holds
    HYBRID_THREADS cores and runs that many Numba threads, every other one-rank run one core and
    one thread, a run of P ranks P cores and one thread a rank, so that snakemake never puts a
    CPU job's Numba pool (the machine's, untold) on the cores of a timed search beside it."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    shutil.copy(ROOT / "config" / "gpu_box_small.yaml", tmp_path / "config.yaml")
    jobs = planned_jobs(snakemake(tmp_path, "-n", "-p", "-c", "64", "--config", "gpus=4").stdout)
    seen = set()
    for job in (j for j in jobs if j["rule"].startswith("bfs_")):
        numba = re.match(r"NUMBA_NUM_THREADS=(\d+) ", job["shell"])
        assert numba, job
        algorithm = job["output"].split("/")[4]
        if job["rule"] == "bfs_mpi":
            layout = job["output"].split("/")[5].split("-")[1]
            assert int(numba.group(1)) == 1 and job["threads"] == PLAN.layout_ranks(layout), job
        else:
            cores = PLAN.HYBRID_THREADS if algorithm == "hybrid" else 1
            assert int(numba.group(1)) == job["threads"] == cores, job
        seen.add((job["rule"], algorithm == "hybrid"))
    assert seen >= {("bfs_serial", True), ("bfs_serial", False), ("bfs_single_rank", False),
                    ("bfs_mpi", False)}, seen


def test_a_gpu_validation_on_a_shared_box_takes_one_slot(tmp_path):
    """An in-place graph's GPU runs are validated on the GPU: on a shared box that job asks for
    one GPU and starts through the launcher."""
    config = comm_config()
    config["graphs"]["kronecker"]["kron-s8"]["in_place"] = True
    config["share_gpus"], config["gpus"] = True, 2
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_jobs(snakemake(tmp_path, "-n", "-p").stdout)
    validations = {j["output"].removeprefix("results/validation/"): j for j in jobs
                   if j["rule"] == "validate"}
    gpu = validations["kron-s8/2d/gpu-1x2-scan.json"]
    assert gpu["resources"]["gpu"] == 1
    # Numba's threads are the job's cores (its pool is the machine's unless told)
    numba = f"NUMBA_NUM_THREADS={gpu['threads']} "
    assert gpu["shell"].startswith(numba + "python3 -m workflow.gpu_slots --dir "
                                   "results/.gpu-slots --slots 2 --take 1 -- python3 -m bfs "
                                   "validate ")
    cpu = validations["kron-s8/2d/cpu-1x2-scan.json"]
    assert cpu["resources"]["gpu"] == 0
    assert cpu["shell"].startswith(f"NUMBA_NUM_THREADS={cpu['threads']} python3 -m bfs validate ")


def test_gpus_plans_a_box_and_more_than_the_machine_shows_is_refused_before_any_job(tmp_path):
    """gpus: 8 where the machine shows 4 GPUs: a dry run plans the 8-GPU box (every GPU job
    takes all 8); a run here stops before its first job, naming both counts. gpus: 1 leaves
    the 2-rank GPU runs out and keeps the CPU ones."""
    config = comm_config()
    config["gpus"] = 8
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    four = {**os.environ, "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    jobs = planned_bfs_jobs(snakemake(tmp_path, "-n", env=four).stdout)
    assert {job["resources"]["gpu"] for run, job in jobs.items() if "/gpu-" in run} == {"8"}
    assert "kron-s8/2d/gpu-2x1-wave-mpi" in jobs
    proc = snakemake(tmp_path, "-c", "1", env=four, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config: gpus is 8 but this machine shows 4 GPUs" in said, \
        said[-3000:]
    assert not (tmp_path / "results").exists()      # no job started
    config["gpus"] = 1
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    jobs = planned_bfs_jobs(snakemake(tmp_path, "-n", env=four).stdout)
    assert sorted(run for run in jobs if "/gpu-" in run) == ["kron-s8/1d/gpu-p1-default",
                                                            "kron-s8/2d/gpu-1x1-scan"]
    assert {job["resources"]["gpu"] for run, job in jobs.items() if "/gpu-" in run} == {"1"}
    assert "kron-s8/2d/cpu-1x2-scan" in jobs


def test_nccl_on_the_cpu_is_refused_at_config_check(tmp_path):
    config = comm_config(backend="cpu", comm=["nccl"])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert "experiments.strong_scaling: comm nccl" in said and "needs backend: gpu" in said
    assert "rule bfs_" not in said


def test_cpu_runs_keep_their_names_with_comm_mpi(tmp_path):
    """comm: [mpi] on the CPU is the default spelled out: the same runs and commands."""
    plans = []
    for comm in [None, ["mpi"]]:
        config = comm_config(backend="cpu", exchange=["scan"])
        config["experiments"]["strong_scaling"].pop("comm")
        if comm:
            config["experiments"]["strong_scaling"]["comm"] = comm
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        jobs = planned_bfs_jobs(snakemake(tmp_path, "-n", "-p").stdout)
        plans.append({run: job["shell"] for run, job in jobs.items()})
    assert plans[0] == plans[1]
    assert set(plans[0]) == {"kron-s8/2d/cpu-1x1-scan", "kron-s8/2d/cpu-1x2-scan",
                             "kron-s8/2d/cpu-2x1-scan", "kron-s8/1d/cpu-p1-default",
                             "kron-s8/1d/cpu-p2-default"}
    assert not any("--comm" in shell for shell in plans[0].values())


# Just enough of conda for Snakemake to work out each job's environment (--list-conda-envs
# creates none): the commands it checks the installation with.
CONDA_STUB = """#!/bin/sh
case "$*" in
  --version) echo "conda 25.1.1" ;;
  "info --json") echo '{"conda_prefix": "/nonexistent/conda", "platform": "linux-64"}' ;;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}' ;;
  *) echo "conda stub: cannot $*" >&2; exit 1 ;;
esac
"""


def conda_envs(workdir: Path, rules, targets) -> set:
    """Env files (relative to the checkout) of the jobs that make `targets` with only `rules`
    allowed, as Snakemake resolves them for --sdm conda; their inputs must exist already."""
    stub = workdir / "stub-bin"
    stub.mkdir(exist_ok=True)
    (stub / "conda").write_text(CONDA_STUB)
    (stub / "conda").chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}{os.pathsep}{os.environ['PATH']}"}
    out = snakemake(workdir, "--list-conda-envs", "--allowed-rules", *rules, "--", *targets,
                    env=env).stdout.splitlines()
    rows = out[out.index("environment\tcontainer\tlocation") + 1:]
    return {Path(row.split("\t")[0]).resolve().relative_to(ROOT).as_posix() for row in rows}


def test_gpu_runs_get_the_gpu_environment(tmp_path):
    """--backend gpu and auto BFS jobs (every BFS rule) run in envs/gpu.yaml; cpu runs and the
    validation of every run (on the CPU whatever the backend) in envs/cpu.yaml."""
    config = {
        "results": "results", "roots": 4, "save_parents": 1,
        "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
        "experiments": {
            "strong_scaling": {"graph": "kron-s8", "algorithm": "2d", "ranks": [1, 2],
                               "backend": "gpu"},
            "weak_scaling": {"algorithm": "1d", "backend": "auto",
                             "points": [{"ranks": 2, "graph": "kron-s8"}]},
            "implementations": {"graphs": ["kron-s8"], "algorithms": ["merrill"],
                                "backend": "gpu"},
            "real_graphs": {"graphs": ["kron-s8"], "algorithms": ["seq-csr", "2d"], "ranks": 2},
        },
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    runs = {  # run -> (rule, environment)
        "2d/gpu-1x1-scan": ("bfs_single_rank", "envs/gpu.yaml"),
        "2d/gpu-1x2-scan": ("bfs_mpi", "envs/gpu.yaml"),
        "merrill/gpu-serial-default": ("bfs_serial", "envs/gpu.yaml"),
        "1d/auto-p2-default": ("bfs_mpi", "envs/gpu.yaml"),
        "seq-csr/cpu-serial-default": ("bfs_serial", "envs/cpu.yaml"),
        "2d/cpu-1x2-scan": ("bfs_mpi", "envs/cpu.yaml"),
    }
    plan = snakemake(tmp_path, "-n").stdout
    planned = re.findall(r"^rule (\w+):\n    input: .*\n    output: results/runs/kron-s8/(\S+)$",
                         plan, re.M)
    assert sorted(planned) == sorted((rule, run) for run, (rule, _) in runs.items())
    # the BFS jobs' inputs in place and only BFS rules allowed: a DAG of just the targets' jobs,
    # so the environments listed are those of these jobs
    for path in ["graphs/kron-s8", "partitions/kron-s8/1x1", "partitions/kron-s8/1x2",
                 "partitions/kron-s8/p2"]:
        (tmp_path / "results" / path).mkdir(parents=True)
    bfs_rules = [rule for rule, _ in runs.values()]
    for env in ["envs/gpu.yaml", "envs/cpu.yaml"]:
        targets = [f"results/runs/kron-s8/{run}" for run, (_, e) in runs.items() if e == env]
        assert conda_envs(tmp_path, bfs_rules, targets) == {env}, targets
    for run in runs:
        (tmp_path / "results" / "runs" / "kron-s8" / run).mkdir(parents=True)
    validations = [f"results/validation/kron-s8/{run}.json" for run in runs]
    assert conda_envs(tmp_path, ["validate"], validations) == {"envs/cpu.yaml"}


@pytest.mark.parametrize("config", [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_shipped_configs_plan(tmp_path, config):
    """Every config the project ships passes the schema and plans its runs (dry run)."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    shutil.copy(config, tmp_path / "config.yaml")
    out = snakemake(tmp_path, "-n").stdout
    assert "rule bfs_" in out and "rule table" in out, out[-2000:]


def test_cache_shares_graphs_and_partitions(tmp_path):
    """With `cache` in the config a second results directory takes the Kronecker graph and its
    partition from the cache (verified), and a damaged cache entry fails the job naming it."""
    cache = tmp_path / "cache"
    config = {"results": "results", "cache": str(cache),
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
              "experiments": {"real_graphs": {"graphs": ["kron-s8"], "algorithms": ["2d"],
                                              "ranks": 2}}}
    target = "results/partitions/kron-s8/1x2"
    work = {}
    for name in ("first", "second", "third"):
        work[name] = tmp_path / name
        work[name].mkdir()
        (work[name] / "config.yaml").write_text(yaml.safe_dump(config))
    snakemake(work["first"], "-c", "1", target)
    logs = work["first"] / "results" / "logs"
    assert "stored" in (logs / "graphs" / "kron-s8.log").read_text()
    assert "stored" in (logs / "partition" / "kron-s8-1x2.log").read_text()

    snakemake(work["second"], "-c", "1", target)
    logs = work["second"] / "results" / "logs"
    assert "taken from" in (logs / "graphs" / "kron-s8.log").read_text()
    assert "taken from" in (logs / "partition" / "kron-s8-1x2.log").read_text()
    for part in ("graphs/kron-s8/edges/part-00000.parquet",
                 "partitions/kron-s8/1x2/block-0-1.parquet"):
        assert (work["first"] / "results" / part).read_bytes() == \
            (work["second"] / "results" / part).read_bytes()

    damaged = next(cache.glob("graphs/*/edges/part-00000.parquet"))
    damaged.write_bytes(damaged.read_bytes()[:100])
    proc = snakemake(work["third"], "-c", "1", target, check=False)
    assert proc.returncode != 0
    log = work["third"] / "results" / "logs" / "graphs" / "kron-s8.log"
    last = log.read_text().splitlines()[-1]
    assert last.startswith("bfs: error:") and "edges/part-00000.parquet: damaged" in last
    assert not (work["third"] / "results" / "graphs" / "kron-s8").exists()


def test_in_place_graph_runs_generate_it_and_write_no_graph_or_partition(tmp_path):
    """A Kronecker graph marked in_place: every run makes it (`bfs run --generate`, each rank
    its share under MPI), so no graph, partition or generation job is planned for it; its
    validation regenerates it too (no --graph); an on-disk graph beside it keeps its jobs."""
    config = {"results": "results", "roots": 4,
              "graphs": {"kronecker": {"big": {"scale": 9, "edgefactor": 8, "in_place": True},
                                       "small": {"scale": 8, "edgefactor": 8}}},
              "experiments": {
                  "strong_scaling": {"graphs": ["big", "small"], "algorithms": ["2d", "1d"],
                                     "backend": "gpu", "grids": ["1x1", "1x2", "2x1"],
                                     "reference": "merrill-do"}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    plan = snakemake(tmp_path, "-n", "-p").stdout
    jobs = planned_bfs_jobs(plan)
    spec = "--generate kronecker:scale=9,edgefactor=8,seeds=2:3,version=3.0,name=big"
    big = {run: job for run, job in jobs.items() if run.startswith("big/")}
    assert set(big) == {"big/2d/gpu-1x1-scan", "big/2d/gpu-1x2-scan", "big/2d/gpu-2x1-scan",
                        "big/1d/gpu-p1-default", "big/1d/gpu-p2-default",
                        "big/merrill-do/gpu-serial-default"}
    for run, job in big.items():
        grid = re.search(r"gpu-([0-9]+x[0-9]+)-", run)
        placed = f" --grid {grid.group(1)}" if grid else ""
        assert f"bfs run {spec}{placed} --algorithm" in job["shell"], (run, job["shell"])
        assert "results/graphs/big" not in job["shell"] and not job.get("input"), (run, job)
    planned = {(j["rule"], j["output"]) for j in planned_jobs(plan)}
    assert ("kronecker", "results/graphs/small") in planned
    assert not [p for p in planned if p[1] and ("graphs/big" in p[1] or "partitions/big" in p[1])]
    assert "bfs partition results/graphs/small --grid 1x2" in plan
    validations = [j for j in planned_jobs(plan) if j["rule"] == "validate"]
    big_checks = [j for j in validations if "validation/big/" in j["output"]]
    assert len(big_checks) == 6 and all("--graph" not in j["shell"] for j in big_checks)
    # made again on the GPU, so each asks for one (none shares a device with a timed search);
    # the on-disk graph's validations read it on the CPU
    assert {j["resources"]["gpu"] for j in big_checks} == {1}
    assert {j["resources"]["gpu"] for j in validations if j not in big_checks} == {0}
    assert all("--graph results/graphs/small" in j["shell"] for j in validations
               if "validation/small/" in j["output"])


def test_a_run_is_validated_before_the_next_run_starts(tmp_path):
    """The validate rule's priority: on one core each run's validation comes before the next
    run, so a workflow stopped part way (a device call's limit, an allocation's end) leaves
    every finished run validated but the one in flight."""
    config = {"results": "results", "roots": 2,
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8,
                                                   "in_place": True}}},
              "experiments": {"real_graphs": {"graphs": ["kron-s8"],
                                              "algorithms": ["seq-csr", "seq-list"]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    planned = planned_jobs(snakemake(tmp_path, "-n", "-p").stdout)
    assert {j["priority"] for j in planned if j["rule"] == "validate"} == {1}
    assert {j["priority"] for j in planned if j["rule"].startswith("bfs_")} == {0}
    checks = [f"results/validation/kron-s8/{a}/cpu-serial-default.json"
              for a in config["experiments"]["real_graphs"]["algorithms"]]
    log = snakemake(tmp_path, "-c", "1", *checks).stderr
    order = re.findall(r"^(?:local)?rule (bfs_\w+|validate):$", log, re.M)
    assert order == ["bfs_serial", "validate"] * 2, order


def comparison_config(**comparisons) -> dict:
    """kron-s8 searched by seq-csr and seq-list (one process each), and the comparisons."""
    return {"results": "results", "roots": 4,
            "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
            "experiments": {"real_graphs": {"graphs": ["kron-s8"],
                                            "algorithms": ["seq-csr", "seq-list"]}},
            "comparisons": comparisons}


LISTS = {"a": "kron-s8/seq-csr/cpu-serial-default", "b": "kron-s8/seq-list/cpu-serial-default"}


def test_a_comparison_plans_its_compare_job(tmp_path):
    """comparisons: {name: {a, b}} plans `bfs compare` of the two runs (after both are
    validated) into results/comparisons/<name>/, and the target rule asks for it."""
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(comparison_config(lists=LISTS)))
    plan = snakemake(tmp_path, "-n", "-p").stdout
    jobs = [j for j in planned_jobs(plan) if j["rule"] == "compare"]
    assert len(jobs) == 1, plan[-3000:]
    job = jobs[0]
    assert job["shell"].startswith(
        "python3 -m bfs compare results/runs/kron-s8/seq-csr/cpu-serial-default "
        "results/runs/kron-s8/seq-list/cpu-serial-default --out results/comparisons/lists "
        "--force"), job["shell"]
    for name in ("summary.csv", "summary.md", "per_root.csv", "speedups.png", "speedups.svg"):
        assert f"results/comparisons/lists/{name}" in job["output"]
    for run in LISTS.values():
        assert f"results/validation/{run}.json" in job["input"]


@pytest.mark.parametrize("comparison, says", [
    ({"a": "kron-s8/seq-csr", "b": LISTS["b"]}, "does not match"),
    ({**LISTS, "c": LISTS["a"]}, "Additional properties are not allowed"),
    ({"a": LISTS["a"], "b": "kron-s8/seq-list/cpu-serial-default-r2"},
     "comparisons.x.b: kron-s8/seq-list/cpu-serial-default-r2 is not a run of the experiments"),
    ({"a": LISTS["a"], "b": LISTS["a"]}, "a and b are the same run")])
def test_a_wrong_comparison_is_refused(tmp_path, comparison, says):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(comparison_config(x=comparison)))
    proc = snakemake(tmp_path, "-n", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert says in said, said[-3000:]
    assert "rule bfs_" not in said



def test_a_run_rule_job_plans_the_box_the_main_process_planned(tmp_path):
    """The box's GPU count, where the config gives none, is the GPUs the machine shows, read by
    snakemake's main process and handed to the processes it starts: the `landing` job (a
    `run:` rule, run in a snakemake subprocess, which plans its inputs again) asks for the runs
    the main process planned. Here one GPU is visible and the CPU runs ask for GPUs
    (request_gpus: always): the 2-rank point is left out, and the whole workflow finishes."""
    config = {"results": "results", "roots": 2, "request_gpus": "always",
              "graphs": {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8}}},
              "experiments": {"weak_scaling": {
                  "algorithm": "2d", "points": [{"ranks": 1, "graph": "kron-s8"},
                                                {"ranks": 2, "graph": "kron-s8"}]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    one = {**os.environ, "CUDA_VISIBLE_DEVICES": "0"}
    one.pop("BFS_PLAN_GPUS", None)     # experiment_plan.PLAN_GPUS_ENV: none handed on yet
    proc = snakemake(tmp_path, "-c", "2", "--resources", "gpu=1", env=one, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert (tmp_path / "results/report/landing.json").is_file()
    assert sorted(p.name for p in (tmp_path / "results/runs/kron-s8/2d").iterdir()) \
        == ["cpu-1x1-scan"]
