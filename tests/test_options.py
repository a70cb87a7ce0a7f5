"""Algorithm options declared once in the registry (bfs.algorithms.options): `bfs run`'s flags,
NAME@KEY=VALUE, run ids and their flags, the config schema, all derived from the declarations;
a toy algorithm registered from outside the package (tests/toy_algorithm.py, through
BFS_EXTRA_ALGORITHMS) shows up in each. Experiments are data: two of one kind side by side."""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from bfs.algorithms import ALGORITHMS, RunContext
from bfs.algorithms.options import (EXTRA_ALGORITHMS, all_options, parse_algorithm,
                                    parse_variant, variant_flags, variant_name)
from bfs.cli import main
from bfs.errors import BfsError
from helpers import ROOT, planned_jobs
import toy_algorithm

TOY_ENV = {**os.environ, EXTRA_ALGORITHMS: "toy_algorithm",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}


@pytest.fixture(scope="module")
def kron8(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "kron8"
    assert main(["generate", "kronecker", "--scale", "8", "--out", str(out)]) == 0
    return out


@pytest.fixture
def toy(monkeypatch):
    """The toy entry in this process's registry (what BFS_EXTRA_ALGORITHMS does at import)."""
    spec, = toy_algorithm.ALGORITHMS
    monkeypatch.setitem(ALGORITHMS, spec.name, spec)
    return spec


# --- run ids: written and read from the declarations, byte for byte as before -------------

@pytest.mark.parametrize("algorithm, backend, settings, variant, flags", [
    ("2d", "cpu", {"exchange": "scan", "comm": "mpi"}, "scan", "--exchange scan"),
    ("2d", "gpu", {"exchange": "scan", "comm": "mpi"}, "scan-mpi",
     "--exchange scan --comm mpi"),
    ("2d", "gpu", {"comm": "nccl"}, "scan", "--exchange scan --comm nccl"),
    ("2d-do", "cpu", {"exchange": "wave"}, "wave", "--exchange wave"),
    ("1d", "gpu", {"exchange": "wave", "comm": "nccl"}, "default",
     "--small-frontier 7 --comm nccl"),
    ("1d", "cpu", {"small_frontier": 1000}, "sf1000", "--small-frontier 1000"),
    ("1d", "auto", {"comm": "nccl"}, "nccl", "--small-frontier 7 --comm nccl"),
    ("semiring", "cpu", {}, "default", ""),
    ("hybrid", "gpu", {"tasks": 64, "mode": "workload", "lambda": 1000, "gpu_share": 0.5},
     "t64-l1000", "--tasks 64 --mode workload --lambda 1000"),
    ("hybrid", "gpu", {"tasks": 64, "mode": "fixed", "lambda": 1000, "gpu_share": 0.5},
     "fixed-t64-s0.5", "--tasks 64 --mode fixed --gpu-share 0.5"),
    ("hybrid", "gpu", {"lambda": 1000000}, "t16-l1000000",
     "--tasks 16 --mode workload --lambda 1000000"),
    ("hybrid", "gpu", {}, "default", ""),
    ("seq-csr", "cpu", {"exchange": "wave", "tasks": 4}, "default", ""),
])
def test_run_ids_and_their_flags(algorithm, backend, settings, variant, flags):
    """An experiment's settings -> the run id's variant (only what this algorithm declares,
    defaults the backend implies left out) -> the same settings and the job's flags back (the
    config's small_frontier: 7 for 1d runs that do not sweep it; a repeat changes nothing)."""
    from bfs.algorithms.options import flags_text
    spec = ALGORITHMS[algorithm]
    assert variant_name(spec, backend, settings) == variant
    named = parse_variant(spec, variant + "-r2")
    assert variant_name(spec, backend, named) == variant
    assert flags_text(variant_flags(spec, backend, variant + "-r3",
                                    {"small_frontier": 7})) == flags


def test_a_run_id_part_no_option_declares_is_refused():
    with pytest.raises(BfsError, match="run id part 'wave' names no option of 1d"):
        parse_variant(ALGORITHMS["1d"], "wave")


def test_declared_defaults_agree_with_the_modules():
    """Where the registry states a default, the module's own fallback is the same."""
    from bfs.algorithms import hybrid
    from bfs.comm.exchange import default_comm
    options = all_options()
    assert options["comm"].default == {b: default_comm(b) for b in ("cpu", "gpu")}
    assert {k: options[k].default for k in hybrid.DEFAULTS} == hybrid.DEFAULTS
    assert options["small_frontier"].default == 1000    # racherla_1d's ctx.options fallback


# --- NAME@KEY=VALUE ------------------------------------------------------------------------

def test_algorithm_options_are_typed_and_checked():
    assert parse_algorithm("merrill-do@tail=0,alpha=14,beta=24,rows=graph") == (
        "merrill-do", {"tail": 0, "alpha": 14.0, "beta": 24.0, "rows": "graph"})
    assert parse_algorithm("hybrid@tasks=8,lambda=inf")[1] == {"tasks": 8,
                                                               "lambda": float("inf")}
    assert isinstance(parse_algorithm("merrill-do@ahead=4")[1]["ahead"], int)
    with pytest.raises(BfsError, match=r"merrill has no option 'bu' \(its options: expand, "
                                       r"order, loop, loop_blocks, loop_spread, loop_edges\)"):
        parse_algorithm("merrill@bu=2x8")
    with pytest.raises(BfsError, match=r"seq-csr has no option 'x' \(it takes no options\)"):
        parse_algorithm("seq-csr@x=1")
    with pytest.raises(BfsError, match=r"2d@exchange=ring: choose one of scan, wave"):
        parse_algorithm("2d@exchange=ring")
    with pytest.raises(BfsError, match=r"hybrid@tasks=0: must be >= 1"):
        parse_algorithm("hybrid@tasks=0")
    with pytest.raises(BfsError, match=r"1d@small_frontier=many: invalid literal"):
        parse_algorithm("1d@small_frontier=many")


# --- bfs run ------------------------------------------------------------------------------

def test_run_refuses_an_option_its_algorithm_does_not_declare(kron8, tmp_path, capsys):
    for args, says in [(["--algorithm", "seq-csr", "--exchange", "wave"],
                        "--exchange is not an option of seq-csr (it takes no options)"),
                       (["--algorithm", "1d", "--tasks", "4"],
                        "--tasks is not an option of 1d (its options: small_frontier, comm)"),
                       (["--algorithm", "seq-list@hops=2"], "seq-list has no option 'hops'")]:
        assert main(["run", str(kron8), *args, "--out", str(tmp_path / "r")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("bfs: error: ") and says in err, err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_run_passes_declared_options_with_their_defaults(kron8, tmp_path, monkeypatch):
    """`bfs run` hands the runner the algorithm's options: given ones (flags or NAME@...),
    then its single defaults; per-backend defaults and None stay the module's choice."""
    from bfs.harness import runner
    seen = {}
    monkeypatch.setattr(runner, "run", lambda graph, out, opts, extra, generate: seen.update(
        {opts.algorithm: extra}) or 0)
    for argv in (["--algorithm", "2d-do", "--alpha", "20"],
                 ["--algorithm", "merrill-do@tail=0", "--beta", "inf"],
                 ["--algorithm", "1d"], ["--algorithm", "gpu-out-of-core",
                                         "--device-memory-limit", "1M"]):
        assert main(["run", str(kron8), *argv, "--out", str(tmp_path / "r")]) == 0
    assert seen == {"2d-do": {"alpha": 20.0, "exchange": "scan"},
                    "merrill-do": {"tail": 0, "beta": "inf"},
                    "1d": {"small_frontier": 1000},
                    "gpu-out-of-core": {"device_memory_limit": 1 << 20}}


def test_toy_algorithm_runs_with_its_option(toy, kron8, tmp_path):
    """A registered algorithm's option reaches its module typed and run.json records it."""
    assert main(["run", str(kron8), "--algorithm", "toy", "--hops", "5", "--roots", "2",
                 "--out", str(tmp_path / "r")]) == 0
    params = json.loads((tmp_path / "r" / "run.json").read_text())["parameters"]
    assert params["hops"] == 5 and params["walk"] == "long"     # a string option, resolved
    assert main(["run", str(kron8), "--algorithm", "toy@hops=3", "--roots", "1",
                 "--out", str(tmp_path / "s")]) == 0
    params = json.loads((tmp_path / "s" / "run.json").read_text())["parameters"]
    assert params["hops"] == 3 and params["walk"] == "short"
    assert main(["run", str(kron8), "--algorithm", "toy", "--roots", "1",
                 "--out", str(tmp_path / "t")]) == 0
    assert json.loads((tmp_path / "t" / "run.json").read_text())["parameters"]["hops"] == 2


def test_extra_algorithms_hook_reaches_bfs_run_help():
    """BFS_EXTRA_ALGORITHMS in a fresh process: the toy is listed, its flag is in
    `bfs run --help` with its algorithm's name and default."""
    def bfs(*args):
        return subprocess.run([sys.executable, "-m", "bfs", *args], capture_output=True,
                              text=True, env=TOY_ENV, check=True).stdout
    help_text = " ".join(bfs("run", "--help").split())
    assert "--hops H toy: a toy setting, recorded in run.json (default: 2)" in help_text
    listed = bfs("algorithms", "--options")
    assert re.search(r"^toy +cpu +seq-csr with a sweepable toy option$", listed, re.M)
    assert re.search(r"^ +hops +--hops, sweepable: a toy setting", listed, re.M)


# --- the config schema --------------------------------------------------------------------

def test_schema_file_leaves_the_registry_to_the_registry():
    """The YAML (the readable base the workflow adds to) lists no algorithm and no sweepable
    option, so a new algorithm or option touches no line of it (the toy's test shows they
    reach the schema the workflow validates with); the option lists it keeps for experiments
    (exchange, comm) take the declarations' values, and every kind has its experiment entry."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    definitions = schema["definitions"]
    assert "enum" not in definitions["algorithm"]
    assert definitions["sweep"]["properties"] == {}
    sweepable = {name: o for name, o in all_options().items() if o.sweep}
    for name in ("exchange", "comm"):
        assert definitions[name]["items"] == sweepable[name].schema()
    assert set(definitions["kind"]["enum"]) == set(schema["properties"]["experiments"]
                                                   ["properties"])


def snakemake(workdir, config, *args, env=None, check=True):
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run(["snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir),
                           "--configfile", str(workdir / "config.yaml"), "-n", "-p", *args],
                          capture_output=True, text=True, timeout=600, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


def bfs_jobs(plan: str) -> dict:
    return {job["output"].removeprefix("results/runs/"): job
            for job in planned_jobs(plan) if job["rule"].startswith("bfs_")}


KRON8 = {"kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8},
                       "kron-s9": {"scale": 9, "edgefactor": 8}}}


def toy_config(hops) -> dict:
    return {"results": "results", "roots": 4, "graphs": KRON8,
            "experiments": {"toy_sweep": {"kind": "real_graphs", "graphs": ["kron-s8"],
                                          "algorithms": ["toy", "seq-csr"],
                                          "sweep": {"hops": hops}}}}


needs_snakemake = pytest.mark.skipif(
    subprocess.run(["which", "snakemake"], capture_output=True).returncode != 0,
    reason="needs snakemake")


@needs_snakemake
def test_workflow_sweeps_a_registered_algorithms_option(tmp_path):
    """The toy's `hops` swept by a config: the schema the workflow validates against takes
    it (and checks its values by the declaration), a run per value named h{N} whose command
    passes --hops N, the algorithm without the option planned once."""
    plan = snakemake(tmp_path, toy_config([1, 3]), env=TOY_ENV).stdout
    jobs = bfs_jobs(plan)
    assert set(jobs) == {"kron-s8/toy/cpu-serial-h1", "kron-s8/toy/cpu-serial-h3",
                         "kron-s8/seq-csr/cpu-serial-default"}
    for run, job in jobs.items():
        assert re.findall(r"--hops (\d+)", job["shell"]) == (
            [run[-1]] if "/toy/" in run else []), job["shell"]
        assert "--algorithm " + run.split("/")[1] in job["shell"]
    # the toy's table is this experiment's: named after it, fed by its runs
    table = next(j for j in planned_jobs(plan) if j["rule"] == "table"
                 and "toy_sweep-real_graphs" in j["output"])
    assert "kron-s8/toy/cpu-serial-h3" in table["shell"]

    refused = snakemake(tmp_path, toy_config([0]), env=TOY_ENV, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "0 is less than the minimum of 1" in said, said[-2000:]
    unknown = snakemake(tmp_path, toy_config([1]), check=False)    # no hook: no such option
    said = unknown.stdout + unknown.stderr
    assert unknown.returncode != 0 and "'toy' is not one of" in said, said[-2000:]


@needs_snakemake
def test_two_strong_scaling_experiments_plan_disjoint_outputs(tmp_path):
    """Two strong-scaling studies in one config: each plans its own runs and writes its own
    table and figure (the one named strong_scaling keeps today's file names); the pooled
    figures take both."""
    config = {"results": "results", "roots": 4, "graphs": KRON8, "experiments": {
        "strong_scaling": {"graph": "kron-s8", "algorithm": "2d", "ranks": [1, 2]},
        "wave_s9": {"kind": "strong_scaling", "graph": "kron-s9", "algorithm": "2d",
                    "exchange": ["wave"], "ranks": [2], "reference": "seq-csr"}}}
    plan = snakemake(tmp_path, config).stdout
    assert set(bfs_jobs(plan)) == {"kron-s8/2d/cpu-1x1-scan", "kron-s8/2d/cpu-1x2-scan",
                                   "kron-s9/2d/cpu-1x2-wave",
                                   "kron-s9/seq-csr/cpu-serial-default"}
    outputs = {j["output"].split(",")[0]: j["shell"] for j in planned_jobs(plan)
               if j["rule"] in ("table", "figure")}
    mine = {"results/tables/strong_scaling.csv": "kron-s8",
            "results/figures/strong_scaling.png": "kron-s8",
            "results/tables/wave_s9-strong_scaling.csv": "kron-s9",
            "results/figures/wave_s9-strong_scaling.png": "kron-s9"}
    for output, graph in mine.items():
        runs = set(re.findall(r"results/runs/([\w-]+)/", outputs[output]))
        assert runs == {graph}, (output, outputs[output])
    for pooled in ("results/figures/frontier.png", "results/figures/comm_vs_compute.png"):
        assert {"kron-s8", "kron-s9"} <= set(re.findall(r"results/runs/([\w-]+)/",
                                                        outputs[pooled]))

    config["experiments"]["strong_scaling"]["kind"] = "weak_scaling"
    refused = snakemake(tmp_path, config, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "experiments.strong_scaling is of kind strong_scaling" in said, said[-2000:]
    config["experiments"]["strong_scaling"].pop("kind")
    config["experiments"]["wave_s9"].pop("kind")           # a name that is no kind needs one
    refused = snakemake(tmp_path, config, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "'kind' is a required property" in said, said[-2000:]


def test_run_context_options_reach_the_module(toy):
    """The declared parser types what the flag gives; the toy's build checks it got an int."""
    from bfs.algorithms.options import options_from_args
    import argparse
    options = options_from_args("toy", argparse.Namespace(hops=4))
    assert options == {"hops": 4}
    with pytest.raises(TypeError):
        toy_algorithm.build(None, RunContext("cpu", {"hops": "4"}))


def test_a_gpu_searchers_build_gets_the_run_options(monkeypatch):
    """merrill, merrill-do, gpu-quadratic, cupy-baseline: build() hands ctx.options (what
    `bfs run` checked: flags and NAME@KEY=VALUE) to the searcher as keywords. (The CSR is
    stubbed: this runs without a GPU.)"""
    import numpy as np

    from bfs.algorithms import EdgeList, device_csr
    from bfs.build import csr_gpu
    monkeypatch.setattr(csr_gpu, "csr_from_edges", lambda src, dst, n: ("off", "col"))
    monkeypatch.setattr(csr_gpu, "csr_from_streamed", lambda edges, n: ("s-off", edges))
    seen = {}
    build, _, _ = device_csr.entry_points(
        lambda offsets, columns, **options: seen.update(options, csr=(offsets, columns)))
    _, options = parse_algorithm("merrill-do@tail=0,alpha=30")
    none = np.zeros(0, np.uint32)
    build(EdgeList(none, none, 0), RunContext("gpu", options))
    assert seen == {"tail": 0, "alpha": 30.0, "csr": ("off", "col")}
    # an edge list streamed chunk by chunk (src None) goes to the streamed Kernel 1
    build(EdgeList(None, None, 0, device_edges="chunks"), RunContext("gpu", options))
    assert seen == {"tail": 0, "alpha": 30.0, "csr": ("s-off", "chunks")}


@pytest.mark.skipif(subprocess.run(["which", "mpiexec"], capture_output=True).returncode != 0,
                    reason="needs mpiexec")
def test_a_refused_option_under_mpiexec_is_one_line(kron8, tmp_path):
    part = tmp_path / "p"
    assert main(["partition", str(kron8), "--grid", "1x2", "--out", str(part)]) == 0
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-m", "bfs", "run", str(part),
                           "--algorithm", "2d", "--tasks", "3", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode != 0
    assert proc.stderr.strip() == ("bfs: error: --tasks is not an option of 2d (its options: "
                                   "exchange, comm, engine)"), proc.stderr


def test_an_option_name_has_one_meaning(toy, monkeypatch):
    """Two declarations of one name would give one flag and one config key two meanings."""
    from dataclasses import replace
    other = replace(toy, name="toy2", options=(replace(toy.options[0], default=9),))
    monkeypatch.setitem(ALGORITHMS, "toy2", other)
    with pytest.raises(ValueError, match="option 'hops' is declared twice, differently "
                                         r"\(algorithm toy2\)"):
        all_options()
    monkeypatch.setitem(ALGORITHMS, "toy2", replace(other, options=toy.options))   # shared
    assert all_options()["hops"] is toy.options[0]
