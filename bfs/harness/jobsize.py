"""What a workflow job asks a batch scheduler for (the `slurm` profile): its shape (nodes,
tasks, GPUs), memory per node and runtime. Pure functions of the config's numbers, so that
workflow/rules/common.smk and the tests share them.

Runtime is estimated from rates measured in BENCHMARKS.md, each taken well below the slowest
algorithm measured on that backend, times a margin; it doubles with every retry (snakemake
`--retries`: a job killed at its limit comes back with twice the time) and never exceeds the
config's maximum walltime. Memory is asked per node (SLURM's `--mem`), from the ranks that node
holds.
"""
from __future__ import annotations

import math

# Edge visits per second a whole BFS job sustains, searching and validating, by backend.
# cpu: seq-list, the slowest CPU code, ran at 3.2 M TEPS (2-core box, scale 18) and 1d at 7.5 M
# on one rank (scale 21); 2 M is below both. gpu: the slowest GPU codes on a Kronecker graph
# ran at 0.42 (hybrid) and 0.72 (gpu-out-of-core) GTEPS at scale 24, 2d on 1-2 GPUs at 7-42;
# 0.1 GTEPS is 4x below the slowest. auto searches on the GPU it asks for.
SEARCH_RATE = {"cpu": 2e6, "gpu": 1e8, "auto": 1e8}
# Seconds per BFS level beyond the edge work: what high-diameter graphs cost (hybrid spent
# ~1.1 ms a level on a lattice, the distributed GPU codes 0.15-0.3 ms in their exchanges).
LEVEL_SECONDS = 0.005
# Edges per second each rank reads from its graph or partition files and builds Kernel 1 from
# (2d on one CPU rank: 4.2 M edges in 1.5 s at scale 18, JIT included).
LOAD_RATE = 2e6
# Edges per second of each pass of the one-process rules (generate, convert, partition,
# validate): the Kronecker generator wrote 12 M edges/s end to end on 2 cores, partitioning
# ran at ~7-8 M directed edges/s per process before it was threaded.
SERIAL_RATE = 4e6
# Python, Numba and CUDA start-up, JIT and compilation, queue-side slack (minutes).
BASE_MINUTES = 5
MARGIN = 3


def nodes_for(ranks: int, per_node: int | None) -> int:
    """Nodes a job of `ranks` ranks spans when each node holds at most `per_node` of them."""
    if not per_node:
        return 1
    return math.ceil(ranks / per_node)


def ranks_on_a_node(ranks: int, per_node: int | None) -> int:
    """Ranks the fullest node of the job holds."""
    return min(ranks, per_node) if per_node else ranks


def node_mem_mb(per_rank_mb: float, ranks: int, per_node: int | None,
                cap_mb: int | None = None) -> int:
    """SLURM's --mem is per node: the ranks one node holds times what each needs, rounded up
    to 100 MB and at most the node's `cap_mb` (asking for more could never be scheduled)."""
    mem = int(math.ceil(ranks_on_a_node(ranks, per_node) * per_rank_mb / 100.0) * 100)
    return min(mem, cap_mb) if cap_mb else mem


def bfs_seconds(edges: int, depth: int, searches: int, ranks: int, backend: str) -> float:
    """Seconds of a BFS run: every rank reads and builds its share of the edges, then each
    search (roots plus the warm-up) visits the edges about twice and its validation once more,
    at the backend's rate, plus a cost per level. Ranks are not assumed to speed the searches
    up (distributed runs on small graphs are often slower than one rank)."""
    if backend not in SEARCH_RATE:
        raise ValueError(f"backend {backend!r}: no search rate (one of {', '.join(SEARCH_RATE)})")
    load = edges / ranks / LOAD_RATE
    search = searches * (3 * edges / SEARCH_RATE[backend] + depth * LEVEL_SECONDS)
    return load + search


def serial_seconds(edges: int, passes: float) -> float:
    """Seconds of a one-process rule that reads or writes the edge list `passes` times."""
    return passes * edges / SERIAL_RATE


def runtime_minutes(seconds: float, attempt: int = 1, max_minutes: int | None = None) -> int:
    """Walltime (minutes) to ask for: start-up plus the estimate times the margin, doubled for
    each retry (attempt 2 asks twice the first, 3 four times), at most `max_minutes`."""
    if attempt < 1:
        raise ValueError(f"attempt {attempt}: snakemake counts attempts from 1")
    minutes = (BASE_MINUTES + math.ceil(MARGIN * seconds / 60)) * 2 ** (attempt - 1)
    return min(minutes, max_minutes) if max_minutes else minutes


def launcher_args(ranks: int, launcher: str, nodes: int | None, per_node: int | None) -> str:
    """The launcher's arguments for a run of `ranks` ranks: `-n P`, and for srun across
    nodes also the placement, since jobstep >= 0.6.1 starts the job's command without the
    batch step's SLURM_* variables (SLURM_NNODES, SLURM_NTASKS_PER_NODE) from which srun
    would otherwise take it: without them srun may pack every rank onto the first node."""
    args = f"-n {ranks}"
    if nodes and launcher.split()[:1] == ["srun"]:
        args += f" -N {nodes}"
        if per_node:
            args += f" --ntasks-per-node={ranks_on_a_node(ranks, per_node)}"
    return args


def shape(ranks: int, gpus: int, per_node: int | None, threads: int = 1) -> dict:
    """Task, node and GPU resources of a BFS job of `ranks` ranks asking for `gpus` GPUs
    (0: a CPU job) whose one-rank process runs `threads` threads (a hybrid run's CPU tasks;
    a job of several ranks runs one a rank), in the keys snakemake-executor-plugin-slurm turns
    into sbatch flags. None means "leave the flag out" (snakemake drops resources that
    evaluate to None).

    - GPU jobs carry no CPU flag (cpus_per_task -1): on Slurm >= 23.x `--cpus-per-task`
      makes the batch step export SLURM_TRES_PER_TASK, and an inner srun that inherits it
      beside --ntasks-per-gpu's SLURM_NTASKS_PER_GPU stops ("mutually exclusive"); jobstep
      0.6.0 passes both on. A task gets one CPU by default.
    - Except a one-rank GPU job of several threads: it is `--gpus=1 --cpus-per-task=T` with
      no --ntasks-per-gpu (tasks_per_gpu 0, which the plugin leaves out; one task is SLURM's
      default), so the job step's srun gets its T cores and nothing it cannot combine them
      with. Without them Numba's T threads would share the one CPU of the allocation.
    - Without a node size (per_node None) a GPU job is `--ntasks=P --ntasks-per-gpu=1
      --gpus=P`: SLURM places it and binds each task to its own GPU.
    - With one, a job of several ranks is `--nodes=N --ntasks-per-node=K --gres=gpu:K` (K
      ranks and K GPUs a node; --ntasks-per-gpu does not combine with --ntasks-per-node),
      each rank picking the GPU of its SLURM_LOCALID; the last node of an uneven job gets the
      remainder of the ranks (the launcher is told -n P). The plugin takes only one of `tasks`
      and `tasks_per_node` for an MPI job, and tasks_per_node only above 1, so a job of one
      rank a node is `--nodes=P --ntasks=P`.
    - A one-rank job stays `--gpus=1` (the job step's srun asks for exactly that).
    - CPU jobs: `--ntasks=P --cpus-per-task=1` (a one-rank job: its threads), or with a node
      size the same node shape without GPUs.
    """
    threads = threads if ranks == 1 else 1
    if threads < 1:
        raise ValueError(f"threads {threads}: a job runs at least one")
    # gpu 0 rather than None on CPU jobs: a local `--resources gpu=N` sees them ask for none;
    # a GPU job's CPU flag only where its one rank runs several threads
    out = {"tasks": ranks, "nodes": None, "tasks_per_node": None, "gpu": 0 if not gpus else None,
           "tasks_per_gpu": None, "gres": None,
           "cpus_per_task": -1 if gpus and threads == 1 else threads}
    if per_node and ranks > 1:
        nodes, per = nodes_for(ranks, per_node), ranks_on_a_node(ranks, per_node)
        out["nodes"] = nodes
        if per > 1:
            out["tasks"], out["tasks_per_node"] = None, per
        if gpus:
            out["gres"] = f"gpu:{per}"
        return out
    if gpus:
        # several threads: no --ntasks-per-gpu beside their --cpus-per-task
        out["gpu"], out["tasks_per_gpu"] = gpus, 1 if threads == 1 else 0
        if per_node:
            out["nodes"] = 1
    return out
