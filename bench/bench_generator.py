"""Kronecker generator throughput: generate_edges alone and write_kronecker end to end.

Usage (from the repository root): PYTHONPATH=. python bench/bench_generator.py [--scale 20] [--edgefactor 16] [--repeats 3]
A small warm-up call first keeps JIT compilation out of the timings; figures are medians.
"""
import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pyarrow

from bfs.graphs.kronecker import generate_edges, write_kronecker


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n_edges = args.edgefactor << args.scale

    generate_edges(10, args.edgefactor)  # warm-up: compile or load the cached kernels
    gen_s, gen_all = median_seconds(lambda: generate_edges(args.scale, args.edgefactor),
                                    args.repeats)

    with tempfile.TemporaryDirectory() as tmp:
        runs = iter(range(args.repeats))
        write_s, write_all = median_seconds(
            lambda: write_kronecker(Path(tmp) / f"g{next(runs)}", args.scale, args.edgefactor),
            args.repeats)

    print(f"cpu: {cpu_model()} ({numba.config.NUMBA_NUM_THREADS} numba threads)")
    print(f"numba {numba.__version__}, numpy {np.__version__}, pyarrow {pyarrow.__version__}, "
          f"python {platform.python_version()}")
    print(f"scale {args.scale}, edgefactor {args.edgefactor}: {n_edges} edges")
    print(f"generate_edges: median {gen_s:.3f} s -> {n_edges / gen_s / 1e6:.1f} M edges/s "
          f"(runs: {', '.join(f'{t:.3f}' for t in gen_all)})")
    print(f"write_kronecker: median {write_s:.3f} s -> {n_edges / write_s / 1e6:.1f} M edges/s "
          f"(runs: {', '.join(f'{t:.3f}' for t in write_all)})")


if __name__ == "__main__":
    main()
