"""Where a level of the level loop across GPUs goes (2d-do on 1 x C, peer memory): block 0's
device clock at four points of every level (level_loop.cu's LOOP_LOG_WORDS), medians over a
lattice search's levels. Run on a machine of C GPUs:

    mpiexec -n 2 python3 bench/probes/peer_level_clock.py 2000

Per level, on each rank: walk (level start -> block 0's own walk done), arrive (-> its
adds to the peers' meeting words issued), send (-> its own add, the release, done), wait (->
every block of every rank met), and the whole level. Then the host's share of a search: its
wall time against the loop's span by the device clock, and where rank 0's Python spends a
search (cProfile, by own time). Its answers are in BENCHMARKS.md ("the level loop across
GPUs")."""
import cProfile
import io
import pstats
import sys
import time

import numpy as np
from mpi4py import MPI

from bfs.algorithms import Block, RunContext, get_algorithm
from bfs.algorithms import fu_2d_do_peer as m
from bfs.graphs.lattice import lattice_edges
from bfs.harness.sessions_mpi import select_gpu
from bfs.partition import GridLayout

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
select_gpu(rank)
side = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
src, dst, n = lattice_edges(side, side)
src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
layout = GridLayout(n, 1, size)
mine = (dst >= layout.bounds[rank]) & (dst < layout.bounds[rank + 1])
manifest = {"grid": [1, size], "bounds": layout.bounds.tolist(), "n_vertices": n}
s = get_algorithm("2d-do").load("gpu").build(Block(comm, manifest, src[mine], dst[mine]),
                                             RunContext("gpu", {"peer": "on"}))
root = n // 2 + side // 2
for _ in range(3):
    s.search(root)
state = s.host_loop
run = int(state[18])
log = state[m.PEER_STATE:m.PEER_STATE + m.PEER_LOG * run].reshape(run, m.PEER_LOG).astype(np.int64)
seen = np.concatenate(([int(state[30])], log[:-1, 3]))     # each level's start: the last's end
steps = {"walk": log[:, 4] - seen, "arrive": log[:, 5] - log[:, 4],
         "send": log[:, 6] - log[:, 5], "wait": log[:, 3] - log[:, 6], "level": log[:, 3] - seen}
line = " ".join(f"{k}={np.median(v) / 1e3:.2f}us" for k, v in steps.items())
walls = []
for _ in range(5):
    comm.Barrier()
    t = time.perf_counter()
    s.search(root)
    walls.append(time.perf_counter() - t)
span = (int(s.host_loop[m.PEER_STATE + m.PEER_LOG * (run - 1) + 3]) - int(s.host_loop[30])) / 1e6
line += f"; search {np.median(walls) * 1e3:.3f} ms wall, loop {span:.3f} ms by the device clock"
profile = cProfile.Profile()
comm.Barrier()
if rank == 0:
    profile.enable()
s.search(root)
if rank == 0:
    profile.disable()
for r in range(size):
    if r == rank:
        print(f"rank {rank} of 1x{size}, {run} levels, {line}", flush=True)
    comm.Barrier()
if rank == 0:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue(), flush=True)
s.close()
