"""Configs and checks for tests/slurm/run_cluster_test.sh.

    check_cluster_run.py write-config CONFIG REPO [GPUS_PER_NODE]
                                    the tiny config (1-4 ranks, GPUs requested), its jobs shaped
                                    as nodes of GPUS_PER_NODE (cluster.gpus_per_node) if given
    check_cluster_run.py run-targets CONFIG [multi-rank]
                                    its run directories (only those of several ranks)
    check_cluster_run.py write-slow-config CONFIG      one seq-list run that takes minutes
    check_cluster_run.py check SLURM_DIR LOCAL_DIR JOBS_TXT SNAKEMAKE_LOG [CONFIG]
                                    the runs of CONFIG (default SLURM_DIR/config.yaml; with
                                    gpus_per_node its multi-rank runs) against scontrol and the
                                    local run
    check_cluster_run.py check-retry RUN_DIR JOBS_TXT SNAKEMAKE_LOG
                                    a run whose first attempt SLURM killed at its limit
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


# The threads the cluster run gives its one-rank serial searches (`--set-threads
# bfs_serial=N`): each such job, a GPU-shaped one, must then hold N CPUs (--cpus-per-task),
# as a hybrid run holds its HYBRID_THREADS, and its job step's srun must start with them.
SERIAL_THREADS = 2


def tiny_config(repo: Path, gpus_per_node: int | None = None) -> dict:
    config = {
        "results": "results",
        "roots": 4,
        "save_parents": 1,
        # every BFS job asks SLURM for one (fake) GPU per rank, though the backend is cpu
        "request_gpus": "always",
        "graphs": {
            "kronecker": {"kron-s8": {"scale": 8, "edgefactor": 8},
                          "kron-s9": {"scale": 9, "edgefactor": 8}},
            "snap": {"email-Eu-core": {
                "path": str(repo / "data" / "snap" / "email-Eu-core.txt"),
                "sha256": "f1042d365764967ce66a70e1a697adbc53353c7f46283e8d1d8d1737c5e51213"}},
        },
        "experiments": {
            "strong_scaling": {"graph": "kron-s9", "algorithm": "2d", "ranks": [1, 2, 4]},
            "real_graphs": {"graphs": ["email-Eu-core"], "algorithms": ["seq-csr", "2d"],
                            "ranks": 4},
            "implementations": {"graphs": ["kron-s8"], "algorithms": ["seq-list", "1d"],
                                "ranks": 2},
        },
    }
    if gpus_per_node:
        config["cluster"] = {"gpus_per_node": gpus_per_node}
    return config


def multi_rank(runs: dict[str, int]) -> dict[str, int]:
    """The runs the node-shaped pass repeats: strong scaling's of several ranks (2 and 4, one
    of each is enough to see the shape; fewer jobs keep the test short)."""
    return {run: ranks for run, ranks in runs.items()
            if ranks > 1 and run.startswith("results/runs/kron-s9/")}


def slow_config() -> dict:
    return {
        "results": "results",
        "roots": 48,
        "save_parents": 1,
        "graphs": {"kronecker": {"kron-s18": {"scale": 18, "edgefactor": 16}}},
        "experiments": {"implementations": {"graphs": ["kron-s18"], "algorithms": ["seq-list"]}},
    }


def expected_runs(config: dict) -> dict[str, int]:
    """run directory (relative to the work dir) -> ranks."""
    from bfs.algorithms import ALGORITHMS
    from bfs.partition import squarest_grid
    runs = {}

    def add(graph, algorithm, ranks):
        if not ALGORITHMS[algorithm].distributed:
            name, ranks = f"{algorithm}/cpu-serial-default", 1
        elif algorithm == "1d":
            name = f"1d/cpu-p{ranks}-default"
        else:
            r, c = squarest_grid(ranks)
            name = f"2d/cpu-{r}x{c}-scan"
        runs[f"results/runs/{graph}/{name}"] = ranks

    exp = config["experiments"]
    for ranks in exp["strong_scaling"]["ranks"]:
        add(exp["strong_scaling"]["graph"], exp["strong_scaling"]["algorithm"], ranks)
    for key in ("real_graphs", "implementations"):
        for graph in exp[key]["graphs"]:
            for algorithm in exp[key]["algorithms"]:
                add(graph, algorithm, exp[key].get("ranks", 1))
    return runs


def validation_file(run: str) -> str:
    return run.replace("results/runs/", "results/validation/", 1) + ".json"


def fail(msg: str) -> None:
    print(f"check: {msg}", file=sys.stderr)
    sys.exit(1)


def scontrol_jobs(path: Path) -> dict[str, dict]:
    jobs = {}
    for line in path.read_text().splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if "JobId" in fields:
            jobs[fields["JobId"]] = fields
    return jobs


def tres_gpus(value: str | None) -> int:
    """GPUs in a TRES field of `scontrol show job`: `gres/gpu:N` on Slurm >= 23.x, `gres:gpu:N`
    on 22.05 (a typed `gres/gpu:TYPE:N` too); 0 without one."""
    match = re.search(r"gres[:/]gpu(?::[^:,]+)?:(\d+)", value or "")
    return int(match.group(1)) if match else 0


def job_gpus(job: dict) -> int:
    """GPUs a job asked for: --gpus (TresPerJob) or --gres per node (TresPerNode) x nodes."""
    return tres_gpus(job.get("TresPerJob")) or \
        tres_gpus(job.get("TresPerNode")) * int(job.get("NumNodes", "1").split("-")[0])


def check(work: Path, local: Path, jobs_txt: Path, snakemake_log: Path,
          config_file: Path | None = None) -> None:
    config = yaml.safe_load((config_file or work / "config.yaml").read_text())
    runs = expected_runs(config)
    per_node = config.get("cluster", {}).get("gpus_per_node")
    if per_node:    # the node-shaped pass reruns the multi-rank runs only
        runs = multi_rank(runs)
    jobs = scontrol_jobs(jobs_txt)
    log = snakemake_log.read_text()

    # every job of the workflow went through sbatch: the plugin's submissions, SLURM's records
    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+)", log)
    n_jobs = re.search(r"^total\s+(\d+)", log, re.M)
    if not submitted:
        fail("no 'submitted with SLURM jobid' lines in the snakemake log")
    if not n_jobs or len(submitted) != int(n_jobs.group(1)):
        fail(f"{len(submitted)} sbatch submissions for {n_jobs.group(1)} jobs")
    for jobid in submitted:
        state = jobs.get(jobid, {}).get("JobState")
        if state != "COMPLETED":
            fail(f"SLURM job {jobid}: state {state} (scontrol show job)")
    print(f"check: {len(submitted)} jobs submitted with sbatch, all COMPLETED in scontrol")

    for run, ranks in runs.items():
        info = json.loads((work / run / "run.json").read_text())
        env, params = info["environment"], info["parameters"]
        jobid = env["slurm_job_id"]
        if not info["valid"]:
            fail(f"{run}: run marked invalid")
        if jobid not in submitted:
            fail(f"{run}: SLURM job {jobid} is not one the workflow submitted")
        job = jobs[jobid]
        if params["mpi_size"] != ranks or env["mpi_size"] != ranks:
            fail(f"{run}: mpi_size {params['mpi_size']}, expected {ranks}")
        if int(job["NumTasks"]) != ranks:
            fail(f"{run}: SLURM job {jobid} had NumTasks={job['NumTasks']}, expected {ranks}")
        if not per_node and "-serial-" in run and int(job["NumCPUs"]) != SERIAL_THREADS:
            fail(f"{run}: SLURM job {jobid} had NumCPUs={job['NumCPUs']}, expected the "
                 f"{SERIAL_THREADS} threads --set-threads gave it")
        if job_gpus(job) != ranks:
            fail(f"{run}: SLURM job {jobid} did not ask for {ranks} GPUs: "
                 f"TresPerJob={job.get('TresPerJob')} TresPerNode={job.get('TresPerNode')}")
        if per_node and (job.get("NumNodes") != "1" or tres_gpus(job.get("TresPerNode")) != ranks):
            fail(f"{run}: SLURM job {jobid} is not one node of {ranks} GPUs (--gres per node): "
                 f"NumNodes={job.get('NumNodes')} TresPerNode={job.get('TresPerNode')}")
        if ranks > 1 and "MPICH" not in (env.get("mpi_library") or ""):
            fail(f"{run}: run.json does not name the MPI library that ran (the venv's MPICH): "
                 f"{env.get('mpi_library')!r}")
        if not env["slurm"].get("SLURM_JOB_NODELIST"):
            fail(f"{run}: no node list recorded")
        ranks_seen = env["ranks"]
        if len(ranks_seen) != ranks:
            fail(f"{run}: {len(ranks_seen)} rank records")
        if ranks > 1:
            if sorted(int(r["slurm_procid"]) for r in ranks_seen) != list(range(ranks)):
                fail(f"{run}: ranks were not one srun task each: {ranks_seen}")
            # the device each rank drives: the one it sees, or its local turn among several
            from bfs.harness.envinfo import gpu_index
            used = set()
            for r in ranks_seen:
                visible = (r["cuda_visible_devices"] or "").split(",")
                if not visible[0]:
                    fail(f"{run}: a rank saw no CUDA_VISIBLE_DEVICES: {r}")
                used.add((r["hostname"], visible[gpu_index(r["local_rank"], len(visible))]))
            if len(used) != ranks:
                fail(f"{run}: ranks share GPUs: {ranks_seen}")
        elif not env["slurm"].get("CUDA_VISIBLE_DEVICES"):
            fail(f"{run}: the one-rank job saw no GPU")
        mine = pq.read_table(work / run / "searches.parquet").to_pandas()
        ref = pq.read_table(local / run / "searches.parquet").to_pandas()
        cols = ["root", "depth", "nedge", "reached", "valid"]
        a = mine[cols].sort_values("root").reset_index(drop=True)
        b = ref[cols].sort_values("root").reset_index(drop=True)
        if not a.equals(b):
            fail(f"{run}: searches differ from the local run\n{a}\n{b}")
        print(f"check: {run}: {ranks} rank(s) in SLURM job {jobid} "
              f"({job['NodeList']}, {job_gpus(job)} GPUs asked), GPUs "
              f"{[r['cuda_visible_devices'] for r in ranks_seen]}, searches equal the local run")
        verdict = json.loads((work / validation_file(run)).read_text())
        if not verdict["valid"]:
            fail(f"{run}: the validation job found it invalid")
    print(f"check: {len(runs)} runs checked, each validated by its own SLURM job")


def check_retry(run_dir: Path, jobs_txt: Path, snakemake_log: Path) -> None:
    """The slow run: its first job ended in TIMEOUT at 1 minute, snakemake submitted it again
    with 30 and that one completed a valid run."""
    info = json.loads((run_dir / "run.json").read_text())
    if not (info["valid"] and info["parameters"]["n_roots"] == 48):
        fail(f"{run_dir}: not a valid run of 48 roots: {info['parameters']}")
    jobid = info["environment"]["slurm_job_id"]
    if not jobid:
        fail(f"{run_dir}: did not run under SLURM")
    jobs = scontrol_jobs(jobs_txt)
    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+)",
                           snakemake_log.read_text())
    # the BFS job's attempts (the plugin comments each job with its rule), not the graph's
    attempts = [j for j in submitted
                if jobs.get(j, {}).get("Comment", "").startswith("rule_bfs_serial_")]
    got = [(jobs[j].get("JobState"), jobs[j].get("TimeLimit")) for j in attempts]
    if got != [("TIMEOUT", "00:01:00"), ("COMPLETED", "00:30:00")]:
        fail(f"expected a TIMEOUT at 1 minute, then a completed retry of 30: {got}")
    if attempts[-1] != jobid:
        fail(f"run.json names SLURM job {jobid}, the retry was {attempts[-1]}")
    print(f"check: job {attempts[0]} TIMEOUT at 00:01:00, retry {jobid} COMPLETED, run valid")


def main(argv: list[str]) -> None:
    cmd, *args = argv
    if cmd == "write-config":
        per_node = int(args[2]) if len(args) > 2 else None
        Path(args[0]).write_text(yaml.safe_dump(tiny_config(Path(args[1]), per_node)))
    elif cmd == "write-slow-config":
        Path(args[0]).write_text(yaml.safe_dump(slow_config()))
    elif cmd == "run-targets":
        runs = expected_runs(yaml.safe_load(Path(args[0]).read_text()))
        print(" ".join(multi_rank(runs) if args[1:] == ["multi-rank"] else runs))
    elif cmd == "validation-targets":
        runs = expected_runs(yaml.safe_load(Path(args[0]).read_text()))
        print(" ".join(validation_file(run) for run in runs))
    elif cmd == "serial-threads":
        print(SERIAL_THREADS)
    elif cmd == "check":
        check(*map(Path, args))
    elif cmd == "check-retry":
        check_retry(*map(Path, args))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
