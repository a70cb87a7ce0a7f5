"""`mpiexec -n P bfs bench --backend gpu --grid RxC --scales S...`: the distributed searches on
P GPUs, the graph generated in place (no partition on disk), every search validated on the GPUs.

Per scale, on every rank (one GPU each):
  * generation: the rank's share [rank * m / P, (rank + 1) * m / P) of the Graph500 edge list on
    its GPU (the generator is splittable: edge e's stream is the seed skipped by e * 2^64);
  * routing: both directions of every non-loop edge to the rank owning its block
    (bfs.partition.route_gpu: counts and a scatter on the GPU, one all-to-all through NCCL), so
    each rank holds the block `bfs partition --grid RxC` would write for it (1d runs on the
    P x 1 grid of the same ranks, as `bfs partition --1d P` writes it: the graph is placed
    once per grid the chosen algorithms need);
  * Graph500 roots from the vertices with an edge (a byte map OR-reduced over the ranks);
  * per algorithm (2d, 2d@exchange=wave, 2d@comm=mpi, 1d, ...): Kernel 1 (the block CSR, max over
    ranks; the second of two builds), one untimed warm-up search, then per root an untimed search (the GPUs slow down
    while the previous search is validated; bench.py) and the timed one: a barrier, CUDA events
    around search() on every rank (as bench.py times one GPU; no garbage collection inside),
    the max over ranks;
    validation (untimed) by bfs.validate.grid_gpu, each rank checking its own block; per level
    expand / comm seconds of the first root's search (CUDA events) from every rank.
The table comes last on rank 0's stdout; --out FILE.json gets every number. A 1x1 grid runs
the same code on one GPU: the baseline for the scaling figures is `mpiexec -n 1 ... --grid 1x1`
in the same session.
"""
from __future__ import annotations

import gc
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from ..algorithms import Block, RunContext, get_algorithm
from ..comm import mpi
from ..comm.exchange import LevelClock, choose_comm, make_exchange
from ..errors import BfsError
from ..partition import GridLayout
from . import envinfo
from ..algorithms.options import parse_algorithm
from .bench import GEN_CHUNK, examined_per_nedge, hmean
from .runner import select_gpu
from ..log import logger


log = logger("bfs bench")


def _max(comm, x: float) -> float:
    return mpi.allreduce_scalar(comm, x, "MAX")


def _generate_share(comm, scale, edgefactor, seeds, version):
    """This rank's contiguous share of the edge list, generated on its GPU in chunks."""
    import cupy as cp

    from ..graphs.kronecker_gpu import generate_edges_gpu
    m = edgefactor * 2 ** scale
    p, r = comm.Get_size(), comm.Get_rank()
    lo, hi = r * m // p, (r + 1) * m // p
    src = cp.empty(hi - lo, cp.uint32)
    dst = cp.empty(hi - lo, cp.uint32)
    for a in range(lo, hi, GEN_CHUNK):
        b = min(a + GEN_CHUNK, hi)
        generate_edges_gpu(scale, edgefactor, seeds, version, a, b,
                           out=(src[a - lo:b - lo], dst[a - lo:b - lo]))
    cp.cuda.get_current_stream().synchronize()
    return src, dst


def _roots(comm, world_x, block_src, n, n_roots, seeds):
    """Graph500 roots (rank 0 draws them from the vertices with an edge; all receive them)."""
    import cupy as cp

    from .roots import graph500_roots
    has = cp.zeros(n, cp.uint8)
    has[block_src] = 1
    world_x.allreduce(has, has, "max")
    roots = np.empty(n_roots, np.int64)
    if comm.Get_rank() == 0:
        roots[:] = graph500_roots(n, has.get().astype(bool), count=n_roots, seeds=seeds)
    comm.Bcast(roots, root=0)
    return roots


def layout_of(name: str, grid) -> tuple[int, int]:
    """The grid an algorithm runs on: 1d on the P x 1 grid of the same ranks, the others on
    the grid asked for."""
    R, C = grid
    return (R * C, 1) if parse_algorithm(name)[0] == "1d" else (R, C)


def _place(comm, world_x, R, C, scale, edgefactor, seeds, version) -> tuple:
    """Generate this rank's share of the graph and route it to the R x C blocks: (block src,
    block dst, timing record)."""
    from ..partition.route_gpu import route_to_blocks
    comm.Barrier()
    t = time.perf_counter()
    src, dst = _generate_share(comm, scale, edgefactor, seeds, version)
    placed = {"generation_s": _max(comm, time.perf_counter() - t)}
    comm.Barrier()
    t = time.perf_counter()
    block_src, block_dst = route_to_blocks(GridLayout(2 ** scale, R, C), src, dst, world_x)
    del src, dst
    placed["route_s"] = _max(comm, time.perf_counter() - t)
    placed["block_entries_max"] = int(_max(comm, float(block_src.size)))
    log(f"scale {scale} on {R}x{C}: generated in {placed['generation_s']:.3f} s, routed "
        f"in {placed['route_s']:.3f} s (largest block {placed['block_entries_max']} entries)",
        comm=comm)
    return block_src, block_dst, placed


def bench_grid_scale(comm, grid, scale, edgefactor, seeds, version, algorithms, n_roots,
                     validate_mode) -> dict:
    """Every algorithm at one scale; the graph is placed once per grid the algorithms run on
    (1d: P x 1) and the roots drawn once (the same graph on any grid)."""
    import cupy as cp
    R, C = grid
    n, m = 2 ** scale, edgefactor * 2 ** scale
    if scale > 32:
        raise BfsError(f"bench --grid takes scales up to 32, got {scale}")
    rec = {"scale": scale, "edgefactor": edgefactor, "n_vertices": n, "n_edges": m,
           "grid": f"{R}x{C}", "gpus": R * C, "placement": {}, "algorithms": {}}
    # the world's exchange carries the routing all-to-all and the roots' byte map
    # (NCCL unless ranks share a GPU, as the searches choose)
    world_x = make_exchange("mpi" if R * C == 1 else choose_comm(None, "gpu", comm), comm)
    groups: dict[tuple[int, int], list[str]] = {}
    for name in algorithms:
        groups.setdefault(layout_of(name, grid), []).append(name)
    roots = None
    for (rows, cols), names in groups.items():
        block_src, block_dst, rec["placement"][f"{rows}x{cols}"] = _place(
            comm, world_x, rows, cols, scale, edgefactor, seeds, version)
        if roots is None:
            roots = _roots(comm, world_x, block_src, n, n_roots, seeds)
        manifest = {"grid": [rows, cols], "bounds": GridLayout(n, rows, cols).bounds.tolist(),
                    "n_vertices": n}
        for name in names:
            rec["algorithms"][name] = _bench_algorithm(
                comm, Block(comm, manifest, block_src, block_dst), name, roots, validate_mode,
                f"s{scale} {rows}x{cols}")
        del block_src, block_dst
        cp.get_default_memory_pool().free_all_blocks()
    world_x.free()
    return rec


def _bench_algorithm(comm, block, name, roots, validate_mode, label) -> dict:
    """Kernel 1, a warm-up search, then one timed search per root (each validated as asked)."""
    import cupy as cp

    from ..validate.grid_gpu import validate_grid_device
    base, options = parse_algorithm(name)
    module = get_algorithm(base).load("gpu")
    ctx = RunContext("gpu", options)
    if hasattr(module, "warm_up"):
        module.warm_up(ctx)
    # Kernel 1 twice, the second timed: the first also compiles what the warm-up's tiny graph
    # cannot (CuPy's kernels with 64-bit indices for arrays past 2^31 elements, ...), which
    # the kernel cache then keeps; kernel1_first_s records it
    kernel1 = []
    for _ in range(2):
        cp.get_default_memory_pool().free_all_blocks()
        comm.Barrier()
        t = time.perf_counter()
        with mpi.collective_errors(comm):   # one rank short of memory stops them all
            searcher = module.build(block, ctx)
        cp.cuda.get_current_stream().synchronize()
        kernel1.append(_max(comm, time.perf_counter() - t))
        if len(kernel1) == 1:
            _free_exchanges(searcher)
            del searcher
    kernel1_first_s, kernel1_s = kernel1
    searcher.search(int(roots[0]))                          # warm-up, untimed
    rows, profile, directions = [], None, None
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for i, root in enumerate(int(r) for r in roots):
        gc.collect()            # none inside the timed region, as bench.py's single-GPU timing
        searcher.search(root)   # untimed: the GPUs slow down during validation (bench.py)
        comm.Barrier()
        gc.disable()
        try:
            start.record()
            searcher.search(root)     # returns with the device synchronized
            end.record()
            end.synchronize()
        finally:
            gc.enable()
        elapsed = _max(comm, cp.cuda.get_elapsed_time(start, end) / 1e3)
        row = {"root": root, "time_s": elapsed, "valid": None,
               "edges_examined": getattr(searcher, "edges_examined", None)}
        if i == 0:
            directions = list(getattr(searcher, "directions", None) or []) or None
            profile = _gather_profile(comm, searcher.profile,
                                      getattr(searcher, "profile_steps", None))
            _log_steps(comm, f"{label} {name} root {root}", profile, directions)
        if validate_mode == "every" or (validate_mode == "first" and i == 0):
            t = time.perf_counter()
            verdict = validate_grid_device(searcher.grid_view(), root, comm, searcher.world_x,
                                           searcher.row_x, searcher.col_x)
            row.update(valid=verdict.valid, nedge=verdict.nedge, depth=verdict.depth,
                       reached=verdict.reached, message=verdict.message,
                       validate_s=_max(comm, time.perf_counter() - t))
            row["teps"] = verdict.nedge / elapsed if verdict.valid else 0.0
            if not verdict.valid:
                log(f"{name} root {root}: INVALID: {verdict.message}", comm=comm)
        rows.append(row)
        log(f"{label} {name} {i + 1}/{len(roots)} root={root} time={elapsed * 1e3:.3f} ms"
            + (f" GTEPS={row['teps'] / 1e9:.2f} {'valid' if row['valid'] else 'INVALID'}"
               if "teps" in row else ""), comm=comm)
    timed = [r for r in rows if "teps" in r]
    R, C = block.manifest["grid"]
    result = {
        "grid": f"{R}x{C}",
        "kernel1_s": kernel1_s, "kernel1_first_s": kernel1_first_s,
        "median_time_s": statistics.median(r["time_s"] for r in rows),
        "hmean_teps": hmean([r["teps"] for r in timed]) if timed else None,
        "valid": all(r["valid"] is not False for r in rows),
        "validated": sum(r["valid"] is not None for r in rows),
        "median_validate_s": (statistics.median(r["validate_s"] for r in timed)
                              if timed else None),
        "examined_per_nedge": examined_per_nedge(timed),
        "directions_first_root": directions,
        "levels_first_root": profile, "searches": rows,
        "comm": getattr(searcher, "comm_kind", None),
        "exchange": options.get("exchange", "scan")}
    _free_exchanges(searcher)
    del searcher
    cp.get_default_memory_pool().free_all_blocks()
    return result


def _free_exchanges(searcher) -> None:
    """The searcher's NCCL communicators, not one set per build; the same order on every rank
    (destroying one waits for its peers)."""
    freed = []
    for x in (searcher.world_x, searcher.row_x, searcher.col_x):
        if not any(x is f for f in freed):
            x.free()
            freed.append(x)


def _gather_profile(comm, profile: np.ndarray, steps: np.ndarray | None) -> list | None:
    """Every rank's (level, frontier, expand s, comm s, bytes) rows on rank 0, each with its
    seconds per LevelClock step where the searcher keeps them (Fu2D's level loop)."""
    rows = mpi.gatherv(comm, np.ascontiguousarray(profile, np.float64).ravel())
    ranks = mpi.gatherv(comm, np.full(len(profile), comm.Get_rank(), np.int64))
    names = LevelClock.STEPS
    if steps is None:
        steps = np.full((len(profile), len(names)), np.nan)
    steps = mpi.gatherv(comm, np.ascontiguousarray(steps, np.float64).ravel())
    if comm.Get_rank() != 0:
        return None
    out = []
    for r, (lv, f, e, c, b), t in zip(ranks, rows.reshape(-1, 5), steps.reshape(-1, len(names))):
        row = {"rank": int(r), "level": int(lv), "frontier": int(f), "expand_s": e,
               "comm_s": c, "bytes": int(b)}
        if not np.isnan(t).any():
            row["steps_ms"] = {n: round(x * 1e3, 4) for n, x in zip(names, t) if x > 0}
        out.append(row)
    return out


def _log_steps(comm, label: str, profile: list | None, directions: list | None) -> None:
    """Rank 0's levels of the first search, step by step (where a level's time goes), with
    the direction of each level where the algorithm switches."""
    if comm.Get_rank() != 0 or not profile:
        return
    for row in profile:
        if row["rank"] == 0 and "steps_ms" in row:
            steps = " ".join(f"{n}={ms:.3f}" for n, ms in row["steps_ms"].items())
            lv = row["level"]
            way = f" {directions[lv]}" if directions and lv < len(directions) else ""
            log(f"{label} level {lv}{way} frontier={row['frontier']} ms: {steps}", comm=comm)


def table(records) -> str:
    lines = ["| scale | grid | algorithm | comm | GTEPS (hmean) | median search | Kernel 1 | "
             "validated | median validation | edges read / nedge |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for rec in records:
        for name, a in rec["algorithms"].items():
            g = f"{a['hmean_teps'] / 1e9:.2f}" if a["hmean_teps"] else "-"
            v = f"{a['median_validate_s'] * 1e3:.1f} ms" if a["median_validate_s"] else "-"
            lines.append(f"| {rec['scale']} | {a.get('grid', rec['grid'])} | {name} | {a['comm']} | {g} | "
                         f"{a['median_time_s'] * 1e3:.3f} ms | {a['kernel1_s']:.3f} s | "
                         f"{a['validated']} ({'all valid' if a['valid'] else 'INVALID'}) | "
                         f"{v} | {a.get('examined_per_nedge', math.nan):.2f} |")
    return "\n".join(lines) + "\n"


def run_bench_grid(grid, scales, algorithms, n_roots, out: Path | None, validate_mode: str,
                   edgefactor: int = 16, seeds=(2, 3), version: str = "3.0") -> int:
    if validate_mode == "cpu":
        raise BfsError("bench --grid validates on the GPUs (--validate every|first|none)")
    comm = mpi.world()
    with mpi.abort_on_error(comm):
        with mpi.collective_errors(comm):
            mpi.check_world_size(comm, grid[0] * grid[1], f"bench --grid {grid[0]}x{grid[1]}")
            for name in algorithms:
                spec = get_algorithm(parse_algorithm(name)[0])
                if not spec.distributed or "gpu" not in spec.backends:
                    raise BfsError(f"bench --grid runs the distributed GPU algorithms; "
                                   f"{spec.name!r} is not one")
            gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm)))
        ranks = envinfo.rank_infos(comm, {"gpu_index": gpu})
        hosts = envinfo.hostnames(comm)
        records = [bench_grid_scale(comm, grid, s, edgefactor, seeds, version, algorithms,
                                    n_roots, validate_mode) for s in scales]
        if comm.Get_rank() != 0:
            return 0
        result = {"backend": "gpu", "grid": list(grid), "records": records,
                  "environment": envinfo.environment(hosts, comm.Get_size(), ranks)}
        if out is not None:
            out.write_text(json.dumps(result, indent=1, default=float) + "\n")
        sys.stdout.write(table(records))
        return 0 if all(a["valid"] for r in records for a in r["algorithms"].values()) else 1
