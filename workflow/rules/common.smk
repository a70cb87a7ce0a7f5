# Shared helpers: config validation, the run-path convention, and what each experiment needs.
import math
import os
import re
import shlex

from snakemake.utils import validate

from bfs.algorithms import ALGORITHMS
from bfs.partition import squarest_grid

validate(config, schema="../schemas/config.schema.yaml")

RESULTS = config["results"]
# `--cache DIR` for the rules that make graphs and partitions, when the config names a cache
CACHE_ARG = f"--cache {shlex.quote(config['cache'])}" if config.get("cache") else ""
KRONECKER = config["graphs"].get("kronecker", {})
SNAP = config["graphs"].get("snap", {})
EXPERIMENTS = config["experiments"]

# Every shell command finds the package in this checkout, with or without `pip install`.
shell.prefix(
    "set -euo pipefail; export PYTHONPATH="
    + shlex.quote(str(workflow.basedir))
    + "${{PYTHONPATH:+:$PYTHONPATH}}; "
)


def names_regex(names):
    """A wildcard constraint matching exactly these names (never matches if there are none)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def known_graphs():
    return set(KRONECKER) | set(SNAP)


def check_graph_names():
    used = set()
    exp = EXPERIMENTS
    if "strong_scaling" in exp:
        used.add(exp["strong_scaling"]["graph"])
    for point in exp.get("weak_scaling", {}).get("points", []):
        used.add(point["graph"])
    for key in ("real_graphs", "implementations"):
        used.update(exp.get(key, {}).get("graphs", []))
    missing = used - known_graphs()
    if missing:
        raise ValueError(
            f"config: experiments use graphs not defined under graphs: {sorted(missing)}"
        )
    both = set(KRONECKER) & set(SNAP)
    if both:
        raise ValueError(f"config: graph names defined twice: {sorted(both)}")


check_graph_names()

wildcard_constraints:
    graph="[A-Za-z0-9][A-Za-z0-9._-]*",
    algorithm="|".join(re.escape(a) for a in ALGORITHMS),
    backend="cpu|gpu|auto",
    layout="serial|[0-9]+x[0-9]+|p[0-9]+",
    variant="default|scan|wave",


def run_id(algorithm, backend, ranks=1, exchange="scan"):
    """The run directory's name below runs/{graph}/: algorithm/backend-layout-variant.

    layout: 'serial' for one process, 'RxC' for 2d (the squarest grid of `ranks`), 'pP' for 1d.
    """
    if not ALGORITHMS[algorithm].distributed:
        return f"{algorithm}/{backend}-serial-default"
    if algorithm == "1d":
        return f"{algorithm}/{backend}-p{ranks}-default"
    rows, cols = squarest_grid(ranks)
    return f"{algorithm}/{backend}-{rows}x{cols}-{exchange}"


def run_dir(graph, run):
    return f"{RESULTS}/runs/{graph}/{run}"


def validation_file(graph, run):
    return f"{RESULTS}/validation/{graph}/{run}.json"


def layout_ranks(layout):
    if layout == "serial":
        return 1
    if layout.startswith("p"):
        return int(layout[1:])
    rows, cols = layout.split("x")
    return int(rows) * int(cols)


def experiment_runs(name):
    """(graph, run id) pairs an experiment needs, in a stable order."""
    exp = EXPERIMENTS.get(name)
    if not exp:
        return []
    exchanges = exp.get("exchange", ["scan"])
    backend = exp.get("backend", "cpu")
    runs = []
    if name == "strong_scaling":
        for ranks in exp["ranks"]:
            for ex in exchanges:
                runs.append((exp["graph"], run_id(exp["algorithm"], backend, ranks, ex)))
    elif name == "weak_scaling":
        for point in exp["points"]:
            for ex in exchanges:
                runs.append(
                    (point["graph"], run_id(exp["algorithm"], backend, point["ranks"], ex))
                )
    else:
        for graph in exp["graphs"]:
            for algorithm in exp["algorithms"]:
                for ex in exchanges:
                    runs.append(
                        (graph, run_id(algorithm, backend, exp.get("ranks", 1), ex))
                    )
    return list(dict.fromkeys(runs))


def experiment_run_dirs(*names):
    return list(
        dict.fromkeys(run_dir(g, r) for name in names for g, r in experiment_runs(name))
    )


def experiment_validations(*names):
    return list(
        dict.fromkeys(
            validation_file(g, r) for name in names for g, r in experiment_runs(name)
        )
    )


def all_validations():
    return experiment_validations(*EXPERIMENTS)


# table name -> (report kind, experiments whose runs feed it)
TABLES = {
    "strong_scaling": ("strong_scaling", ["strong_scaling"]),
    "weak_scaling": ("weak_scaling", ["weak_scaling"]),
    "real_graphs": ("graphs", ["real_graphs"]),
    "implementations": ("graphs", ["implementations"]),
    "kernel1": ("kernel1", list(EXPERIMENTS)),
}
# figure name -> (report kind, experiments whose runs feed it)
FIGURES = {
    "strong_scaling": ("strong_scaling", ["strong_scaling"]),
    "weak_scaling": ("weak_scaling", ["weak_scaling"]),
    "frontier": ("frontier", ["strong_scaling", "real_graphs"]),
    "comm_vs_compute": ("comm_vs_compute", ["strong_scaling", "weak_scaling"]),
    "teps_vs_scale": ("teps_vs_scale", ["implementations"]),
}


def wanted(mapping):
    return [
        name
        for name, (_, experiments) in mapping.items()
        if any(e in EXPERIMENTS for e in experiments)
    ]


def all_tables():
    return [
        f"{RESULTS}/tables/{name}.{ext}" for name in wanted(TABLES) for ext in ("csv", "md")
    ]


def all_figures():
    return [
        f"{RESULTS}/figures/{name}.{ext}"
        for name in wanted(FIGURES)
        for ext in ("png", "svg")
    ]


# --- inputs and arguments of single rules ---------------------------------------------


def kronecker_args(wc):
    p = KRONECKER[wc.graph]
    seeds = " ".join(str(s) for s in p.get("seeds", [2, 3]))
    return (
        f"--scale {p['scale']} --edgefactor {p.get('edgefactor', 16)} --seeds {seeds}"
        f" --graph500-version {p.get('graph500_version', '3.0')}"
    )


def snap_input(wc):
    entry = SNAP[wc.graph]
    return entry.get("path") or f"{RESULTS}/downloads/{wc.graph}.txt"


def partition_args(wc):
    if wc.layout.startswith("p"):
        return f"--1d {wc.layout[1:]}"
    return f"--grid {wc.layout}"


def run_options(wc):
    if wc.algorithm == "2d":
        return f"--exchange {wc.variant}"
    if wc.algorithm == "1d":
        return f"--small-frontier {config['small_frontier']}"
    return ""


def job_ranks(wc):
    return layout_ranks(wc.get("layout", "serial"))


def bfs_env(wc):
    """A BFS job's conda environment, by what the job runs: CuPy's (envs/gpu.yaml) for
    --backend gpu, and for auto, which searches on a GPU whenever CuPy sees one (both ask for
    GPUs, see gpus); envs/cpu.yaml for cpu runs, also on GPU nodes (request_gpus: always)."""
    return "../../envs/gpu.yaml" if wc.backend in ("gpu", "auto") else "../../envs/cpu.yaml"


def gpus(wc):
    """GPUs a BFS job asks for: one per rank (each rank drives its own device)."""
    if wc.backend in ("gpu", "auto") or config.get("request_gpus", "auto") == "always":
        return job_ranks(wc)
    return 0


# --- job sizes for a batch scheduler (runtime in minutes, mem_mb per job) ----------------
# Estimated from what the config says about a graph, before it exists: a Kronecker graph has
# edgefactor * 2^scale edges, a local SNAP file about one edge per 16 bytes. Generous on
# purpose: a job killed at its limit costs more than an idle reservation.


def graph_size(graph):
    """(vertices, undirected input edges) of a configured graph, estimated."""
    if graph in KRONECKER:
        p = KRONECKER[graph]
        n = 2 ** p["scale"]
        return n, n * p.get("edgefactor", 16)
    path = SNAP.get(graph, {}).get("path")
    try:
        m = max(1, os.path.getsize(path) // 16) if path else 10**7
    except OSError:
        m = 10**7
    return m, m


def mem_mb_for(graph, ranks=1, per_edge=64, per_vertex=40, base=1500):
    """A job's memory: per rank a fixed Python/Numba/Arrow base, its share of the edges and
    the vertex-length arrays every rank holds (frontiers, parents, levels)."""
    n, m = graph_size(graph)
    per_rank = base + (per_edge * m / ranks + per_vertex * n) / 2**20
    return int(math.ceil(ranks * per_rank / 100.0) * 100)


def runtime_for(graph, work_per_edge=1.0, base=10):
    """Minutes: a base plus a rate of 2 million edge-visits per second, with a wide margin."""
    _, m = graph_size(graph)
    return int(base + math.ceil(work_per_edge * m / 2e6 / 60 * 4))


def bfs_mem_mb(wc):
    return mem_mb_for(wc.graph, job_ranks(wc))


def bfs_runtime(wc):
    # every root is searched and validated, plus one warm-up search
    return runtime_for(wc.graph, work_per_edge=3 * (config["roots"] + 1))


def table_runs(wc):
    return experiment_run_dirs(*TABLES[wc.name][1])


def figure_runs(wc):
    return experiment_run_dirs(*FIGURES[wc.name][1])
