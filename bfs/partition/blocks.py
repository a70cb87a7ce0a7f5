"""Partition a graph directory into per-rank edge blocks for the distributed BFS (the layout is
bfs.partition.layout).

    PART_DIR/manifest.json             grid, bounds, ranges, per-block edge counts, bytes and sha256
    PART_DIR/block-{i}-{j}.parquet     2D; columns src, dst = GLOBAL vertex ids (id_dtype(n))
    PART_DIR/block-{i}.parquet         1D

Each undirected input edge (u, v), u != v, becomes u->v and v->u, so every directed edge lands in
exactly one block; self-loops are dropped and duplicates kept, as in Kernel 1. Blocks are
written in input-edge order in fixed-size row groups, so the files (and their sha256) do not
depend on the streaming batch size.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..errors import BfsError
from ..integrity import is_count, read_json_object, reading, sha256_file, size_problem
from .layout import GridLayout
from ..graphs.graphdir import (GRAPH_JSON, GraphMeta, atomic_dir, id_dtype, iter_edge_batches,
                               read_meta, write_json)

MANIFEST_JSON = "manifest.json"
KINDS = ("2d", "1d")
BLOCK_GLOB = "block-*.parquet"
# what a reader that finds a damaged block tells the user
REMEDY = "partition the graph again (bfs partition) or restore the file"
# Output row-group size; also the most rows each block buffers, so memory is p * this * 2 ids.
ROW_GROUP_ROWS = 1 << 18


def _block_file(kind: str, i: int, j: int) -> str:
    return f"block-{i}.parquet" if kind == "1d" else f"block-{i}-{j}.parquet"


class _BlockWriter:
    """One block's Parquet file, written in ROW_GROUP_ROWS row groups whatever the input chunking."""

    def __init__(self, path: Path, dtype: np.dtype):
        self.dtype = dtype
        self.schema = pa.schema([("src", pa.from_numpy_dtype(dtype)),
                                 ("dst", pa.from_numpy_dtype(dtype))])
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.n_pending = 0
        self.n_edges = 0

    def write(self, src: np.ndarray, dst: np.ndarray) -> None:
        self.pending.append((src, dst))
        self.n_pending += len(src)
        self.n_edges += len(src)
        if self.n_pending >= ROW_GROUP_ROWS:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if not self.pending:
            return
        src = np.concatenate([s for s, _ in self.pending])
        dst = np.concatenate([d for _, d in self.pending])
        n_full = len(src) - len(src) % ROW_GROUP_ROWS
        end = len(src) if final else n_full
        for start in range(0, end, ROW_GROUP_ROWS):
            stop = min(start + ROW_GROUP_ROWS, end)
            self.writer.write_table(pa.table({"src": src[start:stop], "dst": dst[start:stop]},
                                             schema=self.schema), row_group_size=ROW_GROUP_ROWS)
        self.pending = [] if end == len(src) else [(src[end:], dst[end:])]
        self.n_pending = len(src) - end

    def close(self) -> None:
        self._flush(final=True)
        self.writer.close()


def _route(layout: GridLayout, src: np.ndarray, dst: np.ndarray, dtype: np.dtype):
    """Yield (rank, src, dst) per non-empty block for one batch, in input-edge order.

    Each edge's two directions are interleaved (u->v then v->u) so that a block's order depends
    only on the input order, not on where batches begin and end.
    """
    keep = src != dst
    pairs = np.stack([src[keep], dst[keep]], axis=1).astype(dtype, copy=False)
    directed_src = pairs.ravel()
    directed_dst = pairs[:, ::-1].ravel()
    # One piece lookup per endpoint serves both directions of the edge.
    src_piece = layout.piece_of(pairs[:, 0])
    dst_piece = layout.piece_of(pairs[:, 1])
    cols = layout.cols
    block = np.stack([src_piece // cols * cols + dst_piece % cols,
                      dst_piece // cols * cols + src_piece % cols], axis=1).ravel()
    # Small-integer keys let numpy's stable sort use radix sort: linear in the batch.
    key_dtype = np.uint16 if layout.n_ranks <= 1 << 16 else np.int64
    order = np.argsort(block.astype(key_dtype), kind="stable")
    counts = np.bincount(block, minlength=layout.n_ranks)
    starts = np.concatenate([[0], np.cumsum(counts)])
    directed_src = directed_src[order]
    directed_dst = directed_dst[order]
    for rank in np.flatnonzero(counts):
        lo, hi = starts[rank], starts[rank + 1]
        yield int(rank), directed_src[lo:hi], directed_dst[lo:hi]


def _stream_into(writers, graph_dir: Path, n_edges: int, layout: GridLayout, dtype: np.dtype,
                 batch_rows: int, progress) -> None:
    done = 0
    for src, dst in iter_edge_batches(graph_dir, batch_rows):
        if len(src) and max(int(src.max()), int(dst.max())) >= layout.n_vertices:
            raise BfsError(f"{graph_dir}: edge endpoint >= n_vertices ({layout.n_vertices})")
        for rank, block_src, block_dst in _route(layout, src, dst, dtype):
            writers[rank].write(block_src, block_dst)
        done += len(src)
        if progress is not None:
            progress(done, n_edges)
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

    with atomic_dir(out, force) as tmp:
        writers = [_BlockWriter(tmp / _block_file(kind, *layout.coords(r)), dtype)
                   for r in range(layout.n_ranks)]
        try:
            _stream_into(writers, graph_dir, meta.n_edges, layout, dtype, batch_rows, progress)
        except BaseException:
            # p open files would otherwise outlive the temporary directory atomic_dir removes
            for writer in writers:
                writer.writer.close()
            raise
        blocks = []
        for rank, writer in enumerate(writers):
            writer.close()
            i, j = layout.coords(rank)
            name = _block_file(kind, i, j)
            blocks.append({"row": i, "col": j, "rank": rank, "file": name,
                           "n_edges": writer.n_edges, "bytes": (tmp / name).stat().st_size,
                           "sha256": sha256_file(tmp / name)})
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
        table = pq.read_table(pa.BufferReader(data), columns=["src", "dst"])
    if table.num_rows != entry["n_edges"]:
        raise BfsError(f"{path}: edge count mismatch (manifest {entry['n_edges']}, "
                       f"file {table.num_rows}); {REMEDY}")
    dtype = id_dtype(manifest["n_vertices"])
    with reading(path, REMEDY):
        src = table.column("src").to_numpy().astype(dtype, copy=False)
        dst = table.column("dst").to_numpy().astype(dtype, copy=False)
    return src, dst
