"""MPI plumbing shared by the distributed algorithms and the harness.

Every collective here moves numpy buffers through mpi4py's upper-case methods; the only
lower-case (pickled) calls carry error strings, never data. A failure on some ranks is turned
into the same error on every rank (`agree`: the first failing rank's message, printed once, every
rank exiting 1), so no rank waits forever in a collective the others never reach; an unexpected
exception aborts the communicator (`abort_on_error`).
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

import numpy as np

from ..errors import BfsError, RankError, debugging, input_errors, one_line

# Variables a launcher sets when it starts several tasks; if one says >1 while MPI says 1,
# the launcher did not hand MPI its process-management interface (e.g. plain srun, no --mpi).
LAUNCHER_SIZE_VARS = ["SLURM_NTASKS", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE",
                      "MPI_LOCALNRANKS"]
# ... and the rank they give each task (MPICH/hydra, Open MPI, PMIx, srun), read before MPI starts
LAUNCHER_RANK_VARS = ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"]


def launcher_rank() -> int:
    """This process's rank as its launcher says (0 when none does), without starting MPI."""
    for var in LAUNCHER_RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def world():
    try:
        from mpi4py import MPI
    except ImportError:
        raise BfsError("distributed algorithms need mpi4py: pip install 'bfs[mpi]'") from None
    return MPI.COMM_WORLD


def check_world_size(comm, needed: int, what: str) -> None:
    size = comm.Get_size()
    if size == needed:
        return
    if size == 1:
        claimed = {v: os.environ[v] for v in LAUNCHER_SIZE_VARS
                   if os.environ.get(v, "1").isdigit() and int(os.environ.get(v, "1")) > 1}
        hint = (f"the launcher started several tasks ({claimed}) but each reports MPI size 1: "
                "use mpiexec, or srun --mpi=pmi2 (or pmix)" if claimed else
                f"start it with: mpiexec -n {needed} bfs run ...")
        raise BfsError(f"{what} needs {needed} MPI ranks but this process is alone; {hint}")
    raise BfsError(f"{what} needs {needed} MPI ranks, but {size} were started")


def agree(comm, error: str | None) -> None:
    """Collective: if any rank has an error, every rank raises RankError holding the first
    failing rank's message, named; rank 0 alone prints it (the CLI), every rank exits 1."""
    size = comm.Get_size()
    failed = np.zeros(size, np.int32)
    comm.Allgather(np.array([1 if error else 0], np.int32), failed)
    ranks = np.flatnonzero(failed)
    if not len(ranks):
        return
    first = int(ranks[0])
    message = comm.bcast(error, root=first)  # error text only: small, pickled on purpose
    if size > 1:
        also = f" ({len(ranks)} of {size} ranks failed)" if len(ranks) > 1 else ""
        message = f"rank {first}: {message}{also}"
    raise RankError(message, reports=comm.Get_rank() == 0)


@contextmanager
def collective_errors(comm):
    """Run a block on every rank; a BfsError (or bad input's OSError, ValueError, ...: see
    bfs.errors.input_errors) on any rank becomes the same RankError everywhere."""
    error = None
    try:
        yield
    except RankError:
        raise   # a nested block's failure, already agreed by every rank
    except BfsError as e:
        error = one_line(e)
    except input_errors() as e:
        if debugging():
            raise
        error = one_line(e)
    agree(comm, error)


@contextmanager
def abort_on_error(comm):
    """An unexpected exception on one rank would leave the others blocked: abort them all."""
    try:
        yield
    except (BfsError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        if isinstance(e, input_errors()) and not debugging():
            # bad input that slipped past the readers' checks: one line, as the CLI prints it
            print(f"bfs: error: rank {comm.Get_rank()}: {one_line(e)}", file=sys.stderr)
        else:
            import traceback
            traceback.print_exc()
        sys.stderr.flush()
        comm.Abort(1)


def allreduce_scalar(comm, value, op_name: str = "SUM", dtype=np.float64):
    from mpi4py import MPI
    send = np.array([value], dtype=dtype)
    recv = np.empty(1, dtype=dtype)
    comm.Allreduce(send, recv, op=getattr(MPI, op_name))
    return recv[0].item()


def displacements(counts) -> np.ndarray:
    """Where each rank's part starts in a concatenation of parts of these sizes (int64)."""
    counts = np.asarray(counts, np.int64)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def gatherv(comm, local: np.ndarray, root: int = 0) -> np.ndarray | None:
    """Concatenate every rank's 1-D array on `root`, in rank order."""
    from mpi4py import MPI
    counts = np.zeros(comm.Get_size(), np.int64)
    comm.Allgather(np.array([len(local)], np.int64), counts)
    local = np.ascontiguousarray(local)
    if comm.Get_rank() == root:
        out = np.empty(int(counts.sum()), dtype=local.dtype)
        displs = displacements(counts)
        comm.Gatherv(local, [out, counts, displs, MPI._typedict[local.dtype.char]], root=root)
        return out
    comm.Gatherv(local, None, root=root)
    return None


def node_rank(comm) -> int:
    """Rank among the processes sharing this node's memory."""
    from mpi4py import MPI
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank()
    finally:
        node.Free()


class Timer:
    """Accumulates wall time of named phases (expand, comm) for the per-level profile."""

    def __init__(self):
        self.t = {}

    @contextmanager
    def __call__(self, name):
        t0 = time.perf_counter()
        yield
        self.t[name] = self.t.get(name, 0.0) + time.perf_counter() - t0

    def pop(self, name) -> float:
        return self.t.pop(name, 0.0)
