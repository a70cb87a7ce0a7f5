"""Named profiler ranges (NVTX) around the GPU work, for Nsight Systems and Nsight Compute.

With BFS_NVTX=1 (any value but empty or 0) in the environment, `scope(...)` pushes an NVTX
range through CuPy (cupy.cuda.nvtx.RangePush / RangePop) for the block it wraps; names are

    bfs:<algorithm>:level <k> <kind>    a level step of a single-GPU search (merrill,
                                        merrill-do): kind top-down, bottom-up, or small (the
                                        single-CTA kernel running levels k, k+1, ... in one
                                        launch)
    bfs:kernel1:<phase>                 a phase of GPU Kernel 1 (copy edges, degrees, offsets,
                                        keys, sort, columns)

Ranges are never nested, so that `ncu --nvtx --nvtx-include 'NAME/'` selects one step's
kernels. Off by default and free when off: the environment is read once per process, the first
time a range is asked for; off, `scope` formats no name, imports nothing (no CuPy) and returns
a shared do-nothing context manager. No bfs module is imported here: the build stage (stage
3: GPU Kernel 1), the algorithms and anything after them may use it.
"""
from __future__ import annotations

import contextlib
import importlib
import os

ENV = "BFS_NVTX"
NVTX_MODULE = "cupy.cuda.nvtx"

_OFF = contextlib.nullcontext()
_state: object = None     # None: not read yet; False: off; else the NVTX module


def _read_state():
    """The NVTX module when BFS_NVTX asks for ranges, else False (read once per process)."""
    global _state
    if os.environ.get(ENV, "") in ("", "0"):
        _state = False
        return _state
    try:
        _state = importlib.import_module(NVTX_MODULE)
    except ImportError as e:
        from .errors import BfsError
        raise BfsError(f"{ENV}=1 needs CuPy's NVTX ranges ({NVTX_MODULE}): {e}; install the "
                       f"gpu extra or unset {ENV}") from None
    return _state


def enabled() -> bool:
    """Whether ranges are being pushed (BFS_NVTX set in this process's environment)."""
    state = _state if _state is not None else _read_state()
    return state is not False


class _Range:
    __slots__ = ("nvtx", "name")

    def __init__(self, nvtx, name: str):
        self.nvtx, self.name = nvtx, name

    def __enter__(self):
        self.nvtx.RangePush(self.name)
        return self

    def __exit__(self, *exc):
        self.nvtx.RangePop()
        return False


def scope(template: str, *args):
    """A context manager around one named range: template.format(*args) (formatted only when
    ranges are on), e.g. scope("bfs:{}:level {} {}", "merrill", 3, "top-down")."""
    state = _state if _state is not None else _read_state()
    if state is False:
        return _OFF
    return _Range(state, template.format(*args) if args else template)


def kernel1(phase: str):
    """The range of a Kernel-1 phase: bfs:kernel1:<phase>."""
    return scope("bfs:kernel1:{}", phase)


def level(algorithm: str, depth: int, kind: str):
    """The range of a search's level step: bfs:<algorithm>:level <depth> <kind>."""
    return scope("bfs:{}:level {} {}", algorithm, depth, kind)


def reset() -> None:
    """Forget what the environment said (tests; a process reads it once otherwise)."""
    global _state
    _state = None
