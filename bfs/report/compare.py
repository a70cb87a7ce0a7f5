"""Paired comparison of two run sets (`bfs compare RUN_A RUN_B --out DIR`), root by root.

Two `bfs bench` calls of the same code differ by 5-10% (BENCHMARKS.md): compared as two
harmonic means, a 5% gain cannot be told from that drift. Paired by root, it can: both runs
searched the same Graph500 roots on the same graph, so each root gives one speedup

    s_i = TEPS_B(root i) / TEPS_A(root i)      (= time_A / time_B: nedge is the root's own)

and the statistics are over the s_i:

- their geometric mean, exp(mean(log s_i)): the typical factor by which B is faster (> 1) or
  slower (< 1) than A, the mean of symmetric log ratios (a root twice as fast and one half as
  fast cancel);
- its 95% bootstrap interval: the roots resampled with replacement RESAMPLES times (a fixed
  seed, so the same inputs give the same interval), the 2.5th and 97.5th percentiles of the
  resampled geometric means. An interval that excludes 1 says B differs from A by more than
  the roots' spread explains (the verdict also asks the test below for p < 0.05: a few roots
  far off the rest can pull the interval alone past 1);
- the Wilcoxon signed-rank test's two-sided p-value on log s_i (scipy.stats.wilcoxon): how
  often root-by-root differences as one-sided as these would arise with no difference at all.

The drift that moves a whole run (a warmer GPU, another job on the node) is not removed by the
pairing: two runs made one after the other can differ by a few percent over all roots. To
compare variants of a GPU search without it, `bench/ab_roots.py` searches every root with each
variant in turn in one process and reports these same statistics.

Inputs: two run directories (README, "Run directory"), or two `bfs bench --out` folders, whose
run directories OUT/<graph>/<variant>/ are paired by graph and variant (those in one folder only
are named and left out). Both runs must be valid and have searched the same roots (a one-line
error names the roots that differ). Outputs, in one directory written atomically:

    summary.csv, summary.md        a row per pair: geometric mean, interval, p, verdict
    per_root.csv, per_root.md      a row per pair and root: times, TEPS, speedup
    speedups.png, speedups.svg     each pair's per-root speedups, sorted, with the geometric
                                   mean and its interval
    comparison.json                the inputs, seed, resamples and the summary rows
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import atomic_dir
from ..errors import BfsError
from ..harness.rundir import RUN_JSON
from ..log import logger
from .runs import harmonic_mean_teps, read_valid_run

SEED = 20140519          # the bootstrap's: any fixed value makes the interval reproducible
RESAMPLES = 10_000
LEVEL = 0.95
BENCH_JSON = "bench.json"
SHOWN = 8                # roots named in an error, at most

log = logger("compare")


# ------------------------------------------------------------------------------ statistics

def bootstrap_interval(log_speedups, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> tuple[float, float]:
    """The percentile bootstrap interval of the geometric mean of exp(log_speedups): the
    values resampled with replacement `resamples` times from a generator seeded by `seed`;
    NaN for fewer than two values (one root has no spread to resample)."""
    x = np.asarray(log_speedups, np.float64)
    if x.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, (1 << 22) // x.size)          # resamples drawn a block at a time
    for lo in range(0, resamples, step):
        hi = min(resamples, lo + step)
        means[lo:hi] = x[rng.integers(0, x.size, (hi - lo, x.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(math.exp(low)), float(math.exp(high))


def wilcoxon_p(log_speedups) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test that log speedups are centred on 0
    (scipy.stats.wilcoxon; roots with no difference are dropped, as Wilcoxon does). 1.0 when
    every root is unchanged; NaN for no root."""
    x = np.asarray(log_speedups, np.float64)
    if x.size == 0:
        return math.nan
    if not np.any(x != 0):
        return 1.0
    try:
        from scipy.stats import wilcoxon
    except ImportError:
        raise BfsError("the paired comparison's Wilcoxon signed-rank test needs scipy: "
                       "python3 -m pip install scipy (it is in the test extra: "
                       "pip install -e '.[test]')") from None
    return float(wilcoxon(x).pvalue)


P_LEVEL = 0.05     # the Wilcoxon p a difference must also fall below (verdict)


def verdict(low: float, high: float, p: float) -> str:
    """What the interval and the test say of B against A: a difference only where both do
    (the interval excludes 1 and p < P_LEVEL). The bootstrap alone can be pulled past 1 by a
    few roots far off the rest: two runs of the same command on an H100 gave an interval of
    1.001-1.101 with p = 0.14 (BENCHMARKS.md)."""
    if math.isnan(low) or math.isnan(high):
        return "too few roots"
    if not p < P_LEVEL:     # a NaN p (every speedup exactly 1) included
        return "no significant difference"
    if low > 1:
        return "B faster"
    if high < 1:
        return "B slower"
    return "no significant difference"


def speedup_stats(speedups, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """The statistics of per-root speedups B/A (module docstring): roots, geometric mean,
    its bootstrap interval, Wilcoxon p, how many roots B was faster on, the verdict."""
    s = np.asarray(speedups, np.float64)
    if s.size and not (np.isfinite(s) & (s > 0)).all():
        bad = s[~(np.isfinite(s) & (s > 0))]
        raise BfsError(f"speedups must be positive and finite, got {bad[:3].tolist()}")
    x = np.log(s)
    low, high = bootstrap_interval(x, resamples, seed)
    p = wilcoxon_p(x)
    return {"roots": int(s.size),
            "speedup": float(math.exp(x.mean())) if s.size else math.nan,
            "low": low, "high": high, "p": p,
            "faster_roots": int((s > 1).sum()), "verdict": verdict(low, high, p)}


# ---------------------------------------------------------------------------------- inputs

def _label(info: dict) -> str:
    """A run's implementation, as the tables name it: variant (or algorithm), backend, grid."""
    params = info["parameters"]
    grid = (info.get("partition") or {}).get("grid")
    parts = [params.get("variant") or params["algorithm"], params["backend"]]
    if grid:
        parts.append("x".join(map(str, grid)))
    return "/".join(parts)


def _roots_text(roots) -> str:
    roots = sorted(int(r) for r in roots)
    more = f", ... ({len(roots)} in all)" if len(roots) > SHOWN else ""
    return "[" + ", ".join(map(str, roots[:SHOWN])) + more + "]"


def pair_runs(run_a, run_b) -> pd.DataFrame:
    """Per root of two valid runs of one graph: times, nedge, TEPS and the speedup B/A. A root
    searched k times in each run pairs its k searches in order. Refuses runs of different
    graphs or roots, naming what differs."""
    run_a, run_b = Path(run_a), Path(run_b)
    (info_a, a), (info_b, b) = read_valid_run(run_a), read_valid_run(run_b)
    ga, gb = info_a["graph"], info_b["graph"]
    if (ga["n_vertices"], ga["n_edges"]) != (gb["n_vertices"], gb["n_edges"]):
        raise BfsError(f"{run_a} and {run_b} searched different graphs: A {ga['name']} "
                       f"({ga['n_vertices']} vertices, {ga['n_edges']} edges), B {gb['name']} "
                       f"({gb['n_vertices']} vertices, {gb['n_edges']} edges)")
    only_a = sorted(set(a["root"]) - set(b["root"]))
    only_b = sorted(set(b["root"]) - set(a["root"]))
    counts_a, counts_b = a["root"].value_counts(), b["root"].value_counts()
    uneven = sorted(r for r in set(counts_a.index) & set(counts_b.index)
                    if counts_a[r] != counts_b[r])
    if only_a or only_b or uneven:
        said = []
        if only_a:
            said.append(f"{len(only_a)} only in A ({run_a}): {_roots_text(only_a)}")
        if only_b:
            said.append(f"{len(only_b)} only in B ({run_b}): {_roots_text(only_b)}")
        if uneven:
            said.append(f"{len(uneven)} searched a different number of times: "
                        f"{_roots_text(uneven)}")
        raise BfsError(f"{run_a} and {run_b} searched different roots: {'; '.join(said)}; a "
                       "paired comparison needs the same roots (the same graph and --roots)")
    keep = ["root", "time_s", "nedge"]
    a, b = a[keep].copy(), b[keep].copy()
    for t in (a, b):
        t["search"] = t.groupby("root").cumcount()
    rows = a.merge(b, on=["root", "search"], suffixes=("_a", "_b"))
    return per_root_frame(ga["name"], _label(info_a), _label(info_b), rows["root"],
                          rows["time_s_a"], rows["time_s_b"], rows["nedge_a"], rows["nedge_b"],
                          str(run_a), str(run_b))


def per_root_frame(graph: str, label_a: str, label_b: str, roots, time_a, time_b, nedge_a,
                   nedge_b=None, run_a: str = "", run_b: str = "") -> pd.DataFrame:
    """The per-root table of one pair (per_root.csv's columns): the searches' seconds and
    nedge (B's nedge is A's unless given), TEPS and the speedup B/A = TEPS_B / TEPS_A."""
    nedge_a = np.asarray(nedge_a, np.int64)
    nedge_b = nedge_a if nedge_b is None else np.asarray(nedge_b, np.int64)
    time_a, time_b = np.asarray(time_a, np.float64), np.asarray(time_b, np.float64)
    teps_a, teps_b = nedge_a / time_a, nedge_b / time_b
    return pd.DataFrame({
        "graph": graph, "A": label_a, "B": label_b, "root": np.asarray(roots, np.int64),
        "nedge": nedge_a, "A time (s)": time_a, "B time (s)": time_b,
        "A GTEPS": teps_a / 1e9, "B GTEPS": teps_b / 1e9, "speedup B/A": teps_b / teps_a,
        "A run": run_a, "B run": run_b})


def is_bench_folder(path: Path) -> bool:
    return (path / BENCH_JSON).is_file() and not (path / RUN_JSON).is_file()


def bench_runs(folder: Path) -> dict[tuple[str, str], Path]:
    """(graph, variant) -> run directory of a `bfs bench --out` folder (FOLDER/<graph>/<variant>/;
    FILE.json's runs are under FILE/)."""
    runs = {(p.parent.parent.name, p.parent.name): p.parent
            for p in sorted(folder.glob(f"*/*/{RUN_JSON}"))}
    if not runs:
        raise BfsError(f"{folder}: a bench folder (it holds {BENCH_JSON}) with no run "
                       f"directories under it (<graph>/<variant>/{RUN_JSON})")
    return runs


def _input(path) -> tuple[str, Path]:
    """('run', dir) or ('bench', folder) of a comparison's input, or BfsError naming it."""
    path = Path(path)
    if path.suffix == ".json" and path.is_file() and path.name != RUN_JSON:
        path = path.with_suffix("")      # bench --out FILE.json: the runs are under FILE/
    if (path / RUN_JSON).is_file():
        return "run", path
    if is_bench_folder(path) or (path.is_dir() and any(path.glob(f"*/*/{RUN_JSON}"))):
        return "bench", path
    raise BfsError(f"{path}: neither a run directory (no {RUN_JSON}) nor a bench output "
                   f"folder (no {BENCH_JSON}, no <graph>/<variant>/{RUN_JSON})")


def pairs(a, b) -> list[tuple[Path, Path]]:
    """The (A, B) run directories to compare: the two runs, or the runs two bench folders
    share by graph and variant."""
    (kind_a, a), (kind_b, b) = _input(a), _input(b)
    if kind_a != kind_b:
        raise BfsError(f"compare takes two run directories or two bench folders, not a "
                       f"{kind_a} ({a}) and a {kind_b} ({b})")
    if kind_a == "run":
        return [(a, b)]
    runs_a, runs_b = bench_runs(a), bench_runs(b)
    common = [key for key in runs_a if key in runs_b]
    if not common:
        raise BfsError(f"{a} and {b} share no (graph, variant): A has "
                       f"{', '.join('/'.join(k) for k in runs_a)}; B has "
                       f"{', '.join('/'.join(k) for k in runs_b)}")
    for side, only in (("A", [k for k in runs_a if k not in runs_b]),
                       ("B", [k for k in runs_b if k not in runs_a])):
        if only:
            log(f"left out, only in {side}: {', '.join('/'.join(k) for k in only)}")
    return [(runs_a[k], runs_b[k]) for k in common]


# --------------------------------------------------------------------------------- results

SUMMARY_COLUMNS = ["graph", "A", "B", "roots", "speedup B/A (geomean)", "95% CI low",
                   "95% CI high", "Wilcoxon p", "B faster on", "verdict", "A GTEPS", "B GTEPS",
                   "A run", "B run"]


def summary_row(per_root: pd.DataFrame, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """One pair's summary: speedup_stats over its roots, and each run's Graph500 harmonic-mean
    GTEPS over the same searches."""
    st = speedup_stats(per_root["speedup B/A"], resamples, seed)
    first = per_root.iloc[0]
    return {"graph": first["graph"], "A": first["A"], "B": first["B"], "roots": st["roots"],
            "speedup B/A (geomean)": st["speedup"], "95% CI low": st["low"],
            "95% CI high": st["high"], "Wilcoxon p": st["p"],
            "B faster on": f"{st['faster_roots']}/{st['roots']}", "verdict": st["verdict"],
            "A GTEPS": harmonic_mean_teps(per_root["A time (s)"], per_root["nedge"]) / 1e9,
            "B GTEPS": harmonic_mean_teps(per_root["B time (s)"], per_root["nedge"]) / 1e9,
            "A run": first["A run"], "B run": first["B run"]}


def compare(a, b, resamples: int = RESAMPLES, seed: int = SEED):
    """(summary, per_root) DataFrames of two runs or two bench folders."""
    per_pair = [pair_runs(run_a, run_b) for run_a, run_b in pairs(a, b)]
    summary = pd.DataFrame([summary_row(p, resamples, seed) for p in per_pair],
                           columns=SUMMARY_COLUMNS)
    return summary, pd.concat(per_pair, ignore_index=True)


def _interval_text(row) -> str:
    p = row["Wilcoxon p"]
    return (f"geomean {row['speedup B/A (geomean)']:.4g} "
            f"(95% CI {row['95% CI low']:.4g}-{row['95% CI high']:.4g}), "
            + (f"Wilcoxon p = {p:.2g}" if not math.isnan(p) else "no Wilcoxon p"))


def speedup_figure(summary: pd.DataFrame, per_root: pd.DataFrame):
    """A panel per pair: its per-root speedups B/A sorted, no change (1) dashed, the geometric
    mean as a line within its bootstrap interval (shaded)."""
    from .figures import _legend, _panels, _plt, _suptitle
    plt, _ = _plt()
    fig, axes = _panels(len(summary), width=6.0, height=4.6)
    for ax, (_, row) in zip(axes, summary.iterrows()):
        mine = per_root[(per_root["graph"] == row["graph"]) & (per_root["A"] == row["A"])
                        & (per_root["B"] == row["B"]) & (per_root["A run"] == row["A run"])
                        & (per_root["B run"] == row["B run"])]
        s = np.sort(mine["speedup B/A"].to_numpy())
        x = np.arange(1, s.size + 1)
        colors = np.where(s > 1, "tab:green", "tab:red")
        ax.bar(x, s - 1, bottom=1, color=colors, width=0.8, alpha=0.8)
        ax.axhline(1, color="black", ls="--", lw=1, label="no change (1)")
        ax.axhspan(row["95% CI low"], row["95% CI high"], color="tab:blue", alpha=0.2,
                   label="95% bootstrap interval")
        ax.axhline(row["speedup B/A (geomean)"], color="tab:blue", lw=2,
                   label="geometric mean")
        ax.set_xlabel("roots, sorted by speedup")
        ax.set_ylabel("speedup B/A (TEPS ratio)")
        ax.set_xlim(0.3, s.size + 0.7)
        low = min(float(s.min()), row["95% CI low"], 1.0)
        high = max(float(s.max()), row["95% CI high"], 1.0)
        pad = 0.08 * (high - low) or 0.01
        ax.set_ylim(low - pad, high + pad)     # 1 always in sight
        ax.set_title(f"{row['graph']}: B {row['B']} vs A {row['A']}\n{_interval_text(row)}, "
                     f"{row['verdict']}", fontsize=9)
    _suptitle(fig, "Paired comparison, root by root: speedup of B over A")
    return _legend(fig)


def write_comparison(a, b, out, force: bool = False, resamples: int = RESAMPLES,
                     seed: int = SEED) -> list[Path]:
    """Compare and write OUT (module docstring) atomically; returns the files written."""
    summary, per_root = compare(a, b, resamples, seed)
    return write_outputs(summary, per_root, out, force,
                         {"a": str(a), "b": str(b), "seed": seed, "resamples": resamples})


def write_outputs(summary: pd.DataFrame, per_root: pd.DataFrame, out, force: bool,
                  record: dict) -> list[Path]:
    """OUT's tables, figure and comparison.json (record, with the level and the summary rows),
    under a temporary sibling renamed into place when complete; the files written."""
    from .figures import _plt
    from .tables import to_markdown
    plt, _ = _plt()
    fig = speedup_figure(summary, per_root)
    out = Path(out)
    names = ["summary.csv", "summary.md", "per_root.csv", "per_root.md", "speedups.png",
             "speedups.svg", "comparison.json"]
    try:
        with atomic_dir(out, force) as tmp:
            summary.to_csv(tmp / "summary.csv", index=False)
            shown = summary.copy()   # p-values in Markdown as 7.1e-15, not 0.0000000...
            shown["Wilcoxon p"] = [f"{p:.2g}" for p in summary["Wilcoxon p"]]
            (tmp / "summary.md").write_text(to_markdown(shown))
            per_root.to_csv(tmp / "per_root.csv", index=False)
            (tmp / "per_root.md").write_text(to_markdown(per_root))
            for fmt in ("png", "svg"):
                fig.savefig(tmp / f"speedups.{fmt}", format=fmt, dpi=150)
            record = {**record, "level": LEVEL,
                      "summary": json.loads(summary.to_json(orient="records"))}
            (tmp / "comparison.json").write_text(json.dumps(record, indent=1) + "\n")
    finally:
        plt.close(fig)
    return [out / name for name in names]
