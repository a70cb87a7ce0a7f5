"""cupy-baseline: a plain level-synchronous BFS in CuPy array operations, the baseline every GPU
search of `bfs bench` is measured against in the same run (no custom kernel, no tuning).

Per level the frontier's edges are enumerated with searchsorted over the degree scan, the
neighbours gathered, the unvisited ones scattered into parent (any duplicate's write is a valid
parent) and uniqued into the next frontier. Kernel 1 is the other single-GPU searches'
(bfs.build.csr_gpu); outputs as merrill's.
"""
from __future__ import annotations

import numpy as np

from . import SearchResult, device_csr


class CupyBaseline(device_csr.DeviceCsrSearcher):
    """Plain CuPy level-synchronous BFS: the frontier's edges are enumerated with searchsorted
    over the degree scan (cupy.repeat takes no device repeats), neighbours gathered, the unvisited
    ones scattered into parent (any duplicate's write is a valid parent) and uniqued into the next
    frontier. Levels with many edges are cut into pieces of at most CHUNK edges."""
    CHUNK = 1 << 26

    def __init__(self, offsets, columns):
        self.n = self._check_csr(offsets, columns, "cupy-baseline")
        self.offsets, self.columns = offsets, columns
        self.offsets_out = offsets          # nedge's degrees
        self.deg = offsets[1:] - offsets[:-1]
        self.parent = self.level = None
        self.levels_run = 0

    def search(self, root: int) -> SearchResult:
        cp = self.cp
        parent = cp.full(self.n, -1, dtype=cp.int64)
        level = cp.full(self.n, -1, dtype=cp.int32)
        parent[root] = root
        level[root] = 0
        frontier = cp.array([root], dtype=cp.int64)
        depth = 0
        while frontier.size:
            degs = self.deg[frontier]
            ends = cp.cumsum(degs)
            total = int(ends[-1])
            if total == 0:
                break
            if total <= self.CHUNK:
                pieces = [(0, int(frontier.size))]
            else:
                ends_h = ends.get()
                pieces, a = [], 0
                while a < len(ends_h):
                    before = ends_h[a - 1] if a else 0
                    b = max(a + 1, int(np.searchsorted(ends_h, before + self.CHUNK, "right")))
                    pieces.append((a, b))
                    a = b
            found = []
            for a, b in pieces:
                f, dg = frontier[a:b], degs[a:b]
                incl = cp.cumsum(dg)
                tot = int(incl[-1])
                if tot == 0:
                    continue
                j = cp.arange(tot, dtype=cp.int64)
                owner = cp.searchsorted(incl, j, side="right")
                src = f[owner]
                nb = self.columns[self.offsets[src] + (j - (incl[owner] - dg[owner]))]
                nb = nb.astype(cp.int64)
                fresh = parent[nb] == -1
                nb, src = nb[fresh], src[fresh]
                parent[nb] = src
                level[nb] = depth + 1
                found.append(nb)
            depth += 1
            frontier = cp.unique(cp.concatenate(found)) if found else cp.empty(0, cp.int64)
        cp.cuda.get_current_stream().synchronize()
        self.parent, self.level = parent, level
        self.levels_run = depth
        return SearchResult(parent, level)


# the registry's build / from_csr / warm_up: GPU Kernel 1, then this searcher
build, from_csr, warm_up = device_csr.entry_points(CupyBaseline)
