"""`bfs verify DIR`: every file of a graph, partition or run directory checked against the
record its metadata keeps (graph.json `files`, manifest.json `blocks`, run.json `files`):
present, size, Parquet footer, row count and columns, sha256; no unrecorded data file; the
counts add up (edges to graph.json's n_edges, blocks to n_directed_edges). The sha256 is what
catches a flipped byte inside a data page, which leaves the footer readable.

A directory written before its files were recorded (a graph or run without `files`) has its
footers and counts checked and no digests; the result says so.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BfsError
from ..graphs.graphdir import (EDGE_COLUMNS, EDGES_DIR, GRAPH_JSON, PART_GLOB, VERTICES_FILE,
                               data_files as graph_data_files, read_meta)
from ..integrity import file_problem, hash_workers
from ..partition.blocks import BLOCK_GLOB, MANIFEST_JSON, block_files, load_manifest
from . import rundir

KINDS = {GRAPH_JSON: "graph", MANIFEST_JSON: "partition", rundir.RUN_JSON: "run"}


@dataclass
class FileCheck:
    path: str                   # relative to the directory
    problem: str | None = None  # None: intact
    rows: int | None = None
    bytes: int | None = None
    hashed: bool = False


@dataclass
class Verdict:
    kind: str
    directory: Path
    files: list[FileCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the directory as a whole
    notes: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems and all(f.problem is None for f in self.files)

    def damaged(self) -> list[str]:
        """One phrase per damaged file or directory-wide problem, the path first."""
        return ([f"{self.directory / f.path}: {f.problem}" for f in self.files if f.problem]
                + [f"{self.directory}: {p}" for p in self.problems])


def kind_of(directory: Path) -> str:
    if not directory.is_dir():
        raise BfsError(f"{directory}: no such directory")
    for name, kind in KINDS.items():
        if (directory / name).is_file():
            return kind
    raise BfsError(f"{directory}: not a graph, partition or run directory (no "
                   f"{', '.join(KINDS)})")


def _plan(directory: Path, kind: str):
    """(records, columns per record, stray paths, notes) of one directory."""
    notes = []
    if kind == "graph":
        meta = read_meta(directory)
        records = meta.files
        if records is None:
            notes.append(f"{GRAPH_JSON} records no files (a graph written before they were "
                         f"recorded): footers and counts checked, no sha256")
            records = [{"path": rel} for rel in graph_data_files(directory)]
        found = [f"{EDGES_DIR}/{p.name}" for p in sorted((directory / EDGES_DIR).glob(PART_GLOB))]
        columns = [EDGE_COLUMNS if r["path"].startswith(f"{EDGES_DIR}/") else
                   ("original_id",) if r["path"] == VERTICES_FILE else () for r in records]
        return meta, records, columns, found, notes
    if kind == "partition":
        manifest = load_manifest(directory)
        records = block_files(directory, manifest)
        found = [p.name for p in sorted(directory.glob(BLOCK_GLOB))]
        return manifest, records, [("src", "dst")] * len(records), found, notes
    info = rundir.read_run_json(directory)
    records = info.get("files")
    if records is None:
        notes.append(f"{rundir.RUN_JSON} records no files (a run written before they were "
                     f"recorded): footers checked, no sha256")
        records = [{"path": rel} for rel in rundir.data_files(directory)]
    found = rundir.data_files(directory)
    return info, records, [rundir.columns_of(r["path"]) for r in records], found, notes


def verify_dir(directory, progress=None) -> Verdict:
    """Check every file of `directory` (graph, partition or run) against its record.

    progress(done_bytes, total_bytes) is called as files finish. A broken metadata file
    (graph.json, manifest.json, run.json) raises BfsError naming it."""
    directory = Path(directory)
    kind = kind_of(directory)
    meta, records, columns, found, notes = _plan(directory, kind)
    verdict = Verdict(kind, directory, notes=notes)
    listed = {r["path"] for r in records}
    sizes = [(directory / r["path"]).stat().st_size if (directory / r["path"]).is_file() else 0
             for r in records]
    total, done = sum(sizes), 0

    def check(i):
        rec = records[i]
        hashed = "sha256" in rec
        if hashed and "bytes" not in rec:   # a manifest from before block sizes were kept
            rec = {**rec, "bytes": sizes[i]}
        return FileCheck(rec["path"], file_problem(directory, rec, columns[i], hashes=hashed),
                         rec.get("rows"), sizes[i], hashed)

    with ThreadPoolExecutor(hash_workers()) as pool:
        for i, result in enumerate(pool.map(check, range(len(records)))):
            verdict.files.append(result)
            done += sizes[i]
            if progress is not None:
                progress(done, total)
    for rel in found:
        if rel not in listed:
            verdict.files.append(FileCheck(rel, f"not listed in {_metadata_name(kind)} "
                                                f"(a stray or foreign file)"))
    verdict.problems += _count_problems(kind, meta, verdict, directory)
    return verdict


def _metadata_name(kind: str) -> str:
    return {v: k for k, v in KINDS.items()}[kind]


def _rows(directory: Path, check: FileCheck) -> int | None:
    if check.rows is not None or check.problem is not None:
        return check.rows
    import pyarrow.parquet as pq
    try:
        return pq.ParquetFile(directory / check.path).metadata.num_rows
    except Exception:   # the check above opened it; a race with a writer is not ours to judge
        return None


def _count_problems(kind: str, meta, verdict: Verdict, directory: Path) -> list[str]:
    """The counts add up: parts to n_edges, vertices to n_vertices, blocks to the manifest."""
    problems = []
    files = [f for f in verdict.files if f.path.endswith(".parquet")]
    if kind == "graph":
        parts = [f for f in files if f.path.startswith(f"{EDGES_DIR}/")]
        rows = [_rows(directory, f) for f in parts]
        if None not in rows and sum(rows) != meta.n_edges:
            problems.append(f"{GRAPH_JSON} says {meta.n_edges} edges, the edge files hold "
                            f"{sum(rows)}")
        for f in files:
            if f.path == VERTICES_FILE:
                n = _rows(directory, f)
                if n is not None and n != meta.n_vertices:
                    f.problem = f"{n} rows for {meta.n_vertices} vertices"
    elif kind == "partition":
        declared = meta.get("n_directed_edges")
        held = sum(b["n_edges"] for b in meta["blocks"])
        if declared is not None and declared != held:
            problems.append(f"{MANIFEST_JSON} says {declared} directed edges, its blocks "
                            f"{held}")
    return problems
