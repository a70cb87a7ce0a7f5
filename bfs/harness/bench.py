"""`bfs bench`: generate Kronecker graphs in place, Kernel 1, timed and validated searches.

GPU backend, per scale:
  * the Graph500 graph generated on the GPU straight into device memory (no disk), timed with
    CUDA events -> edges/s;
  * GPU Kernel 1 (bfs.kernel1_gpu.build_csr_gpu), timed with CUDA events;
  * Graph500 roots (bfs.harness.roots.graph500_roots, has_edge from the CSR degrees);
  * per algorithm: one untimed warm-up search, then one search per root timed with CUDA events
    around searcher.search(root) (which includes its host round trips); nedge from the device
    (half the reached vertices' degree sum), checked against the validator's nedge;
  * validation (--validate, SearchCheck): every search (default) or the first per algorithm on
    the GPU by bfs.validate.gpu against the generated edge list (kept on the device; regenerated
    chunk by chunk where it does not fit beside the CSR), untimed; "cpu" = bfs.validate on the
    host for every search (slow at scale 25+);
  * a baseline in the same run: a plain level-synchronous CuPy BFS (searchsorted expansion,
    gather, unique) over the same CSR and roots, timed and validated the same way;
  * the bandwidth floor: floor_time = 4 bytes * directed edges / B, with B the device-to-device
    copy bandwidth measured here (bytes read + written per second, a 1 GiB cupy copy timed by
    events); floor_fraction = floor_time / median search time.
The table comes last on stdout; --out FILE.json gets every number.

CPU backend: seq-csr on the CPU generator's graph, host clock; small scales only.
"""
from __future__ import annotations

import gc
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

from ..algorithms import get_algorithm
from ..algorithms.options import parse_algorithm
from ..errors import BfsError
from ..validate import validate
from ..log import logger

GEN_CHUNK = 1 << 26  # edges per generator launch


log = logger("bench")


def hmean(values) -> float:
    values = [v for v in values if v > 0]
    return len(values) / sum(1.0 / v for v in values) if values else 0.0


def examined_per_nedge(rows) -> float:
    """Median over the searches (dicts with edges_examined and nedge) of directed edges read /
    Graph500 nedge, where the algorithm counts the edges it reads (direction-optimizing
    searches); nan where none does (edges_examined None, or NaN as pandas reads a null). A
    top-down search reads every reached edge from both ends: about 2."""
    ratios = [r["edges_examined"] / r["nedge"] for r in rows
              if r.get("edges_examined") is not None and r["edges_examined"] == r["edges_examined"]
              and r.get("nedge")]
    return statistics.median(ratios) if ratios else math.nan


def summarize(times, nedges) -> dict:
    teps = [ne / t for ne, t in zip(nedges, times) if t > 0]
    return {"n": len(times), "hmean_teps": hmean(teps), "median_time_s": statistics.median(times)
            if times else math.nan, "min_time_s": min(times, default=math.nan),
            "max_time_s": max(times, default=math.nan)}


def copy_bandwidth(nbytes: int = 1 << 30, reps: int = 10) -> float:
    """Device-to-device copy bandwidth, bytes read + written per second, by CUDA events."""
    import cupy as cp
    a = cp.ones(nbytes // 4, dtype=cp.uint32)
    b = cp.empty_like(a)
    b[...] = a  # warm-up
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(reps):
        b.data.copy_from_device_async(a.data, a.nbytes)
    end.record()
    end.synchronize()
    seconds = cp.cuda.get_elapsed_time(start, end) / 1e3
    ok = bool((b[:1024] == 1).all())
    del a, b
    cp.get_default_memory_pool().free_all_blocks()
    if not ok:
        raise BfsError("copy bandwidth probe: the copy did not arrive")
    return 2.0 * nbytes * reps / seconds


class SearchCheck:
    """Which searches are validated, and how (--validate).

    every / first: on the GPU (bfs.validate.gpu) against the generated edge list, every search
    or the first per algorithm; edge_chunks() yields the list as device (src, dst) chunks.
    cpu: every search by the CPU validator (bfs.validate) from copied parents; host_edges needed.
    none: nothing is validated (the table then says valid=None).
    """
    MODES = ("every", "first", "cpu", "none")

    def __init__(self, mode: str, edge_chunks=None, host_edges=None):
        if mode not in self.MODES:
            raise BfsError(f"--validate {mode!r}: choose one of {', '.join(self.MODES)}")
        self.mode, self.edge_chunks, self.host_edges = mode, edge_chunks, host_edges

    def wanted(self, index: int) -> bool:
        return self.mode in ("every", "cpu") or (self.mode == "first" and index == 0)

    @classmethod
    def on_device_edges(cls, mode: str, src_d, dst_d) -> "SearchCheck":
        """For an edge list held whole on the device (copied to the host for mode "cpu")."""
        return cls(mode, lambda: [(src_d, dst_d)],
                   (src_d.get(), dst_d.get()) if mode == "cpu" else None)

    def __call__(self, searcher, root: int):
        if self.mode == "cpu":
            res = searcher.gather(None)
            return validate(*self.host_edges, res.parent, root, res.level)
        from ..validate.gpu import validate_device
        res = searcher.device_result()
        return validate_device(self.edge_chunks, res.parent, res.level, root)


def _timed_searches(searcher, roots, check: SearchCheck, name):
    """Warm-up, then per root: an untimed search, the event-timed search, device nedge,
    validation of the timed search as check says.

    Why the untimed search before each timed one: the GPU slows down while the host validates
    (~0.1 s at scale 26). Measured on an H100 (merrill-do, scale 26, 48 roots): searches back to
    back, median 2.20 ms; each right after a validation, 2.56 ms; after a validation and 20 ms
    idle, 2.79 ms. One search from the same root brings it back (its output is overwritten)."""
    import cupy as cp
    searcher.search(int(roots[0]))  # warm-up (JIT, module load, first touch)
    rows = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for i, root in enumerate(roots):
        root = int(root)
        gc.collect()    # none inside the timed region (it would be charged to the search)
        searcher.search(root)
        gc.disable()
        try:
            start.record()
            searcher.search(root)
            end.record()
            end.synchronize()
        finally:
            gc.enable()
        t = cp.cuda.get_elapsed_time(start, end) / 1e3
        nedge = searcher.nedge()
        row = {"root": root, "time_s": t, "nedge": nedge, "teps": nedge / t if t > 0 else 0.0,
               "validated": False, "valid": None,
               "edges_examined": getattr(searcher, "edges_examined", None)}
        if hasattr(searcher, "bytes_copied"):   # gpu-out-of-core: host -> device streaming
            row.update(bytes_copied=searcher.bytes_copied, copy_s=searcher.copy_s)
        if check.wanted(i):
            tv = time.perf_counter()
            verdict = check(searcher, root)
            row.update(validated=True, valid=bool(verdict.valid and verdict.nedge == nedge),
                       depth=verdict.depth, reached=verdict.reached,
                       validate_s=time.perf_counter() - tv, message=verdict.message)
            if verdict.valid and verdict.nedge != nedge:
                row["message"] = (f"valid tree but device nedge {nedge} != validator "
                                  f"{verdict.nedge}")
            if not row["valid"]:
                log(f"{name} root {root}: INVALID: {row['message']}")
        rows.append(row)
        log(f"{name} {i + 1}/{len(roots)} root={root} time={t * 1e3:.3f} ms "
            f"GTEPS={row['teps'] / 1e9:.3f}" + (f" {'valid' if row['valid'] else 'INVALID'}"
                                                  if row["validated"] else ""))
    return rows


def bench_gpu_scale(scale, edgefactor, seeds, version, algorithms, n_roots, validate_mode,
                    bandwidth, profile_levels=False) -> dict:
    import cupy as cp

    from ..algorithms import kernel1_gpu
    from .. import device
    from ..graphs.kronecker_gpu import edge_list_gpu, generate_edges_gpu
    from .roots import graph500_roots

    n = 2 ** scale
    m = edgefactor * n
    if scale > 32:
        raise BfsError(f"bench --backend gpu takes scales up to 32, got {scale}")
    rec = {"scale": scale, "edgefactor": edgefactor, "n_vertices": n, "n_edges": m}
    start, end = cp.cuda.Event(), cp.cuda.Event()
    stage = "bench-validated" if validate_mode in ("every", "first") else "bench"
    if device.kronecker_bytes(scale, edgefactor, stage) > device.free_memory()[0]:
        # no room for the edge list next to Kernel 1: regenerate chunks per sort bucket
        return _bench_gpu_streamed(rec, scale, edgefactor, seeds, version, algorithms, n_roots,
                                   validate_mode, bandwidth, profile_levels)

    src_d = cp.empty(m, dtype=cp.uint32)
    dst_d = cp.empty(m, dtype=cp.uint32)
    generate_edges_gpu(scale, edgefactor, seeds, version, 0, min(m, 1024),
                       out=(src_d[:min(m, 1024)], dst_d[:min(m, 1024)]))  # compile: untimed
    start.record()
    edge_list_gpu(scale, edgefactor, seeds, version, GEN_CHUNK, out=(src_d, dst_d))
    end.record()
    end.synchronize()
    rec["generation_s"] = cp.cuda.get_elapsed_time(start, end) / 1e3
    rec["generation_edges_per_s"] = m / rec["generation_s"]
    log(f"scale {scale}: generated {m} edges on the GPU in {rec['generation_s']:.3f} s "
        f"({rec['generation_edges_per_s'] / 1e9:.3f} G edges/s)")

    # the edge list stays on the device for the GPU validator (CPU mode copies it out)
    keep_edges = validate_mode in ("every", "first")
    check = SearchCheck.on_device_edges(validate_mode, src_d, dst_d)

    kernel1_gpu.build_csr_gpu(src_d[:1024], dst_d[:1024], n)  # compile + warm the sort: untimed
    cp.get_default_memory_pool().free_all_blocks()
    start.record()
    offsets, columns = kernel1_gpu.build_csr_gpu(src_d, dst_d, n)
    end.record()
    end.synchronize()
    rec["kernel1_s"] = cp.cuda.get_elapsed_time(start, end) / 1e3
    if not keep_edges:
        del src_d, dst_d
        cp.get_default_memory_pool().free_all_blocks()
    rec["directed_edges"] = int(columns.size)
    log(f"scale {scale}: GPU Kernel 1 {rec['kernel1_s']:.3f} s, "
        f"{rec['directed_edges']} directed edges")

    degree = cp.diff(offsets).get()
    roots = graph500_roots(n, degree > 0, count=n_roots, seeds=seeds)
    return _bench_gpu_searches(rec, offsets, columns, roots, algorithms, check, bandwidth,
                               profile_levels)


def _bench_gpu_streamed(rec, scale, edgefactor, seeds, version, algorithms, n_roots,
                        validate_mode, bandwidth, profile_levels) -> dict:
    """Large scales (28 on an 80 GB GPU): Kernel 1 by bfs.kernel1_gpu.build_csr_streamed, which
    regenerates the edges chunk by chunk instead of holding the edge list; kernel1_s includes
    that generation (1 + number of sort buckets passes over the generator)."""
    import cupy as cp

    from ..algorithms import kernel1_gpu
    from .. import device
    from ..graphs.kronecker_gpu import generate_edges_gpu
    from .roots import graph500_roots
    if validate_mode == "cpu":
        raise BfsError(f"scale {scale} does not fit with its edge list on this GPU, so the "
                       "edge list is never whole anywhere: use --validate every|first (on the "
                       "GPU, regenerating the edges chunk by chunk) or none")
    n, m = rec["n_vertices"], rec["n_edges"]

    def generate(lo, hi, out):
        generate_edges_gpu(scale, edgefactor, seeds, version, lo, hi, out=out)

    def regenerated_chunks():
        """The edge list again, GEN_CHUNK edges at a time, into one reused pair of buffers
        (stream order keeps a chunk alive until the kernel reading it has run)."""
        size = min(GEN_CHUNK, m)
        buf = (cp.empty(size, dtype=cp.uint32), cp.empty(size, dtype=cp.uint32))
        for lo in range(0, m, size):
            hi = min(lo + size, m)
            out = (buf[0][:hi - lo], buf[1][:hi - lo])
            generate(lo, hi, out)
            yield out

    log(f"scale {scale}: edge list + Kernel 1 ({device.kronecker_bytes(scale, edgefactor) / 2**30:.1f}"
        f" GiB) do not fit; streamed Kernel 1 needs "
        f"{kernel1_gpu.streamed_kernel1_bytes(m, n, GEN_CHUNK) / 2**30:.1f} GiB")
    kernel1_gpu.build_csr_streamed(generate, 1 << 20, n, 1 << 18)   # compile + warm: untimed
    cp.get_default_memory_pool().free_all_blocks()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    offsets, columns = kernel1_gpu.build_csr_streamed(generate, m, n, GEN_CHUNK)
    end.record()
    end.synchronize()
    cp.get_default_memory_pool().free_all_blocks()
    rec["kernel1_s"] = cp.cuda.get_elapsed_time(start, end) / 1e3
    rec["kernel1"] = "streamed (generation included)"
    rec["directed_edges"] = int(columns.size)
    rec["pool_bytes_after_kernel1"] = int(cp.get_default_memory_pool().total_bytes())
    log(f"scale {scale}: streamed GPU Kernel 1 {rec['kernel1_s']:.3f} s, "
        f"{rec['directed_edges']} directed edges")
    degree = cp.diff(offsets).get()
    roots = graph500_roots(n, degree > 0, count=n_roots, seeds=seeds)
    return _bench_gpu_searches(rec, offsets, columns, roots, algorithms,
                               SearchCheck(validate_mode, regenerated_chunks), bandwidth,
                               profile_levels)


def _bench_gpu_searches(rec, offsets, columns, roots, algorithms, check: SearchCheck,
                        bandwidth, profile_levels) -> dict:
    """Baseline and every algorithm over one device CSR; fills and returns rec."""
    import cupy as cp
    scale = rec.get("scale", rec.get("graph"))
    rec["roots"] = [int(r) for r in roots]
    floor_s = 4.0 * rec["directed_edges"] / bandwidth
    rec["floor_time_s"] = floor_s

    baseline = get_algorithm("cupy-baseline").load("gpu").from_csr(offsets, columns)
    rows = _timed_searches(baseline, roots, check, f"s{scale} cupy-baseline")
    rec["baseline"] = {"searches": rows, **summarize([r["time_s"] for r in rows],
                                                     [r["nedge"] for r in rows])}
    del baseline
    cp.get_default_memory_pool().free_all_blocks()

    rec["algorithms"] = {}
    for name in algorithms:
        base, options = parse_algorithm(name)
        spec = get_algorithm(base)
        if "gpu" not in spec.backends:
            raise BfsError(f"algorithm {base!r} has no gpu backend")
        module = spec.load("gpu")
        if not hasattr(module, "from_csr"):
            raise BfsError(f"algorithm {base!r} cannot start from a device CSR (no from_csr)")
        # the searcher's own construction (search state, and merrill-do's Kernel-1 copies),
        # which a distributed search's build() holds too: timed on the second build, the first
        # having compiled the searcher's kernels
        module.from_csr(offsets, columns, **options)      # untimed, dropped at once
        cp.get_default_memory_pool().free_all_blocks()
        t = time.perf_counter()
        searcher = module.from_csr(offsets, columns, **options)
        cp.cuda.get_current_stream().synchronize()
        build_s = time.perf_counter() - t
        rows = _timed_searches(searcher, roots, check, f"s{scale} {name}")
        summ = summarize([r["time_s"] for r in rows], [r["nedge"] for r in rows])
        summ["searcher_build_s"] = build_s
        summ["floor_fraction"] = floor_s / summ["median_time_s"]
        summ["valid"] = all(r["valid"] is not False for r in rows)
        summ["n_validated"] = sum(r["validated"] for r in rows)
        summ["examined_per_nedge"] = examined_per_nedge(rows)
        if rows and "bytes_copied" in rows[0]:   # streamed searches: their rate and the link's
            from ..algorithms.gpu_out_of_core import host_to_device_bandwidth
            rates = [r["bytes_copied"] / r["copy_s"] for r in rows if r["copy_s"] > 0]
            summ["transfer_rate_Bps"] = statistics.median(rates) if rates else math.nan
            summ["host_to_device_Bps"] = host_to_device_bandwidth()
            log(f"s{scale} {name}: streamed at {summ['transfer_rate_Bps'] / 1e9:.1f} GB/s, "
                f"pinned host -> device copy {summ['host_to_device_Bps'] / 1e9:.1f} GB/s")
        summ["ratio_to_baseline"] = (summ["hmean_teps"] / rec["baseline"]["hmean_teps"]
                                     if rec["baseline"]["hmean_teps"] else math.nan)
        if hasattr(searcher, "launches"):
            summ["launches"] = dict(searcher.launches)
        if getattr(searcher, "kernel1_extra_s", 0.0):   # e.g. merrill@order=degree's renaming
            summ["kernel1_extra_s"] = searcher.kernel1_extra_s
            log(f"s{scale} {name}: Kernel 1 extra (algorithm's own layout) "
                f"{searcher.kernel1_extra_s:.3f} s")
        if profile_levels and hasattr(searcher, "profile_levels"):
            summ["level_profile"] = profile_search(searcher, int(roots[0]), f"s{scale} {name}")
        rec["algorithms"][name] = {"searches": rows, **summ}
        del searcher
        cp.get_default_memory_pool().free_all_blocks()
    return rec


def profile_search(searcher, root: int, name: str) -> dict:
    """One more search from root with CUDA events around every level step (each step also
    waits for its counters, as a timed search does, so the steps add up to the search);
    merrill-do's run-ahead chains come back level by level (split_profile)."""
    import cupy as cp
    levels = []
    searcher.profile_levels = levels
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    searcher.search(root)
    end.record()
    end.synchronize()
    searcher.profile_levels = None
    total_ms = cp.cuda.get_elapsed_time(start, end)
    if hasattr(searcher, "split_profile"):   # merrill-do: a run-ahead chain, level by level
        searcher.split_profile(levels)
    if hasattr(searcher, "step_bytes"):      # edges read and the bytes each step must move
        examined, depth, reached = searcher.level_edges_examined, 0, 1
        for lv in levels:
            lv["edges_read"] = sum(examined[depth:depth + lv["levels"]])
            lv["min_bytes"] = searcher.step_bytes(lv, reached)
            depth += lv["levels"]
            reached += lv["next_vertices"]
    log(f"{name} level profile, root {root}: {total_ms:.3f} ms, {len(levels)} steps")
    for lv in levels[:40]:
        log(f"  depth {lv['depth']:>4} {lv['kind']:<9} x{lv['levels']:<4} "
            f"q={lv['frontier_vertices']:>10} edges={lv['frontier_edges']:>11} "
            f"next={lv['next_vertices']:>10} {lv['ms']:>8.3f} ms"
            + (f" read={lv['edges_read']:>11} {lv['min_bytes'] / 1e6:>9.1f} MB"
               if "min_bytes" in lv else ""))
    by_kind = {}
    for lv in levels:
        k = by_kind.setdefault(lv["kind"], {"steps": 0, "levels": 0, "ms": 0.0})
        k["steps"] += 1
        k["levels"] += lv["levels"]
        k["ms"] += lv["ms"]
    return {"root": root, "total_ms": total_ms, "steps_ms": sum(lv["ms"] for lv in levels),
            "by_kind": by_kind, "levels": levels if len(levels) <= 200 else levels[:100]
            + levels[-100:], "n_steps": len(levels)}


def bench_gpu_grid(rows_cols, diagonal_prob, algorithms, n_roots, validate_mode, bandwidth,
                   profile_levels, seeds=(2, 3)) -> dict:
    """A road-like R x C lattice (bfs.graphs.lattice) built on the host; Kernel 1 and searches on the GPU."""
    from ..graphs import device_edges
    from ..graphs.lattice import lattice_edges
    r, c = rows_cols
    src_h, dst_h, n = lattice_edges(r, c, diagonal_prob)
    rec = {"graph": f"lattice-{r}x{c}", "rows": r, "cols": c, "diagonal_prob": diagonal_prob}
    return _bench_gpu_device_edges(rec, *device_edges.to_device_edges(src_h, dst_h), n, algorithms,
                                   n_roots, validate_mode, bandwidth, profile_levels, seeds)


def bench_gpu_graph_dir(graph_dir, algorithms, n_roots, validate_mode, bandwidth,
                        profile_levels, seeds=(2, 3)) -> dict:
    """Any graph directory (a converted SNAP file, say), read by row groups into the GPU."""
    from ..graphs import device_edges
    from ..graphs.graphdir import read_meta
    meta = read_meta(graph_dir)
    rec = {"graph": meta.name, "graph_dir": str(graph_dir)}
    return _bench_gpu_device_edges(rec, *device_edges.read_edges_to_device(graph_dir), meta.n_vertices,
                                   algorithms, n_roots, validate_mode, bandwidth,
                                   profile_levels, seeds)


def _bench_gpu_device_edges(rec, src_d, dst_d, n, algorithms, n_roots, validate_mode, bandwidth,
                            profile_levels, seeds) -> dict:
    import cupy as cp

    from ..algorithms import kernel1_gpu
    from .roots import graph500_roots
    rec.update(n_vertices=int(n), n_edges=int(src_d.size))
    kernel1_gpu.build_csr_gpu(src_d[:1024], dst_d[:1024], n)   # compile + warm: untimed
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    offsets, columns = kernel1_gpu.build_csr_gpu(src_d, dst_d, n)
    end.record()
    end.synchronize()
    rec["kernel1_s"] = cp.cuda.get_elapsed_time(start, end) / 1e3
    rec["directed_edges"] = int(columns.size)
    degree = cp.diff(offsets).get()
    roots = graph500_roots(n, degree > 0, count=n_roots, seeds=seeds)
    return _bench_gpu_searches(rec, offsets, columns, roots, algorithms,
                               SearchCheck.on_device_edges(validate_mode, src_d, dst_d),
                               bandwidth, profile_levels)


def bench_cpu_scale(scale, edgefactor, seeds, version, algorithms, n_roots, validate_mode):
    from ..algorithms import EdgeList, RunContext, get_algorithm
    from ..algorithms.kernel1 import nonloop_degrees
    from ..graphs.kronecker import generate_edges
    from .roots import graph500_roots
    n, m = 2 ** scale, edgefactor * 2 ** scale
    t = time.perf_counter()
    src, dst = generate_edges(scale, edgefactor, seeds, version)
    rec = {"scale": scale, "edgefactor": edgefactor, "n_vertices": n, "n_edges": m,
           "generation_s": time.perf_counter() - t}
    rec["generation_edges_per_s"] = m / rec["generation_s"]
    roots = graph500_roots(n, nonloop_degrees(src, dst, n) > 0, count=n_roots, seeds=seeds)
    rec["roots"] = [int(r) for r in roots]
    rec["algorithms"] = {}
    for name in algorithms:
        spec = get_algorithm(name)
        if "cpu" not in spec.backends or spec.distributed:
            raise BfsError(f"bench --backend cpu runs single-process CPU algorithms; {name!r} "
                           "is not one")
        t = time.perf_counter()
        searcher = spec.load("cpu").build(EdgeList(src, dst, n), RunContext("cpu"))
        rec["kernel1_s"] = time.perf_counter() - t
        searcher.search(int(roots[0]))
        rows = []
        for i, root in enumerate(roots):
            t = time.perf_counter()
            res = searcher.search(int(root))
            dt = time.perf_counter() - t
            check = validate(src, dst, res.parent, int(root), res.level)
            rows.append({"root": int(root), "time_s": dt, "nedge": check.nedge,
                         "teps": check.nedge / dt if dt > 0 else 0.0, "validated": True,
                         "valid": bool(check.valid)})
        summ = summarize([r["time_s"] for r in rows], [r["nedge"] for r in rows])
        summ["valid"] = all(r["valid"] for r in rows)
        rec["algorithms"][name] = {"searches": rows, **summ}
    return rec


def table(records, backend) -> str:
    head = (f"{'graph':>13} {'algorithm':<22} {'GTEPS(hm)':>10} {'median ms':>10} "
            f"{'base GTEPS':>10} {'ratio':>7} {'floor frac':>10} {'K1 s':>8} "
            f"{'gen Ge/s':>8} {'read/nedge':>10} {'valid':>6}")
    lines = [head, "-" * len(head)]
    for rec in records:
        base = rec.get("baseline", {}).get("hmean_teps", math.nan)
        for name, a in rec["algorithms"].items():
            lines.append(
                f"{str(rec.get('scale', rec.get('graph'))):>13} {name:<22} "
                f"{a['hmean_teps'] / 1e9:>10.3f} "
                f"{a['median_time_s'] * 1e3:>10.3f} {base / 1e9:>10.3f} "
                f"{a.get('ratio_to_baseline', math.nan):>7.2f} "
                f"{a.get('floor_fraction', math.nan):>10.3f} {rec.get('kernel1_s', math.nan):>8.3f} "
                f"{rec.get('generation_edges_per_s', math.nan) / 1e9:>8.3f} "
                f"{a.get('examined_per_nedge', math.nan):>10.2f} "
                f"{str(a['valid']):>6}")
    return "\n".join(lines)


def run_bench(backend: str, scales, algorithms, n_roots: int, out: Path | None,
              validate_mode: str = "every", edgefactor: int = 16, seeds=(2, 3),
              version: str = "3.0", profile_levels: bool = False, grids=(),
              diagonal_prob: float = 0.0, graph_dirs=()) -> int:
    from . import envinfo
    seeds = tuple(int(s) for s in seeds)
    result = {"backend": backend, "scales": list(scales),
              "grids": [f"{r}x{c}" for r, c in grids], "graphs": [str(g) for g in graph_dirs],
              "algorithms": list(algorithms),
              "n_roots": n_roots, "validate": validate_mode, "edgefactor": edgefactor,
              "seeds": list(seeds), "graph500_version": version, "command": sys.argv,
              "host": platform.node(), "records": []}
    if backend == "gpu":
        from ..device import require_gpu
        cp = require_gpu()
        result["timing"] = ("CUDA events around each search; each timed search follows an "
                            "untimed one from the same root")
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        result["device"] = props["name"].decode() if isinstance(props["name"], bytes) \
            else str(props["name"])
        result["cupy_version"] = cp.__version__
        bw = copy_bandwidth()
        result["copy_bandwidth_Bps"] = bw
        log(f"{result['device']}: device-to-device copy {bw / 1e12:.3f} TB/s (read + write)")
    try:
        result["environment"] = envinfo.environment()
    except Exception as e:  # environment facts are a nicety, never a failure
        result["environment"] = {"error": str(e)}
    for scale in scales:
        if backend == "gpu":
            rec = bench_gpu_scale(scale, edgefactor, seeds, version, algorithms, n_roots,
                                  validate_mode, result["copy_bandwidth_Bps"], profile_levels)
        else:
            rec = bench_cpu_scale(scale, edgefactor, seeds, version, algorithms, n_roots,
                                  validate_mode)
        result["records"].append(rec)
        if out is not None:  # partial results survive a later scale's failure
            Path(out).write_text(json.dumps(result, indent=1) + "\n")
    if (grids or graph_dirs) and backend != "gpu":
        raise BfsError("bench --grid / --graphs run on the gpu backend")
    jobs = [(bench_gpu_grid, rows_cols, diagonal_prob) for rows_cols in grids] + \
           [(bench_gpu_graph_dir, Path(g)) for g in graph_dirs]
    for func, *args in jobs:
        rec = func(*args, algorithms, n_roots, validate_mode, result["copy_bandwidth_Bps"],
                   profile_levels, seeds=seeds)
        result["records"].append(rec)
        if out is not None:
            Path(out).write_text(json.dumps(result, indent=1) + "\n")
    valid = all(a["valid"] for rec in result["records"] for a in rec["algorithms"].values())
    result["valid"] = valid
    if out is not None:
        Path(out).write_text(json.dumps(result, indent=1) + "\n")
    if backend == "gpu":
        print(f"device {result['device']}, copy bandwidth {result['copy_bandwidth_Bps'] / 1e12:.3f}"
              f" TB/s (read+write); floor = 4 B * directed edges / bandwidth")
    print(table(result["records"], backend))
    if not valid:
        log("some searches FAILED validation")
        return 1
    return 0
