"""One-process sessions of the harness (runner.py's search loop runs over them): each holds a
graph where one process's searches need it and answers the loop's questions about a search
(its roots, its result on the host, its validation, its count when left unvalidated, its
per-level profile).

    LocalSession          the host: the searcher sees the whole edge list, bfs.validate reads it;
                          or (--edge-list stream) the list made again chunk by chunk for Kernel
                          1's two passes and every validation, never whole in host memory
    GpuSession            one GPU: the edge list in device memory (read through pinned buffers
                          or generated there), or streamed a chunk at a time where it does not
                          fit beside Kernel 1 and the search; Kernel 1 and bfs.validate.gpu
                          read it there
    HostGraphGpuSession   one GPU for an algorithm that keeps the graph in host memory
                          (gpu-out-of-core): validated on the CPU

session_class(spec, backend) picks one; the distributed session is sessions_mpi.MpiSession.
A session is reused by every algorithm `bfs bench` runs over the graph.
"""
from __future__ import annotations

import contextlib
import functools
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import envinfo
from ..algorithms import EdgeList, RunContext
from ..build.csr_cpu import chunk_degrees
from ..errors import BfsError
from ..graphs.edge_chunks import EdgeChunks, streamed_graph_dir_host
from ..graphs.graphdir import GraphMeta, read_edges, read_meta
from ..log import logger
from ..validate import validate, validate_chunks
from .generated import GeneratedKronecker
from .roots import choose_roots
from .timing import Clock

if TYPE_CHECKING:
    from .run_options import RunOptions

log = logger("bfs")


def _streamed_source(source: Path | GeneratedKronecker) -> tuple[GraphMeta, dict]:
    """(meta, run.json's graph record) of a graph whose edges are streamed: generated pass by
    pass inside Kernel 1, or re-read from its directory."""
    if isinstance(source, GeneratedKronecker):
        meta = source.meta(0.0)
        return meta, source.record(meta)
    meta = read_meta(source)
    return meta, {"dir": str(Path(source).resolve()), **meta.to_json()}


class LocalSession:
    """One process: the searcher sees the whole edge list, validation reads it too.

    edge_list "stream": the list is never whole in host memory; Kernel 1
    (bfs.build.csr_cpu.build_csr_chunks), the degrees and every validation pass over it chunk
    by chunk, regenerated or re-read from the graph directory's row groups. Algorithms whose
    build takes only a whole list refuse it."""
    rank, size, is_root = 0, 1, True
    gpu = False
    ranks = None   # per-rank facts for run.json's environment (MpiSession's)
    EDGE_LISTS = ("auto", "stream")   # --edge-list choices; auto: held whole
    HELD_IN = "host"                  # run.json's edge_list where the list is held whole

    def __init__(self, meta: GraphMeta, src, dst, graph_record: dict, edges=None):
        self.meta, self.src, self.dst = meta, src, dst
        self.edges = edges if edges is not None else self._resident(src, dst)
        self.graph_record = graph_record
        self.hostnames = envinfo.environment()["hostnames"]
        self.degree = self.degrees()
        self.clock = Clock(self.gpu, self.barrier, self.max)
        # what the session measured (the edge list's arrival, ...), into run.json's measurements
        self.extra: dict = {"edge_list": "streamed" if self.edges.streamed else self.HELD_IN}

    @staticmethod
    def _resident(src, dst):
        return EdgeChunks.resident(src, dst)

    @classmethod
    def open(cls, source: Path | GeneratedKronecker, backend: str, edge_list: str = "auto"):
        """The session over a graph directory or a generated graph; edge_list: stream, or auto
        (held whole in host memory)."""
        if edge_list not in cls.EDGE_LISTS:
            raise BfsError(f"--edge-list {edge_list!r}: on the {backend.upper()} the edge list is "
                           f"held in host memory (auto) or streamed (stream); device is one "
                           f"GPU's")
        if edge_list == "stream":
            meta, record = _streamed_source(source)
            edges = (source.streamed_host_edges() if isinstance(source, GeneratedKronecker)
                     else streamed_graph_dir_host(source))
            log(f"{'generating' if isinstance(source, GeneratedKronecker) else 'reading'} "
                f"{meta.n_edges} edges a chunk of {edges.chunk_edges} at a time on each pass "
                f"(--edge-list stream)")
            return cls(meta, None, None, record, edges)
        if isinstance(source, GeneratedKronecker):
            src, dst, seconds = cls._generate(source)
            meta = source.meta(seconds)
            log(f"generated {source.spec}: {meta.n_edges} edges in {seconds:.3f} s "
                f"({meta.n_edges / max(seconds, 1e-9) / 1e6:.1f} M edges/s)")
            return cls(meta, src, dst, source.record(meta))
        meta = read_meta(source)
        log(f"reading {source} ({meta.n_vertices} vertices, {meta.n_edges} edges)")
        src, dst = cls._read(source)
        return cls(meta, src, dst, {"dir": str(Path(source).resolve()), **meta.to_json()})

    @classmethod
    def from_host(cls, meta: GraphMeta, src, dst, graph_record: dict):
        """The session over edges made in host memory (bench's lattices)."""
        return cls(meta, *cls._place(src, dst), graph_record)

    @staticmethod
    def _generate(graph: GeneratedKronecker):
        """(src, dst, seconds) of the whole edge list."""
        t = time.perf_counter()
        src, dst = graph.host_edges()
        return src, dst, time.perf_counter() - t

    @staticmethod
    def _read(graph_dir: Path):
        return read_edges(graph_dir)

    @staticmethod
    def _place(src, dst):
        return src, dst

    def build(self, spec, backend: str, options: dict):
        module = self._streaming_module(spec, backend)
        graph = EdgeList(self.src, self.dst, self.meta.n_vertices, host_edges=self.edges)
        return module.build(graph, RunContext(backend, options))

    def _streaming_module(self, spec, backend: str):
        """spec's module on backend; refused by name where the edge list is streamed and its
        build takes only a whole list."""
        module = spec.load(backend)
        if self.edges.streamed and not getattr(module.build, "streams_edges", False):
            serves = {"gpu": "merrill, merrill-do, gpu-quadratic and cupy-baseline"}.get(
                backend, "seq-csr")
            raise BfsError(f"--algorithm {spec.name} builds from the whole edge list, which is "
                           f"streamed here (--edge-list stream, or too big to keep: "
                           f"{self.meta.n_edges} edges); the streamed Kernel 1 serves {serves}")
        return module

    def degrees(self):
        return chunk_degrees(self.edges.chunks, self.meta.n_vertices)

    def barrier(self):
        pass

    def collective(self):
        return contextlib.nullcontext()

    def max(self, x: float) -> float:
        return x

    def gather(self, values: np.ndarray) -> np.ndarray:
        """Every rank's 1-D values in rank order (on rank 0): here the one rank's."""
        return np.asarray(values)

    def bcast_roots(self, roots):
        return roots

    def roots(self, opts: RunOptions) -> np.ndarray:
        return choose_roots(self.meta, self.degree, opts.n_roots, opts.root)

    def result(self, searcher, result, keep: bool):
        """The search's parent and level arrays on the host (every search: the per-level
        profile counts the levels)."""
        gathered = searcher.gather(self.meta.n_vertices)
        return gathered if gathered is not None else result

    def validate(self, searcher, result, root, policy):
        return validate_chunks(self.edges.chunks, result.parent, root, result.level)

    def count(self, searcher, result, root):
        """(nedge, depth, reached) of a search left unvalidated, from its own levels: nedge is
        half the reached vertices' degree sum (both ends of an edge are reached together)."""
        reached = result.level >= 0
        return (int(self.degree[reached].sum()) // 2, int(result.level.max()),
                int(np.count_nonzero(reached)))

    def profile(self, searcher, result, root, first: bool = False):
        counts = _level_sizes(result.level)
        # direction-optimizing searchers (merrill-do): each level's direction and edges read
        directions, examined = searcher.directions, searcher.level_edges_examined
        return [{"root": root, "rank": 0, "level": lv, "frontier_size": int(c),
                 "expand_s": math.nan, "comm_s": 0.0, "comm_bytes": 0,
                 "edges_examined": int(examined[lv]) if lv < len(examined) else None,
                 "direction": directions[lv] if lv < len(directions) else None}
                for lv, c in enumerate(counts)]

    def describe(self) -> dict:
        return {"graph": self.graph_record, "edge_list": self.extra["edge_list"]}

    def close(self) -> None:
        pass


def _level_sizes(level) -> np.ndarray:
    """Each level's vertex count of a search's level array, on the host or (GpuSession) the
    device, where it stays."""
    if isinstance(level, np.ndarray):
        return np.bincount(level[level >= 0])
    from ..algorithms.device_csr import level_sizes
    return level_sizes(level)


@functools.cache
def device_copy_bandwidth() -> float:
    """The device-to-device copy bandwidth (bfs.device.copy_bandwidth), measured once per
    process: every GPU session of a bench uses it."""
    from ..device import copy_bandwidth
    return copy_bandwidth()


class GpuSession(LocalSession):
    """One process on one GPU: the edge list in device memory (from the graph directory's row
    groups through pinned buffers, never whole on the host, or generated there); Kernel 1
    reads it there, and every search is validated on the GPU (bfs.validate.gpu) against it.

    edge_list "stream" (or "auto" where the resident list, Kernel 1 and the search state do
    not fit: bfs.build.memory.resident_edges_bytes): the list is never whole on the device.
    Kernel 1 (bfs.build.csr_gpu.csr_from_streamed), the degrees and every validation pass over
    it chunk by chunk, regenerated on the device or re-read from the graph directory.
    Algorithms whose build takes only a whole list refuse it."""
    gpu = True
    EDGE_LISTS = ("auto", "device", "stream")
    HELD_IN = "device"

    def __init__(self, meta, src, dst, graph_record, edges=None):
        super().__init__(meta, src, dst, graph_record, edges)
        # the bandwidth floor of a search: 4 bytes a directed edge at the copy bandwidth
        self.extra["copy_bandwidth_Bps"] = bw = device_copy_bandwidth()
        self.extra["floor_time_s"] = 4.0 * int(self.degree.sum()) / bw
        log(f"device-to-device copy {bw / 1e12:.3f} TB/s (read + write)")
        self.host_edges = None   # bench --validate cpu: copied on first use

    @staticmethod
    def _resident(src, dst):
        from ..graphs.device_edges import DeviceEdges
        return DeviceEdges.resident(src, dst)

    @classmethod
    def open(cls, source, backend: str, edge_list: str = "auto"):
        from .. import device
        from ..build.memory import resident_edges_bytes
        if edge_list not in cls.EDGE_LISTS:
            raise BfsError(f"--edge-list {edge_list!r}: choose auto, device or stream")
        generated = isinstance(source, GeneratedKronecker)
        meta = source.meta(0.0) if generated else read_meta(source)
        if edge_list == "auto":
            need = resident_edges_bytes(meta.n_edges, meta.n_vertices)
            edge_list = "device" if need <= device.free_memory()[0] else "stream"
            if edge_list == "stream":
                log(f"the edge list ({meta.n_edges} edges) with Kernel 1 and the search needs "
                    f"{need / 2**30:.1f} GiB of GPU memory: streamed a chunk at a time instead")
        if edge_list == "device":
            return super().open(source, backend)
        from ..graphs.device_edges import streamed_graph_dir
        edges = source.streamed_device_edges() if generated else streamed_graph_dir(source)
        meta, record = _streamed_source(source)
        log(f"{'generating' if generated else 'reading'} {meta.n_edges} edges a chunk of "
            f"{edges.chunk_edges} at a time on each pass (--edge-list stream)")
        return cls(meta, None, None, record, edges)

    def build(self, spec, backend: str, options: dict):
        module = self._streaming_module(spec, backend)
        graph = EdgeList(self.src, self.dst, self.meta.n_vertices, device_edges=self.edges)
        searcher = module.build(graph, RunContext(backend, options))
        from ..device import note_memory
        note_memory()
        return searcher

    @staticmethod
    def _generate(graph: GeneratedKronecker):
        graph.device_edges(0, min(graph.n_edges, 1024))   # compiles the generator: untimed
        t = time.perf_counter()
        src, dst = graph.device_edges()
        return src, dst, time.perf_counter() - t

    @staticmethod
    def _place(src, dst):
        from ..graphs.device_edges import to_device_edges
        return to_device_edges(src, dst)

    @staticmethod
    def _read(graph_dir: Path):
        from ..graphs import device_edges
        t = time.perf_counter()
        edges = device_edges.read_edges_to_device(graph_dir)
        t = time.perf_counter() - t
        log(f"edge list on the GPU in {t:.2f} s ({edges[0].size / max(t, 1e-9) / 1e6:.0f} M "
            f"edges/s)")
        return edges

    def degrees(self):
        from ..build.csr_gpu import nonloop_degrees
        return nonloop_degrees(self.edges.chunks, self.meta.n_vertices)

    def result(self, searcher, result, keep: bool):
        """A one-GPU searcher's result stays on the device unless kept (--save-parents): it is
        validated, counted and profiled there. Copying 12 bytes a vertex to the host and
        counting its levels there took seconds a search at scale 28 (3 GiB), more than the
        search and its GPU validation together."""
        if searcher.device_resident and not keep:
            return searcher.device_result()
        return super().result(searcher, result, keep)

    def count(self, searcher, result, root):
        if isinstance(result.level, np.ndarray):
            return super().count(searcher, result, root)
        sizes = _level_sizes(result.level)     # on the device: see result()
        return searcher.nedge(), len(sizes) - 1, int(sizes.sum())

    def validate(self, searcher, result, root, policy):
        import cupy as cp

        from ..validate.gpu import validate_device
        if policy.on_host:
            if self.host_edges is None:
                self.host_edges = self.edges.to_host()
            return validate(*self.host_edges, cp.asnumpy(result.parent), root,
                            cp.asnumpy(result.level))
        if searcher.device_resident:    # no copy back from the host
            res = searcher.device_result()
            return validate_device(self.edges.chunks, res.parent, res.level, root)
        return validate_device(self.edges.chunks,
                               cp.asarray(result.parent, dtype=cp.int64),
                               cp.asarray(result.level, dtype=cp.int32), root)

    def describe(self) -> dict:
        return {**super().describe(), "validation": "gpu (bfs.validate.gpu)"}


class HostGraphGpuSession(LocalSession):
    """One process on one GPU for an algorithm that keeps the graph in host memory
    (gpu-out-of-core): the edge list stays on the host, the searcher streams its own CSR to
    the device, and every search is validated on the CPU (bfs.validate), since the edge list
    on the device that bfs.validate.gpu needs would not fit where the algorithm is meant to
    be used."""
    gpu = True
    EDGE_LISTS = ("auto", "device", "stream")   # auto and device alike: whole, on the host

    def describe(self) -> dict:
        return {**super().describe(), "validation": "cpu (bfs.validate): graph kept on the host"}


def session_class(spec, backend: str) -> type:
    """The single-process session a run of spec on backend needs. An out-of-core algorithm
    (spec.host_graph) gets the host session: GpuSession would put the edge list on the device
    (8 bytes an edge, and bfs.validate.gpu reads it there), the very memory the algorithm is
    built to do without; so it is validated on the CPU."""
    if backend != "gpu":
        return LocalSession
    return HostGraphGpuSession if spec.host_graph else GpuSession
