"""Tables (`bfs report table KIND`, written as KIND.csv and KIND.md):
    strong_scaling  Fu et al. 2014, Table I: one graph, growing rank (GPU) counts, a row per
                    count and grid shape (RxC, 2d); GTEPS in both conventions with Graph500's
                    quartiles and the repeats' range, mean BFS time, speedup and parallel
                    efficiency against the smallest count of each (graph, algorithm, backend,
                    exchange, comm) series whose ranks had cores and GPUs of their own (none
                    for a point that shared them), and the COST (McSherry et al.): the
                    graph's best single-process search and the smallest count beating it.
    weak_scaling    Fu et al. 2014, Table II: the graph grows with the ranks; scale, vertices,
                    directed edges, directed edges per rank, BFS time and GTEPS, per
                    (algorithm, backend, exchange, comm) series.
    graphs          Merrill et al. 2012 / Racherla per-graph tables: vertices, edges, search
                    depth, time (ms) and GTEPS per graph and implementation (with comm and
                    grid).
    kernel1         SEI report: Kernel-1 (graph construction) time per configuration, the
                    median of its repeats and their range.
    source_lines    SEI report Table 1 / Fig. 19: source lines of each algorithm's own files
                    (sources.py) beside its GTEPS at the largest Kronecker scale run.
    small_frontier  Racherla: 1d's small-frontier threshold swept, GTEPS per threshold beside the
                    serial baseline, and the speedup over it.
    task_count      Munguia et al. Fig. 9: hybrid's task count T swept, GTEPS per graph, mode
                    (with its lambda or GPU share) and T.
    lambda          Munguia et al. Fig. 10: hybrid --mode workload's lambda swept, GTEPS per
                    Kronecker edge factor (graph), T and lambda.
    energy          Green Graph500: a row per run that measured its energy (run.json's energy,
                    bfs.harness.energy): GTEPS, mean watts over the devices its counters cover
                    and MTEPS/W, with the source and what it covers; the runs without energy
                    left out, a note row per reason ("none measured" when no run has any).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .runs import (IMPLEMENTATION_KEYS, SERIES_KEYS, atomic_write, count_label,
                   implementation_label, one_rank_in_every_series, pool, pooled_by_layout)
from .sources import algorithm_source_lines


SPREAD = ["repeats", "GTEPS q1", "GTEPS q3", "GTEPS repeat min", "GTEPS repeat max"]


def _spread(p: pd.Series) -> dict:
    """Graph500's quartiles of the per-search TEPS and the range of the repeats' means."""
    return {"repeats": p["repeats"], "GTEPS q1": p["teps_q1"] / 1e9,
            "GTEPS q3": p["teps_q3"] / 1e9, "GTEPS repeat min": p["teps_min"] / 1e9,
            "GTEPS repeat max": p["teps_max"] / 1e9}


def single_process(runs: pd.DataFrame) -> pd.Series:
    """Which runs searched in one process (no partition, so no comm): COST's references."""
    return runs["comm"].isna()


def cost_references(runs: pd.DataFrame) -> dict:
    """Per graph, the best single-process search of the run set (McSherry et al.'s COST
    reference): {graph: (implementation label, pooled TEPS)}."""
    best = {}
    for (graph, algorithm, backend), group in runs[single_process(runs)].groupby(
            ["graph", "algorithm", "backend"], sort=True):
        teps = pool(group)["teps"]
        if graph not in best or teps > best[graph][1]:
            best[graph] = (implementation_label(algorithm, backend, None), teps)
    return best


def cost(pooled: pd.DataFrame, reference_teps: float | None) -> str:
    """COST: the smallest count whose pooled TEPS beats the reference, or 'not reached'."""
    if reference_teps is None:
        return "no reference"
    faster = pooled.loc[pooled["teps"] > reference_teps, "ranks"]
    return str(int(faster.min())) if len(faster) else "not reached"


def scaling_base(pooled: pd.DataFrame) -> pd.Series | None:
    """The point speedup and efficiency are measured against: the smallest count whose
    ranks had their own cores and GPUs (None when every point shared them)."""
    alone = pooled[pooled["shared"].isna()]
    return alone.iloc[0] if len(alone) else None


def strong_scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    runs = one_rank_in_every_series(runs)
    count = count_label(runs)
    references = cost_references(runs)
    out = []
    for keys, series in runs.groupby(SERIES_KEYS, dropna=False, sort=True):
        named = dict(zip(SERIES_KEYS, keys))
        pooled = pooled_by_layout(series)
        base = scaling_base(pooled)
        reference, reference_teps = references.get(named["graph"], (None, None))
        if single_process(series).all():
            series_cost = "reference" if reference == implementation_label(
                named["algorithm"], named["backend"], None) else "–"
        else:
            series_cost = cost(pooled, reference_teps)
        for _, p in pooled.iterrows():
            # from TEPS, not times, so speedup and the figure's GTEPS curve tell the same story;
            # none for a point whose ranks shared cores or a GPU, nor against one
            speedup = p["teps"] / base["teps"] if base is not None and pd.isna(p["shared"]) \
                else float("nan")
            out.append({**named, count: p["ranks"], "grid": p["grid"],
                        "GTEPS": p["teps"] / 1e9, **_spread(p),
                        "directed GTEPS": 2 * p["teps"] / 1e9,
                        "BFS time (s)": p["mean_time_s"], "speedup": speedup,
                        "efficiency": speedup / (p["ranks"] / base["ranks"])
                        if base is not None else float("nan"),
                        "shared hardware": p["shared"], "machine": p["machine"],
                        "COST reference": reference,
                        "reference GTEPS": reference_teps / 1e9 if reference_teps else None,
                        "COST": series_cost})
    return pd.DataFrame(out, columns=[*SERIES_KEYS, count, "grid", "GTEPS", *SPREAD,
                                      "directed GTEPS", "BFS time (s)", "speedup",
                                      "efficiency", "shared hardware", "machine",
                                      "COST reference", "reference GTEPS", "COST"])


def weak_scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    runs = one_rank_in_every_series(runs)
    count = count_label(runs)
    keys = IMPLEMENTATION_KEYS
    out = []
    for series_keys, series in runs.groupby(keys, dropna=False, sort=True):
        for (ranks, grid, graph), group in series.groupby(["ranks", "grid", "graph"],
                                                          dropna=False, sort=True):
            p = pool(group)
            first = group.iloc[0]
            out.append({**dict(zip(keys, series_keys)), count: ranks, "grid": grid,
                        "graph": graph, "scale": first["scale"], "vertices": first["n_vertices"],
                        "directed edges": first["directed_edges"],
                        "directed edges per rank": first["directed_edges"] / ranks,
                        "BFS time (s)": p["mean_time_s"], "GTEPS": p["teps"] / 1e9,
                        **_spread(p), "directed GTEPS": 2 * p["teps"] / 1e9,
                        "shared hardware": p["shared"], "machine": p["machine"]})
    return pd.DataFrame(out, columns=[*keys, count, "grid", "graph", "scale", "vertices",
                                      "directed edges", "directed edges per rank",
                                      "BFS time (s)", "GTEPS", *SPREAD, "directed GTEPS",
                                      "shared hardware", "machine"])


def graphs_table(runs: pd.DataFrame) -> pd.DataFrame:
    keys = [*SERIES_KEYS, "ranks", "grid"]
    out = []
    for values, group in runs.groupby(keys, dropna=False, sort=True):
        p = pool(group)
        first = group.iloc[0]
        out.append({**dict(zip(keys, values)), "vertices": first["n_vertices"],
                    "edges": first["n_edges"], "search depth": p["mean_depth"],
                    "time (ms)": 1e3 * p["mean_time_s"],
                    # a road-like graph's search is thousands of levels of a few microseconds
                    "us a level": 1e6 * p["mean_time_s"] / (p["mean_depth"] + 1),
                    "GTEPS": p["teps"] / 1e9,
                    "repeats": p["repeats"], "edges read / nedge": p["examined_per_nedge"],
                    "shared hardware": p["shared"], "machine": p["machine"]})
    return pd.DataFrame(out, columns=[*keys, "vertices", "edges", "search depth", "time (ms)",
                                      "us a level", "GTEPS", "repeats", "edges read / nedge",
                                      "shared hardware", "machine"])


def kernel1_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A row per configuration: the median of its repeats' Kernel 1 times, and their range;
    for distributed runs where it went (each phase's median, the slowest rank's)."""
    keys = ["graph", "scale", "algorithm", "backend", "exchange", "comm", "ranks", "grid"]
    out = [{**named, "repeats": p["repeats"],
            "Kernel 1 median (s)": p["construction_time"], "min (s)": p["construction_min"],
            "max (s)": p["construction_max"], "phases": p["kernel1_phases"],
            "shared hardware": p["shared"], "machine": p["machine"]}
           for named, p in _pooled_settings(runs, keys)]
    table = pd.DataFrame(out, columns=[*keys, "repeats", "Kernel 1 median (s)", "min (s)",
                                       "max (s)", "phases", "shared hardware", "machine"])
    table["scale"] = table["scale"].astype("Int64")
    return table


SOURCE_KEYS = [*IMPLEMENTATION_KEYS, "ranks"]


def source_lines_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A row per implementation (algorithm, backend, exchange, comm, ranks): its source lines
    and GTEPS pooled over its runs at the largest scale among the runs (Kronecker graphs; with
    none, the largest graph by vertices); '–' where it did not run there."""
    cols = [*SOURCE_KEYS, "source lines", "graph", "scale", "GTEPS"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    kron = runs[runs["scale"].notna()]
    at = kron[kron["scale"] == kron["scale"].max()] if len(kron) else \
        runs[runs["n_vertices"] == runs["n_vertices"].max()]
    out = []
    for values, group in runs.groupby(SOURCE_KEYS, dropna=False, sort=True):
        named = dict(zip(SOURCE_KEYS, values))
        top = at.loc[at.index.intersection(group.index)]
        out.append({**named,
                    "source lines": algorithm_source_lines(named["algorithm"], named["backend"]),
                    "graph": top["graph"].iloc[0] if len(top) else at["graph"].iloc[0],
                    "scale": at["scale"].iloc[0],
                    "GTEPS": pool(top)["teps"] / 1e9 if len(top) else float("nan")})
    table = pd.DataFrame(out, columns=cols)
    table["source lines"] = table["source lines"].astype("Int64")
    table["scale"] = table["scale"].astype("Int64")
    return table


def _pooled_settings(runs: pd.DataFrame, keys: list[str]):
    """Per setting (the values of `keys`, NaN one of them, in key order): the values by key
    and the setting's runs pooled."""
    for values, group in runs.groupby(keys, dropna=False, sort=True):
        yield dict(zip(keys, values)), pool(group)


def _speed(pooled: pd.Series) -> dict:
    return {"GTEPS": pooled["teps"] / 1e9, "time (ms)": 1e3 * pooled["mean_time_s"]}


SWEEP_KEYS = ["graph", "algorithm", "backend", "comm", "ranks", "small_frontier"]


def small_frontier_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A row per (graph, algorithm, backend, comm, ranks, threshold): GTEPS, time, and the
    speedup over the graph's single-process run(s) (the serial baseline; '–' without one)."""
    cols = [*SWEEP_KEYS[:-1], "small frontier", "GTEPS", "time (ms)", "speedup over serial",
            "shared hardware", "machine"]
    out = []
    for named, p in _pooled_settings(runs, SWEEP_KEYS):
        serial = runs[(runs["graph"] == named["graph"]) & (runs["ranks"] == 1)
                      & runs["comm"].isna()]
        base = pool(serial)["teps"] if len(serial) else float("nan")
        threshold = named.pop("small_frontier")
        out.append({**named, "small frontier": threshold, **_speed(p),
                    "speedup over serial": p["teps"] / base, "shared hardware": p["shared"],
                    "machine": p["machine"]})
    table = pd.DataFrame(out, columns=cols)
    table["small frontier"] = table["small frontier"].astype("Int64")
    return table


# hybrid's settings as table headers
HYBRID_HEADERS = {"gpu_share": "GPU share", "edgefactor": "edge factor"}


def _hybrid_sweep_table(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """A row per setting of `keys` among the runs that have the last key (the swept one: the
    hybrid runs, or those of its workload mode for lambda): GTEPS and time (ms)."""
    swept = runs[runs[keys[-1]].notna()]
    table = pd.DataFrame([{**named, **_speed(p)} for named, p in _pooled_settings(swept, keys)],
                         columns=[*keys, "GTEPS", "time (ms)"])
    for column in {"tasks", "scale", "edgefactor"} & set(keys):
        table[column] = table[column].astype("Int64")
    return table.rename(columns=HYBRID_HEADERS)


def task_count_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Munguia Fig. 9: a row per (graph, mode with its lambda or GPU share, tasks T)."""
    return _hybrid_sweep_table(runs, ["graph", "algorithm", "backend", "mode", "lambda",
                                      "gpu_share", "tasks"])


def lambda_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Munguia Fig. 10: a row per (edge factor, scale, graph, tasks T, lambda), edge factors
    in numeric order."""
    return _hybrid_sweep_table(runs, ["edgefactor", "scale", "graph", "algorithm", "backend",
                                      "tasks", "lambda"])


def energy_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Green Graph500's figure per run: MTEPS/W (the harmonic-mean TEPS over the mean watts of
    the devices its counters cover: the GPU boards under NVML, the CPU packages under RAPL).
    Runs without energy are left out, counted in a note row per reason."""
    count = count_label(runs)
    keys = [*SERIES_KEYS, count, "grid"]
    cols = [*keys, "GTEPS", "watts", "MTEPS/W", "source", "covers", "note"]
    measured = runs[runs["watts"].notna()].rename(columns={"ranks": count}) \
        .sort_values([*keys, "run_dir"], na_position="first")
    out = [{**{k: r[k] for k in keys}, "GTEPS": r["teps"] / 1e9, "watts": r["watts"],
            "MTEPS/W": r["teps_per_watt"] / 1e6, "source": r["energy_source"],
            "covers": r["energy_covers"], "note": r["shared"]}
           for _, r in measured.iterrows()]
    left_out = runs[runs["watts"].isna()]
    lead = "left out" if len(measured) else "none measured"
    for reason, group in left_out.groupby("energy_note", dropna=False, sort=True):
        out.append({"note": f"{lead}: {len(group)} run{'s' * (len(group) != 1)} without "
                            f"energy ({reason if isinstance(reason, str) else 'no reason'})"})
    if runs.empty:
        out.append({"note": "none measured: no runs"})
    table = pd.DataFrame(out, columns=cols)
    table[count] = table[count].astype("Int64")
    return table


TABLES = {"strong_scaling": strong_scaling_table, "weak_scaling": weak_scaling_table,
          "graphs": graphs_table, "kernel1": kernel1_table,
          "source_lines": source_lines_table, "small_frontier": small_frontier_table,
          "task_count": task_count_table, "lambda": lambda_table, "energy": energy_table}


def _number(value: float) -> str:
    """Four significant digits in positional notation, whole numbers in full: 130654, not
    1.307e+05 beside an integer column's 130654; 0.0005123, not 5.123e-04."""
    if value.is_integer() or abs(value) >= 1000:
        return f"{value:.0f}"
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    return f"{value:.{max(0, 3 - math.floor(math.log10(abs(value))))}f}"


def _markdown_cell(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    return str(value).replace("|", "\\|")


def to_markdown(df: pd.DataFrame) -> str:
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(map(str, df.columns)) + " |",
             "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(_markdown_cell(v) for v in row) + " |"
              for row in df.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_table(df: pd.DataFrame, out_stem) -> tuple[Path, Path]:
    out_stem = Path(out_stem)
    csv, md = out_stem.with_name(out_stem.name + ".csv"), out_stem.with_name(out_stem.name + ".md")
    atomic_write(csv, lambda p: df.to_csv(p, index=False))
    atomic_write(md, lambda p: p.write_text(to_markdown(df)))
    return csv, md


