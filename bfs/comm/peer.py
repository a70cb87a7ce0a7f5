"""Peer memory between the ranks of one host: device buffers that every rank of a communicator
writes straight into, so that a kernel on one GPU hands a level's finds and flags to the
others over NVLink without the host (level_loop.cu's level_loop_peers).

How. Each rank allocates its window with cudaMalloc (not from CuPy's pool: an IPC handle names
a whole allocation), exports a CUDA IPC handle (64 bytes), all-gathers the handles over MPI as
bytes and opens its peers' with peer access enabled. The same works where ranks share one GPU
(the tests' setup): a handle opened in another process of the same device maps the same
memory. Every rank then holds the C window addresses (`bases`, a device array) in rank order.

Why CUDA IPC and not NVSHMEM: NVSHMEM puts one processing element on a GPU (several need MPS),
so the ranks-sharing-a-GPU tests that every device feature here has could not run it; IPC
needs no library beyond the CUDA runtime CuPy already loads. Between hosts there is no peer
memory: the searches keep their NCCL path there (choose() says which applies).

Where a window is chosen: `choose(requested, comm)` answers whether the ranks of comm share a
host and can reach each other's memory; "auto" takes peer memory where every rank has a GPU of
its own on one host (ranks sharing a GPU time-slice it, so a persistent kernel waiting on
another rank's flag would wait for the other process's time slice), "on" wherever the ranks
share a host, "off" never. A failure to open a peer's handle is collective: every rank falls
back together, with one line saying why.
"""
from __future__ import annotations

import numpy as np

from ..errors import BfsError
from ..log import log
from .exchange import device_placement

PEER_CHOICES = ("auto", "on", "off")
HANDLE_BYTES = 64                 # cudaIpcMemHandle_t
LAZY_PEER_ACCESS = 1              # cudaIpcMemLazyEnablePeerAccess


def choose(requested: str, comm) -> bool:
    """Whether the ranks of comm take peer memory (see the module docstring); collective."""
    if requested not in PEER_CHOICES:
        raise BfsError(f"peer must be one of {', '.join(PEER_CHOICES)}, got {requested!r}")
    if requested == "off" or comm.Get_size() == 1:
        return False
    placement = device_placement(comm)
    hosts = {host for host, _ in placement}
    if len(hosts) > 1:
        if requested == "on":
            raise BfsError(f"peer=on needs the ranks on one host; they are on {len(hosts)} "
                           f"({', '.join(sorted(hosts))}): use peer=auto or off")
        return False
    if requested == "auto" and len(set(placement)) < len(placement):
        return False              # ranks share a GPU: see the module docstring
    return True


class PeerWindow:
    """nbytes of device memory on each rank of comm, every rank's window addressable by all
    (bases: a device array of the C addresses, uint64, in rank order; address: this rank's).
    Zeroed at creation.
    close() (or dropping it) closes the peers' handles and frees the own window."""

    def __init__(self, comm, nbytes: int):
        import cupy as cp
        from mpi4py import MPI
        rt = cp.cuda.runtime
        self.comm, self.nbytes = comm, int(nbytes)
        self.size, self.rank = comm.Get_size(), comm.Get_rank()
        self._opened: list[int] = []
        self.address = rt.malloc(self.nbytes)
        rt.memset(self.address, 0, self.nbytes)
        rt.deviceSynchronize()
        error = ""
        try:
            handle = np.frombuffer(rt.ipcGetMemHandle(self.address), np.uint8)
        except Exception as e:     # CUDARuntimeError: no IPC on this device or driver
            error, handle = f"exporting a CUDA IPC handle failed: {e}", np.zeros(
                HANDLE_BYTES, np.uint8)
        handles = np.empty((self.size, HANDLE_BYTES), np.uint8)
        comm.Allgather(np.ascontiguousarray(handle[:HANDLE_BYTES]), handles)
        addresses = np.zeros(self.size, np.uint64)
        addresses[self.rank] = self.address
        if not error:
            for peer in range(self.size):
                if peer == self.rank:
                    continue
                try:
                    ptr = rt.ipcOpenMemHandle(handles[peer].tobytes(), LAZY_PEER_ACCESS)
                except Exception as e:
                    error = f"opening rank {peer}'s CUDA IPC handle failed: {e}"
                    break
                self._opened.append(ptr)
                addresses[peer] = ptr
        # collective: any rank's failure is every rank's
        failed = comm.allreduce(1 if error else 0, op=MPI.SUM)
        if failed:
            reasons = comm.allgather(error)
            self.close()
            first = next(r for r in reasons if r)
            raise PeerUnavailable(f"peer memory unavailable on {failed} of {self.size} ranks "
                                  f"({first})")
        self.bases = cp.asarray(addresses)
        comm.Barrier()            # every window open before any rank writes into one

    def close(self) -> None:
        import cupy as cp
        rt = cp.cuda.runtime
        for ptr in self._opened:
            try:
                rt.ipcCloseMemHandle(ptr)
            except Exception:     # the process is ending, or the peer is gone
                pass
        self._opened = []
        if self.address:
            try:
                rt.free(self.address)
            except Exception:
                pass
            self.address = 0

    def __del__(self):
        if getattr(self, "address", 0) or getattr(self, "_opened", None):
            self.close()


class PeerUnavailable(BfsError):
    """Peer memory could not be set up on every rank (the caller falls back to its NCCL
    path, saying so in one line)."""


def open_window(requested: str, comm, nbytes: int) -> PeerWindow | None:
    """A PeerWindow where choose() takes peer memory and it opens; None otherwise (one line
    saying why where it was asked for and failed). peer=on that fails raises."""
    if not choose(requested, comm):
        return None
    try:
        return PeerWindow(comm, nbytes)
    except PeerUnavailable as e:
        if requested == "on":
            raise
        log(f"{e}: the levels go through the host's exchanges", comm=comm)
        return None


SHARE_TIMEOUT_S = 5.0   # a share's wait for a peer's flag, at most (then the search fails)
SHARE_RANKS = 16         # the ranks a share's flag area holds (peer_share.cu's layout: the
SHARE_FLAGS_BYTES = 4096  # meetings' flags, 2 words a rank, then from word 32 the sums' slots,
                          # 8 words for each parity and rank), In after them
SHARE_KINDS = ("cleared", "written", "switch words")   # the flag an error word names


class PeerShare:
    """The grid row's all-gather of a row-range bitmap's pieces (each rank's own piece at its
    place: words [displs[j], displs[j] + counts[j])) through peer memory, in place of NCCL's
    (peer_share.cu says how: the own piece's nonzero words written into every rank's copy,
    between two flag meetings). `words` is this rank's copy, a device array over its window,
    which every share rewrites whole; share() enqueues on the current stream (capturable in a
    CUDA graph) and reads nothing; sum() likewise sums a level's four switch words over the
    ranks (NCCL's all-reduce of them, by the same kind of flags). A peer that fails to meet
    sets the error word (error_word: a device word of the caller's, read with what it reads
    anyway; else one of its own, brought to the host by enqueue_error_read); error_message(its
    value) names the peer and the level, "" for 0."""

    def __init__(self, window: PeerWindow, n_words: int, displs, counts, error_word=None):
        import cupy as cp
        import cupyx
        from .. import device
        self.window, self.C, self.me = window, window.size, window.rank
        if self.C > SHARE_RANKS:
            raise BfsError(f"peer share: {self.C} ranks are more than its flag area holds "
                           f"({SHARE_RANKS})")
        memory = cp.cuda.UnownedMemory(window.address, window.nbytes, window)
        self.flags = cp.ndarray((SHARE_FLAGS_BYTES // 8,), cp.uint64,
                                cp.cuda.MemoryPointer(memory, 0))
        self.words = cp.ndarray((n_words,), cp.uint64,
                                cp.cuda.MemoryPointer(memory, SHARE_FLAGS_BYTES))
        self.at, self.count = int(displs[self.me]), int(counts[self.me])
        self.tags = cp.zeros(2, cp.uint64)        # the last share's tag, the last sum's
        self.error_word = cp.zeros(1, cp.uint64) if error_word is None else error_word
        self.host_error = cupyx.empty_pinned((1,), dtype=np.uint64)
        mod = device.load_module(__file__.replace("peer.py", "peer_share.cu"))
        self.k = {name: mod.get_function(name)
                  for name in ("share_clear", "share_meet", "share_write", "share_sum")}
        self.grid = device.sm_count() * 4
        self.block = max(32, -(-self.C // 32) * 32)

    @classmethod
    def open(cls, requested: str, comm, n_words: int, displs, counts, error_word=None):
        """A PeerShare where choose() takes peer memory and its window opens, else None (as
        open_window)."""
        window = open_window(requested, comm, SHARE_FLAGS_BYTES + 8 * int(n_words))
        return None if window is None else cls(window, n_words, displs, counts, error_word)

    def share(self, piece, go, level: int) -> int:
        """Enqueue the share of this rank's piece (its counts[me] words) into every copy, if
        go[0]; returns the bytes this rank may send (the piece to each peer, at most)."""
        k, C, me = self.k, self.C, self.me
        timeout = np.uint64(SHARE_TIMEOUT_S * 1e9)
        bases = self.window.bases
        k["share_clear"]((self.grid,), (256,), (go, self.words, np.int64(self.words.size)))
        meet = (go, self.tags, self.error_word, bases, self.flags, np.int32(me), np.int32(C))
        k["share_meet"]((1,), (self.block,), (*meet, np.int32(0), np.int32(level), timeout))
        k["share_write"]((self.grid,), (256,), (go, piece, np.int64(self.count),
                                                np.int64(self.at), bases,
                                                np.int64(SHARE_FLAGS_BYTES), np.int32(C)))
        k["share_meet"]((1,), (self.block,), (*meet, np.int32(1), np.int32(level), timeout))
        return 8 * self.count * (C - 1)

    def sum(self, counts, totals, go, level: int) -> None:
        """Enqueue totals[0:4] = the sum over the ranks of their counts[0:4] (uint64), if go[0]."""
        self.k["share_sum"]((1,), (self.block,),
                            (go, self.tags, self.error_word, self.window.bases, self.flags,
                             np.int32(self.me), np.int32(self.C), np.int32(level),
                             np.uint64(SHARE_TIMEOUT_S * 1e9), counts, totals))

    def enqueue_error_read(self) -> None:
        """The error word into its pinned host copy, on the stream (read by error() after the
        stream's next synchronisation: no read of its own)."""
        self.error_word.get(out=self.host_error, blocking=False)

    def error(self) -> str:
        """error_message of the host copy enqueue_error_read brought."""
        return self.error_message(int(self.host_error[0]))

    def error_message(self, bad: int) -> str:
        """The message of an error word's value (peer_share.cu), "" for 0."""
        if not bad:
            return ""
        level, peer, kind = bad >> 16, ((bad >> 3) & 0x1FFF) - 1, SHARE_KINDS[(bad >> 1) & 3]
        return (f"peer share, rank {self.me} of the grid row: level {level}: rank {peer} did "
                f"not arrive ('{kind}' flag) within {SHARE_TIMEOUT_S:g} s (it stopped, failed "
                f"or was killed)")

    def close(self) -> None:
        self.window.close()
