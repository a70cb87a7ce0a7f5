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
BLOCK = 256
ITEMS = 4
TILE = BLOCK * ITEMS

# The CUDA C++ is tiles.cuh beside this module; kernels take it with #include "tiles.cuh".
