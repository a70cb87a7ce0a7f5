import os

import numpy as np
import pytest

# The MPI tests run more ranks than CI has cores (4 and 9 ranks on 2). MPICH's ranks busy-wait
# in every blocking call, so a rank with work shares its core with spinning ones: an Allreduce
# loop with one busy rank at a time took 41.5 s on 4 ranks over 2 cores, 8.4 s with the waiting
# ranks yielding at every poll and sleeping (nanosleep) while they yield. Every mpiexec the
# tests start (and the workflow's, under Snakemake) inherits these; Open MPI yields by itself
# when oversubscribed and ignores them.
os.environ.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "1")
os.environ.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")


def edges(pairs):
    """(src, dst) uint32 arrays from a list of (u, v) pairs."""
    a = np.array(pairs, dtype=np.uint32).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy()


@pytest.fixture
def square_graph():
    # 0-1, 0-3, 1-2, 3-2 (a square), 0-4 (a pendant at level 1), 5-6 (another component),
    # a self-loop on 2 and a duplicate of 0-1
    return edges([(0, 1), (0, 3), (1, 2), (3, 2), (0, 4), (5, 6), (2, 2), (1, 0)]), 7
