"""Graphs generated in place: `bfs run --generate kronecker:scale=S[,edgefactor=16][,seeds=2:3]
[,version=3.0]` and `bfs bench --scales`, no graph or partition directory on disk.

Where the edges are made and go:
  * one process on the CPU: the whole edge list by bfs.graphs.kronecker.generate_edges;
  * one process on a GPU: the whole edge list on the device (bfs.graphs.kronecker_gpu);
  * P ranks (distributed algorithms): every rank generates its contiguous share
    [rank * m / P, (rank + 1) * m / P) of the edge list (the generator is splittable: edge e's
    stream is the seed skipped by e * 2^64) and routes both directions of every non-loop edge
    to the rank owning its block, so each rank holds the block `bfs partition` would write
    for it (the same directed edges as a multiset): the build stage's routing
    (bfs.build.routing: on GPUs one all-to-all through the world exchange, on CPUs the
    partitioner's router and one MPI Alltoallv per column), whole or a chunk at a time.
The edges are bit-identical to `bfs generate kronecker` with the same parameters, so a run
from a generated graph and one from its graph directory search the same graph.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..build.routing import share
from ..errors import BfsError
from ..graphs.graphdir import GraphMeta, id_dtype

GEN_CHUNK = 1 << 26  # edges per generator launch on a GPU
DEFAULT_SEEDS = (2, 3)



@dataclass(frozen=True)
class GeneratedKronecker:
    scale: int
    edgefactor: int = 16
    seeds: tuple[int, int] = DEFAULT_SEEDS
    version: str = "3.0"
    name: str | None = None   # the graph's name in run.json (default kron-sS-eE): the edges
                              # do not depend on it

    @property
    def n_vertices(self) -> int:
        return 2 ** self.scale

    @property
    def n_edges(self) -> int:
        return self.edgefactor * 2 ** self.scale

    @property
    def spec(self) -> str:
        """The --generate text that makes this graph again (recorded in run.json)."""
        return (f"kronecker:scale={self.scale},edgefactor={self.edgefactor},"
                f"seeds={self.seeds[0]}:{self.seeds[1]},version={self.version}"
                + (f",name={self.name}" if self.name else ""))

    def meta(self, generation_time: float) -> GraphMeta:
        """The graph.json `bfs generate kronecker` writes for the same graph (the same name,
        so the report pools runs of either)."""
        return GraphMeta(name=self.name or f"kron-s{self.scale}-e{self.edgefactor}",
                         source="kronecker",
                         n_vertices=self.n_vertices, n_edges=self.n_edges,
                         directed_source=False, scale=self.scale, edgefactor=self.edgefactor,
                         seeds=list(self.seeds), graph500_version=self.version,
                         extra={"generation_time": generation_time})

    def record(self, meta: GraphMeta) -> dict:
        """run.json's graph: as a graph directory's, with `generated` instead of `dir`."""
        return {"generated": self.spec, **meta.to_json()}

    # ------------------------------------------------------------------ the edges

    def host_edges(self, start: int = 0, stop: int | None = None):
        from ..graphs.kronecker import generate_edges
        return generate_edges(self.scale, self.edgefactor, self.seeds, self.version, start, stop)

    def device_edges(self, start: int = 0, stop: int | None = None):
        """Edges [start, stop) into fresh device arrays, GEN_CHUNK edges per launch."""
        import cupy as cp

        from ..graphs.kronecker_gpu import generate_edges_gpu
        stop = self.n_edges if stop is None else stop
        dtype = id_dtype(self.n_vertices)
        src, dst = cp.empty(stop - start, dtype), cp.empty(stop - start, dtype)
        for a in range(start, stop, GEN_CHUNK):
            b = min(a + GEN_CHUNK, stop)
            generate_edges_gpu(self.scale, self.edgefactor, self.seeds, self.version, a, b,
                               out=(src[a - start:b - start], dst[a - start:b - start]))
        cp.cuda.get_current_stream().synchronize()
        return src, dst

    def streamed_device_edges(self, chunk: int = GEN_CHUNK):
        """The edges regenerated on the device chunk by chunk at each pass, into two reused
        buffers (bfs.graphs.device_edges.DeviceEdges): never the whole list."""
        from ..graphs.device_edges import DeviceEdges
        m, rows = self.n_edges, max(1, min(chunk, self.n_edges))

        def chunks():
            import cupy as cp

            from ..graphs.kronecker_gpu import generate_edges_gpu
            dtype = id_dtype(self.n_vertices)
            src, dst = cp.empty(rows, dtype), cp.empty(rows, dtype)
            for a in range(0, m, rows):
                k = min(a + rows, m) - a
                generate_edges_gpu(self.scale, self.edgefactor, self.seeds, self.version, a,
                                   a + k, out=(src[:k], dst[:k]))
                yield src[:k], dst[:k]

        return DeviceEdges(m, chunks, chunk_edges=rows)

    def streamed_host_edges(self, chunk: int | None = None):
        """The edges regenerated on the CPU chunk by chunk at each pass (counter-based: any
        range of edges on its own), never the whole list (EdgeChunks)."""
        from ..graphs.edge_chunks import STREAM_CHUNK, EdgeChunks
        m = self.n_edges
        rows = max(1, min(chunk or STREAM_CHUNK, m))

        def chunks():
            for a in range(0, m, rows):
                yield self.host_edges(a, min(a + rows, m))

        return EdgeChunks(m, chunks, chunk_edges=rows)

    def share(self, rank: int, size: int) -> tuple[int, int]:
        return share(self.n_edges, rank, size)


def parse_generate(text: str) -> GeneratedKronecker:
    """'kronecker:scale=27,edgefactor=16,seeds=2:3,version=3.0[,name=kron-s27]' ->
    GeneratedKronecker; errors name the bad key or value."""
    kind, colon, rest = text.partition(":")
    if kind != "kronecker":
        raise BfsError(f"--generate {text!r}: unknown graph kind {kind!r} (only kronecker)")
    values: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise BfsError(f"--generate {text!r}: {item!r} is not KEY=VALUE")
        try:
            if key in ("scale", "edgefactor"):
                values[key] = int(value)
                if values[key] < 1:
                    raise ValueError
            elif key == "seeds":
                a, b = value.split(":")
                values[key] = (int(a, 0), int(b, 0))
                if min(values[key]) < 0:
                    raise ValueError
            elif key == "version":
                if value not in ("3.0", "2.1.4"):
                    raise ValueError
                values[key] = value
            elif key == "name":
                if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
                    raise ValueError
                values[key] = value
            else:
                raise BfsError(f"--generate {text!r}: unknown key {key!r} (keys: scale, "
                               "edgefactor, seeds, version, name)")
        except ValueError:
            expected = {"scale": "an integer >= 1", "edgefactor": "an integer >= 1",
                        "seeds": "two integers U1:U2 >= 0", "version": "3.0 or 2.1.4",
                        "name": "a plain name (letters, digits, . _ -)"}[key]
            raise BfsError(f"--generate {text!r}: {key}={value!r} is not {expected}") from None
    if "scale" not in values:
        raise BfsError(f"--generate {text!r}: scale=S is required")
    return GeneratedKronecker(**values)
