"""Checked files, shared by every directory kind (graph, partition, run).

A directory's metadata (graph.json, manifest.json, run.json) records each data file it holds as
{path (relative), rows (Parquet files), bytes, sha256}, computed when the directory is completed
(`file_records`). Readers make the cheap check before they read (`file_problem`: the file is
there, its Parquet footer opens, the footer's row count and columns are the recorded ones) and
turn any decoding error into a BfsError naming the file (`reading`); `bfs verify` adds the
sha256, which alone catches a flipped byte inside a data page. JSON metadata is read with
`read_json_object`, whose errors name the file too.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import BfsError

HASH_CHUNK = 16 << 20       # bytes per read while hashing (hashlib releases the GIL on these)
PARQUET_MAGIC = b"PAR1"


def hash_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    buf = bytearray(HASH_CHUNK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


def read_json_object(path: Path, what: str) -> dict:
    """A JSON object from `path`; BfsError naming the file if it is unreadable, empty, binary,
    not JSON, or JSON but not an object."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise BfsError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    if not data.strip():
        raise BfsError(f"{path}: {'empty file (0 bytes)' if not data else 'blank file'}, "
                       f"not JSON {what}")
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BfsError(f"{path}: binary data, not JSON {what}") from None
    except json.JSONDecodeError as e:
        raise BfsError(f"{path}: unreadable {what}: {e}") from None
    if not isinstance(obj, dict):
        raise BfsError(f"{path}: unreadable {what}: expected a JSON object, "
                       f"got {type(obj).__name__}")
    return obj


def is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_records(records, where: str) -> list[dict]:
    """A `files` list as read from JSON: a list of {path, bytes, sha256[, rows]} with relative
    paths inside the directory; BfsError naming `where` otherwise."""
    if not isinstance(records, list):
        raise BfsError(f"{where}: 'files' is not a list")
    for i, rec in enumerate(records):
        ok = (isinstance(rec, dict) and isinstance(rec.get("path"), str)
              and is_count(rec.get("bytes")) and isinstance(rec.get("sha256"), str)
              and ("rows" not in rec or is_count(rec["rows"])))
        if ok:
            rel = PurePosixPath(rec["path"])
            ok = not rel.is_absolute() and ".." not in rel.parts and str(rel) not in ("", ".")
        if not ok:
            raise BfsError(f"{where}: 'files' entry {i} is not a {{path, bytes, sha256, rows}} "
                           f"record inside the directory: {json.dumps(rec)[:200]}")
    return records


# ----------------------------------------------------------------------- making the records

def file_record(root: Path, rel: str) -> dict:
    path = Path(root) / rel
    rec = {"path": rel}
    if rel.endswith(".parquet"):
        rec["rows"] = pq.ParquetFile(path).metadata.num_rows
    rec["bytes"] = path.stat().st_size
    rec["sha256"] = sha256_file(path)
    return rec


def file_records(root: Path, rels) -> list[dict]:
    """Records of the files `rels` (relative to root), hashed in a thread pool, in order."""
    rels = list(rels)
    if len(rels) <= 1:
        return [file_record(root, rel) for rel in rels]
    with ThreadPoolExecutor(min(hash_workers(), len(rels))) as pool:
        return list(pool.map(lambda rel: file_record(root, rel), rels))


# ----------------------------------------------------------------------------- the checks

def size_problem(size: int, expected: int) -> str:
    if size == 0:
        return "empty file (0 bytes)"
    if size < expected:
        return f"truncated ({size} of {expected} bytes)"
    return f"{size} bytes, {expected} recorded"


def damage(path: Path, expected_bytes: int | None = None, error: Exception | None = None) -> str:
    """What is wrong with a file that did not open as Parquet (or read as recorded), in words."""
    try:
        size = path.stat().st_size
    except OSError:
        return "missing"
    if not path.is_file():
        return "not a file"
    if size == 0:
        return "empty file (0 bytes)"
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(max(size - 4, 0))
        tail = f.read(4)
    if head != PARQUET_MAGIC:
        return f"not a Parquet file ({size} bytes of something else)"
    if expected_bytes is not None and size != expected_bytes:
        return f"damaged Parquet file: {size_problem(size, expected_bytes)}"
    if tail != PARQUET_MAGIC:
        return "damaged Parquet file (no footer: truncated or overwritten)"
    detail = str(error).splitlines()[0] if error is not None and str(error) else "unreadable"
    return f"damaged Parquet file ({detail})"


def parquet_problem(path: Path, rows: int | None = None, columns=(),
                    expected_bytes: int | None = None) -> str | None:
    """None if `path` opens as Parquet with `rows` rows (when given) and these columns; else
    what is wrong, in words. Reads the footer only."""
    if not path.is_file():
        return "missing" if not path.exists() else "not a file"
    try:
        pf = pq.ParquetFile(path)
        n = pf.metadata.num_rows
        names = pf.schema_arrow.names
    except (pa.ArrowException, OSError, ValueError) as e:
        return damage(path, expected_bytes, e)
    missing = [c for c in columns if c not in names]
    if missing:
        return (f"not the expected Parquet file (columns {', '.join(names) or 'none'}; "
                f"expected {', '.join(columns)})")
    if rows is not None and n != rows:
        return f"{n} rows, {rows} recorded"
    return None


def file_problem(root: Path, rec: dict, columns=(), hashes: bool = False) -> str | None:
    """None if the recorded file is intact as far as checked; else what is wrong, in words.

    Cheap (hashes=False): it exists, and a Parquet file's footer opens and gives the recorded
    row count (a size change alone is left to the sha256: a rewritten file that reads the same
    is not damage a reader can see). hashes=True adds size and sha256 (`bfs verify`)."""
    path = Path(root) / rec["path"]
    if rec["path"].endswith(".parquet"):
        problem = parquet_problem(path, rec.get("rows"), columns, rec.get("bytes"))
    elif not path.is_file():
        problem = "missing" if not path.exists() else "not a file"
    else:
        problem = None
    if problem or not hashes:
        return problem
    size = path.stat().st_size
    if size != rec["bytes"]:
        return size_problem(size, rec["bytes"])
    digest = sha256_file(path)
    if digest != rec["sha256"]:
        return f"sha256 mismatch (recorded {rec['sha256'][:16]}..., file {digest[:16]}...)"
    return None


@contextlib.contextmanager
def reading(path: Path, remedy: str, expected_bytes: int | None = None):
    """Turn a decoding error while reading `path` into a BfsError naming the file."""
    try:
        yield
    except (pa.ArrowException, OSError, ValueError, EOFError) as e:
        raise BfsError(f"{path}: {damage(Path(path), expected_bytes, e)}; {remedy}") from None


def read_parquet(path: Path, remedy: str, columns=None, rows: int | None = None) -> pa.Table:
    """A whole Parquet file, checked first (footer, row count, columns); errors name the file."""
    problem = parquet_problem(Path(path), rows, columns or ())
    if problem:
        raise BfsError(f"{path}: {problem}; {remedy}")
    with reading(path, remedy):
        return parquet_table(path, columns)


def parquet_table(source, columns=None) -> pa.Table:
    """One Parquet file (a path or a buffer) as a table. Not pq.read_table: that goes through
    pyarrow.dataset, whose import pulls in pandas, seconds in every short-lived process."""
    return pq.ParquetFile(source).read(columns=columns)


def table_of_rows(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """Rows (dicts) as a table of this schema, column by column: pa.Table.from_pylist imports
    pandas."""
    return pa.Table.from_pydict({name: [row.get(name) for row in rows] for name in schema.names},
                                schema=schema)


def arrow_without_pandas() -> None:
    """pyarrow asks whether pandas is installed the first time it builds an array, and that
    asking imports it: seconds in every short-lived process (every MPI rank of every run), for
    commands that never use pandas. Answered once here with an ImportError, it stays no for
    those questions; `import pandas` and pyarrow's own conversions still work afterwards."""
    if "pandas" not in sys.modules:
        with _refused("pandas"):
            pa.array([], pa.int8())


def numba_without_blas() -> None:
    """numba's math module asks whether a BLAS is there (for np.dot and np.linalg in compiled
    code) by importing scipy.linalg, the first time any compiled function loads: 3-7 s of
    every short-lived process on a slow core (a third of an MPI rank's start), for kernels that
    call no BLAS. Answered no here, once; scipy itself still imports afterwards."""
    if "scipy.linalg" not in sys.modules and "numba.np.arraymath" not in sys.modules:
        with _refused("scipy.linalg"):
            import numba.np.arraymath  # noqa: F401  (runs the BLAS check now, refused)


@contextlib.contextmanager
def _refused(module: str):
    """While open, importing MODULE (or anything under it) raises ImportError."""
    finder = _Refuse(module)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


class _Refuse:
    def __init__(self, module: str):
        self.module = module

    def find_spec(self, name, path=None, target=None):
        if name == self.module or name.startswith(self.module + "."):
            raise ImportError(f"{self.module} not needed by this command")
        return None


def column_array(table, name) -> np.ndarray:
    """A numeric column of a table or record batch as one numpy array. Through the buffers:
    pyarrow's own to_numpy() imports pandas, seconds in every short-lived process."""
    column = table.column(name)
    chunks = [column] if isinstance(column, pa.Array) else column.chunks
    dtype = _NUMPY_TYPES.get(column.type)
    if dtype is None or any(chunk.null_count for chunk in chunks):
        return column.to_numpy()
    parts = [np.frombuffer(chunk.buffers()[1], dtype=dtype)[chunk.offset:chunk.offset + len(chunk)]
             for chunk in chunks if len(chunk)]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32,
                pa.int64(): np.int64, pa.uint8(): np.uint8, pa.uint16(): np.uint16,
                pa.uint32(): np.uint32, pa.uint64(): np.uint64, pa.float32(): np.float32,
                pa.float64(): np.float64}
