"""Damaged input never ends in a traceback: every command that reads files, fed truncated,
empty and foreign versions of each, exits 1 with one `bfs: error:` line naming the file and
leaves no output; `bfs verify` catches what only a sha256 can (a flipped byte inside a data
page); the shared cache (`--cache`) hands out only verified entries."""
import gzip
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bfs.cli import main
from bfs.graphs.graphdir import read_edges, read_meta
from helpers import SNAP_DIR, bfs_cli

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
JUNK = bytes((i * 167 + 13) % 256 for i in range(3000))   # not UTF-8, not JSON
KIND_KEY = "kron-s8-e16-seeds-2-3-v3.0"                   # bfs.harness.cache's key for g


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "foreign":      # a file of another kind under this name
        path.write_bytes(JUNK if path.suffix == ".json" else PNG)
    elif how == "alien":        # valid JSON, but not this metadata
        path.write_text(json.dumps({"hello": "world", "n_edges": "many"}))
    else:
        raise ValueError(how)


def flip_data_byte(path: Path) -> None:
    """Flip one byte inside the first data page: same size, footer intact, other content."""
    before = pq.ParquetFile(path).metadata.num_rows
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[4 + (len(data) - 8 - footer - 4) // 4] ^= 0x5A
    path.write_bytes(bytes(data))
    assert pq.ParquetFile(path).metadata.num_rows == before   # the cheap check cannot see it


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """An intact graph, partition, run, SNAP .gz and cache, each to be copied and damaged."""
    root = tmp_path_factory.mktemp("intact")
    assert main(["generate", "kronecker", "--scale", "8", "--out", str(root / "graph")]) == 0
    assert main(["partition", str(root / "graph"), "--grid", "1x1",
                 "--out", str(root / "part")]) == 0
    assert main(["run", str(root / "graph"), "--algorithm", "seq-csr", "--roots", "2",
                 "--save-parents", "1", "--out", str(root / "run")]) == 0
    with open(SNAP_DIR / "email-Eu-core.txt", "rb") as f:
        (root / "email.txt.gz").write_bytes(gzip.compress(f.read()))
    cache = root / "cache"
    shutil.copytree(root / "graph", cache / "graphs" / KIND_KEY)
    assert main(["partition", str(root / "graph"), "--grid", "1x2", "--cache", str(cache),
                 "--out", str(root / "part-1x2")]) == 0
    return root


def parents_file(run: Path) -> str:
    return f"parents/{next((run / 'parents').iterdir()).name}"


def cache_block(cache: Path) -> str:
    return str(next(cache.glob("partitions/*/1x2/block-0-0.parquet")).relative_to(cache))


# (case id, directory copied from base, damaged file inside it, command; {d} is the copy,
#  {out} a path that must stay absent, {graph} the intact base graph)
CASES = [
    ("snap-gz", "email.txt.gz", "", ["generate", "snap", "{d}", "--out", "{out}"]),
    ("partition-part", "graph", "edges/part-00000.parquet",
     ["partition", "{d}", "--grid", "1x2", "--out", "{out}"]),
    ("partition-json", "graph", "graph.json",
     ["partition", "{d}", "--grid", "1x2", "--out", "{out}"]),
    ("run-part", "graph", "edges/part-00000.parquet",
     ["run", "{d}", "--algorithm", "seq-csr", "--roots", "2", "--out", "{out}"]),
    ("run-json", "graph", "graph.json",
     ["run", "{d}", "--algorithm", "seq-csr", "--roots", "2", "--out", "{out}"]),
    ("run2d-block", "part", "block-0-0.parquet",
     ["run", "{d}", "--algorithm", "2d", "--roots", "2", "--out", "{out}"]),
    ("run2d-manifest", "part", "manifest.json",
     ["run", "{d}", "--algorithm", "2d", "--roots", "2", "--out", "{out}"]),
    ("validate-searches", "run", "searches.parquet", ["validate", "{d}"]),
    ("validate-parents", "run", parents_file, ["validate", "{d}"]),
    ("validate-json", "run", "run.json", ["validate", "{d}"]),
    ("validate-graph", "graph", "edges/part-00000.parquet",
     ["validate", "{run}", "--graph", "{d}"]),
    ("table-searches", "run", "searches.parquet",
     ["report", "table", "strong_scaling", "{d}", "--out", "{out}/t"]),
    ("table-levels", "run", "levels.parquet",
     ["report", "table", "graphs", "{d}", "--out", "{out}/t"]),
    ("table-json", "run", "run.json",
     ["report", "table", "kernel1", "{d}", "--out", "{out}/t"]),
    ("figure-levels", "run", "levels.parquet",
     ["report", "figure", "frontier", "{d}", "--out", "{out}/f"]),
    ("figure-json", "run", "run.json",
     ["report", "figure", "strong_scaling", "{d}", "--out", "{out}/f"]),
    ("verify-graph-part", "graph", "edges/part-00000.parquet", ["verify", "{d}"]),
    ("verify-graph-json", "graph", "graph.json", ["verify", "{d}"]),
    ("verify-block", "part", "block-0-0.parquet", ["verify", "{d}"]),
    ("verify-manifest", "part", "manifest.json", ["verify", "{d}"]),
    ("verify-run-searches", "run", "searches.parquet", ["verify", "{d}"]),
    ("verify-run-parents", "run", parents_file, ["verify", "{d}"]),
    ("verify-run-text", "run", "graph500.txt", ["verify", "{d}"]),
    ("verify-run-json", "run", "run.json", ["verify", "{d}"]),
    ("cache-graph-part", "cache", f"graphs/{KIND_KEY}/edges/part-00000.parquet",
     ["generate", "kronecker", "--scale", "8", "--cache", "{d}", "--out", "{out}"]),
    ("cache-graph-json", "cache", f"graphs/{KIND_KEY}/graph.json",
     ["generate", "kronecker", "--scale", "8", "--cache", "{d}", "--out", "{out}"]),
    ("cache-block", "cache", cache_block,
     ["partition", "{graph}", "--grid", "1x2", "--cache", "{d}", "--out", "{out}"]),
]


def damaged_case(base: Path, tmp_path: Path, case, how: str):
    """Copy the case's directory, damage its file; (argv, damaged path, output path)."""
    _, source, rel, argv = case
    copy = tmp_path / f"{Path(source).stem.split('.')[0]}-copy"
    if (base / source).is_dir():
        shutil.copytree(base / source, copy)
    else:
        copy = copy.with_name(Path(source).name)
        shutil.copyfile(base / source, copy)
    if callable(rel):
        rel = rel(copy)
    target = copy / rel if rel else copy
    damage(target, how)
    out = tmp_path / "out"
    values = {"d": copy, "out": out, "graph": base / "graph", "run": base / "run"}
    return [a.format(**values) for a in argv], target, out


def assert_one_line_naming(target: Path, out: Path, err: str, stdout: str = "") -> None:
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith("bfs: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    # the damaged file, by its directory and name (paths may be printed resolved)
    assert f"{target.parent.name}/{target.name}" in errors[0], errors[0]
    assert "Traceback" not in err + stdout
    assert not out.exists(), "an output was left behind"
    assert not list(out.parent.glob(f".{out.name}*")), "a temporary output was left behind"


# every case truncated, empty and foreign; metadata files also as JSON of another shape
DAMAGES = [(case, how) for case in CASES
           for how in ("truncated", "empty", "foreign")
           + (("alien",) if isinstance(case[2], str) and case[2].endswith(".json") else ())]


@pytest.mark.parametrize("case, how", DAMAGES, ids=[f"{c[0]}-{h}" for c, h in DAMAGES])
def test_damaged_input_is_one_line_naming_the_file(base, tmp_path, capsys, case, how):
    argv, target, out = damaged_case(base, tmp_path, case, how)
    capsys.readouterr()
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert_one_line_naming(target, out, captured.err, captured.out)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in {
    "snap-gz", "partition-part", "run-json", "run2d-block", "validate-parents",
    "table-searches", "figure-levels", "verify-graph-part", "cache-block"}],
    ids=lambda c: c[0])
def test_damaged_input_in_a_real_process(base, tmp_path, case):
    """The same as whole processes: what reaches the terminal, MPI singleton included."""
    argv, target, out = damaged_case(base, tmp_path, case, "truncated")
    proc = bfs_cli(*argv, check=False)
    assert proc.returncode == 1, proc.stderr
    assert_one_line_naming(target, out, proc.stderr, proc.stdout)


def test_snap_foreign_file_is_quoted_on_one_line(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_bytes(b"1 2\n" + bytes(range(256)) + b"\n3 4\n")
    proc = bfs_cli("generate", "snap", junk, "--out", tmp_path / "g", check=False)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "junk.txt:2:" in proc.stderr
    assert not (tmp_path / "g").exists()


# ----------------------------------------------------------------------------- bfs verify

@pytest.mark.parametrize("name", ["graph", "part", "run", "part-1x2"])
def test_verify_passes_intact_directories(base, capsys, name):
    assert main(["verify", str(base / name)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].endswith("every sha256 checked)") and "intact" in out


@pytest.mark.parametrize("name, rel", [("graph", "edges/part-00000.parquet"),
                                       ("part", "block-0-0.parquet"),
                                       ("run", parents_file),
                                       ("run", "searches.parquet")])
def test_verify_catches_a_flipped_byte(base, tmp_path, capsys, name, rel):
    copy = tmp_path / name
    shutil.copytree(base / name, copy)
    rel = rel(copy) if callable(rel) else rel
    flip_data_byte(copy / rel)
    assert main(["verify", str(copy)]) == 1
    captured = capsys.readouterr()
    assert f"DAMAGED  {rel}: sha256 mismatch" in captured.out
    assert captured.err.startswith("bfs: error:") and rel in captured.err
    assert captured.err.count("\n") == 1


def test_verify_names_every_damaged_file_and_strays(base, tmp_path, capsys):
    copy = tmp_path / "run"
    shutil.copytree(base / "run", copy)
    damage(copy / "levels.parquet", "truncated")
    (copy / "graph500.txt").unlink()
    shutil.copyfile(copy / "searches.parquet", copy / parents_file(copy).replace(
        "root-", "root-9"))
    assert main(["verify", str(copy)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 problems" in err
    assert "levels.parquet: damaged Parquet file: truncated" in err
    assert "graph500.txt: missing" in err
    assert "not listed in run.json" in err


def test_verify_refuses_other_directories(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 1
    assert "not a graph, partition or run directory" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "nowhere")]) == 1
    assert "no such directory" in capsys.readouterr().err


def test_graph_without_file_records_is_still_read_and_checked(base, tmp_path, capsys):
    """A graph written before graph.json recorded its files: footers and counts still count."""
    old = tmp_path / "old"
    shutil.copytree(base / "graph", old)
    meta = json.loads((old / "graph.json").read_text())
    del meta["files"]
    (old / "graph.json").write_text(json.dumps(meta))
    src, dst = read_edges(old)
    assert len(src) == len(dst) == meta["n_edges"] and read_meta(old).files is None
    assert main(["verify", str(old)]) == 0
    assert "no sha256" in capsys.readouterr().out
    damage(old / "edges" / "part-00000.parquet", "truncated")
    assert main(["run", str(old), "--algorithm", "seq-csr", "--out", str(tmp_path / "r")]) == 1
    assert "old/edges/part-00000.parquet: damaged Parquet file" in capsys.readouterr().err


def test_stray_part_file_is_refused(base, tmp_path, capsys):
    g = tmp_path / "g"
    shutil.copytree(base / "graph", g)
    shutil.copyfile(g / "edges" / "part-00000.parquet", g / "edges" / "part-00001.parquet")
    assert main(["partition", str(g), "--grid", "1x1", "--out", str(tmp_path / "p")]) == 1
    assert "edges/part-00001.parquet: not listed in" in capsys.readouterr().err


def test_every_writer_records_its_files(tmp_path):
    """kronecker, grid, snap (with vertices.parquet) and generate's timing rewrite of graph.json."""
    for args in (["kronecker", "--scale", "6"], ["lattice", "--rows", "3", "--cols", "4"],
                 ["snap", str(SNAP_DIR / "email-Eu-core.txt")]):
        out = tmp_path / args[0]
        assert main(["generate", *args, "--out", str(out)]) == 0
        meta = read_meta(out)
        assert meta.extra["generation_time"] > 0
        paths = [f["path"] for f in meta.files]
        assert paths[0] == "edges/part-00000.parquet"
        assert ("vertices.parquet" in paths) == (args[0] == "snap")
        assert sum(f["rows"] for f in meta.files if f["path"].startswith("edges/")) == \
            meta.n_edges
        assert main(["verify", str(out)]) == 0


def test_debug_shows_the_traceback(base, tmp_path):
    g = tmp_path / "g"
    shutil.copytree(base / "graph", g)
    damage(g / "graph.json", "foreign")
    proc = bfs_cli("run", g, "--algorithm", "seq-csr", "--out", tmp_path / "r", check=False,
                   env={"BFS_DEBUG": "1"})
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "BfsError" in proc.stderr


# --------------------------------------------------------------------------------- the cache

def test_second_generation_and_partition_come_from_the_cache(tmp_path, capsys):
    cache = tmp_path / "cache"
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["generate", "kronecker", "--scale", "7", "--cache", str(cache),
                 "--out", str(first)]) == 0
    assert "stored" in capsys.readouterr().err
    assert main(["generate", "kronecker", "--scale", "7", "--cache", str(cache),
                 "--name", "again", "--out", str(second)]) == 0
    captured = capsys.readouterr()
    assert "taken from" in captured.err and "(from the cache)" in captured.out
    for a, b in zip(sorted((first / "edges").iterdir()), sorted((second / "edges").iterdir())):
        assert a.read_bytes() == b.read_bytes()
    assert read_meta(second).name == "again" and read_meta(second).files == read_meta(first).files
    assert read_meta(second).extra["cached_from"].endswith("kron-s7-e16-seeds-2-3-v3.0")
    # the partition of either graph (same files) is one cache entry
    assert main(["partition", str(first), "--grid", "1x2", "--cache", str(cache),
                 "--out", str(tmp_path / "p1")]) == 0
    assert "stored" in capsys.readouterr().err
    assert main(["partition", str(second), "--grid", "1x2", "--cache", str(cache),
                 "--out", str(tmp_path / "p2")]) == 0
    assert "taken from" in capsys.readouterr().err
    manifest = json.loads((tmp_path / "p2" / "manifest.json").read_text())
    assert manifest["graph"]["dir"] == str(second.resolve())
    assert main(["verify", str(tmp_path / "p2")]) == 0
    # other parameters are other entries
    assert main(["generate", "kronecker", "--scale", "7", "--seeds", "5", "6", "--cache",
                 str(cache), "--out", str(tmp_path / "third")]) == 0
    assert "stored" in capsys.readouterr().err
    assert len(list((cache / "graphs").iterdir())) == 2
    assert not list(cache.rglob(".*tmp*"))


def test_cache_entry_of_other_parameters_is_refused(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["generate", "kronecker", "--scale", "6", "--out", str(tmp_path / "s6")]) == 0
    shutil.copytree(tmp_path / "s6", cache / "graphs" / "kron-s7-e16-seeds-2-3-v3.0")
    assert main(["generate", "kronecker", "--scale", "7", "--cache", str(cache),
                 "--out", str(tmp_path / "g")]) == 1
    err = capsys.readouterr().err
    assert "kron-s7-e16-seeds-2-3-v3.0/graph.json" in err and "remove the cache entry" in err
    assert not (tmp_path / "g").exists()


def test_unwritable_cache_leaves_the_output_complete(tmp_path, capsys):
    cache = tmp_path / "cache"
    cache.write_text("a file, not a directory")
    assert main(["generate", "kronecker", "--scale", "6", "--cache", str(cache),
                 "--out", str(tmp_path / "g")]) == 0
    assert "could not store" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "g")]) == 0
