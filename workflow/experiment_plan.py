"""The workflow's experiment planner: what a config asks for, checked and spelled out as runs.

Pure Python over the config dict (after the schema has filled its defaults), with no Snakemake
in it, so that tests/test_experiment_plan.py checks it without a Snakemake run;
workflow/rules/common.smk builds one Plan from the config, runs its checks and hands its
methods to the rules. What lives here:

- the config's graphs and experiments, and each experiment's kind, graphs, algorithms, axes
  (swept options) and runs: (graph, (algorithm, backend, layout, variant)), a run id being
  graph/algorithm/backend-layout-variant (the run directory below RESULTS/runs/);
- the checks that refuse a config before any job starts (each error names the experiment and
  the value);
- the tables and figures each kind of experiment makes, and the paired comparisons; the runs
  `--omit-from` leaves out, which the landing page names (omitted_runs);
- job sizes estimated from what the config says of a graph (bfs/harness/jobsize.py has the
  rates);
- the box's GPU count (`gpus`, else the GPUs visible: visible_gpus()): GPU runs of more ranks
  are left out of every experiment, and on one box every GPU job takes them all, or with
  `share_gpus` only the GPUs it uses, through the slot launcher (workflow/gpu_slots.py).

An algorithm's options come from the registry (bfs/algorithms/__init__.py): run ids are written
by bfs.algorithms.options, the schema's algorithm names and option keys are injected from it;
no algorithm is named here.
"""
from __future__ import annotations

import functools
import itertools
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from bfs.algorithms import ALGORITHMS
from bfs.algorithms.options import all_options, variant_name
from bfs.harness import jobsize
from bfs.partition import squarest_grid

# Experiments are data: each has a kind (default: its name, for the names that are kinds), its
# graphs, algorithms and layouts, and sweep axes (`sweep: {option: [values]}`, or an option's
# own key: `exchange: [scan, wave]`, `tasks: [...]`); two experiments of one kind sit side by
# side under different names, each with its own tables and figures.
KINDS = ("strong_scaling", "weak_scaling", "real_graphs", "implementations",
         "small_frontier_sweep", "task_count_sweep", "lambda_sweep")

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
    "strong_scaling": [("strong_scaling", "strong_scaling"), ("gteps_vs_watts", "gteps_vs_watts")],
    "weak_scaling": [("weak_scaling", "weak_scaling")],
    "implementations": [("teps_vs_scale", "teps_vs_scale"),
                        ("kernel1_vs_scale", "kernel1_vs_scale"),
                        ("teps_vs_source_lines", "teps_vs_source_lines")],
    "small_frontier_sweep": [("small_frontier", "small_frontier")],
    "task_count_sweep": [("task_count", "task_count")],
    "lambda_sweep": [("lambda", "lambda")],
}
# tables and figures pooling the experiments of some kinds (None: every kind)
POOLED_TABLES = {"kernel1": ("kernel1", None), "energy": ("energy", None)}
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
# Cores of a validate job: its edge pass (bfs/validate/cpu.py) checks about 36 M edges/s a core
# and ran 2.0x faster on 2 cores than on 1 (BENCHMARKS.md), so 8 cores would take scale 27's
# pass from about 58 s to under 10 s, without holding a whole node from the runs beside it.
VALIDATE_THREADS = 8
# Cores of a run job: one a rank (a search's rank is one host thread; Numba's pool, which would
# be the machine's, is told so), but a hybrid run, whose CPU tasks are Numba threads, holds
# Munguia et al.'s node: two sockets of six cores. A job that says what it uses lets snakemake
# keep a CPU job's threads off the cores of a timed GPU search beside it.
HYBRID_THREADS = 12

COMPARISON_FILES = ("summary.csv", "summary.md", "per_root.csv", "per_root.md", "speedups.png",
                    "speedups.svg")


def run_threads(algorithm: str) -> int:
    """The cores a one-rank run job holds, its Numba threads (a job of P ranks holds P)."""
    return HYBRID_THREADS if algorithm == "hybrid" else 1


def config_schema(path: Path) -> dict:
    """The config schema: the file at path (workflow/schemas/config.schema.yaml, the readable
    base) with the registry's algorithm names and sweepable option keys injected (tests check
    the file lists the package's own), so an algorithm added to the registry is configurable at
    once."""
    schema = yaml.safe_load(Path(path).read_text())
    definitions = schema["definitions"]
    definitions["algorithm"]["enum"] = list(ALGORITHMS)
    sweepable = {name: o for name, o in all_options().items() if o.sweep}
    definitions["sweep"]["properties"] = {
        name: {"type": "array", "items": o.schema(), "minItems": 1, "uniqueItems": True}
        for name, o in sweepable.items()}
    for name in ("exchange", "comm"):   # the experiments' lists of these options' values
        definitions[name]["items"] = sweepable[name].schema()
    return schema


def layout_for(algorithm: str, ranks: int = 1, grid: str | None = None) -> str:
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


def run_name(algorithm: str, backend: str, layout: str, variant: str) -> str:
    """The run directory's name below runs/{graph}/: algorithm/backend-layout-variant."""
    return f"{algorithm}/{backend}-{layout}-{variant}"


def layout_ranks(layout: str) -> int:
    if layout == "serial":
        return 1
    if layout.startswith("p"):
        return int(layout[1:])
    rows, cols = layout.split("x")
    return int(rows) * int(cols)


def visible_gpus(environ=None, smi: str = "nvidia-smi") -> int:
    """The GPUs this machine shows a job: CUDA_VISIBLE_DEVICES where it is set (its entries up
    to the first invalid one, as CUDA reads it: "" or "-1" shows none), else the lines of
    `nvidia-smi -L`; 0 without either (no driver, no GPU, a login node)."""
    environ = os.environ if environ is None else environ
    if "CUDA_VISIBLE_DEVICES" in environ:
        count = 0
        for entry in environ["CUDA_VISIBLE_DEVICES"].split(","):
            entry = entry.strip()
            if not entry or entry.startswith("-"):
                break
            count += 1
        return count
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return 0
    if out.returncode != 0:
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


PLAN_GPUS_ENV = "BFS_PLAN_GPUS"
PLAN_OMIT_ENV = "BFS_PLAN_OMIT_FROM"


def planning_gpus(main_process: bool, environ=None, smi: str = "nvidia-smi") -> int:
    """The GPUs a plan is made for where the config gives no `gpus`: in snakemake's main
    process the GPUs this machine shows (visible_gpus), handed on in the environment
    (PLAN_GPUS_ENV); in a process snakemake starts for a job (a `run:` rule's subprocess, a job
    on a cluster's node), the main process's count from there, 0 where none was handed on. A
    job's inputs are planned again in its process: with a count of its own (0: every point the
    config lists) a `run:` job on a four-GPU box asked for the eight-GPU runs as its input."""
    environ = os.environ if environ is None else environ
    if main_process:
        count = visible_gpus(environ, smi)
        environ[PLAN_GPUS_ENV] = str(count)
        return count
    text = environ.get(PLAN_GPUS_ENV, "")
    return int(text) if text.isdigit() else 0


def planning_omit_from(main_process: bool, omit_from, environ=None) -> list:
    """The paths --omit-from names, as the main process was given them: handed on in the
    environment (PLAN_OMIT_ENV) to the processes snakemake starts for jobs, which plan a job's
    inputs again without that option (the landing page's inputs leave those runs out:
    Plan.omitted_runs)."""
    environ = os.environ if environ is None else environ
    if main_process:
        paths = sorted(str(path) for path in omit_from or ())
        environ[PLAN_OMIT_ENV] = "\n".join(paths)
        return paths
    return [path for path in environ.get(PLAN_OMIT_ENV, "").split("\n") if path]


def repeat_suffix(i: int) -> str:
    """A run id's repeat part: none for the first run of a point (`repeats: N`), -r{i} for
    the others, so a config that adds repeats keeps the runs it has."""
    return "" if i == 1 else f"-r{i}"


class Plan:
    """A config's experiments as runs, tables and figures; check() refuses a bad config.
    visible_gpus: the GPUs the machine planning it shows (visible_gpus()), the box's size where
    the config gives no `gpus`."""

    def __init__(self, config: dict, visible_gpus: int = 0):
        self.config = config
        self.visible_gpus = visible_gpus
        self.results = config["results"]
        graphs = config["graphs"]
        self.kronecker = graphs.get("kronecker", {})
        self.snap = graphs.get("snap", {})
        self.lattice = graphs.get("lattice", {})
        if "grid" in graphs:
            # the old name (a grid is the process grid of a 2d partition here): read for one
            # release
            print("config: graphs.grid is now graphs.lattice; the old name goes in the next "
                  "release", file=sys.stderr)
            self.lattice = {**graphs["grid"], **self.lattice}
        # Kronecker graphs generated by every run in place (`in_place: true`): no graph or
        # partition directory; their runs take `bfs run --generate` instead of an input dir
        self.in_place = {g for g, p in self.kronecker.items() if p.get("in_place")}
        self.experiments = config["experiments"]
        # job shapes and limits for a batch scheduler (the slurm profile); none of it matters
        # locally
        self.cluster = config.get("cluster", {})
        self.max_runtime = self.cluster.get("max_runtime", 1440)
        # the box's GPU count: GPU runs of more ranks are left out of every experiment
        # (box_gpus); every GPU job takes them all on one box (exclusive_gpus), unless the box
        # is shared: each GPU job then takes the GPUs it uses, as slots (slot_launcher)
        self.gpus = self.box_gpus()
        self.share_gpus = bool(config.get("share_gpus"))
        # paired comparisons (bfs compare): name -> {a: run id, b: run id}
        self.comparisons = config.get("comparisons") or {}
        # table / figure name -> (report kind, experiments whose runs feed it, caption name)
        self.tables = self.outputs(KIND_TABLES, POOLED_TABLES)
        self.figures = self.outputs(KIND_FIGURES, POOLED_FIGURES)

    # --- experiments ------------------------------------------------------------------------
    def known_graphs(self) -> set:
        return set(self.kronecker) | set(self.snap) | set(self.lattice)

    def kind(self, name: str) -> str:
        return self.experiments[name].get("kind", name)

    @staticmethod
    def listed(exp: dict, one: str, many: str) -> list:
        """An experiment's `one: x` or `many: [x, ...]` as a list (the schema allows one)."""
        return list(exp[many]) if many in exp else [exp[one]]

    def experiment_graphs(self, name: str) -> list:
        exp = self.experiments[name]
        if self.kind(name) in ("strong_scaling", "small_frontier_sweep"):
            return self.listed(exp, "graph", "graphs")
        if self.kind(name) == "weak_scaling":
            return [point["graph"] for point in exp["points"]]
        return list(exp["graphs"])

    def experiment_algorithms(self, name: str) -> list:
        exp = self.experiments[name]
        if self.kind(name) == "strong_scaling":
            # COST (McSherry et al.): the best single-process search, a run per graph
            reference = [exp["reference"]] if "reference" in exp else []
            return self.listed(exp, "algorithm", "algorithms") + reference
        if self.kind(name) == "weak_scaling":
            return self.listed(exp, "algorithm", "algorithms")
        if self.kind(name) == "small_frontier_sweep":
            # the swept distributed algorithm, then the serial baseline (one run per graph)
            return [exp.get("algorithm", "1d"), exp.get("serial", "seq-csr")]
        if self.kind(name) in ("task_count_sweep", "lambda_sweep"):
            return [exp.get("algorithm", "hybrid")]
        return list(exp["algorithms"])

    def run_backend(self, name: str, algorithm: str) -> str:
        """The backend an experiment runs an algorithm on: its `backend`, except the serial
        baseline of small_frontier_sweep, which runs on the CPU whatever the swept backend, and
        a strong-scaling COST reference without that backend, which runs on its own one."""
        exp = self.experiments[name]
        if self.kind(name) == "small_frontier_sweep" \
                and algorithm == exp.get("serial", "seq-csr"):
            return "cpu"
        backend = exp.get("backend", "cpu")
        if self.kind(name) == "strong_scaling" and algorithm == exp.get("reference") \
                and backend not in ALGORITHMS[algorithm].backends:
            return ALGORITHMS[algorithm].backends[0]
        return backend

    def experiment_axes(self, name: str) -> dict:
        """option -> values of an experiment: its `sweep:` lists, and its keys that name a
        sweepable option (a list sweeps it, a single value sets it: task_count_sweep's
        lambda)."""
        exp = self.experiments[name]
        options = {n: o for n, o in all_options().items() if o.sweep}
        axes = {key: value if isinstance(value, list) else [value]
                for key, value in exp.items() if key in options}
        axes.update(exp.get("sweep", {}))
        # the order runs are planned in: by the options' run-id rank, then the registry's order
        order = {n: (o.id_rank, i) for i, (n, o) in enumerate(options.items())}
        return dict(sorted(axes.items(), key=lambda kv: order[kv[0]]))

    def experiment_settings(self, name: str) -> list[dict]:
        """{option: value} of each point an experiment's axes span ([{}] without axes)."""
        axes = self.experiment_axes(name)
        return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]

    def experiment_layouts(self, name: str) -> list:
        """(graph, (algorithm, backend, layout, variant)) of every run an experiment needs."""
        exp = self.experiments.get(name)
        if not exp:
            return []
        if self.kind(name) == "strong_scaling":
            # explicit grid shapes first (in the order given), then the squarest grid of each
            # count
            layouts = [{"grid": g} for g in exp.get("grids", [])]
            layouts += [{"ranks": r} for r in exp.get("ranks", [])]
            points = [(graph, layout) for graph in self.experiment_graphs(name)
                      for layout in layouts]
        elif self.kind(name) == "weak_scaling":
            # a point's grid where it names one (2d-do's 1xP), else the squarest of its count
            points = [(p["graph"], {"grid": p["grid"]} if "grid" in p else {"ranks": p["ranks"]})
                      for p in exp["points"]]
        else:
            counts = exp.get("ranks", 1)
            points = [(graph, {"ranks": r}) for graph in exp["graphs"]
                      for r in (counts if isinstance(counts, list) else [counts])]
        repeats = exp.get("repeats", self.config.get("repeats", 1))
        axes = self.experiment_axes(name)
        between_ranks = {n for n, o in all_options().items() if o.between_ranks}
        runs = []
        for graph, shape in points:
            for algorithm in self.experiment_algorithms(name):
                layout = layout_for(algorithm, **shape)
                on = self.run_backend(name, algorithm)
                if not self.fits_the_box(on, layout_ranks(layout)):
                    continue
                for settings in self.experiment_settings(name):
                    if layout_ranks(layout) == 1:
                        # one rank exchanges nothing: one run, under the first comm and
                        # exchange listed, is every series' one-rank point (report:
                        # one_rank_in_every_series)
                        settings = {k: axes[k][0] if k in between_ranks else v
                                    for k, v in settings.items()}
                    # the id names what the settings say of this algorithm's options (others
                    # are not its: the same id, planned once)
                    variant = variant_name(ALGORITHMS[algorithm], on, settings)
                    runs += [(graph, (algorithm, on, layout, f"{variant}{repeat_suffix(i)}"))
                             for i in range(1, repeats + 1)]
        return list(dict.fromkeys(runs))

    # --- the box's GPUs -----------------------------------------------------------------------
    def asks_gpus(self, backend: str) -> bool:
        """Whether a run on this backend asks for GPUs (a GPU each rank)."""
        return backend in ("gpu", "auto") or self.config.get("request_gpus", "auto") == "always"

    def box_gpus(self) -> int | None:
        """The GPU count the plan is made for: the config's `gpus`; where it gives none and
        plans no cluster's nodes (cluster.gpus_per_node), the GPUs this machine shows; None
        (every point the config lists, today's plans) where neither says, e.g. a machine
        without GPUs or a cluster's login node."""
        if self.config.get("gpus"):
            return self.config["gpus"]
        if self.cluster.get("gpus_per_node"):
            return None
        return self.visible_gpus or None

    def fits_the_box(self, backend: str, ranks: int) -> bool:
        """A run is planned unless it asks for more GPUs than the box has: `gpus: 4` plans the
        1-, 2- and 4-GPU points of a config that lists them up to 8."""
        return self.gpus is None or ranks <= self.gpus or not self.asks_gpus(backend)

    @functools.cached_property
    def exclusive_gpus(self) -> int:
        """GPUs every GPU job asks for on one box (job_gpus): the config's exclusive_gpus where
        it sets one; else, where the plan is for a box (gpus, or the GPUs visible; not a
        cluster's nodes) and runs a GPU job of several ranks, the box's count, so that
        `--resources gpu=N` runs one GPU job at a time and no two searches share a device;
        else 0 (one GPU a rank: a config of one-GPU runs keeps --resources gpu=1; a shared box,
        share_gpus, whose jobs take their own GPUs as slots)."""
        if self.config.get("exclusive_gpus"):
            return self.config["exclusive_gpus"]
        if self.share_gpus or self.gpus is None or self.cluster.get("gpus_per_node"):
            return 0
        several = any(layout_ranks(layout) > 1 and self.asks_gpus(backend)
                      for name in self.experiments
                      for _, (_, backend, layout, _) in self.experiment_layouts(name))
        return self.gpus if several else 0

    # A shared box (share_gpus: true): each GPU job asks snakemake for the GPUs it uses (its
    # ranks; 1 for a validation on the GPU) and its command starts through the slot launcher,
    # which takes that many free GPUs of the box by file locks and shows the command only
    # those (CUDA_VISIBLE_DEVICES). Jobs then run side by side on the box's GPUs: a quick
    # check's runs of a few seconds, mostly process start, no longer wait for one another.
    # Jobs sharing a box can disturb each other's timings a little (host cores, memory and
    # PCIe bandwidth, NVLink traffic), so a config whose numbers are reported
    # (config/gpu_box.yaml) leaves it off: one GPU job at a time (exclusive_gpus).
    @functools.cached_property
    def slot_count(self) -> int:
        """The slots of a shared box: its GPU count; where the plan names none (a machine that
        shows no GPUs), the most GPUs one job asks for."""
        if self.gpus:
            return self.gpus
        return max([1] + [layout_ranks(layout)
                          for name in self.experiments
                          for _, (_, backend, layout, _) in self.experiment_layouts(name)
                          if self.asks_gpus(backend)])

    def slot_launcher(self, gpus: int) -> str:
        """The prefix of the command of a job asking for `gpus` GPUs: on a shared box the slot
        launcher taking that many (workflow/gpu_slots.py, its lock files under
        RESULTS/.gpu-slots), else nothing (the job sees every GPU: exclusive_gpus, or a
        scheduler's binding)."""
        if not (self.share_gpus and gpus):
            return ""
        return (f"python3 -m workflow.gpu_slots --dir {shlex.quote(self.results)}/.gpu-slots "
                f"--slots {self.slot_count} --take {gpus} -- ")

    def check_box_gpus(self, visible: int) -> None:
        """Before jobs run on this machine (common.smk's onstart: not for a dry run, nor under a
        cluster's executor): a config asking for more GPUs than the machine shows is refused,
        naming both. A machine that shows none (no nvidia-smi) is not second-guessed."""
        asked = self.config.get("gpus")
        if asked and 0 < visible < asked:
            raise ValueError(
                f"config: gpus is {asked} but this machine shows {visible} GPU"
                f"{'s' if visible > 1 else ''} (CUDA_VISIBLE_DEVICES, else nvidia-smi -L): set "
                f"gpus: {visible} (--config gpus={visible}) or leave it out to plan for the GPUs "
                f"shown; the plan for {asked} GPUs can be seen with a dry run (snakemake -n) "
                "or run on a cluster (--profile slurm, cluster.gpus_per_node)")

    def experiment_runs(self, name: str) -> list:
        """(graph, run id) pairs an experiment needs, in a stable order: per graph, layout,
        algorithm, exchange, comm (the last two only where the algorithm has them)."""
        return list(dict.fromkeys((graph, run_name(*run))
                                  for graph, run in self.experiment_layouts(name)))

    def run_dir(self, graph: str, run: str) -> str:
        return f"{self.results}/runs/{graph}/{run}"

    def validation_file(self, graph: str, run: str) -> str:
        return f"{self.results}/validation/{graph}/{run}.json"

    def experiment_run_dirs(self, *names: str) -> list:
        return list(dict.fromkeys(self.run_dir(g, r) for name in names
                                  for g, r in self.experiment_runs(name)))

    def experiment_validations(self, *names: str) -> list:
        return list(dict.fromkeys(self.validation_file(g, r) for name in names
                                  for g, r in self.experiment_runs(name)))

    def all_validations(self) -> list:
        return self.experiment_validations(*self.experiments)

    def omitted_runs(self, omit_from) -> list:
        """(graph, run id) of the planned runs that --omit-from names (omit_from: its paths),
        by run directory or verdict. snakemake leaves out every job below an omitted file, the
        landing page's too, which would open the report on "No runs yet": the landing page is
        made from the other runs and names these."""
        named = {os.path.normpath(path) for path in omit_from or ()}
        return [(g, r) for g, r in self.planned_runs()
                if {os.path.normpath(self.run_dir(g, r)),
                    os.path.normpath(self.validation_file(g, r))} & named]

    def planned_runs(self) -> list:
        """(graph, run id) of every experiment's runs, each once (experiments share runs)."""
        return list(dict.fromkeys(run for name in self.experiments
                                  for run in self.experiment_runs(name)))

    def planned_run_ids(self) -> set:
        return {f"{g}/{r}" for g, r in self.planned_runs()}

    # --- comparisons --------------------------------------------------------------------------
    def comparison_dir(self, name: str) -> str:
        return f"{self.results}/comparisons/{name}"

    def all_comparisons(self) -> list:
        return [f"{self.comparison_dir(name)}/{f}" for name in self.comparisons
                for f in COMPARISON_FILES]

    # --- checks -------------------------------------------------------------------------------
    def check(self) -> None:
        """Every check, in the order that names the first cause of a bad config."""
        for check in (self.check_kinds, self.check_graph_names, self.check_comm_choices,
                      self.check_backend_choices, self.check_sweep, self.check_reference,
                      self.check_cluster, self.check_share_gpus, self.check_gpus,
                      self.check_exclusive_gpus, self.check_comparisons):
            check()

    def check_kinds(self) -> None:
        """An experiment named after a kind is of that kind (another name says its kind)."""
        for name, exp in self.experiments.items():
            if name in KINDS and exp.get("kind", name) != name:
                raise ValueError(f"config: experiments.{name} is of kind {name}; name an "
                                 f"experiment of kind {exp['kind']} otherwise")

    def check_graph_names(self) -> None:
        used = {g for name in self.experiments for g in self.experiment_graphs(name)}
        missing = used - self.known_graphs()
        if missing:
            raise ValueError(
                f"config: experiments use graphs not defined under graphs: {sorted(missing)}")
        kinds = (self.kronecker, self.snap, self.lattice)
        both = {g for i, a in enumerate(kinds) for b in kinds[i + 1:] for g in set(a) & set(b)}
        if both:
            raise ValueError(f"config: graph names defined twice: {sorted(both)}")

    def check_comm_choices(self) -> None:
        """comm: nccl moves device buffers, so it needs GPU runs; a cpu experiment exchanges
        through MPI only. (backend auto may resolve either way: nccl is taken as asked.)"""
        for name, exp in self.experiments.items():
            if exp.get("backend", "cpu") == "cpu" \
                    and "nccl" in self.experiment_axes(name).get("comm", []):
                raise ValueError(
                    f"config: experiments.{name}: comm nccl exchanges device buffers between "
                    "GPUs and needs backend: gpu; backend cpu runs exchange through MPI only "
                    "(comm: [mpi], the default)")

    def check_backend_choices(self) -> None:
        """An experiment's algorithms must run on its backend: a GPU-only algorithm (merrill,
        merrill-do, gpu-quadratic) in a backend cpu experiment, or a CPU-only one (seq-csr,
        2d-do, semiring, ...) in a backend gpu one, is refused here rather than failing its
        job. (auto picks at run time: not checked.)"""
        for name in self.experiments:
            backend = self.experiments[name].get("backend", "cpu")
            if backend == "auto":
                continue
            wrong = [a for a in self.experiment_algorithms(name)
                     if self.run_backend(name, a) not in ALGORITHMS[a].backends]
            if wrong:
                runs_on = "; ".join(f"{a} runs on {', '.join(ALGORITHMS[a].backends)}"
                                    for a in wrong)
                raise ValueError(
                    f"config: experiments.{name} has backend {backend} but lists "
                    f"{', '.join(wrong)}, which has no {backend} backend ({runs_on}): list "
                    f"{'GPU' if backend == 'cpu' else 'CPU'} algorithms in an experiment of "
                    f"backend: {'gpu' if backend == 'cpu' else 'cpu'} (config/one_gpu.yaml)")

    def check_sweep(self) -> None:
        """Every option an experiment sets or sweeps is one that some algorithm of it declares
        (the others' runs ignore it: the serial baseline beside a swept 1d, 1d beside 2d's
        exchange)."""
        for name in self.experiments:
            algorithms = self.experiment_algorithms(name)
            for key in self.experiment_axes(name):
                if not any(o.name == key for a in algorithms for o in ALGORITHMS[a].options):
                    raise ValueError(
                        f"config: experiments.{name} sweeps {key}, which none of its "
                        f"algorithms ({', '.join(algorithms)}) takes")
        for name in self.experiments:
            if self.kind(name) == "small_frontier_sweep" \
                    and ALGORITHMS[self.experiments[name].get("serial", "seq-csr")].distributed:
                raise ValueError(
                    f"config: experiments.{name}: serial names the single-process "
                    "baseline (seq-csr, seq-list)")

    def check_reference(self) -> None:
        """COST compares the distributed runs with one process: a distributed reference would
        measure nothing."""
        for name in self.experiments:
            reference = self.experiments[name].get("reference") \
                if self.kind(name) == "strong_scaling" else None
            if reference and ALGORITHMS[reference].distributed:
                raise ValueError(
                    f"config: experiments.{name}: reference names the single-process search "
                    "that COST is measured against (seq-csr on the CPU, merrill-do on a GPU)")

    def check_cluster(self) -> None:
        """exclusive_gpus makes every GPU job take a whole local box; gpus_per_node shapes jobs
        for a cluster's nodes: together they would ask a node for the box's GPU count per
        job."""
        if self.config.get("exclusive_gpus") and self.cluster.get("gpus_per_node"):
            raise ValueError(
                f"config: exclusive_gpus ({self.config['exclusive_gpus']}) is for one box run "
                f"locally and cluster.gpus_per_node ({self.cluster['gpus_per_node']}) for a "
                "cluster's nodes: set one of them")

    def check_share_gpus(self) -> None:
        """share_gpus hands one local box's GPUs out as slots (lock files on this machine): a
        cluster's jobs get theirs from its scheduler (and nodes sharing a file system would
        share the lock files), and exclusive_gpus asks the opposite, every GPU job taking the
        whole box."""
        if not self.share_gpus:
            return
        if self.cluster:
            raise ValueError(
                "config: share_gpus is for one box run locally and cluster ("
                + ", ".join(f"{k}: {v}" for k, v in self.cluster.items())
                + ") for a cluster's nodes, whose scheduler gives each job its own GPUs: set "
                "one of them")
        if self.config.get("exclusive_gpus"):
            raise ValueError(
                "config: share_gpus runs GPU jobs side by side on the box and exclusive_gpus "
                f"({self.config['exclusive_gpus']}) one at a time on all of it: set one of them")

    def check_gpus(self) -> None:
        """`gpus: N` sets exclusive_gpus (a box of N runs one GPU job at a time): two different
        counts say two boxes; and a weak-scaling point's grid holds its ranks."""
        gpus, exclusive = self.config.get("gpus"), self.config.get("exclusive_gpus")
        if gpus and exclusive and gpus != exclusive:
            raise ValueError(
                f"config: gpus ({gpus}) and exclusive_gpus ({exclusive}) name two boxes: gpus "
                "sets exclusive_gpus on one box, so leave exclusive_gpus out")
        for name in self.experiments:
            if self.kind(name) != "weak_scaling":
                continue
            for p in self.experiments[name]["points"]:
                if "grid" in p and layout_ranks(p["grid"]) != p["ranks"]:
                    raise ValueError(
                        f"config: experiments.{name}: the point of {p['ranks']} ranks on "
                        f"{p['graph']} names grid {p['grid']}, of {layout_ranks(p['grid'])}")

    def check_exclusive_gpus(self) -> None:
        """With exclusive_gpus: N every GPU job asks for all N GPUs of the box: a run of more
        ranks could never start there."""
        box = self.exclusive_gpus
        if not box:
            return
        for name in self.experiments:
            for graph, (algorithm, backend, layout, _) in self.experiment_layouts(name):
                ranks = layout_ranks(layout)
                asks = backend != "cpu" or self.config.get("request_gpus") == "always"
                if asks and ranks > box:
                    raise ValueError(
                        f"config: experiments.{name} runs {algorithm} on {graph} with {ranks} "
                        f"ranks ({layout}, a GPU each) but exclusive_gpus is {box}: raise "
                        "exclusive_gpus to the box's GPU count (and --resources gpu= with it), "
                        "or leave it out and set gpus:, or drop the run")

    def check_comparisons(self) -> None:
        """A comparison's runs are runs of the experiments (their roots are the config's, the
        same for both), and two different ones."""
        planned = self.planned_run_ids()
        for name, pair in self.comparisons.items():
            for side in ("a", "b"):
                if pair[side] not in planned:
                    near = sorted(r for r in planned
                                  if Path(r).parts[0] == Path(pair[side]).parts[0])
                    raise ValueError(
                        f"config: comparisons.{name}.{side}: {pair[side]} is not a run of the "
                        "experiments (a run id is graph/algorithm/backend-layout-variant, as "
                        f"under {self.results}/runs/); "
                        + (f"runs of that graph: {', '.join(near[:12])}" if near else
                           "no experiment runs that graph"))
            if pair["a"] == pair["b"]:
                raise ValueError(f"config: comparisons.{name}: a and b are the same run "
                                 f"({pair['a']}); compare two runs")

    # --- tables, figures, the report ------------------------------------------------------------
    def outputs(self, per_kind: dict, pooled: dict) -> dict:
        """output name -> (report kind, experiments whose runs feed it, name in
        KIND_*/POOLED_*)."""
        made = {}
        for name in self.experiments:
            for base, report_kind in per_kind.get(self.kind(name), []):
                made[base if name == self.kind(name) else f"{name}-{base}"] = \
                    (report_kind, [name], base)
        for base, (report_kind, kinds) in pooled.items():
            feeding = list(self.experiments) if kinds is None \
                else [n for k in kinds for n in self.experiments if self.kind(n) == k]
            made[base] = (report_kind, feeding, base)
        return made

    def experiment_title(self, name: str) -> str:
        """The report category of an experiment: its kind's title, and its name where that
        differs. No colon: snakemake's report makes a link target of every category (``.. _TITLE:
        URL``), where a colon ends the name, so "Strong scaling: a" and "Strong scaling: b"
        were one target twice."""
        title = KIND_TITLES[self.kind(name)]
        return title if name == self.kind(name) else f"{title} ({name})"

    @staticmethod
    def wanted(mapping: dict) -> list:
        return [name for name, (_, experiments, _) in mapping.items() if experiments]

    def headline_figure(self) -> str | None:
        """The figure the landing page shows: strong scaling (with its COST line; the first
        strong-scaling experiment's) where the config has it, else the first figure it
        makes."""
        names = self.wanted(self.figures)
        strong = [n for n in names if self.figures[n][0] == "strong_scaling"]
        return (strong or names or [None])[0]

    def all_tables(self) -> list:
        return [f"{self.results}/tables/{name}.{ext}" for name in self.wanted(self.tables)
                for ext in ("csv", "md")]

    def all_figures(self) -> list:
        return [f"{self.results}/figures/{name}.{ext}" for name in self.wanted(self.figures)
                for ext in ("png", "svg")]

    # --- graphs and job sizes ---------------------------------------------------------------
    # Estimated from what the config says about a graph, before it exists: a Kronecker graph
    # has edgefactor * 2^scale edges, a local SNAP file about one edge per 16 bytes. Rates,
    # margin and the doubling on retry are in bfs/harness/jobsize.py; every runtime is capped by
    # cluster.max_runtime, every memory by cluster.mem_mb_per_node.
    def kronecker_spec(self, graph: str) -> tuple:
        """(scale, edgefactor, seeds, graph500 version) of a configured Kronecker graph."""
        p = self.kronecker[graph]
        return p["scale"], p.get("edgefactor", 16), p.get("seeds", [2, 3]), \
            p.get("graph500_version", "3.0")

    def graph_size(self, graph: str) -> tuple[int, int]:
        """(vertices, undirected input edges) of a configured graph, estimated."""
        if graph in self.kronecker:
            p = self.kronecker[graph]
            n = 2 ** p["scale"]
            return n, n * p.get("edgefactor", 16)
        if graph in self.lattice:
            n = self.lattice[graph]["rows"] * self.lattice[graph]["cols"]
            return n, 3 * n       # right, down and at most one diagonal per cell
        path = self.snap.get(graph, {}).get("path")
        try:
            m = max(1, os.path.getsize(path) // 16) if path else 10**7
        except OSError:
            m = 10**7
        return m, m

    def graph_depth(self, graph: str) -> int:
        """BFS levels to budget for: a Kronecker graph has few (5-6 measured at scale 18,
        growing slowly), a lattice about rows + cols, a SNAP graph is unknown (road networks
        run to about a thousand)."""
        if graph in self.kronecker:
            return 30
        if graph in self.lattice:
            return self.lattice[graph]["rows"] + self.lattice[graph]["cols"]
        return 2000

    def per_rank_mb(self, graph: str, ranks: int = 1, per_edge: int = 64,
                    per_vertex: int = 40, base: int = 1500) -> float:
        """A rank's memory: a fixed Python/Numba/Arrow base, its share of the edges and the
        vertex-length arrays every rank holds (frontiers, parents, levels)."""
        n, m = self.graph_size(graph)
        return base + (per_edge * m / ranks + per_vertex * n) / 2**20

    def mem_mb_for(self, graph: str, ranks: int = 1, per_node: int | None = None,
                   **sizes) -> int:
        """A job's memory per node (SLURM's --mem): the ranks the fullest node holds, each
        per_rank_mb; all ranks on one node without a node size."""
        return jobsize.node_mem_mb(self.per_rank_mb(graph, ranks, **sizes), ranks, per_node,
                                   self.cluster.get("mem_mb_per_node"))

    def runtime_for(self, graph: str, work_per_edge: float = 1.0, attempt: int = 1) -> int:
        """A one-process rule's runtime (minutes): `work_per_edge` passes over the edges,
        doubled on each retry (snakemake's `attempt`), capped by cluster.max_runtime."""
        _, m = self.graph_size(graph)
        return jobsize.runtime_minutes(jobsize.serial_seconds(m, work_per_edge), attempt,
                                       self.max_runtime)

    def job_gpus(self, backend: str, ranks: int) -> int:
        """GPUs a BFS job asks for: one per rank (each rank drives its own device); on one box
        (exclusive_gpus: N, or `gpus: N` where GPU jobs run several ranks) all N, so that with
        --resources gpu=N one GPU job runs at a time and no two jobs' searches share a device
        (a single-rank job always drives device 0). A shared box (share_gpus) keeps one a rank:
        the slot launcher shows each job the GPUs it took (slot_launcher)."""
        if backend in ("gpu", "auto") or self.config.get("request_gpus", "auto") == "always":
            return self.exclusive_gpus or ranks
        return 0

    def validation_gpus(self, graph: str, backend: str) -> int:
        """GPUs a validate job asks for: bfs validate generates a GPU run's in-place graph again
        on the GPU where there is one (tens of times faster than the CPU), so that job asks for
        one, or on one box (exclusive_gpus: N) all N, so that no validation shares a device
        with a timed search (on the GPU box they did: validations beside the searches, and a
        scale-26 1d run failing beside one); on a shared box (share_gpus) one, a slot of its
        own. Other validations read the graph directory on the CPU."""
        if graph in self.in_place and backend in ("gpu", "auto"):
            return self.exclusive_gpus or 1
        return 0

    def ranks_per_node(self, gpus: int) -> int | None:
        """Ranks a node holds for a BFS job asking for `gpus` GPUs: one a GPU for jobs asking
        for GPUs, else the CPU ranks a node takes; None (SLURM places the ranks) when the
        config gives no node size."""
        if gpus:
            return self.cluster.get("gpus_per_node")
        return self.cluster.get("cpu_ranks_per_node")

    def bfs_runtime(self, graph: str, ranks: int, backend: str, attempt: int = 1) -> int:
        """A BFS job's runtime (minutes): every root searched and validated, plus one warm-up
        search."""
        _, m = self.graph_size(graph)
        seconds = jobsize.bfs_seconds(m, self.graph_depth(graph), self.config["roots"] + 1,
                                      ranks, backend)
        return jobsize.runtime_minutes(seconds, attempt, self.max_runtime)
