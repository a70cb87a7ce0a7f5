"""The searcher protocol: what the harness (bfs.harness.runner and its sessions) may ask of a searcher.

Every searcher class of bfs/algorithms inherits Searcher. `search` is the one thing each must
provide; the rest are optional capabilities, declared here with the value that means "not
provided", so the harness reads attributes instead of probing for them. A class that provides
one overrides the attribute (or sets it in __init__ / per search) and says so in its docstring.

Who provides what (today):
  * search(root) -> SearchResult           every searcher; returns when the result is complete
  * gather(n)                              distributed searchers (rank 0 gets the whole arrays,
                                           the others None) and GPU searchers (copied to host)
  * device_result()                        single-GPU searchers: parent and level on the device,
                                           for bfs.validate.gpu (device_resident = True)
  * grid_view(), world_x / row_x / col_x   distributed GPU searchers, for bfs.validate.grid_gpu
                                           (grid_validation = True): the validator, and the
                                           count of a search left unvalidated
                                           (count_grid_device)
  * nedge()                                single-GPU searchers: Graph500 nedge of the last
                                           search counted on the device
  * launches                               GPU searchers counting kernel launches per kind
  * edges_examined, level_edges_examined,  direction-optimizing searchers (merrill-do, 2d-do):
    directions                             edges read per search / per level, each level's way
  * kernel1_extra_s                        a searcher's own Kernel-1 work beyond the CSR
                                           (merrill@order=degree's renaming), seconds
  * build_phases                           distributed searchers: seconds of each phase of
                                           their build (block CSR, CSC, ...; PhaseClock), so
                                           run.json says where Kernel 1's time goes
  * bytes_copied, copy_s                   gpu-out-of-core: host -> device streaming per search
  * comm_kind                              distributed searchers: the exchange they use
  * profile, profile_steps                 distributed searchers: per level (level, frontier,
                                           expand s, comm s, bytes) rows of the last search, and
                                           seconds per LevelClock step where kept
  * level_profiling, profile_levels        searchers that time each level step with CUDA events
    split_profile(), step_bytes()          (merrill, merrill-do, 1-GPU 2d): profile_levels set
                                           to a list makes the next search fill it
  * resolved_options                       names of attributes holding options as the search
                                           resolved them (2d-do, merrill-do: alpha, beta, whose
                                           defaults differ by backend; merrill-do's rows, a
                                           string): run.json records them
  * close()                                searchers holding NCCL communicators release them
"""
from __future__ import annotations

import contextlib
import time

from . import SearchResult


class PhaseClock:
    """Seconds of a build's named phases (a phase entered twice adds up), taken on the host
    with sync() (the device's, where the work is queued on a GPU) at each phase's end, so a
    phase holds its own kernels. Kernel 1 is timed whole around it; the syncs cost microseconds
    against its seconds."""

    def __init__(self, sync=None):
        self.sync = sync
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        t = time.perf_counter()
        yield
        if self.sync is not None:
            self.sync()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t


class Searcher:
    """Base class of every searcher (see the module docstring for who provides what)."""

    # per-search statistics (None / empty: the searcher does not count them)
    launches: dict | None = None
    edges_examined: int | None = None
    level_edges_examined: list = []
    directions: list = []
    # Kernel 1 work of the searcher's own beyond the CSR, seconds; the build's phases
    kernel1_extra_s: float = 0.0
    build_phases: dict | None = None
    # gpu-out-of-core: bytes streamed host -> device in the last search, and the seconds
    bytes_copied: int | None = None
    copy_s: float | None = None
    # distributed searchers: the exchange in use ("mpi", "nccl"), and the last search's
    # per-level rows (an (L, 5) array) and per-step seconds (None where not kept)
    comm_kind: str | None = None
    profile = None
    profile_steps = None
    # where the output lies, so which validator can check it in place
    device_resident: bool = False    # device_result() gives device arrays (one GPU)
    grid_validation: bool = False    # grid_view() and world_x / row_x / col_x (GPU grid)
    # per level step CUDA-event profile: set profile_levels to a list before a search
    level_profiling: bool = False
    profile_levels: list | None = None
    resolved_options: tuple[str, ...] = ()

    def search(self, root: int) -> SearchResult:
        raise NotImplementedError

    def gather(self, n_vertices: int | None = None) -> SearchResult | None:
        """The last search's parent and level arrays on the host (rank 0 of a distributed
        search; None on the other ranks). Searchers whose search() returns host arrays need
        not override it: the harness passes search()'s result where gather gives None."""
        return None

    def device_result(self) -> SearchResult:
        """The last search's parent (int64) and level (int32) arrays on the device."""
        raise NotImplementedError(f"{type(self).__name__} keeps no result on one device")

    def grid_view(self):
        """What bfs.validate.grid_gpu checks the last distributed GPU search by."""
        raise NotImplementedError(f"{type(self).__name__} is no distributed GPU searcher")

    def nedge(self) -> int | None:
        """Graph500 nedge of the last search, where the searcher counts it itself."""
        return None

    def split_profile(self, steps: list[dict]) -> None:
        """Cut profile_levels' steps that ran several levels at once into levels (merrill-do's
        run-ahead chains); by default every step is one level already."""

    def step_bytes(self, step: dict, reached_before: int) -> int | None:
        """The fewest bytes a profiled step must move (None: not modelled)."""
        return None

    def close(self) -> None:
        """Release what outlives a dropped reference (NCCL communicators): called on every
        rank in the same order before the harness drops a searcher."""
