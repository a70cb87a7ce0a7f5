"""The harness: the one place that builds, times, validates and records a search, behind
`bfs run`, `bfs bench` and `bfs validate`. Kernel 1 once per algorithm, Kernel 2 per root,
searches validated untimed (--validate), Graph500 statistics, and the run directory:

    RUN_DIR/run.json                 parameters, statistics, construction_time, environment, valid
    RUN_DIR/searches.parquet         one row per search (valid null: not validated)
    RUN_DIR/levels.parquet           per search and level: vertices discovered at that level
                                     (and, where counted, edges read and the direction)
    RUN_DIR/parents/root-<r>.parquet columns parent (int64, -1 unreached), level (int32)
    RUN_DIR/graph500.txt             the reference's output block

The directory is written atomically, run.json last: it records every other file (rows, bytes,
sha256; see rundir.py). A search that fails validation marks the run invalid (run.json
"valid": false) and the command exits non-zero.

This module holds the search loop (search_run), the writing of the run directory, `bfs run`
(run) and `bfs validate` (revalidate). The input is a graph directory, a partition directory
(distributed algorithms, one MPI rank per block) or a graph generated in place (generated.py);
request.py checks the request and opens the session, which holds the graph where the searches
need it (sessions_local.py: LocalSession on the host, GpuSession on one GPU;
sessions_mpi.py: MpiSession, each rank's block on its GPU or in host memory) and is reused by
every algorithm `bfs bench` runs over the graph.

Timing (timing.py): CUDA events around each GPU search, after an untimed search from the same
root; a host clock on the CPU; under MPI a barrier first and the maximum over the ranks.
Kernel 1 on a GPU is the second of two builds (the first compiles what the warm-up's tiny graph
cannot; run.json keeps it as kernel1_first_s).

Energy (energy.py): after the timed searches, the same roots searched again back to back for
--energy-window seconds between two reads of the energy counters (NVML on GPUs, RAPL on CPUs);
run.json's energy, or null with energy_unavailable saying why.
"""
from __future__ import annotations

import datetime as dt
import math
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from . import envinfo
from ..algorithms import ALGORITHMS, RunContext, Searcher
from ..errors import BfsError
from ..graphs.edge_chunks import streamed_graph_dir_host
from ..graphs.graphdir import GraphMeta, atomic_dir, read_edges, read_meta, write_json
from ..integrity import column_array, file_records, table_of_rows
from .rundir import (GRAPH500_FILE, LEVELS_FILE, LEVELS_SCHEMA, PARENTS_DIR, REMEDY, RUN_JSON,
                     SEARCHES_FILE, SEARCHES_SCHEMA, check_run_file, data_files, read_run_json,
                     read_run_table)
from ..comm.exchange import default_comm
from .energy import measure as measure_energy
from .generated import parse_generate
from .request import check_input, check_request, gpu_available, is_partition, open_session
from .run_options import RunOptions
from .stats import (examined_per_nedge, graph500_statistics, level_us_median,
                    output_block, summarize)
from .timing import profile_search
from .validation import ValidationPolicy
from ..validate import validate_chunks
from ..log import logger


log = logger("bfs")


def graph500_scale(meta: GraphMeta) -> tuple[float, float]:
    """SCALE and edgefactor as printed: exact for Kronecker, log2(n) and m/n for other graphs."""
    if meta.scale is not None:
        return meta.scale, meta.edgefactor
    return math.log2(meta.n_vertices), meta.n_edges / meta.n_vertices


def run(input_dir: Path | None, out: Path, opts: RunOptions, extra: dict | None = None,
        generate: str | None = None) -> int:
    """`bfs run`: one algorithm over a graph directory, a partition directory or a graph
    generated in place (--generate)."""
    known = ALGORITHMS.get(opts.algorithm)
    if (known and known.distributed) or (input_dir is not None and is_partition(Path(input_dir))):
        # one process per rank: every rank checks the same request, so a bad one is agreed
        # and printed once (by rank 0), not once per rank
        from ..comm.mpi import abort_on_error, collective_errors, world
        comm = world()
        with abort_on_error(comm):
            with collective_errors(comm):
                source = check_input(input_dir, generate)
                spec, backend, options = check_request(source, opts, extra)
            session = open_session(source, spec, backend, opts.grid, opts.edge_list,
                                   options.get("adjacency", "both"))
            code = search_run(session, spec, backend, options, opts, out)
            # the grid's communicators, freed in the same order on every rank (after an error
            # abort_on_error stops every rank instead: a peer may be gone)
            session.close()
            return code
    source = check_input(input_dir, generate)
    spec, backend, options = check_request(source, opts, extra)
    from ..comm.mpi import launcher_rank
    rank = launcher_rank()
    if rank > 0:   # a one-process algorithm started on several ranks: one runs it
        log(f"{spec.name} runs on one process: rank {rank} of this launch leaves it to rank "
            f"0, which writes {out}")
        return 0
    session = open_session(source, spec, backend, edge_list=opts.edge_list)
    return search_run(session, spec, backend, options, opts, out)


def out_free(out: Path, force: bool) -> bool:
    return force or not Path(out).exists() or not any(Path(out).iterdir())


# ---------------------------------------------------------------------------- the search loop

def search_run(session, spec, backend: str, options: dict, opts: RunOptions, out: Path,
               label: str = "", summary: dict | None = None, variant: str | None = None) -> int:
    """Kernel 1 and the timed searches of one algorithm over a session's graph, every rank;
    rank 0 validates (as opts.validate says), records and writes the run directory `out`.
    The exit status (1: an invalid search) on every rank; summary (rank 0), where given, gets
    the run.json written. variant: bench's NAME@KEY=VALUE, recorded in the parameters."""
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    options = dict(options)
    policy = ValidationPolicy(opts.validate)
    clock = session.clock
    label = label or spec.name
    with session.collective():
        if session.is_root and not out_free(out, opts.force):
            raise BfsError(f"{out}: already exists (remove it or pass --force)")
    roots = session.roots(opts)

    # a module's optional warm_up (not the searcher's: it runs before any build), e.g. CUDA
    # compilation, untimed
    warm_up = getattr(spec.load(backend), "warm_up", None)
    if warm_up is not None:
        warm_up(RunContext(backend, options))
    # Kernel 1; on a GPU twice, the second timed: the first also compiles what the warm-up's
    # tiny graph cannot (CuPy's kernels with 64-bit indices for arrays past 2^31 elements,
    # ...), which the kernel cache then keeps
    kernel1_first_s = None
    # the memory peaks are this run's, from the graph it holds on: the host's high-water mark
    # reset (bench runs several in one process), on a GPU the pool emptied and its mark reset
    envinfo.reset_host_memory_peak()
    if clock.gpu:
        from ..device import memory_peak
        clock.free_device_memory()
        memory_peak(reset=True)
    for attempt in range(2 if clock.gpu else 1):
        clock.free_device_memory()
        with session.collective():   # a rank short of memory stops every rank, not itself
            searcher, seconds = clock.build(lambda: session.build(spec, backend, options))
        construction_time = session.max(seconds)
        if not isinstance(searcher, Searcher):   # the harness reads the protocol's attributes
            raise BfsError(f"algorithm {spec.name}: build() returned a "
                           f"{type(searcher).__name__}, not a bfs.algorithms.Searcher")
        if clock.gpu and attempt == 0:
            kernel1_first_s = construction_time
            searcher.close()
            del searcher
    if spec.distributed:   # the exchange the search really uses (run.json, the report)
        options["comm"] = searcher.comm_kind or default_comm(backend)
    for key in searcher.resolved_options:   # e.g. 2d-do's switch: defaults differ by backend;
        value = getattr(searcher, key)      # merrill-do's rows=auto as it resolved
        if not isinstance(value, str):      # (strict JSON: an infinite beta is "inf")
            value = float(value)
            value = "inf" if value == float("inf") else value
        options[key] = value
    # where Kernel 1's time goes (distributed searchers' build phases, in the order every
    # rank ran them), each phase the slowest rank's
    phases = {name: session.max(seconds)
              for name, seconds in (searcher.build_phases or {}).items()}
    if session.is_root:
        log(f"kernel 1 ({label}, {backend}): {construction_time:.3f} s"
            + (" (" + ", ".join(f"{name} {t:.3f} s" for name, t in phases.items()) + ")"
               if phases else ""))

    # One untimed search and validation first: JIT compilation, module loads and first-touch
    # page faults belong to no search (the device method's warm-up; Graph500 does not forbid it).
    warm = session.result(searcher, searcher.search(int(roots[0])), keep=False)
    if policy.wanted(0):
        session.validate(searcher, warm, int(roots[0]), policy)

    rows, level_rows, parents = [], [], {}
    for i, root in enumerate(roots):
        root = int(root)
        result, search_time = clock.search(searcher, root)
        result = session.result(searcher, result, keep=i < opts.save_parents)
        check, validate_time = None, None
        if policy.wanted(i):
            t = time.perf_counter()
            check = session.validate(searcher, result, root, policy)
            validate_time = session.max(time.perf_counter() - t)
            counted = None
        else:
            counted = session.count(searcher, result, root)
        level_rows += session.profile(searcher, result, root, first=i == 0)
        if not session.is_root:
            continue
        if check is not None:
            valid, (nedge, depth, reached) = check.valid, (check.nedge, check.depth,
                                                           check.reached)
        else:
            valid, (nedge, depth, reached) = None, counted
        teps = nedge / search_time if valid is not False and search_time > 0 else 0.0
        rows.append({"root": root, "time_s": search_time, "nedge": nedge, "teps": teps,
                     "depth": depth, "reached": reached, "valid": valid,
                     "validate_s": validate_time, "edges_examined": searcher.edges_examined,
                     "bytes_copied": searcher.bytes_copied, "copy_s": searcher.copy_s})
        status = {True: "valid", None: "not validated"}.get(
            valid, f"INVALID: {check and check.message}")
        log(f"{label} search {i + 1}/{len(roots)} root={root} depth={depth} "
            f"reached={reached} nedge={nedge} time={search_time:.4g}s "
            f"TEPS={teps:.4g} {status}")
        if i < opts.save_parents:
            parents[root] = (result.parent.astype(np.int64), result.level.astype(np.int32))

    # energy per search: the searches again, back to back, between two counter reads
    hmean_teps = summarize([r["time_s"] for r in rows],
                           [r["nedge"] for r in rows])["hmean_teps"] if session.is_root else None
    energy = measure_energy(session, searcher, roots, opts.energy_window, hmean_teps)
    if session.is_root:
        log(energy_line(label, *energy))

    measured = {"kernel1_first_s": kernel1_first_s,
                "kernel1_phases_s": phases or None,
                "kernel1_extra_s": searcher.kernel1_extra_s or None,
                "launches": dict(searcher.launches) if searcher.launches else None,
                "timing": ("CUDA events around each search, after an untimed search from the "
                           "same root" if clock.gpu else "host clock around each search")
                + (", the maximum over the ranks" if session.size > 1 else "")}
    if opts.profile_levels and clock.gpu and searcher.level_profiling:
        measured["level_profile"] = profile_search(searcher, int(roots[0]), label)
    measured.update(_memory_peaks(session, clock.gpu))
    code = 0
    with session.collective():   # a failed write stops every rank, not rank 0 alone
        if session.is_root:
            recorded = {**options, "variant": variant} if variant else options
            code, record = _write_run(session, out, opts, spec, backend, recorded, started,
                                      roots, construction_time, rows, level_rows, parents,
                                      measured, policy, energy)
            if summary is not None:
                summary.update(record)
    searcher.close()
    del searcher
    clock.free_device_memory()
    return int(session.max(code))   # rank 0's exit status (1: an invalid search) on every rank


def _memory_peaks(session, gpu: bool) -> dict:
    """run.json's memory peaks, per rank (one Allgather). host_memory_peak_bytes: the
    process's resident-set high-water mark since the reset before Kernel 1
    (envinfo.host_memory_peak: the graph the session holds, Kernel 1, the searches and the
    validations, with the interpreter and its libraries, a few hundred MB, beneath them). On a
    GPU, device_memory_peak_bytes: the CuPy pool's high-water mark over the same span, the
    device's used bytes at that point, the bytes the pool's arrays held (the rest: blocks it
    cached beside them) and the stage that noted it (bfs.device.note_memory). Each with the
    largest peak per directed edge of the whole graph times the ranks (what a rank holds per
    edge of its share). Collective."""
    mine, stages = [envinfo.host_memory_peak()], [None]
    if gpu:
        from ..device import memory_peak
        peak = memory_peak()
        mine += [peak["pool"], peak["device_used"], peak["in_use"]]
        stages = [peak["stage"]]
    mine = np.asarray(mine, np.int64)
    if getattr(session, "comm", None) is None:
        every = mine.reshape(1, -1)
    else:
        every = np.empty((session.size, mine.size), np.int64)
        session.comm.Allgather(mine, every)
        if gpu:
            stages = session.comm.allgather(stages[0])   # a few words a rank, once a run
    degree = getattr(session, "degree", None)    # a one-process session's: self-loops out
    directed = int(degree.sum()) if degree is not None else 2 * int(session.meta.n_edges)
    per_edge = session.size / max(directed, 1)
    out = {"host_memory_peak_bytes": [int(b) for b in every[:, 0]],
           "host_bytes_per_directed_edge": float(every[:, 0].max()) * per_edge}
    if gpu:
        out["device_memory_peak_bytes"] = [
            {"rank": r, "pool": int(p), "device_used": int(u), "in_use": int(a),
             "stage": stage} for r, ((p, u, a), stage) in enumerate(zip(every[:, 1:], stages))]
        out["device_bytes_per_directed_edge"] = float(every[:, 1].max()) * per_edge
    return out


def _measurements(session, rows, measured) -> dict:
    """run.json's numbers beyond Graph500's: what bench tabulates."""
    times = [r["time_s"] for r in rows]
    out = {k: v for k, v in measured.items() if v is not None}
    out.update(summarize(times, [r["nedge"] for r in rows]))
    out["examined_per_nedge"] = examined_per_nedge(rows)
    out["level_us_median"] = level_us_median(rows)
    out["n_validated"] = sum(r["valid"] is not None for r in rows)
    out.update(session.extra)
    if "floor_time_s" in session.extra and times:
        out["floor_fraction"] = session.extra["floor_time_s"] / out["median_time_s"]
    copied = [r["bytes_copied"] / r["copy_s"] for r in rows
              if r["bytes_copied"] is not None and r["copy_s"]]
    if copied:   # streamed searches (gpu-out-of-core): their rate and the link's, measured
        from ..algorithms.gpu_out_of_core import host_to_device_bandwidth
        out["transfer_rate_Bps"] = float(np.median(copied))
        out["host_to_device_Bps"] = host_to_device_bandwidth()
    # strict JSON: a figure nothing measured (nan) is null
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in out.items()}


def energy_line(label: str, record: dict | None, unavailable: str | None) -> str:
    if record is None:
        return f"{label} energy: not measured ({unavailable})"
    return (f"{label} energy: {record['joules']:.4g} J over {record['seconds']:.3g} s "
            f"({record['searches']} searches), {record['watts']:.4g} W "
            f"({record['covers']}), {record['teps_per_watt'] / 1e6:.4g} MTEPS/W")


def _write_run(session, out, opts, spec, backend, options, started, roots, construction_time,
               rows, level_rows, parents, measured, policy, energy) -> tuple[int, dict]:
    meta = session.meta
    valid = all(r["valid"] is not False for r in rows)
    scale, edgefactor = graph500_scale(meta)
    stats = None
    block = "# no statistics: a search failed validation\n"
    if valid:
        validate_times = [r["validate_s"] for r in rows if r["validate_s"] is not None]
        stats = graph500_statistics([r["time_s"] for r in rows], [r["nedge"] for r in rows],
                                    validate_times or [math.nan])
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
        pq.write_table(table_of_rows(rows, SEARCHES_SCHEMA), tmp / SEARCHES_FILE)
        pq.write_table(table_of_rows(level_rows, LEVELS_SCHEMA), tmp / LEVELS_FILE)
        (tmp / GRAPH500_FILE).write_text(block)
        record = {
            "valid": valid,
            "bfs_version": __version__,
            "command": sys.argv,
            "started": started,
            "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            **session.describe(),
            "parameters": {"algorithm": spec.name, "backend": backend,
                           "n_roots": len(roots), "roots": [int(r) for r in roots],
                           "root": opts.root, "save_parents": opts.save_parents,
                           "validate": str(policy), "mpi_size": session.size, **options},
            "scale": scale,
            "edgefactor": edgefactor,
            "construction_time": construction_time,
            "graph500": stats,
            "measurements": _measurements(session, rows, measured),
            # energy per search (energy.py): null, with the reason, where not measured
            "energy": energy[0],
            "energy_unavailable": energy[1],
            "environment": envinfo.environment(session.hostnames, session.size,
                                               session.ranks),
        }
        write_json(tmp / RUN_JSON, {**record, "files": file_records(tmp, data_files(tmp))})
    if opts.print_block:
        sys.stdout.write(block)
    if not valid:
        bad = sum(r["valid"] is False for r in rows)
        log(f"{bad} of {len(rows)} searches failed validation: run {out} is marked invalid")
        return 1, record
    return 0, record


def iter_of(edges):
    """A chunks() callable over one (src, dst) pair: the whole list as its one chunk."""
    return lambda: iter([edges])


def revalidate(run_dir: Path, graph_dir: Path | None = None) -> tuple[bool, list[dict]]:
    """Re-check a run's saved parents against its graph's own edge list (`bfs validate`). A
    run over a graph generated in place (run.json's graph.generated) has its graph generated
    again (the same edges), unless --graph names a directory to read instead: on the GPU where
    there is one, and each saved search with its levels checked there (bfs.validate.gpu), else
    on the CPU."""
    run_dir = Path(run_dir)
    run_json = run_dir / RUN_JSON
    info = read_run_json(run_dir)
    graph = info.get("graph")
    generated = None
    if graph_dir is None:
        if isinstance(graph, dict) and isinstance(graph.get("generated"), str):
            generated = parse_generate(graph["generated"])
        elif not isinstance(graph, dict) or not isinstance(graph.get("dir"), str):
            raise BfsError(f"{run_json}: names no graph directory (graph.dir); pass --graph")
        else:
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
    # a run that streamed its edge list (--edge-list stream) is validated streaming it too: the
    # list made again chunk by chunk for each parents file, never whole in host memory
    streamed = (info.get("measurements") or {}).get("edge_list") == "streamed"
    device_chunks = None    # a generated graph's edges on the GPU: checked there, not copied
    whole = None            # the edge list held whole in host memory
    if generated is not None:
        on_gpu = gpu_available()
        log(f"generating {generated.spec} again (the run's graph) on the "
            f"{'GPU' if on_gpu else 'CPU'} to validate against"
            + (", a chunk at a time for each search" if streamed else ""))
        if on_gpu and streamed:   # the same edges bit for bit, each chunk made on the device
            device_chunks = generated.streamed_device_edges().chunks
        elif on_gpu:   # tens of times faster than the CPU generator
            device_chunks = iter_of(generated.device_edges())
        elif streamed:
            chunks = generated.streamed_host_edges().chunks
        else:
            whole = generated.host_edges()
        n = generated.n_vertices
    else:
        if streamed:
            log(f"reading {graph_dir} a chunk at a time for each search")
            chunks = streamed_graph_dir_host(graph_dir).chunks
        else:
            whole = read_edges(graph_dir)
        n = read_meta(graph_dir).n_vertices
    if device_chunks is not None:   # the CPU validator's view (a search saved without levels)
        def copied():
            return ((s.get(), d.get()) for s, d in device_chunks())
        chunks = copied
    elif whole is not None:
        chunks = iter_of(whole)
    report, ok = [], bool(info.get("valid"))
    if not ok:
        log(f"{run_json}: the run itself is marked invalid")
    for rel in rels:
        root = roots[rel]
        table = read_run_table(run_dir, info, rel)
        parent = column_array(table, "parent")
        level = column_array(table, "level") if "level" in table.column_names else None
        if len(parent) != n:
            check_msg, good = f"{len(parent)} parents for {n} vertices", False
            nedge = None
        else:
            if device_chunks is not None and level is not None:
                # bfs.validate.gpu's five rules over the edges where they were made: at scale
                # 26 the host copy (16 GB) and the CPU's edge pass were most of a validate job
                # (10-18 s a job through the workflow on four H200s)
                import cupy
                from ..validate.gpu import validate_device
                check = validate_device(device_chunks, cupy.asarray(parent, cupy.int64),
                                        cupy.asarray(level, cupy.int32), root)
            else:
                check = validate_chunks(chunks, parent, root, level)
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
