# Shared helpers: the rules' glue. What a config asks for (its checks, the experiments' runs,
# tables and figures, job sizes) is planned by workflow/experiment_plan.py, plain Python with
# its own tests (tests/test_experiment_plan.py); here the config is checked against its schema,
# planned once (PLAN), and the plan's answers are handed to the rules with the functions of
# wildcards (inputs, flags, resources) that Snakemake calls.
import base64
import json
import re
import shlex
import sys
import tempfile
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from bfs.algorithms import ALGORITHMS
from bfs.algorithms.options import flags_text, variant_flags, variant_regex
from bfs.harness import jobsize

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
import experiment_plan  # noqa: E402  (workflow/experiment_plan.py)
from experiment_plan import VALIDATE_THREADS, layout_ranks, run_threads  # noqa: E402,F401

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"


def validate_config():
    # snakemake's validate reads a schema file (and fills the config's defaults from it)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / SCHEMA.name
        path.write_text(yaml.safe_dump(experiment_plan.config_schema(SCHEMA)))
        validate(config, schema=str(path))


validate_config()
# The GPUs this machine shows: the box's size where the config gives no `gpus`; a job's own
# process (a run: rule's, a cluster node's) plans with the main process's count
VISIBLE_GPUS = experiment_plan.planning_gpus(workflow.is_main_process)
PLAN = experiment_plan.Plan(config, visible_gpus=VISIBLE_GPUS)
PLAN.check()


onstart:
    # Jobs are about to run on this machine (no dry run, which plans any box; not a cluster's
    # executor, whose nodes are not this machine): refuse `gpus` above the GPUs it shows,
    # before any job starts.
    if workflow.local_exec and not workflow.touch:
        try:
            PLAN.check_box_gpus(VISIBLE_GPUS)
        except ValueError as e:
            raise WorkflowError(str(e)) from None
    # share_gpus hands out this machine's GPUs by lock files: not for a cluster's executor
    # (--profile slurm), whose scheduler gives each job its own GPUs on its own node
    if PLAN.share_gpus and not workflow.local_exec:
        raise WorkflowError(
            "config: share_gpus is for one box run locally (its GPU jobs take this machine's "
            "GPUs as slots); a cluster's executor gives each job its own GPUs: leave "
            "share_gpus out (--config share_gpus=False)")


RESULTS = PLAN.results
# `--cache DIR` for the rules that make graphs and partitions, when the config names a cache
CACHE_ARG = f"--cache {shlex.quote(config['cache'])}" if config.get("cache") else ""
KRONECKER, SNAP, LATTICE, IN_PLACE = PLAN.kronecker, PLAN.snap, PLAN.lattice, PLAN.in_place
EXPERIMENTS, COMPARISONS, CLUSTER = PLAN.experiments, PLAN.comparisons, PLAN.cluster
TABLES, FIGURES = PLAN.tables, PLAN.figures     # name -> (report kind, experiments, caption)
experiment_runs, experiment_run_dirs = PLAN.experiment_runs, PLAN.experiment_run_dirs
experiment_validations, all_validations = PLAN.experiment_validations, PLAN.all_validations
run_dir, comparison_dir, all_comparisons = PLAN.run_dir, PLAN.comparison_dir, PLAN.all_comparisons
all_tables, all_figures = PLAN.all_tables, PLAN.all_figures
mem_mb_for, runtime_for = PLAN.mem_mb_for, PLAN.runtime_for

# Every shell command finds the package in this checkout, with or without `pip install`.
shell.prefix(
    "set -euo pipefail; export PYTHONPATH="
    + shlex.quote(str(workflow.basedir))
    + "${{PYTHONPATH:+:$PYTHONPATH}}; "
)


def names_regex(names):
    """A wildcard constraint matching exactly these names (never matches if there are none)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    graph="[A-Za-z0-9][A-Za-z0-9._-]*",
    algorithm="|".join(re.escape(a) for a in ALGORITHMS),
    backend="cpu|gpu|auto",
    layout="serial|[0-9]+x[0-9]+|p[0-9]+",
    # the settings a run id names, one part each (scan, sf1000, mpi, fixed-t16-s0.5), or
    # "default" (bfs.algorithms.options.variant_name), then a repeat's -rN
    variant=variant_regex(),


def report_category(mapping):
    """A report() category function: the experiment a table or figure shows, or "Across
    experiments" for those fed by several (frontier, Kernel 1, comm vs compute)."""
    def category(wc):
        experiments = mapping[wc.name][1]
        return PLAN.experiment_title(experiments[0]) if len(experiments) == 1 \
            else "Across experiments"
    return category


LANDING = f"{RESULTS}/report/landing.json"
HEADLINE_FIGURE = PLAN.headline_figure()


def comparison_runs(wc):
    """The run directories of a comparison, a then b."""
    return [f"{RESULTS}/runs/{COMPARISONS[wc.name][side]}" for side in ("a", "b")]


def comparison_validations(wc):
    return [f"{RESULTS}/validation/{COMPARISONS[wc.name][side]}.json" for side in ("a", "b")]


# --- inputs and arguments of single rules ---------------------------------------------


def kronecker_args(wc):
    scale, edgefactor, seeds, version = PLAN.kronecker_spec(wc.graph)
    return (f"--scale {scale} --edgefactor {edgefactor} --seeds {seeds[0]} {seeds[1]}"
            f" --graph500-version {version}")


def run_source(wc):
    """What `bfs run` reads: a graph directory (serial runs), a partition directory, or for an
    in-place graph `--generate kronecker:...` (every rank makes its share)."""
    if wc.graph in IN_PLACE:
        scale, edgefactor, seeds, version = PLAN.kronecker_spec(wc.graph)
        layout = wc.get("layout", "serial")
        # the grid shape the run id names (2x1 is not 1x2); pP (1d) is P x 1 whatever grid
        placed = f" --grid {layout}" if "x" in layout else ""
        return (f"--generate kronecker:scale={scale},edgefactor={edgefactor},"
                f"seeds={seeds[0]}:{seeds[1]},version={version},name={wc.graph}{placed}")
    if wc.get("layout", "serial") == "serial":
        return f"{RESULTS}/graphs/{wc.graph}"
    return f"{RESULTS}/partitions/{wc.graph}/{wc.layout}"


def run_input(wc):
    """A run's input files: none for an in-place graph, else its graph or partition dir."""
    return [] if wc.graph in IN_PLACE else [run_source(wc)]


def lattice_args(wc):
    p = LATTICE[wc.graph]
    return (
        f"--rows {p['rows']} --cols {p['cols']} --diagonal-prob {p.get('diagonal_prob', 0)}"
        f" --seed {p.get('seed', 1)}" + (" --ordered" if p.get("ordered") else "")
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
    return PLAN.job_gpus(wc.backend, job_ranks(wc))


def validation_gpus(wc):
    return PLAN.validation_gpus(wc.graph, wc.backend)


def gpu_slots(wc):
    """A BFS job's command prefix on a shared box (share_gpus): the slot launcher taking the
    GPUs the job asked for (workflow/gpu_slots.py); "" otherwise."""
    return PLAN.slot_launcher(gpus(wc))


def validation_slots(wc):
    return PLAN.slot_launcher(validation_gpus(wc))


def validation_env(wc):
    """CuPy's environment where the validation generates on the GPU (validation_gpus)."""
    return "../../envs/gpu.yaml" if validation_gpus(wc) else "../../envs/cpu.yaml"


# --- job sizes for a batch scheduler (runtime in minutes, mem_mb per node; PLAN's estimates) --


def ranks_per_node(wc):
    return PLAN.ranks_per_node(gpus(wc))


def bfs_shape(wc, threads):
    return jobsize.shape(job_ranks(wc), gpus(wc), ranks_per_node(wc), threads)


def bfs_mem_mb(wc):
    return mem_mb_for(wc.graph, job_ranks(wc), ranks_per_node(wc))


def bfs_runtime(wc, attempt):
    return PLAN.bfs_runtime(wc.graph, job_ranks(wc), wc.backend, attempt)


def bfs_resources(**extra):
    """A BFS rule's resources: its shape (bfs.harness.jobsize.shape: tasks, nodes, GPUs, CPUs
    from the rule's threads, after --set-threads and --cores; a key that is None is left out of
    the sbatch line), memory per node and runtime."""
    def field(key):
        return lambda wc, threads: bfs_shape(wc, threads)[key]

    keys = ("tasks", "nodes", "tasks_per_node", "gpu", "tasks_per_gpu", "gres", "cpus_per_task")
    return {**{key: field(key) for key in keys}, "mem_mb": bfs_mem_mb,
            "runtime": bfs_runtime, **extra}


def launcher_args(wc, resources):
    """`-n P` for the MPI launcher, with srun across nodes the placement too (jobsize)."""
    return jobsize.launcher_args(layout_ranks(wc.layout), resources.mpi,
                                 getattr(resources, "nodes", None),
                                 getattr(resources, "tasks_per_node", None))


def omitted_runs():
    """(graph, run id) of the runs --omit-from leaves out, by run directory or verdict: the
    landing page is made from the others and names these. snakemake's own setting, set once
    the Snakefile is read (so called from input functions and jobs); a job's process reads the
    main one's."""
    settings = getattr(workflow, "dag_settings", None)
    return PLAN.omitted_runs(experiment_plan.planning_omit_from(
        workflow.is_main_process, getattr(settings, "omit_from", None)))


def landing_inputs(wc):
    """The landing page's run directories and verdicts: every planned run's but those
    --omit-from leaves out."""
    omitted = set(omitted_runs())
    kept = [run for run in PLAN.planned_runs() if run not in omitted]
    return {"runs": [run_dir(*run) for run in kept],
            "validated": [PLAN.validation_file(*run) for run in kept]}


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
