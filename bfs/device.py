"""GPU plumbing every layer shares: CuPy access, the device memory model and its checks, launch
sizes, and loading the CUDA C++ that sits in .cu/.cuh files beside the Python that runs it.

CuPy is imported lazily, so a CPU run never needs it.

Memory model (what `check_fits` is told; all in bytes, m = input edges, n = vertices):

    device edge list                      8 m        (src, dst as uint32)
    Kernel 1                              bfs.build.memory's rows (in memory, streamed, a
                                                      grid's block)
    CSR kept for the searches             8 m + 8 n
    merrill search state                 8 n + 4 n + n/8 + 8 n + 16 n   (parent int64, level
                                                      int32, visited bits, two uint32 queues,
                                                      their two int64 degree arrays, which a
                                                      top-down level scans in place: merrill.py)
                                          + 8 nnz/1024  (merrill's tile starts) and, for
                                                      merrill-do, n/4 (two frontier bitmaps)
    gpu-quadratic search state           8 n + 4 n + 3 n   (parent, level; frontier, next and
                                                      visited flags, a byte each)

The models that add Kernel 1 and the search after it up, and the largest Kronecker scale each
fits (`largest_kronecker_scale`, from `largest_scale` here), are bfs.build.memory's.
"""
from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path

from .errors import BfsError

# Bytes per input edge / per vertex of each stage (see the module docstring; Kernel 1's are
# bfs.build.memory's).
EDGE_LIST_BYTES_PER_EDGE = 8
CSR_BYTES_PER_EDGE = 8
CSR_BYTES_PER_VERTEX = 8
SEARCH_BYTES_PER_VERTEX = 37  # parent 8 + level 4 + visited 1/8 + two queues 8 + two degree
                              # arrays 16 (the scan runs in place over one), rounded up

BLOCK = 256


_BYTE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(text) -> int:
    """A byte count from an integer or a string such as 65536, 64K, 64KiB, 1.5G, 16GB: the
    suffixes K, M, G, T (optionally followed by i, B or iB) are powers of 1024. BfsError for
    anything else, or a count below 1."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), re.I)
        if not m or (not m.group(2) and str(text).strip().lower().endswith("ib")):
            raise BfsError(f"not a byte count: {text!r} (examples: 65536, 64K, 512MiB, 16G)")
        value = int(float(m.group(1)) * _BYTE_UNITS[m.group(2).upper()])
    if value < 1:
        raise BfsError(f"a byte count must be at least 1, got {text!r}")
    return value


def cupy():
    """The cupy module, or BfsError saying how to get it."""
    try:
        import cupy as cp
    except ImportError as e:
        raise BfsError("the GPU backend needs CuPy (pip install 'bfs[gpu]', i.e. cupy-cuda13x; "
                       f"cupy-cuda12x on a CUDA 12 driver): {e}") from None
    return cp


def require_gpu():
    """CuPy with at least one visible CUDA device, or a BfsError that says which is missing."""
    cp = cupy()
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError: no driver, no device
        raise BfsError(f"no usable CUDA GPU: {e}") from None
    if count < 1:
        raise BfsError("no CUDA GPU is visible to this process (CuPy found none)")
    return cp


def largest_scale(bytes_at, free_bytes: int, limit: int = 44) -> int:
    """Largest Kronecker scale s (up to limit) with bytes_at(s) <= free_bytes, bytes_at growing
    with the scale (0 if none fits): every memory model's "largest scale that fits"."""
    s = 0
    while s < limit and bytes_at(s + 1) <= free_bytes:
        s += 1
    return s


def free_memory() -> tuple[int, int]:
    cp = cupy()
    free, total = cp.cuda.runtime.memGetInfo()
    # CuPy's pool holds freed blocks that cudaMemGetInfo counts as used: they are ours to reuse.
    pool = cp.get_default_memory_pool()
    return int(free) + int(pool.free_bytes()), int(total)


# The peak of a run's device memory (run.json's device_memory_peak_bytes). CuPy's pool only
# grows until free_all_blocks, so its total at a stage's end is that stage's high-water mark;
# note_memory() is called there (after Kernel 1's sorts, after a searcher is built, before every
# free_all_blocks) and keeps the largest, with the device's used bytes at that moment, the
# bytes the pool's arrays held (the rest: blocks cached beside them, which free_all_blocks
# cannot hand back where an array holds a cut of one) and the stage that noted it.
_EMPTY = {"pool": 0, "device_used": 0, "in_use": 0, "stage": None}
_peak = dict(_EMPTY)


def _stage(depth: int = 3) -> str:
    """'sort_rows:332 < _csr_from_chunks:302 < csr_from_streamed:461': who noted the pool."""
    import sys
    frame, callers = sys._getframe(2), []
    while frame is not None and len(callers) < depth:
        if frame.f_code.co_name not in ("free_pool", "memory_peak"):
            callers.append(f"{frame.f_code.co_qualname}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(callers)


def note_memory() -> None:
    cp = cupy()
    mempool = cp.get_default_memory_pool()
    pool = int(mempool.total_bytes())
    if pool > _peak["pool"]:     # the first stage that saw the peak keeps it
        free, total = cp.cuda.runtime.memGetInfo()
        _peak.update(pool=pool, device_used=int(total) - int(free),
                     in_use=int(mempool.used_bytes()), stage=_stage())
    if os.environ.get("BFS_MEMORY_LOG", "") not in ("", "0"):
        # where the pool stood at each noted stage (stderr)
        import sys
        print(f"[bfs memory] pool {pool / 2**30:.2f} GiB, in use {mempool.used_bytes() / 2**30:.2f}"
              f" GiB at {_stage()}", file=sys.stderr, flush=True)


def memory_peak(reset: bool = False) -> dict:
    """{"pool": the CuPy pool's high-water mark in bytes, "device_used": the device's used
    bytes when it was reached, "in_use": the bytes the pool's arrays held then, "stage": who
    noted it} over what note_memory() saw; reset: start again (each run)."""
    note_memory()
    out = dict(_peak)
    if reset:
        _peak.update(_EMPTY)
    return out


def free_pool() -> None:
    """Hand the pool's cached blocks back to the device (the next stage may need them all),
    noting the high-water mark first."""
    note_memory()
    cupy().get_default_memory_pool().free_all_blocks()


def check_fits(bytes_needed: int, what: str, largest_scale_fn=None) -> None:
    """BfsError naming both numbers (and the largest scale that fits) if the GPU lacks memory."""
    free, total = free_memory()
    if bytes_needed <= free:
        return
    msg = (f"{what} needs {bytes_needed / 2**30:.2f} GiB of GPU memory "
           f"({bytes_needed} bytes); the GPU has {free / 2**30:.2f} GiB free "
           f"({free} bytes) of {total / 2**30:.2f} GiB")
    if largest_scale_fn is not None:
        msg += f"; the largest Kronecker scale that fits is {largest_scale_fn(free)}"
    raise BfsError(msg)


# CuPy's boolean-mask indexing, and other calls that take a C int count, stop past 2^31 - 1
# elements (OverflowError: a scale-27 block on 1x2 has 2^31 entries): the whole-array steps of
# an edge list that can pass it go a slice of at most SLICE entries at a time.
SLICE = 1 << 30


def mark_sources(mark, src, dst, step: int = SLICE) -> None:
    """mark[u] = True for the source u of every edge (src[i], dst[i]) that is not a self-loop:
    numpy or CuPy arrays alike, a slice of `step` edges at a time (SLICE)."""
    for a in range(0, len(src), step):
        s, d = src[a:a + step], dst[a:a + step]
        mark[s[s != d]] = True


def zero_async(array) -> None:
    """Zero a device array's bytes on the current stream (cudaMemsetAsync: the host does not
    wait)."""
    cp = require_gpu()
    cp.cuda.runtime.memsetAsync(array.data.ptr, 0, array.nbytes,
                                cp.cuda.get_current_stream().ptr)


class GraphCapture:
    """Work enqueued once, replayed as one CUDA graph: a single host call launches what took
    tens. capture(enqueue) runs enqueue() with a side stream capturing (nothing executes) and
    returns (graph, enqueue's result); graph.launch() replays it on the current stream. The
    captured kernels keep the pointers and scalars they were given, so every buffer they touch
    must outlive the graph: a device allocation while capturing (a temporary of an array
    expression, which the pool would hand to another array once freed) is refused."""

    def __init__(self):
        cp = require_gpu()
        self.cp = cp
        # non-blocking: the legacy default stream, where everything else runs, must not wait on
        # (or be waited on by) a stream in capture
        self.stream = cp.cuda.Stream(non_blocking=True)

    @staticmethod
    def _refuse(nbytes: int):
        raise BfsError(f"a CUDA graph being captured asked for {nbytes} bytes of device memory: "
                       "what a replayed chain touches must be allocated before its capture")

    def capture(self, enqueue):
        cp, stream = self.cp, self.stream
        with stream, cp.cuda.using_allocator(self._refuse):
            stream.begin_capture()
            try:
                result = enqueue()
            except BaseException:
                try:
                    stream.end_capture()
                except Exception:     # the capture the error broke off: nothing to keep
                    pass
                raise
            graph = stream.end_capture()
        return graph, result


def grid_for(n_items: int, block: int = BLOCK, per_thread: int = 1) -> int:
    """Blocks for n_items with grid-stride loops: capped, so > 2^31 items still launch."""
    blocks = max(1, math.ceil(n_items / (block * per_thread)))
    return min(blocks, sm_count() * 32)


def resident_grid(kernel, block: int) -> int:
    """Blocks of `block` threads that fit on the GPU at once (registers and the 2048-thread
    limit per SM; Hopper's 64K registers per SM): a grid-stride kernel launched with this many
    runs in one wave, with no blocks left waiting to start after the others."""
    regs = max(1, int(kernel.num_regs))
    per_sm = max(1, min(2048 // block, 65536 // (((regs * 32 + 255) // 256) * 256 * (block // 32))))
    return sm_count() * per_sm


@functools.lru_cache(maxsize=None)
def sm_count() -> int:
    cp = require_gpu()
    dev = cp.cuda.Device()
    return int(dev.attributes["MultiProcessorCount"])


_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.M)


def cuda_source(path: str | Path) -> str:
    """The text of a .cu file with its local `#include "x.cuh"` lines replaced by the headers'
    text (looked up from its folder: "x.cuh" beside it, "../comm/x.cuh" in a sibling
    package). Inlined rather than passed as -I so that CuPy's kernel cache, keyed on the
    source text, sees a header change."""
    path = Path(path)
    return _INCLUDE.sub(lambda m: cuda_source(path.parent / m.group(1)), path.read_text())


@functools.lru_cache(maxsize=None)
def load_module(path: str | Path, name_expressions: tuple[str, ...] = ()):
    """The compiled CuPy RawModule of a .cu file (compiled once per process; CuPy caches the
    binary on disk)."""
    cp = require_gpu()
    return cp.RawModule(code=cuda_source(path), options=("-std=c++17",),
                        name_expressions=list(name_expressions) or None)


def copy_bandwidth(nbytes: int = 1 << 30, reps: int = 10) -> float:
    """Device-to-device copy bandwidth, bytes read + written per second, by CUDA events (the
    bandwidth floor of a search: 4 bytes * directed edges / this)."""
    cp = require_gpu()
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
    free_pool()
    if not ok:
        raise BfsError("copy bandwidth probe: the copy did not arrive")
    return 2.0 * nbytes * reps / seconds
