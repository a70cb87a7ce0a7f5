"""CPU BFS figures for BENCHMARKS.md: seq-csr and seq-list next to scipy's BFS on the same graph
and roots, then the distributed 2d and 1d algorithms on 1-4 MPI ranks.

    python bench/bench_cpu_bfs.py [--scale 18] [--roots 16] [--workdir /tmp/bfs-bench]

Every figure is Graph500's harmonic-mean TEPS over the same roots (nedge from the validated
seq-csr searches); scipy is timed around csgraph.breadth_first_order on a symmetric CSR built
once (its Kernel 1 is not counted). Prints a Markdown table last.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent


def bfs(*args, ranks=None):
    cmd = [sys.executable, "-m", "bfs", *map(str, args)]
    if ranks:
        cmd = ["mpiexec", "-n", str(ranks), *cmd]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def harmonic(run_dir: Path) -> tuple[float, float]:
    info = json.loads((run_dir / "run.json").read_text())
    return info["graph500"]["TEPS"]["harmonic_mean"], info["construction_time"]


def scipy_teps(graph: Path, reference: Path) -> float:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order
    from bfs.graphs.graphdir import read_edges, read_meta
    n = read_meta(graph).n_vertices
    src, dst = read_edges(graph)
    keep = src != dst
    s, d = src[keep].astype(np.int64), dst[keep].astype(np.int64)
    m = sp.csr_matrix((np.ones(2 * len(s), np.int8), (np.r_[s, d], np.r_[d, s])), shape=(n, n))
    rows = pq.read_table(reference / "searches.parquet").to_pylist()
    breadth_first_order(m, rows[0]["root"], directed=True)  # warm-up
    ratios = []
    for r in rows:
        t = time.perf_counter()
        breadth_first_order(m, r["root"], directed=True, return_predecessors=True)
        ratios.append((time.perf_counter() - t) / r["nedge"])
    return len(ratios) / sum(ratios)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--roots", type=int, default=16)
    p.add_argument("--workdir", default="/tmp/bfs-bench")
    args = p.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    graph = work / "graph"
    bfs("generate", "kronecker", "--scale", args.scale, "--out", graph)
    results = []
    for algo in ["seq-csr", "seq-list"]:
        bfs("run", graph, "--algorithm", algo, "--roots", args.roots, "--out", work / algo)
        results.append((algo, 1, *harmonic(work / algo)))
    results.append(("scipy breadth_first_order", 1, scipy_teps(graph, work / "seq-csr"),
                    float("nan")))
    for kind, shape, ranks in [("2d", "1x1", 1), ("2d", "1x2", 2), ("2d", "2x1", 2),
                               ("2d", "2x2", 4), ("1d", "1", 1), ("1d", "2", 2),
                               ("1d", "4", 4)]:
        part = work / f"part-{kind}-{shape}"
        bfs("partition", graph, "--grid" if kind == "2d" else "--1d", shape, "--out", part)
        out = work / f"run-{kind}-{shape}"
        bfs("run", part, "--algorithm", kind, "--roots", args.roots, "--out", out, ranks=ranks)
        results.append((f"{kind} {shape}", ranks, *harmonic(out)))
    print(f"\nKronecker scale {args.scale}, edgefactor 16, {args.roots} Graph500 roots; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print("| algorithm | ranks | harmonic-mean MTEPS | construction_time (s) |")
    print("|---|---|---|---|")
    for name, ranks, teps, k1 in results:
        print(f"| {name} | {ranks} | {teps / 1e6:.1f} | {k1:.3f} |")


if __name__ == "__main__":
    main()
