"""How the harness times a search: CUDA events on a GPU, the host clock on the CPU; with
several ranks a barrier first, every rank's time, and their maximum.

Before each timed GPU search an untimed search from the same root runs (its output is
overwritten). Why: the GPU slows down while the host validates (~0.1 s at scale 26). Measured
on an H100 (merrill-do, scale 26, 48 roots): searches back to back, median 2.20 ms; each right
after a validation, 2.56 ms; after a validation and 20 ms idle, 2.79 ms. One search from the
same root brings it back. The garbage collector runs before and never inside a timed search
(a collection would be charged to the search); before, only its young generations: a full
collection walks every object the imports made (numba, pyarrow), 1.5 s a search on a slow core.
"""
from __future__ import annotations

import gc
import time

from ..log import logger

log = logger("bfs")


class Clock:
    """Search timing for one session: gpu (CUDA events), barrier() and maximum(x) over the
    session's ranks (no-ops on one process)."""

    def __init__(self, gpu: bool, barrier, maximum):
        self.gpu, self.barrier, self.maximum = gpu, barrier, maximum
        if gpu:
            import cupy as cp
            self.cp = cp
            self.start, self.end = cp.cuda.Event(), cp.cuda.Event()

    def search(self, searcher, root: int):
        """(search()'s result, seconds: the maximum over the ranks)."""
        gc.collect(1)
        if self.gpu:
            searcher.search(root)   # untimed: see the module docstring
        self.barrier()
        gc.disable()
        try:
            if self.gpu:
                self.start.record()
                result = searcher.search(root)   # returns with the device synchronized
                self.end.record()
                self.end.synchronize()
                seconds = self.cp.cuda.get_elapsed_time(self.start, self.end) / 1e3
            else:
                t = time.perf_counter()
                result = searcher.search(root)
                seconds = time.perf_counter() - t
        finally:
            gc.enable()
        return result, self.maximum(seconds)

    def build(self, make):
        """(make()'s searcher, this rank's seconds) for Kernel 1: the host clock around make()
        from a barrier, the device synchronized before it stops. The caller takes the maximum
        over the ranks outside any collective_errors block (a rank that failed is agreeing
        on the error meanwhile)."""
        self.barrier()
        t = time.perf_counter()
        searcher = make()
        if self.gpu:
            self.cp.cuda.get_current_stream().synchronize()
        return searcher, time.perf_counter() - t

    def free_device_memory(self) -> None:
        """Return the memory pool's free blocks to the device (between builds, between
        algorithms: the next one may need all of it)."""
        if self.gpu:
            from ..device import free_pool
            free_pool()


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
    searcher.split_profile(levels)
    examined, depth, reached = searcher.level_edges_examined, 0, 1
    for lv in levels:   # edges read and the bytes each step must move, where modelled
        read = sum(examined[depth:depth + lv["levels"]])
        min_bytes = searcher.step_bytes({**lv, "edges_read": read}, reached)
        if min_bytes is not None:
            lv.update(edges_read=read, min_bytes=min_bytes)
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
