"""The report's landing page (workflow/report/workflow.rst renders these facts): what each
experiment ran (graphs, algorithms, layouts, roots, repeats), on what (CPU, GPUs, hosts, the
software versions and commit that run.json recorded) and its headline numbers, and how to rerun
one point. Written as JSON by the workflow's `landing` rule; the Snakefile hands it to the
report's template."""
from __future__ import annotations

import json
from pathlib import Path

from ..harness.rundir import read_run_json
from .runs import (SERIES_KEYS, atomic_write, comm_varies, implementation_label, load_runs,
                   machine_keys, machine_names)
from .tables import single_process, strong_scaling_table

# the run.json package versions worth a reader's eye (others stay in run.json)
VERSIONS = ("python", "numpy", "numba", "pyarrow", "mpi4py", "mpich", "cupy-cuda12x",
            "cupy-cuda13x", "cupy", "snakemake")


def environment_facts(run_dirs: list[str]) -> dict:
    """The machines and software of the runs: every distinct CPU model, GPU and host, and the
    versions and git commit of the first run (with a note where runs disagree)."""
    envs = [read_run_json(Path(d)).get("environment", {}) for d in run_dirs]
    if not envs:
        return {}
    first = envs[0]
    distinct = lambda key: sorted({str(v) for e in envs for v in  # noqa: E731
                                   (e.get(key) if isinstance(e.get(key), list) else [e.get(key)])
                                   if v})
    versions = {k: first.get("packages", {}).get(k) for k in VERSIONS
                if first.get("packages", {}).get(k)}
    commits = {(e.get("git") or {}).get("commit") for e in envs}
    git = first.get("git") or {}
    return {"cpu": distinct("cpu_model"), "cores": distinct("cpu_cores"),
            "gpus": distinct("gpus"), "hosts": distinct("hostnames"),
            # several where a run set was resumed on another host of its kind (tables'
            # machine column)
            "machines": sorted(set(filter(None, machine_names(list(map(machine_keys,
                                                                         envs)))))),
            "versions": versions,
            # anything the run recorded about its MPI library besides the rank count; its
            # first line (MPI_Get_library_version runs to a dozen lines: configure flags...),
            # which keeps the landing page's bullet one line
            "mpi": {k: str(v).splitlines()[0] for k, v in first.items()
                    if k.startswith("mpi") and k != "mpi_size" and v},
            "commit": (git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty")
                                                                else ""),
            "commits_differ": len(commits) > 1}


def _gteps(teps: float) -> str:
    return f"{teps / 1e9:.3g} GTEPS"


def strong_headline(runs) -> list[str]:
    """Per graph and series: its best count and the COST against the graph's reference."""
    table = strong_scaling_table(runs)
    count = table.columns[5]
    with_comm = comm_varies(runs)
    lines = []
    for (graph, *impl, comm), series in table.groupby(SERIES_KEYS, dropna=False, sort=True):
        best = series.loc[series["GTEPS"].idxmax()]
        label = implementation_label(*impl, comm if with_comm else None)
        n = int(best[count])
        if best["COST"] == "reference":
            lines.append(f"{graph}: {label} (single process, the COST reference) "
                         f"{best['GTEPS']:.3g} GTEPS")
            continue
        shared = f" ({best['shared hardware']})" if isinstance(best["shared hardware"], str) \
            else ""
        lines.append(f"{graph}: {label} peaks at {best['GTEPS']:.3g} GTEPS on {n} "
                     f"{count[:-1] if n == 1 else count}{shared}; COST: {best['COST']}")
    return lines


def best_runs_headline(runs) -> list[str]:
    """Per graph: the fastest run, and the fastest distributed one (more than one rank; a
    partition of one rank is not) where that is another."""
    def fastest(rows) -> str:
        best = rows.loc[rows["teps"].idxmax()]
        return f"{'/'.join(Path(best['run_dir']).parts[-2:])} at {_gteps(best['teps'])}"
    lines = []
    for graph, on_graph in runs.groupby("graph", sort=True):
        line = f"{graph}: fastest {fastest(on_graph)}"
        distributed = on_graph[~single_process(on_graph) & (on_graph["ranks"] > 1)]
        if 0 < len(distributed) < len(on_graph):
            line += f"; fastest distributed {fastest(distributed)}"
        lines.append(f"{line} ({len(on_graph)} runs)")
    return lines


def experiment_facts(kind: str, planned: list[tuple[str, str, str]]) -> dict:
    """planned: (graph, run id, run dir) of every run an experiment of this kind made."""
    runs = load_runs([d for _, _, d in planned])
    headline = strong_headline(runs) if kind == "strong_scaling" else best_runs_headline(runs)
    shared = runs["shared"].dropna()
    return {"graphs": list(dict.fromkeys(g for g, _, _ in planned)),
            "algorithms": list(dict.fromkeys(r.split("/")[0] for _, r, _ in planned)),
            "layouts": list(dict.fromkeys(r.split("/")[1].split("-")[1] for _, r, _ in planned)),
            "runs": len(planned), "headline": headline,
            "shared": f"{len(shared)} of {len(runs)} runs had more ranks than cores, "
                      f"shared a GPU or ran beside other GPU jobs "
                      f"({', '.join(sorted(set(shared)))}): marked in the tables "
                      "and figures, no efficiency computed" if len(shared) else None,
            "rerun": planned[0][2]}


def write_landing(out, config: dict, plan: dict[str, list[tuple[str, str, str]]],
                  left_out=()) -> None:
    """plan: experiment -> (graph, run id, run dir) of its runs. An experiment's kind is its
    `kind`, else its name (the workflow's config). left_out: the run directories planned but
    left out of this run set (snakemake --omit-from), named on the page."""
    experiments = config["experiments"]
    facts = {"roots": config.get("roots"), "repeats": config.get("repeats", 1),
             "left_out": sorted(left_out),
             "environment": environment_facts([d for runs in plan.values()
                                               for _, _, d in runs]),
             "experiments": {name: {**experiment_facts(experiments[name].get("kind", name),
                                                       planned),
                                    "repeats": experiments[name].get("repeats",
                                                                     config.get("repeats", 1))}
                             for name, planned in plan.items() if planned}}
    atomic_write(Path(out), lambda p: p.write_text(json.dumps(facts, indent=1)))
