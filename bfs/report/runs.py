"""Stage 7 of the pipeline: tables and figures from run directories, each reproducing one published
presentation (tables.py, figures.py). This module loads and pools the runs.

TEPS conventions. "GTEPS" is the Graph500 3.0 figure: the harmonic mean over searches,
n / sum(time_i / nedge_i), where nedge counts the traversed component's undirected input edges
(self-loops excluded, duplicates kept). Fu et al. count every undirected edge in both directions,
so their "directed GTEPS" is twice that; both are shown where Fu's tables are reproduced.

Runs repeated with the same configuration (the config's `repeats`) are pooled as one: the
harmonic mean over all their searches, Graph500's quartiles of the per-search TEPS, the repeats'
own minimum and maximum (the error bars) and the median of their Kernel 1 times. Runs differ in `comm` (how a distributed run exchanged per level: nccl or mpi; runs
from before the choice existed exchanged through MPI) and in `grid` (the 2d partition's RxC
shape, so that 1x2 and 2x1 are told apart). Only valid runs are aggregated: a run directory
marked invalid, holding an invalid search or missing a file is refused with an error naming it;
so is a damaged file (footer or row count unlike run.json's record).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import atomic_write  # noqa: F401  (tables and figures import it from here)
from ..errors import BfsError
from ..harness.stats import examined_per_nedge
from ..harness.rundir import (LEVELS_FILE, RUN_JSON, SEARCHES_FILE, check_run_file,
                              read_run_json, read_run_table)

RUN_FILES = ("run.json", "searches.parquet", "levels.parquet")
SERIES_KEYS = ["graph", "algorithm", "backend", "exchange", "comm"]
# what tells a run's implementation apart (SERIES_KEYS less the graph)
IMPLEMENTATION_KEYS = ["algorithm", "backend", "exchange", "comm"]


# ---------------------------------------------------------------------------------- loading

def _refuse(run_dir, why: str):
    raise BfsError(f"{run_dir}: {why}; an invalid or incomplete run is never aggregated "
                   "as a result")


# what _run_row reads from run.json: section -> keys (None: top level)
RUN_JSON_KEYS = {"graph": ("name", "source", "n_vertices", "n_edges"),
                 "parameters": ("algorithm", "backend", "mpi_size"),
                 None: ("construction_time",)}


def _read_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    missing = [f for f in RUN_FILES if not (run_dir / f).is_file()]
    if missing:
        _refuse(run_dir, f"not a complete run directory (missing {', '.join(missing)})")
    info = read_run_json(run_dir)
    if info.get("valid") is not True:
        _refuse(run_dir / RUN_JSON, f"marks the run invalid (\"valid\": "
                                    f"{json.dumps(info.get('valid'))})")
    for section, keys in RUN_JSON_KEYS.items():
        where = info if section is None else info.get(section)
        lacking = [k for k in keys if not isinstance(where, dict) or k not in where]
        if lacking:
            prefix = f"{section}." if section else ""
            raise BfsError(f"{run_dir / RUN_JSON}: not a run record (lacks "
                           f"{', '.join(prefix + k for k in lacking)})")
    check_run_file(run_dir, info, LEVELS_FILE)  # read later by the figures: checked now
    searches = read_run_table(run_dir, info, SEARCHES_FILE).to_pandas()
    if searches.empty:
        _refuse(run_dir, "searches.parquet holds no search")
    # valid null: a search left unvalidated (--validate first|none), not an invalid one
    bad = searches.loc[searches["valid"].eq(False), "root"].tolist()
    if bad:
        _refuse(run_dir, f"{len(bad)} search(es) failed validation (roots {bad[:5]})")
    return info, searches


def read_valid_run(run_dir) -> tuple[dict, pd.DataFrame]:
    """run.json and searches.parquet of one complete, valid run (refused otherwise, naming
    the run and why): what load_runs reads of each run, for readers that need the searches."""
    return _read_run(Path(run_dir))


def harmonic_mean_teps(times, nedges) -> float:
    """Graph500's mean TEPS: n / sum(time_i / nedge_i)."""
    times, nedges = np.asarray(times, np.float64), np.asarray(nedges, np.float64)
    return len(times) / float(np.sum(times / nedges))


def _comm(info: dict) -> str | None:
    """How a distributed run exchanged per level; None for a single-process run. Runs written
    before --comm existed recorded none: they exchanged through MPI."""
    if "partition" not in info:
        return None
    return info["parameters"].get("comm") or "mpi"


def _grid(info: dict) -> str | None:
    """'RxC' of a 2d run's partition; None for 1d (P x 1 is no choice) and single-process runs."""
    part = info.get("partition") or {}
    if part.get("kind") != "2d" or not part.get("grid"):
        return None
    rows, cols = part["grid"]
    return f"{rows}x{cols}"


def _hybrid_setting(params: dict) -> dict:
    """hybrid's tasks and mode, and the one of lambda (workload) and gpu_share (fixed) that
    its mode reads: run.json records both, the other being an unused default. None for the
    other algorithms."""
    mode = params.get("mode")
    lam = params.get("lambda")   # "inf" in strict JSON
    return {"tasks": params.get("tasks"), "mode": mode,
            "lambda": float(lam) if lam is not None and mode == "workload" else None,
            "gpu_share": params.get("gpu_share") if mode == "fixed" else None}


def shared_note(env: dict) -> str | None:
    """'4 ranks on 2 cores' / '2 ranks on 1 GPU' / 'GPU jobs side by side (4 slots)' where the
    run's ranks outnumbered its host's cores, shared a GPU, or ran beside other jobs on a
    shared box (run.json's environment.placement; derived from the per-rank record for runs
    made before it was written), else None."""
    from ..harness.envinfo import placement
    place = env.get("placement") or placement(env.get("ranks") or [{}], env.get("cpu_cores"))
    notes = []
    if place["oversubscribed"]:
        cores = place["cores_per_host"]
        notes.append(f"{place['ranks_per_host']} ranks on {cores} core{'s' * (cores != 1)}")
    if place["gpu_shared"]:
        notes.append(f"{place['ranks_per_gpu']} ranks on 1 GPU")
    if place.get("side_by_side"):
        notes.append(f"GPU jobs side by side ({place['side_by_side']} slots)")
    return ", ".join(notes) or None


def machine_keys(env: dict) -> frozenset:
    """What names the hardware a run ran on: its GPUs' ids (run.json's environment.gpus, each
    board's UUID, the GPUs the run's host showed it), or for a run without GPUs its hosts'
    names and CPU model; empty for a run from before the environment was recorded."""
    if env.get("gpus"):
        return frozenset(env["gpus"])
    hosts = {rank.get("hostname") for rank in env.get("ranks") or []} \
        | set(env.get("hostnames") or [])
    return frozenset(f"{host} ({env.get('cpu_model') or ''})" for host in hosts if host)


def machine_names(keys: list) -> list:
    """A name for each run's machine: runs whose machine_keys share a board or host are one
    machine (a one-GPU job and a four-GPU job on the same node; a SLURM job across two nodes
    joins each node's runs), named by 8 hex digits of a hash of the union; None for a run with
    no keys. Two hosts of one kind differ (a device call resumed on another host): a scaling
    table whose points ran on several machines compares machines as well (the tables'
    `machine` column; bfs report says so)."""
    parent = list(range(len(keys)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    owner: dict = {}
    for i, run_keys in enumerate(keys):
        for key in run_keys:
            parent[root(i)] = root(owner.setdefault(key, i))
    union: dict = {}
    for i, run_keys in enumerate(keys):
        union.setdefault(root(i), set()).update(run_keys)
    return [hashlib.sha1("\n".join(sorted(union[root(i)])).encode()).hexdigest()[:8]
            if run_keys else None for i, run_keys in enumerate(keys)]


def machines_note(runs: pd.DataFrame) -> str | None:
    """'runs from 3 machines (0a1b2c3d, ...)' where the runs ran on several (machine_names),
    else None: said by `bfs report` and under a scaling figure's title."""
    machines = sorted(set(runs["machine"].dropna())) if "machine" in runs else []
    if len(machines) < 2:
        return None
    return f"runs from {len(machines)} machines ({', '.join(machines)})"


NOT_RECORDED = "not recorded (a run from before energy was measured)"


def _energy(info: dict) -> dict:
    """run.json's energy per search (bfs.harness.energy) as the run's columns: watts and TEPS
    per watt, or none with the reason (energy_note)."""
    energy = info.get("energy")
    if not isinstance(energy, dict):
        return {"watts": None, "teps_per_watt": None, "energy_source": None,
                "energy_covers": None,
                "energy_note": info.get("energy_unavailable") if "energy" in info
                else NOT_RECORDED}
    return {"watts": energy["watts"], "teps_per_watt": energy["teps_per_watt"],
            "energy_source": energy["source"], "energy_covers": energy["covers"],
            "energy_note": None}


def _run_row(run_dir: Path, info: dict, searches: pd.DataFrame) -> dict:
    graph, params, env = info["graph"], info["parameters"], info.get("environment", {})
    backend = params["backend"]
    search_teps = searches["nedge"].to_numpy(np.float64) / searches["time_s"].to_numpy(np.float64)
    return {
        "run_dir": str(run_dir),
        "graph": graph["name"],
        # lattices were "grid" graphs before the name was kept for process grids
        "source": "lattice" if graph["source"] == "grid" else graph["source"],
        # SNAP graphs have no Kronecker scale; run.json's top-level "scale" is log2(n) for them
        "scale": graph.get("scale"),
        "n_vertices": graph["n_vertices"],
        "n_edges": graph["n_edges"],
        # Fu's directed-edge count: the largest traversed component's input edges, both ways
        "directed_edges": 2 * int(searches["nedge"].max()),
        # bench's variants (merrill@expand=v0) are series of their own, not repeats
        "algorithm": params.get("variant") or params["algorithm"],
        "backend": backend,
        "ranks": int(params["mpi_size"]),
        "gpus": len(env.get("gpus") or []) if backend == "gpu" else 0,
        "exchange": params.get("exchange"),
        "comm": _comm(info),
        "grid": _grid(info),
        # 1d's small-frontier threshold (Racherla); None for the algorithms without one
        "small_frontier": params.get("small_frontier"),
        **_hybrid_setting(params),
        "edgefactor": graph.get("edgefactor"),   # Kronecker graphs only
        "construction_time": float(info["construction_time"]),
        # where a distributed run's Kernel 1 went: (phase, seconds) in the order run
        "kernel1_phases": tuple(((info.get("measurements") or {}).get("kernel1_phases_s")
                                 or {}).items()) or None,
        "shared": shared_note(env),
        "n_searches": len(searches),
        # each search's TEPS, for Graph500's quartiles over the roots of pooled repeats
        "search_teps": tuple(search_teps),
        "teps": harmonic_mean_teps(searches["time_s"], searches["nedge"]),
        "mean_time_s": float(searches["time_s"].mean()),
        "max_depth": int(searches["depth"].max()),
        "mean_depth": float(searches["depth"].mean()),
        "mean_reached": float(searches["reached"].mean()),
        "mean_nedge": float(searches["nedge"].mean()),
        "examined_per_nedge": examined_per_nedge(
            searches.reindex(columns=["edges_examined", "nedge"]).to_dict("records")),
        **_energy(info),
    }


RUN_COLUMNS = [
    "run_dir", "graph", "source", "scale", "n_vertices", "n_edges", "directed_edges",
    "algorithm", "backend", "ranks", "gpus", "exchange", "comm", "grid", "small_frontier",
    "tasks", "mode", "lambda", "gpu_share", "edgefactor", "construction_time",
    "kernel1_phases", "shared", "machine",
    "n_searches", "search_teps", "teps", "mean_time_s", "max_depth", "mean_depth", "mean_reached", "mean_nedge",
    "examined_per_nedge", "watts", "teps_per_watt", "energy_source", "energy_covers",
    "energy_note"]


def load_runs(run_dirs) -> pd.DataFrame:
    """One row per run directory; refuses (BfsError) any run that is invalid or incomplete."""
    rows, machines = [], []
    for run_dir in map(Path, run_dirs):
        info, searches = _read_run(run_dir)
        rows.append(_run_row(run_dir, info, searches))
        machines.append(machine_keys(info.get("environment") or {}))
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    # a machine is named across the run set: runs sharing a board or host are one
    runs["machine"] = pd.Series(machine_names(machines), index=runs.index, dtype=object)
    runs["scale"] = runs["scale"].astype("Int64")
    for column in ("small_frontier", "tasks", "edgefactor"):
        runs[column] = runs[column].astype("Int64")
    for column in ("lambda", "watts", "teps_per_watt"):
        runs[column] = runs[column].astype("float64")
    runs["gpu_share"] = runs["gpu_share"].astype("float64")
    return runs


# a run's identifying columns, copied onto each of its levels.parquet rows
LEVEL_RUN_KEYS = ["run_dir", "graph", "algorithm", "backend", "exchange", "comm", "grid", "ranks"]


def load_levels(runs: pd.DataFrame) -> pd.DataFrame:
    """levels.parquet of every run in `runs`, with the run's identifying columns added."""
    frames = []
    for run in runs.itertuples(index=False):
        run_dir = Path(run.run_dir)
        levels = read_run_table(run_dir, read_run_json(run_dir), LEVELS_FILE).to_pandas()
        for key in LEVEL_RUN_KEYS:
            levels[key] = getattr(run, key)
        frames.append(levels)
    if not frames:
        return pd.DataFrame(columns=[*LEVEL_RUN_KEYS, "root", "rank", "level", "frontier_size",
                                     "expand_s", "comm_s", "comm_bytes"])
    return pd.concat(frames, ignore_index=True)


def pool(runs: pd.DataFrame) -> pd.Series:
    """Repeated runs of one configuration pooled as if one run: Graph500 harmonic mean over
    all their searches (n / teps recovers each run's sum of time_i / nedge_i exactly)."""
    n = runs["n_searches"].sum()
    q1, median, q3 = np.percentile(np.concatenate([np.asarray(t) for t in runs["search_teps"]]),
                                   [25, 50, 75])
    shared = runs["shared"].dropna()
    return pd.Series({
        "teps": n / (runs["n_searches"] / runs["teps"]).sum(),
        # Graph500's spread over the roots, and the spread of the repeats' own means
        "teps_q1": q1, "teps_median": median, "teps_q3": q3,
        "repeats": len(runs), "teps_min": runs["teps"].min(), "teps_max": runs["teps"].max(),
        # Kernel 1 of a repeated point: the median of its repetitions, which one slow
        # construction (a cold page cache, a busy core) does not move
        "construction_time": runs["construction_time"].median(),
        "construction_min": runs["construction_time"].min(),
        "construction_max": runs["construction_time"].max(),
        "kernel1_phases": _median_phases(runs["kernel1_phases"]),
        "shared": shared.iloc[0] if len(shared) else None,
        # the machines the repeats ran on (several: "a+b")
        "machine": "+".join(sorted(set(runs["machine"].dropna()))) or None,
        "mean_time_s": (runs["mean_time_s"] * runs["n_searches"]).sum() / n,
        "mean_depth": (runs["mean_depth"] * runs["n_searches"]).sum() / n,
        # over the runs that count the edges they read (NaN when none does)
        "examined_per_nedge": _weighted_mean(runs["examined_per_nedge"], runs["n_searches"]),
    })


def _median_phases(phases: pd.Series) -> str | None:
    """Kernel 1's phases over a point's repeats, each phase's median: 'block CSR 0.41 s, ...'
    (None where no repeat recorded them)."""
    known = [dict(p) for p in phases if p]
    if not known:
        return None
    names = list(dict.fromkeys(name for p in known for name in p))
    return ", ".join(f"{name} {np.median([p[name] for p in known if name in p]):.3g} s"
                     for name in names)


def _weighted_mean(values: pd.Series, weights: pd.Series) -> float:
    known = values.notna()
    return (float((values[known] * weights[known]).sum() / weights[known].sum())
            if known.any() else float("nan"))


def pooled_by_layout(series: pd.DataFrame) -> pd.DataFrame:
    """A series' runs pooled per (ranks, grid), in rank order: 1x2 and 2x1 stay apart."""
    return series.groupby(["ranks", "grid"], dropna=False, sort=True) \
        .apply(pool, include_groups=False).reset_index()


def one_rank_in_every_series(runs: pd.DataFrame) -> pd.DataFrame:
    """A distributed search on one rank exchanges nothing, so the workflow runs it once, under
    the first exchange and comm its experiment lists (Option.between_ranks); each (exchange,
    comm) that ran on more ranks takes that run as its one-rank point. Returns `runs` with a
    copy of a graph's one-rank runs under each such pair it lacks (weak scaling's one-rank
    graph differs from its larger points', so the pairs are gathered per algorithm)."""
    def pair(exchange, comm):
        return tuple(None if pd.isna(v) else v for v in (exchange, comm))

    one_rank = runs[(runs["ranks"] == 1) & runs["comm"].notna()]
    copies = []
    for (algorithm, backend), ones in one_rank.groupby(["algorithm", "backend"], sort=False):
        more = runs[(runs["algorithm"] == algorithm) & (runs["backend"] == backend)
                    & (runs["ranks"] > 1)]
        wanted = dict.fromkeys(pair(e, c) for e, c in zip(more["exchange"], more["comm"]))
        for _, graph_ones in ones.groupby("graph", sort=False):
            have = [pair(e, c) for e, c in zip(graph_ones["exchange"], graph_ones["comm"])]
            first = graph_ones[[p == have[0] for p in have]]
            copies += [first.assign(exchange=e, comm=c) for e, c in wanted if (e, c) not in have]
    return pd.concat([runs, *copies], ignore_index=True) if copies else runs


def implementation_label(algorithm, backend, exchange, comm=None) -> str:
    """'2d/gpu/scan', with '/nccl' or '/mpi' added where `comm` is given (pass it where the
    runs shown differ in comm)."""
    return "/".join(p for p in [algorithm, backend, exchange, comm] if isinstance(p, str))


def comm_varies(runs: pd.DataFrame) -> bool:
    """Whether the runs exchanged in more than one way (then labels name the comm)."""
    return runs["comm"].nunique(dropna=True) > 1


# ----------------------------------------------------------------------------------- tables

def count_label(runs: pd.DataFrame) -> str:
    return "GPUs" if len(runs) and (runs["backend"] == "gpu").all() else "ranks"


def read_runs_file(path) -> list[str]:
    """Run directories listed one per line; blank lines and '#' comments are skipped."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise BfsError(f"--runs-file {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise BfsError(f"--runs-file {path}: binary data, not a list of run directories") \
            from None
    return [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
