"""An edge list as the passes over it read it (Kernel 1's two, each validation's one): in
chunks, so that a list too big to hold beside its CSR is made again for each pass, regenerated
or re-read from the graph directory's row groups, and never whole in memory.

    EdgeChunks            chunks() yields (src, dst) arrays covering the list in order, every
                          call the same edges; resident (the two whole arrays, one chunk) or
                          streamed (made again at every call)
    streamed_graph_dir_host
                          a graph directory's row groups on the host (the CPU backend)

bfs.graphs.device_edges.DeviceEdges is the same on one GPU (device arrays); the Kronecker
generator streams through bfs.harness.generated.GeneratedKronecker."""
from __future__ import annotations

from .graphdir import edge_passes, read_meta

STREAM_CHUNK = 1 << 24   # edges a host chunk holds (128 MiB of uint32 pairs)


class EdgeChunks:
    """An edge list's chunks. Resident: kept = (src, dst), one chunk. Streamed (kept is None):
    each call makes the chunks again, and a chunk may be valid only until the next one is
    asked for (buffers reused)."""

    def __init__(self, n_edges: int, chunks, kept=None, chunk_edges: int = 0):
        self.n_edges, self._chunks, self.kept = int(n_edges), chunks, kept
        self.chunk_edges = chunk_edges   # a streamed chunk's most edges

    @classmethod
    def resident(cls, src, dst):
        return cls(int(src.size), lambda: iter([(src, dst)]), kept=(src, dst))

    @property
    def streamed(self) -> bool:
        return self.kept is None

    def chunks(self):
        return self._chunks()


def streamed_graph_dir_host(graph_dir, chunk_rows: int = STREAM_CHUNK) -> EdgeChunks:
    """A graph directory's edges a batch of Parquet rows at a time, read again at each pass
    (each part file's row count checked against its footer, the total against graph.json)."""
    meta = read_meta(graph_dir)
    rows, one_pass = edge_passes(graph_dir, meta.n_edges, chunk_rows)
    return EdgeChunks(meta.n_edges, one_pass, chunk_edges=rows)
