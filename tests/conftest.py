import fcntl
import os
import tempfile
from pathlib import Path

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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The grouped tests first (pytest -n --dist loadgroup: the SLURM clusters, one finished
    workflow run): each group is the longest single piece of work a worker takes (tens of
    minutes on 2 cores), so started first it runs beside the rest of the suite rather than
    after it, on one worker while the others idle.

    On a worker, xdist marks a grouped test by a suffix on its node id; a pytest that drops it
    (9.2, pytest-xdist issue 1386) spreads each group over every worker, and each builds the
    finished workflow run again: stop rather than run the suite twice as long."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)
    if config.getoption("loadgroup", False):
        lost = [item.nodeid for item in items
                if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
        if lost:
            raise pytest.UsageError(
                f"--dist loadgroup has no effect with pytest {pytest.__version__}: {lost[0]} "
                "carries no group; install the test extra's pytest (pip install -e '.[test]')")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under pytest -n (xdist), a test marked `alone` runs with no other test beside it: it
    holds an exclusive lock for its whole protocol (its fixtures' setup and teardown too),
    every other test a shared one. The SLURM clusters need it: on 2 loaded cores slurmctld
    answers the executor plugin's queries too late (`scontrol show config` past the plugin's
    10 s, after which it asks sacct, which a cluster without accounting cannot answer) and the
    run loses track of its jobs.

    flock prefers no one, so a worker taking and dropping shared locks test after test could
    keep an exclusive one waiting for ever: a second lock is the turnstile, held exclusively
    by a test waiting to run alone, passed through (taken shared, then dropped) by the others."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        yield
        return
    alone = item.get_closest_marker("alone") is not None
    locks = Path(tempfile.gettempdir())
    with open(locks / f"bfs-tests-{run}.lock", "a") as lock, \
            open(locks / f"bfs-tests-{run}.turnstile", "a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        yield
