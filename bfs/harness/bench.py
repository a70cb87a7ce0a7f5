"""`bfs bench`: a front end over the harness (runner.py) for measuring algorithms side by side.

Per graph (Kronecker --scales generated in place, --lattice-graphs made in memory, --graphs
directories) the graph is made once per session kind, then every algorithm variant
(NAME@KEY=VALUE,..., bfs.algorithms.options) runs the harness's search loop over it: its own
Kernel 1 from the edge list (on a GPU the second of two builds), the timed searches (CUDA
events on a GPU), validation as --validate says, and a run directory

    OUT/<graph>/<variant>/      run.json, searches.parquet, ... (README "run dir")

that `bfs report table graphs OUT/*/*` reads like any other. On the GPU the baseline,
cupy-baseline (a plain level-synchronous CuPy BFS), runs first unless named (--baseline NAME
picks another variant, on any backend; --baseline none runs none); the table gives each
variant's harmonic-mean TEPS against it, and the bandwidth floor fraction: floor_time =
4 bytes * directed edges / B, with B the device-to-device copy bandwidth measured per graph,
over the median search time; and us/level, each search's time over its levels (a road-like
graph's figure: thousands of levels, each a few microseconds), the median. `mpiexec -n R*C
bfs bench --grid RxC --scales S...` runs the distributed algorithms the same way, each rank
generating its share of the graph and routing it to its block (1d on the P x 1 grid of the
same ranks).

The table comes last on stdout; OUT/bench.json holds every run's record, and --out FILE.json
writes that summary to FILE.json too (the run directories then go under FILE/).

Where a scale's edge list does not fit beside Kernel 1 and the search on one GPU, it is streamed
(--edge-list, sessions_local.GpuSession): regenerated chunk by chunk for each pass.
"""
from __future__ import annotations

import contextlib
import json
import math
import tempfile
from pathlib import Path

from ..algorithms.options import parse_algorithm
from ..atomic import atomic_write
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, read_meta
from ..log import logger
from .generated import GeneratedKronecker
from .request import check_request, open_session
from .run_options import RunOptions
from .runner import search_run
from .sessions_local import session_class
from .sessions_mpi import MpiSession

BASELINE = "cupy-baseline"

log = logger("bench")


def lattice_graph(rows_cols, diagonal_prob: float):
    """A road-like R x C lattice (bfs.graphs.lattice) made in host memory: (meta, src, dst,
    run.json's graph record)."""
    from ..graphs.lattice import lattice_edges
    r, c = rows_cols
    src, dst, n = lattice_edges(r, c, diagonal_prob)
    meta = GraphMeta(name=f"lattice-{r}x{c}", source="lattice", n_vertices=n,
                     n_edges=int(src.size), directed_source=False,
                     extra={"rows": r, "cols": c, "diagonal_prob": float(diagonal_prob)})
    # made in memory and named by its parameters: `bfs validate` needs --graph for it
    return meta, src, dst, {"bench_graph": f"lattice {r}x{c}, diagonal_prob {diagonal_prob}",
                            **meta.to_json()}


def bench_session(source, spec, backend: str, grid=None, diagonal_prob: float = 0.0,
                  edge_list: str = "auto", adjacency: str = "both"):
    """The session spec needs on backend over one of bench's graphs. A distributed algorithm
    over a graph directory or a lattice (one rank: the 1x1 grid) has every rank route its
    share of the edge list to the blocks, as bench --grid does with a generated one: of a
    graph directory each rank reads only its share's row groups."""
    if isinstance(source, tuple):
        meta, src, dst, record = lattice_graph(source, diagonal_prob)
        if not spec.distributed:
            return session_class(spec, backend).from_host(meta, src, dst, record)

        def host_edges(lo, hi):
            return src[lo:hi], dst[lo:hi]
    else:   # a graph directory on ranks: each reads its share's row groups (open_session)
        return open_session(source, spec, backend, grid, edge_list, adjacency)
    return MpiSession.from_edges(meta, host_edges, record, spec, backend, grid, edge_list,
                                 adjacency)


def _session_key(spec, grid) -> tuple:
    """Variants with the same key share one session (one copy of the graph in memory)."""
    if spec.distributed:
        rows, cols = grid or (None, None)
        return ("blocks", spec.partition, rows, cols)
    return ("host",) if spec.host_graph else ("whole",)


def bench_graph(name: str, source, variants, backend: str, opts: dict, out_dir: Path,
                grid=None, diagonal_prob: float = 0.0) -> tuple[dict, int]:
    """Every variant over one graph; ({"graph": name, "algorithms": {variant: record}}, exit
    status)."""
    groups: dict[tuple, list] = {}
    for variant in variants:
        base, options = parse_algorithm(variant)
        spec, run_backend, options = check_request(source, RunOptions(base, backend), options)
        groups.setdefault(_session_key(spec, grid), []).append(
            (variant, spec, run_backend, options))
    rec: dict = {"graph": name, "algorithms": {}}
    code = 0
    # under mpiexec a one-process algorithm runs on rank 0 alone: the others would write the
    # same run directories (beside distributed ones it is the COST baseline of the same call:
    # mpiexec -n 2 bfs bench --grid 1x2 --algorithms merrill-do,2d-do)
    from ..comm.mpi import launcher_rank, world
    distributed = any(spec.distributed for members in groups.values()
                      for _, spec, _, _ in members)
    rank = world().Get_rank() if distributed else launcher_rank()   # MPI only where needed
    for members in groups.values():
        _, spec, run_backend, first_options = members[0]
        if rank != 0 and not spec.distributed:
            continue
        # the block's bytes are the first variant's (2d-do@adjacency=csc keeps no CSR)
        session = bench_session(source, spec, run_backend, grid, diagonal_prob,
                                opts.get("edge_list", "auto"),
                                first_options.get("adjacency", "both"))
        rec.update({k: v for k, v in session.meta.to_json().items()
                    if k in ("scale", "edgefactor", "n_vertices", "n_edges")})
        rec["generation_s"] = session.meta.extra.get("generation_time")
        for variant, spec, run_backend, options in members:
            run_dir = out_dir / name / variant
            summary: dict = {}
            status = search_run(session, spec, run_backend, options,
                                RunOptions(spec.name, run_backend, force=True, **opts),
                                run_dir, label=f"{name} {variant}", summary=summary,
                                variant=variant if variant != spec.name else None)
            code = max(code, status)
            if session.is_root:
                grid_of = (summary.get("partition") or {}).get("grid")
                rec["algorithms"][variant] = {
                    "run_dir": str(run_dir), "valid": summary["valid"],
                    "grid": "x".join(map(str, grid_of)) if grid_of else None,
                    "comm": summary["parameters"].get("comm"),
                    "kernel1_s": summary["construction_time"], **summary["measurements"],
                    "energy": summary["energy"]}
        clock = session.clock
        session.close()
        del session
        clock.free_device_memory()   # the graph's device memory, for the next session
    # in the order asked for (the sessions grouped them)
    rec["algorithms"] = {v: rec["algorithms"][v] for v in variants if v in rec["algorithms"]}
    return rec, code


def baseline_of(backend: str, grid, baseline: str | None) -> str | None:
    """The variant every search is measured against: --baseline NAME, none for --baseline
    none; by default cupy-baseline on the GPU without --grid, none otherwise."""
    if baseline is None:
        return BASELINE if backend == "gpu" and grid is None else None
    return None if baseline == "none" else baseline


def bench_variants(algorithms, baseline: str | None) -> list[str]:
    """The variants in the order they run: the baseline first unless listed."""
    variants = list(algorithms)
    if baseline is not None and baseline not in variants:
        variants.insert(0, baseline)
    return variants


def _check_unique(variants: list[str], graphs: list) -> None:
    """Each variant and each graph once: a run's directory is OUT/GRAPH/VARIANT, so a repeat
    would overwrite the first run and the summary would hold two records of one name."""
    seen: dict = {}
    for name, source in graphs:
        if name in seen:
            raise BfsError(f"bench: two graphs are named {name!r} ({seen[name]} and {source}); "
                           f"each graph's runs go to OUT/{name}/, so give each graph once")
        seen[name] = source
    repeated = sorted({v for v in variants if variants.count(v) > 1})
    if repeated:
        raise BfsError(f"bench: {repeated[0]!r} is among the algorithms twice (its runs go to "
                       f"OUT/GRAPH/{repeated[0]}/); name each variant once (a repeat can be told "
                       f"apart by an option at its default, e.g. 2d-do@td_ahead=1,ahead=4)")


def bytes_per_edge(record: dict) -> float:
    """The table's B/edge: the device memory peak per directed edge on a GPU, the host's on
    the CPU (run.json's device_ or host_bytes_per_directed_edge)."""
    for key in ("device_bytes_per_directed_edge", "host_bytes_per_directed_edge"):
        if record.get(key) is not None:
            return record[key]
    return math.nan


def table(records, baseline: str | None = BASELINE) -> str:
    # Green Graph500's MTEPS/W where any run measured its energy
    with_energy = any(a.get("energy") for rec in records for a in rec["algorithms"].values())
    head = (f"{'graph':>16} {'algorithm':<24} {'GTEPS(hm)':>10} {'median ms':>10} "
            f"{'base GTEPS':>10} {'ratio':>7} {'floor frac':>10} {'K1 s':>8} "
            f"{'read/nedge':>10} {'B/edge':>6} {'validated':>9} {'valid':>6} {'us/level':>9}"
            + (f" {'MTEPS/W':>8}" if with_energy else ""))
    lines = [head, "-" * len(head)]
    for rec in records:
        base = rec["algorithms"].get(baseline, {}).get("hmean_teps", math.nan)
        for name, a in rec["algorithms"].items():
            def num(key):
                value = a.get(key)
                return math.nan if value is None else value
            lines.append(
                f"{rec['graph']:>16} {name:<24} {a['hmean_teps'] / 1e9:>10.3f} "
                f"{a['median_time_s'] * 1e3:>10.3f} {base / 1e9:>10.3f} "
                f"{a['hmean_teps'] / base if base else math.nan:>7.2f} "
                f"{num('floor_fraction'):>10.3f} {a['kernel1_s']:>8.3f} "
                f"{num('examined_per_nedge'):>10.2f} "
                f"{bytes_per_edge(a):>6.2f} "
                f"{a['n_validated']:>9} {str(a['valid']):>6} {num('level_us_median'):>9.2f}"
                + (f" {(a.get('energy') or {}).get('teps_per_watt', math.nan) / 1e6:>8.4g}"
                   if with_energy else ""))
    return "\n".join(lines)


def run_bench(backend: str, scales, algorithms, n_roots: int, out: Path | None,
              validate_mode: str = "every", edgefactor: int = 16, seeds=(2, 3),
              version: str = "3.0", profile_levels: bool = False, lattices=(),
              diagonal_prob: float = 0.0, graph_dirs=(), grid=None,
              baseline: str | None = None, edge_list: str = "auto",
              energy_window: float = 2.0) -> int:
    """The graphs, each with every algorithm; the table on stdout (rank 0). grid: R x C ranks
    for the distributed algorithms (under mpiexec). baseline: --baseline (baseline_of)."""
    seeds = tuple(int(s) for s in seeds)
    baseline = baseline_of(backend, grid, baseline)
    variants = bench_variants(algorithms, baseline)
    graphs = [(f"kron-s{s}-e{edgefactor}", GeneratedKronecker(s, edgefactor, seeds, version))
              for s in scales]
    graphs += [(f"lattice-{r}x{c}", (r, c)) for r, c in lattices]
    graphs += [(read_meta(g).name, Path(g)) for g in graph_dirs]
    _check_unique(variants, graphs)
    summary_file = Path(out) if out is not None and str(out).endswith(".json") else None
    with tempfile.TemporaryDirectory(prefix="bfs-bench-") as scratch:
        # no --out: the run directories live only as long as the bench
        out_dir = (summary_file.with_suffix("") if summary_file else Path(out)) if out \
            else Path(scratch)
        opts = {"n_roots": n_roots, "validate": validate_mode, "profile_levels": profile_levels,
                "print_block": False,   # each run's block is in its graph500.txt
                "edge_list": edge_list, "energy_window": energy_window}
        result = {"backend": backend, "algorithms": variants, "baseline": baseline,
                  "n_roots": n_roots,
                  "validate": validate_mode, "grid": list(grid) if grid else None,
                  "records": []}
        code = 0
        for name, source in graphs:
            with _ranks_abort_together(grid):
                rec, status = bench_graph(name, source, variants, backend, opts, out_dir, grid,
                                          diagonal_prob)
            code = max(code, status)
            if not rec["algorithms"]:   # ranks other than 0 record nothing
                continue
            result["records"].append(rec)
            result["valid"] = code == 0
            # partial results survive a later graph's failure
            _write_summary(out_dir / "bench.json" if out else None, result)
            _write_summary(summary_file, result)
        if result["records"]:
            print(table(result["records"], baseline))
    if code:
        log("some searches FAILED validation")
    return code


def _ranks_abort_together(grid):
    """Under mpiexec (--grid) an error no collective agreed on aborts every rank, rather than
    leaving the others waiting in a collective."""
    if grid is None:
        return contextlib.nullcontext()
    from ..comm.mpi import abort_on_error, world
    return abort_on_error(world())


def _write_summary(path: Path | None, result: dict) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=1, default=float) + "\n"
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))
