"""The `bfs` command line: one convention for every stage.

    bfs generate kronecker --scale S [--edgefactor 16] [--seeds 2 3] [--cache DIR] --out GRAPH_DIR
    bfs generate snap INPUT --out GRAPH_DIR
    bfs generate lattice --rows R --cols C [--diagonal-prob P] --out GRAPH_DIR
    bfs partition GRAPH_DIR (--grid RxC | --1d P) [--cache DIR] --out PART_DIR
    bfs run GRAPH_DIR --algorithm NAME[@KEY=VALUE,...] [--backend auto|cpu|gpu] [--roots 64 | --root V] [--save-parents 1] [--validate every|first|none] --out RUN_DIR
    [mpiexec -n P] bfs run --generate kronecker:scale=S[,edgefactor=16,seeds=2:3] --algorithm NAME ... --out RUN_DIR
    bfs run GRAPH_DIR --algorithm gpu-out-of-core [--device-memory-limit BYTES] --out RUN_DIR
    mpiexec -n P bfs run PART_DIR --algorithm 2d|2d-do|1d|semiring [--exchange scan|wave] [--alpha A --beta B] [--comm nccl|mpi] --out RUN_DIR
    bfs run GRAPH_DIR --algorithm hybrid [--tasks T] [--mode workload|fixed] [--lambda L] [--gpu-share S] --out RUN_DIR
    bfs validate RUN_DIR [--graph GRAPH_DIR] [--report FILE]
    bfs verify GRAPH_DIR|PART_DIR|RUN_DIR
    bfs report table strong_scaling|weak_scaling|graphs|kernel1|energy|... RUN_DIR... --out STEM
    bfs report figure strong_scaling|weak_scaling|frontier|comm_vs_compute|teps_vs_scale|\
        gteps_vs_watts|... RUN_DIR... [--runs-file FILE] --out STEM
    bfs compare RUN_A RUN_B [--resamples 10000] [--seed S] [--force] --out DIR
    bfs algorithms [--options]

Inputs are positional, outputs are --out, every output is written atomically (with the umask's
modes). Errors print one line naming what was wrong and exit 1 (BFS_DEBUG=1 shows the traceback
instead); under mpiexec, one line for all the ranks, and every rank exits 1. Progress goes to
stderr, results to stdout; every --help states the defaults.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from . import __version__
from .atomic import atomic_write
from .graphs.graphdir import GRAPH_JSON, read_meta, write_json
from .algorithms.options import add_run_flags, nonnegative_float, nonnegative_int, positive_int
from .errors import BfsError, debugging, input_errors, one_line
from .integrity import arrow_without_pandas, numba_without_blas
from .log import Progress, log


def _record_generation_time(out: Path, seconds: float) -> None:
    """graph.json carries the generation time so `bfs run` can print graph_generation."""
    meta = read_meta(out)
    meta.extra["generation_time"] = seconds
    atomic_write(out / GRAPH_JSON, lambda tmp: write_json(tmp, meta.to_json()))


def cmd_generate_kronecker(args) -> int:
    from .graphs.kronecker import generate_edges, write_kronecker
    entry = None
    if args.cache:
        from .harness import cache
        entry = cache.kronecker_entry(Path(args.cache), args.scale, args.edgefactor, args.seeds,
                                      args.graph500_version)
        meta = cache.take_kronecker(entry, Path(args.out),
                                    args.name or f"kron-s{args.scale}-e{args.edgefactor}",
                                    args.force, args.scale, args.edgefactor, args.seeds,
                                    args.graph500_version)
        if meta is not None:
            print(f"{args.out}: {meta.n_vertices} vertices, {meta.n_edges} edges (from the cache)")
            return 0
    generate = generate_edges
    if args.backend == "gpu":
        from .device import require_gpu
        from .graphs.kronecker_gpu import generate_edges_host as generate
        require_gpu()
    t = time.perf_counter()
    meta = write_kronecker(args.out, args.scale, args.edgefactor, tuple(args.seeds),
                           args.graph500_version, name=args.name, force=args.force,
                           progress=Progress("kronecker", "edges"), generate=generate,
                           chunk_edges=(1 << 24) if args.backend == "gpu" else (1 << 22))
    _record_generation_time(Path(args.out), time.perf_counter() - t)
    if entry is not None:
        cache.store(Path(args.out), entry)
    print(f"{args.out}: {meta.n_vertices} vertices, {meta.n_edges} edges")
    return 0


def cmd_generate_snap(args) -> int:
    from .graphs.snap import convert_snap
    t = time.perf_counter()
    meta = convert_snap(args.input, args.out, name=args.name, force=args.force,
                        progress=Progress("snap", "bytes"))
    _record_generation_time(Path(args.out), time.perf_counter() - t)
    print(f"{args.out}: {meta.n_vertices} vertices, {meta.n_edges} edges")
    return 0


def cmd_generate_lattice(args) -> int:
    from .graphs.lattice import write_lattice
    if args.source == "grid":   # the old name, kept for one release
        log("warning: `bfs generate grid` is now `bfs generate lattice` (a grid is a process "
            "grid here); the old name goes in the next release")
    t = time.perf_counter()
    meta = write_lattice(args.out, args.rows, args.cols, args.diagonal_prob, args.seed,
                         args.ordered, name=args.name, force=args.force)
    _record_generation_time(Path(args.out), time.perf_counter() - t)
    print(f"{args.out}: {meta.n_vertices} vertices, {meta.n_edges} edges")
    return 0


def cmd_run(args) -> int:
    from .algorithms import get_algorithm
    from .algorithms.options import options_from_args, parse_algorithm
    from .comm.mpi import launcher_rank
    from .harness.run_options import RunOptions
    from .harness.runner import run
    try:
        # the algorithm's options: NAME@KEY=VALUE and the flags, checked by its declarations
        name, given = parse_algorithm(args.algorithm) if "@" in args.algorithm \
            else (get_algorithm(args.algorithm).name, {})
        options = options_from_args(name, args, given)
    except BfsError as e:
        # every task of `mpiexec -n P bfs run` reads the same command line: the first says
        # what is wrong with it (as the parser does), the others only exit 1 too
        e.reports = launcher_rank() == 0
        raise
    opts = RunOptions(algorithm=name, backend=args.backend, n_roots=args.roots,
                      root=args.root, save_parents=args.save_parents, force=args.force,
                      validate=args.validate, profile_levels=args.profile_levels,
                      grid=args.grid, edge_list=args.edge_list,
                      energy_window=args.energy_window)
    return run(Path(args.graph) if args.graph else None, Path(args.out), opts, options,
               generate=args.generate)


def cmd_bench(args) -> int:
    from .algorithms.options import parse_algorithm, split_algorithms
    from .harness.bench import run_bench
    algorithms = split_algorithms(args.algorithms or []) \
        or (["merrill"] if args.backend == "gpu" else ["seq-csr"])
    if args.baseline not in (None, "none"):
        parse_algorithm(args.baseline)   # a known variant, its options checked, before any graph
    if not args.scales and not args.lattice_graphs and not args.graphs:
        raise BfsError("bench needs --scales, --lattice-graphs or --graphs")
    return run_bench(args.backend, args.scales or [], algorithms, args.roots,
                     Path(args.out) if args.out else None, args.validate, args.edgefactor,
                     tuple(args.seeds), args.graph500_version,
                     profile_levels=args.profile_levels, lattices=args.lattice_graphs or [],
                     diagonal_prob=args.diagonal_prob, graph_dirs=args.graphs, grid=args.grid,
                     baseline=args.baseline, edge_list=args.edge_list,
                     energy_window=args.energy_window)


def add_energy_window(parser) -> None:
    """--energy-window of `bfs run` and `bfs bench` (bfs.harness.energy)."""
    parser.add_argument("--energy-window", type=nonnegative_float, default=2.0, metavar="S",
                        help="energy per search: after the timed searches, repeat them back "
                             "to back for at least S seconds between two reads of the energy "
                             "counters (NVML on GPUs: the boards only; RAPL on CPUs, where "
                             "readable), recorded as run.json's energy; 0: none")


def add_graph_output(parser, default_name: str) -> None:
    """--name, --out and --force of every `bfs generate` kind (they all write a graph dir)."""
    parser.add_argument("--name", help=f"graph name in graph.json (default: {default_name})")
    parser.add_argument("--out", required=True, help="graph directory to write")
    parser.add_argument("--force", action="store_true", help="replace an existing --out")


def grid(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected RxC such as 2x3, got {text!r}") from None
    if rows < 1 or cols < 1:
        raise argparse.ArgumentTypeError(f"grid sides must be >= 1, got {text!r}")
    return rows, cols


def cmd_partition(args) -> int:
    from .partition import partition_graph, squarest_grid
    if args.onedim:
        rows, cols, kind = args.onedim, 1, "1d"
    else:
        rows, cols = args.grid or squarest_grid(args.ranks)
        kind = "2d"

    def make():
        return partition_graph(args.graph, args.out, rows, cols, kind=kind, force=args.force,
                               progress=Progress("partition", "edges"))

    if args.cache:
        from .harness.cache import partition_cached
        if not Path(args.graph).is_dir():
            raise BfsError(f"{args.graph}: no such graph directory")
        manifest = partition_cached(args.graph, args.out, rows, cols, kind, args.force,
                                    Path(args.cache), make)
    else:
        manifest = make()
    print(f"{args.out}: {kind} {rows}x{cols}, {manifest['n_directed_edges']} directed edges "
          f"in {len(manifest['blocks'])} blocks")
    return 0


def cmd_validate(args) -> int:
    from .harness.runner import revalidate
    ok, report = revalidate(Path(args.run_dir), Path(args.graph) if args.graph else None)
    if args.report:
        atomic_write(args.report, lambda tmp: write_json(tmp, {
            "run_dir": str(args.run_dir), "valid": ok, "searches": report}))
    print(f"{args.run_dir}: {'valid' if ok else 'INVALID'} "
          f"({sum(r['valid'] for r in report)}/{len(report)} saved searches valid)")
    return 0 if ok else 1


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def cmd_verify(args) -> int:
    from .harness.verify import verify_dir
    directory = Path(args.dir)
    big = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) \
        if directory.is_dir() else 0
    progress = Progress("verify", "bytes") if big >= 1 << 30 else None
    verdict = verify_dir(directory, progress)
    for f in verdict.files:
        if f.problem:
            print(f"DAMAGED  {f.path}: {f.problem}")
        elif not args.quiet:
            rows = f"{f.rows} rows, " if f.rows is not None else ""
            print(f"ok       {f.path} ({rows}{_size(f.bytes or 0)}"
                  f"{', sha256' if f.hashed else ''})")
    for note in verdict.notes:
        print(f"note     {note}")
    damaged = verdict.damaged()
    if damaged:
        raise BfsError(damaged[0] if len(damaged) == 1 else
                       f"{directory}: {len(damaged)} problems: {'; '.join(damaged)}")
    total = sum(f.bytes or 0 for f in verdict.files)
    n = len(verdict.files)
    print(f"{directory}: {verdict.kind} directory intact ({n} file{'s' if n != 1 else ''}, "
          f"{_size(total)}{', every sha256 checked' if not verdict.notes else ''})")
    return 0


def cmd_fetch(args) -> int:
    from .graphs.fetch import fetch
    fetch(args.url, Path(args.out), args.sha256, progress=Progress("fetch", "bytes"))
    print(f"{args.out}: sha256 {args.sha256} verified")
    return 0


# bfs.report's TABLES and FIGURES, named here so building the parser never imports pandas
REPORT_TABLES = ("strong_scaling", "weak_scaling", "graphs", "kernel1", "source_lines",
                 "small_frontier", "task_count", "lambda", "energy")
REPORT_FIGURES = ("strong_scaling", "weak_scaling", "frontier", "comm_vs_compute",
                  "teps_vs_scale", "kernel1_vs_scale", "teps_vs_source_lines", "small_frontier",
                  "task_count", "lambda", "gteps_vs_watts")


# bfs.report.compare's RESAMPLES and SEED (a test holds them equal), for the same reason
COMPARE_RESAMPLES, COMPARE_SEED = 10_000, 20140519


def _report_runs(args):
    from .report import load_runs, read_runs_file
    from .report.runs import machines_note
    run_dirs = list(args.run_dirs)
    if args.runs_file:
        run_dirs += read_runs_file(args.runs_file)
    runs = load_runs(run_dirs)
    note = machines_note(runs)
    if note:   # e.g. a device call resumed on another host of the kind
        log(f"report {args.kind}: {note}, the tables' machine column: a speedup, efficiency "
            "or COST between two of them compares the machines too")
    return runs


def cmd_report_table(args) -> int:
    from .report import TABLES, write_table
    runs = _report_runs(args)
    if runs.empty:
        log(f"report table {args.kind}: no runs; writing an empty table")
    for path in write_table(TABLES[args.kind](runs), args.out):
        print(path)
    return 0


def cmd_report_figure(args) -> int:
    from .report import write_figure
    for path in write_figure(args.kind, _report_runs(args), args.out):
        print(path)
    return 0


def cmd_compare(args) -> int:
    from .report.compare import write_comparison
    for path in write_comparison(args.run_a, args.run_b, args.out, force=args.force,
                                 resamples=args.resamples, seed=args.seed):
        print(path)
    return 0


def cmd_algorithms(args) -> int:
    from .algorithms import ALGORITHMS
    for spec in ALGORITHMS.values():
        print(f"{spec.name:<14} {'/'.join(spec.backends):<8} "
              f"{'mpi ' if spec.distributed else ''}{spec.summary}")
        if args.options:
            for option in spec.options:
                how = option.flag_name if option.flag else f"{spec.name}@{option.name}=VALUE"
                sweep = ", sweepable" if option.sweep else ""
                print(f"    {option.name:<20} {how}{sweep}: {option.help}")
    return 0


def shown(value) -> str:
    """A default as typed on the command line: `2 3` for a list, `1000` for 1000.0."""
    if isinstance(value, (list, tuple)):
        return " ".join(map(shown, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


class OldNameWarns(argparse._StoreAction):
    """An option stored as usual that warns when given by its old name (its last option
    string), kept for one release after a rename."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string == self.option_strings[-1]:
            log(f"warning: {option_string} is now {self.option_strings[0]}; the old name goes "
                "in the next release")
        super().__call__(parser, namespace, values, option_string)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, `(default: X)`, unless it has none (None,
    False) or its help already names it in words (a default worked out at run time)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (not action.option_strings or default is None or default is False
                or default == argparse.SUPPRESS or "default" in text):
            return text
        return f"{text} (default: {shown(default)})".replace("%", "%%")   # help is %-formatted


class Parser(argparse.ArgumentParser):
    """bfs's parsers, subcommands included (add_subparsers makes them of the parent's class)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(**kwargs)

    def error(self, message):
        # every task of `mpiexec -n P bfs ...` parses the same command line: the first says
        # what is wrong with it, the others only exit 2 too (one message, not P)
        from .comm.mpi import launcher_rank
        if launcher_rank() > 0:
            self.exit(2)
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="bfs", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"bfs {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="make a graph directory").add_subparsers(
        dest="source", required=True)
    k = gen.add_parser("kronecker", help="Graph500 Kronecker graph, bit-identical to the reference")
    k.add_argument("--scale", type=positive_int, required=True, help="2^SCALE vertices")
    k.add_argument("--edgefactor", type=positive_int, default=16, help="edges per vertex")
    k.add_argument("--seeds", type=nonnegative_int, nargs=2, default=[2, 3], metavar=("U1", "U2"),
                   help="the two uint64 PRNG seeds (default 2 3, the reference MPI driver's; "
                        "hex accepted)")
    k.add_argument("--graph500-version", choices=["3.0", "2.1.4"], default="3.0",
                   help="the reference generator's version the edges match")
    k.add_argument("--backend", choices=["cpu", "gpu"], default="cpu",
                   help="generate on the CPU (Numba) or the GPU (CuPy); the edges are identical")
    k.add_argument("--cache", metavar="DIR",
                   help="shared cache: take the graph from DIR/graphs/ if there (verified), "
                        "else generate it and store a copy there")
    add_graph_output(k, "kron-sS-eE")
    k.set_defaults(func=cmd_generate_kronecker)

    gg = gen.add_parser("lattice", aliases=["grid"],
                        help="R x C lattice (road-like, high diameter), optional diagonals "
                             "(`grid`: its old name, for one release)")
    gg.add_argument("--rows", type=positive_int, required=True, help="lattice rows")
    gg.add_argument("--cols", type=positive_int, required=True, help="lattice columns")
    gg.add_argument("--diagonal-prob", type=float, default=0.0,
                    help="probability of each cell's down-right diagonal edge")
    gg.add_argument("--seed", type=nonnegative_int, default=1, help="diagonals and labels")
    gg.add_argument("--ordered", action="store_true",
                    help="row-major vertex ids (default: a seeded random relabelling)")
    add_graph_output(gg, "lattice-RxC")
    gg.set_defaults(func=cmd_generate_lattice)

    s = gen.add_parser("snap", help="convert a SNAP edge-list text file (.txt or .gz)")
    s.add_argument("input", help="SNAP edge list")
    add_graph_output(s, "the file's stem")
    s.set_defaults(func=cmd_generate_snap)

    pa_ = sub.add_parser("partition", help="cut a graph into per-rank block files")
    pa_.add_argument("graph", help="graph directory")
    shape = pa_.add_mutually_exclusive_group(required=True)
    shape.add_argument("--grid", type=grid, help="2D grid RxC (R*C ranks)")
    shape.add_argument("--ranks", type=positive_int, metavar="P",
                       help="2D over P ranks on the squarest grid R x C (R <= C)")
    shape.add_argument("--1d", dest="onedim", type=positive_int, metavar="P",
                       help="1D row blocks for P ranks")
    pa_.add_argument("--out", required=True, help="partition directory to write")
    pa_.add_argument("--force", action="store_true", help="replace an existing --out")
    pa_.add_argument("--cache", metavar="DIR",
                     help="shared cache: take the partition from DIR/partitions/ if there "
                          "(verified), else make it and store a copy there")
    pa_.set_defaults(func=cmd_partition)

    r = sub.add_parser("run", help="Kernel 1 + validated BFS searches into a run directory")
    r.add_argument("graph", nargs="?", metavar="GRAPH_DIR|PART_DIR",
                   help="graph directory, or partition directory for 2d, 2d-do, 1d and "
                        "semiring (under mpiexec -n R*C); or none with --generate")
    r.add_argument("--generate", metavar="kronecker:scale=S[,edgefactor=16][,seeds=2:3]"
                                        "[,version=3.0]",
                   help="instead of an input directory, generate the Graph500 Kronecker graph "
                        "in place (the GPU's memory on --backend gpu; under mpiexec each rank "
                        "generates its share and routes it to the blocks: the squarest R x C "
                        "grid, P x 1 for 1d); edgefactor 16 and seeds 2:3 unless given")
    r.add_argument("--grid", type=grid, metavar="RxC",
                   help="with --generate under mpiexec -n R*C: the grid of ranks the graph is "
                        "placed on, as `bfs partition --grid` would cut it (default: the "
                        "squarest; 1d runs on R*C x 1)")
    r.add_argument("--algorithm", required=True,
                   help="see `bfs algorithms`; NAME@KEY=VALUE,... sets any option it declares "
                        "(`bfs algorithms --options`)")
    r.add_argument("--backend", choices=["cpu", "gpu", "auto"], default="auto",
                   help="where the searches run: cpu, gpu (CUDA through CuPy), or auto: the CPU "
                        "for the algorithms that have a CPU backend, else the GPU; `bfs "
                        "algorithms` lists each one's backends")
    roots = r.add_mutually_exclusive_group()
    roots.add_argument("--roots", type=positive_int, default=64,
                       help="number of Graph500 3.0 roots")
    roots.add_argument("--root", type=nonnegative_int, help="a single search from this vertex")
    r.add_argument("--save-parents", type=nonnegative_int, default=1, metavar="K",
                   help="save the parent and level arrays of the first K searches under "
                        "parents/, for `bfs validate` to check again: 12 bytes a vertex each, "
                        "0 saves none")
    # the algorithms' flags (--exchange, --tasks, ...), from the registry's declarations; an
    # option the chosen algorithm does not declare is refused (more: NAME@KEY=VALUE)
    add_run_flags(r)
    r.add_argument("--validate", choices=["every", "first", "none"], default="every",
                   help="which timed searches are validated (untimed): every one (Graph500's "
                        "rule), the first, or none; the others are recorded with valid null")
    r.add_argument("--edge-list", choices=["auto", "device", "stream"], default="auto",
                   help=EDGE_LIST_HELP)
    r.add_argument("--profile-levels", action="store_true",
                   help="(gpu: merrill, merrill-do, 2d on one GPU) one extra search from the "
                        "first root with CUDA events around every level step, in run.json's "
                        "measurements.level_profile")
    add_energy_window(r)
    r.add_argument("--out", required=True, help="run directory to write")
    r.add_argument("--force", action="store_true", help="replace an existing --out")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="re-validate a run's saved parents in a fresh process",
                       description="Check the parent and level arrays a run saved (bfs run "
                                   "--save-parents K, default 1: the first search's) against the "
                                   "graph's own edge list by the five Graph500 rules, and their "
                                   "depth, reach and edge count against searches.parquet.")
    v.add_argument("run_dir", help="run directory (bfs run --out)")
    v.add_argument("--graph", help="graph directory (default: the one run.json names; a run "
                                   "over a graph generated in place (bfs run --generate): "
                                   "that graph generated again on the CPU)")
    v.add_argument("--report", help="also write the verdict as JSON here")
    v.set_defaults(func=cmd_validate)

    ver = sub.add_parser("verify", help="check every file of a graph, partition or run "
                                        "directory against its recorded sha256 and counts")
    ver.add_argument("dir", metavar="DIR", help="graph, partition or run directory")
    ver.add_argument("-q", "--quiet", action="store_true",
                     help="print only damaged files and the verdict")
    ver.set_defaults(func=cmd_verify)

    f = sub.add_parser("fetch", help="download a file and verify its sha256")
    f.add_argument("url", help="http(s):// or file:// URL")
    f.add_argument("--sha256", required=True, help="expected hex digest")
    f.add_argument("--out", required=True, help="where the verified file goes")
    f.set_defaults(func=cmd_fetch)

    rep = sub.add_parser("report", help="tables and figures from run directories").add_subparsers(
        dest="what", required=True)
    for what, kinds, func, suffixes in [("table", REPORT_TABLES, cmd_report_table, "csv, .md"),
                                        ("figure", REPORT_FIGURES, cmd_report_figure,
                                         "png, .svg")]:
        t = rep.add_parser(what, help=f"write STEM.{suffixes} (kinds: {', '.join(kinds)})")
        t.add_argument("kind", choices=kinds, help=f"which {what}")
        t.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="run directories")
        t.add_argument("--runs-file", metavar="FILE",
                       help="more run directories, one per line ('#' starts a comment)")
        t.add_argument("--out", required=True, help=f"output stem: writes STEM.{suffixes}")
        t.set_defaults(func=func)

    c = sub.add_parser("compare", help="paired comparison of two runs root by root: speedups "
                                       "B/A, their geometric mean, bootstrap interval, Wilcoxon p",
                       description="Per-root speedups B/A (TEPS ratio) of two runs of the same "
                                   "roots, their geometric mean with a bootstrap 95% interval "
                                   "and the Wilcoxon signed-rank p-value, written to DIR as "
                                   "summary.{csv,md}, per_root.{csv,md}, speedups.{png,svg} and "
                                   "comparison.json. Two bench --out folders compare every "
                                   "graph and variant they share.")
    c.add_argument("run_a", metavar="RUN_A", help="run directory (or bench --out folder): A")
    c.add_argument("run_b", metavar="RUN_B", help="run directory (or bench --out folder): B, "
                                                  "whose speedup over A is measured")
    c.add_argument("--resamples", type=positive_int, default=COMPARE_RESAMPLES,
                   help="bootstrap resamples of the roots")
    c.add_argument("--seed", type=nonnegative_int, default=COMPARE_SEED,
                   help="the bootstrap's seed (the same inputs and seed give the same interval)")
    c.add_argument("--out", required=True, help="directory to write")
    c.add_argument("--force", action="store_true", help="replace an existing --out")
    c.set_defaults(func=cmd_compare)

    b = sub.add_parser("bench", help="algorithms side by side on graphs made in memory: a run "
                                     "directory per graph and algorithm, the baseline, a table")
    b.add_argument("--backend", choices=["cpu", "gpu"], default="gpu",
                   help="where graphs are generated and searched")
    b.add_argument("--scales", type=positive_int, nargs="+", metavar="S",
                   help="Kronecker graphs of these scales, generated in memory")
    b.add_argument("--grid", type=grid, metavar="RxC",
                   help="(under mpiexec -n R*C) the distributed algorithms on an R x C grid "
                        "of ranks, each graph routed to the ranks' blocks (--scales: generated "
                        "in place; --graphs: each rank reads its share; 1d: on R*C x 1); "
                        "default: the squarest grid of the ranks")
    b.add_argument("--lattice-graphs", "--grid-graphs", type=grid, nargs="+", metavar="RxC",
                   action=OldNameWarns,
                   help="also bench R x C lattices built in memory (bfs.graphs.lattice; "
                        "--grid-graphs: the old name, for one release)")
    b.add_argument("--diagonal-prob", type=float, default=0.0, help="for --lattice-graphs")
    b.add_argument("--graphs", nargs="+", metavar="GRAPH_DIR", default=[],
                   help="(gpu) also bench graph directories (e.g. from `bfs generate snap`)")
    b.add_argument("--edge-list", choices=["auto", "device", "stream"], default="auto",
                   help=EDGE_LIST_HELP)
    b.add_argument("--profile-levels", action="store_true",
                   help="(gpu) one extra search per algorithm from the first root with CUDA "
                        "events around every level: frontier sizes and milliseconds in the JSON")
    b.add_argument("--algorithms", nargs="+", metavar="NAME",
                   help="NAME[@KEY=VALUE,...] variants (default: merrill on gpu, seq-csr on "
                        "cpu); the baseline (--baseline) runs first unless named")
    b.add_argument("--baseline", metavar="NAME|none",
                   help="the variant (NAME[@KEY=VALUE,...]) every other is measured against in "
                        "the table, run first unless among --algorithms; none: no baseline "
                        "(default: cupy-baseline on gpu without --grid, none otherwise)")
    b.add_argument("--roots", type=positive_int, default=64, help="Graph500 roots per scale")
    b.add_argument("--validate", choices=["every", "first", "cpu", "none"], default="every",
                   help="every search or the first per algorithm (on the GPU where the "
                        "searches ran); cpu: (one GPU) every search on the CPU from copied "
                        "parents; none")
    add_energy_window(b)
    b.add_argument("--edgefactor", type=positive_int, default=16, help="edges per vertex")
    b.add_argument("--seeds", type=nonnegative_int, nargs=2, default=[2, 3], metavar=("U1", "U2"),
                   help="the two uint64 PRNG seeds")
    b.add_argument("--graph500-version", choices=["3.0", "2.1.4"], default="3.0",
                   help="the reference generator's version the edges match")
    b.add_argument("--out", metavar="DIR|FILE.json",
                   help="directory for the run directories (DIR/<graph>/<algorithm>/) and "
                        "DIR/bench.json; FILE.json: that summary there too, the runs under FILE/ "
                        "(default: none kept)")
    b.set_defaults(func=cmd_bench)

    a = sub.add_parser("algorithms", help="list the registered algorithms")
    a.add_argument("--options", action="store_true",
                   help="also each algorithm's options: flag or NAME@KEY=VALUE, and whether "
                        "an experiment may sweep it")
    a.set_defaults(func=cmd_algorithms)
    return p


EDGE_LIST_HELP = ("where the edge list is kept for Kernel 1 and the validation. One GPU: "
                  "device (on the GPU); stream (never whole there: made again chunk by chunk, "
                  "generated on the GPU or read from the graph directory, for each pass of "
                  "Kernel 1 and of every validation); auto: device where it fits beside Kernel 1 "
                  "and the search, else stream. GPU grids (2d, 2d-do, 1d, semiring): each rank's "
                  "routed block, device (whole) or stream (generated and routed again a chunk "
                  "at a time for each pass of the block's build); auto: whole where it fits. "
                  "CPU: auto (whole, in host memory) or stream (the same passes on the host; "
                  "seq-csr, and a grid's blocks, also for each validation)")


def _terminated(signum, frame):
    # a batch scheduler's kill (SLURM: SIGTERM at the time limit, SIGKILL KillWait later):
    # unwind like an interrupt so atomic directories remove their temporary siblings
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest:
        # `bfs report figure KIND --out STEM RUN_DIR...`: argparse has filled RUN_DIR... (the
        # positionals before --out) already and leaves those after it over; they are run dirs
        if args.func in (cmd_report_table, cmd_report_figure) \
                and not any(a.startswith("-") for a in rest):
            args.run_dirs += rest
        else:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
    signal.signal(signal.SIGTERM, _terminated)
    if args.func not in (cmd_report_table, cmd_report_figure, cmd_compare):
        # the tables and the comparison use pandas and scipy; nothing else does
        arrow_without_pandas()
        numba_without_blas()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("bfs: interrupted", file=sys.stderr)
        return 130
    except (BfsError, *input_errors()) as e:
        # BfsError: a reader's own message; the rest is the net under the readers' checks, so
        # bad input never ends in a traceback (BFS_DEBUG=1 shows it, for bugs)
        if debugging():
            raise
        if getattr(e, "reports", True):   # an error all MPI ranks agreed on prints once
            print(f"bfs: error: {one_line(e)}", file=sys.stderr)
        return 1
