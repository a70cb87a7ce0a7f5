"""The harness behind `bfs run` and `bfs validate`: Kernel 1 once, Kernel 2 per root, every
search validated untimed, Graph500 statistics, and the run directory:

    RUN_DIR/run.json                 parameters, statistics, construction_time, environment, valid
    RUN_DIR/searches.parquet         one row per search
    RUN_DIR/levels.parquet           per search and level: vertices discovered at that level
                                     (and, where counted, edges read and the direction)
    RUN_DIR/parents/root-<r>.parquet columns parent (int64, -1 unreached), level (int32)
    RUN_DIR/graph500.txt             the reference's output block

The directory is written atomically, run.json last: it records every other file (rows, bytes,
sha256; see rundir.py). A search that fails validation marks the run invalid (run.json
"valid": false) and the command exits non-zero.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from . import envinfo
from ..algorithms import ALGORITHMS, Block, EdgeList, RunContext, get_algorithm
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, atomic_dir, read_edges, read_meta, write_json
from ..integrity import file_records
from .rundir import (GRAPH500_FILE, LEVELS_FILE, LEVELS_SCHEMA, PARENTS_DIR, REMEDY, RUN_JSON,
                     SEARCHES_FILE, SEARCHES_SCHEMA, check_run_file, data_files, read_run_json,
                     read_run_table)
from ..algorithms.kernel1 import nonloop_degrees
from ..comm.exchange import check_comm, default_comm
from .roots import check_root, graph500_roots
from .stats import graph500_statistics, output_block
from ..validate import validate
from ..log import logger

DEFAULT_SEEDS = (2, 3)


log = logger("bfs")


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU" here
        return False


def select_gpu(local: int) -> int:
    """Make device gpu_index(local, visible devices) current for this process; its index."""
    import cupy
    index = envinfo.gpu_index(local, cupy.cuda.runtime.getDeviceCount())
    cupy.cuda.Device(index).use()
    return index


def resolve_backend(requested: str, spec) -> str:
    if requested == "auto":
        # the first listed backend is the algorithm's default: 2d ("cpu", "gpu") stays on the
        # CPU unless --backend gpu asks for it
        if spec.backends[0] == "gpu" and gpu_available():
            return "gpu"
        if "cpu" in spec.backends:
            return "cpu"
        raise BfsError(f"algorithm {spec.name!r} runs only on the GPU, and no CUDA GPU is "
                       "visible to this process (CuPy found none)")
    if requested not in spec.backends:
        raise BfsError(f"algorithm {spec.name!r} has no {requested} backend "
                       f"(it has: {', '.join(spec.backends)})")
    if requested == "gpu" and not gpu_available():
        raise BfsError("--backend gpu: no CUDA GPU is visible to this process (CuPy found none)")
    return requested


def choose_roots(meta: GraphMeta, degree: np.ndarray, n_roots: int,
                 root: int | None) -> np.ndarray:
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
    save_parents: int = 1   # one tree for `bfs validate`, as the CLI's default
    force: bool = False


class LocalSession:
    """One process: the searcher sees the whole edge list, validation reads it too."""
    rank, size, is_root = 0, 1, True

    def __init__(self, graph_dir: Path, spec, backend: str, options: dict):
        self.meta = read_meta(graph_dir)
        self.src, self.dst = self._load_edges(graph_dir)
        self.graph_dir = graph_dir
        self.spec, self.backend, self.options = spec, backend, options
        self.hostnames = envinfo.environment()["hostnames"]

    def _load_edges(self, graph_dir: Path):
        log(f"reading {graph_dir} ({self.meta.n_vertices} vertices, {self.meta.n_edges} edges)")
        return read_edges(graph_dir)

    def build(self):
        graph = EdgeList(self.src, self.dst, self.meta.n_vertices)
        return self.spec.load(self.backend).build(graph, RunContext(self.backend, self.options))

    def degrees(self):
        return nonloop_degrees(self.src, self.dst, self.meta.n_vertices)

    def barrier(self):
        pass

    def collective(self):
        return contextlib.nullcontext()

    def max(self, x: float) -> float:
        return x

    def bcast_roots(self, roots):
        return roots

    def result(self, searcher, result, keep: bool):
        """The search's parent and level arrays on the host (every search: the per-level
        profile counts the levels)."""
        return searcher.gather(self.meta.n_vertices) if hasattr(searcher, "gather") else result

    def validate(self, searcher, result, root):
        return validate(self.src, self.dst, result.parent, root, result.level)

    def profile(self, searcher, result, root):
        counts = np.bincount(result.level[result.level >= 0])
        # direction-optimizing searchers (merrill-do): each level's direction and edges read
        directions = getattr(searcher, "directions", [])
        examined = getattr(searcher, "level_edges_examined", [])
        return [{"root": root, "rank": 0, "level": lv, "frontier_size": int(c),
                 "expand_s": math.nan, "comm_s": 0.0, "comm_bytes": 0,
                 "edges_examined": int(examined[lv]) if lv < len(examined) else None,
                 "direction": directions[lv] if lv < len(directions) else None}
                for lv, c in enumerate(counts)]

    def describe(self) -> dict:
        return {"graph": {"dir": str(Path(self.graph_dir).resolve()), **self.meta.to_json()}}


class GpuSession(LocalSession):
    """One process on one GPU: the edge list goes from the graph directory's row groups through
    pinned buffers into device memory (never whole on the host); Kernel 1 reads it there, and
    every search is validated on the GPU (bfs.validate.gpu) against it."""

    def _load_edges(self, graph_dir: Path):
        from ..graphs import device_edges
        log(f"reading {graph_dir} ({self.meta.n_vertices} vertices, {self.meta.n_edges} edges)"
            f" into GPU memory")
        t = time.perf_counter()
        edges = device_edges.read_edges_to_device(graph_dir)
        t = time.perf_counter() - t
        log(f"edge list on the GPU in {t:.2f} s ({self.meta.n_edges / max(t, 1e-9) / 1e6:.0f} M "
            f"edges/s)")
        return edges

    def degrees(self):
        from ..graphs.device_edges import nonloop_degrees_device
        return nonloop_degrees_device(self.src, self.dst, self.meta.n_vertices)

    def validate(self, searcher, result, root):
        import cupy as cp

        from ..validate.gpu import validate_device
        if hasattr(searcher, "device_result"):    # no copy back from the host
            res = searcher.device_result()
            return validate_device(lambda: [(self.src, self.dst)], res.parent, res.level, root)
        return validate_device(lambda: [(self.src, self.dst)],
                               cp.asarray(result.parent, dtype=cp.int64),
                               cp.asarray(result.level, dtype=cp.int32), root)

    def describe(self) -> dict:
        return {**super().describe(), "validation": "gpu (bfs.validate.gpu)"}


class HostGraphGpuSession(LocalSession):
    """One process on one GPU for an algorithm that keeps the graph in host memory
    (gpu-out-of-core): the edge list stays on the host, the searcher streams its own CSR to
    the device, and every search is validated on the CPU (bfs.validate), since the edge list
    on the device that bfs.validate.gpu needs would not fit where the algorithm is meant to
    be used."""

    def describe(self) -> dict:
        return {**super().describe(), "validation": "cpu (bfs.validate): graph kept on the host"}


class MpiSession:
    """One rank of a distributed run: it reads only its own block of the partition."""

    def __init__(self, part_dir: Path, spec, backend: str, options: dict):
        from ..comm import mpi
        from ..partition import load_manifest, read_block
        self.comm = comm = mpi.world()
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.is_root = self.rank == 0
        self.spec, self.backend, self.options = spec, backend, options
        self.part_dir = part_dir
        with mpi.collective_errors(comm):
            self.manifest = load_manifest(part_dir)
            kind = spec.partition
            if self.manifest["kind"] != kind:
                raise BfsError(f"{part_dir} is a {self.manifest['kind']} partition; "
                               f"--algorithm {spec.name} needs a {kind} one "
                               f"(bfs partition {'--1d P' if kind == '1d' else '--grid RxC'})")
            rows, cols = self.manifest["grid"]
            mpi.check_world_size(comm, rows * cols,
                                 f"partition {part_dir} ({rows}x{cols} grid)")
        with mpi.collective_errors(comm):
            self.src, self.dst = read_block(part_dir, self.manifest, self.rank)
        self.meta = GraphMeta.from_json(self.manifest["graph"]["graph_json"])
        self.hostnames = envinfo.hostnames(comm)
        # each rank drives its own GPU: the one SLURM bound it to, or its node-local turn
        gpu = select_gpu(envinfo.local_rank(mpi.node_rank(comm))) if backend == "gpu" else None
        self.ranks = envinfo.rank_infos(comm, {"gpu_index": gpu})
        if self.is_root:
            log(f"{self.size} ranks, {rows}x{cols} grid, {self.meta.n_vertices} vertices, "
                f"{self.manifest['n_directed_edges']} directed edges")

    def build(self):
        block = Block(self.comm, self.manifest, self.src, self.dst)
        return self.spec.load(self.backend).build(block, RunContext(self.backend, self.options))

    def degrees(self):
        """Vertices with an edge, from every block's sources (rank 0 only; None elsewhere)."""
        from mpi4py import MPI
        has_edge = np.zeros(self.meta.n_vertices, np.bool_)
        has_edge[self.src[self.src != self.dst]] = True
        bits = np.packbits(has_edge)
        total = np.empty_like(bits) if self.is_root else None
        self.comm.Reduce(bits, total, op=MPI.BOR, root=0)
        if self.is_root:
            return np.unpackbits(total, count=self.meta.n_vertices).astype(np.int64)
        return None

    def barrier(self):
        self.comm.Barrier()

    def collective(self):
        from ..comm.mpi import collective_errors
        return collective_errors(self.comm)

    def max(self, x: float) -> float:
        from ..comm.mpi import allreduce_scalar
        return allreduce_scalar(self.comm, x, "MAX")

    def bcast_roots(self, roots):
        count = np.array([len(roots) if self.is_root else 0], np.int64)
        self.comm.Bcast(count, root=0)
        buf = np.ascontiguousarray(roots, np.int64) if self.is_root else np.empty(count[0],
                                                                                   np.int64)
        self.comm.Bcast(buf, root=0)
        return buf

    def result(self, searcher, result, keep: bool):
        """Parents and levels gathered on rank 0 only where they are saved (or needed by the
        CPU validator); the GPU grid is validated where it lies."""
        if keep or not self.grid_validation(searcher):
            return searcher.gather(self.meta.n_vertices)
        return None

    def grid_validation(self, searcher) -> bool:
        return self.backend == "gpu" and hasattr(searcher, "grid_view")

    def validate(self, searcher, result, root):
        self.validated_on_gpus = self.grid_validation(searcher)   # what run.json names
        if self.validated_on_gpus:
            from ..validate.grid_gpu import validate_grid_device
            verdict = validate_grid_device(searcher.grid_view(), root, self.comm,
                                           searcher.world_x, searcher.row_x, searcher.col_x)
            return verdict if self.is_root else None
        from ..validate import validate_blocks
        return validate_blocks(self.comm, self.src, self.dst, result, root,
                               self.meta.n_vertices)

    def profile(self, searcher, result, root):
        from ..comm.mpi import gatherv
        rows = gatherv(self.comm, searcher.profile.ravel())
        ranks = gatherv(self.comm, np.full(len(searcher.profile), self.rank, np.int64))
        if not self.is_root:
            return []
        rows = rows.reshape(-1, 5)
        # direction-optimizing searches: each level's direction and edges read (all ranks)
        directions = getattr(searcher, "directions", [])
        examined = getattr(searcher, "level_edges_examined", [])
        return [{"root": root, "rank": int(r), "level": int(lv), "frontier_size": int(fs),
                 "expand_s": float(ex), "comm_s": float(cm), "comm_bytes": int(b),
                 "edges_examined": (int(examined[int(lv)]) if r == 0 and lv < len(examined)
                                    else None),
                 "direction": directions[int(lv)] if r == 0 and lv < len(directions) else None}
                for r, (lv, fs, ex, cm, b) in zip(ranks, rows)]

    def describe(self) -> dict:
        return {"graph": {"dir": self.manifest["graph"]["dir"], **self.meta.to_json()},
                "partition": {"dir": str(Path(self.part_dir).resolve()),
                              "kind": self.manifest["kind"], "grid": self.manifest["grid"]},
                "validation": ("gpu, each rank its block (bfs.validate.grid_gpu)"
                               if getattr(self, "validated_on_gpus", False)
                               else "cpu, each rank its block (bfs.validate.validate_blocks)")}


def _request(input_dir: Path, opts: RunOptions, extra: dict | None):
    """The algorithm, the backend and the options asked for, checked against each other."""
    spec = get_algorithm(opts.algorithm)
    backend = resolve_backend(opts.backend, spec)
    options = dict(extra or {})
    if spec.distributed:
        if options.get("comm"):
            check_comm(options["comm"], backend)
    elif "comm" in options:
        raise BfsError(f"--comm is for the distributed algorithms; {spec.name} runs on one "
                       "process")
    elif (Path(input_dir) / "manifest.json").is_file():
        raise BfsError(f"{input_dir} is a partition directory; --algorithm {spec.name} runs on "
                       f"a graph directory (distributed algorithms: "
                       f"{', '.join(n for n, s in ALGORITHMS.items() if s.distributed)})")
    return spec, backend, options


def run(input_dir: Path, out: Path, opts: RunOptions, extra: dict | None = None) -> int:
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    known = ALGORITHMS.get(opts.algorithm)
    if (Path(input_dir) / "manifest.json").is_file() or (known and known.distributed):
        # one process per rank: every rank checks the same request, so a bad one is agreed
        # and printed once (by rank 0), not once per rank
        from ..comm.mpi import abort_on_error, collective_errors, world
        comm = world()
        with abort_on_error(comm):
            with collective_errors(comm):
                spec, backend, options = _request(input_dir, opts, extra)
            session = MpiSession(input_dir, spec, backend, options)
            return _run_ranks(session, out, opts, spec, backend, options, started)
    spec, backend, options = _request(input_dir, opts, extra)
    # An out-of-core algorithm (spec.host_graph) gets the host session: GpuSession would put
    # the edge list on the device (8 bytes an edge, and bfs.validate.gpu reads it there), the
    # very memory the algorithm is built to do without; so it is validated on the CPU.
    session_class = (HostGraphGpuSession if spec.host_graph else GpuSession) \
        if backend == "gpu" else LocalSession
    session = session_class(input_dir, spec, backend, options)
    return _run_ranks(session, out, opts, spec, backend, options, started)


def _run_ranks(session, out, opts, spec, backend, options, started) -> int:
    """The search loop every rank runs; rank 0 validates, records and writes the run."""
    meta = session.meta
    degree = session.degrees()
    roots = None
    with session.collective():
        if session.is_root:
            if Path(out).exists() and any(Path(out).iterdir()) and not opts.force:
                raise BfsError(f"{out}: already exists (remove it or pass --force)")
            roots = choose_roots(meta, degree, opts.n_roots, opts.root)
    roots = session.bcast_roots(roots)

    warm_up = getattr(spec.load(backend), "warm_up", None)   # e.g. CUDA compilation, untimed
    if warm_up is not None:
        warm_up(RunContext(backend, options))
    t0 = time.perf_counter()
    with session.collective():   # a rank short of memory stops every rank, not just itself
        searcher = session.build()
    construction_time = session.max(time.perf_counter() - t0)
    if spec.distributed:   # the exchange the search really uses (run.json, the report)
        options["comm"] = getattr(searcher, "comm_kind", default_comm(backend))
    for key in ("alpha", "beta"):   # 2d-do's switch as it ran: its defaults differ by backend
        if hasattr(searcher, key):  # (strict JSON: an infinite beta is recorded as "inf")
            value = float(getattr(searcher, key))
            options[key] = "inf" if value == float("inf") else value
    if session.is_root:
        log(f"kernel 1 ({spec.name}, {backend}): {construction_time:.3f} s")

    # One untimed search and validation first: JIT compilation, module loads and first-touch
    # page faults belong to no search (the device method's warm-up; Graph500 does not forbid it).
    warm = session.result(searcher, searcher.search(int(roots[0])), keep=False)
    session.validate(searcher, warm, int(roots[0]))

    rows, level_rows, parents = [], [], {}
    for i, root in enumerate(roots):
        root = int(root)
        if backend == "gpu":
            # untimed: the GPU slows down while the host validates (bench._timed_searches)
            searcher.search(root)
        session.barrier()
        t = time.perf_counter()
        result = searcher.search(root)
        search_time = session.max(time.perf_counter() - t)
        result = session.result(searcher, result, keep=i < opts.save_parents)
        t = time.perf_counter()
        check = session.validate(searcher, result, root)
        validate_time = session.max(time.perf_counter() - t)
        level_rows += session.profile(searcher, result, root)
        if not session.is_root:
            continue
        teps = check.nedge / search_time if check.valid and search_time > 0 else 0.0
        rows.append({"root": root, "time_s": search_time, "nedge": check.nedge,
                     "teps": teps, "depth": check.depth, "reached": check.reached,
                     "valid": check.valid, "validate_s": validate_time,
                     "edges_examined": getattr(searcher, "edges_examined", None)})
        status = "valid" if check.valid else f"INVALID: {check.message}"
        log(f"search {i + 1}/{len(roots)} root={root} depth={check.depth} "
            f"reached={check.reached} nedge={check.nedge} time={search_time:.4g}s "
            f"TEPS={teps:.4g} {status}")
        if i < opts.save_parents:
            parents[root] = (result.parent.astype(np.int64), result.level.astype(np.int32))
    code = 0
    with session.collective():   # a failed write stops every rank, not rank 0 alone
        if session.is_root:
            code = _write_run(session, out, opts, spec, backend, options, started, roots,
                              construction_time, rows, level_rows, parents)
    return int(session.max(code))   # rank 0's exit status (1: an invalid search) on every rank


def _write_run(session, out, opts, spec, backend, options, started, roots, construction_time,
               rows, level_rows, parents) -> int:
    meta = session.meta
    valid = all(r["valid"] for r in rows)
    scale, edgefactor = graph500_scale(meta)
    stats = None
    block = "# no statistics: a search failed validation\n"
    if valid:
        stats = graph500_statistics([r["time_s"] for r in rows], [r["nedge"] for r in rows],
                                    [r["validate_s"] for r in rows])
        block = output_block(scale=scale, edgefactor=edgefactor, nbfs=len(rows),
                             graph_generation=meta.extra.get("generation_time", math.nan),
                             num_mpi_processes=session.size,
                             construction_time=construction_time, stats=stats)
    with atomic_dir(out, opts.force) as tmp:
        if parents:
            (tmp / PARENTS_DIR).mkdir()
        for root, (parent, level) in parents.items():
            pq.write_table(pa.table({"parent": parent, "level": level}),
                           tmp / PARENTS_DIR / f"root-{root}.parquet")
        pq.write_table(pa.Table.from_pylist(rows, schema=SEARCHES_SCHEMA), tmp / SEARCHES_FILE)
        pq.write_table(pa.Table.from_pylist(level_rows, schema=LEVELS_SCHEMA), tmp / LEVELS_FILE)
        (tmp / GRAPH500_FILE).write_text(block)
        write_json(tmp / RUN_JSON, {
            "valid": valid,
            "bfs_version": __version__,
            "command": sys.argv,
            "started": started,
            "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            **session.describe(),
            "parameters": {"algorithm": spec.name, "backend": backend,
                           "n_roots": len(roots), "roots": [int(r) for r in roots],
                           "root": opts.root, "save_parents": opts.save_parents,
                           "mpi_size": session.size, **options},
            "scale": scale,
            "edgefactor": edgefactor,
            "construction_time": construction_time,
            "graph500": stats,
            "environment": envinfo.environment(session.hostnames, session.size,
                                               getattr(session, "ranks", None)),
            "files": file_records(tmp, data_files(tmp)),
        })
    sys.stdout.write(block)
    if not valid:
        bad = sum(not r["valid"] for r in rows)
        log(f"{bad} of {len(rows)} searches failed validation: run {out} is marked invalid")
        return 1
    return 0


def revalidate(run_dir: Path, graph_dir: Path | None = None) -> tuple[bool, list[dict]]:
    """Re-check a run's saved parents against its graph's own edge list (`bfs validate`)."""
    run_dir = Path(run_dir)
    run_json = run_dir / RUN_JSON
    info = read_run_json(run_dir)
    if graph_dir is None:
        graph = info.get("graph")
        if not isinstance(graph, dict) or not isinstance(graph.get("dir"), str):
            raise BfsError(f"{run_json}: names no graph directory (graph.dir); pass --graph")
        graph_dir = Path(graph["dir"])
    searches = read_run_table(run_dir, info, SEARCHES_FILE).to_pylist()
    by_root = {r["root"]: r for r in searches}
    listed = [r["path"] for r in info.get("files") or () if r["path"].startswith(f"{PARENTS_DIR}/")]
    found = [f"{PARENTS_DIR}/{p.name}" for p in (run_dir / PARENTS_DIR).glob("*.parquet")]
    rels = sorted(set(listed) | set(found))
    if not rels:
        saved = (info.get("parameters") or {}).get("save_parents")
        if saved:   # only a run from before `files` was recorded gets here with its trees gone
            raise BfsError(f"{run_dir / PARENTS_DIR}: missing, though the run saved {saved} "
                           f"searches' parents; {REMEDY}")
        raise BfsError(f"{run_dir}: no saved parents to validate: the run had --save-parents "
                       f"{saved or 0}; run it again with --save-parents K (K >= 1, the default "
                       f"1) to keep the first K searches' parents")
    roots = {}
    for rel in rels:
        try:
            roots[rel] = int(Path(rel).stem.removeprefix("root-"))
        except ValueError:
            raise BfsError(f"{run_dir / rel}: not a parents file (expected "
                           f"root-<vertex>.parquet)") from None
        check_run_file(run_dir, info, rel)  # every file checked before the long reads
    src, dst = read_edges(graph_dir)
    n = read_meta(graph_dir).n_vertices
    report, ok = [], bool(info.get("valid"))
    if not ok:
        log(f"{run_json}: the run itself is marked invalid")
    for rel in rels:
        root = roots[rel]
        table = read_run_table(run_dir, info, rel)
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
