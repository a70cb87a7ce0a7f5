"""Merrill's scan-partitioned edge tiles: the CUDA that merrill and 2d (gpu) expand with.

Paper: D. Merrill, M. Garland, A. Grimshaw, "Scalable GPU Graph Traversal", PPoPP 2012.

A level's edge frontier is the concatenation of its frontier vertices' adjacency lists; an
inclusive scan of their degrees (`scan`) numbers its edges. It is cut into tiles of TILE = 1024
edges, one CTA each:

* partition_tiles: for every tile in parallel, the frontier index owning its first edge (one
  binary search per tile, all in flight together), so no CTA searches the global scan serially.
* stage_tile: the tile's frontier vertices (at most TILE + 1, every queued vertex having degree
  >= 1) go to shared memory with their scan end (32-bit, relative to the tile) and column base.
* gather_tile: each thread takes ITEMS edges a BLOCK apart, finds each one's vertex by a 32-bit
  binary search in shared memory starting from the previous item's vertex, and issues its ITEMS
  column loads together; column reads are coalesced whatever the degrees (a vertex of degree
  >= TILE is read by whole CTAs, >= 32 by whole warps, small ones by a share of a warp: Merrill's
  three-tier gather without three code paths).

Measured at scale 25 on an H100 (Nsight Compute, the middle level of merrill): the 64-bit form
of the shared-memory search was ~45% of the expand kernel's instructions; 32-bit and monotone,
the search took 14.7 -> 12.9 ms (BENCHMARKS.md).
"""
import math

import numpy as np

BLOCK = 256
ITEMS = 4
TILE = BLOCK * ITEMS
SCAN_CHUNK = BLOCK * 16     # items per block of tiles.cuh's scan (SCAN_ITEMS per thread)

# The CUDA C++ is tiles.cuh beside this module; kernels take it with #include "tiles.cuh".


class Scan:
    """Inclusive scan of up to `capacity` int64 counts with tiles.cuh's scan kernels (from
    `module`, any module that includes tiles.cuh): scan(src, dst, q) -> dst[:q]. A chunk's
    worth of items is one launch; more is three (five past SCAN_CHUNK^2 items): chunk totals,
    their exclusive scan, the chunks from their bases."""

    def __init__(self, cp, module, capacity: int):
        self.k_sums = module.get_function("scan_sums")
        self.k_chunks = module.get_function("scan_chunks")
        self.sums = []              # the chunk totals of each recursion level
        while capacity > SCAN_CHUNK:
            capacity = math.ceil(capacity / SCAN_CHUNK)
            self.sums.append(cp.empty(capacity, dtype=cp.int64))

    def __call__(self, src, dst, q: int, exclusive: bool = False, depth: int = 0) -> None:
        chunks = math.ceil(q / SCAN_CHUNK)
        if chunks <= 1:
            self.k_chunks((1,), (BLOCK,), (src, dst, np.int64(q), np.uint64(0),
                                           np.int32(exclusive)))
            return
        sums = self.sums[depth]
        self.k_sums((chunks,), (BLOCK,), (src, np.int64(q), sums))
        self(sums, sums, chunks, exclusive=True, depth=depth + 1)
        self.k_chunks((chunks,), (BLOCK,), (src, dst, np.int64(q), sums, np.int32(exclusive)))
