"""The graph directory: the one on-disk form of a graph that every stage reads.

    GRAPH_DIR/graph.json        metadata (GraphMeta below)
    GRAPH_DIR/edges/part-*.parquet
                                columns src, dst: uint32 when n_vertices <= 2**32, else uint64;
                                edges in generator order (Kronecker) or file order (SNAP),
                                self-loops and duplicates kept
    GRAPH_DIR/vertices.parquet  SNAP only: column original_id, row i = original id of vertex i

Every writer goes through `atomic_dir`: the directory is built under a temporary sibling and
renamed into place only when complete, so a crash or a bad input never leaves half a graph.
`write_meta`, the last step of every writer, records each data file (path, rows, bytes, sha256)
in graph.json's `files`; every reader goes through `edge_files`, which checks the parts' Parquet
footers against those records (cheap), and `bfs verify` checks the sha256s.
"""
from __future__ import annotations

import json
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..atomic import atomic_dir  # noqa: F401  (graph writers import it from here)
from ..errors import BfsError
from ..log import Progress
from ..integrity import (check_records, column_array, file_problem, file_records, is_count,
                         parquet_table, read_json_object, reading)

GRAPH_JSON = "graph.json"
EDGES_DIR = "edges"
VERTICES_FILE = "vertices.parquet"
PART_GLOB = "part-*.parquet"
EDGE_COLUMNS = ("src", "dst")
# what a reader that finds a damaged graph file tells the user
REMEDY = "regenerate the graph or restore the file"
# reader threads of a pass over an edge list, at most, and the rows a thread decodes at once
# (4 of EdgeWriter's row groups; a batch of 2^22 uint32 pairs is 32 MiB)
READ_THREADS = 8
READ_UNIT_ROWS = 1 << 22


@dataclass
class GraphMeta:
    name: str
    source: str  # "kronecker" or "snap"
    n_vertices: int
    n_edges: int
    directed_source: bool | None  # None: the source does not say (a SNAP file without header)
    # Kronecker only
    scale: int | None = None
    edgefactor: int | None = None
    seeds: list[int] | None = None
    graph500_version: str | None = None
    # SNAP only
    original_file: str | None = None
    original_sha256: str | None = None
    bfs_version: str = __version__
    extra: dict = field(default_factory=dict)
    # the data files, each {path, rows, bytes, sha256}; None for a graph written before they
    # were recorded (still read: its footers are checked, not its digests)
    files: list[dict] | None = None

    def to_json(self) -> dict:
        # directed_source stays even when null, so "the source does not say" is explicit
        return {k: v for k, v in asdict(self).items()
                if k == "directed_source" or (v is not None and v != {})}

    @classmethod
    def from_json(cls, d: dict, where: str = GRAPH_JSON) -> "GraphMeta":
        """GraphMeta from graph.json's object; BfsError naming `where` if it is not one."""
        if not isinstance(d, dict):
            raise BfsError(f"{where}: graph metadata is not a JSON object")
        missing = [k for k in ("name", "source", "n_vertices", "n_edges") if k not in d]
        if missing:
            raise BfsError(f"{where}: not graph metadata (lacks {', '.join(missing)})")
        bad = [k for k in ("n_vertices", "n_edges") if not is_count(d[k])]
        if bad:
            raise BfsError(f"{where}: {', '.join(f'{k} = {d[k]!r}' for k in bad)} is not a "
                           f"count")
        if not isinstance(d.get("extra", {}), dict):
            raise BfsError(f"{where}: 'extra' is not a JSON object")
        if d.get("files") is not None:
            check_records(d["files"], where)
        known = set(cls.__dataclass_fields__)
        return cls(**{"directed_source": None,
                      **{k: v for k, v in d.items() if k in known}})


def id_dtype(n_vertices: int) -> np.dtype:
    """Vertex-id dtype of a graph's edge columns: uint32 while every id fits."""
    return np.dtype(np.uint32) if n_vertices <= 2**32 else np.dtype(np.uint64)


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n")


class EdgeWriter:
    """Appends edge chunks as Parquet part files under DIR/edges (one part per `max_rows`)."""

    def __init__(self, graph_dir: Path, dtype: np.dtype, max_rows: int = 1 << 24):
        self.dir = Path(graph_dir) / EDGES_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dtype = np.dtype(dtype)
        self.schema = pa.schema([("src", pa.from_numpy_dtype(self.dtype)),
                                 ("dst", pa.from_numpy_dtype(self.dtype))])
        self.max_rows = max_rows
        self.n_parts = 0
        self.n_edges = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows_in_part = 0

    def write(self, src: np.ndarray, dst: np.ndarray) -> None:
        if len(src) == 0:
            return
        if self._writer is None or self._rows_in_part >= self.max_rows:
            self._close_part()
            path = self.dir / f"part-{self.n_parts:05d}.parquet"
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
            self.n_parts += 1
        table = pa.table({"src": np.asarray(src, dtype=self.dtype),
                          "dst": np.asarray(dst, dtype=self.dtype)}, schema=self.schema)
        self._writer.write_table(table, row_group_size=1 << 20)
        self._rows_in_part += len(src)
        self.n_edges += len(src)

    def _close_part(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._rows_in_part = 0

    def close(self) -> None:
        self._close_part()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def data_files(graph_dir: Path) -> list[str]:
    """The graph directory's data files, relative: edges/part-*.parquet, then vertices.parquet."""
    graph_dir = Path(graph_dir)
    rels = [f"{EDGES_DIR}/{p.name}" for p in sorted((graph_dir / EDGES_DIR).glob(PART_GLOB))]
    if (graph_dir / VERTICES_FILE).is_file():
        rels.append(VERTICES_FILE)
    return rels


def write_meta(graph_dir: Path, meta: GraphMeta) -> None:
    """Complete a graph directory: record its data files in `meta.files`, then write graph.json.

    Every writer calls this last, inside atomic_dir, once no data file will change."""
    meta.files = file_records(Path(graph_dir), data_files(graph_dir))
    write_json(Path(graph_dir) / GRAPH_JSON, meta.to_json())


def read_meta(graph_dir: str | os.PathLike) -> GraphMeta:
    path = Path(graph_dir) / GRAPH_JSON
    if not path.is_file():
        raise BfsError(f"{graph_dir}: not a graph directory (no {GRAPH_JSON})")
    return GraphMeta.from_json(read_json_object(path, "graph metadata"), str(path))


def edge_files(graph_dir: str | os.PathLike,
               meta: GraphMeta | None = None) -> list[tuple[Path, int]]:
    """The edge part files as (path, rows), after the cheap check every reader makes.

    Each part graph.json records is there, its Parquet footer opens with columns src and dst
    and the recorded row count; no part is unrecorded; the rows add up to n_edges. A graph from
    before `files` was recorded has every part's footer checked and the total. Errors name the
    damaged file."""
    graph_dir = Path(graph_dir)
    meta = meta if meta is not None else read_meta(graph_dir)
    found = [f"{EDGES_DIR}/{p.name}" for p in sorted((graph_dir / EDGES_DIR).glob(PART_GLOB))]
    if meta.files is None:
        records = [{"path": rel} for rel in found]
    else:
        records = [r for r in meta.files if r["path"].startswith(f"{EDGES_DIR}/")]
        listed = {r["path"] for r in records}
        stray = [rel for rel in found if rel not in listed]
        if stray:
            raise BfsError(f"{graph_dir / stray[0]}: not listed in {graph_dir / GRAPH_JSON} "
                           f"(a stray or foreign part file); remove it or regenerate the graph")
    files = []
    for rec in records:
        problem = file_problem(graph_dir, rec, EDGE_COLUMNS)
        if problem:
            raise BfsError(f"{graph_dir / rec['path']}: {problem}; {REMEDY}")
        rows = rec.get("rows")
        if rows is None:
            with reading(graph_dir / rec["path"], REMEDY):
                rows = pq.ParquetFile(graph_dir / rec["path"]).metadata.num_rows
        files.append((graph_dir / rec["path"], rows))
    total = sum(rows for _, rows in files)
    if total != meta.n_edges:
        raise BfsError(f"{graph_dir}: graph.json says {meta.n_edges} edges, the edge files "
                       f"hold {total}; {REMEDY}")
    return files


def read_edges(graph_dir: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The whole edge list as two arrays (src, dst), in stored order, read part by part into
    arrays of the final size (the host holds the list once, plus one part)."""
    graph_dir = Path(graph_dir)
    meta = read_meta(graph_dir)
    files = edge_files(graph_dir, meta)
    dtype = id_dtype(meta.n_vertices)
    if files:
        with reading(files[0][0], REMEDY):
            dtype = pq.ParquetFile(files[0][0]).schema_arrow.field("src").type.to_pandas_dtype()
    src = np.empty(meta.n_edges, dtype=dtype)
    dst = np.empty(meta.n_edges, dtype=dtype)
    pos = 0
    for path, rows in files:
        with reading(path, REMEDY):
            table = parquet_table(path, list(EDGE_COLUMNS))
        if table.num_rows != rows:  # the footer said otherwise a moment ago
            raise BfsError(f"{path}: {table.num_rows} rows read, {rows} recorded; {REMEDY}")
        for out, name in ((src, "src"), (dst, "dst")):
            with reading(path, REMEDY):
                out[pos:pos + rows] = column_array(table, name)
        pos += rows
    return src, dst


def edge_range_reader(graph_dir: str | os.PathLike):
    """read(lo, hi): rows [lo, hi) of the edge list as (src, dst) arrays, reading only the
    Parquet row groups that hold them (a rank's share of a distributed run, or one chunk of
    it: no rank reads the whole list). The part files are checked once, here."""
    graph_dir = Path(graph_dir)
    meta = read_meta(graph_dir)
    files, base = [], 0
    for path, rows in edge_files(graph_dir, meta):
        with reading(path, REMEDY):
            footer = pq.ParquetFile(path).metadata
        groups, at = [], base
        for g in range(footer.num_row_groups):
            groups.append((at, at + footer.row_group(g).num_rows))
            at += footer.row_group(g).num_rows
        files.append((path, groups))
        base += rows
    dtype = id_dtype(meta.n_vertices)
    if files:
        with reading(files[0][0], REMEDY):
            dtype = pq.ParquetFile(files[0][0]).schema_arrow.field("src").type.to_pandas_dtype()

    def read(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        if not 0 <= lo <= hi <= meta.n_edges:
            raise BfsError(f"{graph_dir}: edge rows [{lo}, {hi}) are not within its "
                           f"{meta.n_edges} edges")
        src, dst = np.empty(hi - lo, dtype), np.empty(hi - lo, dtype)
        for path, groups in files:
            wanted = [g for g, (a, b) in enumerate(groups) if a < hi and b > lo]
            if not wanted:
                continue
            with reading(path, REMEDY):
                table = pq.ParquetFile(path).read_row_groups(wanted, columns=list(EDGE_COLUMNS))
            first = groups[wanted[0]][0]
            a, b = max(lo, first), min(hi, first + table.num_rows)
            for out, name in ((src, "src"), (dst, "dst")):
                with reading(path, REMEDY):
                    out[a - lo:b - lo] = column_array(table, name)[a - first:b - first]
        return src, dst

    return read


def read_threads() -> int:
    """Reader threads of a pass over the edge list: the usable cores, at most READ_THREADS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(READ_THREADS, int(cores or 1)))


def read_ahead(items, work, threads: int, name: str):
    """work(*item) for every item, results yielded in the items' order, computed `threads` at a
    time ahead of the consumer on a thread pool (pyarrow's decoding and Numba's kernels release
    the GIL), so at most `threads` results are held at once. A worker's error is raised where
    its result is due; the rest are cancelled."""
    items = list(items)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name) as ex:
        ahead: deque = deque()
        nxt = 0
        try:
            while ahead or nxt < len(items):
                while nxt < len(items) and len(ahead) < threads:
                    ahead.append(ex.submit(work, *items[nxt]))
                    nxt += 1
                yield ahead.popleft().result()
        finally:
            for future in ahead:
                future.cancel()


def edge_row_groups(graph_dir: str | os.PathLike) -> list[tuple[Path, int, int]]:
    """(file, row group, rows) of the edge list in stored order, the parts checked first
    (edge_files); each file's row groups add up to its recorded rows."""
    out = []
    for path, rows in edge_files(graph_dir):
        with reading(path, REMEDY):
            md = pq.ParquetFile(path).metadata
            groups = [(path, rg, md.row_group(rg).num_rows) for rg in range(md.num_row_groups)]
        if sum(g[2] for g in groups) != rows:
            raise BfsError(f"{path}: its row groups hold {sum(g[2] for g in groups)} rows, "
                           f"{rows} recorded; {REMEDY}")
        out += groups
    return out


def _read_edge_rows(path: Path, groups: list[int], rows: int):
    """Row groups of one edge file as (src, dst), decoded on this thread (a ParquetFile per
    call: a reader is not shared between threads), their row count checked."""
    with reading(path, REMEDY):
        # iter_batches joins the row groups into one batch in C++ (no GIL held, no numpy
        # concatenation on this thread)
        batches = list(pq.ParquetFile(path).iter_batches(
            batch_size=max(rows, 1), row_groups=groups, columns=list(EDGE_COLUMNS),
            use_threads=False))
        table = batches[0] if len(batches) == 1 else pa.Table.from_batches(batches)
        src, dst = column_array(table, "src"), column_array(table, "dst")
    if len(src) != rows:
        raise BfsError(f"{path}: row groups {groups[0]}..{groups[-1]} held {len(src)} rows, "
                       f"the footer says {rows}; {REMEDY}")
    return src, dst


def edge_passes(graph_dir, n_edges: int, chunk_rows: int):
    """Streamed passes over a graph directory's edges, for a reader that makes one a pass
    (Kernel 1's two, each validation's): (the rows a batch holds at most, a callable starting a
    pass). Each pass reports its progress, quiet for its first 10 s, then a line every 10 s (at
    scale 27 a pass took 26 s on one reader thread)."""
    rows = max(1, min(chunk_rows, READ_UNIT_ROWS, n_edges))

    def one_pass():
        progress = Progress(f"pass over {graph_dir}", "edges", every=10.0, after=10.0)
        return iter_edge_batches(graph_dir, rows, progress=progress)

    return rows, one_pass


def iter_edge_batches(graph_dir: str | os.PathLike, batch_rows: int = 1 << 22,
                      threads: int | None = None, progress=None):
    """Stream the edge list as (src, dst) array pairs in stored order, never holding the whole
    list; each batch has at most batch_rows rows (and at most READ_UNIT_ROWS) and comes from
    one part file. Consecutive row groups of a file make a batch, decoded `threads` batches at
    a time ahead of the consumer (read_ahead; default read_threads()). Why: pyarrow decodes a
    file's two columns on two threads at most, so a pass over a scale-27 list (2^31 edges,
    zstd) took 26 s on a 16-core host; small batches keep every reader thread busy (on the
    2-core CI box a scale-22 list, 2^26 edges, is read in 0.75 s on two threads against 1.34 s
    before, median of 5 interleaved; batches of 2^24 rows were no faster than before). Row
    groups larger than a batch are cut. progress(done, total) is called after each
    batch (rows so far, rows of the list)."""
    unit_rows = max(1, min(batch_rows, READ_UNIT_ROWS))
    units, cur = [], None          # (path, row groups, rows) of each batch to read
    for path, rg, rows in edge_row_groups(graph_dir):
        if cur is not None and cur[0] == path and cur[2] + rows <= unit_rows:
            cur[1].append(rg)
            cur[2] += rows
        else:
            cur = [path, [rg], rows]
            units.append(cur)
    total, done = sum(u[2] for u in units), 0
    for src, dst in read_ahead(units, _read_edge_rows, threads or read_threads(),
                               "bfs-edges-read"):
        for start in range(0, len(src), unit_rows):
            yield src[start:start + unit_rows], dst[start:start + unit_rows]
        done += len(src)
        if progress is not None:
            progress(done, total)
