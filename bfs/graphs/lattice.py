"""Road-like high-diameter graphs: an R x C 4-neighbour lattice, optionally with random diagonals.

(A lattice, not a "grid": in this tool a grid is the R x C grid of MPI ranks of a 2d partition.)

Why: Kronecker graphs have diameter ~10, so they never exercise a GPU BFS's per-level costs
(launches, host round trips, small frontiers). A lattice from a corner has R + C - 2 levels with
frontiers of at most min(R, C) vertices; a road network behaves alike.

Edges: (r, c)-(r, c+1) and (r, c)-(r+1, c) for every cell, plus (r, c)-(r+1, c+1) with
probability diagonal_prob (seeded). Vertex labels are a seeded random permutation of the
row-major index unless ordered=True, so neighbours are not neighbours in memory (as in a real
road graph's numbering, which follows no street).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import BfsError
from .graphdir import EdgeWriter, GraphMeta, atomic_dir, id_dtype, write_meta


def lattice_edges(rows: int, cols: int, diagonal_prob: float = 0.0, seed: int = 1,
               ordered: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """(src, dst, n_vertices) of the lattice; each undirected edge listed once."""
    rows, cols = int(rows), int(cols)
    if rows < 1 or cols < 1:
        raise BfsError(f"lattice sides must be >= 1, got {rows} x {cols}")
    if not 0.0 <= diagonal_prob <= 1.0:
        raise BfsError(f"--diagonal-prob must be in [0, 1], got {diagonal_prob}")
    n = rows * cols
    if n > 2**32:
        raise BfsError(f"a lattice of {n} vertices needs ids past 2^32")
    idx = np.arange(n, dtype=np.int64).reshape(rows, cols)
    parts = [(idx[:, :-1].ravel(), idx[:, 1:].ravel()), (idx[:-1, :].ravel(), idx[1:, :].ravel())]
    rng = np.random.default_rng(seed)
    if diagonal_prob > 0 and rows > 1 and cols > 1:
        a, b = idx[:-1, :-1].ravel(), idx[1:, 1:].ravel()
        keep = rng.random(a.size) < diagonal_prob
        parts.append((a[keep], b[keep]))
    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    if not ordered:
        label = rng.permutation(n)
        src, dst = label[src], label[dst]
    dt = id_dtype(n)
    return src.astype(dt), dst.astype(dt), n


def write_lattice(out, rows: int, cols: int, diagonal_prob: float = 0.0, seed: int = 1,
               ordered: bool = False, name: str | None = None, force: bool = False) -> GraphMeta:
    src, dst, n = lattice_edges(rows, cols, diagonal_prob, seed, ordered)
    meta = GraphMeta(name=name or f"lattice-{rows}x{cols}", source="lattice", n_vertices=n,
                     n_edges=int(src.size), directed_source=False,
                     extra={"rows": int(rows), "cols": int(cols),
                            "diagonal_prob": float(diagonal_prob), "seed": int(seed),
                            "ordered": bool(ordered)})
    with atomic_dir(out, force) as tmp:
        with EdgeWriter(Path(tmp), id_dtype(n)) as writer:
            writer.write(src, dst)
        write_meta(tmp, meta)
    return meta
