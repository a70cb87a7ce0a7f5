"""What `snakemake --profile slurm` would submit, without a cluster: the plan of a dry run through
the profile, each job's sbatch line built by snakemake-executor-plugin-slurm's own builder
(get_submit_command + set_gres_string, what its run_job calls), checked against what a typical
GPU partition takes; and the job-size model (bfs/harness/jobsize.py) with the config keys behind
it."""
import os
import re
import shlex
import shutil
import subprocess
from types import SimpleNamespace

import pytest
import yaml

from bfs.harness import jobsize
from helpers import ROOT, planned_jobs

pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None, reason="needs snakemake")

FU2014 = ROOT / "config" / "fu2014.yaml"
GPU_BOX = ROOT / "config" / "gpu_box.yaml"
# a typical GPU partition: nodes of 4 GPUs, under 500 GB of memory, 24 hours at the most
NODE_GPUS, NODE_MEM_MB, MAX_MINUTES = 4, 500_000, 24 * 60


def plan(workdir, config: dict, *args, configfiles=()) -> list[dict]:
    """The jobs of `snakemake --profile slurm -n -p` (from the repository root, as typed);
    configfiles: config files read before `config` (which then adds to them)."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = ["snakemake", "--profile", "slurm", "-n", "-p", "-d", str(workdir),
           "--configfile", *map(str, configfiles), str(workdir / "config.yaml"), *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return planned_jobs(proc.stdout)


class Resources(dict):
    """A job's resources as the plugin reads them: .get(key) and attribute access."""
    __getattr__ = dict.__getitem__


def sbatch_line(job: dict, workdir) -> str:
    """The sbatch command the plugin would run for this planned job."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string
    fake = SimpleNamespace(resources=Resources(job["resources"]), threads=job["threads"],
                           name=job["rule"], is_group=lambda: False)
    params = {"run_uuid": "bfs-test", "slurm_logfile": "slurm.log", "comment_str": "test",
              "account": "", "partition": "", "workdir": str(workdir)}
    return get_submit_command(fake, params) + set_gres_string(fake)


def flags(line: str) -> dict:
    """sbatch's options as {name: value}: `--x=v`, `--x v` and `-t v` alike."""
    words = shlex.split(line)[1:]
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        if "=" in word and word.startswith("--"):
            key, value = word.split("=", 1)
            out[key] = value
        elif word.startswith("-") and i + 1 < len(words) and not words[i + 1].startswith("-"):
            out[word] = words[i + 1]
            i += 1
        else:
            out[word] = True
        i += 1
    return out


def per_node(f: dict) -> tuple[int, int]:
    """(tasks, GPUs) the fullest node of an sbatch line holds."""
    nodes = int(f.get("--nodes", 1))
    if "--ntasks-per-node" in f:
        tasks = int(f["--ntasks-per-node"])
    else:
        assert nodes == 1 or int(f["--ntasks"]) == nodes, f"tasks not placed: {f}"
        tasks = -(-int(f.get("--ntasks", 1)) // nodes)
    if "--gres" in f:
        gpus = int(re.fullmatch(r"gpu:(\d+)", f["--gres"]).group(1))
    else:
        assert "--gpus" not in f or nodes == 1, f"--gpus over several nodes: {f}"
        gpus = int(f.get("--gpus", 0))
    return tasks, gpus


def test_64_gpus_on_16_nodes_fit_a_gpu_partition(tmp_path):
    """config/fu2014.yaml (1-64 GPUs, scale 21-27) on nodes of 4 GPUs: every sbatch line asks
    for at most 4 tasks and 4 GPUs a node, under 500 GB a node and under 24 hours, the 64-rank
    runs for exactly 16 nodes of 4, no GPU search carries --cpus-per-task, and every
    validation asks for the cores its edge pass runs on."""
    config = yaml.safe_load(FU2014.read_text())
    assert config["cluster"]["gpus_per_node"] == NODE_GPUS
    # a dry run without --cores caps every job's threads at 1; a real one through the profile
    # caps nothing, as --cores 256 does here
    jobs = plan(tmp_path, config, "--cores", "256")
    submitted = [j for j in jobs if not j["local"]]
    assert {j["rule"] for j in submitted} >= {"kronecker", "partition", "bfs_mpi",
                                              "bfs_single_rank", "validate"}
    sixty_four = 0
    for job in submitted:
        line = sbatch_line(job, tmp_path)
        f = flags(line)
        tasks, gpus = per_node(f)
        assert int(f["--mem"]) < NODE_MEM_MB, line
        assert 0 < int(f["-t"]) < MAX_MINUTES, line
        assert tasks <= NODE_GPUS and gpus <= NODE_GPUS, line
        if job["rule"] == "validate":
            assert f["--cpus-per-task"] == "8", line
        if job["rule"].startswith("bfs_"):
            ranks = int(re.search(r"-n (\d+)", job["shell"]).group(1)) \
                if job["rule"] == "bfs_mpi" else 1
            assert gpus == tasks == min(ranks, NODE_GPUS), line
            assert "--cpus-per-task" not in f and "--cpus-per-gpu" not in f, line
            assert not ("--ntasks-per-gpu" in f and "--ntasks-per-node" in f), line
            if ranks == 64:
                sixty_four += 1
                assert f["--nodes"] == "16" and f["--ntasks-per-node"] == "4", line
                assert f["--gres"] == "gpu:4", line
                # srun places the ranks itself: jobstep >= 0.6.1 strips SLURM_NNODES & co.
                assert "srun --mpi=pmi2 -n 64 -N 16 --ntasks-per-node=4" in job["shell"]
    assert sixty_four == 3   # 8x8: strong scaling (scan, wave), weak scaling at scale 27
    # a GPU run of a scale-25 graph is minutes to an hour or two, not days
    one_gpu = [j for j in submitted if j["rule"] == "bfs_single_rank"
               and "graph=kron-s25" in j["wildcards"]]
    assert one_gpu and all(j["resources"]["runtime"] <= 120 for j in one_gpu)


@pytest.mark.parametrize("node_gpus, gpus", [(4, 8), (8, 8), (4, 4)])
def test_gpu_box_on_nodes_of_4_or_8_gpus(tmp_path, node_gpus, gpus):
    """config/gpu_box.yaml through the profile as README says, `--configfile
    config/gpu_box.yaml nodes.yaml --config gpus=N` (nodes.yaml: cluster.gpus_per_node): each
    BFS job of P GPUs asks for P tasks and GPUs on ceil(P / node) nodes, one task a GPU
    (4 GPUs: 1 node x 4; 8 GPUs on nodes of 4: 2 nodes x 4, srun told so; on nodes of 8: one
    node), no job for more than gpus GPUs, and no job takes a whole box (exclusive_gpus)."""
    jobs = plan(tmp_path, {"cluster": {"gpus_per_node": node_gpus}}, "--config", f"gpus={gpus}",
                configfiles=[GPU_BOX])
    shapes = {}
    for job in jobs:
        if not job["rule"].startswith("bfs_") or "/gpu-" not in job["output"]:
            continue
        f = flags(sbatch_line(job, tmp_path))
        ranks = int(re.search(r"-n (\d+)", job["shell"]).group(1)) \
            if job["rule"] == "bfs_mpi" else 1
        tasks, per_node_gpus = per_node(f)
        assert tasks == per_node_gpus == min(ranks, node_gpus), (job["output"], f)
        assert "--cpus-per-task" not in f, f
        if ranks > 1:
            nodes = -(-ranks // node_gpus)
            assert (f["--nodes"], f["--ntasks-per-node"], f["--gres"]) == \
                (str(nodes), str(min(ranks, node_gpus)), f"gpu:{min(ranks, node_gpus)}"), f
            assert f"-n {ranks} -N {nodes} --ntasks-per-node={min(ranks, node_gpus)} " \
                in job["shell"], job["shell"]
        else:
            assert f["--gpus"] == "1", f
        shapes.setdefault(ranks, set()).add((f.get("--nodes", "1"), tasks))
    assert sorted(shapes) == [c for c in (1, 2, 4, 8) if c <= gpus]
    assert shapes[4] == {("1", 4)}
    if gpus == 8:
        assert shapes[8] == ({("2", 4)} if node_gpus == 4 else {("1", 8)})
        # the multi-node points: strong scaling's and weak scaling's, at the memory limit too
        eight = {j["output"] for j in jobs if j["rule"] == "bfs_mpi"
                 and re.search(r"-n 8 ", j["shell"])}
        assert {"results/gpu_box/runs/kron-s31/2d-do/gpu-1x8-scan-csc",
                "results/gpu_box/runs/kron-s29/2d/gpu-1x8-scan",
                "results/gpu_box/runs/kron-s26/2d-do/gpu-2x4-scan-mpi"} <= eight


def test_a_hybrid_run_asks_for_the_cores_its_tasks_run_on(tmp_path):
    """config/gpu_box.yaml's hybrid sweeps through the profile on nodes of 4 GPUs: a hybrid
    run is one task with one GPU and HYBRID_THREADS cores (--cpus-per-task, no
    --ntasks-per-gpu beside it, which the job step's srun could not combine with it on
    Slurm >= 23.x); every other GPU search still carries no CPU flag; `--set-threads
    bfs_serial=3` has every one-rank search of that rule ask for 3."""
    from helpers import load_experiment_plan
    hybrid_threads = load_experiment_plan().HYBRID_THREADS
    for set_threads, want in ((), hybrid_threads), (("--set-threads", "bfs_serial=3"), 3):
        jobs = plan(tmp_path, {"cluster": {"gpus_per_node": 4}}, "--cores", "64", *set_threads,
                    "--config", "gpus=4", configfiles=[GPU_BOX])
        threaded = other = 0
        for job in jobs:
            if not job["rule"].startswith("bfs_") or "/gpu-" not in job["output"]:
                continue
            line = sbatch_line(job, tmp_path)
            f = flags(line)
            if "/hybrid/" in job["output"] or (set_threads and job["rule"] == "bfs_serial"):
                threaded += 1
                assert f["--cpus-per-task"] == str(want) and f["--gpus"] == "1", line
                assert "--ntasks-per-gpu" not in f and "--ntasks-per-node" not in f, line
                assert f"NUMBA_NUM_THREADS={want} " in job["shell"], job["shell"]
            else:
                other += 1
                assert "--cpus-per-task" not in f, line
        assert threaded >= 22 and other > 0, (threaded, other)


def test_unshaped_gpu_jobs_carry_no_cpu_flag(tmp_path):
    """Without cluster.gpus_per_node a GPU job is --ntasks-per-gpu=1 --gpus=P (SLURM places
    it): never with --cpus-per-task, which breaks the inner srun on Slurm >= 23.x."""
    config = yaml.safe_load(FU2014.read_text())
    del config["cluster"]
    jobs = [j for j in plan(tmp_path, config) if j["rule"].startswith("bfs_")]
    for job in jobs:
        f = flags(sbatch_line(job, tmp_path))
        ranks = int(re.search(r"-n (\d+)", job["shell"]).group(1)) \
            if job["rule"] == "bfs_mpi" else 1
        assert f["--ntasks-per-gpu"] == "1" and f["--gpus"] == str(ranks), f
        assert "--cpus-per-task" not in f and "--nodes" not in f, f
        if ranks > 1:
            assert f["--ntasks"] == str(ranks), f
            assert "-N" not in job["shell"].split(), job["shell"]


def test_uneven_ranks_fill_nodes_and_cpu_runs_keep_a_cpu_each(tmp_path):
    """49 GPU ranks on nodes of 4: 13 nodes of 4 tasks, srun told -n 49; CPU runs of a config
    with cpu_ranks_per_node are shaped the same way, one CPU a task."""
    config = {
        "results": "results", "roots": 8,
        "cluster": {"gpus_per_node": 4, "cpu_ranks_per_node": 8},
        "graphs": {"kronecker": {"kron-s20": {"scale": 20}}},
        "experiments": {
            "strong_scaling": {"graph": "kron-s20", "algorithm": "2d", "backend": "gpu",
                               "ranks": [2, 49]},
            "weak_scaling": {"algorithm": "2d", "backend": "cpu",
                             "points": [{"ranks": 16, "graph": "kron-s20"}]},
        },
    }
    jobs = {j["output"]: j for j in plan(tmp_path, config) if j["rule"] == "bfs_mpi"}
    lines = {out: flags(sbatch_line(j, tmp_path)) for out, j in jobs.items()}
    big = "results/runs/kron-s20/2d/gpu-7x7-scan"
    assert (lines[big]["--nodes"], lines[big]["--ntasks-per-node"], lines[big]["--gres"]) \
        == ("13", "4", "gpu:4")
    assert "-n 49 -N 13 --ntasks-per-node=4 " in jobs[big]["shell"]
    small = lines["results/runs/kron-s20/2d/gpu-1x2-scan"]
    assert (small["--nodes"], small["--ntasks-per-node"], small["--gres"]) == ("1", "2", "gpu:2")
    cpu = lines["results/runs/kron-s20/2d/cpu-4x4-scan"]
    assert (cpu["--nodes"], cpu["--ntasks-per-node"], cpu["--cpus-per-task"]) == ("2", "8", "1")
    assert "--gpus" not in cpu and "--gres" not in cpu
    # memory is per node: the 49-rank job's node holds 4 ranks' share, the 2-rank job's 2
    per_rank = {out: j["resources"]["mem_mb"] / min(4, int(re.search(r"-n (\d+)", j["shell"])
                                                             .group(1)))
                for out, j in jobs.items() if "gpu-" in out}
    assert jobs[big]["resources"]["mem_mb"] < 4 * per_rank["results/runs/kron-s20/2d/gpu-1x2-scan"]


def test_local_rules_are_not_submitted(tmp_path):
    """Tables, figures, comparisons and downloads run where snakemake runs: no sbatch job each. A dry run
    executes everything locally and cannot show this, so the workflow is loaded through
    snakemake's API and its record of the `localrules` directives read."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (ConfigSettings, DeploymentSettings, OutputSettings,
                                          ResourceSettings, StorageSettings)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(seq_csr_config()))
    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
            deployment_settings=DeploymentSettings(),
            config_settings=ConfigSettings(configfiles=[tmp_path / "config.yaml"]),
            snakefile=ROOT / "Snakefile", workdir=tmp_path)._workflow
        rules = {rule.name for rule in workflow.rules}
        local = set(workflow._localrules)
    assert local == {"all", "table", "figure", "tables", "figures", "compare", "landing",
                     "snap_download"}
    assert {"kronecker", "lattice", "snap_convert", "partition", "bfs_serial", "bfs_single_rank",
            "bfs_mpi", "validate"} == rules - local


def test_runtime_grows_on_retry_up_to_the_cap(tmp_path):
    """A job's runtime doubles with each attempt and stops at cluster.max_runtime; the
    estimate itself follows the backend's rate."""
    seconds = jobsize.bfs_seconds(2**29, 30, 65, 1, "gpu")
    first = jobsize.runtime_minutes(seconds, 1, 1440)
    assert jobsize.runtime_minutes(seconds, 2, 1440) == 2 * first
    assert jobsize.runtime_minutes(seconds, 3, 1440) == 4 * first
    assert jobsize.runtime_minutes(seconds, 9, 1440) == 1440
    cpu = jobsize.runtime_minutes(jobsize.bfs_seconds(2**29, 30, 65, 1, "cpu"))
    assert cpu > 20 * first     # the CPU rate is 50x below the GPU's
    with pytest.raises(ValueError, match="attempt 0"):
        jobsize.runtime_minutes(seconds, 0)
    with pytest.raises(ValueError, match="backend 'tpu'"):
        jobsize.bfs_seconds(10, 1, 1, 1, "tpu")
    # the same through the workflow: the cap is the config's
    config = {"results": "results", "roots": 64, "cluster": {"max_runtime": 90},
              "graphs": {"kronecker": {"kron-s25": {"scale": 25}}},
              "experiments": {"implementations": {"graphs": ["kron-s25"],
                                                  "algorithms": ["seq-csr"]}}}
    runtimes = {j["rule"]: j["resources"]["runtime"] for j in plan(tmp_path, config)
                if not j["local"]}
    assert runtimes["bfs_serial"] == 90, runtimes     # a CPU run at scale 25: capped
    assert runtimes["kronecker"] < 90, runtimes


def test_memory_is_per_node_and_capped():
    assert jobsize.node_mem_mb(1000, 64, 4) == 4000
    assert jobsize.node_mem_mb(1000, 3, 4) == 3000
    assert jobsize.node_mem_mb(1000, 64, None) == 64000    # one node: all ranks
    assert jobsize.node_mem_mb(1000, 64, 4, cap_mb=2500) == 2500
    assert jobsize.nodes_for(49, 4) == 13 and jobsize.nodes_for(64, 4) == 16
    assert jobsize.shape(4, 4, 1) == {"tasks": 4, "nodes": 4, "tasks_per_node": None,
                                      "gpu": None, "tasks_per_gpu": None, "gres": "gpu:1",
                                      "cpus_per_task": -1}


def test_a_job_asks_for_its_one_rank_threads():
    """One rank of several threads asks for them (a GPU job then without --ntasks-per-gpu:
    tasks_per_gpu 0); a job of several ranks asks for one CPU a task whatever its threads."""
    assert jobsize.shape(1, 1, None, 12) == {"tasks": 1, "nodes": None, "tasks_per_node": None,
                                             "gpu": 1, "tasks_per_gpu": 0, "gres": None,
                                             "cpus_per_task": 12}
    assert jobsize.shape(1, 1, 4, 12)["nodes"] == 1
    assert jobsize.shape(1, 1, None, 1)["tasks_per_gpu"] == 1
    assert jobsize.shape(1, 1, None, 1)["cpus_per_task"] == -1
    assert jobsize.shape(4, 4, None, 4)["cpus_per_task"] == -1
    assert jobsize.shape(1, 0, None, 3)["cpus_per_task"] == 3
    assert jobsize.shape(8, 0, None, 8)["cpus_per_task"] == 1
    with pytest.raises(ValueError, match="threads 0"):
        jobsize.shape(1, 1, None, 0)


def seq_csr_config(**keys) -> dict:
    """One seq-csr run on a scale-8 graph, with these top-level keys added."""
    return {"results": "results", **keys,
            "graphs": {"kronecker": {"kron-s8": {"scale": 8}}},
            "experiments": {"implementations": {"graphs": ["kron-s8"],
                                                "algorithms": ["seq-csr"]}}}


def refusal(workdir, config: dict) -> str:
    """What snakemake says when it refuses this config (it must)."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.run(["snakemake", "-n", "-d", str(workdir), "--configfile",
                           str(workdir / "config.yaml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode != 0, proc.stdout[-2000:]
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("cluster, says", [
    ({"gpus_per_node": 0}, "0 is less than the minimum of 1"),
    ({"max_runtime": "1 day"}, "'1 day' is not of type 'integer'"),
    ({"gpus_per_node": 4, "gpus": 4}, "'gpus' was unexpected"),
    ({"mem_mb_per_node": -5}, "-5 is less than the minimum of 100"),
])
def test_schema_refuses_bad_cluster_values(tmp_path, cluster, says):
    said = refusal(tmp_path, seq_csr_config(cluster=cluster))
    assert says in said and "cluster" in said, said[-3000:]


def test_exclusive_gpus_and_gpus_per_node_are_refused_together(tmp_path):
    said = refusal(tmp_path, seq_csr_config(exclusive_gpus=2, cluster={"gpus_per_node": 4}))
    assert "exclusive_gpus (2)" in said and "cluster.gpus_per_node (4)" in said, said[-3000:]


def test_share_gpus_is_refused_with_cluster_keys_and_under_the_slurm_executor(tmp_path):
    """share_gpus hands out one machine's GPUs by lock files: refused beside cluster keys (the
    plan's check), and under a cluster's executor before the first job is submitted (onstart;
    a dry run does not get there). sbatch & co. are stubs here: even on a SLURM login node a
    check that let it through would submit nothing."""
    said = refusal(tmp_path, seq_csr_config(share_gpus=True, cluster={"gpus_per_node": 4}))
    assert "config: share_gpus is for one box run locally and cluster (gpus_per_node: 4" in said, \
        said[-3000:]
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for tool in ("sbatch", "squeue", "sacct", "scancel", "sinfo", "scontrol"):
        (stubs / tool).write_text(f"#!/bin/sh\necho {tool} >> {tmp_path}/called\nexit 1\n")
        (stubs / tool).chmod(0o755)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(seq_csr_config(share_gpus=True)))
    proc = subprocess.run(["snakemake", "--profile", "slurm", "-d", str(tmp_path),
                           "--configfile", str(tmp_path / "config.yaml")], cwd=ROOT,
                          env={**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}"},
                          capture_output=True, text=True, timeout=1200)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config: share_gpus is for one box run locally (its GPU " \
        "jobs take this machine's GPUs as slots); a cluster's executor" in said, said[-3000:]
    # (the plugin asks scontrol about the cluster as it starts; nothing was submitted)
    called = (tmp_path / "called").read_text().split() if (tmp_path / "called").exists() else []
    assert "sbatch" not in called and not (tmp_path / "results").exists(), called
