"""Blocks routed a chunk at a time on CPU ranks, run by tests/test_mpi.py as
`mpiexec -n R*C python3 THIS R C [GRAPH_DIR]`.

For 2d, 2d-do, semiring (each on the R x C grid) and 1d (on R*C x 1), every rank builds its
searcher twice: from its block routed whole (routing.place_cpu) and from the same block
routed again a chunk of CHUNK edges at a time for each pass (routing.RoutedBlock, ragged last
chunks). The edges: a generated Kronecker graph, or GRAPH_DIR's (a SNAP or lattice graph), each
rank reading its rows by graphdir.edge_range_reader. The survey pass gives the whole block's
entries and sources; the CSR (and CSC) hold the same rows (each row's entries come in chunk
order, so rows are compared sorted); the searches from a few roots equal seq-csr's levels and
validate. Raises on a mismatch (the rank exits non-zero); rank 0 prints `ok`.
"""
import sys

import numpy as np
from mpi4py import MPI

from bfs.algorithms import Block, RunContext, get_algorithm
from bfs.build.csr_cpu import build_csr
from bfs.algorithms.seq_csr import bfs_csr
from bfs.graphs.graphdir import edge_range_reader, read_edges, read_meta
from bfs.build.routing import RoutedBlock, place_cpu
from bfs.harness.generated import GeneratedKronecker
from bfs.partition import GridLayout
from bfs.validate import validate

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
SCALE, EF, CHUNK = 10, 16, 333


def sorted_rows(offsets, values):
    rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    order = np.lexsort((values, rows))
    return offsets, np.asarray(values)[order]


def tables(searcher):
    """The searcher's block CSR / CSC, rows sorted."""
    if hasattr(searcher, "csr") and not hasattr(searcher, "csr_offsets"):   # 1d
        return [sorted_rows(searcher.csr.offsets, searcher.csr.columns)]
    out = [sorted_rows(searcher.csr_offsets, searcher.csr_cols)]
    if hasattr(searcher, "csc_offsets"):
        out.append(sorted_rows(searcher.csc_offsets, searcher.csc_rows))
    return out


def main(R: int, C: int, graph_dir: str | None = None) -> None:
    if graph_dir is None:
        graph = GeneratedKronecker(SCALE, EF)
        n, m, edges = graph.n_vertices, graph.n_edges, graph.host_edges
        src, dst = graph.host_edges()
    else:
        meta = read_meta(graph_dir)
        n, m, edges = meta.n_vertices, meta.n_edges, edge_range_reader(graph_dir)
        src, dst = read_edges(graph_dir)
    csr = build_csr(src, dst, n)
    roots = [int(r) for r in np.flatnonzero(np.diff(csr.offsets))[::211][:3]]
    for algorithm, (rows, cols) in (("2d", (R, C)), ("2d-do", (R, C)),
                                    ("semiring", (R, C)), ("1d", (R * C, 1))):
        layout = GridLayout(n, rows, cols)
        whole_src, whole_dst, _ = place_cpu(comm, layout, m, edges)
        routed = RoutedBlock(comm, layout, m, edges, gpu=False, chunk=CHUNK)
        entries, mark, placed = routed.survey(n)
        want = np.zeros(n, np.bool_)
        want[whole_src[whole_src != whole_dst]] = True
        assert entries == len(whole_src) and (mark == want).all(), algorithm
        assert placed["edge_list"] == "streamed" and len(routed.ranges) > 3
        manifest = {"grid": [rows, cols], "bounds": layout.bounds.tolist(), "n_vertices": n}
        spec = get_algorithm(algorithm).load("cpu")
        whole = spec.build(Block(comm, manifest, whole_src, whole_dst), RunContext("cpu", {}))
        streamed = spec.build(Block(comm, manifest, None, None, routed.chunks),
                              RunContext("cpu", {}))
        for (wo, wv), (so, sv) in zip(tables(whole), tables(streamed), strict=True):
            assert (wo == so).all() and (wv == sv).all(), algorithm
        for root in roots:
            streamed.search(root)
            result = streamed.gather(n)
            if rank == 0:
                _, level = bfs_csr(csr.offsets, csr.columns, root)
                assert (result.level == level).all(), (algorithm, root)
                check = validate(src, dst, result.parent, root, result.level)
                assert check.valid, (algorithm, check.message)
    if rank == 0:
        print("ok", flush=True)


if __name__ == "__main__":
    try:
        main(int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:4])
    except Exception:
        import traceback
        traceback.print_exc()
        sys.stdout.flush()
        comm.Abort(1)
