"""`bfs partition` throughput: directed edges written per second, and how it scales with threads.

Usage (from the repository root):
    PYTHONPATH=. python bench/bench_partition.py --scale 22 --grid 2x2 --threads 1 2
    PYTHONPATH=. python bench/bench_partition.py --graph /tmp/g25 --1d 16 --threads 1 4 16
With --scale the Kronecker graph is generated into a temporary directory first (not timed);
--graph reuses a graph directory. For each thread count T the partition runs with T reader and T
writer threads (bfs.partition.blocks.THREADS; the main thread copies routed edges in between),
into a temporary directory that is removed after; a scale-10 partition first keeps JIT
compilation out. (`BFS_PARTITION_THREADS=T python -m bfs partition ...` does the same from the
command line.)
Figures: wall time, directed edges/s (the issue's target is >= 20 M/s on the 16-core host), the
process CPU time (all threads) and edges per CPU-second, which on a shared box is steadier than
wall time. The block files must be byte-identical for every thread count: the script checks the
manifests' sha256 and fails if they differ.
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pyarrow

from bfs.graphs.graphdir import read_meta
from bfs.graphs.kronecker import write_kronecker
from bfs.partition import blocks, partition_graph


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def grid(text: str) -> tuple[int, int]:
    rows, cols = text.lower().split("x")
    return int(rows), int(cols)


def run_once(graph: Path, out: Path, rows: int, cols: int, kind: str, threads: int):
    blocks.THREADS = threads
    wall0, cpu0 = time.perf_counter(), time.process_time()
    manifest = partition_graph(graph, out, rows, cols, kind=kind, force=True)
    return time.perf_counter() - wall0, time.process_time() - cpu0, manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--graph", type=Path, help="existing graph directory")
    src.add_argument("--scale", type=int, help="generate a Kronecker graph of this scale")
    ap.add_argument("--edgefactor", type=int, default=16)
    shape = ap.add_mutually_exclusive_group()
    shape.add_argument("--grid", type=grid, default=None, help="2D grid RxC (default 2x2)")
    shape.add_argument("--1d", dest="onedim", type=int, metavar="P", help="1D over P ranks")
    ap.add_argument("--threads", type=int, nargs="+", default=[usable_cores()],
                    help="thread counts to run (default: the usable cores)")
    ap.add_argument("--repeats", type=int, default=1, help="runs per thread count (median)")
    ap.add_argument("--tmp", type=Path, default=None, help="where temporary directories go")
    args = ap.parse_args()
    if os.environ.get("BFS_PARTITION_THREADS"):
        ap.error("unset BFS_PARTITION_THREADS: it would override --threads")
    rows, cols, kind = (args.onedim, 1, "1d") if args.onedim else (*(args.grid or (2, 2)), "2d")

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        tmp = Path(tmp)
        graph = args.graph
        if graph is None:
            graph = tmp / f"g{args.scale}"
            t0 = time.perf_counter()
            write_kronecker(graph, args.scale, args.edgefactor)
            print(f"generated scale {args.scale} in {time.perf_counter() - t0:.1f} s "
                  "(not timed below)", flush=True)
        warm = tmp / "g10"
        write_kronecker(warm, 10, 16)
        partition_graph(warm, tmp / "p10", rows, cols, kind=kind, force=True)  # JIT warm-up

        meta = read_meta(graph)
        print(f"cpu: {cpu_model()}, {usable_cores()} usable cores")
        print(f"numba {numba.__version__}, numpy {np.__version__}, pyarrow {pyarrow.__version__}, "
              f"python {platform.python_version()}")
        print(f"graph {graph}: {meta.n_vertices} vertices, {meta.n_edges} input edges; "
              f"partition {kind} {rows}x{cols}; load average before "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)

        digests = {}
        base = None
        for threads in args.threads:
            walls, cpus = [], []
            for _ in range(args.repeats):
                wall, cpu, manifest = run_once(graph, tmp / "p", rows, cols, kind, threads)
                walls.append(wall)
                cpus.append(cpu)
            directed = manifest["n_directed_edges"]
            digests[threads] = [b["sha256"] for b in manifest["blocks"]]
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            rate = directed / wall
            base = base or (threads, rate)
            print(f"threads {threads:3d}: {wall:7.2f} s wall -> {rate / 1e6:6.2f} M directed "
                  f"edges/s ({rate / threads / 1e6:5.2f} M/s per thread, speed-up "
                  f"{rate / base[1]:4.2f}x over {base[0]} thread(s)); CPU {cpu:7.2f} s -> "
                  f"{directed / cpu / 1e6:5.2f} M directed edges per CPU-second"
                  + (f" (runs: {', '.join(f'{w:.2f}' for w in walls)} s)" if len(walls) > 1
                     else ""), flush=True)
        print(f"{directed} directed edges; load average after "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if len({tuple(d) for d in digests.values()}) != 1:
            print("ERROR: the block files differ between thread counts", file=sys.stderr)
            return 1
        print(f"block files identical for threads {', '.join(map(str, args.threads))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
