"""Partition a graph directory into per-rank edge blocks for the distributed BFS (the layout is
bfs.partition.layout).

    PART_DIR/manifest.json             grid, bounds, ranges, per-block edge counts, bytes and sha256
    PART_DIR/block-{i}-{j}.parquet     2D; columns src, dst = GLOBAL vertex ids (id_dtype(n))
    PART_DIR/block-{i}.parquet         1D

Each undirected input edge (u, v), u != v, becomes u->v and v->u, so every directed edge lands in
exactly one block; self-loops are dropped and duplicates kept, as in Kernel 1. Blocks are
written in input-edge order in fixed-size row groups with fixed writer options, so the files (and
their sha256) depend on neither the streaming batch size nor the thread count.

The work runs in three stages: reader threads read, decompress and route the input row groups
(`_iter_routed`, Numba kernels that release the GIL), `threads` of them ahead of the main thread;
the main thread copies each routed batch, in input order, into its blocks' row-group buffers
(`_BlockWriter.write`); writer threads encode, zstd-compress and write the full row groups, each
block's in order, different blocks at once (`_WriterPool`), and hash each file when it is closed.
Memory: the p row-group buffers (p * ROW_GROUP_ROWS * 2 ids), at most `threads` routed input row
groups and at most `_queued_row_groups(threads)` row groups waiting to be written.
"""
from __future__ import annotations

import hashlib
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..errors import BfsError
from ..integrity import (column_array, is_count, parquet_table, read_json_object, reading,
                         sha256_file, size_problem)
from .layout import GridLayout
from ..graphs.graphdir import REMEDY as GRAPH_REMEDY
from ..graphs.graphdir import (GRAPH_JSON, GraphMeta, atomic_dir, edge_row_groups, id_dtype,
                               read_ahead, read_meta, write_json)

MANIFEST_JSON = "manifest.json"
KINDS = ("2d", "1d")
BLOCK_GLOB = "block-*.parquet"
# what a reader that finds a damaged block tells the user
REMEDY = "partition the graph again (bfs partition) or restore the file"
# Output row-group size; also the most rows each block buffers, so memory is p * this * 2 ids
# (plus the row groups queued for the writer threads, at most _queued_row_groups of them).
ROW_GROUP_ROWS = 1 << 18
# Block encoding: zstd level 1 on PLAIN pages. Dictionary encoding (pyarrow's default) is the
# costly part of writing random vertex ids and makes the files larger, not smaller; level 1
# compresses ~2.5x faster than level 3 for ~5% more bytes. Any change here changes the bytes
# (and sha256) of every block file, so it is fixed, not tuned per run.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 1, "use_dictionary": False}
# Reader threads and writer threads, each (None: one per usable core; the environment variable
# BFS_PARTITION_THREADS overrides both). The files do not depend on it.
THREADS: int | None = None


def _n_threads() -> int:
    env = os.environ.get("BFS_PARTITION_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise BfsError(f"BFS_PARTITION_THREADS={env!r}: expected a thread count") from None
    elif THREADS is not None:
        n = THREADS
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, int(n or 1))


def _block_file(kind: str, i: int, j: int) -> str:
    return f"block-{i}.parquet" if kind == "1d" else f"block-{i}-{j}.parquet"


class _BlockWriter:
    """One block's Parquet file, written in ROW_GROUP_ROWS row groups whatever the input chunking.

    `write` (main thread) copies edges into the current row-group buffer; full buffers go to the
    `_WriterPool` which encodes, compresses and writes them on its threads, in order.
    """

    def __init__(self, path: Path, dtype: np.dtype, pool: "_WriterPool"):
        self.path = path
        self.dtype = dtype
        self.pool = pool
        self.schema = pa.schema([("src", pa.from_numpy_dtype(dtype)),
                                 ("dst", pa.from_numpy_dtype(dtype))])
        self.writer = pq.ParquetWriter(path, self.schema, **PARQUET_OPTIONS)
        self.rows = ROW_GROUP_ROWS  # read once: the tests shrink it
        self._new_buffer()
        self.n_edges = 0
        self.sha256: str | None = None
        self.bytes: int | None = None
        # the pool's per-block queue: row groups (tables) and finally None (close and hash)
        self.queue: deque = deque()
        self.scheduled = False

    def _new_buffer(self) -> None:
        # a fresh buffer per row group: the queued table still references the previous one
        self.buf_src = np.empty(self.rows, self.dtype)
        self.buf_dst = np.empty(self.rows, self.dtype)
        self.fill = 0

    def write(self, src: np.ndarray, dst: np.ndarray) -> None:
        n, done = len(src), 0
        self.n_edges += n
        while done < n:
            take = min(n - done, self.rows - self.fill)
            self.buf_src[self.fill:self.fill + take] = src[done:done + take]
            self.buf_dst[self.fill:self.fill + take] = dst[done:done + take]
            self.fill += take
            done += take
            if self.fill == self.rows:
                self._emit()

    def _emit(self) -> None:
        table = pa.table({"src": self.buf_src[:self.fill], "dst": self.buf_dst[:self.fill]},
                         schema=self.schema)
        self.pool.put(self, table)
        self._new_buffer()

    def finish(self) -> None:
        """Queue the last (partial) row group, then the close and hash."""
        if self.fill:
            self._emit()
        self.pool.put(self, None)

    # on the pool's threads
    def _write_table(self, table: pa.Table) -> None:
        self.writer.write_table(table, row_group_size=self.rows)

    def _close_and_hash(self) -> None:
        self.writer.close()
        self.sha256 = sha256_file(self.path)
        self.bytes = self.path.stat().st_size


class _WriterPool:
    """Threads that run each block's queue in order; a block is on at most one thread at a time.

    Row groups of different blocks are encoded and zstd-compressed concurrently (pyarrow does that
    outside the GIL). At most `max_queued` row groups wait at a time: `put` blocks beyond that,
    which bounds memory whatever the relative speed of reading and writing.
    """

    def __init__(self, threads: int, max_queued: int):
        self.executor = ThreadPoolExecutor(max_workers=threads,
                                           thread_name_prefix="bfs-partition-write")
        self.lock = threading.Lock()
        self.slots = threading.Semaphore(max_queued)
        self.error: BaseException | None = None
        self.abort = False

    def put(self, block: _BlockWriter, item) -> None:
        self.check()
        if item is not None:
            self.slots.acquire()
        with self.lock:
            block.queue.append(item)
            if block.scheduled:
                return
            block.scheduled = True
        self.executor.submit(self._drain, block)

    def _drain(self, block: _BlockWriter) -> None:
        while True:
            with self.lock:
                if not block.queue:
                    block.scheduled = False
                    return
                item = block.queue.popleft()
            try:
                if self.error is None and not self.abort:
                    if item is None:
                        block._close_and_hash()
                    else:
                        block._write_table(item)
            except BaseException as e:  # noqa: BLE001 - handed to the main thread
                with self.lock:
                    if self.error is None:
                        self.error = e
            finally:
                if item is not None:
                    self.slots.release()

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def shutdown(self, abort: bool = False) -> None:
        self.abort = self.abort or abort
        self.executor.shutdown(wait=True)


def _queued_row_groups(threads: int) -> int:
    """Row groups that may wait for the writer threads: enough to keep each thread busy."""
    return max(4 * threads, 8)


class _OutOfRange(ValueError):
    """An edge endpoint outside [0, n_vertices)."""


class _Router:
    """Routes batches of undirected edges to blocks (the Numba kernels below do the work).

    Vertex -> piece by table: piece_table[v >> shift] is the piece of the bucket's first vertex;
    a bucket (2**shift vertices) is never wider than a piece, so it holds at most one piece
    boundary and one step corrects the guess. The block of u -> v is then
    row_base[piece(u)] + col_of[piece(v)], no division per edge. The kernels release the GIL,
    so the reader threads route their own batches side by side.
    """

    def __init__(self, layout: GridLayout, dtype: np.dtype):
        p, n = layout.n_ranks, layout.n_vertices
        self.n_vertices = n
        self.n_ranks = p
        self.dtype = dtype
        self.bounds = layout.bounds
        self.shift = 0
        while ((n - 1) >> self.shift) >= 64 * p:  # at most 64 buckets per piece
            self.shift += 1
        first = np.arange(((n - 1) >> self.shift) + 1, dtype=np.int64) << self.shift
        self.piece_table = (np.searchsorted(self.bounds, first, side="right") - 1).astype(np.int32)
        pieces = np.arange(p, dtype=np.int32)
        self.row_base = (pieces // layout.cols * layout.cols).astype(np.int32)
        self.col_of = (pieces % layout.cols).astype(np.int32)

    def route(self, src: np.ndarray, dst: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(rank, src, dst) per non-empty block for one batch, in input-edge order.

        Each edge's two directions are interleaved (u->v then v->u) so that a block's order
        depends only on the input order, not on where batches begin and end. Raises _OutOfRange
        on an endpoint outside [0, n).
        """
        m = len(src)
        b_fwd = np.empty(m, np.int32)
        b_rev = np.empty(m, np.int32)
        counts = np.zeros(self.n_ranks, np.int64)
        if _route_count(src, dst, self.bounds, self.shift, self.piece_table, self.row_base,
                        self.col_of, b_fwd, b_rev, counts):
            raise _OutOfRange(f"edge endpoint >= n_vertices ({self.n_vertices})")
        starts = np.zeros(self.n_ranks + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        out_src = np.empty(starts[-1], self.dtype)
        out_dst = np.empty(starts[-1], self.dtype)
        _route_scatter(src, dst, b_fwd, b_rev, starts, out_src, out_dst)
        return [(int(rank), out_src[starts[rank]:starts[rank + 1]],
                 out_dst[starts[rank]:starts[rank + 1]])
                for rank in np.flatnonzero(counts)]


@numba.njit(cache=True, nogil=True)
def _route_count(src, dst, bounds, shift, piece_table, row_base, col_of, b_fwd, b_rev, counts):
    """Per edge the blocks of u->v and v->u (-1: self-loop), and the edges per block.

    Returns the number of endpoints outside [0, n).
    """
    n = bounds[len(bounds) - 1]
    bad = 0
    for k in range(len(src)):
        # int64 first: a uint64 id above 2**63 turns negative and is caught below
        u = np.int64(src[k])
        v = np.int64(dst[k])
        if u < 0 or v < 0 or u >= n or v >= n:
            bad += 1
            b_fwd[k] = -1
            continue
        if u == v:
            b_fwd[k] = -1
            continue
        pu = piece_table[u >> shift]
        while bounds[pu + 1] <= u:
            pu += 1
        pv = piece_table[v >> shift]
        while bounds[pv + 1] <= v:
            pv += 1
        f = row_base[pu] + col_of[pv]
        r = row_base[pv] + col_of[pu]
        b_fwd[k] = f
        b_rev[k] = r
        counts[f] += 1
        counts[r] += 1
    return bad


@numba.njit(cache=True, nogil=True)
def _route_scatter(src, dst, b_fwd, b_rev, starts, out_src, out_dst):
    """Stable scatter: block b's edges from starts[b] on in input order, u->v before v->u."""
    pos = starts[:-1].copy()
    for k in range(len(src)):
        f = b_fwd[k]
        if f < 0:
            continue
        u = src[k]
        v = dst[k]
        i = pos[f]
        out_src[i] = u
        out_dst[i] = v
        pos[f] = i + 1
        r = b_rev[k]
        i = pos[r]
        out_src[i] = v
        out_dst[i] = u
        pos[r] = i + 1


def _read_and_route(path: str, rg: int, batch_rows: int, router: _Router):
    """One row group, read (one ParquetFile per task: a reader is not shared between threads)
    and routed in batches of at most batch_rows: [(n_input_edges, routed)] per batch."""
    with reading(Path(path), GRAPH_REMEDY):
        table = pq.ParquetFile(path).read_row_group(rg, columns=["src", "dst"],
                                                    use_threads=False)
        src, dst = column_array(table, "src"), column_array(table, "dst")
    return [(len(src[start:start + batch_rows]),
             router.route(src[start:start + batch_rows], dst[start:start + batch_rows]))
            for start in range(0, len(src), batch_rows)]


def _iter_routed(graph_dir: Path, router: _Router, batch_rows: int, threads: int):
    """Routed batches of the edge list in stored order: row groups are read, decompressed and
    routed `threads` at a time ahead of the consumer (graphdir.read_ahead), so at most that
    many row groups (2**20 rows from graphdir.EdgeWriter) are in memory here."""
    parts = [(str(path), rg) for path, rg, _ in edge_row_groups(graph_dir)]
    for routed in read_ahead(parts, lambda path, rg: _read_and_route(path, rg, batch_rows, router),
                             threads, "bfs-partition-read"):
        yield from routed


def _stream_into(writers, graph_dir: Path, n_edges: int, layout: GridLayout, dtype: np.dtype,
                 batch_rows: int, progress, threads: int) -> None:
    done = 0
    batches = _iter_routed(graph_dir, _Router(layout, dtype), batch_rows, threads)
    try:
        for n_input, routed in batches:
            for rank, block_src, block_dst in routed:
                writers[rank].write(block_src, block_dst)
            done += n_input
            if progress is not None:
                progress(done, n_edges)
    except _OutOfRange:
        raise BfsError(f"{graph_dir}: edge endpoint >= n_vertices ({layout.n_vertices})") \
            from None
    finally:
        batches.close()  # cancel the reads ahead and wait for the reader threads now
    if done != n_edges:
        raise BfsError(f"{graph_dir}: graph.json says {n_edges} edges, the edge files hold {done}")


def partition_graph(graph_dir, out, rows: int, cols: int, kind: str = "2d", force: bool = False,
                    batch_rows: int = 1 << 22, progress=None) -> dict:
    """Write the partition of `graph_dir` over a rows x cols grid to `out`; return the manifest."""
    if kind not in KINDS:
        raise BfsError(f"partition kind {kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "1d" and cols != 1:
        raise BfsError(f"1d partition: the grid is P x 1, got {rows}x{cols}")
    graph_dir = Path(graph_dir).resolve()
    if not graph_dir.is_dir():
        raise BfsError(f"{graph_dir}: no such graph directory")
    meta = read_meta(graph_dir)
    graph_json = read_json_object(graph_dir / GRAPH_JSON, "graph metadata")
    layout = GridLayout(meta.n_vertices, rows, cols)
    dtype = id_dtype(meta.n_vertices)
    threads = _n_threads()

    with atomic_dir(out, force) as tmp:
        pool = _WriterPool(threads, _queued_row_groups(threads))
        writers = []
        try:
            writers.extend(_BlockWriter(tmp / _block_file(kind, *layout.coords(r)), dtype, pool)
                           for r in range(layout.n_ranks))
            _stream_into(writers, graph_dir, meta.n_edges, layout, dtype, batch_rows, progress,
                         threads)
            for writer in writers:
                writer.finish()  # the last row group, then close and sha256, on the pool
            pool.shutdown()
            pool.check()
        except BaseException:
            # stop the writer threads, then close the p open files, which would otherwise
            # outlive the temporary directory atomic_dir removes
            pool.shutdown(abort=True)
            for writer in writers:
                writer.writer.close()
            raise
        blocks = []
        for rank, writer in enumerate(writers):
            i, j = layout.coords(rank)
            blocks.append({"row": i, "col": j, "rank": rank, "file": writer.path.name,
                           "n_edges": writer.n_edges, "bytes": writer.bytes,
                           "sha256": writer.sha256})
        manifest = {
            "kind": kind,
            "grid": [layout.rows, layout.cols],
            "n_vertices": layout.n_vertices,
            "n_directed_edges": sum(b["n_edges"] for b in blocks),
            "bounds": [int(b) for b in layout.bounds],
            "row_ranges": [list(layout.row_range(i)) for i in range(layout.rows)],
            "col_ranges": [[list(p) for p in layout.col_pieces(j)] for j in range(layout.cols)],
            "blocks": blocks,
            "graph": {"dir": str(graph_dir), "graph_json": graph_json},
            "bfs_version": __version__,
        }
        write_json(tmp / MANIFEST_JSON, manifest)
    return manifest


def is_partition_dir(path) -> bool:
    return (Path(path) / MANIFEST_JSON).is_file()


def load_manifest(part_dir) -> dict:
    """manifest.json, checked for the shape every reader relies on; errors name the file."""
    path = Path(part_dir) / MANIFEST_JSON
    if not path.is_file():
        raise BfsError(f"{part_dir}: not a partition directory (no {MANIFEST_JSON})")
    manifest = read_json_object(path, "manifest")
    missing = [k for k in ("kind", "grid", "n_vertices", "bounds", "blocks", "graph")
               if k not in manifest]
    if missing:
        raise BfsError(f"{path}: manifest lacks {', '.join(missing)}")
    grid = manifest["grid"]
    problem = None
    if manifest["kind"] not in KINDS:
        problem = f"kind {manifest['kind']!r} is not one of {', '.join(KINDS)}"
    elif not (isinstance(grid, list) and len(grid) == 2 and all(is_count(g) and g > 0
                                                                for g in grid)):
        problem = f"grid {grid!r} is not [rows, cols]"
    elif not is_count(manifest["n_vertices"]):
        problem = f"n_vertices {manifest['n_vertices']!r} is not a count"
    elif not isinstance(manifest["blocks"], list) or len(manifest["blocks"]) != grid[0] * grid[1]:
        problem = f"blocks is not a list of {grid[0] * grid[1]} entries"
    else:
        for rank, b in enumerate(manifest["blocks"]):
            if not (isinstance(b, dict) and b.get("rank") == rank
                    and isinstance(b.get("file"), str) and Path(b["file"]).name == b["file"]
                    and b["file"].endswith(".parquet") and is_count(b.get("n_edges"))
                    and isinstance(b.get("sha256"), str)
                    and ("bytes" not in b or is_count(b["bytes"]))):
                problem = f"block entry {rank} is not a {{rank, file, n_edges, sha256}} record"
                break
    graph = manifest["graph"]
    if problem is None:
        if not isinstance(graph, dict) or not isinstance(graph.get("graph_json"), dict):
            problem = "'graph' is not a {dir, graph_json} record"
        else:
            GraphMeta.from_json(graph["graph_json"], f"{path} (graph.graph_json)")
    if problem:
        raise BfsError(f"{path}: {problem}")
    return manifest


def block_files(part_dir, manifest: dict) -> list[dict]:
    """The blocks as file records {path, rows, bytes, sha256} (bytes absent in old manifests)."""
    return [{"path": b["file"], "rows": b["n_edges"], "sha256": b["sha256"],
             **({"bytes": b["bytes"]} if "bytes" in b else {})} for b in manifest["blocks"]]


def read_block(part_dir, manifest: dict, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """One rank's block as (src, dst) global ids, checked against the manifest's sha256 and count."""
    blocks = manifest["blocks"]
    if not 0 <= rank < len(blocks) or blocks[rank]["rank"] != rank:
        raise BfsError(f"{part_dir}: no block for rank {rank} "
                       f"(the partition has {len(blocks)} ranks)")
    entry = blocks[rank]
    path = Path(part_dir) / entry["file"]
    if not path.is_file():
        raise BfsError(f"{path}: block file missing; {REMEDY}")
    # One read serves both the hash and the decode, so the checked bytes are the decoded bytes.
    with reading(path, REMEDY):
        data = path.read_bytes()
    recorded = entry.get("bytes", len(data))
    if len(data) != recorded:
        raise BfsError(f"{path}: {size_problem(len(data), recorded)}; {REMEDY}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise BfsError(f"{path}: sha256 mismatch (manifest {entry['sha256']}, file {digest}); "
                       f"{REMEDY}")
    with reading(path, REMEDY):
        table = parquet_table(pa.BufferReader(data), ["src", "dst"])
    if table.num_rows != entry["n_edges"]:
        raise BfsError(f"{path}: edge count mismatch (manifest {entry['n_edges']}, "
                       f"file {table.num_rows}); {REMEDY}")
    dtype = id_dtype(manifest["n_vertices"])
    with reading(path, REMEDY):
        src = column_array(table, "src").astype(dtype, copy=False)
        dst = column_array(table, "dst").astype(dtype, copy=False)
    return src, dst
