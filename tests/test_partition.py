"""Partition: every directed edge in exactly its block, the layout exact, the files checked."""
import hashlib
import json
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest

from bfs.partition import blocks
from bfs.errors import BfsError
from bfs.graphs.graphdir import EdgeWriter, GraphMeta, atomic_dir, write_meta
from bfs.partition import (GridLayout, is_partition_dir, load_manifest, partition_graph,
                           read_block)

N_VERTICES = 23  # prime: no grid below divides it, so pieces are unequal
GRIDS_2D = [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2), (1, 3)]
GRIDS = [(r, c, "2d") for r, c in GRIDS_2D] + [(p, 1, "1d") for p in range(1, 5)]



def directed_halves(src, dst) -> Counter:
    """Both directions of every non-loop input edge, with multiplicity: what the blocks hold."""
    out = Counter()
    for u, v in zip(src.tolist(), dst.tolist()):
        if u != v:
            out[(u, v)] += 1
            out[(v, u)] += 1
    return out

def make_graph(path, src, dst, n_vertices, parts_of=50):
    with atomic_dir(path) as tmp:
        # several part files so that streaming crosses file boundaries
        with EdgeWriter(tmp, np.uint32, max_rows=parts_of) as writer:
            for start in range(0, len(src), parts_of):
                writer.write(src[start:start + parts_of], dst[start:start + parts_of])
        write_meta(tmp, GraphMeta("test", "kronecker", n_vertices, len(src), False))
    return path


@pytest.fixture
def graph(tmp_path):
    rng = np.random.default_rng(7)
    src = rng.integers(0, N_VERTICES, 160).astype(np.uint32)
    dst = rng.integers(0, N_VERTICES, 160).astype(np.uint32)
    loops = np.array([3, 3, 22], np.uint32)
    dups_src, dups_dst = np.array([0, 0, 5], np.uint32), np.array([22, 22, 9], np.uint32)
    src = np.concatenate([src, loops, dups_src, dups_dst])
    dst = np.concatenate([dst, loops, dups_dst, dups_src])
    return make_graph(tmp_path / "g", src, dst, N_VERTICES), src, dst


def brute_piece(bounds, v):
    return next(k for k in range(len(bounds) - 1) if bounds[k] <= v < bounds[k + 1])


@pytest.mark.parametrize("rows,cols,kind", GRIDS)
def test_blocks_hold_every_directed_edge_once_by_the_row_col_rule(graph, tmp_path, rows, cols,
                                                                  kind):
    gdir, src, dst = graph
    out = tmp_path / "p"
    manifest = partition_graph(gdir, out, rows, cols, kind=kind)
    p = rows * cols
    bounds = [k * N_VERTICES // p for k in range(p + 1)]
    assert manifest["bounds"] == bounds
    assert manifest["kind"] == kind and manifest["grid"] == [rows, cols]
    assert manifest["n_vertices"] == N_VERTICES
    assert manifest["graph"]["dir"] == str(gdir.resolve())
    assert manifest["graph"]["graph_json"]["n_edges"] == len(src)
    assert manifest["row_ranges"] == [[bounds[i * cols], bounds[(i + 1) * cols]]
                                      for i in range(rows)]
    assert manifest["col_ranges"] == [[[bounds[i * cols + j], bounds[i * cols + j + 1]]
                                       for i in range(rows)] for j in range(cols)]
    assert load_manifest(out) == manifest
    assert GridLayout.from_manifest(manifest).bounds.tolist() == bounds
    assert is_partition_dir(out) and not is_partition_dir(gdir)

    union = Counter()
    for rank, block in enumerate(manifest["blocks"]):
        i, j = divmod(rank, cols)
        name = f"block-{i}.parquet" if kind == "1d" else f"block-{i}-{j}.parquet"
        assert (block["row"], block["col"], block["rank"], block["file"]) == (i, j, rank, name)
        assert block["sha256"] == hashlib.sha256((out / name).read_bytes()).hexdigest()
        bsrc, bdst = read_block(out, manifest, rank)
        assert bsrc.dtype == np.uint32 and bdst.dtype == np.uint32
        assert len(bsrc) == block["n_edges"]
        for u, v in zip(bsrc.tolist(), bdst.tolist()):
            assert brute_piece(bounds, u) // cols == i
            assert brute_piece(bounds, v) % cols == j
            union[(u, v)] += 1

    expected = directed_halves(src, dst)
    assert union == expected
    assert manifest["n_directed_edges"] == sum(expected.values())
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [b["file"] for b in manifest["blocks"]] + ["manifest.json"])


@pytest.mark.parametrize("n,rows,cols", [(1, 1, 1), (7, 1, 7), (7, 7, 1), (23, 2, 3), (23, 3, 2),
                                         (100, 4, 3), (101, 3, 5), (64, 4, 4)])
def test_layout_is_exact(n, rows, cols):
    layout = GridLayout(n, rows, cols)
    p = rows * cols
    bounds = [k * n // p for k in range(p + 1)]
    assert layout.bounds.tolist() == bounds
    every = np.arange(n)
    assert layout.piece_of(every).tolist() == [brute_piece(bounds, v) for v in range(n)]
    assert np.array_equal(layout.piece_of(every.astype(np.uint64)), layout.piece_of(every))
    assert layout.row_of(every).tolist() == [brute_piece(bounds, v) // cols for v in range(n)]
    assert layout.col_of(every).tolist() == [brute_piece(bounds, v) % cols for v in range(n)]

    in_rows = Counter(v for i in range(rows) for v in range(*layout.row_range(i)))
    assert in_rows == Counter(range(n))
    for i in range(rows):
        lo, hi = layout.row_range(i)
        assert set(layout.row_of(np.arange(lo, hi)).tolist()) <= {i}

    in_cols = Counter()
    for j in range(cols):
        members = [v for lo, hi in layout.col_pieces(j) for v in range(lo, hi)]
        in_cols.update(members)
        assert layout.col_size(j) == len(members)
        members = np.array(members, dtype=np.int64)
        local = layout.col_local(j, members)
        # pieces are listed in column order, so local indices count up through them
        assert local.tolist() == list(range(len(members)))
        assert layout.col_global(j, local).tolist() == members.tolist()
        assert int(layout.col_local(j, members[-1])) == len(members) - 1
        assert set(layout.col_of(members).tolist()) == {j}
        with pytest.raises(ValueError):
            layout.col_global(j, len(members))
    assert in_cols == Counter(range(n))

    for rank in range(p):
        assert layout.rank(*layout.coords(rank)) == rank


def test_layout_rejects_foreign_vertices():
    layout = GridLayout(23, 2, 3)
    with pytest.raises(ValueError):
        layout.col_local(0, 3)  # piece 1 belongs to column 1
    with pytest.raises(ValueError):
        layout.piece_of(23)


def test_layout_bounds_exact_for_huge_graphs():
    n = 2**40 + 3
    layout = GridLayout(n, 3, 5)
    assert layout.bounds.tolist() == [k * n // 15 for k in range(16)]
    v = np.array([0, n - 1, layout.bounds[7]], dtype=np.uint64)
    assert layout.piece_of(v).tolist() == [0, 14, 7]
    assert int(layout.col_global(4, layout.col_local(4, n - 1))) == n - 1


@pytest.mark.parametrize("rows,cols", [(0, 1), (1, 0), (4, 6), (24, 1)])
def test_bad_grids_are_refused(graph, tmp_path, rows, cols):
    gdir, _, _ = graph
    with pytest.raises(BfsError, match="grid"):
        partition_graph(gdir, tmp_path / "p", rows, cols)
    assert not (tmp_path / "p").exists()


def test_bad_kind_and_missing_graph_are_refused(graph, tmp_path):
    gdir, _, _ = graph
    with pytest.raises(BfsError, match="1d"):
        partition_graph(gdir, tmp_path / "p", 2, 2, kind="1d")
    with pytest.raises(BfsError, match="kind"):
        partition_graph(gdir, tmp_path / "p", 2, 2, kind="3d")
    with pytest.raises(BfsError, match="no such graph directory"):
        partition_graph(tmp_path / "nowhere", tmp_path / "p", 1, 1)
    assert not (tmp_path / "p").exists()


def test_existing_output_needs_force(graph, tmp_path):
    gdir, _, _ = graph
    first = partition_graph(gdir, tmp_path / "p", 2, 2)
    with pytest.raises(BfsError, match="already exists"):
        partition_graph(gdir, tmp_path / "p", 1, 2)
    assert load_manifest(tmp_path / "p") == first
    assert partition_graph(gdir, tmp_path / "p", 1, 2, force=True)["grid"] == [1, 2]
    assert load_manifest(tmp_path / "p")["grid"] == [1, 2]


def test_failing_partition_leaves_nothing(graph, tmp_path):
    gdir, _, _ = graph

    def interrupt(done, total):
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        partition_graph(gdir, tmp_path / "p", 2, 2, batch_rows=10, progress=interrupt)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_out_of_range_endpoint_fails_cleanly(tmp_path):
    src, dst = np.array([0, 1, 9], np.uint32), np.array([1, 2, 0], np.uint32)
    gdir = make_graph(tmp_path / "g", src, dst, n_vertices=5)
    with pytest.raises(BfsError, match="n_vertices"):
        partition_graph(gdir, tmp_path / "p", 1, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_progress_reaches_total(graph, tmp_path):
    gdir, src, _ = graph
    calls = []
    partition_graph(gdir, tmp_path / "p", 2, 1, batch_rows=32, progress=lambda *a: calls.append(a))
    assert len(calls) > 1
    assert calls[-1] == (len(src), len(src))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_batch_size_does_not_change_the_files(graph, tmp_path, monkeypatch):
    gdir, _, _ = graph
    # small row groups so blocks span several groups and batches cut across them
    monkeypatch.setattr(blocks, "ROW_GROUP_ROWS", 8)
    default = partition_graph(gdir, tmp_path / "a", 2, 3)
    tiny = partition_graph(gdir, tmp_path / "b", 2, 3, batch_rows=3)
    assert default["blocks"] == tiny["blocks"]
    for block in default["blocks"]:
        assert (tmp_path / "a" / block["file"]).read_bytes() == \
            (tmp_path / "b" / block["file"]).read_bytes()


def test_damaged_blocks_are_reported(graph, tmp_path):
    gdir, _, _ = graph
    out = tmp_path / "p"
    manifest = partition_graph(gdir, out, 2, 2)

    corrupt = out / manifest["blocks"][1]["file"]
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 2] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    with pytest.raises(BfsError, match=r"block-0-1\.parquet: sha256 mismatch"):
        read_block(out, manifest, 1)

    (out / manifest["blocks"][2]["file"]).unlink()
    with pytest.raises(BfsError, match=r"block-1-0\.parquet: block file missing"):
        read_block(out, manifest, 2)

    miscounted = json.loads(json.dumps(manifest))
    miscounted["blocks"][3]["n_edges"] += 1
    with pytest.raises(BfsError, match=r"block-1-1\.parquet: edge count mismatch"):
        read_block(out, miscounted, 3)

    with pytest.raises(BfsError, match="rank 4"):
        read_block(out, manifest, 4)
    read_block(out, manifest, 0)


def test_load_manifest_refuses_non_partitions(graph, tmp_path):
    gdir, _, _ = graph
    with pytest.raises(BfsError, match="not a partition directory"):
        load_manifest(gdir)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{")
    with pytest.raises(BfsError, match="unreadable manifest"):
        load_manifest(tmp_path / "bad")


def assert_refused_cleanly(gdir, tmp_path, match: str) -> None:
    """partition_graph refuses with a BfsError matching `match` and leaves nothing beside g/."""
    with pytest.raises(BfsError, match=match):
        partition_graph(gdir, tmp_path / "p", 2, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_edge_count_disagreeing_with_graph_json_fails_cleanly(graph, tmp_path):
    gdir, src, _ = graph
    meta = json.loads((gdir / "graph.json").read_text())
    meta["n_edges"] = len(src) + 1
    (gdir / "graph.json").write_text(json.dumps(meta))
    assert_refused_cleanly(gdir, tmp_path, "edges")


def test_thread_count_does_not_change_the_files(graph, tmp_path, monkeypatch):
    gdir, _, _ = graph
    monkeypatch.setattr(blocks, "ROW_GROUP_ROWS", 8)
    runs = {}
    for threads in (1, 2, 5):
        monkeypatch.setattr(blocks, "THREADS", threads)
        runs[threads] = partition_graph(gdir, tmp_path / f"t{threads}", 2, 3, batch_rows=7)
    monkeypatch.setenv("BFS_PARTITION_THREADS", "3")
    runs["env"] = partition_graph(gdir, tmp_path / "tenv", 2, 3)
    names = {1: "t1", 2: "t2", 5: "t5", "env": "tenv"}
    for threads, manifest in runs.items():
        assert manifest["blocks"] == runs[1]["blocks"]
        for block in manifest["blocks"]:
            assert (tmp_path / names[threads] / block["file"]).read_bytes() == \
                (tmp_path / "t1" / block["file"]).read_bytes()
    # fixed-size row groups: every one full but the last
    for block in runs[1]["blocks"]:
        meta = pq.ParquetFile(tmp_path / "t1" / block["file"]).metadata
        sizes = [meta.row_group(k).num_rows for k in range(meta.num_row_groups)]
        assert sum(sizes) == block["n_edges"]
        assert all(size == 8 for size in sizes[:-1]) and 0 < sizes[-1] <= 8


def test_bad_thread_count_is_refused(graph, tmp_path, monkeypatch):
    gdir, _, _ = graph
    monkeypatch.setenv("BFS_PARTITION_THREADS", "many")
    assert_refused_cleanly(gdir, tmp_path, "BFS_PARTITION_THREADS")


def test_failing_writer_thread_fails_cleanly(graph, tmp_path, monkeypatch):
    gdir, _, _ = graph
    monkeypatch.setattr(blocks, "ROW_GROUP_ROWS", 4)

    def broken(self, table):
        raise OSError("disk full")

    monkeypatch.setattr(blocks._BlockWriter, "_write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        partition_graph(gdir, tmp_path / "p", 2, 2, batch_rows=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_uint64_ids_route_by_the_row_col_rule(tmp_path):
    # ids beyond 2**32: uint64 columns and a coarse piece table (buckets of many vertices)
    n = 2**33 + 5
    rng = np.random.default_rng(3)
    ends = np.concatenate([rng.integers(0, n, 200, dtype=np.uint64),
                           np.array([0, n - 1, 2**32, 2**32 - 1], np.uint64)])
    layout = GridLayout(n, 2, 3)
    ends = np.concatenate([ends, layout.bounds[1:-1].astype(np.uint64),
                           (layout.bounds[1:-1] - 1).astype(np.uint64)])
    src, dst = ends, rng.permutation(ends)
    gdir = tmp_path / "g"
    with atomic_dir(gdir) as tmp:
        with EdgeWriter(tmp, np.uint64, max_rows=64) as writer:
            writer.write(src, dst)
        write_meta(tmp, GraphMeta("big", "kronecker", n, len(src), False))
    manifest = partition_graph(gdir, tmp_path / "p", 2, 3)
    bounds = manifest["bounds"]
    union = Counter()
    for rank in range(6):
        i, j = divmod(rank, 3)
        bsrc, bdst = read_block(tmp_path / "p", manifest, rank)
        assert bsrc.dtype == np.uint64
        for u, v in zip(bsrc.tolist(), bdst.tolist()):
            assert brute_piece(bounds, u) // 3 == i and brute_piece(bounds, v) % 3 == j
            union[(u, v)] += 1
    assert union == directed_halves(src, dst)


@pytest.mark.parametrize("rows,cols,kind", [(2, 3, "2d"), (3, 1, "1d")])
def test_blocks_keep_input_edge_order(graph, tmp_path, monkeypatch, rows, cols, kind):
    gdir, src, dst = graph
    monkeypatch.setattr(blocks, "ROW_GROUP_ROWS", 16)
    manifest = partition_graph(gdir, tmp_path / "p", rows, cols, kind=kind, batch_rows=9)
    bounds = manifest["bounds"]
    expected = [[] for _ in range(rows * cols)]
    for u, v in zip(src.tolist(), dst.tolist()):
        if u != v:  # u->v, then v->u, each into its block
            for a, b in ((u, v), (v, u)):
                expected[brute_piece(bounds, a) // cols * cols + brute_piece(bounds, b) % cols] \
                    .append((a, b))
    for rank in range(rows * cols):
        bsrc, bdst = read_block(tmp_path / "p", manifest, rank)
        assert list(zip(bsrc.tolist(), bdst.tolist())) == expected[rank]
