"""Imported once by the tests' forkserver (helpers._PRELOAD), before it forks a child per `bfs`
command: numba's compiler tables are filled here (its registries, and numpy.ma, which its typeof
imports at the first call: seconds per process on a slow core) so that every child starts with
them. Nothing runs a compiled function here (no numba thread pool before a fork)."""
import numpy.ma  # noqa: F401
from numba.core.registry import cpu_target

from bfs.integrity import numba_without_blas

numba_without_blas()
cpu_target.target_context.refresh()
