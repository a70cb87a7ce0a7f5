"""A request to the harness, checked before any graph is read: the options of a run
(RunOptions), the backend it runs on (resolve_backend: --backend auto picks the algorithm's
default, a GPU only where CuPy sees one), its input (check_input: a graph or partition
directory, or --generate), the algorithm's options against each other (check_request), and
the session the run then opens over its input (open_session: sessions_local.py for one
process, sessions_mpi.py for MPI ranks).
"""
from __future__ import annotations

from pathlib import Path

from ..algorithms import ALGORITHMS, get_algorithm
from ..comm.exchange import check_comm
from ..errors import BfsError
from .generated import GeneratedKronecker, parse_generate
from .sessions_local import session_class
from .sessions_mpi import MpiSession
from .run_options import RunOptions


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU" here
        return False


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


def check_input(input_dir: Path | None, generate: str | None) -> Path | GeneratedKronecker:
    """Exactly one of a graph / partition directory and --generate."""
    if (input_dir is None) == (generate is None):
        raise BfsError("bfs run takes a graph or partition directory, or --generate "
                       "kronecker:scale=S[,...], not " + ("both" if generate else "neither"))
    return parse_generate(generate) if generate is not None else Path(input_dir)


def is_partition(source) -> bool:
    return isinstance(source, Path) and (source / "manifest.json").is_file()


def check_request(source, opts: RunOptions, extra: dict | None):
    """The algorithm, the backend and the options asked for, checked against each other."""
    spec = get_algorithm(opts.algorithm)
    backend = resolve_backend(opts.backend, spec)
    options = dict(extra or {})
    if opts.validate not in ("every", "first", "none"):
        raise BfsError(f"--validate {opts.validate!r}: choose one of every, first, none")
    if opts.grid is not None and not (spec.distributed and not is_partition(source)):
        raise BfsError("--grid RxC places a generated graph (--generate) or a graph directory "
                       "on the ranks of a distributed algorithm; a partition directory has its "
                       "own grid")
    if spec.distributed:
        if options.get("comm"):
            check_comm(options["comm"], backend)
    elif "comm" in options:
        raise BfsError(f"--comm is for the distributed algorithms; {spec.name} runs on one "
                       "process")
    elif is_partition(source):
        raise BfsError(f"{source} is a partition directory; --algorithm {spec.name} runs on "
                       f"a graph directory (distributed algorithms: "
                       f"{', '.join(n for n, s in ALGORITHMS.items() if s.distributed)})")
    return spec, backend, options


def open_session(source, spec, backend: str, grid=None, edge_list: str = "auto",
                 adjacency: str = "both"):
    """The session a run of spec on backend needs over source (a graph or partition directory,
    or a GeneratedKronecker; grid: the ranks' R x C for a generated graph; edge_list: where one
    GPU keeps the edge list, GpuSession's; on a GPU grid, the routed block, MpiSession's;
    adjacency: 2d-do's option, which sets the bytes a GPU grid's block needs)."""
    if spec.distributed and isinstance(source, Path) and not is_partition(source):
        # a graph directory placed on the ranks: each reads its share's row groups and routes
        from ..graphs.graphdir import edge_range_reader, read_meta
        meta = read_meta(source)
        return MpiSession.from_edges(meta, edge_range_reader(source),
                                     {"dir": str(source.resolve()), **meta.to_json()}, spec,
                                     backend, grid, edge_list, adjacency)
    if spec.distributed:
        return MpiSession.open(source, spec, backend, grid, edge_list, adjacency)
    return session_class(spec, backend).open(source, backend, edge_list)
