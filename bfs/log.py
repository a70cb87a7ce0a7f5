"""Progress on stderr, one convention for every command: `[TAG] message` lines, flushed at once
(a long step shows where it is); where ranks run, only a communicator's rank 0 speaks."""
from __future__ import annotations

import sys
import time


def log(msg: str, tag: str = "bfs", comm=None) -> None:
    if comm is None or comm.Get_rank() == 0:
        print(f"[{tag}] {msg}", file=sys.stderr, flush=True)


def logger(tag: str):
    """log with a fixed tag: `log = logger("bench")`, then `log(msg)` or `log(msg, comm=comm)`."""
    return lambda msg, comm=None: log(msg, tag, comm)


class Progress:
    """Throttled progress lines on stderr for long loops (at most one every `every` seconds);
    quiet for the first `after` seconds, so a loop that ends quickly says nothing."""

    def __init__(self, what: str, unit: str, every: float = 2.0, after: float = 0.0):
        self.what, self.unit, self.every = what, unit, every
        self.start = self.last = time.perf_counter()
        self.quiet_until = self.start + after

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now < self.quiet_until:      # a loop that ends quickly says nothing, not its end
            return
        if now - self.last < self.every and done < total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        pct = 100.0 * done / total if total else 100.0
        log(f"{self.what}: {done}/{total} {self.unit} ({pct:.0f}%, {rate:.3g} {self.unit}/s)")
