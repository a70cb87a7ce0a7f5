# Shared helpers: config validation, the run-path convention, and what each experiment needs.
# An algorithm's options come from the registry (bfs/algorithms/__init__.py): run ids and the
# `bfs run` flags of a run are written and read by bfs.algorithms.options, the schema's
# algorithm names and option keys are injected from it; no algorithm is named here.
import base64
import itertools
import json
import os
import re
import shlex
import tempfile
from pathlib import Path

import yaml
from snakemake.utils import validate

from bfs.algorithms import ALGORITHMS
from bfs.algorithms.options import (all_options, flags_text, variant_flags, variant_name,
                                    variant_regex)
from bfs.harness import jobsize
from bfs.partition import squarest_grid

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"


def config_schema():
    """The config schema: workflow/schemas/config.schema.yaml, the readable base, with the
    registry's algorithm names and sweepable option keys injected (tests check the file
    lists the package's own), so an algorithm added to the registry is configurable at once."""
    schema = yaml.safe_load(SCHEMA.read_text())
    definitions = schema["definitions"]
    definitions["algorithm"]["enum"] = list(ALGORITHMS)
    sweepable = {name: o for name, o in all_options().items() if o.sweep}
    definitions["sweep"]["properties"] = {
        name: {"type": "array", "items": o.schema(), "minItems": 1, "uniqueItems": True}
        for name, o in sweepable.items()}
    for name in ("exchange", "comm"):   # the experiments' lists of these options' values
        definitions[name]["items"] = sweepable[name].schema()
    return schema


def validate_config():
    # snakemake's validate reads a schema file (and fills the config's defaults from it)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / SCHEMA.name
        path.write_text(yaml.safe_dump(config_schema()))
        validate(config, schema=str(path))


validate_config()

RESULTS = config["results"]
# `--cache DIR` for the rules that make graphs and partitions, when the config names a cache
CACHE_ARG = f"--cache {shlex.quote(config['cache'])}" if config.get("cache") else ""
KRONECKER = config["graphs"].get("kronecker", {})
SNAP = config["graphs"].get("snap", {})
GRID = config["graphs"].get("grid", {})
EXPERIMENTS = config["experiments"]
# job shapes and limits for a batch scheduler (the slurm profile); none of it matters locally
CLUSTER = config.get("cluster", {})
MAX_RUNTIME = CLUSTER.get("max_runtime", 1440)

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
    return set(KRONECKER) | set(SNAP) | set(GRID)


# Experiments are data: each has a kind (default: its name, for the names that are kinds), its
# graphs, algorithms and layouts, and sweep axes (`sweep: {option: [values]}`, or an option's
# own key: `exchange: [scan, wave]`, `tasks: [...]`); two experiments of one kind sit side by
# side under different names, each with its own tables and figures.
KINDS = ("strong_scaling", "weak_scaling", "real_graphs", "implementations",
         "small_frontier_sweep", "task_count_sweep", "lambda_sweep")


def kind(name):
    return EXPERIMENTS[name].get("kind", name)


def listed(exp, one, many):
    """An experiment's `one: x` or `many: [x, ...]` as a list (the schema allows one of them)."""
    return list(exp[many]) if many in exp else [exp[one]]


def experiment_graphs(name):
    exp = EXPERIMENTS[name]
    if kind(name) in ("strong_scaling", "small_frontier_sweep"):
        return listed(exp, "graph", "graphs")
    if kind(name) == "weak_scaling":
        return [point["graph"] for point in exp["points"]]
    return list(exp["graphs"])


def experiment_algorithms(name):
    exp = EXPERIMENTS[name]
    if kind(name) == "strong_scaling":
        # COST (McSherry et al.): the best single-process search, a run per graph
        reference = [exp["reference"]] if "reference" in exp else []
        return listed(exp, "algorithm", "algorithms") + reference
    if kind(name) == "weak_scaling":
        return listed(exp, "algorithm", "algorithms")
    if kind(name) == "small_frontier_sweep":
        # the swept distributed algorithm, then the serial baseline (one run per graph)
        return [exp.get("algorithm", "1d"), exp.get("serial", "seq-csr")]
    if kind(name) in ("task_count_sweep", "lambda_sweep"):
        return [exp.get("algorithm", "hybrid")]
    return list(exp["algorithms"])


def check_graph_names():
    used = {g for name in EXPERIMENTS for g in experiment_graphs(name)}
    missing = used - known_graphs()
    if missing:
        raise ValueError(
            f"config: experiments use graphs not defined under graphs: {sorted(missing)}"
        )
    kinds = (KRONECKER, SNAP, GRID)
    both = {g for i, a in enumerate(kinds) for b in kinds[i + 1:] for g in set(a) & set(b)}
    if both:
        raise ValueError(f"config: graph names defined twice: {sorted(both)}")


def check_comm_choices():
    """comm: nccl moves device buffers, so it needs GPU runs; a cpu experiment exchanges
    through MPI only. (backend auto may resolve either way: nccl is taken as asked.)"""
    for name, exp in EXPERIMENTS.items():
        if exp.get("backend", "cpu") == "cpu" and "nccl" in experiment_axes(name).get("comm", []):
            raise ValueError(
                f"config: experiments.{name}: comm nccl exchanges device buffers between GPUs "
                "and needs backend: gpu; backend cpu runs exchange through MPI only "
                "(comm: [mpi], the default)"
            )


def check_exclusive_gpus():
    """With exclusive_gpus: N every GPU job asks for all N GPUs of the box: a run of more ranks
    could never start there."""
    box = config.get("exclusive_gpus", 0)
    if not box:
        return
    for name in EXPERIMENTS:
        for graph, (algorithm, backend, layout, _) in experiment_layouts(name):
            ranks = layout_ranks(layout)
            asks = backend != "cpu" or config.get("request_gpus") == "always"
            if asks and ranks > box:
                raise ValueError(
                    f"config: experiments.{name} runs {algorithm} on {graph} with {ranks} "
                    f"ranks ({layout}, a GPU each) but exclusive_gpus is {box}: raise "
                    "exclusive_gpus to the box's GPU count (and --resources gpu= with it) "
                    "or drop the run"
                )


def check_cluster():
    """exclusive_gpus makes every GPU job take a whole local box; gpus_per_node shapes jobs for
    a cluster's nodes: together they would ask a node for the box's GPU count per job."""
    if config.get("exclusive_gpus") and CLUSTER.get("gpus_per_node"):
        raise ValueError(
            f"config: exclusive_gpus ({config['exclusive_gpus']}) is for one box run locally "
            f"and cluster.gpus_per_node ({CLUSTER['gpus_per_node']}) for a cluster's nodes: "
            "set one of them"
        )


def check_backend_choices():
    """An experiment's algorithms must run on its backend: a GPU-only algorithm (merrill,
    merrill-do, gpu-quadratic) in a backend cpu experiment, or a CPU-only one (seq-csr, 2d-do,
    semiring, ...) in a backend gpu one, is refused here rather than failing its job. (auto
    picks at run time: not checked.)"""
    for name in EXPERIMENTS:
        backend = EXPERIMENTS[name].get("backend", "cpu")
        if backend == "auto":
            continue
        wrong = [a for a in experiment_algorithms(name)
                 if run_backend(name, a) not in ALGORITHMS[a].backends]
        if wrong:
            runs_on = "; ".join(f"{a} runs on {', '.join(ALGORITHMS[a].backends)}" for a in wrong)
            raise ValueError(
                f"config: experiments.{name} has backend {backend} but lists "
                f"{', '.join(wrong)}, which has no {backend} backend ({runs_on}): list "
                f"{'GPU' if backend == 'cpu' else 'CPU'} algorithms in an experiment of "
                f"backend: {'gpu' if backend == 'cpu' else 'cpu'} (config/one_gpu.yaml)"
            )


def run_backend(name, algorithm):
    """The backend an experiment runs an algorithm on: its `backend`, except the serial
    baseline of small_frontier_sweep, which runs on the CPU whatever the swept backend, and
    a strong-scaling COST reference without that backend, which runs on its own one."""
    exp = EXPERIMENTS[name]
    if kind(name) == "small_frontier_sweep" and algorithm == exp.get("serial", "seq-csr"):
        return "cpu"
    backend = exp.get("backend", "cpu")
    if kind(name) == "strong_scaling" and algorithm == exp.get("reference") \
            and backend not in ALGORITHMS[algorithm].backends:
        return ALGORITHMS[algorithm].backends[0]
    return exp.get("backend", "cpu")


def check_sweep():
    """Every option an experiment sets or sweeps is one that some algorithm of it declares
    (the others' runs ignore it: the serial baseline beside a swept 1d, 1d beside 2d's
    exchange)."""
    for name in EXPERIMENTS:
        algorithms = experiment_algorithms(name)
        for key in experiment_axes(name):
            if not any(o.name == key for a in algorithms for o in ALGORITHMS[a].options):
                raise ValueError(
                    f"config: experiments.{name} sweeps {key}, which none of its algorithms "
                    f"({', '.join(algorithms)}) takes")
    for name in EXPERIMENTS:
        if kind(name) == "small_frontier_sweep" \
                and ALGORITHMS[EXPERIMENTS[name].get("serial", "seq-csr")].distributed:
            raise ValueError(
                f"config: experiments.{name}: serial names the single-process "
                "baseline (seq-csr, seq-list)"
            )


def check_kinds():
    """An experiment named after a kind is of that kind (another name says its kind)."""
    for name, exp in EXPERIMENTS.items():
        if name in KINDS and exp.get("kind", name) != name:
            raise ValueError(f"config: experiments.{name} is of kind {name}; name an "
                             f"experiment of kind {exp['kind']} otherwise")


def check_reference():
    """COST compares the distributed runs with one process: a distributed reference would
    measure nothing."""
    for name in EXPERIMENTS:
        reference = EXPERIMENTS[name].get("reference") if kind(name) == "strong_scaling" \
            else None
        if reference and ALGORITHMS[reference].distributed:
            raise ValueError(
                f"config: experiments.{name}: reference names the single-process search "
                "that COST is measured against (seq-csr on the CPU, merrill-do on a GPU)"
            )


wildcard_constraints:
    graph="[A-Za-z0-9][A-Za-z0-9._-]*",
    algorithm="|".join(re.escape(a) for a in ALGORITHMS),
    backend="cpu|gpu|auto",
    layout="serial|[0-9]+x[0-9]+|p[0-9]+",
    # the settings a run id names, one part each (scan, sf1000, mpi, fixed-t16-s0.5), or
    # "default" (bfs.algorithms.options.variant_name), then a repeat's -rN
    variant=variant_regex(),


def layout_for(algorithm, ranks=1, grid=None):
    """'serial' for one process, 'RxC' on a 2d partition (2d, semiring: `grid`, else the
    squarest grid of `ranks`), 'pP' on a 1d one (P = `ranks`, or R*C of `grid`)."""
    if not ALGORITHMS[algorithm].distributed:
        return "serial"
    if grid is not None:
        rows, cols = (int(x) for x in grid.split("x"))
    else:
        rows, cols = squarest_grid(ranks)
    if ALGORITHMS[algorithm].partition == "1d":
        return f"p{rows * cols}"
    return f"{rows}x{cols}"


def run_name(algorithm, backend, layout, variant):
    """The run directory's name below runs/{graph}/: algorithm/backend-layout-variant."""
    return f"{algorithm}/{backend}-{layout}-{variant}"


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
    """(graph, run id) pairs an experiment needs, in a stable order: per graph, layout,
    algorithm, exchange, comm (the last two only where the algorithm has them)."""
    return list(
        dict.fromkeys((graph, run_name(*run)) for graph, run in experiment_layouts(name))
    )


def experiment_layouts(name):
    """(graph, (algorithm, backend, layout, variant)) of every run an experiment needs."""
    exp = EXPERIMENTS.get(name)
    if not exp:
        return []
    if kind(name) == "strong_scaling":
        # explicit grid shapes first (in the order given), then the squarest grid of each count
        layouts = [{"grid": g} for g in exp.get("grids", [])]
        layouts += [{"ranks": r} for r in exp.get("ranks", [])]
        points = [(graph, layout) for graph in experiment_graphs(name) for layout in layouts]
    elif kind(name) == "weak_scaling":
        points = [(p["graph"], {"ranks": p["ranks"]}) for p in exp["points"]]
    else:
        counts = exp.get("ranks", 1)
        points = [(graph, {"ranks": r}) for graph in exp["graphs"]
                  for r in (counts if isinstance(counts, list) else [counts])]
    repeats = exp.get("repeats", config.get("repeats", 1))
    runs = []
    for graph, shape in points:
        for algorithm in experiment_algorithms(name):
            layout = layout_for(algorithm, **shape)
            on = run_backend(name, algorithm)
            for settings in experiment_settings(name):
                # the id names what the settings say of this algorithm's options (others
                # are not its: the same id, planned once)
                variant = variant_name(ALGORITHMS[algorithm], on, settings)
                runs += [(graph, (algorithm, on, layout, f"{variant}{repeat_suffix(i)}"))
                         for i in range(1, repeats + 1)]
    return list(dict.fromkeys(runs))


def repeat_suffix(i):
    """A run id's repeat part: none for the first run of a point (`repeats: N`), -r{i} for
    the others, so a config that adds repeats keeps the runs it has."""
    return "" if i == 1 else f"-r{i}"


def experiment_axes(name):
    """option -> values of an experiment: its `sweep:` lists, and its keys that name a
    sweepable option (a list sweeps it, a single value sets it: task_count_sweep's lambda)."""
    exp = EXPERIMENTS[name]
    options = {n: o for n, o in all_options().items() if o.sweep}
    axes = {key: value if isinstance(value, list) else [value]
            for key, value in exp.items() if key in options}
    axes.update(exp.get("sweep", {}))
    # the order runs are planned in: by the options' run-id rank, then the registry's order
    order = {n: (o.id_rank, i) for i, (n, o) in enumerate(options.items())}
    return dict(sorted(axes.items(), key=lambda kv: order[kv[0]]))


def experiment_settings(name):
    """{option: value} of each point an experiment's axes span ([{}] without axes)."""
    axes = experiment_axes(name)
    return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]


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


check_kinds()
check_graph_names()
check_comm_choices()
check_backend_choices()
check_sweep()
check_reference()
check_cluster()
check_exclusive_gpus()


# What each kind of experiment shows: its own tables and figures, (output name, report kind).
# An experiment named after its kind writes them under these names (tables/strong_scaling.csv);
# another writes {experiment}-{name} (tables/gpu_strong-strong_scaling.csv).
KIND_TABLES = {
    "strong_scaling": [("strong_scaling", "strong_scaling")],
    "weak_scaling": [("weak_scaling", "weak_scaling")],
    "real_graphs": [("real_graphs", "graphs")],
    "implementations": [("implementations", "graphs"), ("source_lines", "source_lines")],
    "small_frontier_sweep": [("small_frontier", "small_frontier")],
    "task_count_sweep": [("task_count", "task_count")],
    "lambda_sweep": [("lambda", "lambda")],
}
KIND_FIGURES = {
    "strong_scaling": [("strong_scaling", "strong_scaling")],
    "weak_scaling": [("weak_scaling", "weak_scaling")],
    "implementations": [("teps_vs_scale", "teps_vs_scale"),
                        ("kernel1_vs_scale", "kernel1_vs_scale"),
                        ("teps_vs_source_lines", "teps_vs_source_lines")],
    "small_frontier_sweep": [("small_frontier", "small_frontier")],
    "task_count_sweep": [("task_count", "task_count")],
    "lambda_sweep": [("lambda", "lambda")],
}
# tables and figures pooling the experiments of some kinds (None: every kind)
POOLED_TABLES = {"kernel1": ("kernel1", None)}
POOLED_FIGURES = {
    "frontier": ("frontier", ("strong_scaling", "real_graphs", "implementations")),
    "comm_vs_compute": ("comm_vs_compute", ("strong_scaling", "weak_scaling")),
}
# the report's category of each kind's tables and figures
KIND_TITLES = {
    "strong_scaling": "Strong scaling", "weak_scaling": "Weak scaling",
    "real_graphs": "Real graphs", "implementations": "Implementations",
    "small_frontier_sweep": "Small-frontier sweep", "task_count_sweep": "Hybrid task count",
    "lambda_sweep": "Hybrid lambda",
}


def outputs(per_kind, pooled):
    """output name -> (report kind, experiments whose runs feed it, name in KIND_*/POOLED_*)."""
    made = {}
    for name in EXPERIMENTS:
        for base, report_kind in per_kind.get(kind(name), []):
            made[base if name == kind(name) else f"{name}-{base}"] = (report_kind, [name], base)
    for base, (report_kind, kinds) in pooled.items():
        feeding = list(EXPERIMENTS) if kinds is None \
            else [n for k in kinds for n in EXPERIMENTS if kind(n) == k]
        made[base] = (report_kind, feeding, base)
    return made


# table name -> (report kind, experiments whose runs feed it, caption name)
TABLES = outputs(KIND_TABLES, POOLED_TABLES)
# figure name -> (report kind, experiments whose runs feed it, caption name)
FIGURES = outputs(KIND_FIGURES, POOLED_FIGURES)


def experiment_title(name):
    title = KIND_TITLES[kind(name)]
    return title if name == kind(name) else f"{title}: {name}"


def report_category(mapping):
    """A report() category function: the experiment a table or figure shows, or "Across
    experiments" for those fed by several (frontier, Kernel 1, comm vs compute)."""
    def category(wc):
        experiments = mapping[wc.name][1]
        return experiment_title(experiments[0]) if len(experiments) == 1 \
            else "Across experiments"
    return category


def wanted(mapping):
    return [name for name, (_, experiments, _) in mapping.items() if experiments]


LANDING = f"{RESULTS}/report/landing.json"


def headline_figure():
    """The figure the landing page shows: strong scaling (with its COST line; the first
    strong-scaling experiment's) where the config has it, else the first figure it makes."""
    names = wanted(FIGURES)
    strong = [n for n in names if FIGURES[n][0] == "strong_scaling"]
    return (strong or names or [None])[0]


HEADLINE_FIGURE = headline_figure()


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


def grid_args(wc):
    p = GRID[wc.graph]
    return (
        f"--rows {p['rows']} --cols {p['cols']} --diagonal-prob {p.get('diagonal_prob', 0)}"
        f" --seed {p.get('seed', 1)}"
    )


def snap_input(wc):
    entry = SNAP[wc.graph]
    return entry.get("path") or f"{RESULTS}/downloads/{wc.graph}.txt"


def partition_args(wc):
    if wc.layout.startswith("p"):
        return f"--1d {wc.layout[1:]}"
    return f"--grid {wc.layout}"


def run_flags(wc):
    """A run's algorithm flags, read from its run id by the registry's declarations (e.g.
    --exchange scan --comm nccl, --small-frontier 1000 from the config, --tasks 64 --mode
    fixed --gpu-share 0.5): bfs.algorithms.options.variant_flags."""
    spec = ALGORITHMS[wc.algorithm]
    return flags_text(variant_flags(spec, wc.backend, wc.variant, config))


def serial_flags(wc):
    # the serial rule's command writes the flags right after --backend, each after a space
    flags = run_flags(wc)
    return f" {flags}" if flags else ""


def job_ranks(wc):
    return layout_ranks(wc.get("layout", "serial"))


def bfs_env(wc):
    """A BFS job's conda environment, by what the job runs: CuPy's (envs/gpu.yaml) for
    --backend gpu, and for auto, which searches on a GPU whenever CuPy sees one (both ask for
    GPUs, see gpus); envs/cpu.yaml for cpu runs, also on GPU nodes (request_gpus: always)."""
    return "../../envs/gpu.yaml" if wc.backend in ("gpu", "auto") else "../../envs/cpu.yaml"


def gpus(wc):
    """GPUs a BFS job asks for: one per rank (each rank drives its own device); on one box
    (exclusive_gpus: N) all N, so that with --resources gpu=N one GPU job runs at a time and no
    two jobs' searches share a device (a single-rank job always drives device 0)."""
    if wc.backend in ("gpu", "auto") or config.get("request_gpus", "auto") == "always":
        return config.get("exclusive_gpus") or job_ranks(wc)
    return 0


# --- job sizes for a batch scheduler (runtime in minutes, mem_mb per node) ----------------
# Estimated from what the config says about a graph, before it exists: a Kronecker graph has
# edgefactor * 2^scale edges, a local SNAP file about one edge per 16 bytes. Rates, margin and
# the doubling on retry are in bfs/harness/jobsize.py; every runtime is capped by
# cluster.max_runtime, every memory by cluster.mem_mb_per_node.


def graph_size(graph):
    """(vertices, undirected input edges) of a configured graph, estimated."""
    if graph in KRONECKER:
        p = KRONECKER[graph]
        n = 2 ** p["scale"]
        return n, n * p.get("edgefactor", 16)
    if graph in GRID:
        n = GRID[graph]["rows"] * GRID[graph]["cols"]
        return n, 3 * n       # right, down and at most one diagonal per cell
    path = SNAP.get(graph, {}).get("path")
    try:
        m = max(1, os.path.getsize(path) // 16) if path else 10**7
    except OSError:
        m = 10**7
    return m, m


def graph_depth(graph):
    """BFS levels to budget for: a Kronecker graph has few (5-6 measured at scale 18, growing
    slowly), a lattice about rows + cols, a SNAP graph is unknown (road networks run to
    about a thousand)."""
    if graph in KRONECKER:
        return 30
    if graph in GRID:
        return GRID[graph]["rows"] + GRID[graph]["cols"]
    return 2000


def per_rank_mb(graph, ranks=1, per_edge=64, per_vertex=40, base=1500):
    """A rank's memory: a fixed Python/Numba/Arrow base, its share of the edges and the
    vertex-length arrays every rank holds (frontiers, parents, levels)."""
    n, m = graph_size(graph)
    return base + (per_edge * m / ranks + per_vertex * n) / 2**20


def mem_mb_for(graph, ranks=1, per_node=None, **sizes):
    """A job's memory per node (SLURM's --mem): the ranks the fullest node holds, each
    per_rank_mb; all ranks on one node without a node size."""
    return jobsize.node_mem_mb(per_rank_mb(graph, ranks, **sizes), ranks, per_node,
                               CLUSTER.get("mem_mb_per_node"))


def runtime_for(graph, work_per_edge=1.0, attempt=1):
    """A one-process rule's runtime (minutes): `work_per_edge` passes over the edges, doubled
    on each retry (snakemake's `attempt`), capped by cluster.max_runtime."""
    _, m = graph_size(graph)
    return jobsize.runtime_minutes(jobsize.serial_seconds(m, work_per_edge), attempt, MAX_RUNTIME)


def ranks_per_node(wc):
    """Ranks a node holds for this BFS job: one a GPU for jobs asking for GPUs, else the CPU
    ranks a node takes; None (SLURM places the ranks) when the config gives no node size."""
    if gpus(wc):
        return CLUSTER.get("gpus_per_node")
    return CLUSTER.get("cpu_ranks_per_node")


def bfs_shape(wc):
    return jobsize.shape(job_ranks(wc), gpus(wc), ranks_per_node(wc))


def bfs_mem_mb(wc):
    return mem_mb_for(wc.graph, job_ranks(wc), ranks_per_node(wc))


def bfs_runtime(wc, attempt):
    # every root is searched and validated, plus one warm-up search
    _, m = graph_size(wc.graph)
    seconds = jobsize.bfs_seconds(m, graph_depth(wc.graph), config["roots"] + 1,
                                  job_ranks(wc), wc.backend)
    return jobsize.runtime_minutes(seconds, attempt, MAX_RUNTIME)


def bfs_resources(**extra):
    """A BFS rule's resources: its shape (bfs.harness.jobsize.shape: tasks, nodes, GPUs, CPUs;
    a key that is None is left out of the sbatch line), memory per node and runtime."""
    def field(key):
        return lambda wc: bfs_shape(wc)[key]

    keys = ("tasks", "nodes", "tasks_per_node", "gpu", "tasks_per_gpu", "gres", "cpus_per_task")
    return {**{key: field(key) for key in keys}, "mem_mb": bfs_mem_mb,
            "runtime": bfs_runtime, **extra}


def launcher_args(wc, resources):
    """`-n P` for the MPI launcher, with srun across nodes the placement too (jobsize)."""
    return jobsize.launcher_args(layout_ranks(wc.layout), resources.mpi,
                                 getattr(resources, "nodes", None),
                                 getattr(resources, "tasks_per_node", None))


def table_runs(wc):
    return experiment_run_dirs(*TABLES[wc.name][1])


def figure_runs(wc):
    return experiment_run_dirs(*FIGURES[wc.name][1])


def attach_landing():
    """The landing page's facts and headline figure for workflow/report/workflow.rst, whose
    template sees only the config: config["_landing"], once `landing` and the figure exist
    (a report made before the runs says how to make them)."""
    try:
        facts = json.loads(Path(LANDING).read_text())
    except (OSError, ValueError):
        return
    figure = Path(f"{RESULTS}/figures/{HEADLINE_FIGURE}.png")
    if figure.is_file():
        png = base64.b64encode(figure.read_bytes()).decode()
        # docutils refuses input lines over 10000 characters; the image directive drops the
        # whitespace between the lines of its URI
        facts["figure"] = {"name": HEADLINE_FIGURE,
                           "png": [png[i:i + 1000] for i in range(0, len(png), 1000)]}
    config["_landing"] = facts


attach_landing()
