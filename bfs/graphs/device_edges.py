"""Graph edge lists into device memory: host arrays, or a graph directory read by Parquet row
groups through pinned buffers (the host never holds the whole list); or, where the whole list
does not fit beside Kernel 1 and the searches, streamed a chunk at a time (DeviceEdges)."""
from __future__ import annotations

import numpy as np

from ..device import EDGE_LIST_BYTES_PER_EDGE, check_fits, require_gpu
from ..errors import BfsError
from .edge_chunks import STREAM_CHUNK, EdgeChunks
from .graphdir import edge_passes, iter_edge_batches, read_meta


class DeviceEdges(EdgeChunks):
    """A one-GPU session's edge list as Kernel 1 and bfs.validate.gpu read it: chunks() yields
    (src, dst) device uint32 arrays that cover the list in order, every call the same edges.
    Resident: the two whole arrays, one chunk. Streamed (kept is None): each call makes the
    chunks again (regenerated on the device, or re-read from the graph directory's row
    groups) into two reused buffers, so the list is never whole on the device; a chunk is
    valid until the next one is asked for (work on it is queued on the current stream, which
    the next chunk's fill follows). chunk_edges: the streamed buffers' length (their 8 bytes
    an edge)."""

    def to_host(self):
        """The whole list on the host (bench --validate cpu)."""
        parts = [(s.get(), d.get()) for s, d in self.chunks()]
        return (np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.uint32),
                np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.uint32))


def streamed_graph_dir(graph_dir, chunk_rows: int = STREAM_CHUNK) -> DeviceEdges:
    """A graph directory's edges a chunk of Parquet rows at a time, through one pinned buffer
    into two reused device buffers (Kernel 1 and the validator read them again each pass)."""
    meta = read_meta(graph_dir)
    if meta.n_vertices > 2**32:
        raise BfsError(f"{graph_dir}: {meta.n_vertices} vertices; the GPU backend takes ids "
                       "below 2^32")
    rows, one_pass = edge_passes(graph_dir, meta.n_edges, chunk_rows)

    def chunks():
        cp = require_gpu()
        import cupyx
        staging = cupyx.empty_pinned((2, rows), np.uint32)
        src_d, dst_d = cp.empty(rows, cp.uint32), cp.empty(rows, cp.uint32)
        seen = 0
        for src, dst in one_pass():
            k = len(src)
            seen += k
            if seen > meta.n_edges:
                raise BfsError(f"{graph_dir}: the edge files hold more than the "
                               f"{meta.n_edges} edges graph.json declares")
            cp.cuda.get_current_stream().synchronize()   # the last copy out of staging is done
            staging[0, :k] = src
            staging[1, :k] = dst
            src_d[:k].set(staging[0, :k])
            dst_d[:k].set(staging[1, :k])
            yield src_d[:k], dst_d[:k]
        if seen != meta.n_edges:
            raise BfsError(f"{graph_dir}: graph.json says {meta.n_edges} edges, the edge "
                           f"files hold {seen}")

    return DeviceEdges(meta.n_edges, chunks, chunk_edges=rows)


def to_device_edges(src: np.ndarray, dst: np.ndarray):
    """Host edge arrays -> device uint32 arrays (the ids every GPU kernel here takes)."""
    cp = require_gpu()
    if len(src) != len(dst):
        raise BfsError(f"edge arrays differ in length: {len(src)} sources, {len(dst)} targets")
    if len(src) and max(int(np.max(src)), int(np.max(dst))) >= 2**32:
        raise BfsError("the GPU backend takes vertex ids below 2^32")
    check_fits(EDGE_LIST_BYTES_PER_EDGE * len(src), f"the edge list ({len(src)} edges)")
    return (cp.asarray(np.ascontiguousarray(src, dtype=np.uint32)),
            cp.asarray(np.ascontiguousarray(dst, dtype=np.uint32)))


def read_edges_to_device(graph_dir, batch_rows: int = 1 << 22):
    """A graph directory's edge list into device uint32 arrays (src, dst), batch by batch of
    Parquet row groups through two pinned host buffers: each batch's copy to the device runs
    while the next is decoded, and the host never holds the whole list."""
    cp = require_gpu()
    import cupyx

    meta = read_meta(graph_dir)
    n, m = meta.n_vertices, meta.n_edges
    if n > 2**32:
        raise BfsError(f"{graph_dir}: {n} vertices; the GPU backend takes ids below 2^32")
    check_fits(EDGE_LIST_BYTES_PER_EDGE * m, f"the edge list of {graph_dir} ({m} edges)")
    src_d = cp.empty(m, cp.uint32)
    dst_d = cp.empty(m, cp.uint32)
    staging = [cupyx.empty_pinned((2, batch_rows), np.uint32) for _ in range(2)]
    done = [None, None]              # the event after each buffer's last copy
    stream = cp.cuda.Stream(non_blocking=True)
    pos = 0
    for k, (src, dst) in enumerate(iter_edge_batches(graph_dir, batch_rows)):
        buf, size = staging[k % 2], len(src)
        if pos + size > m:
            raise BfsError(f"{graph_dir}: the edge files hold more than the {m} edges "
                           f"graph.json declares")
        if done[k % 2] is not None:
            done[k % 2].synchronize()   # the copy that last read this buffer has finished
        buf[0, :size] = src
        buf[1, :size] = dst
        src_d[pos:pos + size].set(buf[0, :size], stream=stream)
        dst_d[pos:pos + size].set(buf[1, :size], stream=stream)
        done[k % 2] = stream.record()
        pos += size
    stream.synchronize()
    if pos != m:
        raise BfsError(f"{graph_dir}: graph.json says {m} edges, the edge files hold {pos}")
    return src_d, dst_d


def nonloop_degrees_device(src_d, dst_d, n: int) -> np.ndarray:
    """Undirected degree of every vertex, self-loops excluded (bfs.build.csr_cpu.nonloop_degrees),
    counted on the device; returned on the host for root selection."""
    cp = require_gpu()
    keep = src_d != dst_d
    return (cp.bincount(src_d[keep], minlength=n)
            + cp.bincount(dst_d[keep], minlength=n)).get().astype(np.int64)


