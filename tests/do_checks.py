"""2d-do on real MPI ranks, run by tests/test_mpi.py as
`mpiexec -n R*C python3 THIS PART_DIR ROOTS ALPHA,BETA,EXCHANGE[,SUBSTEPS[,ADJACENCY]]
[...]` (ADJACENCY: both or csc, the option of that name).

For each setting, every rank builds bfs.algorithms.fu_2d_do from its block of the partition and
searches from the first ROOTS vertices that have an edge; rank 0 checks each search's levels
against seq-csr and validates its tree (raising on a mismatch, so the rank exits non-zero), and
prints one JSON line per setting: per root the directions, the edges examined per level and in
all, and the directed edges of the reached vertices (what an all-top-down search examines).
The settings share one launch: starting the ranks is most of its time.
"""
import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from bfs.algorithms import RunContext, get_algorithm
from bfs.build.csr_cpu import build_csr
from bfs.algorithms.seq_csr import bfs_csr
from bfs.graphs.graphdir import read_edges
from bfs.algorithms import Block
from bfs.partition import load_manifest, read_block
from bfs.validate import validate

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def main(part_dir: Path, n_roots: int, settings: list[str]) -> None:
    manifest = load_manifest(part_dir)
    src, dst = read_block(part_dir, manifest, rank)
    for setting in settings:
        alpha, beta, exchange, *rest = setting.split(",")
        options = {"alpha": float(alpha), "beta": float(beta), "exchange": exchange}
        if rest:
            options["substeps"] = int(rest[0])
        if rest[1:]:
            options["adjacency"] = rest[1]
        check_setting(manifest, src, dst, options, n_roots)


def check_setting(manifest, src, dst, options: dict, n_roots: int) -> None:
    n = int(manifest["n_vertices"])
    searcher = get_algorithm("2d-do").load("cpu").build(
        Block(comm, manifest, src, dst), RunContext("cpu", options))
    graph_src = graph_dst = csr = roots = None
    if rank == 0:
        graph_src, graph_dst = read_edges(Path(manifest["graph"]["dir"]))
        csr = build_csr(graph_src, graph_dst, n)
        degree = np.diff(csr.offsets)
        roots = np.flatnonzero(degree > 0)[:n_roots]
    roots = comm.bcast(roots)
    report = []
    for root in roots:
        searcher.search(int(root))
        result = searcher.gather(n)
        seen = comm.allgather((searcher.directions, searcher.level_edges_examined,
                               searcher.edges_examined))
        assert all(s == seen[0] for s in seen), f"ranks disagree: {seen}"
        if rank != 0:
            continue
        _, level = bfs_csr(csr.offsets, csr.columns, int(root))
        np.testing.assert_array_equal(result.level, level)
        check = validate(graph_src, graph_dst, result.parent, int(root), result.level)
        assert check.valid, check.message
        assert len(searcher.directions) == searcher.levels_run
        report.append({"root": int(root), "directions": searcher.directions,
                       "level_edges_examined": searcher.level_edges_examined,
                       "edges_examined": searcher.edges_examined,
                       "reached_edges": int(np.diff(csr.offsets)[level >= 0].sum())})
    if rank == 0:
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
