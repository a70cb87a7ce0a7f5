"""The graph directory: the one on-disk form of a graph that every stage reads.

    GRAPH_DIR/graph.json        metadata (GraphMeta below)
    GRAPH_DIR/edges/part-*.parquet
                                columns src, dst: uint32 when n_vertices <= 2**32, else uint64;
                                edges in generator order (Kronecker) or file order (SNAP),
                                self-loops and duplicates kept
    GRAPH_DIR/vertices.parquet  SNAP only: column original_id, row i = original id of vertex i

Every writer goes through `atomic_dir`: the directory is built under a temporary sibling and
renamed into place only when complete, so a crash or a bad input never leaves half a graph.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from .. import __version__
from ..errors import BfsError

GRAPH_JSON = "graph.json"
EDGES_DIR = "edges"
VERTICES_FILE = "vertices.parquet"


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

    def to_json(self) -> dict:
        # directed_source stays even when null, so "the source does not say" is explicit
        return {k: v for k, v in asdict(self).items()
                if k == "directed_source" or (v is not None and v != {})}

    @classmethod
    def from_json(cls, d: dict) -> "GraphMeta":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def id_dtype(n_vertices: int) -> np.dtype:
    """Vertex-id dtype of a graph's edge columns: uint32 while every id fits."""
    return np.dtype(np.uint32) if n_vertices <= 2**32 else np.dtype(np.uint64)


@contextlib.contextmanager
def atomic_dir(out: str | os.PathLike, force: bool = False):
    """Yield a temporary sibling of `out`; rename it to `out` only if the block succeeds."""
    out = Path(out)
    if out.exists() and not force:
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # an empty directory (e.g. made by a workflow engine) is replaced
        else:
            raise BfsError(f"{out}: already exists (remove it or pass --force)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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


def write_meta(graph_dir: Path, meta: GraphMeta) -> None:
    write_json(Path(graph_dir) / GRAPH_JSON, meta.to_json())


def read_meta(graph_dir: str | os.PathLike) -> GraphMeta:
    path = Path(graph_dir) / GRAPH_JSON
    if not path.is_file():
        raise BfsError(f"{graph_dir}: not a graph directory (no {GRAPH_JSON})")
    try:
        return GraphMeta.from_json(json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as e:
        raise BfsError(f"{path}: unreadable graph metadata: {e}") from None


def edges_dataset(graph_dir: str | os.PathLike) -> pads.Dataset:
    return pads.dataset(Path(graph_dir) / EDGES_DIR, format="parquet")


def read_edges(graph_dir: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The whole edge list as two arrays (src, dst), in stored order."""
    meta = read_meta(graph_dir)
    table = edges_dataset(graph_dir).to_table(columns=["src", "dst"])
    if table.num_rows != meta.n_edges:
        raise BfsError(f"{graph_dir}: graph.json says {meta.n_edges} edges, "
                       f"{EDGES_DIR}/ holds {table.num_rows}")
    src = table.column("src").to_numpy()
    dst = table.column("dst").to_numpy()
    return src, dst


def iter_edge_batches(graph_dir: str | os.PathLike, batch_rows: int = 1 << 22):
    """Stream the edge list as (src, dst) array pairs, never holding the whole list."""
    for batch in edges_dataset(graph_dir).to_batches(columns=["src", "dst"],
                                                     batch_size=batch_rows):
        yield batch.column(0).to_numpy(), batch.column(1).to_numpy()
