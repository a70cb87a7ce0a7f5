"""Where a distributed GPU searcher's build (its Kernel 1) spends its time on one rank:
cProfile of `build()` on a Kronecker graph generated and routed on the GPU, as `bfs bench
--grid 1x1` builds it, then the wall time of REPEATS more builds (the spread between builds).
Run on a GPU machine:

    mpiexec -n 1 python3 bench/probes/profile_build.py SCALE ALGORITHM [REPEATS]
"""
import cProfile
import pstats
import sys
import time

from mpi4py import MPI

from bfs.algorithms import RunContext, get_algorithm
from bfs.comm.exchange import make_exchange
from bfs.build.routing import place_gpu
from bfs.harness.generated import GeneratedKronecker
from bfs.algorithms import Block
from bfs.partition import GridLayout

scale, name = int(sys.argv[1]), sys.argv[2]
comm = MPI.COMM_WORLD
import cupy as cp  # noqa: E402
graph = GeneratedKronecker(scale)
src, dst, _ = place_gpu(comm, make_exchange("mpi", comm), GridLayout(graph.n_vertices, 1, 1),
                        graph.n_edges, graph.device_edges)
module = get_algorithm(name).load("gpu")
ctx = RunContext("gpu", {})
module.warm_up(ctx)
block = Block(comm, {"grid": [1, 1], "bounds": GridLayout(2 ** scale, 1, 1).bounds.tolist(),
                     "n_vertices": 2 ** scale}, src, dst)
prof = cProfile.Profile()
prof.enable()
searcher = module.build(block, ctx)
cp.cuda.get_current_stream().synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 0):
    del searcher
    cp.get_default_memory_pool().free_all_blocks()
    t = time.perf_counter()
    searcher = module.build(block, ctx)
    cp.cuda.get_current_stream().synchronize()
    print(f"build {time.perf_counter() - t:.3f} s", flush=True)
