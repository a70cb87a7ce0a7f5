import dataclasses
import gzip
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import bfs.graphs.snap as snap
from bfs.errors import BfsError
from bfs.graphs.graphdir import read_edges, read_meta
from bfs.graphs.snap import convert_snap

DATA = Path(__file__).resolve().parent.parent / "data" / "snap"
REAL_FILES = ["email-Eu-core.txt", "p2p-Gnutella09.txt"]


def write(tmp_path, content: bytes, filename="web.txt") -> Path:
    path = tmp_path / filename
    path.write_bytes(content)
    return path


def convert(path, out, **kwargs):
    """Convert, and return (meta, labelled src, labelled dst, original ids)."""
    meta = convert_snap(path, out, **kwargs)
    src, dst = read_edges(out)
    original_id = pq.read_table(Path(out) / "vertices.parquet").column("original_id")
    return meta, src, dst, original_id.to_numpy()


def original_pairs(src, dst, original_id):
    return list(zip(original_id[src].tolist(), original_id[dst].tolist()))


def test_first_seen_labelling_exact(tmp_path):
    path = write(tmp_path, b"30 10\n10 20\n20 30\n50 30\n30 30\n10 20\n")
    meta, src, dst, original_id = convert(path, tmp_path / "g")
    assert original_id.tolist() == [30, 10, 20, 50]
    assert src.tolist() == [0, 1, 2, 3, 0, 1]
    assert dst.tolist() == [1, 2, 0, 0, 0, 2]  # self-loop and duplicate kept
    assert src.dtype == np.uint32 and dst.dtype == np.uint32
    assert original_id.dtype == np.uint64
    assert (meta.n_vertices, meta.n_edges) == (4, 6)


def test_headers_comments_and_metadata(tmp_path):
    text = (b"# Directed graph (each unordered pair of nodes is saved once): web.txt\n"
            b"# Nodes: 3 Edges: 3\n"
            b"# FromNodeId\tToNodeId\n"
            b"1\t2\n"
            b"\n"
            b"   # an indented comment in the middle\n"
            b"2\t3\n"
            b"   \t \n"
            b"3\t1\n")
    path = write(tmp_path, text, "web-Stanford.txt")
    meta, src, dst, original_id = convert(path, tmp_path / "g")
    assert original_pairs(src, dst, original_id) == [(1, 2), (2, 3), (3, 1)]
    on_disk = json.loads((tmp_path / "g" / "graph.json").read_text())
    assert on_disk["directed_source"] is True
    assert on_disk["source"] == "snap"
    assert on_disk["name"] == "web-Stanford"
    assert on_disk["original_file"] == "web-Stanford.txt"
    assert on_disk["n_vertices"] == 3 and on_disk["n_edges"] == 3
    assert read_meta(tmp_path / "g") == meta


@pytest.mark.parametrize("header, expected", [
    (b"# Undirected graph: ../../data/output/roadNet-CA.txt\n", False),
    (b"# DIRECTED GRAPH\n", True),
    (b"# Nodes: 2 Edges: 1\n", None),
    (b"", None),
])
def test_directed_source(tmp_path, header, expected):
    path = write(tmp_path, header + b"1 2\n")
    convert_snap(path, tmp_path / "g")
    on_disk = json.loads((tmp_path / "g" / "graph.json").read_text())
    assert "directed_source" in on_disk
    assert on_disk["directed_source"] is expected


def test_crlf_tabs_spaces_and_mixed_runs_agree(tmp_path):
    pairs = [(5, 7), (7, 9), (9, 5), (0, 0)]
    variants = {
        "spaces": b"".join(b"%d %d\n" % p for p in pairs),
        "tabs": b"".join(b"%d\t%d\n" % p for p in pairs),
        "mixed": b"".join(b" \t%d \t  \t%d\t \n" % p for p in pairs),
        "crlf": b"".join(b"%d\t%d\r\n" % p for p in pairs),
        "crlf_trailing_blanks": b"".join(b"%d %d \t\r\n" % p for p in pairs) + b"\r\n",
    }
    for label, text in variants.items():
        path = write(tmp_path, text, f"{label}.txt")
        _, src, dst, original_id = convert(path, tmp_path / label)
        assert original_pairs(src, dst, original_id) == pairs, label
        assert src.tolist() == [0, 1, 2, 3], label


def test_gzip_equals_plain(tmp_path):
    text = (DATA / "p2p-Gnutella09.txt").read_bytes()
    plain = write(tmp_path, text, "p2p.txt")
    gz = write(tmp_path, gzip.compress(text), "p2p.txt.gz")
    meta_plain, *plain_result = convert(plain, tmp_path / "plain")
    meta_gz, *gz_result = convert(gz, tmp_path / "gz", chunk_bytes=4096)
    for a, b in zip(plain_result, gz_result):
        np.testing.assert_array_equal(a, b)
    assert meta_gz.name == meta_plain.name == "p2p"
    assert meta_gz.original_file == "p2p.txt.gz"
    assert meta_gz.original_sha256 == hashlib.sha256(gz.read_bytes()).hexdigest()
    assert (meta_gz.n_vertices, meta_gz.n_edges) == (meta_plain.n_vertices, meta_plain.n_edges)


def test_64_bit_ids(tmp_path):
    top, half = 2**64 - 1, 2**63
    path = write(tmp_path, f"{top} {half}\n{half} 0\n0 {top}\n".encode())
    _, src, dst, original_id = convert(path, tmp_path / "g")
    assert original_id.tolist() == [top, half, 0]
    assert original_pairs(src, dst, original_id) == [(top, half), (half, 0), (0, top)]


@pytest.mark.parametrize("filename", REAL_FILES)
def test_real_snap_file_round_trip(tmp_path, filename):
    path = DATA / filename
    meta, src, dst, original_id = convert(path, tmp_path / "g")
    file_pairs = np.loadtxt(path, dtype=np.uint64, comments="#").reshape(-1, 2)
    np.testing.assert_array_equal(original_id[src], file_pairs[:, 0])
    np.testing.assert_array_equal(original_id[dst], file_pairs[:, 1])
    assert meta.n_edges == len(file_pairs)
    assert meta.n_vertices == len(np.unique(file_pairs)) == len(original_id)
    # first-seen: the first occurrence of vertex i in the src/dst stream comes before vertex i+1's
    stream = np.stack([src, dst], axis=1).reshape(-1)
    _, first = np.unique(stream, return_index=True)
    assert np.all(np.diff(first) > 0)
    assert meta.original_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_known_real_counts(tmp_path):
    counts = {f: convert_snap(DATA / f, tmp_path / f).n_vertices for f in REAL_FILES}
    assert counts == {"email-Eu-core.txt": 1005, "p2p-Gnutella09.txt": 8114}


@pytest.mark.parametrize("chunk_bytes", [1, 7, 13])
def test_tiny_chunks_match_default(tmp_path, chunk_bytes):
    text = (b"# Undirected graph: a header line much longer than the chunk size\n"
            b"123456789 987654321\n"
            b"\t1 2\r\n"
            b"\n"
            b"987654321 18446744073709551615\n"
            b"2 123456789")  # last line without newline
    path = write(tmp_path, text)
    default = convert(path, tmp_path / "default")
    tiny = convert(path, tmp_path / "tiny", chunk_bytes=chunk_bytes)
    # the same metadata; the part files themselves differ in row groups, so do their records
    assert dataclasses.replace(default[0], files=None) == dataclasses.replace(tiny[0], files=None)
    assert [f["rows"] for f in default[0].files] == [f["rows"] for f in tiny[0].files]
    assert default[0].directed_source is False
    for a, b in zip(default[1:], tiny[1:]):
        np.testing.assert_array_equal(a, b)
    assert tiny[0].n_edges == 4


def test_tiny_chunks_on_real_file(tmp_path):
    path = DATA / "email-Eu-core.txt"
    default = convert(path, tmp_path / "default")
    tiny = convert(path, tmp_path / "tiny", chunk_bytes=1000)
    assert dataclasses.replace(default[0], files=None) == dataclasses.replace(tiny[0], files=None)
    for a, b in zip(default[1:], tiny[1:]):
        np.testing.assert_array_equal(a, b)


MALFORMED = [
    (b"a 5", 3, "expected two non-negative integer ids, got 'a 5'"),
    (b"5 x7", 3, "got '5 x7'"),
    (b"5", 3, "expected two non-negative integer ids, got '5'"),
    (b"1.5 2", 3, "got '1.5 2'"),
    (b"-3 4", 3, "negative id"),
    (b"4\t-3\r", 3, "got '4\t-3'"),
    (b"1 18446744073709551616", 3, "id above 2**64-1"),
    (b"99999999999999999999999 1", 3, "id above 2**64-1"),
    (b"1 2 1", 3, "more columns: '1 2 1'"),
    (b"1 2 # trailing comment", 3, "more columns"),
]


@pytest.mark.parametrize("bad_line, line_number, message", MALFORMED)
@pytest.mark.parametrize("chunk_bytes", [5, 64 << 20])
def test_malformed_line(tmp_path, bad_line, line_number, message, chunk_bytes):
    path = write(tmp_path, b"# header\n1 2\n" + bad_line + b"\n3 4\n")
    out = tmp_path / "g"
    with pytest.raises(BfsError) as info:
        convert_snap(path, out, chunk_bytes=chunk_bytes)
    text = str(info.value)
    assert text.startswith(f"{path}:{line_number}: ")
    assert message in text
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]  # no temporary sibling left either


def test_error_line_number_counts_across_chunks(tmp_path):
    lines = [b"%d %d" % (i, i + 1) for i in range(1000)]
    lines[876] = b"876 oops"
    path = write(tmp_path, b"\n".join(lines) + b"\n", "web.txt")
    for chunk_bytes in (3, 100, 64 << 20):
        with pytest.raises(BfsError, match=r"web\.txt:877: .*got '876 oops'"):
            convert_snap(path, tmp_path / "g", chunk_bytes=chunk_bytes)
        assert not (tmp_path / "g").exists()


def test_error_in_gzip_names_line(tmp_path):
    path = write(tmp_path, gzip.compress(b"1 2\n2 3\n-3 1\n"), "web.txt.gz")
    with pytest.raises(BfsError, match=r"web\.txt\.gz:3: negative id"):
        convert_snap(path, tmp_path / "g")
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("content", [b"", b"# Directed graph\n# Nodes: 0 Edges: 0\n", b"\n\r\n \n"])
def test_no_edges(tmp_path, content):
    path = write(tmp_path, content)
    with pytest.raises(BfsError, match=rf"^{re.escape(str(path))}: no edges$"):
        convert_snap(path, tmp_path / "g")
    assert not (tmp_path / "g").exists()


def test_missing_input_and_existing_output(tmp_path):
    with pytest.raises(BfsError, match="no such file"):
        convert_snap(tmp_path / "absent.txt", tmp_path / "g")
    path = write(tmp_path, b"1 2\n")
    convert_snap(path, tmp_path / "g")
    with pytest.raises(BfsError, match="already exists"):
        convert_snap(path, tmp_path / "g")
    assert convert_snap(path, tmp_path / "g", force=True, name="renamed").name == "renamed"
    assert read_meta(tmp_path / "g").name == "renamed"


def test_corrupt_gzip(tmp_path):
    path = write(tmp_path, gzip.compress(b"1 2\n" * 1000)[:40], "web.txt.gz")
    with pytest.raises(BfsError, match="gzip"):
        convert_snap(path, tmp_path / "g")
    assert not (tmp_path / "g").exists()


def test_sha256_and_progress(tmp_path):
    path = DATA / "p2p-Gnutella09.txt"
    calls = []
    meta = convert_snap(path, tmp_path / "g", chunk_bytes=50_000,
                        progress=lambda done, total: calls.append((done, total)))
    assert meta.original_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    size = path.stat().st_size
    assert len(calls) >= size // 50_000
    assert all(total == size for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert calls[-1][0] == size


def test_widening_to_uint64_keeps_edges(tmp_path, monkeypatch):
    # Past 2**32 vertices the edge columns must be uint64; a tiny threshold exercises the same
    # rewrite of the parts already written.
    monkeypatch.setattr(snap, "id_dtype",
                        lambda n: np.dtype(np.uint32) if n <= 3 else np.dtype(np.uint64))
    path = write(tmp_path, b"10 20\n20 30\n30 10\n40 10\n10 50\n")
    _, src, dst, original_id = convert(path, tmp_path / "g", chunk_bytes=6)
    assert src.dtype == np.uint64 and dst.dtype == np.uint64
    assert original_pairs(src, dst, original_id) == [(10, 20), (20, 30), (30, 10), (40, 10),
                                                     (10, 50)]
    parts = sorted((tmp_path / "g" / "edges").iterdir())
    assert all(pq.read_schema(p).field("src").type == "uint64" for p in parts)
    assert not (tmp_path / "g" / "edges.uint32").exists()
