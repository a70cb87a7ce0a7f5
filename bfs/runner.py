"""The harness behind `bfs run` and `bfs validate`: Kernel 1 once, Kernel 2 per root, every
search validated untimed, Graph500 statistics, and the run directory:

    RUN_DIR/run.json                 parameters, statistics, construction_time, environment, valid
    RUN_DIR/searches.parquet         one row per search
    RUN_DIR/levels.parquet           per search and level: vertices discovered at that level
    RUN_DIR/parents/root-<r>.parquet columns parent (int64, -1 unreached), level (int32)
    RUN_DIR/graph500.txt             the reference's output block

The directory is written atomically. A search that fails validation marks the run invalid
(run.json "valid": false) and the command exits non-zero.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, envinfo
from .algorithms import EdgeList, RunContext, get_algorithm
from .graphdir import BfsError, GraphMeta, atomic_dir, read_edges, read_meta, write_json
from .kernel1 import nonloop_degrees
from .roots import check_root, graph500_roots
from .stats import graph500_statistics, output_block
from .validate import validate

DEFAULT_SEEDS = (2, 3)


def log(msg: str) -> None:
    print(f"[bfs] {msg}", file=sys.stderr, flush=True)


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU" here
        return False


def resolve_backend(requested: str, spec) -> str:
    if requested == "auto":
        return "gpu" if "gpu" in spec.backends and gpu_available() else "cpu"
    if requested not in spec.backends:
        raise BfsError(f"algorithm {spec.name!r} has no {requested} backend "
                       f"(it has: {', '.join(spec.backends)})")
    if requested == "gpu" and not gpu_available():
        raise BfsError("--backend gpu: no CUDA GPU is visible to this process (CuPy found none)")
    return requested


def choose_roots(meta: GraphMeta, src, dst, n_roots: int, root: int | None) -> np.ndarray:
    degree = nonloop_degrees(src, dst, meta.n_vertices)
    if root is not None:
        check_root(root, meta.n_vertices)
        if degree[root] == 0:
            raise BfsError(f"--root {root}: vertex has no edge other than self-loops; "
                           "a search from it traverses nothing")
        return np.array([root], dtype=np.int64)
    seeds = tuple(meta.seeds) if meta.seeds else DEFAULT_SEEDS
    return graph500_roots(meta.n_vertices, degree > 0, count=n_roots, seeds=seeds)


def graph500_scale(meta: GraphMeta) -> tuple[float, float]:
    """SCALE and edgefactor as printed: exact for Kronecker, log2(n) and m/n for other graphs."""
    if meta.scale is not None:
        return meta.scale, meta.edgefactor
    return math.log2(meta.n_vertices), meta.n_edges / meta.n_vertices


@dataclass
class RunOptions:
    algorithm: str
    backend: str = "auto"
    n_roots: int = 64
    root: int | None = None
    save_parents: int = 0
    force: bool = False


def run(graph_dir: Path, out: Path, opts: RunOptions, extra: dict | None = None) -> int:
    spec = get_algorithm(opts.algorithm)
    if spec.distributed:
        raise BfsError(f"algorithm {spec.name!r} runs on a partition directory under MPI")
    backend = resolve_backend(opts.backend, spec)
    meta = read_meta(graph_dir)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    log(f"reading {graph_dir} ({meta.n_vertices} vertices, {meta.n_edges} edges)")
    src, dst = read_edges(graph_dir)
    roots = choose_roots(meta, src, dst, opts.n_roots, opts.root)

    t0 = time.perf_counter()
    searcher = spec.load().build(EdgeList(src, dst, meta.n_vertices),
                                 RunContext(backend, dict(extra or {})))
    construction_time = time.perf_counter() - t0
    log(f"kernel 1 ({spec.name}, {backend}): {construction_time:.3f} s")

    rows, level_rows = [], []
    with atomic_dir(out, opts.force) as tmp:
        if opts.save_parents:
            (tmp / "parents").mkdir()
        for i, root in enumerate(roots):
            root = int(root)
            t = time.perf_counter()
            result = searcher.search(root)
            search_time = time.perf_counter() - t
            t = time.perf_counter()
            check = validate(src, dst, result.parent, root, result.level)
            validate_time = time.perf_counter() - t
            teps = check.nedge / search_time if check.valid and search_time > 0 else 0.0
            rows.append({"root": root, "time_s": search_time, "nedge": check.nedge,
                         "teps": teps, "depth": check.depth, "reached": check.reached,
                         "valid": check.valid, "validate_s": validate_time})
            counts = np.bincount(result.level[result.level >= 0])
            level_rows += [{"root": root, "level": lv, "frontier_size": int(c)}
                           for lv, c in enumerate(counts)]
            status = "valid" if check.valid else f"INVALID: {check.message}"
            log(f"search {i + 1}/{len(roots)} root={root} depth={check.depth} "
                f"reached={check.reached} nedge={check.nedge} time={search_time:.4g}s "
                f"TEPS={teps:.4g} {status}")
            if i < opts.save_parents:
                pq.write_table(pa.table({"parent": result.parent.astype(np.int64),
                                         "level": result.level.astype(np.int32)}),
                               tmp / "parents" / f"root-{root}.parquet")
        valid = all(r["valid"] for r in rows)
        pq.write_table(pa.Table.from_pylist(rows, schema=SEARCHES_SCHEMA),
                       tmp / "searches.parquet")
        pq.write_table(pa.Table.from_pylist(level_rows, schema=LEVELS_SCHEMA),
                       tmp / "levels.parquet")
        scale, edgefactor = graph500_scale(meta)
        stats = None
        block = "# no statistics: a search failed validation\n"
        if valid:
            stats = graph500_statistics([r["time_s"] for r in rows], [r["nedge"] for r in rows],
                                        [r["validate_s"] for r in rows])
            block = output_block(scale=scale, edgefactor=edgefactor, nbfs=len(rows),
                                 graph_generation=meta.extra.get("generation_time", math.nan),
                                 num_mpi_processes=1, construction_time=construction_time,
                                 stats=stats)
        (tmp / "graph500.txt").write_text(block)
        write_json(tmp / "run.json", {
            "valid": valid,
            "bfs_version": __version__,
            "command": sys.argv,
            "started": started,
            "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "graph": {"dir": str(Path(graph_dir).resolve()), **meta.to_json()},
            "parameters": {"algorithm": spec.name, "backend": backend,
                           "n_roots": len(roots), "roots": [int(r) for r in roots],
                           "root": opts.root, "save_parents": opts.save_parents,
                           "options": dict(extra or {})},
            "scale": scale,
            "edgefactor": edgefactor,
            "construction_time": construction_time,
            "graph500": stats,
            "environment": envinfo.environment(),
        })
    sys.stdout.write(block)
    if not valid:
        bad = sum(not r["valid"] for r in rows)
        log(f"{bad} of {len(rows)} searches failed validation: run {out} is marked invalid")
        return 1
    return 0


SEARCHES_SCHEMA = pa.schema([("root", pa.int64()), ("time_s", pa.float64()),
                             ("nedge", pa.int64()), ("teps", pa.float64()),
                             ("depth", pa.int64()), ("reached", pa.int64()),
                             ("valid", pa.bool_()), ("validate_s", pa.float64())])
LEVELS_SCHEMA = pa.schema([("root", pa.int64()), ("level", pa.int64()),
                           ("frontier_size", pa.int64())])


def revalidate(run_dir: Path, graph_dir: Path | None = None) -> tuple[bool, list[dict]]:
    """Re-check a run's saved parents against its graph's own edge list (`bfs validate`)."""
    run_json = run_dir / "run.json"
    if not run_json.is_file():
        raise BfsError(f"{run_dir}: not a run directory (no run.json)")
    info = json.loads(run_json.read_text())
    graph_dir = Path(graph_dir or info["graph"]["dir"])
    searches = pq.read_table(run_dir / "searches.parquet").to_pylist()
    by_root = {r["root"]: r for r in searches}
    files = sorted((run_dir / "parents").glob("root-*.parquet")) \
        if (run_dir / "parents").is_dir() else []
    if not files:
        raise BfsError(f"{run_dir}: no saved parents to validate (run with --save-parents K)")
    src, dst = read_edges(graph_dir)
    n = read_meta(graph_dir).n_vertices
    report, ok = [], bool(info.get("valid"))
    if not ok:
        log(f"{run_json}: the run itself is marked invalid")
    for path in files:
        root = int(path.stem.removeprefix("root-"))
        table = pq.read_table(path)
        parent = table.column("parent").to_numpy()
        level = table.column("level").to_numpy() if "level" in table.column_names else None
        if len(parent) != n:
            check_msg, good = f"{len(parent)} parents for {n} vertices", False
            nedge = None
        else:
            check = validate(src, dst, parent, root, level)
            recorded = by_root.get(root)
            good = check.valid and recorded is not None and \
                (recorded["nedge"], recorded["depth"], recorded["reached"]) == \
                (check.nedge, check.depth, check.reached)
            check_msg = check.message if not check.valid else (
                "valid" if good else f"valid tree, but searches.parquet records "
                f"{recorded and {k: recorded[k] for k in ('nedge', 'depth', 'reached')}} "
                f"and the tree gives nedge={check.nedge} depth={check.depth} "
                f"reached={check.reached}")
            nedge = check.nedge
        report.append({"root": root, "valid": good, "nedge": nedge, "message": check_msg})
        log(f"root {root}: {check_msg}")
        ok = ok and good
    return ok, report
