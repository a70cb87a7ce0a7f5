# Converts a SNAP edge-list text file (plain or gzip) into a graph directory (see graphdir.py).
#
# Choices made:
# - The file is streamed in binary chunks cut at the last newline, so memory is bounded by the
#   chunk size plus the vertex map, never by the text; a 1-billion-edge file converts.
# - Each chunk is parsed by one Numba byte loop: no Python-level split() per line, and the
#   first bad line comes back as a byte range and a line index so the error can quote it.
# - Exactly two ids per data line. A third column is an error, not silently dropped: the plain
#   SNAP graphs (web-*, soc-*, p2p-*, email-*, roadNet-*, cit-*, ...) have two columns, while
#   the ones with three (signed soc-sign-*, temporal sx-*/CollegeMsg timestamps) carry
#   meaning that dropping would lose without the user noticing; they can be cut first.
# - Comment lines are those whose first non-blank byte is '#'. The first comment saying
#   "Directed graph" or "Undirected graph" (any case) sets directed_source; neither leaves it null.
# - gzip is recognised by its magic bytes, not the suffix, so a misnamed file still converts.
#   original_sha256 hashes the raw bytes as given (compressed, for a .gz).
# - Vertices are relabelled 0..n-1 in first-seen order (see FirstSeenLabels). Edges are
#   written as uint32 while the vertex count allows it; if it passes 2**32 the parts written
#   so far are rewritten as uint64 on the spot, before a label could wrap.
from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import zlib
from pathlib import Path
from typing import Callable

import numba
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .graphdir import (EDGES_DIR, VERTICES_FILE, EdgeWriter, GraphMeta, atomic_dir, id_dtype,
                       write_meta)
from ..errors import BfsError
from ..integrity import column_array

PARSE_OK = 0
PARSE_NOT_TWO_IDS = 1
PARSE_NEGATIVE = 2
PARSE_OVERFLOW = 3
PARSE_EXTRA_COLUMNS = 4

DECLARED_NONE = -1
DECLARED_UNDIRECTED = 0
DECLARED_DIRECTED = 1

_DIRECTED_GRAPH = np.frombuffer(b"directed graph", dtype=np.uint8)
_UINT64_MAX_DIV10 = np.uint64((2**64 - 1) // 10)
_UINT64_MAX_LAST_DIGIT = np.uint64((2**64 - 1) % 10)
_GZIP_MAGIC = b"\x1f\x8b"
_QUOTE_LIMIT = 200


@numba.njit(cache=True, inline="always")
def _is_blank(c):
    return c == 32 or c == 9 or c == 13  # space, tab, and the CR of CRLF files


@numba.njit(cache=True)
def _skip_blanks(buf, i, end):
    while i < end and _is_blank(buf[i]):
        i += 1
    return i


@numba.njit(cache=True)
def _read_id(buf, i, end):
    """Parse the token starting at buf[i] (non-blank). Returns (value, index after it, status)."""
    negative = buf[i] == 45  # '-'
    if negative:
        i += 1
    value = np.uint64(0)
    n_digits = 0
    non_digit = False
    overflow = False
    while i < end and not _is_blank(buf[i]):
        c = buf[i]
        if c < 48 or c > 57:
            non_digit = True
        elif not overflow:
            digit = np.uint64(c - 48)
            if value > _UINT64_MAX_DIV10 or (value == _UINT64_MAX_DIV10
                                              and digit > _UINT64_MAX_LAST_DIGIT):
                overflow = True
            else:
                value = value * np.uint64(10) + digit
            n_digits += 1
        i += 1
    if non_digit or n_digits == 0:
        return value, i, PARSE_NOT_TWO_IDS
    if negative:
        return value, i, PARSE_NEGATIVE
    if overflow:
        return value, i, PARSE_OVERFLOW
    return value, i, PARSE_OK


@numba.njit(cache=True)
def _declared_direction(buf, start, end):
    """DECLARED_* for a comment line buf[start:end], from "directed graph" / "undirected graph"."""
    m = _DIRECTED_GRAPH.size
    for p in range(start, end - m + 1):
        found = True
        for k in range(m):
            c = buf[p + k]
            if 65 <= c <= 90:
                c += 32
            if c != _DIRECTED_GRAPH[k]:
                found = False
                break
        if found:
            if (p - 2 >= start and (buf[p - 2] | 32) == 117 and (buf[p - 1] | 32) == 110):
                return DECLARED_UNDIRECTED  # "un" before it
            return DECLARED_DIRECTED
    return DECLARED_NONE


@numba.njit(cache=True)
def parse_edges(buf):
    """Parse whole lines of SNAP edge-list bytes (the last one may lack its newline).

    Returns (src, dst, n_lines, status, bad_start, bad_end, bad_line, declared):
    uint64 id arrays of the edges read; how many lines were read; PARSE_* status; on error the
    byte range and 0-based line index (within buf) of the first bad line, parsing stopping
    there; DECLARED_* from the first comment that states the graph's direction.
    """
    n = buf.size
    max_lines = 1
    for i in range(n):
        if buf[i] == 10:
            max_lines += 1
    src = np.empty(max_lines, dtype=np.uint64)
    dst = np.empty(max_lines, dtype=np.uint64)
    n_edges = 0
    n_lines = 0
    status = PARSE_OK
    bad_start = -1
    bad_end = -1
    bad_line = -1
    declared = DECLARED_NONE
    start = 0
    while start < n:
        end = start
        while end < n and buf[end] != 10:
            end += 1
        i = _skip_blanks(buf, start, end)
        if i < end:
            if buf[i] == 35:  # '#'
                if declared == DECLARED_NONE:
                    declared = _declared_direction(buf, i, end)
            else:
                a, i, status = _read_id(buf, i, end)
                if status == PARSE_OK:
                    i = _skip_blanks(buf, i, end)
                    if i == end:
                        status = PARSE_NOT_TWO_IDS
                    else:
                        b, i, status = _read_id(buf, i, end)
                        if status == PARSE_OK:
                            if _skip_blanks(buf, i, end) != end:
                                status = PARSE_EXTRA_COLUMNS
                            else:
                                src[n_edges] = a
                                dst[n_edges] = b
                                n_edges += 1
                if status != PARSE_OK:
                    bad_start = start
                    bad_end = end
                    bad_line = n_lines
                    break
        n_lines += 1
        start = end + 1
    return src[:n_edges], dst[:n_edges], n_lines, status, bad_start, bad_end, bad_line, declared


class FirstSeenLabels:
    """Relabels original ids 0..n-1 in first-seen order over the edge stream.

    The stream is read as src0, dst0, src1, dst1, ...: vertex i is the i-th distinct original
    id met, so the labelling depends only on the file's content (stable, chunk-size free).

    Per chunk, vectorised: np.unique(interleaved ids, return_index, return_inverse) gives the
    chunk's distinct ids with their first position; a searchsorted lookup in the sorted array
    of ids already known finds their labels; the unknown ones are labelled n, n+1, ... in the
    order of their first position, and merged into the sorted array (searchsorted insertion
    points, one O(n) pass). Memory: 16 bytes per distinct vertex.
    """

    def __init__(self):
        self.sorted_ids = np.empty(0, dtype=np.uint64)
        self.labels = np.empty(0, dtype=np.int64)  # labels[k] = label of sorted_ids[k]

    @property
    def n_vertices(self) -> int:
        return len(self.sorted_ids)

    def relabel(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        stream = np.empty(2 * len(src), dtype=np.uint64)
        stream[0::2] = src
        stream[1::2] = dst
        chunk_ids, first_pos, inverse = np.unique(stream, return_index=True, return_inverse=True)
        where = np.searchsorted(self.sorted_ids, chunk_ids)
        known = where < len(self.sorted_ids)
        known[known] = self.sorted_ids[where[known]] == chunk_ids[known]
        chunk_labels = np.empty(len(chunk_ids), dtype=np.int64)
        chunk_labels[known] = self.labels[where[known]]

        new = ~known
        n_new = int(new.sum())
        if n_new:
            new_ids = chunk_ids[new]  # sorted, as chunk_ids is
            new_labels = np.empty(n_new, dtype=np.int64)
            # first positions are distinct, so the faster unstable sort gives the same order
            new_labels[np.argsort(first_pos[new])] = np.arange(self.n_vertices,
                                                               self.n_vertices + n_new)
            chunk_labels[new] = new_labels
            self._merge(where[new], new_ids, new_labels)

        stream_labels = chunk_labels[inverse.reshape(-1)]
        return stream_labels[0::2], stream_labels[1::2]

    def _merge(self, insert_at: np.ndarray, new_ids: np.ndarray, new_labels: np.ndarray) -> None:
        total = self.n_vertices + len(new_ids)
        new_slots = insert_at + np.arange(len(new_ids))
        old_slots = np.ones(total, dtype=bool)
        old_slots[new_slots] = False
        sorted_ids = np.empty(total, dtype=np.uint64)
        labels = np.empty(total, dtype=np.int64)
        sorted_ids[new_slots] = new_ids
        labels[new_slots] = new_labels
        sorted_ids[old_slots] = self.sorted_ids
        labels[old_slots] = self.labels
        self.sorted_ids, self.labels = sorted_ids, labels

    def original_ids(self) -> np.ndarray:
        """original_ids()[i] = the original id of vertex i."""
        out = np.empty(self.n_vertices, dtype=np.uint64)
        out[self.labels] = self.sorted_ids
        return out


class _HashingReader(io.RawIOBase):
    """Reads a binary file, feeding every byte to sha256 and counting them for progress."""

    def __init__(self, raw):
        self.raw = raw
        self.sha256 = hashlib.sha256()
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.raw.readinto(b)
        if n:
            self.sha256.update(memoryview(b)[:n])
            self.bytes_read += n
        return n

    def drain(self) -> None:
        """Hash whatever the decompressor left unread, so the digest covers the whole file."""
        while self.read(1 << 20):
            pass


def default_name(input_path: str | os.PathLike) -> str:
    name = Path(input_path).name
    for suffix in (".gz", ".txt"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _quote(line: bytes) -> str:
    text = line.rstrip(b"\r").decode("utf-8", errors="replace")
    # binary junk quoted as is could break the one-line message (\v, \f, \x1c... end lines)
    text = "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in text)
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "..."


def _parse_error(path, line_number: int, status: int, line: bytes) -> BfsError:
    where = f"{path}:{line_number}"
    got = _quote(line)
    if status == PARSE_NEGATIVE:
        return BfsError(f"{where}: negative id; expected two non-negative integer ids, "
                        f"got '{got}'")
    if status == PARSE_OVERFLOW:
        return BfsError(f"{where}: id above 2**64-1, got '{got}'")
    if status == PARSE_EXTRA_COLUMNS:
        return BfsError(f"{where}: expected two ids, got more columns: '{got}' (weighted, "
                        f"signed or temporal edge lists are not read; keep the first two "
                        f"columns first)")
    return BfsError(f"{where}: expected two non-negative integer ids, got '{got}'")


def _widen_edges(graph_dir: Path, writer: EdgeWriter) -> EdgeWriter:
    """Rewrite the uint32 parts written so far as uint64; return a uint64 writer after them."""
    writer.close()
    narrow_dir = graph_dir / (EDGES_DIR + ".uint32")
    os.replace(graph_dir / EDGES_DIR, narrow_dir)
    wide = EdgeWriter(graph_dir, np.uint64, max_rows=writer.max_rows)
    for part in sorted(narrow_dir.glob("part-*.parquet")):
        for batch in pq.ParquetFile(part).iter_batches(columns=["src", "dst"]):
            wide.write(column_array(batch, 0), column_array(batch, 1))
    shutil.rmtree(narrow_dir)
    return wide


def _edge_chunks(stream, chunk_bytes: int):
    """Yield byte buffers of whole lines; the last may lack its newline."""
    carry = b""
    while True:
        data = stream.read(chunk_bytes)
        if not data:
            if carry:
                yield carry
            return
        buf = carry + data if carry else data
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            carry = buf  # a line longer than chunk_bytes: keep reading until it ends
            continue
        yield memoryview(buf)[:cut]
        carry = buf[cut:]


def convert_snap(input_path: str | os.PathLike, out: str | os.PathLike, name: str | None = None,
                 force: bool = False, chunk_bytes: int = 64 << 20,
                 progress: Callable[[int, int], None] | None = None) -> GraphMeta:
    """Convert a SNAP edge list (text, optionally gzip) into the graph directory `out`.

    Vertices are relabelled in first-seen order (FirstSeenLabels); edges keep file order,
    self-loops and duplicates. Raises BfsError naming file and line on malformed input, and
    leaves nothing at `out` then.
    """
    input_path = Path(input_path)
    if chunk_bytes < 1:
        raise BfsError(f"chunk_bytes must be positive, got {chunk_bytes}")
    if not input_path.is_file():
        raise BfsError(f"{input_path}: no such file")
    total_bytes = input_path.stat().st_size

    with open(input_path, "rb") as raw, atomic_dir(out, force=force) as tmp:
        is_gzip = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        hashing = _HashingReader(raw)
        stream = gzip.GzipFile(fileobj=hashing, mode="rb") if is_gzip else hashing
        labels = FirstSeenLabels()
        declared = DECLARED_NONE
        lines_before = 0
        writer = EdgeWriter(tmp, id_dtype(0))
        try:
            for chunk in _edge_chunks(stream, chunk_bytes):
                buf = np.frombuffer(chunk, dtype=np.uint8)
                (src, dst, n_lines, status, bad_start, bad_end, bad_line,
                 chunk_declared) = parse_edges(buf)
                if declared == DECLARED_NONE:
                    declared = chunk_declared
                if status != PARSE_OK:
                    raise _parse_error(input_path, lines_before + bad_line + 1, status,
                                       bytes(chunk[bad_start:bad_end]))
                lines_before += n_lines
                if len(src):
                    label_src, label_dst = labels.relabel(src, dst)
                    if id_dtype(labels.n_vertices) != writer.dtype:
                        writer = _widen_edges(tmp, writer)
                    writer.write(label_src, label_dst)
                if progress is not None:
                    progress(hashing.bytes_read, total_bytes)
            hashing.drain()
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise BfsError(f"{input_path}: not a readable gzip file: {e}") from None
        finally:
            writer.close()

        if writer.n_edges == 0:
            raise BfsError(f"{input_path}: no edges")
        pq.write_table(pa.table({"original_id": labels.original_ids()}),
                       tmp / VERTICES_FILE, compression="zstd")
        meta = GraphMeta(
            name=name if name is not None else default_name(input_path),
            source="snap",
            n_vertices=labels.n_vertices,
            n_edges=writer.n_edges,
            directed_source=None if declared == DECLARED_NONE else declared == DECLARED_DIRECTED,
            original_file=input_path.name,
            original_sha256=hashing.sha256.hexdigest(),
        )
        write_meta(tmp, meta)
    return meta
