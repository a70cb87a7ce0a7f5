"""Progress on stderr, one convention for every command: `[TAG] message` lines, flushed at once
(a long step shows where it is); where ranks run, only a communicator's rank 0 speaks."""
from __future__ import annotations

import sys


def log(msg: str, tag: str = "bfs", comm=None) -> None:
    if comm is None or comm.Get_rank() == 0:
        print(f"[{tag}] {msg}", file=sys.stderr, flush=True)


def logger(tag: str):
    """log with a fixed tag: `log = logger("bench")`, then `log(msg)` or `log(msg, comm=comm)`."""
    return lambda msg, comm=None: log(msg, tag, comm)
