"""Which searches the harness validates (`bfs run --validate`, `bfs bench --validate`).

Graph500 validates every search (the default). `first` validates each run's first timed
search and `none` none, for measuring at scales where validation dominates the session; the
unvalidated searches are recorded with valid = null (searches.parquet) and their nedge, depth
and reach counted from the search's own output, so a run of them is not an invalid run, but
run.json says how many were validated. `cpu` (bench only) validates every search of a GPU run
on the host, by bfs.validate, from copied parents and a host copy of the edge list.

Validation is never timed.
"""
from __future__ import annotations

from ..errors import BfsError

RUN_MODES = ("every", "first", "none")
MODES = RUN_MODES + ("cpu",)


class ValidationPolicy:
    def __init__(self, mode: str = "every"):
        if mode not in MODES:
            raise BfsError(f"--validate {mode!r}: choose one of {', '.join(MODES)}")
        self.mode = mode

    @property
    def on_host(self) -> bool:
        """GPU searches checked by the CPU validator (bench --validate cpu)."""
        return self.mode == "cpu"

    def wanted(self, index: int) -> bool:
        """Whether the index-th timed search (0-based) is validated."""
        return self.mode in ("every", "cpu") or (self.mode == "first" and index == 0)

    def __str__(self) -> str:
        return self.mode
