"""The run directory's files and their checked reading (the writer is runner.py, the readers
`bfs validate`, bfs.report and `bfs verify`).

run.json is written last, so it marks a complete run; its `files` records every other file
(path, rows for Parquet files, bytes, sha256). Readers check a file's Parquet footer and row
count against its record before reading it and name the damaged file otherwise; a run from
before `files` was recorded has its footers checked only.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ..errors import BfsError
from ..integrity import check_records, file_problem, read_json_object, read_parquet

RUN_JSON = "run.json"
SEARCHES_FILE = "searches.parquet"
LEVELS_FILE = "levels.parquet"
PARENTS_DIR = "parents"
GRAPH500_FILE = "graph500.txt"
REMEDY = "run it again (bfs run) or restore the file"

SEARCHES_SCHEMA = pa.schema([("root", pa.int64()), ("time_s", pa.float64()),
                             ("nedge", pa.int64()), ("teps", pa.float64()),
                             ("depth", pa.int64()), ("reached", pa.int64()),
                             # valid and validate_s null: not validated (--validate first|none;
                             # nedge, depth and reached then counted from the search's levels)
                             ("valid", pa.bool_()), ("validate_s", pa.float64()),
                             # edges the search read (all ranks): null where the algorithm does
                             # not count them; beside nedge it shows what bottom-up levels save
                             ("edges_examined", pa.int64()),
                             # gpu-out-of-core: bytes streamed host -> device and their seconds
                             ("bytes_copied", pa.int64()), ("copy_s", pa.float64())])
LEVELS_SCHEMA = pa.schema([("root", pa.int64()), ("rank", pa.int64()), ("level", pa.int64()),
                           ("frontier_size", pa.int64()), ("expand_s", pa.float64()),
                           ("comm_s", pa.float64()), ("comm_bytes", pa.int64()),
                           # per level, summed over the ranks, on rank 0's row (null elsewhere
                           # and where the algorithm does not count them)
                           ("edges_examined", pa.int64()), ("direction", pa.string())])
# what readers need of levels.parquet (runs written before the last two columns still read)
LEVELS_REQUIRED = tuple(LEVELS_SCHEMA.names[:7])


def columns_of(rel: str) -> tuple[str, ...]:
    """The columns a reader needs from the run file `rel`."""
    if rel == SEARCHES_FILE:
        return ("root", "time_s", "nedge", "depth", "reached", "valid")
    if rel == LEVELS_FILE:
        return LEVELS_REQUIRED
    if rel.startswith(f"{PARENTS_DIR}/"):
        return ("parent",)
    return ()


def data_files(run_dir: Path) -> list[str]:
    """The run directory's files other than run.json, relative, in a fixed order."""
    run_dir = Path(run_dir)
    rels = [rel for rel in (SEARCHES_FILE, LEVELS_FILE) if (run_dir / rel).is_file()]
    rels += [f"{PARENTS_DIR}/{p.name}" for p in sorted((run_dir / PARENTS_DIR).glob("*.parquet"))]
    if (run_dir / GRAPH500_FILE).is_file():
        rels.append(GRAPH500_FILE)
    return rels


def read_run_json(run_dir: Path) -> dict:
    """run.json as a JSON object with its `files` records checked for shape."""
    path = Path(run_dir) / RUN_JSON
    if not path.is_file():
        raise BfsError(f"{run_dir}: not a run directory (no {RUN_JSON})")
    info = read_json_object(path, "run metadata")
    missing = [k for k in ("valid", "parameters", "graph") if k not in info]
    if missing:
        raise BfsError(f"{path}: not a run record (lacks {', '.join(missing)})")
    if info.get("files") is not None:
        check_records(info["files"], str(path))
    return info


def record(info: dict, rel: str) -> dict | None:
    """The record of `rel` in run.json's files, or None if the run lists none (an older run)."""
    for rec in info.get("files") or ():
        if rec["path"] == rel:
            return rec
    return None


def check_run_file(run_dir: Path, info: dict, rel: str) -> dict | None:
    """The cheap check of one run file (footer, row count, columns); its record, if any."""
    run_dir = Path(run_dir)
    rec = record(info, rel)
    if info.get("files") is not None and rec is None:
        raise BfsError(f"{run_dir / rel}: not listed in {run_dir / RUN_JSON} (a stray or "
                       f"foreign file); {REMEDY}")
    problem = file_problem(run_dir, rec or {"path": rel}, columns_of(rel))
    if problem:
        raise BfsError(f"{run_dir / rel}: {problem}; {REMEDY}")
    return rec


def read_run_table(run_dir: Path, info: dict, rel: str, columns=None) -> pa.Table:
    """A Parquet file of the run, after the footer and row-count check; errors name the file."""
    rec = check_run_file(run_dir, info, rel)
    return read_parquet(Path(run_dir) / rel, REMEDY, columns=columns,
                        rows=rec.get("rows") if rec else None)
