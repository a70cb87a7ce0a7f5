"""Tables and figures from run directories, each reproducing one published presentation:

Tables (`bfs report table KIND`, written as KIND.csv and KIND.md):
    strong_scaling  Fu et al. 2014, Table I: one graph, growing rank (GPU) counts; GTEPS in both
                    conventions, mean BFS time, speedup and parallel efficiency against the
                    smallest count of each (graph, algorithm, backend, exchange) series.
    weak_scaling    Fu et al. 2014, Table II: the graph grows with the ranks; scale, vertices,
                    directed edges, directed edges per rank, BFS time and GTEPS.
    graphs          Merrill et al. 2012 / Racherla per-graph tables: vertices, edges, search
                    depth, time (ms) and GTEPS per graph and algorithm.
    kernel1         SEI report: Kernel-1 (graph construction) time per graph, algorithm and ranks.

Figures (`bfs report figure KIND`, written as KIND.png and KIND.svg):
    strong_scaling  Fu et al. 2014 Table I as a plot: GTEPS vs ranks, with ideal linear scaling.
    weak_scaling    Fu et al. 2014 Table II as a plot: GTEPS vs ranks, with ideal linear scaling.
    frontier        Fu et al. 2014 Fig. 1: frontier size (vertices discovered) per BFS level.
    comm_vs_compute Fu et al. 2014 Fig. 8: per level, local expansion vs communication time.
    teps_vs_scale   SEI report Fig. 16: GTEPS vs Kronecker scale, one line per implementation.

TEPS conventions. "GTEPS" is the Graph500 3.0 figure: the harmonic mean over searches,
n / sum(time_i / nedge_i), where nedge counts the traversed component's undirected input edges
(self-loops excluded, duplicates kept). Fu et al. count every undirected edge in both directions,
so their "directed GTEPS" is twice that; both are shown where Fu's tables are reproduced.

Runs repeated with the same configuration are pooled as one: the harmonic mean over all their
searches. Only valid runs are aggregated: a run directory marked invalid, holding an invalid search or
missing a file is refused with an error naming it.
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from .graphdir import BfsError

RUN_FILES = ("run.json", "searches.parquet", "levels.parquet")
SERIES_KEYS = ["graph", "algorithm", "backend", "exchange"]


# ---------------------------------------------------------------------------------- loading

def _refuse(run_dir, why: str):
    raise BfsError(f"{run_dir}: {why}; an invalid or incomplete run is never aggregated "
                   "as a result")


def _read_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    missing = [f for f in RUN_FILES if not (run_dir / f).is_file()]
    if missing:
        _refuse(run_dir, f"not a complete run directory (missing {', '.join(missing)})")
    try:
        info = json.loads((run_dir / "run.json").read_text())
    except json.JSONDecodeError as e:
        _refuse(run_dir, f"run.json is not valid JSON ({e})")
    if info.get("valid") is not True:
        _refuse(run_dir, f"run.json marks the run invalid (\"valid\": "
                         f"{json.dumps(info.get('valid'))})")
    searches = pq.read_table(run_dir / "searches.parquet").to_pandas()
    if searches.empty:
        _refuse(run_dir, "searches.parquet holds no search")
    bad = searches.loc[~searches["valid"].astype(bool), "root"].tolist()
    if bad:
        _refuse(run_dir, f"{len(bad)} search(es) failed validation (roots {bad[:5]})")
    return info, searches


def harmonic_mean_teps(times, nedges) -> float:
    """Graph500's mean TEPS: n / sum(time_i / nedge_i)."""
    times, nedges = np.asarray(times, np.float64), np.asarray(nedges, np.float64)
    return len(times) / float(np.sum(times / nedges))


def _run_row(run_dir: Path, info: dict, searches: pd.DataFrame) -> dict:
    graph, params, env = info["graph"], info["parameters"], info.get("environment", {})
    backend = params["backend"]
    return {
        "run_dir": str(run_dir),
        "graph": graph["name"],
        "source": graph["source"],
        # SNAP graphs have no Kronecker scale; run.json's top-level "scale" is log2(n) for them
        "scale": graph.get("scale"),
        "n_vertices": graph["n_vertices"],
        "n_edges": graph["n_edges"],
        # Fu's directed-edge count: the largest traversed component's input edges, both ways
        "directed_edges": 2 * int(searches["nedge"].max()),
        "algorithm": params["algorithm"],
        "backend": backend,
        "ranks": int(params["mpi_size"]),
        "gpus": len(env.get("gpus") or []) if backend == "gpu" else 0,
        "exchange": params.get("exchange"),
        "construction_time": float(info["construction_time"]),
        "n_searches": len(searches),
        "teps": harmonic_mean_teps(searches["time_s"], searches["nedge"]),
        "mean_time_s": float(searches["time_s"].mean()),
        "max_depth": int(searches["depth"].max()),
        "mean_depth": float(searches["depth"].mean()),
        "mean_reached": float(searches["reached"].mean()),
        "mean_nedge": float(searches["nedge"].mean()),
    }


RUN_COLUMNS = [
    "run_dir", "graph", "source", "scale", "n_vertices", "n_edges", "directed_edges",
    "algorithm", "backend", "ranks", "gpus", "exchange", "construction_time", "n_searches",
    "teps", "mean_time_s", "max_depth", "mean_depth", "mean_reached", "mean_nedge"]


def load_runs(run_dirs) -> pd.DataFrame:
    """One row per run directory; refuses (BfsError) any run that is invalid or incomplete."""
    rows = []
    for run_dir in map(Path, run_dirs):
        info, searches = _read_run(run_dir)
        rows.append(_run_row(run_dir, info, searches))
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    runs["scale"] = runs["scale"].astype("Int64")
    return runs


def load_levels(runs: pd.DataFrame) -> pd.DataFrame:
    """levels.parquet of every run in `runs`, with the run's identifying columns added."""
    frames = []
    for run in runs.itertuples(index=False):
        levels = pq.read_table(Path(run.run_dir) / "levels.parquet").to_pandas()
        for key in ["run_dir", "graph", "algorithm", "backend", "exchange", "ranks"]:
            levels[key] = getattr(run, key)
        frames.append(levels)
    if not frames:
        return pd.DataFrame(columns=["run_dir", "graph", "algorithm", "backend", "exchange",
                                     "ranks", "root", "rank", "level", "frontier_size",
                                     "expand_s", "comm_s", "comm_bytes"])
    return pd.concat(frames, ignore_index=True)


def _pool(runs: pd.DataFrame) -> pd.Series:
    """Repeated runs of one configuration pooled as if one run: Graph500 harmonic mean over
    all their searches (n / teps recovers each run's sum of time_i / nedge_i exactly)."""
    n = runs["n_searches"].sum()
    return pd.Series({
        "teps": n / (runs["n_searches"] / runs["teps"]).sum(),
        "mean_time_s": (runs["mean_time_s"] * runs["n_searches"]).sum() / n,
        "mean_depth": (runs["mean_depth"] * runs["n_searches"]).sum() / n,
    })


def _implementation(algorithm, backend, exchange) -> str:
    return "/".join(p for p in [algorithm, backend, exchange] if isinstance(p, str))


# ----------------------------------------------------------------------------------- tables

def _count_label(runs: pd.DataFrame) -> str:
    return "GPUs" if len(runs) and (runs["backend"] == "gpu").all() else "ranks"


def strong_scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    count = _count_label(runs)
    out = []
    for keys, series in runs.groupby(SERIES_KEYS, dropna=False, sort=True):
        pooled = series.groupby("ranks").apply(_pool, include_groups=False).sort_index()
        base_ranks = pooled.index[0]
        base_teps = pooled["teps"].iloc[0]
        for ranks, p in pooled.iterrows():
            # from TEPS, not times, so speedup and the figure's GTEPS curve tell the same story
            speedup = p["teps"] / base_teps
            out.append({**dict(zip(SERIES_KEYS, keys)), count: ranks,
                        "GTEPS": p["teps"] / 1e9, "directed GTEPS": 2 * p["teps"] / 1e9,
                        "BFS time (s)": p["mean_time_s"], "speedup": speedup,
                        "efficiency": speedup / (ranks / base_ranks)})
    return pd.DataFrame(out, columns=[*SERIES_KEYS, count, "GTEPS", "directed GTEPS",
                                      "BFS time (s)", "speedup", "efficiency"])


def weak_scaling_table(runs: pd.DataFrame) -> pd.DataFrame:
    count = _count_label(runs)
    keys = ["algorithm", "backend", "exchange"]
    out = []
    for series_keys, series in runs.groupby(keys, dropna=False, sort=True):
        for (ranks, graph), group in series.groupby(["ranks", "graph"], sort=True):
            p = _pool(group)
            first = group.iloc[0]
            out.append({**dict(zip(keys, series_keys)), count: ranks, "graph": graph,
                        "scale": first["scale"], "vertices": first["n_vertices"],
                        "directed edges": first["directed_edges"],
                        "directed edges per rank": first["directed_edges"] / ranks,
                        "BFS time (s)": p["mean_time_s"], "GTEPS": p["teps"] / 1e9,
                        "directed GTEPS": 2 * p["teps"] / 1e9})
    return pd.DataFrame(out, columns=[*keys, count, "graph", "scale", "vertices",
                                      "directed edges", "directed edges per rank",
                                      "BFS time (s)", "GTEPS", "directed GTEPS"])


def graphs_table(runs: pd.DataFrame) -> pd.DataFrame:
    keys = ["graph", "algorithm", "backend", "exchange", "ranks"]
    out = []
    for values, group in runs.groupby(keys, dropna=False, sort=True):
        p = _pool(group)
        first = group.iloc[0]
        out.append({**dict(zip(keys, values)), "vertices": first["n_vertices"],
                    "edges": first["n_edges"], "search depth": p["mean_depth"],
                    "time (ms)": 1e3 * p["mean_time_s"], "GTEPS": p["teps"] / 1e9})
    return pd.DataFrame(out, columns=[*keys, "vertices", "edges", "search depth", "time (ms)",
                                      "GTEPS"])


def kernel1_table(runs: pd.DataFrame) -> pd.DataFrame:
    cols = ["graph", "scale", "algorithm", "backend", "ranks", "construction_time", "run_dir"]
    table = runs[cols].sort_values(["graph", "algorithm", "backend", "ranks", "run_dir"])
    return table.rename(columns={"construction_time": "construction time (s)"}) \
        .reset_index(drop=True)


TABLES = {"strong_scaling": strong_scaling_table, "weak_scaling": weak_scaling_table,
          "graphs": graphs_table, "kernel1": kernel1_table}


def _atomic_write(path: Path, write) -> None:
    """Call write(tmp_path) on a temporary sibling of `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _markdown_cell(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
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
    _atomic_write(csv, lambda p: df.to_csv(p, index=False))
    _atomic_write(md, lambda p: p.write_text(to_markdown(df)))
    return csv, md


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


def _empty_figure(title: str, note: str):
    plt, _ = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, note, ha="center", va="center", fontsize=13, wrap=True,
            transform=ax.transAxes)
    return fig


def _scaling_figure(runs: pd.DataFrame, title: str, annotate_scale: bool):
    plt, sns = _plt()
    count = _count_label(runs)
    # weak scaling: the graph changes along a series, so a series is an implementation
    keys = SERIES_KEYS[1:] if annotate_scale else SERIES_KEYS
    points = []
    for values, series in runs.groupby(keys, dropna=False, sort=True):
        pooled = series.groupby("ranks").apply(_pool, include_groups=False).reset_index()
        named = dict(zip(keys, values))
        implementation = _implementation(named["algorithm"], named["backend"], named["exchange"])
        pooled["series"] = implementation if annotate_scale else \
            f"{named['graph']} · {implementation}"
        pooled["scale"] = [series.loc[series["ranks"] == r, "scale"].iloc[0]
                           for r in pooled["ranks"]]
        points.append(pooled)
    data = pd.concat(points, ignore_index=True)
    data["GTEPS"] = data["teps"] / 1e9
    fig, ax = plt.subplots(figsize=(8, 5))
    labels = data["series"].unique()
    palette = dict(zip(labels, sns.color_palette(n_colors=len(labels))))
    for label, series in data.groupby("series", sort=False):
        series = series.sort_values("ranks")
        color = palette[label]
        ax.plot(series["ranks"], series["GTEPS"], "o-", color=color, label=label)
        base = series.iloc[0]
        if len(series) > 1:
            ax.plot(series["ranks"], base["GTEPS"] * series["ranks"] / base["ranks"], "--",
                    color=color, alpha=0.6)
        if annotate_scale:
            for r in series.itertuples():
                ax.annotate(f"scale {r.scale}", (r.ranks, r.GTEPS), textcoords="offset points",
                            xytext=(6, 6), fontsize=8, color=color)
    ax.plot([], [], "--", color="gray", label="ideal: linear from the smallest count")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ranks = sorted(data["ranks"].unique())
    ax.set_xticks(ranks, [str(r) for r in ranks])
    ax.margins(x=0.12)
    ax.set_xlabel(f"{'GPUs' if count == 'GPUs' else 'MPI ranks'} (log2 scale)")
    ax.set_ylabel("GTEPS (10⁹ traversed edges/s, log scale)")
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
    return levels.groupby(["run_dir", "graph", "ranks", "algorithm", "backend", "exchange",
                           "root", "level"], dropna=False)[columns].max().reset_index()


def frontier_figure(runs: pd.DataFrame):
    plt, sns = _plt()
    levels = _per_level(load_levels(runs), ["frontier_size"])
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
    per_run = per_level.groupby(["run_dir", "graph", "ranks", "algorithm", "backend",
                                 "exchange", "level"], dropna=False)[["expand_s", "comm_s"]] \
        .mean().reset_index()
    panels = per_run.groupby(["ranks", "graph", "algorithm", "backend", "exchange", "run_dir"],
                             dropna=False, sort=True)
    # wrap panels into rows of at most four so a long experiment stays readable
    n_cols = min(4, panels.ngroups)
    n_rows = -(-panels.ngroups // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.5 * n_cols + 1, 4.2 * n_rows),
                             squeeze=False, sharey=True)
    for ax in axes.flat[panels.ngroups:]:
        ax.set_visible(False)
    for ax, ((ranks, graph, algorithm, backend, exchange, _), panel) in zip(axes.flat, panels):
        panel = panel.sort_values("level")
        ms_expand, ms_comm = 1e3 * panel["expand_s"], 1e3 * panel["comm_s"]
        ax.bar(panel["level"], ms_expand, label="local expansion (computation)")
        ax.bar(panel["level"], ms_comm, bottom=ms_expand, label="communication")
        scheme = f"/{exchange}" if isinstance(exchange, str) else ""
        ax.set_title(f"{graph} · {algorithm}{scheme} ({backend})\n{_ranks(ranks)}", fontsize=10)
        ax.set_xlabel("BFS level")
        ax.set_xticks(panel["level"])
    for row in axes:
        row[0].set_ylabel("time per level (ms)")
    axes[0][n_cols - 1].legend(fontsize=8)
    fig.suptitle(f"{title}: slowest rank's time, mean over roots", fontsize=11)
    fig.tight_layout()
    return fig, title, None


def teps_vs_scale_figure(runs: pd.DataFrame):
    plt, sns = _plt()
    title = "GTEPS vs scale per implementation"
    kron = runs[runs["scale"].notna()].copy()
    if kron.empty:
        return None, title, "no Kronecker runs: only Kronecker graphs have a scale"
    several_counts = kron["ranks"].nunique() > 1
    kron["implementation"] = [
        _implementation(r.algorithm, r.backend, r.exchange)
        + (f", {_ranks(r.ranks)}" if several_counts else "") for r in kron.itertuples()]
    points = kron.groupby(["implementation", "scale"]).apply(_pool, include_groups=False) \
        .reset_index()
    points["GTEPS"] = points["teps"] / 1e9
    points["scale"] = points["scale"].astype(int)
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.lineplot(points, x="scale", y="GTEPS", hue="implementation", marker="o", ax=ax)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel("Kronecker scale (log2 vertices)")
    ax.set_ylabel("GTEPS (10⁹ traversed edges/s, log scale)")
    ax.set_title(f"{title}\nGraph500 harmonic-mean TEPS, undirected input edges", fontsize=11)
    fig.tight_layout()
    return fig, title, None


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
            _atomic_write(path, lambda p: fig.savefig(p, format=fmt, dpi=150))
    finally:
        plt.close(fig)
    return paths


def read_runs_file(path) -> list[str]:
    """Run directories listed one per line; blank lines and '#' comments are skipped."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise BfsError(f"--runs-file {path}: {e.strerror}") from None
    return [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
