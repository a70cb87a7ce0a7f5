"""A shared cache of graph and partition directories (`--cache DIR` of `bfs generate kronecker`
and `bfs partition`; the workflow's `cache` key):

    DIR/graphs/kron-s{S}-e{E}-seeds-{U1}-{U2}-v{VERSION}   a Kronecker graph, by its parameters
    DIR/partitions/{GRAPH_ID}/{LAYOUT}                     a partition (RxC for 2d, pP for 1d) of
                                                           the graph whose files digest to GRAPH_ID

Keys come from what defines the content, never from a graph's name, so two configs that give
different graphs one name cannot collide. An entry found is verified in full (`bfs verify`:
every sha256) and its parameters compared with the request before it is copied into --out; a
damaged or mismatched entry is an error naming it, never silently replaced. An entry missing is
made as usual into --out and then copied into the cache under a temporary sibling, verified, and
renamed into place, so concurrent jobs or users never see half an entry (the first to finish
wins; the others keep theirs in --out). Entries are made readable by others (the umask applies).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from ..atomic import temp_dir
from ..errors import BfsError
from ..graphs.graphdir import GRAPH_JSON, atomic_dir, edge_files, read_meta, write_json
from ..integrity import read_json_object
from ..partition.blocks import MANIFEST_JSON, load_manifest
from .verify import verify_dir
from ..log import logger


log = logger("bfs cache")


def kronecker_entry(cache: Path, scale: int, edgefactor: int, seeds, version: str) -> Path:
    u1, u2 = (int(s) for s in seeds)
    return Path(cache) / "graphs" / f"kron-s{scale}-e{edgefactor}-seeds-{u1}-{u2}-v{version}"


def graph_id(files: list[dict]) -> str:
    """A graph's content identity: a digest of its recorded files (path, rows, sha256)."""
    canon = json.dumps([[f["path"], f.get("rows"), f["sha256"]] for f in files])
    return hashlib.sha256(canon.encode()).hexdigest()[:24]


def layout_name(kind: str, rows: int, cols: int) -> str:
    return f"p{rows}" if kind == "1d" else f"{rows}x{cols}"


def partition_entry(cache: Path, files: list[dict], kind: str, rows: int, cols: int) -> Path:
    return Path(cache) / "partitions" / graph_id(files) / layout_name(kind, rows, cols)


def _verified(entry: Path) -> None:
    """Raise BfsError naming each damaged file of a cache entry (or its unverifiable state)."""
    remedy = f"the cache entry is damaged: remove {entry} to have it made again"
    try:
        verdict = verify_dir(entry)
    except BfsError as e:
        raise BfsError(f"{e}; {remedy}") from None
    if not verdict.intact:
        raise BfsError(f"{'; '.join(verdict.damaged())}; {remedy}")
    if verdict.notes:
        raise BfsError(f"{entry}: a cache entry without sha256 records cannot be verified; "
                       f"remove it to have it made again")


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy the files under src into the existing directory dst (modes from the umask)."""
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        elif path.is_file():
            shutil.copyfile(path, target)


def _take(entry: Path, out: Path, force: bool, edit) -> None:
    """Copy a verified entry to `out` atomically; edit(tmp) adjusts its metadata there."""
    with atomic_dir(out, force) as tmp:
        try:
            _copy_tree(entry, tmp)
        except OSError as e:
            raise BfsError(f"copying the cache entry {entry} to {out}: {e}") from None
        edit(tmp)


def store(out: Path, entry: Path, edit=None) -> bool:
    """Copy the finished directory `out` into the cache as `entry`; True if it is there now.

    A failure to store (no permission, a full disk) is reported and leaves the cache as it was:
    the command's own output is complete either way."""
    out, entry = Path(out), Path(entry)
    if entry.exists():
        return True
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_dir(entry.parent, f".{entry.name}.tmp-")   # others share the cache
        _copy_tree(out, tmp)
        if edit is not None:
            edit(tmp)
        verdict = verify_dir(tmp)
        if not verdict.intact:
            log(f"not storing {out}: the copy is damaged ({'; '.join(verdict.damaged())})")
            return False
        os.rename(tmp, entry)
        tmp = None
    except OSError as e:
        if entry.is_dir():      # another job stored the same entry first: theirs is as good
            log(f"{entry} was stored meanwhile by another job")
            return True
        log(f"could not store {out} as {entry}: {e}")
        return False
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"stored {out} as {entry}")
    return True


# -------------------------------------------------------------------------------- graphs

def take_kronecker(entry: Path, out: Path, name: str, force: bool, scale: int, edgefactor: int,
                   seeds, version: str):
    """The cached Kronecker graph copied to `out` (its GraphMeta), or None if not cached."""
    if not entry.exists():
        return None
    _verified(entry)
    meta = read_meta(entry)
    want = {"source": "kronecker", "scale": scale, "edgefactor": edgefactor,
            "seeds": [int(s) for s in seeds], "graph500_version": version}
    have = {k: getattr(meta, k) for k in want}
    if have != want:
        raise BfsError(f"{entry / GRAPH_JSON}: the cache entry holds {have}, not the graph its "
                       f"name stands for ({want}); remove the cache entry {entry}")

    def rename(tmp: Path) -> None:
        graph = read_json_object(tmp / GRAPH_JSON, "graph metadata")
        graph["name"] = name
        graph.setdefault("extra", {})["cached_from"] = str(entry.resolve())
        write_json(tmp / GRAPH_JSON, graph)

    _take(entry, out, force, rename)
    log(f"{out}: taken from {entry} (every sha256 verified)")
    return read_meta(out)


# ---------------------------------------------------------------------------- partitions

def partition_cached(graph_dir, out, rows: int, cols: int, kind: str, force: bool, cache: Path,
                     make) -> dict:
    """The partition of graph_dir from the cache, or made by make() and then stored there."""
    graph_dir = Path(graph_dir).resolve()
    meta = read_meta(graph_dir)
    if meta.files is None:
        log(f"{graph_dir} records no file digests (an older graph): not using the cache")
        return make()
    edge_files(graph_dir, meta)     # the input's cheap check, as if its edges were read
    entry = partition_entry(cache, meta.files, kind, rows, cols)
    graph_json = read_json_object(graph_dir / GRAPH_JSON, "graph metadata")
    if not entry.exists():
        manifest = make()
        store(Path(out), entry)
        return manifest
    _verified(entry)
    manifest = load_manifest(entry)
    cached_files = manifest["graph"]["graph_json"].get("files")
    if (manifest["kind"], manifest["grid"]) != (kind, [rows, cols]) or cached_files is None \
            or graph_id(cached_files) != graph_id(meta.files):
        raise BfsError(f"{entry / MANIFEST_JSON}: the cache entry is a {manifest['kind']} "
                       f"{manifest['grid']} partition of another graph, not the one its path "
                       f"stands for; remove the cache entry {entry}")

    def point_at_graph(tmp: Path) -> None:
        m = read_json_object(tmp / MANIFEST_JSON, "manifest")
        m["graph"] = {"dir": str(graph_dir), "graph_json": graph_json}
        m["cached_from"] = str(entry.resolve())
        write_json(tmp / MANIFEST_JSON, m)

    _take(entry, Path(out), force, point_at_graph)
    log(f"{out}: taken from {entry} (every sha256 verified)")
    return load_manifest(out)
