"""Figures (`bfs report figure KIND`, written as KIND.png and KIND.svg):
    strong_scaling  Fu et al. 2014 Table I as a plot: GTEPS vs ranks, with ideal linear scaling;
                    a line per (graph, algorithm, backend, exchange, comm) series.
    weak_scaling    Fu et al. 2014 Table II as a plot: GTEPS vs ranks, with ideal linear scaling.
    frontier        Fu et al. 2014 Fig. 1: frontier size (vertices discovered) per BFS level.
    comm_vs_compute Fu et al. 2014 Fig. 8: per level, local expansion vs communication time, a
                    panel per run; runs that differ only in comm (nccl, mpi) sit side by side.
    teps_vs_scale   SEI report Fig. 16: GTEPS vs Kronecker scale, one line per implementation.
    kernel1_vs_scale
                    SEI report Fig. 15: Kernel-1 (graph construction) time vs Kronecker scale,
                    one line per implementation.
    teps_vs_source_lines
                    SEI report Fig. 19: GTEPS at the largest scale vs the source lines of each
                    algorithm's own files, a labelled point per implementation.
    small_frontier  Racherla: 1d GTEPS vs its small-frontier threshold, a line per graph, the
                    serial baseline as a dashed level line.
    task_count      Munguia et al. Fig. 9: hybrid GTEPS vs the task count T, a line per graph
                    and mode (with its lambda or GPU share).
    lambda          Munguia et al. Fig. 10: hybrid --mode workload GTEPS vs lambda, a line per
                    Kronecker graph (edge factor).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

from ..partition import squarest_grid
from .runs import (IMPLEMENTATION_KEYS, LEVEL_RUN_KEYS, SERIES_KEYS, atomic_write, comm_varies,
                   count_label, implementation_label, load_levels, pool, pooled_by_layout)

# ---------------------------------------------------------------------------------- figures

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns
    sns.set_theme(style="whitegrid", context="notebook")
    return plt, sns


def _ranks(n) -> str:
    return f"{n} rank" if n == 1 else f"{n} ranks"


def _plain_log_ticks(axis) -> None:
    """Log-axis tick labels as plain numbers (0.02, not 2×10⁻²), minor ones only at 2, 3 and 5
    times a power of ten so that short ranges get labels and long ones stay uncrowded."""
    from matplotlib.ticker import FuncFormatter

    def plain(value, _):
        mantissa = round(value / 10 ** math.floor(math.log10(value)), 6) if value > 0 else 0
        return f"{value:g}" if mantissa in (1, 2, 3, 5) else ""
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_formatter(FuncFormatter(plain))


GTEPS_LOG = "GTEPS (10⁹ traversed edges/s, log scale)"


def _log_y_axes(ax, xlabel: str, ylabel: str, title: str) -> None:
    """A log y axis with plain tick labels, the axis labels and the two-line title."""
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)


def _empty_figure(title: str, note: str):
    plt, _ = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, note, ha="center", va="center", fontsize=13, wrap=True,
            transform=ax.transAxes)
    return fig


def _on_line(pooled: pd.DataFrame) -> list[bool]:
    """Which of a series' points its line joins: one per count, where a count was run on
    several grid shapes the squarest (what the workflow's `ranks:` picks), else the first."""
    chosen = set()
    for ranks, rows in pooled.groupby("ranks", sort=False):
        squarest = "{}x{}".format(*squarest_grid(int(ranks)))
        hits = rows.index[rows["grid"] == squarest]
        chosen.add(hits[0] if len(hits) else rows.index[0])
    return [i in chosen for i in pooled.index]


def _scaling_figure(runs: pd.DataFrame, title: str, annotate_scale: bool):
    plt, sns = _plt()
    count = count_label(runs)
    # weak scaling: the graph changes along a series, so a series is an implementation
    keys = IMPLEMENTATION_KEYS if annotate_scale else SERIES_KEYS
    with_comm = comm_varies(runs)
    points = []
    for values, series in runs.groupby(keys, dropna=False, sort=True):
        pooled = pooled_by_layout(series)
        named = dict(zip(keys, values))
        implementation = implementation_label(named["algorithm"], named["backend"],
                                              named["exchange"],
                                              named["comm"] if with_comm else None)
        pooled["series"] = implementation if annotate_scale else \
            f"{named['graph']} · {implementation}"
        pooled["scale"] = [series.loc[series["ranks"] == r, "scale"].iloc[0]
                           for r in pooled["ranks"]]
        pooled["on_line"] = _on_line(pooled)
        pooled["shapes"] = pooled["ranks"].map(pooled["ranks"].value_counts()) > 1
        points.append(pooled)
    data = pd.concat(points, ignore_index=True)
    data["GTEPS"] = data["teps"] / 1e9
    fig, ax = plt.subplots(figsize=(8, 5))
    labels = data["series"].unique()
    palette = dict(zip(labels, sns.color_palette(n_colors=len(labels))))
    off_line = False
    for label, series in data.groupby("series", sort=False):
        series = series.sort_values("ranks")
        line = series[series["on_line"]]
        color = palette[label]
        ax.plot(line["ranks"], line["GTEPS"], "o-", color=color, label=label)
        base = line.iloc[0]
        if len(line) > 1:
            ax.plot(line["ranks"], base["GTEPS"] * line["ranks"] / base["ranks"], "--",
                    color=color, alpha=0.6)
        # the other grid shapes of a count: open markers beside the line
        other = series[~series["on_line"]]
        if len(other):
            off_line = True
            ax.plot(other["ranks"], other["GTEPS"], "o", mfc="none", color=color)
        for r in series.itertuples():
            notes = [f"scale {r.scale}"] if annotate_scale else []
            if r.shapes:
                notes.append(r.grid)
            if notes:
                ax.annotate(", ".join(notes), (r.ranks, r.GTEPS), textcoords="offset points",
                            xytext=(6, 6 if r.on_line else -10), fontsize=8, color=color)
    ax.plot([], [], "--", color="gray", label="ideal: linear from the smallest count")
    if off_line:
        ax.plot([], [], "o", mfc="none", color="gray",
                label="another grid shape of the count (line: the squarest)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ranks = sorted(data["ranks"].unique())
    ax.set_xticks(ranks, [str(r) for r in ranks])
    ax.margins(x=0.12)
    ax.set_xlabel(f"{'GPUs' if count == 'GPUs' else 'MPI ranks'} (log2 scale)")
    ax.set_ylabel(GTEPS_LOG)
    ax.set_title(f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges "
                 f"(Fu's directed TEPS = 2×)", fontsize=11)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def strong_scaling_figure(runs: pd.DataFrame):
    return _scaling_figure(runs, "Strong scaling: GTEPS vs ranks, fixed graph", False)


def weak_scaling_figure(runs: pd.DataFrame):
    return _scaling_figure(runs, "Weak scaling: GTEPS vs ranks, graph grows with ranks", True)


def _per_level(levels: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Per (run, root, level): the maximum over ranks. Frontier sizes are global (every rank
    reports the same number), times differ by rank and the slowest rank sets the level's time."""
    return levels.groupby([*LEVEL_RUN_KEYS, "root", "level"], dropna=False)[columns].max() \
        .reset_index()


def frontier_levels(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (run, root, level) the frontier size, levels that found vertices only: a distributed
    search also records the level whose empty frontier ended it (for its expand and exchange
    time), which has no size to draw on a log axis."""
    levels = _per_level(load_levels(runs), ["frontier_size"])
    return levels[levels["frontier_size"] > 0]


def frontier_figure(runs: pd.DataFrame):
    plt, sns = _plt()
    levels = frontier_levels(runs)
    per_graph = levels.groupby(["graph", "level"])["frontier_size"].mean().reset_index()
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.lineplot(per_graph, x="level", y="frontier_size", hue="graph", marker="o", ax=ax)
    ax.set_yscale("log")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("BFS level")
    ax.set_ylabel("frontier size (vertices, log scale)")
    ax.set_title("Frontier size per BFS level: vertices discovered at the level, "
                 "mean over roots", fontsize=11)
    fig.tight_layout()
    return fig


def comm_vs_compute_figure(runs: pd.DataFrame):
    """One panel per run (a strong-scaling set gives one per rank count), stacked bars."""
    plt, _ = _plt()
    levels = load_levels(runs)
    levels = levels[levels["expand_s"].notna()]
    title = "Communication vs computation per BFS level"
    if levels.empty:
        return None, title, ("no runs with per-level timing: single-process (non-MPI)\n"
                             "runs record no expansion or communication time")
    per_level = _per_level(levels, ["expand_s", "comm_s"])
    per_run = per_level.groupby([*LEVEL_RUN_KEYS, "level"], dropna=False)[["expand_s", "comm_s"]] \
        .mean().reset_index()
    # comm last among the keys, so the nccl and mpi runs of one configuration sit side by side
    panel_keys = ["ranks", "graph", "algorithm", "backend", "grid", "exchange", "comm", "run_dir"]
    panels = per_run.groupby(panel_keys, dropna=False, sort=True)
    # wrap panels into rows of at most four so a long experiment stays readable
    n_cols = min(4, panels.ngroups)
    n_rows = -(-panels.ngroups // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.5 * n_cols + 1, 4.2 * n_rows),
                             squeeze=False, sharey=True)
    for ax in axes.flat[panels.ngroups:]:
        ax.set_visible(False)
    for ax, (values, panel) in zip(axes.flat, panels):
        run = dict(zip(panel_keys, values))
        panel = panel.sort_values("level")
        ms_expand, ms_comm = 1e3 * panel["expand_s"], 1e3 * panel["comm_s"]
        ax.bar(panel["level"], ms_expand, label="local expansion (computation)")
        ax.bar(panel["level"], ms_comm, bottom=ms_expand, label="communication")
        scheme = f"/{run['exchange']}" if isinstance(run["exchange"], str) else ""
        comm = f", {run['comm']}" if isinstance(run["comm"], str) else ""
        grid = f" ({run['grid']})" if isinstance(run["grid"], str) else ""
        ax.set_title(f"{run['graph']} · {run['algorithm']}{scheme} ({run['backend']}{comm})\n"
                     f"{_ranks(run['ranks'])}{grid}", fontsize=10)
        ax.set_xlabel("BFS level")
        ax.set_xticks(panel["level"])
    for row in axes:
        row[0].set_ylabel("time per level (ms)")
    axes[0][n_cols - 1].legend(fontsize=8)
    fig.suptitle(f"{title}: slowest rank's time, mean over roots", fontsize=11)
    fig.tight_layout()
    return fig, title, None


def _implementations(kron: pd.DataFrame) -> list[str]:
    """A label per run: the implementation, with ranks and grid where the runs differ in them."""
    several_counts = kron["ranks"].nunique() > 1
    several_grids = kron["grid"].nunique(dropna=True) > 1
    with_comm = comm_varies(kron)
    return [
        implementation_label(r.algorithm, r.backend, r.exchange, r.comm if with_comm else None)
        + (f", {_ranks(r.ranks)}" if several_counts else "")
        + (f" ({r.grid})" if several_grids and isinstance(r.grid, str) else "")
        for r in kron.itertuples()]


def teps_vs_scale_figure(runs: pd.DataFrame):
    title = "GTEPS vs scale per implementation"
    kron = _kronecker_runs(runs)
    if kron is None:
        return None, title, NO_KRONECKER
    points = kron.groupby(["implementation", "scale"]).apply(pool, include_groups=False) \
        .reset_index()
    points["GTEPS"] = points["teps"] / 1e9
    return _per_scale_lines(points, "GTEPS", GTEPS_LOG,
                            f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges"), \
        title, None


def kernel1_vs_scale_figure(runs: pd.DataFrame):
    title = "Kernel 1 (graph construction) time vs scale per implementation"
    kron = _kronecker_runs(runs)
    if kron is None:
        return None, title, NO_KRONECKER
    # repeated runs of one configuration: their mean construction time
    points = kron.groupby(["implementation", "scale"])["construction_time"].mean() \
        .reset_index()
    return _per_scale_lines(
        points, "construction_time", "construction time (s, log scale)",
        f"{title}\nedge list to the algorithm's searchable structure, slowest rank"), title, None


NO_KRONECKER = "no Kronecker runs: only Kronecker graphs have a scale"


def _kronecker_runs(runs: pd.DataFrame) -> pd.DataFrame | None:
    """The runs on Kronecker graphs (the ones with a scale), each with its implementation's
    label; None where there are none."""
    kron = runs[runs["scale"].notna()].copy()
    if kron.empty:
        return None
    kron["implementation"] = _implementations(kron)
    return kron


def _per_scale_lines(points: pd.DataFrame, y: str, y_label: str, title: str):
    """One line per implementation of `y` over the Kronecker scale, y on a log axis."""
    plt, sns = _plt()
    points = points.assign(scale=points["scale"].astype(int))
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.lineplot(points, x="scale", y=y, hue="implementation", marker="o", ax=ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    _log_y_axes(ax, "Kronecker scale (log2 vertices)", y_label, title)
    fig.tight_layout()
    return fig


def teps_vs_source_lines_figure(runs: pd.DataFrame):
    from .tables import source_lines_table
    plt, sns = _plt()
    title = "GTEPS vs source lines per implementation"
    table = source_lines_table(runs)
    table = table[table["source lines"].notna() & table["GTEPS"].notna()].copy()
    if table.empty:
        return None, title, "no run of a registered algorithm at the largest scale"
    table["implementation"] = _implementations(table.assign(grid=None))
    table["source lines"] = table["source lines"].astype(int)
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.scatterplot(table, x="source lines", y="GTEPS", hue="implementation", s=80, ax=ax,
                    legend=False)
    for label, lines, gteps in zip(table["implementation"], table["source lines"],
                                   table["GTEPS"]):
        ax.annotate(label, (lines, gteps), textcoords="offset points", xytext=(6, 4),
                    fontsize=8)
    ax.margins(x=0.25, y=0.15)
    where = table["graph"].iloc[0]
    scale = table["scale"].iloc[0]
    at = f"scale {scale}" if pd.notna(scale) else where
    _log_y_axes(ax, "source lines of the algorithm's own files (no blanks, comments, "
                "docstrings)", GTEPS_LOG, f"{title}\nGraph500 harmonic-mean TEPS at {at}")
    fig.tight_layout()
    return fig, title, None


def _tick(value) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# a threshold's x axis: 0 has no logarithm, so linear below 10
SYMLOG = {"value": "symlog", "linthresh": 10}


def _sweep_lines(data: pd.DataFrame, x: str, xscale: dict, xlabel: str, title: str):
    """GTEPS vs the swept setting `x`, a line per data["series"] (in order of appearance),
    every swept value a tick. Returns the figure, its axes and the series' colours."""
    plt, sns = _plt()
    fig, ax = plt.subplots(figsize=(8, 5))
    labels = list(dict.fromkeys(data["series"]))
    palette = dict(zip(labels, sns.color_palette(n_colors=len(labels))))
    for label, series in data.groupby("series", sort=False):
        series = series.sort_values(x)
        ax.plot(series[x], series["GTEPS"], "o-", color=palette[label], label=label)
    ax.set_xscale(**xscale)
    ticks = sorted(data[x].unique())
    ax.set_xticks(ticks, [_tick(t) for t in ticks])
    ax.margins(x=0.08)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GTEPS (10⁹ traversed edges/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=11)
    return fig, ax, palette


def _finish(fig, ax):
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def small_frontier_figure(runs: pd.DataFrame):
    from .tables import small_frontier_table
    title = "1d GTEPS vs small-frontier threshold"
    table = small_frontier_table(runs)
    swept = table[table["small frontier"].notna()].copy()
    if swept.empty:
        return None, title, "no runs with a small-frontier threshold (1d)"
    serial = table[(table["ranks"] == 1) & table["comm"].isna()]
    swept["small frontier"] = swept["small frontier"].astype(int)
    swept["series"] = [f"{r.graph} · {r.algorithm}/{r.backend}, {_ranks(r.ranks)}"
                       for r in swept.itertuples()]
    fig, ax, palette = _sweep_lines(
        swept, "small frontier", SYMLOG,
        "small-frontier threshold (vertices; frontiers below it expand on rank 0)",
        f"{title} (Racherla)\nGraph500 harmonic-mean TEPS, serial baseline dashed")
    for label, series in swept.groupby("series", sort=False):
        for s in serial[serial["graph"] == series["graph"].iloc[0]].itertuples():
            ax.axhline(s.GTEPS, ls="--", color=palette[label], alpha=0.7,
                       label=f"{s.graph} · {s.algorithm} (serial)")
    return _finish(fig, ax), title, None


def _held_setting(mode, lam, share) -> str:
    """What a hybrid mode's runs held fixed: workload's lambda, fixed's GPU share."""
    return f"workload, λ = {_tick(lam)}" if mode == "workload" else \
        f"fixed, GPU share {_tick(share)}"


def task_count_figure(runs: pd.DataFrame):
    from .tables import task_count_table
    title = "hybrid GTEPS vs number of tasks"
    table = task_count_table(runs)
    if table.empty:
        return None, title, "no hybrid runs (only hybrid has tasks)"
    table["tasks"] = table["tasks"].astype(int)
    table["series"] = [f"{graph} · {_held_setting(mode, lam, share)}" for graph, mode, lam, share
                       in zip(table["graph"], table["mode"], table["lambda"], table["GPU share"])]
    fig, ax, _ = _sweep_lines(
        table, "tasks", {"value": "log", "base": 2},
        "tasks T (contiguous vertex ranges, each on the CPU or the GPU per level; log2 scale)",
        f"{title} (Munguia et al. Fig. 9)\nGraph500 harmonic-mean TEPS")
    return _finish(fig, ax), title, None


def lambda_figure(runs: pd.DataFrame):
    from .tables import lambda_table
    title = "hybrid GTEPS vs lambda"
    table = lambda_table(runs)
    # lambda = inf (every task on the CPU) has no place on the axis: the table shows it
    table = table[table["lambda"] < float("inf")].copy()
    if table.empty:
        return None, title, "no hybrid runs of --mode workload with a finite lambda"
    several = table["tasks"].nunique() > 1
    table["series"] = [f"{graph}: edge factor {_tick(ef) if pd.notna(ef) else '–'}"
                       + (f", T = {tasks}" if several else "")
                       for graph, ef, tasks in zip(table["graph"], table["edge factor"],
                                                   table["tasks"])]
    fig, ax, _ = _sweep_lines(
        table, "lambda", SYMLOG,
        "lambda (vertices; a task whose frontier share exceeds it runs on the GPU)",
        f"{title} (Munguia et al. Fig. 10), --mode workload\nGraph500 harmonic-mean TEPS, "
        "a line per Kronecker edge factor")
    return _finish(fig, ax), title, None


def _always(figure, title):
    """Adapt a figure function that always has something to plot once it has rows."""
    def make(runs):
        return figure(runs), title, None
    return make


FIGURES = {
    "strong_scaling": _always(strong_scaling_figure, "Strong scaling"),
    "weak_scaling": _always(weak_scaling_figure, "Weak scaling"),
    "frontier": _always(frontier_figure, "Frontier size per BFS level"),
    "comm_vs_compute": comm_vs_compute_figure,
    "teps_vs_scale": teps_vs_scale_figure,
    "kernel1_vs_scale": kernel1_vs_scale_figure,
    "teps_vs_source_lines": teps_vs_source_lines_figure,
    "small_frontier": small_frontier_figure,
    "task_count": task_count_figure,
    "lambda": lambda_figure,
}


def write_figure(kind: str, runs: pd.DataFrame, out_stem) -> tuple[Path, Path]:
    """Write out_stem.png and out_stem.svg. With nothing to plot the figure says so (and so
    does stderr) rather than failing, so a workflow target for an omitted experiment builds."""
    plt, _ = _plt()
    make = FIGURES[kind]
    if runs.empty:
        fig, title, note = None, kind.replace("_", " "), "no runs for this figure"
    else:
        fig, title, note = make(runs)
    if fig is None:
        print(f"[bfs] report figure {kind}: {note.replace(chr(10), ' ')}; "
              f"writing a placeholder", file=sys.stderr)
        fig = _empty_figure(title, note)
    out_stem = Path(out_stem)
    paths = tuple(out_stem.with_name(f"{out_stem.name}.{fmt}") for fmt in ("png", "svg"))
    try:
        for path in paths:
            fmt = path.suffix[1:]
            atomic_write(path, lambda p: fig.savefig(p, format=fmt, dpi=150))
    finally:
        plt.close(fig)
    return paths


