"""gpu-quadratic: Harish and Narayanan's GPU BFS, the SEI report's single-GPU baseline.

Paper: P. Harish, P. J. Narayanan, "Accelerating Large Graph Algorithms on the GPU Using CUDA",
HiPC 2007 (LNCS 4873, 197-208), and P. Harish, V. Vineet, P. J. Narayanan, "Large Graph
Algorithms for Massively Multithreaded Architectures", IIIT Hyderabad TR 2009/74; as E. Werner,
S. McMillan, J. Chu run it in "Patterns and Practices for Future Architectures",
CMU/SEI-2014-TN-001 (2014), Sec. 2.3 "Single GPU, CSR" and Fig. 8.

Algorithm. Three arrays of one flag (a byte) per vertex, frontier, next and visited, and a
terminate flag. Each level is two launches over all n vertices, one thread per vertex
(gpu_quadratic.cu):
  phase 1  a vertex in the frontier leaves it and walks its CSR row: every unvisited
           neighbour gets the vertex as its parent and its next flag set (frontier vertices
           that share a neighbour race on its parent, benignly: each is one level up);
  phase 2  a vertex whose next flag is set joins the frontier and visited, takes level t + 1
           and clears terminate.
The host reads terminate after each level (a 4-byte copy it waits on) and stops once no vertex
joined. Phase 1's first thread sets terminate, where Fig. 8's host copies it in each level.
No queue, no scan, no atomics: the price is that every level inspects every vertex, so a search
costs O(n * depth + m), quadratic in n on a path, and reads the n frontier flags every level
however small the frontier (a 2000 x 2000 grid: ~4000 levels of 4M flags). That is the
baseline the report measures its other implementations against; merrill is the linear-work
answer to it.

Kernel 1 is the other single-GPU algorithms' (bfs.build.csr_gpu: device CSR, int64
offsets, uint32 columns, the graph's own ids, so the report's packing of ids is not needed);
build, from_csr and warm_up are device_csr.entry_points', as merrill's. Outputs as merrill's:
search(root) returns after the device is synchronized, with the device arrays (parent int64,
level int32); gather(n) copies them to the host. Device memory besides the CSR: 15 bytes per
vertex (parent 8, level 4, three flags). Vertex ids must be below 2^32.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import SearchResult, device_csr
from .. import device
from ..device import BLOCK, load_module
from ..errors import BfsError

SEARCH_BYTES_PER_VERTEX = 8 + 4 + 3   # parent, level, frontier / next / visited flags


def _module():
    return load_module(Path(__file__).with_name("gpu_quadratic.cu"))


class QuadraticSearcher(device_csr.DeviceCsrSearcher):
    """Searches over a device CSR (offsets int64[n+1], columns uint32); it takes no options.

    profile_levels: when set to a list, each search() replaces its content with one dict per
    level (merrill's keys; the frontier's vertices and edges are counted, for the record only,
    outside the CUDA events that time the level).
    """
    level_profiling = True   # profile_levels: every level step timed (bench)

    def __init__(self, offsets, columns):
        n = self._check_csr(offsets, columns, "gpu-quadratic")
        cp = self.cp
        device.check_fits(SEARCH_BYTES_PER_VERTEX * n + 4,
                          f"gpu-quadratic search state ({n} vertices)")
        self.n = n
        self.offsets = self.offsets_out = offsets
        self.columns = columns
        self.parent = cp.empty(n, dtype=cp.int64)
        self.level = cp.empty(n, dtype=cp.int32)
        self.frontier, self.next, self.visited = (cp.empty(n, dtype=cp.uint8) for _ in range(3))
        self.terminate = cp.zeros(1, dtype=cp.int32)
        import cupyx
        self.host_terminate = cupyx.empty_pinned((1,), dtype=np.int32)
        mod = _module()
        self.k_reset = mod.get_function("reset_search")
        self.k_expand = mod.get_function("expand")
        self.k_advance = mod.get_function("advance")
        self.blocks = device.grid_for(n, BLOCK)   # grid-stride: one thread per vertex
        self.levels_run = 0
        self.launches = {"expand": 0, "advance": 0}
        self.profile_levels: list | None = None
        cp.cuda.get_current_stream().synchronize()

    def _level(self, depth: int) -> bool:
        """Phases 1 and 2 of the level whose frontier is at `depth`; True when it found no
        vertex (terminate stayed set)."""
        n = np.int64(self.n)
        self.k_expand((self.blocks,), (BLOCK,),
                      (n, self.offsets, self.columns, self.frontier, self.next, self.visited,
                       self.parent, self.terminate))
        self.k_advance((self.blocks,), (BLOCK,),
                       (n, np.int32(depth + 1), self.frontier, self.next, self.visited,
                        self.level, self.terminate))
        self.launches["expand"] += 1
        self.launches["advance"] += 1
        self.terminate.get(out=self.host_terminate)   # blocking: waits for the stream
        return bool(self.host_terminate[0])

    def _frontier_size(self) -> tuple[int, int]:
        """(vertices, edges) of the frontier flags, for profile_levels only."""
        cp = self.cp
        on = self.frontier.view(cp.bool_)
        return int(cp.count_nonzero(on)), int(cp.sum(cp.diff(self.offsets)[on]))

    def search(self, root: int) -> SearchResult:
        cp = self.cp
        root = int(root)
        if not 0 <= root < self.n:
            raise BfsError(f"root {root} is not a vertex (0..{self.n - 1})")
        self.k_reset((self.blocks,), (BLOCK,),
                     (np.int64(self.n), np.uint32(root), self.parent, self.level, self.frontier,
                      self.next, self.visited))
        prof = self.profile_levels
        if prof is not None:
            prof.clear()
        depth, done = 0, False
        while not done:
            if prof is None:
                done = self._level(depth)
            else:
                q, edges = self._frontier_size()
                t0, t1 = cp.cuda.Event(), cp.cuda.Event()
                t0.record()
                done = self._level(depth)
                t1.record()
                t1.synchronize()
                prof.append({"depth": depth, "kind": "quadratic", "levels": 1,
                             "frontier_vertices": q, "frontier_edges": edges,
                             "next_vertices": self._frontier_size()[0],
                             "ms": cp.cuda.get_elapsed_time(t0, t1)})
            depth += 1
        self.levels_run = depth   # the last level found nothing
        return SearchResult(self.parent, self.level)


# the registry's build / from_csr / warm_up: GPU Kernel 1, then this searcher
build, from_csr, warm_up = device_csr.entry_points(QuadraticSearcher)
