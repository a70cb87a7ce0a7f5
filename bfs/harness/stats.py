"""Graph500 statistics over a run's searches and the reference's output block.

Quartiles use the reference's integer-index rule; TEPS statistics are taken on
s_i = time_i / nedge_i and inverted, so the "mean" TEPS is the harmonic mean (Graph500 3.0).
Also the summaries `bfs bench` tabulates (hmean, summarize, examined_per_nedge,
level_us_median).
"""
from __future__ import annotations

import math
import statistics

import numpy as np


def quartiles(values) -> dict:
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    if n == 0:
        raise ValueError("statistics of an empty set")
    mean = float(x.mean())
    stddev = float(x.std(ddof=1)) if n > 1 else 0.0
    return {
        "min": float(x[0]),
        "firstquartile": float((x[(n - 1) // 4] + x[n // 4]) / 2),
        "median": float((x[(n - 1) // 2] + x[n // 2]) / 2),
        "thirdquartile": float((x[n - 1 - (n - 1) // 4] + x[n - 1 - n // 4]) / 2),
        "max": float(x[-1]),
        "mean": mean,
        "stddev": stddev,
    }


def teps_statistics(times, nedges) -> dict:
    s = np.asarray(times, dtype=np.float64) / np.asarray(nedges, dtype=np.float64)
    q = quartiles(s)
    n = len(s)
    return {
        "min": 1.0 / q["max"],
        "firstquartile": 1.0 / q["thirdquartile"],
        "median": 1.0 / q["median"],
        "thirdquartile": 1.0 / q["firstquartile"],
        "max": 1.0 / q["min"],
        "harmonic_mean": 1.0 / q["mean"],
        "harmonic_stddev": (q["stddev"] / (q["mean"] ** 2 * math.sqrt(n - 1))) if n > 1 else 0.0,
    }


def graph500_statistics(times, nedges, validate_times) -> dict:
    return {
        "time": quartiles(times),
        "nedge": quartiles(nedges),
        "TEPS": teps_statistics(times, nedges),
        "validate": quartiles(validate_times),
    }


def _g(x) -> str:
    """C's %g, as the reference prints."""
    return "%g" % x


def output_block(*, scale, edgefactor, nbfs, graph_generation, num_mpi_processes,
                 construction_time, stats) -> str:
    def line(label, value):
        return f"{label + ':':<32}{value}"

    order = ["min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev"]
    out = [
        line("SCALE", _g(scale)),
        line("edgefactor", _g(edgefactor)),
        line("NBFS", nbfs),
        line("graph_generation", _g(graph_generation)),
        line("num_mpi_processes", num_mpi_processes),
        line("construction_time", _g(construction_time)),
    ]
    out += [line(f"bfs  {k}_time", _g(stats["time"][k])) for k in order]
    out += [line(f"{k}_nedge", "%.11g" % stats["nedge"][k]) for k in order]
    teps = stats["TEPS"]
    out += [line(f"bfs  {k}_TEPS", _g(teps[k]))
            for k in ["min", "firstquartile", "median", "thirdquartile", "max"]]
    out.append(f"{'bfs  harmonic_mean_TEPS:':<24}     !  {_g(teps['harmonic_mean'])}")
    out.append(line("bfs  harmonic_stddev_TEPS", _g(teps["harmonic_stddev"])))
    out += [line(f"bfs  {k}_validate", _g(stats["validate"][k])) for k in order]
    return "\n".join(out) + "\n"


def hmean(values) -> float:
    """Harmonic mean of the positive values (0.0 where there is none)."""
    values = [v for v in values if v > 0]
    return len(values) / sum(1.0 / v for v in values) if values else 0.0


def examined_per_nedge(rows) -> float:
    """Median over the searches (dicts with edges_examined and nedge) of directed edges read /
    Graph500 nedge, where the algorithm counts the edges it reads (direction-optimizing
    searches); nan where none does (edges_examined None, or NaN as pandas reads a null). A
    top-down search reads every reached edge from both ends: about 2."""
    ratios = [r["edges_examined"] / r["nedge"] for r in rows
              if r.get("edges_examined") is not None and r["edges_examined"] == r["edges_examined"]
              and r.get("nedge")]
    return statistics.median(ratios) if ratios else math.nan


def summarize(times, nedges) -> dict:
    """hmean TEPS and the median / min / max search time of a run's searches."""
    teps = [ne / t for ne, t in zip(nedges, times) if t > 0]
    return {"n": len(times), "hmean_teps": hmean(teps), "median_time_s": statistics.median(times)
            if times else math.nan, "min_time_s": min(times, default=math.nan),
            "max_time_s": max(times, default=math.nan)}


def level_us_median(rows) -> float | None:
    """The median over a run's searches of its time a level, in microseconds: each search's
    time over the levels it expanded (0 to its depth). What a road-like graph's search costs
    is this times its thousands of levels (a lattice: ~4 us on one GPU, BENCHMARKS.md); a
    Kronecker search's few levels make it a large number that says little. None where no
    search reached a level (depth unknown: a search not counted)."""
    per_level = [r["time_s"] / (r["depth"] + 1) * 1e6 for r in rows
                 if r.get("depth") is not None and r["depth"] >= 0]
    return float(np.median(per_level)) if per_level else None
