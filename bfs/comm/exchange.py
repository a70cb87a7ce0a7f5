"""The per-level exchanges of the distributed searches, on the memory the search keeps its
vectors in.

A distributed search talks over a few communicators (the world; for 2d also its grid row and
grid column). Each is wrapped in an exchange with the five operations the searches need, all
on whole arrays:

    allreduce(send, recv, op)              op "sum", "max" or "min" (REDUCE_OPS)
    bcast(buf, root)
    sendrecv(send, dest, recv, source)     dest / source None: no partner on that side
    allgatherv(send, recv, counts, displs) counts / displs in elements of recv
    alltoallv(send, send_counts, recv, recv_counts)   contiguous regions in rank order
    alltoall_counts(send_counts) -> recv_counts        host int64, through MPI (small)
    (size, rank)

Two kinds, chosen by `--comm`:

  mpi   MpiExchange: mpi4py's buffer (upper-case) calls. Host (numpy) arrays go straight to
        MPI; device (CuPy) arrays are staged through host copies, which synchronizes the
        device at every call (the fallback, and what the CPU backend uses).
  nccl  NcclExchange: NCCL on device buffers (cupy.cuda.nccl), enqueued on the current CuPy
        stream, so kernels and exchanges of a level run back to back without the host
        waiting. NCCL has no bitwise OR: the searches OR what sendrecv delivers with a local
        kernel. allgatherv is NCCL's all-gather where the counts are equal and back to back,
        else a group of broadcasts, one rooted at each member, landing in its slice.

The NCCL unique id travels by an MPI Bcast of its 128 bytes; one NCCL communicator per MPI
communicator (world, grid row, grid column), created in the same order on every rank.
NVLink multicast (NVLS) stays off unless the user's environment turns it on: the exchanges
here are point-to-point and broadcasts, which do not use it.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import BfsError
from .mpi import displacements
from ..log import log

COMM_KINDS = ("nccl", "mpi")
# element-wise reductions of allreduce; both kinds name them alike (MPI.MIN, nccl.NCCL_MIN)
REDUCE_OPS = ("sum", "max", "min")


def _reduce_op(module, prefix: str, op: str):
    """The library's constant for a REDUCE_OPS name (e.g. MPI.SUM, nccl.NCCL_MIN)."""
    if op not in REDUCE_OPS:
        raise BfsError(f"allreduce op {op!r}: choose one of {', '.join(REDUCE_OPS)}")
    return getattr(module, prefix + op.upper())


def default_comm(backend: str) -> str:
    return "nccl" if backend == "gpu" else "mpi"


def check_comm(kind: str, backend: str) -> str:
    if kind not in COMM_KINDS:
        raise BfsError(f"--comm {kind!r}: choose one of {', '.join(COMM_KINDS)}")
    if kind == "nccl" and backend != "gpu":
        raise BfsError("--comm nccl moves device buffers: it needs --backend gpu")
    return kind


def device_placement(comm) -> list[tuple[str, str]]:
    """(host, PCI bus id of the current device) of every rank of comm, collective: metadata, a
    few bytes a rank. The host is part of the key: identical nodes have the same bus ids."""
    import socket

    import cupy as cp
    return comm.allgather((socket.gethostname(), cp.cuda.Device().pci_bus_id))


def choose_comm(requested: str | None, backend: str, comm) -> str:
    """The exchange kind a distributed search uses (collective over comm). NCCL needs one GPU
    per rank: where ranks share a device (more ranks than GPUs, e.g. a test on a laptop) the
    GPU default falls back to host-staged MPI with a notice, and an explicit `--comm nccl`
    is refused naming the shared device."""
    kind = check_comm(requested or default_comm(backend), backend)
    if kind != "nccl" or comm.Get_size() == 1:
        return kind
    devices = device_placement(comm)
    shared = sorted({d for d in devices if devices.count(d) > 1})
    if not shared:
        return kind
    if requested == "nccl":
        host, bus = shared[0]
        raise BfsError(f"--comm nccl needs one GPU per rank, but ranks share GPU {bus} on "
                       f"{host} ({len(devices)} ranks on {len(set(devices))} GPUs): use --comm "
                       "mpi or start no more ranks than GPUs")
    log(f"{len(devices)} ranks share {len(set(devices))} GPU(s): the exchanges go through MPI "
        "(--comm mpi); NCCL needs one GPU per rank", comm=comm)
    return "mpi"


def _is_device(a) -> bool:
    return type(a).__module__.startswith("cupy")


class MpiExchange:
    """mpi4py buffer calls; device arrays staged through the host."""

    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.size, self.rank = comm.Get_size(), comm.Get_rank()

    @staticmethod
    def _outgoing(a) -> np.ndarray:
        """What MPI sends: a device array's host copy, or the host array (contiguous)."""
        return np.ascontiguousarray(a.get() if _is_device(a) else a)

    @staticmethod
    def _landing(recv) -> np.ndarray:
        """Where MPI receives: a host buffer for a device array, or the host array itself."""
        return np.empty(recv.shape, recv.dtype) if _is_device(recv) else recv

    @staticmethod
    def _back(dev, host) -> None:
        if _is_device(dev):
            dev.set(host)

    def allreduce(self, send, recv, op: str = "sum") -> None:
        mpi_op = _reduce_op(self.MPI, "", op)   # checked on a world of one too
        if self.size == 1:
            if recv is not send:
                recv[...] = send
            return
        out = np.empty(recv.shape, recv.dtype)   # send may be recv: no in-place MPI here
        self.comm.Allreduce(self._outgoing(send), out, op=mpi_op)
        if _is_device(recv):
            recv.set(out)
        else:
            recv[...] = out

    def bcast(self, buf, root: int) -> None:
        if self.size == 1:
            return
        host = self._outgoing(buf)
        self.comm.Bcast(host, root=root)
        if _is_device(buf):
            buf.set(host)
        elif host is not buf:
            buf[...] = host

    def sendrecv(self, send, dest, recv, source) -> None:
        MPI = self.MPI
        if dest is None and source is None:
            return
        empty = np.empty(0, np.uint8)
        host_send = empty if dest is None else self._outgoing(send)
        host_recv = empty if source is None else self._landing(recv)
        self.comm.Sendrecv(host_send, dest=MPI.PROC_NULL if dest is None else dest,
                           sendtag=11, recvbuf=host_recv,
                           source=MPI.PROC_NULL if source is None else source, recvtag=11)
        if source is not None:
            self._back(recv, host_recv)

    def allgatherv(self, send, recv, counts, displs) -> None:
        if self.size == 1:
            recv[int(displs[0]):int(displs[0]) + int(counts[0])] = send
            return
        host_recv = self._landing(recv)
        mpi_type = self.MPI._typedict[np.dtype(recv.dtype).char]
        self.comm.Allgatherv(self._outgoing(send),
                             [host_recv, np.asarray(counts, np.int64),
                              np.asarray(displs, np.int64), mpi_type])
        self._back(recv, host_recv)

    def alltoall_counts(self, send_counts) -> np.ndarray:
        return _alltoall_counts(self.comm, send_counts)

    def alltoallv(self, send, send_counts, recv, recv_counts) -> None:
        if self.size == 1:
            recv[...] = send
            return
        sc, rc = np.asarray(send_counts, np.int64), np.asarray(recv_counts, np.int64)
        host_recv = self._landing(recv)
        mpi_type = self.MPI._typedict[np.dtype(recv.dtype).char]
        self.comm.Alltoallv(
            [self._outgoing(send), sc, displacements(sc), mpi_type],
            [host_recv, rc, displacements(rc), mpi_type])
        self._back(recv, host_recv)

    def free(self) -> None:
        pass


def _alltoall_counts(comm, send_counts) -> np.ndarray:
    recv = np.empty(comm.Get_size(), np.int64)
    comm.Alltoall(np.ascontiguousarray(send_counts, np.int64), recv)
    return recv


class NcclExchange:
    """NCCL on device buffers over the ranks of an MPI communicator (collective to build)."""

    def __init__(self, comm):
        import cupy as cp
        from cupy.cuda import nccl
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
        self.cp, self.nccl = cp, nccl
        self.mpi = comm
        self.size, self.rank = comm.Get_size(), comm.Get_rank()
        # ncclUniqueId: 128 chars; CuPy hands it out as bytes (14.x) or a tuple of ints (older)
        as_bytes = isinstance(nccl.get_unique_id(), (bytes, bytearray))
        uid = np.zeros(128, np.int8)
        if self.rank == 0:
            made = nccl.get_unique_id()
            uid[:] = (np.frombuffer(bytes(made), np.int8) if as_bytes
                      else np.asarray(made, np.int64).astype(np.int8))
        comm.Bcast(uid, root=0)
        self.nc = nccl.NcclCommunicator(self.size, uid.tobytes() if as_bytes
                                        else tuple(int(x) for x in uid), self.rank)
        # NCCL connects a communicator's channels at its first collective (hundreds of ms
        # between two GPUs): a one-word all-reduce now, so that cost is the communicator's
        # making, not the first phase of a build or a search that uses it
        one = cp.zeros(1, cp.int64)
        self.allreduce(one, one)
        cp.cuda.get_current_stream().synchronize()

    def _stream(self) -> int:
        return self.cp.cuda.get_current_stream().ptr

    def _bytes(self, a) -> int:
        if not a.flags.c_contiguous:
            raise BfsError("NCCL exchange needs contiguous device buffers")
        return int(a.nbytes)

    def allreduce(self, send, recv, op: str = "sum") -> None:
        nccl = self.nccl
        dtype = {np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.uint64): nccl.NCCL_UINT64,
                 np.dtype(np.int32): nccl.NCCL_INT32,
                 np.dtype(np.uint8): nccl.NCCL_UINT8}[np.dtype(send.dtype)]
        self.nc.allReduce(send.data.ptr, recv.data.ptr, send.size, dtype,
                          _reduce_op(nccl, "NCCL_", op), self._stream())

    def bcast(self, buf, root: int) -> None:
        if self.size > 1:
            self.nc.bcast(buf.data.ptr, self._bytes(buf), self.nccl.NCCL_UINT8, root,
                          self._stream())

    def sendrecv(self, send, dest, recv, source) -> None:
        if dest is None and source is None:
            return
        s = self._stream()
        self.nccl.groupStart()
        if dest is not None:
            self.nc.send(send.data.ptr, self._bytes(send), self.nccl.NCCL_UINT8, dest, s)
        if source is not None:
            self.nc.recv(recv.data.ptr, self._bytes(recv), self.nccl.NCCL_UINT8, source, s)
        self.nccl.groupEnd()

    def allgatherv(self, send, recv, counts, displs) -> None:
        item = recv.dtype.itemsize
        s = self._stream()
        base = recv.data.ptr
        count = int(counts[0])
        if all(int(c) == count and int(d) == r * count
               for r, (c, d) in enumerate(zip(counts, displs))):
            # equal counts in rank order: NCCL's own all-gather
            self.nc.allGather(send.data.ptr, base, count * item, self.nccl.NCCL_UINT8, s)
            return
        self.nccl.groupStart()
        for r in range(self.size):
            nbytes = int(counts[r]) * item
            if nbytes:
                self.nc.broadcast(send.data.ptr, base + int(displs[r]) * item, nbytes,
                                  self.nccl.NCCL_UINT8, r, s)
        self.nccl.groupEnd()

    def alltoall_counts(self, send_counts) -> np.ndarray:
        return _alltoall_counts(self.mpi, send_counts)

    def alltoallv(self, send, send_counts, recv, recv_counts) -> None:
        item = send.dtype.itemsize
        sd, rd = displacements(send_counts), displacements(recv_counts)
        s = self._stream()
        me = self.rank
        if send_counts[me]:   # the own region: a device copy, not a message to itself
            n = int(send_counts[me])
            recv[int(rd[me]):int(rd[me]) + n] = send[int(sd[me]):int(sd[me]) + n]
        self.nccl.groupStart()
        for r in range(self.size):
            if r == me:
                continue
            if send_counts[r]:
                self.nc.send(send.data.ptr + int(sd[r]) * item, int(send_counts[r]) * item,
                             self.nccl.NCCL_UINT8, r, s)
            if recv_counts[r]:
                self.nc.recv(recv.data.ptr + int(rd[r]) * item, int(recv_counts[r]) * item,
                             self.nccl.NCCL_UINT8, r, s)
        self.nccl.groupEnd()

    def free(self) -> None:
        self.nc.destroy()


def make_exchange(kind: str, comm):
    """The exchange of the given kind over an MPI communicator (collective)."""
    return NcclExchange(comm) if kind == "nccl" else MpiExchange(comm)


class GridComms:
    """A grid's communicators: the world's, its grid row's and grid column's MPI communicators
    and their exchanges. `owned`: the searcher that asked frees them at its close; otherwise a
    session's grid scope keeps them for every searcher it builds on the same grid."""

    def __init__(self, comm, i: int, j: int, R: int, C: int, kind: str, owned: bool):
        # grid row i talks along j (all-gather); grid column j along i (scan, broadcast)
        self.row_comm = comm.Split(color=i, key=j)
        self.col_comm = comm.Split(color=j, key=i)
        # a grid of one rank never exchanges: no NCCL communicators for it
        self.world_x, self.row_x, self.col_x = (
            make_exchange(kind if R * C > 1 else "mpi", c)
            for c in (comm, self.row_comm, self.col_comm))
        self.owned = owned

    def free(self) -> None:
        """The exchanges (the same order on every rank: destroying an NCCL communicator waits
        for its peers) and the split communicators."""
        for x in (self.world_x, self.row_x, self.col_x):
            x.free()
        self.row_comm.Free()
        self.col_comm.Free()


_scope: dict | None = None     # the open grid scope: (communicator, grid, kind) -> GridComms


def grid_comms(comm, i: int, j: int, R: int, C: int, kind: str) -> GridComms:
    """The communicators of rank (i, j) of an R x C grid over comm (collective). Inside a grid
    scope (open_grid_scope: a harness session) they are made once and kept, so Kernel 1's timed
    build, built after an untimed one, finds them made and connected, as the single-GPU search
    finds its CUDA context; outside one each searcher makes and frees its own."""
    if _scope is None:
        return GridComms(comm, i, j, R, C, kind, owned=True)
    key = (comm.py2f(), R, C, kind)
    if key not in _scope:
        _scope[key] = GridComms(comm, i, j, R, C, kind, owned=False)
    return _scope[key]


def open_grid_scope() -> None:
    global _scope
    if _scope is None:
        _scope = {}


def close_grid_scope() -> None:
    """Frees the scope's communicators, in the order they were made (the same on every rank)."""
    global _scope
    scope, _scope = _scope, None
    for comms in (scope or {}).values():
        comms.free()


class LevelClock:
    """Per level, the time spent in each step, summed into local work ("expand") and exchanges
    ("comm").

    mark(step) charges the time since the previous mark to step (one of STEPS; the COMM ones
    are exchanges). On the device each mark records a CUDA event on the current stream (no host
    wait); the times are read once, after the search. On the host it reads perf_counter."""

    # begin: the level's start (the GPU 2d's compaction and its one read of the device);
    # switch: 2d-do's direction numbers; comm / expand: what a caller does not split further;
    # chained: a level of a chain replayed as one CUDA graph, its work and exchanges together
    # by the device clock; replay: the rest of that chain's time (the graph's start, and the
    # levels past the chain's end, whose kernels return at once and whose exchanges still run);
    # push, scatter, resolve: a top-down level through the block's CSC alone (2d-do's
    # adjacency=csc: the push into a row bitmap, its alltoallv, the candidates' parents found);
    # walk, arrive, flags, peers: a level of the level loop across GPUs (fu_2d_do_peer) by
    # block 0's device clock: its rows walked, its adds to the peers' meeting words issued,
    # its own (the release) done, every block of every rank met
    STEPS = ("begin", "expand", "scan", "contract", "union", "finish", "switch", "allreduce",
             "comm", "chained", "replay", "push", "scatter", "resolve", "walk", "arrive",
             "flags", "peers")
    COMM = frozenset({"scan", "union", "allreduce", "comm", "replay", "scatter", "flags",
                      "peers"})

    def __init__(self, device: bool, pool: list | None = None):
        """pool (device): CUDA events to record into, reused from search to search (made as
        needed), so that a mark is one record; a search's steps must be read before the next
        search's clock records into them again."""
        self.device = device
        self.levels: list[tuple[int, int, int, list]] = []   # level, frontier, bytes, marks
        self.marks: list = []
        self.splits: list[tuple[int, np.ndarray]] = []   # split_chain's
        self.pool = [] if pool is None else pool
        self.used = 0
        if device:
            import cupy as cp
            self.cp = cp

    def _now(self):
        if self.device:
            if self.used == len(self.pool):
                self.pool.append(self.cp.cuda.Event())
            ev = self.pool[self.used]
            self.used += 1
            ev.record()
            return ev
        return time.perf_counter()

    def start(self) -> None:
        self.marks = [(None, self._now())]

    def mark(self, step: str) -> None:
        if step not in self.STEPS:
            raise ValueError(f"LevelClock: unknown step {step!r}")
        self.marks.append((step, self._now()))

    def end_level(self, level: int, frontier: int, sent: int) -> None:
        self.add_level(level, frontier, sent, self.take())

    def take(self) -> list:
        """The marks since the last level ended, for a level whose frontier the host learns
        only later (a chained level, bfs.algorithms.fu_2d_do_gpu): add_level files them."""
        marks, self.marks = self.marks, [(None, self.marks[-1][1])]
        return marks

    def add_level(self, level: int, frontier: int, sent: int, marks: list) -> None:
        self.levels.append((level, frontier, sent, marks))

    def add_levels(self, first: int, frontiers: list, sent: list, marks: list) -> None:
        """Levels first, first + 1, ... at once (a level loop's), the marks the first's."""
        self.levels.extend(zip(range(first, first + len(frontiers)), frontiers, sent,
                               [marks] + [[]] * (len(frontiers) - 1)))

    def split_chain(self, first: int, seconds, parts: dict | None = None) -> None:
        """The levels filed from row `first` on ran as one CUDA graph (or one launch), whose
        time the events give as the first row's steps; `seconds` are each level's by the
        device's own clock (from the previous level's end, or the chain's start). steps()
        gives each level its seconds as "chained" in place of the events' "expand", and the
        rest of that as "replay" of the last one; parts (step -> seconds a level, summing to
        `seconds`), where the device clocked a level's steps, in place of "chained"."""
        self.splits.append((first, np.asarray(seconds, np.float64), parts))

    def steps(self) -> np.ndarray:
        """Seconds per level (rows) and step (columns, in STEPS order)."""
        if self.device and self.levels:
            self.levels[-1][3][-1][1].synchronize()
        index = {step: k for k, step in enumerate(self.STEPS)}
        out = np.zeros((len(self.levels), len(self.STEPS)))
        for row, (_, _, _, marks) in enumerate(self.levels):
            for (_, a), (step, b) in zip(marks, marks[1:]):
                out[row, index[step]] += (self.cp.cuda.get_elapsed_time(a, b) / 1e3
                                          if self.device else b - a)
        expand, chained, replay = index["expand"], index["chained"], index["replay"]
        for first, seconds, parts in self.splits:
            rows = slice(first, first + len(seconds))
            whole = out[rows, expand].sum()     # the graph's launch to its end
            out[rows, expand] = 0.0
            if parts is None:
                out[rows, chained] = seconds
            for step, part in (parts or {}).items():
                out[rows, index[step]] = part
            out[first + len(seconds) - 1, replay] = max(whole - seconds.sum(), 0.0)
        return out

    def rows(self, steps: np.ndarray | None = None) -> np.ndarray:
        """(level, frontier, expand s, comm s, bytes sent) per level, from steps() (pass it
        where the caller has it: reading the device events again costs host time)."""
        steps = self.steps() if steps is None else steps
        comm = np.array([step in self.COMM for step in self.STEPS])
        out = [(level, frontier, t[~comm].sum(), t[comm].sum(), sent)
               for (level, frontier, sent, _), t in zip(self.levels, steps)]
        return np.array(out, np.float64).reshape(-1, 5)
