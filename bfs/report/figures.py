"""Figures (`bfs report figure KIND`, written as KIND.png and KIND.svg):
    strong_scaling  Fu et al. 2014 Table I as a plot: a panel per graph (and per algorithm where
                    a graph has more than four series: a box's exchange ablation), GTEPS vs
                    ranks with ideal linear scaling, a line per (algorithm, backend, exchange,
                    comm) series, the graph's best single-process search as the COST reference
                    line in each of its panels.
    weak_scaling    Fu et al. 2014 Table II as a plot: GTEPS vs ranks, with ideal linear scaling,
                    and GTEPS per rank (GPU) vs ranks, level where the scaling is perfect.
    frontier        Fu et al. 2014 Fig. 1: frontier size (vertices discovered) per BFS level, a
                    panel per graph family, one named run per graph.
    comm_vs_compute Fu et al. 2014 Fig. 8: per level, local expansion vs communication time, a
                    panel per run; runs that differ only in comm (nccl, mpi) sit side by side.
    teps_vs_scale   SEI report Fig. 16: GTEPS vs Kronecker scale, one line per implementation.
    kernel1_vs_scale
                    SEI report Fig. 15: Kernel-1 (graph construction) time vs Kronecker scale,
                    one line per implementation.
    teps_vs_source_lines
                    SEI report Fig. 19: GTEPS at the largest scale vs the source lines of each
                    algorithm's own files, a labelled point per implementation.
    small_frontier  Racherla: 1d GTEPS vs its small-frontier threshold, a panel per graph, the
                    serial baseline as a dash-dotted level line.

Every figure: one colour and marker per implementation (style()), legends below the panels,
log GTEPS axes, the repeats' range as error bars, a red ring on points whose ranks outnumbered
their host's cores or shared a GPU.
    task_count      Munguia et al. Fig. 9: hybrid GTEPS vs the task count T, a line per graph
                    and mode (with its lambda or GPU share).
    lambda          Munguia et al. Fig. 10: hybrid --mode workload GTEPS vs lambda, a line per
                    Kronecker graph (edge factor).
    gteps_vs_watts  Green Graph500 for strong scaling: GTEPS vs the mean watts of the devices
                    the energy counters cover (the GPU boards only, under NVML), a panel per
                    graph, a line per series through its counts; runs without energy left out.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..partition import squarest_grid
from .runs import (IMPLEMENTATION_KEYS, LEVEL_RUN_KEYS, SERIES_KEYS, atomic_write, comm_varies,
                   count_label, implementation_label, load_levels, machines_note,
                   one_rank_in_every_series, pool, pooled_by_layout)
from .tables import cost, cost_references, scaling_base, single_process
from ..log import log

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
        if value <= 0:
            return ""
        exponent = math.floor(math.log10(value))
        mantissa = round(value / 10 ** exponent, 6)
        return f"{value:.{max(0, -exponent)}f}" if mantissa in (1, 2, 3, 5) else ""
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_formatter(FuncFormatter(plain))


# two lines: on one, a panel's label runs above its axes into a title of several lines
GTEPS_LOG = "GTEPS, log scale\n(10⁹ traversed edges/s)"


def _log_y_axes(ax, xlabel: str, ylabel: str, title: str | None = None) -> None:
    """A log y axis with plain tick labels, the axis labels and the panel's title."""
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=11)


# ------------------------------------------------------------------------- one style map
# Every figure draws an implementation in the same colour and marker: the colour is the
# algorithm's (its wave exchange the light shade of the same hue), the marker the algorithm's,
# and a GPU run exchanging through MPI dashed beside NCCL's solid line. Fixed by the
# registry's order, so 2d is the same green in every figure of every report.
MARKERS = "osD^vPX*hp<>"
IDEAL_STYLE = {"linestyle": ":", "linewidth": 1.2}       # linear scaling from a base point
REFERENCE_STYLE = {"linestyle": "-.", "linewidth": 1.8}  # a single-process level (COST, serial)


def style(algorithm, exchange=None, comm=None, backend=None) -> dict:
    import matplotlib
    from ..algorithms import ALGORITHMS
    order = list(ALGORITHMS)
    i = order.index(algorithm) if algorithm in order else len(order)
    pairs = matplotlib.colormaps["tab20"].colors   # (dark, light) pairs of ten hues
    color = pairs[2 * i + (exchange == "wave")] if i < 10 else \
        ("black", "dimgray")[exchange == "wave"]
    return {"color": color, "marker": MARKERS[i % len(MARKERS)],
            "linestyle": "--" if comm == "mpi" and backend == "gpu" else "-"}


def _run_style(run) -> dict:
    """style() of a run row (or a named tuple / dict with the run's keys)."""
    get = run.get if isinstance(run, (dict, pd.Series)) else lambda k: getattr(run, k, None)
    value = {k: get(k) for k in ("algorithm", "exchange", "comm", "backend")}
    return style(**{k: v if isinstance(v, str) else None for k, v in value.items()})


def _graph_colors(labels) -> dict:
    """Colours for series that are graphs or settings of one algorithm (the sweeps), apart
    from the algorithms' hues: a sequential palette in the series' order."""
    import seaborn as sns
    labels = list(dict.fromkeys(labels))
    return dict(zip(labels, sns.color_palette("viridis", n_colors=max(len(labels), 2))))


def _panels(n: int, width: float = 6.0, height: float = 5.6):
    """A row of n panels in a constrained layout, which makes room for a legend outside."""
    plt, _ = _plt()
    fig, axes = plt.subplots(1, n, figsize=(max(width * n, 8.0), height), squeeze=False,
                             layout="constrained")
    return fig, list(axes[0])


def _legend(fig):
    """One legend for the figure, below the panels (the constrained layout makes room), so
    that it never covers data; an entry per label (the first artist drawn with it)."""
    handles = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                   ncols=2 if len(handles) > 3 else 1, fontsize=8)
    return fig


def _errorbars(ax, x, y, low, high, color) -> None:
    """Error bars from low to high (the repeats' range); none where it is empty."""
    spread = (high - low) > 0
    if spread.any():
        ax.errorbar(x[spread], y[spread], yerr=[(y - low)[spread], (high - y)[spread]],
                    fmt="none", ecolor=color, capsize=3, elinewidth=1)


SHARED_LABEL = "ranks outnumber cores or share a GPU (no efficiency computed)"


def _mark_shared(ax, x, y, shared) -> None:
    """A red ring, and the note ('4 ranks on 2 cores'), on points whose ranks shared cores
    or a GPU: they measure contention, not scaling. A note is written once per count (series
    sharing it say the same); one that stands at several counts ('GPU jobs side by side (4
    slots)', a whole shared box's) is written once for the panel, in its lower left corner."""
    shared = pd.Series(list(shared), dtype=object)
    hit = shared.notna().to_numpy()
    if not hit.any():
        return
    xs, ys = pd.Series(list(x))[hit], pd.Series(list(y))[hit]
    ax.plot(xs, ys, "o", ms=15, mfc="none", mec="red", mew=1.5, label=SHARED_LABEL)
    notes = ax.__dict__.setdefault("_bfs_shared_notes", {})   # note -> {count: annotation}
    for xi, yi, note in zip(xs, ys, shared[hit]):
        at = notes.setdefault(note, {})
        if xi in at or at.get("panel"):
            continue
        if at:   # a second count: the panel's note replaces the points'
            for annotation in at.values():
                annotation.remove()
            at.clear()
            at["panel"] = ax.text(0.01, 0.02, f"ringed: {note}", transform=ax.transAxes,
                                  fontsize=7, color="red", ha="left", va="bottom")
            continue
        at[xi] = ax.annotate(note, (xi, yi), textcoords="offset points", xytext=(0, -20),
                             fontsize=7, color="red", ha="center")


def _suptitle(fig, text: str, fontsize: int = 11) -> None:
    """The figure's title, each line wrapped to the figure's width (about 11 characters an
    inch at this size) so that none runs off the canvas."""
    import textwrap
    width = int(fig.get_figwidth() * 11)
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")),
                 fontsize=fontsize)


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
    several grid shapes the fastest (the most pooled TEPS; of equals the squarest), so that a
    curve shows what the algorithm does with that many GPUs (on four GPUs at scale 26, 2d-do
    ran 1.5x faster on 1x4 than on 2x2, BENCHMARKS.md), else its one point."""
    chosen = set()
    for ranks, rows in pooled.groupby("ranks", sort=False):
        squarest = "{}x{}".format(*squarest_grid(int(ranks)))
        chosen.add(max(rows.index, key=lambda i: (rows.at[i, "teps"],
                                                  rows.at[i, "grid"] == squarest)))
    return [i in chosen for i in pooled.index]


def _line_grids(pooled: pd.DataFrame) -> dict:
    """{count: the grid its line joins} of a series' counts run on several grid shapes."""
    on_line = pooled[_on_line(pooled)]
    several = pooled["ranks"].value_counts()
    return {int(r["ranks"]): r["grid"] for _, r in on_line.iterrows()
            if several[r["ranks"]] > 1}


IDEAL_LABEL = "ideal (dotted): linear from the smallest count with cores of its own"
OTHER_SHAPE_LABEL = "another grid shape of the count (line: the fastest)"


def _scaling_series(ax, pooled: pd.DataFrame, st: dict, label: str, weak: bool,
                    per_rank: bool = False, shape_notes: bool = True,
                    name_line_at: frozenset = frozenset()) -> None:
    """A series' line over its counts with the repeats' range as error bars, its ideal line,
    the other grid shapes as open markers and its shared-hardware points ringed. per_rank:
    GTEPS per rank (GPU), whose ideal is level. shape_notes: each point of a count run on
    several grid shapes named beside it (a crowded panel names them on its x ticks instead,
    _count_ticks, but for the line's points at the counts in name_line_at, where the panel's
    series chose different grids)."""
    pooled = pooled.sort_values("ranks").reset_index(drop=True)
    pooled["on_line"] = _on_line(pooled)
    several_shapes = pooled["ranks"].map(pooled["ranks"].value_counts()) > 1
    per = pooled["ranks"] if per_rank else 1
    gteps = pooled["teps"] / 1e9 / per
    line = pooled[pooled["on_line"]]
    ax.plot(line["ranks"], gteps[line.index], label=label, **st)
    _errorbars(ax, pooled["ranks"], gteps, pooled["teps_min"] / 1e9 / per,
               pooled["teps_max"] / 1e9 / per, st["color"])
    base = scaling_base(line)
    if base is not None and (line["ranks"] > base["ranks"]).any():
        ideal = base["teps"] / 1e9 / base["ranks"] * (1 if per_rank else line["ranks"])
        ax.plot(line["ranks"], ideal * pd.Series(1.0, index=line.index), color=st["color"],
                label=IDEAL_LABEL, **IDEAL_STYLE)
    other = pooled[~pooled["on_line"]]
    if len(other):
        ax.plot(other["ranks"], gteps[other.index], ls="none", marker=st["marker"], mfc="none",
                color=st["color"], label=OTHER_SHAPE_LABEL)
    _mark_shared(ax, pooled["ranks"], gteps, pooled["shared"])
    for i, r in pooled.iterrows():
        notes = [f"scale {r['scale']}"] if weak else []
        if several_shapes[i] and (shape_notes or r["on_line"] and r["ranks"] in name_line_at):
            notes.append(r["grid"])
        if notes:
            ax.annotate(", ".join(notes), (r["ranks"], gteps[i]), textcoords="offset points",
                        xytext=(6, 6 if r["on_line"] else -10), fontsize=8, color=st["color"])


# A strong-scaling panel holds at most this many series: a graph with more (the exchange
# ablation on a box of GPUs: 2d and 2d-do by scan/wave and NCCL/MPI, 1d by comm) gets a panel
# per algorithm, and a crowded panel names its grid shapes on the x ticks, not at each point.
MAX_SERIES_PER_PANEL = 4
SHAPE_NOTES_UP_TO = 2     # series in a panel whose points are named by their grid shape


def _count_ticks(ax, points: pd.DataFrame, shapes: bool, line_grids: dict | None = None) -> bool:
    """The counts run as the x ticks (log2 axis); with `shapes`, each count's grid shapes
    under it where it ran on several: where every line of the panel joins the same one
    (line_grids: {count: the grids the lines join}) that one first and the others as 'o 1x4'
    (open markers), else all of them (the lines' points name their own). Whether any tick
    names shapes."""
    ax.set_xscale("log", base=2)
    counts = sorted(points["ranks"].unique())
    labels = []
    for count in counts:
        grids = [g for g in dict.fromkeys(points.loc[points["ranks"] == count, "grid"])
                 if isinstance(g, str)]
        if not shapes or len(grids) < 2:
            labels.append(str(count))
            continue
        joined = (line_grids or {}).get(int(count), set())
        if len(joined) != 1:
            labels.append("\n".join([str(count), *grids]))
            continue
        first, = joined
        labels.append("\n".join([str(count), first, *(f"o {g}" for g in grids if g != first)]))
    ax.set_xticks(counts, labels)
    ax.margins(x=0.12)
    return any("\n" in label for label in labels)


def _algorithm_facets(scaled: pd.DataFrame, keys: list[str]) -> list:
    """The algorithms to give a panel each ([None]: one panel a graph), in the registry's
    order: where some graph holds more than MAX_SERIES_PER_PANEL series of several
    algorithms."""
    from ..algorithms import ALGORITHMS
    crowded = any(g.groupby(keys, dropna=False).ngroups > MAX_SERIES_PER_PANEL
                  and g["algorithm"].nunique() > 1 for _, g in scaled.groupby("graph"))
    if not crowded:
        return [None]
    order = {a: i for i, a in enumerate(ALGORITHMS)}
    return sorted(scaled["algorithm"].unique(), key=lambda a: (order.get(a, len(order)), a))


def _below_legend(ax) -> None:
    """A panel's own legend under it (a faceted figure: each panel's series and COST), in
    the space the constrained layout keeps for it, never over data."""
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    if unique:
        ax.legend(list(unique.values()), list(unique), loc="upper center",
                  bbox_to_anchor=(0.5, -0.2), ncols=1, fontsize=8, frameon=False)


def _machines_line(runs: pd.DataFrame) -> str:
    """A scaling figure's title line where its points ran on several machines (a curve across
    hosts compares them too; the tables' machine column says which point ran where)."""
    note = machines_note(runs)
    return f"\n{note}: see the table's machine column" if note else ""


def _strong_scaling(runs: pd.DataFrame, title: str):
    """A panel per graph (and per algorithm where a graph holds too many series), a line per
    implementation, the graph's best single-process search as the COST reference line in
    every panel of the graph and the COST in each label."""
    count = count_label(runs)
    keys = SERIES_KEYS
    with_comm = comm_varies(runs)
    references = cost_references(runs)
    scaled = runs[~single_process(runs)]
    if scaled.empty:
        scaled = runs
    graphs = sorted(scaled["graph"].unique())
    facets = _algorithm_facets(scaled, keys)
    faceted = facets != [None]
    if faceted:
        plt, _ = _plt()
        fig, grid = plt.subplots(len(graphs), len(facets), squeeze=False, layout="constrained",
                                 figsize=(5.4 * len(facets), 7.4 * len(graphs)))
        panels = [(ax, graph, algorithm) for row, graph in zip(grid, graphs)
                  for ax, algorithm in zip(row, facets)]
    else:
        fig, axes = _panels(len(graphs))
        panels = [(ax, graph, None) for ax, graph in zip(axes, graphs)]
    shapes_on_ticks = False
    for ax, graph, algorithm in panels:
        on_graph = scaled[scaled["graph"] == graph]
        if algorithm is not None:
            on_graph = on_graph[on_graph["algorithm"] == algorithm]
        reference = references.get(graph)
        groups = [(values, pooled_by_layout(series))
                  for values, series in on_graph.groupby(keys, dropna=False, sort=True)]
        shape_notes = len(groups) <= SHAPE_NOTES_UP_TO
        line_grids: dict = {}     # count -> the grids the panel's lines join there
        for _, pooled in groups:
            for count_, grid in _line_grids(pooled).items():
                line_grids.setdefault(count_, set()).add(grid)
        differ = frozenset(c for c, joined in line_grids.items() if len(joined) > 1)
        for values, pooled in groups:
            named = dict(zip(keys, values))
            label = implementation_label(named["algorithm"], named["backend"], named["exchange"],
                                         named["comm"] if with_comm else None)
            if not faceted and len(graphs) > 1:
                label = f"{graph} · {label}"
            label += f" · COST: {cost(pooled, reference[1])}" if reference else ""
            _scaling_series(ax, pooled, _run_style(named), label, False,
                            shape_notes=shape_notes, name_line_at=differ)
        if reference:
            ref_label, ref_teps = reference
            ax.axhline(ref_teps / 1e9, color=style(ref_label.split("/")[0])["color"],
                       label=f"{graph} · best single process: {ref_label} (COST reference)"
                       if len(graphs) > 1 and not faceted else
                       f"best single process: {ref_label} (COST reference)",
                       **REFERENCE_STYLE)
        shapes_on_ticks |= _count_ticks(ax, on_graph, shapes=not shape_notes,
                                        line_grids=line_grids)
        _log_y_axes(ax, f"{'GPUs' if count == 'GPUs' else 'MPI ranks'} (log2 scale)", GTEPS_LOG,
                    graph if algorithm is None else f"{graph} · {algorithm}")
        if faceted:
            _below_legend(ax)
    _suptitle(fig, f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges (Fu's "
                 "directed TEPS = 2×)\nerror bars: range over the repeats of a point"
                 + ("; under each count its grids: the lines' (the fastest), then o the open "
                    "markers'" if shapes_on_ticks else "") + _machines_line(runs),
              fontsize=11)
    return fig if faceted else _legend(fig)


def _weak_scaling(runs: pd.DataFrame, title: str):
    """Two panels, a line per implementation (the graph grows along it): GTEPS against the
    count, and GTEPS per GPU (rank), level where the scaling is perfect."""
    count = count_label(runs)
    keys = IMPLEMENTATION_KEYS
    with_comm = comm_varies(runs)
    unit = "GPU" if count == "GPUs" else "rank"
    fig, axes = _panels(2)
    for ax, per_rank in zip(axes, (False, True)):
        for values, series in runs.groupby(keys, dropna=False, sort=True):
            named = dict(zip(keys, values))
            pooled = pooled_by_layout(series)
            pooled["scale"] = [series.loc[series["ranks"] == r, "scale"].iloc[0]
                               for r in pooled["ranks"]]
            label = implementation_label(named["algorithm"], named["backend"], named["exchange"],
                                         named["comm"] if with_comm else None)
            _scaling_series(ax, pooled, _run_style(named), label, True, per_rank=per_rank)
        _count_ticks(ax, runs, shapes=False)
        _log_y_axes(ax, f"{'GPUs' if count == 'GPUs' else 'MPI ranks'} (log2 scale)",
                    f"GTEPS per {unit} (log scale)" if per_rank else GTEPS_LOG,
                    f"GTEPS per {unit}: level is perfect weak scaling" if per_rank
                    else "GTEPS")
    _suptitle(fig, f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges (Fu's "
                 "directed TEPS = 2×)\nerror bars: range over the repeats of a point"
                 + _machines_line(runs), fontsize=11)
    return _legend(fig)


def strong_scaling_figure(runs: pd.DataFrame):
    return _strong_scaling(one_rank_in_every_series(runs),
                           "Strong scaling: GTEPS vs ranks, fixed graph")


def weak_scaling_figure(runs: pd.DataFrame):
    return _weak_scaling(one_rank_in_every_series(runs),
                         "Weak scaling: GTEPS vs ranks, graph grows with ranks")


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


FAMILIES = {"kronecker": "Kronecker graphs (scale-free)", "snap": "SNAP graphs",
            "lattice": "lattices (road-like, high diameter)"}


def frontier_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per graph: the frontier per level depends on the graph and its roots, which
    every run of the graph shares; a single-process run where there is one, else the first."""
    order = runs.assign(distributed=~single_process(runs)) \
        .sort_values(["graph", "distributed", "run_dir"])
    return order.drop_duplicates("graph")


def _run_id(run_dir: str) -> str:
    """A run directory named as the workflow names it: graph/algorithm/backend-layout-variant
    (the last three path parts)."""
    return "/".join(Path(run_dir).parts[-3:])


def frontier_figure(runs: pd.DataFrame):
    chosen = frontier_runs(runs)
    levels = frontier_levels(chosen)
    families = [f for f in [*FAMILIES, *sorted(set(chosen["source"]) - set(FAMILIES))]
                if f in set(chosen["source"])]
    fig, axes = _panels(len(families), width=5.0)
    colors = _graph_colors(chosen["graph"])
    for ax, family in zip(axes, families):
        for run in chosen[chosen["source"] == family].itertuples():
            mine = levels[levels["run_dir"] == run.run_dir]
            per_level = mine.groupby("level")["frontier_size"].mean()
            ax.plot(per_level.index, per_level.to_numpy(), "o-", ms=4, color=colors[run.graph],
                    label=f"{run.graph}: run {_run_id(run.run_dir)}, "
                          f"{mine['root'].nunique()} roots")
        ax.xaxis.get_major_locator().set_params(integer=True)
        _log_y_axes(ax, "BFS level", "frontier size (vertices, log scale)",
                    FAMILIES.get(family, family))
    _suptitle(fig, "Frontier size per BFS level: vertices discovered at the level, mean over "
                 "the roots of the named run", fontsize=11)
    return _legend(fig)


def comm_vs_compute_figure(runs: pd.DataFrame):
    """One panel per configuration (a strong-scaling set gives one per rank count), its
    repeats pooled, stacked bars."""
    plt, _ = _plt()
    levels = load_levels(runs)
    levels = levels[levels["expand_s"].notna()]
    title = "Communication vs computation per BFS level"
    if levels.empty:
        return None, title, ("no runs with per-level timing: single-process (non-MPI)\n"
                             "runs record no expansion or communication time")
    per_level = _per_level(levels, ["expand_s", "comm_s"])
    # comm last among the keys, so the nccl and mpi runs of one configuration sit side by side;
    # a configuration's repeats are one panel, the mean over all their roots
    panel_keys = ["ranks", "graph", "algorithm", "backend", "grid", "exchange", "comm"]
    per_config = per_level.groupby([*panel_keys, "level"], dropna=False)[["expand_s", "comm_s"]] \
        .mean().reset_index()
    shared = dict(zip(runs["run_dir"], runs["shared"]))
    # the panels' shared-hardware notes, in the panels' order (the same sorted groups)
    notes = [group["shared"].dropna().iloc[0] if group["shared"].notna().any() else None
             for _, group in per_level.assign(shared=per_level["run_dir"].map(shared))
             .groupby(panel_keys, dropna=False, sort=True)]
    panels = per_config.groupby(panel_keys, dropna=False, sort=True)
    # wrap panels into rows of at most four so a long experiment stays readable
    n_cols = min(4, panels.ngroups)
    n_rows = -(-panels.ngroups // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.5 * n_cols + 1, 4.2 * n_rows + 1),
                             squeeze=False, sharey=True, layout="constrained")
    for ax in axes.flat[panels.ngroups:]:
        ax.set_visible(False)
    for ax, (values, panel), note in zip(axes.flat, panels, notes):
        run = dict(zip(panel_keys, values))
        panel = panel.sort_values("level")
        ms_expand, ms_comm = 1e3 * panel["expand_s"], 1e3 * panel["comm_s"]
        ax.bar(panel["level"], ms_expand, label="local expansion (computation)")
        ax.bar(panel["level"], ms_comm, bottom=ms_expand, label="communication")
        scheme = f"/{run['exchange']}" if isinstance(run["exchange"], str) else ""
        comm = f", {run['comm']}" if isinstance(run["comm"], str) else ""
        grid = f" ({run['grid']})" if isinstance(run["grid"], str) else ""
        ax.set_title(f"{run['graph']} · {run['algorithm']}{scheme} ({run['backend']}{comm})\n"
                     f"{_ranks(run['ranks'])}{grid}"
                     + (f" · shared: {note}" if isinstance(note, str) else ""), fontsize=10,
                     color="red" if isinstance(note, str) else "black")
        ax.set_xlabel("BFS level")
        ax.set_xticks(panel["level"])
    for row in axes:
        row[0].set_ylabel("time per level (ms)")
    _suptitle(fig, f"{title}: slowest rank's time, mean over roots", fontsize=11)
    return _legend(fig), title, None


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
    return _per_scale_lines(
        kron, lambda p: (p["teps"] / 1e9, p["teps_min"] / 1e9, p["teps_max"] / 1e9),
        GTEPS_LOG, f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges; "
        "error bars: range over repeats"), title, None


def kernel1_vs_scale_figure(runs: pd.DataFrame):
    title = "Kernel 1 (graph construction) time vs scale per implementation"
    kron = _kronecker_runs(runs)
    if kron is None:
        return None, title, NO_KRONECKER
    return _per_scale_lines(
        kron, lambda p: (p["construction_time"], p["construction_min"], p["construction_max"]),
        "construction time (s, log scale)",
        f"{title}\nedge list to the algorithm's searchable structure, slowest rank; "
        "median of the repeats, error bars: their range"), title, None


NO_KRONECKER = "no Kronecker runs: only Kronecker graphs have a scale"


def _kronecker_runs(runs: pd.DataFrame) -> pd.DataFrame | None:
    """The runs on Kronecker graphs (the ones with a scale), each with its implementation's
    label; None where there are none."""
    kron = runs[runs["scale"].notna()].copy()
    if kron.empty:
        return None
    kron["implementation"] = _implementations(kron)
    return kron


def _per_scale_lines(kron: pd.DataFrame, measure, y_label: str, title: str):
    """One line per implementation over the Kronecker scale of measure(pooled points) =
    (value, low, high), the low-high range as error bars, y on a log axis."""
    fig, (ax,) = _panels(1, width=7.0)
    for label, runs in kron.groupby("implementation", sort=True):
        st = _run_style(runs.iloc[0])
        points = runs.groupby("scale").apply(pool, include_groups=False).reset_index()
        points["scale"] = points["scale"].astype(int)
        value, low, high = measure(points)
        ax.plot(points["scale"], value, label=label, **st)
        _errorbars(ax, points["scale"], value, low, high, st["color"])
        _mark_shared(ax, points["scale"], value, points["shared"])
    ax.xaxis.get_major_locator().set_params(integer=True)
    _log_y_axes(ax, "Kronecker scale (log2 vertices)", y_label)
    _suptitle(fig, title, fontsize=11)
    return _legend(fig)


def teps_vs_source_lines_figure(runs: pd.DataFrame):
    from .tables import source_lines_table
    title = "GTEPS vs source lines per implementation"
    table = source_lines_table(runs)
    table = table[table["source lines"].notna() & table["GTEPS"].notna()].copy()
    if table.empty:
        return None, title, "no run of a registered algorithm at the largest scale"
    table["implementation"] = _implementations(table.assign(grid=None))
    table["source lines"] = table["source lines"].astype(int)
    fig, (ax,) = _panels(1, width=7.0)
    for _, r in table.iterrows():
        st = _run_style(r)
        ax.plot([r["source lines"]], [r["GTEPS"]], ls="none", ms=9, color=st["color"],
                marker=st["marker"])
        ax.annotate(r["implementation"], (r["source lines"], r["GTEPS"]),
                    textcoords="offset points", xytext=(7, 4), fontsize=8)
    ax.margins(x=0.25, y=0.15)
    where = table["graph"].iloc[0]
    scale = table["scale"].iloc[0]
    at = f"scale {scale}" if pd.notna(scale) else where
    _log_y_axes(ax, "source lines of the algorithm's own files (no blanks, comments, "
                "docstrings)", GTEPS_LOG, f"{title}\nGraph500 harmonic-mean TEPS at {at}")
    return fig, title, None


def _tick(value) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# a threshold's x axis: 0 has no logarithm, so linear below 10
SYMLOG = {"value": "symlog", "linthresh": 10}


def _sweep_lines(ax, data: pd.DataFrame, x: str, xscale: dict, xlabel: str, styles: dict):
    """GTEPS vs the swept setting `x` on a log y axis (sweeps span decades), a line per
    data["series"] in order of appearance, styles[series] its look; every swept value a tick."""
    for label, series in data.groupby("series", sort=False):
        series = series.sort_values(x)
        ax.plot(series[x], series["GTEPS"], label=label, **styles[label])
    ax.set_xscale(**xscale)
    ticks = sorted(data[x].unique())
    ax.set_xticks(ticks, [_tick(t) for t in ticks])
    ax.margins(x=0.08)
    _log_y_axes(ax, xlabel, GTEPS_LOG)


def _sweep_figure(data: pd.DataFrame, x: str, xscale: dict, xlabel: str, title: str):
    """A one-panel sweep: a line per data["series"], coloured by series (graphs or settings
    of the one swept algorithm), the legend outside."""
    fig, (ax,) = _panels(1, width=7.0)
    colors = _graph_colors(data["series"])
    _sweep_lines(ax, data, x, xscale, xlabel,
                 {label: {"color": color, "marker": "o"} for label, color in colors.items()})
    _suptitle(fig, title, fontsize=11)
    return _legend(fig)


def small_frontier_figure(runs: pd.DataFrame):
    """A panel per graph: 1d's line per backend and rank count over the threshold, and the
    graph's serial baseline as a level line inside the axes."""
    from .tables import small_frontier_table
    title = "1d GTEPS vs small-frontier threshold"
    table = small_frontier_table(runs)
    swept = table[table["small frontier"].notna()].copy()
    if swept.empty:
        return None, title, "no runs with a small-frontier threshold (1d)"
    serial = table[(table["ranks"] == 1) & table["comm"].isna()]
    swept["small frontier"] = swept["small frontier"].astype(int)
    swept["series"] = [f"{r.algorithm}/{r.backend}, {_ranks(r.ranks)}"
                       for r in swept.itertuples()]
    # the algorithm's colour and marker; rank counts told apart by the line's dashes
    counts = sorted(swept["ranks"].unique())
    styles = {label: {**_run_style(r), "linestyle": ("-", "--", "-.", ":")[counts.index(r.ranks) % 4]}
              for label, r in zip(swept["series"], swept.itertuples())}
    graphs = list(dict.fromkeys(swept["graph"]))
    fig, axes = _panels(len(graphs), width=5.5)
    for ax, graph in zip(axes, graphs):
        on_graph = swept[swept["graph"] == graph]
        _sweep_lines(ax, on_graph, "small frontier", SYMLOG,
                     "small-frontier threshold (vertices;\nfrontiers below it expand on rank 0)",
                     styles)
        _mark_shared(ax, on_graph["small frontier"], on_graph["GTEPS"],
                     on_graph["shared hardware"])
        for s in serial[serial["graph"] == graph].itertuples():
            ax.axhline(s.GTEPS, color=style(s.algorithm)["color"],
                       label=f"{s.algorithm}/{s.backend} (serial baseline)", **REFERENCE_STYLE)
        ax.set_title(graph, fontsize=11)
    _suptitle(fig, f"{title} (Racherla)\nGraph500 harmonic-mean TEPS, the serial baseline "
                 "dash-dotted", fontsize=11)
    return _legend(fig), title, None


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
    return _sweep_figure(
        table, "tasks", {"value": "log", "base": 2},
        "tasks T (contiguous vertex ranges, each on the CPU or the GPU per level; log2 scale)",
        f"{title} (Munguia et al. Fig. 9)\nGraph500 harmonic-mean TEPS"), title, None


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
    return _sweep_figure(
        table, "lambda", SYMLOG,
        "lambda (vertices; a task whose frontier share exceeds it runs on the GPU)",
        f"{title} (Munguia et al. Fig. 10), --mode workload\nGraph500 harmonic-mean TEPS, "
        "a line per Kronecker edge factor"), title, None


def gteps_vs_watts_figure(runs: pd.DataFrame):
    """A panel per graph: each series' points (pooled per count and grid) at their mean watts
    and GTEPS, joined in count order and labelled with the count and MTEPS/W; log axes."""
    title = "GTEPS vs watts"
    measured = runs[runs["watts"].notna()]
    left_out = len(runs) - len(measured)
    if left_out:
        log(f"report figure gteps_vs_watts: {left_out} run(s) without energy left out ("
            + "; ".join(sorted({str(n) for n in runs.loc[runs["watts"].isna(), "energy_note"]}))
            + ")")
    if measured.empty:
        return None, title, "no run measured its energy (run.json's energy is null):\n" \
            "bfs run --energy-window S on GPUs (NVML) or readable RAPL counters"
    count = count_label(measured)
    with_comm = comm_varies(measured)
    graphs = sorted(measured["graph"].unique())
    fig, axes = _panels(len(graphs))
    for ax, graph in zip(axes, graphs):
        for values, series in measured[measured["graph"] == graph].groupby(
                SERIES_KEYS, dropna=False, sort=True):
            named = dict(zip(SERIES_KEYS, values))
            points = pooled_by_layout(series)
            # the mean of a point's repeats, in pooled_by_layout's order of the points
            points["watts"] = series.groupby(["ranks", "grid"], dropna=False, sort=True)[
                "watts"].mean().to_numpy()
            gteps = points["teps"] / 1e9
            ax.plot(points["watts"], gteps, **_run_style(named),
                    label=implementation_label(named["algorithm"], named["backend"],
                                               named["exchange"],
                                               named["comm"] if with_comm else None))
            unit = "GPU" if count == "GPUs" else "rank"
            for w, g, r in zip(points["watts"], gteps, points["ranks"]):
                ax.annotate(f"{r} {unit}{'s' * (r != 1)}, {g * 1e3 / w:.3g} MTEPS/W", (w, g),
                            textcoords="offset points", xytext=(6, 4), fontsize=8)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.margins(x=0.25, y=0.15)
        _log_y_axes(ax, "mean power over the energy window (W, log scale)", GTEPS_LOG, graph)
    covers = ", ".join(sorted(measured["energy_covers"].dropna().unique()))
    _suptitle(fig, f"{title}: Green Graph500's TEPS per watt across the strong-scaling counts\n"
                   f"watts cover the {covers} only, not the rest of the node"
                   + (f"; {left_out} run{'s' * (left_out != 1)} without energy left out"
                      if left_out else ""), fontsize=11)
    return _legend(fig), title, None


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
    "gteps_vs_watts": gteps_vs_watts_figure,
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
        log(f"report figure {kind}: {note.replace(chr(10), ' ')}; writing a placeholder")
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


