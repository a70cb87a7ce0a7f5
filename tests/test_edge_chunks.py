"""The edge list in chunks on the host (--edge-list stream on the CPU): Kernel 1's two passes,
the degrees and the validation over chunks made again for each pass give what the whole list
gives, byte for byte, for any chunk size; the host then holds the CSR and one chunk, not the
list beside it."""
import json

import numpy as np
import pytest

from bfs.build.csr_cpu import build_csr, build_csr_chunks, chunk_degrees, nonloop_degrees
from bfs.graphs.edge_chunks import streamed_graph_dir_host
from bfs.graphs.graphdir import read_edges
from bfs.graphs.lattice import write_lattice
from bfs.graphs.snap import convert_snap
from bfs.harness import envinfo
from bfs.harness.generated import GeneratedKronecker
from bfs.validate import validate, validate_chunks
from helpers import SNAP_DIR, bfs_cli, searches


@pytest.fixture(scope="module")
def graph_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("chunked")
    convert_snap(SNAP_DIR / "p2p-Gnutella09.txt", base / "snap")
    write_lattice(base / "lattice", 40, 60, diagonal_prob=0.2)
    return {"snap": base / "snap", "lattice": base / "lattice"}


def same_csr(a, b) -> bool:
    return (a.columns.dtype == b.columns.dtype and np.array_equal(a.offsets, b.offsets)
            and np.array_equal(a.columns, b.columns))


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 24])
def test_generated_chunks_build_the_same_csr(chunk):
    graph = GeneratedKronecker(9 if chunk == 1 else 11, 16, (2, 3), "3.0")
    whole = build_csr(*graph.host_edges(), graph.n_vertices)
    edges = graph.streamed_host_edges(chunk)
    assert edges.streamed and edges.chunk_edges == min(chunk, graph.n_edges)
    assert all(len(s) <= chunk for s, _ in edges.chunks())
    assert same_csr(build_csr_chunks(edges.chunks, graph.n_vertices), whole)


@pytest.mark.parametrize("kind", ["snap", "lattice"])
@pytest.mark.parametrize("rows", [1000, 4096, 1 << 24])
def test_graph_dir_chunks_build_the_same_csr(graph_dirs, kind, rows):
    src, dst = read_edges(graph_dirs[kind])
    n = int(max(src.max(), dst.max())) + 1
    edges = streamed_graph_dir_host(graph_dirs[kind], rows)
    assert edges.n_edges == len(src) and edges.streamed
    assert same_csr(build_csr_chunks(edges.chunks, n), build_csr(src, dst, n))
    assert np.array_equal(chunk_degrees(edges.chunks, n), nonloop_degrees(src, dst, n))


def test_chunked_validation_gives_the_whole_lists_verdicts():
    """A valid search, and each rule broken, judged alike (rule, message, nedge) over chunks."""
    graph = GeneratedKronecker(10, 16, (2, 3), "3.0")
    src, dst = graph.host_edges()
    csr = build_csr(src, dst, graph.n_vertices)
    from bfs.algorithms.seq_csr import bfs_csr
    root = int(src[0])
    parent, level = bfs_csr(csr.offsets, csr.columns, root)
    reached = np.flatnonzero((parent >= 0) & (np.arange(len(parent)) != root))
    v, w = int(reached[-1]), int(reached[-2])
    not_edge = parent.copy()
    not_edge[v] = w if level[w] == level[v] - 1 else root   # a tree edge the graph may lack
    spread = level.copy()
    spread[v] += 5
    unreached = level.copy(), parent.copy()
    unreached[0][v], unreached[1][v] = -1, -1
    cases = [(parent, level), (not_edge, None), (parent, spread), (unreached[1], unreached[0])]
    for p, lv in cases:
        whole = validate(src, dst, p, root, lv)
        for chunk in (333, 1 << 20):
            got = validate_chunks(graph.streamed_host_edges(chunk).chunks, p, root, lv)
            assert (got.valid, got.rule, got.message, got.nedge) == \
                (whole.valid, whole.rule, whole.message, whole.nedge)
    assert validate(src, dst, parent, root, level).valid
    assert not validate(src, dst, parent, root, spread).valid


def test_streamed_kernel1_holds_the_csr_and_one_chunk():
    """Host memory: the whole list (64 MiB at scale 19) beside the CSR when held; when
    streamed, one chunk (16 MiB) beside it, never two (the last one is let go before the next
    is made)."""
    graph = GeneratedKronecker(19, 16, (2, 3), "3.0")
    build_csr_chunks(GeneratedKronecker(6, 16, (2, 3), "3.0").streamed_host_edges(100).chunks,
                     64)   # compiled (or loaded from numba's cache) before anything is measured
    list_bytes, chunk = 8 * graph.n_edges, 1 << 21
    assert envinfo.reset_host_memory_peak()
    base = envinfo.host_memory_peak()
    csr = build_csr_chunks(graph.streamed_host_edges(chunk).chunks, graph.n_vertices)
    streamed = envinfo.host_memory_peak() - base
    csr_bytes = csr.offsets.nbytes + csr.columns.nbytes
    del csr
    envinfo.reset_host_memory_peak()
    base = envinfo.host_memory_peak()
    src, dst = graph.host_edges()
    csr = build_csr(src, dst, graph.n_vertices)
    held = envinfo.host_memory_peak() - base
    degrees = 8 * graph.n_vertices
    assert held >= csr_bytes + list_bytes * 0.9, (held, csr_bytes, list_bytes)
    assert streamed <= csr_bytes + degrees + 1.5 * 8 * chunk, (streamed, csr_bytes, degrees)


def test_run_with_the_edge_list_streamed_on_the_cpu(tmp_path, graph_dirs):
    """bfs run --edge-list stream on the CPU: seq-csr's searches and validations as with the
    whole list, from a generated graph and from a graph directory; run.json says which; an
    algorithm that needs the whole list refuses a streamed one by name, and device is a GPU's."""
    key = ("root", "depth", "reached", "nedge", "valid")
    for name, source in (("gen", ["--generate", "kronecker:scale=10"]),
                         ("dir", [graph_dirs["snap"]])):
        runs = {}
        for mode in ("auto", "stream"):
            runs[mode] = tmp_path / f"{name}-{mode}"
            bfs_cli("run", *source, "--algorithm", "seq-csr", "--roots", 4,
                    "--edge-list", mode, "--out", runs[mode])
            m = json.loads((runs[mode] / "run.json").read_text())["measurements"]
            assert m["edge_list"] == {"auto": "host", "stream": "streamed"}[mode]
            assert m["n_validated"] == 4
        assert [tuple(r[k] for k in key) for r in searches(runs["stream"])] == \
            [tuple(r[k] for k in key) for r in searches(runs["auto"])]
        # bfs validate streams it again, as the run did
        said = bfs_cli("validate", runs["stream"])
        assert "valid (1/1" in said.stdout and "a chunk at a time" in said.stderr
    proc = bfs_cli("run", "--generate", "kronecker:scale=8", "--algorithm", "seq-list",
                   "--roots", 1, "--edge-list", "stream", "--out", tmp_path / "list",
                   check=False)
    assert proc.returncode == 1 and "seq-list" in proc.stderr and "streamed" in proc.stderr
    assert not (tmp_path / "list").exists()
    proc = bfs_cli("run", "--generate", "kronecker:scale=8", "--algorithm", "seq-csr",
                   "--roots", 1, "--edge-list", "device", "--out", tmp_path / "dev",
                   check=False)
    assert proc.returncode == 1 and "--edge-list 'device'" in proc.stderr


def parts_of_row_groups(tmp_path, seed: int = 4):
    """A 5000-edge graph directory in parts of 1200 rows, row groups of 400: (dir, src, dst)."""
    from bfs.atomic import atomic_dir
    from bfs.graphs.graphdir import EdgeWriter, GraphMeta, write_meta
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, 500, 5000), rng.integers(0, 500, 5000)
    out = tmp_path / "g"
    with atomic_dir(out) as tmp:
        with EdgeWriter(tmp, np.uint32, max_rows=1200) as w:   # parts of 3 row groups
            for a in range(0, len(src), 400):                    # a row group a write
                w.write(src[a:a + 400], dst[a:a + 400])
        write_meta(tmp, GraphMeta(name="r", source="snap", n_vertices=500, n_edges=len(src),
                                  directed_source=None))
    return out, src, dst


def test_edge_range_reader_reads_any_rows_of_a_graph_directory(tmp_path):
    """A rank's share (or a chunk of it) read from the Parquet row groups that hold it: any
    range equals the whole list's slice, across row-group and part-file boundaries; a range
    outside the list is an error naming it."""
    from bfs.errors import BfsError
    from bfs.graphs.graphdir import edge_range_reader
    out, _, _ = parts_of_row_groups(tmp_path, seed=3)
    assert len(list((out / "edges").glob("part-*.parquet"))) == 5   # 1200 rows a part
    read = edge_range_reader(out)
    whole = read_edges(out)
    for lo, hi in ((0, 5000), (0, 1), (399, 401), (1199, 1201), (1000, 4321), (4999, 5000),
                   (2500, 2500)):
        s, d = read(lo, hi)
        assert (s == whole[0][lo:hi]).all() and (d == whole[1][lo:hi]).all(), (lo, hi)
    with pytest.raises(BfsError, match=r"edge rows \[4000, 5001\) are not within its 5000"):
        read(4000, 5001)


def test_edge_batches_come_in_order_for_any_batch_size_and_reader_threads(tmp_path):
    """iter_edge_batches decodes batches on reader threads ahead of the consumer: the batches
    still come in stored order, hold at most batch_rows rows and never span two part files,
    for any batch size against the row groups (400 rows) and parts (1200 rows) and any thread
    count; a damaged row group in the middle of a part is an error naming that file, raised
    on the consumer's thread."""
    from bfs.errors import BfsError
    from bfs.graphs.graphdir import iter_edge_batches
    out, src, dst = parts_of_row_groups(tmp_path)
    for rows in (1, 300, 400, 800, 1000, 1200, 1 << 20):
        for threads in (1, 3):
            batches = list(iter_edge_batches(out, rows, threads))
            assert all(0 < len(s) <= rows and len(s) == len(d) for s, d in batches)
            assert np.array_equal(np.concatenate([s for s, _ in batches]), src)
            assert np.array_equal(np.concatenate([d for _, d in batches]), dst)
            # a batch of whole row groups never crosses a part (1200 rows) boundary
            ends = np.cumsum([len(s) for s, _ in batches])
            starts = ends - [len(s) for s, _ in batches]
            assert ((starts // 1200) == ((ends - 1) // 1200)).all(), (rows, threads)
    assert len(list(iter_edge_batches(out, 1 << 20, 2))) == 5        # one batch a part
    part = sorted((out / "edges").glob("part-*.parquet"))[2]
    data = bytearray(part.read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)              # inside the pages
    part.write_bytes(bytes(data))
    with pytest.raises(BfsError, match=part.name):
        for _ in iter_edge_batches(out, 400, 3):
            pass


def test_a_pass_shows_progress_only_when_it_is_long(tmp_path, capsys, monkeypatch):
    """A streamed pass over a graph directory reports how far it is (rows so far and the
    list's rows) after each batch; the throttle keeps a pass that ends within its quiet time
    silent, end included, and speaks at once once that time is over."""
    from bfs import log as log_module
    from bfs.graphs.graphdir import iter_edge_batches
    calls = []
    graph, src, _ = parts_of_row_groups(tmp_path)
    total = len(src)
    for _ in iter_edge_batches(graph, 400, 2, progress=lambda d, t: calls.append((d, t))):
        pass
    assert calls[-1] == (total, total) and all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted({d for d, _ in calls}) and len(calls) > 1
    capsys.readouterr()
    clock = [100.0]
    monkeypatch.setattr(log_module.time, "perf_counter", lambda: clock[0])
    quiet = log_module.Progress("pass over g", "edges", every=10.0, after=10.0)
    clock[0] = 105.0
    quiet(total, total)                                  # ended inside the quiet time
    assert capsys.readouterr().err == ""
    clock[0] = 100.0
    loud = log_module.Progress("pass over g", "edges", every=10.0, after=10.0)
    clock[0] = 105.0
    loud(5, total)                                       # quiet time
    clock[0] = 111.0
    loud(10, total)
    clock[0] = 115.0
    loud(20, total)                                      # throttled
    loud(total, total)                                   # the end always speaks
    err = capsys.readouterr().err.splitlines()
    assert err == [f"[bfs] pass over g: 10/{total} edges (0%, 0.909 edges/s)",
                   f"[bfs] pass over g: {total}/{total} edges (100%, {total / 15:.3g} edges/s)"]
