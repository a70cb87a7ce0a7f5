"""What the single-GPU searchers over a Kernel-1 device CSR share (merrill, merrill-do,
gpu-quadratic, cupy-baseline; gpu-out-of-core's searcher too): DeviceCsrSearcher, the registry's
entry points that build such a searcher from GPU Kernel 1's CSR (bfs.build.csr_gpu) and warm it
up, and two counts over a search's int32 level array on the device that the searchers, the
distributed GPU searchers' profiles and the harness read: level_sizes and degree_sum, whose
kernels are device_csr.cu's (Kernel 1's own are bfs/build/kernel1.cu; bfs.build.csr_gpu's
docstring says why the two files are apart).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import SearchResult, Searcher
from .. import device
from ..build import csr_gpu
from ..device import BLOCK, grid_for, load_module, require_gpu
from ..errors import BfsError


def _module():
    return load_module(Path(__file__).with_name("device_csr.cu"))


def warm_up(from_csr) -> None:
    """Compile (or load from CuPy's cache) what a GPU run uses before Kernel 1 is timed: Kernel 1
    and a searcher from from_csr(offsets, columns), on a 3-vertex path. On a cold kernel cache
    this took ~1 s, which the first run's construction_time would otherwise carry."""
    cp = require_gpu()
    offsets, columns = csr_gpu.build_csr_gpu(cp.asarray([0, 1], cp.uint32),
                                             cp.asarray([1, 2], cp.uint32), 3)
    from_csr(offsets, columns).search(0)


class DeviceCsrSearcher(Searcher):
    """What the single-GPU searchers over a Kernel-1 device CSR share (merrill, merrill-do,
    gpu-quadratic): the CSR's checks, and the last search's outputs, which a subclass keeps
    in self.parent (int64) and self.level (int32) on the device, with self.offsets_out the
    CSR's offsets under the output's vertex ids (for nedge)."""
    device_resident = True

    def _check_csr(self, offsets, columns, name: str) -> int:
        """Sets self.cp; the vertex count of the CSR, or BfsError if `name` cannot take it."""
        cp = self.cp = require_gpu()
        n = int(offsets.size) - 1
        if n < 1:
            raise BfsError("the graph has no vertices")
        if n > 2**32:
            raise BfsError(f"--algorithm {name} takes at most 2^32 vertices, got {n}")
        if offsets.dtype != cp.int64 or columns.dtype != cp.uint32:
            raise BfsError(f"device CSR must be int64 offsets and uint32 columns, got "
                           f"{offsets.dtype} and {columns.dtype}")
        return n

    def gather(self, n_vertices: int | None = None):
        """The last search's parent and level arrays copied to the host."""
        if n_vertices is not None and int(n_vertices) != self.n:
            raise BfsError(f"gather({n_vertices}) on a graph of {self.n} vertices")
        return SearchResult(self.parent.get().astype(np.int64, copy=False),
                            self.level.get().astype(np.int32, copy=False))

    def device_result(self):
        """The last search's parent and level arrays, still on the device."""
        return SearchResult(self.parent, self.level)

    def nedge(self) -> int:
        """Graph500 nedge of the last search: input edges (self-loops excluded, duplicates
        counted) with both ends reached = half the summed degree of the reached vertices."""
        return degree_sum(self.offsets_out, self.level) // 2


def degree_sum(offsets, level, at_level: int = -1) -> int:
    """The summed degree (offsets: a device CSR's, int64) of the vertices at level at_level
    (-1: every reached vertex) of a search's int32 level array: device_csr.cu's reached_degrees,
    no n-entry temporaries."""
    cp = require_gpu()
    if offsets.dtype != cp.int64 or level.dtype != cp.int32:
        hit = level >= 0 if at_level < 0 else level == at_level
        return int(cp.sum(cp.diff(offsets)[hit]))
    total = cp.zeros(1, cp.uint64)
    n = int(level.size)
    _module().get_function("reached_degrees")(
        (min(grid_for(n), 8 * device.sm_count()),), (BLOCK,),
        (offsets, level, np.int64(n), np.int32(at_level), total))
    return int(total.get()[0])


LEVEL_BINS_SHARED = 12 * 1024    # level_sizes' bins in 48 KiB of shared memory


def level_sizes(level) -> np.ndarray:
    """The vertex count of each level 0..depth of a search's int32 level array on the device
    (-1: unreached), as a host int64 array: device_csr.cu's level_sizes, no n-entry temporaries.
    A search deeper than LEVEL_BINS_SHARED levels (a long path) takes cupy's bincount."""
    cp = require_gpu()
    n = int(level.size)
    depth = int(level.max()) if n else -1
    if depth < 0:
        return np.zeros(0, np.int64)
    bins = depth + 1
    if bins > LEVEL_BINS_SHARED or level.dtype != cp.int32:
        return cp.bincount(level[level >= 0], minlength=bins).get().astype(np.int64)
    sizes = cp.zeros(bins, cp.uint64)
    _module().get_function("level_sizes")(
        (min(grid_for(n), 8 * device.sm_count()),), (BLOCK,),
        (level, np.int64(n), np.int32(bins), sizes), shared_mem=4 * bins)
    return sizes.get().astype(np.int64)


def entry_points(searcher):
    """The registry's module functions for a searcher class over a device CSR (merrill,
    merrill-do, gpu-quadratic): build (GPU Kernel 1 from the edge list; the searcher's options are
    ctx.options, which `bfs run` checked against the registry's declarations),
    from_csr (bfs bench's device CSR) and warm_up (Kernel 1 and a search compiled on a
    3-vertex path before Kernel 1 is timed)."""
    def build(graph, ctx):
        if graph.src is None:     # a streamed edge list (a one-GPU session's DeviceEdges)
            offsets, columns = csr_gpu.csr_from_streamed(graph.device_edges, graph.n_vertices)
        else:
            offsets, columns = csr_gpu.csr_from_edges(graph.src, graph.dst, graph.n_vertices)
        # the CSR is this searcher's alone: one that re-sorts rows may do it in place
        owned = {"own_csr": True} if getattr(searcher, "sorts_rows_in_place", False) else {}
        return searcher(offsets, columns, **owned, **ctx.options)

    build.streams_edges = True    # builds from graph.device_edges chunk by chunk

    def from_csr(offsets, columns, **options):
        return searcher(offsets, columns, **options)

    def warm_up_searcher(ctx) -> None:
        warm_up(from_csr)

    return build, from_csr, warm_up_searcher
