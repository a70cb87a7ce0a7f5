"""What a `bfs run` (or one variant of `bfs bench`) asks for: the options the search loop, the
sessions and the request checks read (bfs.harness.request checks them)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RunOptions:
    algorithm: str
    backend: str = "auto"
    n_roots: int = 64
    root: int | None = None
    save_parents: int = 1   # one tree for `bfs validate`, as the CLI's default
    force: bool = False
    validate: str = "every"
    profile_levels: bool = False   # GPU searchers that time their level steps (timing.py)
    print_block: bool = True       # the Graph500 output block on stdout (bench: its table)
    grid: tuple[int, int] | None = None   # a generated graph's R x C grid of ranks (default:
                                          # the squarest); a partition directory has its own
    edge_list: str = "auto"   # one GPU: device, stream, or auto (sessions_local.GpuSession)
    energy_window: float = 2.0   # seconds of repeated searches between two energy counter
                                 # reads (energy.py); 0: no energy measured
