"""GPU: the Kronecker generator against the CPU's, Kernel 1 (bfs.build.csr_gpu: resident,
bucketed, streamed) against the CPU CSR, edges read into device memory, the memory model's
refusals, and `bfs run` / `bfs generate` / `bfs bench` on the GPU. Skipped (with the reason)
without CuPy or a CUDA device; on a GPU machine: python3 -m pytest -q -m gpu
tests/test_gpu_kernel1.py
"""
import hashlib
from pathlib import Path

import numpy as np
import pytest

from bfs.errors import BfsError
from gpu_helpers import cp, require_gpu  # noqa: E402

require_gpu()
pytestmark = pytest.mark.gpu

from bfs.build import csr_gpu, memory
from bfs import device
from bfs.graphs import device_edges
from bfs.algorithms import get_algorithm  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.graphs.kronecker import generate_edges  # noqa: E402
from bfs.graphs.kronecker_gpu import generate_edges_gpu  # noqa: E402

from helpers import bfs_cli, searches  # noqa: E402

from gpu_helpers import random_edges  # noqa: E402


def edge_hash(src, dst) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(src).tobytes())
    h.update(np.ascontiguousarray(dst).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("scale", [10, 16, 20])
def test_generator_matches_cpu(scale):
    cpu = generate_edges(scale, 16)
    g_src, g_dst = generate_edges_gpu(scale, 16)
    assert g_src.dtype == cpu[0].dtype == np.uint32
    assert edge_hash(g_src.get(), g_dst.get()) == edge_hash(*cpu)


@pytest.mark.parametrize("start,stop", [(0, 1), (1, 2), (3, 1000), (4095, 4097), (12345, 54321),
                                        (262143, 262144), (100003, 100003)])
def test_generator_subranges(start, stop):
    cpu = generate_edges(14, 16, (5, 7), "3.0", start, stop)
    g = generate_edges_gpu(14, 16, (5, 7), "3.0", start, stop)
    np.testing.assert_array_equal(g[0].get(), cpu[0])
    np.testing.assert_array_equal(g[1].get(), cpu[1])


def test_generator_version_2_1_4_and_edgefactor():
    cpu = generate_edges(11, 5, (1, 2), "2.1.4", 77, 9999)
    g = generate_edges_gpu(11, 5, (1, 2), "2.1.4", 77, 9999)
    assert edge_hash(g[0].get(), g[1].get()) == edge_hash(*cpu)


def test_generator_uint64_ids():
    # scale 33: ids need 64 bits; a short sub-range only
    cpu = generate_edges(33, 16, (2, 3), "3.0", 10**9, 10**9 + 300)
    g = generate_edges_gpu(33, 16, (2, 3), "3.0", 10**9, 10**9 + 300)
    assert g[0].dtype == cpu[0].dtype == np.uint64
    np.testing.assert_array_equal(g[0].get(), cpu[0])
    np.testing.assert_array_equal(g[1].get(), cpu[1])


def sorted_rows(offsets, columns):
    offsets = np.asarray(offsets)
    columns = np.asarray(columns).astype(np.int64)
    rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    order = np.lexsort((columns, rows))
    return offsets, columns[order]


@pytest.mark.parametrize("seed", range(4))
def test_kernel1_matches_cpu(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 5000))
    src, dst = random_edges(rng, n, int(rng.integers(0, 20000)))
    cpu = build_csr(src, dst, n)
    off_d, col_d = csr_gpu.build_csr_gpu(*device_edges.to_device_edges(src, dst), n)
    assert off_d.dtype == cp.int64 and col_d.dtype == cp.uint32
    off, col = off_d.get(), col_d.get()
    np.testing.assert_array_equal(off, cpu.offsets)
    np.testing.assert_array_equal(sorted_rows(off, col)[1], sorted_rows(cpu.offsets,
                                                                       cpu.columns)[1])
    # rows come out sorted by column
    for v in range(0, n, max(1, n // 50)):
        row = col[off[v]:off[v + 1]]
        assert np.all(row[:-1] <= row[1:])


@pytest.mark.parametrize("fill", csr_gpu.FILLS)
@pytest.mark.parametrize("limit", [1, 1000, 50_000])
def test_kernel1_row_buckets(limit, fill):
    # small sort limits force many row buckets (scale 26 needs two at the default 2^30); the
    # fill by atomics and the earlier keys pass give the same bytes: every row sorted
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    cpu = build_csr(src, dst, n)
    off, col = (a.get() for a in csr_gpu.build_csr_gpu(*device_edges.to_device_edges(src, dst), n,
                                                   sort_limit=limit, fill=fill))
    np.testing.assert_array_equal(off, cpu.offsets)
    np.testing.assert_array_equal(col, sorted_rows(cpu.offsets, cpu.columns)[1])
    # a directed block (2d's block CSR: one entry per pair, loops kept), in three chunks of
    # entries as a block routed a chunk at a time gives them (any fill takes chunks)
    s_d, d_d = cp.asarray(src, cp.uint32), cp.asarray(dst, cp.uint32)
    cuts = [0, len(src) // 3, len(src) // 2, len(src)]
    b_off, b_col = (a.get() for a in csr_gpu.block_csr(
        lambda: [(s_d[a:b], d_d[a:b]) for a, b in zip(cuts, cuts[1:])], n, fill=fill,
        sort_limit=limit))
    ref = np.lexsort((dst, src))
    np.testing.assert_array_equal(b_off, np.concatenate([[0], np.cumsum(np.bincount(src,
                                                                            minlength=n))]))
    np.testing.assert_array_equal(b_col, dst[ref])


@pytest.mark.parametrize("fill, says", [("scatter", "fill pass did not end every row"),
                                        ("keys", r"rows \[0, \d+\) produced \d+ entries")])
def test_kernel1_refuses_edge_chunks_that_change_between_passes(fill, says):
    """The later passes must see the edges the degrees' pass saw (a streamed list is made again
    per pass): a source that gives others is an error naming it, never a wrong CSR."""
    src, dst = generate_edges(10, 8)
    s_d, d_d = device_edges.to_device_edges(src, dst)
    calls = []

    def chunks():
        calls.append(1)
        # the second pass: fewer edges, and more (the first edge four times over)
        return [(s_d, d_d)] if len(calls) == 1 else [(d_d[:-5], s_d[:-5]),
                                                      (s_d[:4] * 0 + s_d[0], d_d[:4] * 0 + d_d[0])]

    with pytest.raises(BfsError, match=says):
        csr_gpu._csr_from_chunks(chunks, 2 ** 10, csr_gpu.SORT_LIMIT, "test Kernel 1",
                                     fill=fill)


def test_kernel1_kronecker():
    src, dst = generate_edges(14, 16)
    n = 2 ** 14
    cpu = build_csr(src, dst, n)
    off, col = (a.get() for a in csr_gpu.build_csr_gpu(*device_edges.to_device_edges(src, dst), n))
    np.testing.assert_array_equal(off, cpu.offsets)
    np.testing.assert_array_equal(sorted_rows(off, col)[1],
                                  sorted_rows(cpu.offsets, cpu.columns)[1])


def test_streamed_kernel1_equals_resident(tmp_path):
    """A streamed edge list (chunks regenerated on the device, or re-read from the graph
    directory, into reused buffers): Kernel 1 over many chunks and sort buckets gives the same
    CSR bytes as the whole list's, and the degrees and a validation over the chunks agree."""
    from bfs.harness.generated import GeneratedKronecker
    from bfs.validate.gpu import validate_device
    graph = GeneratedKronecker(12)
    n = graph.n_vertices
    src, dst = graph.device_edges()
    off, col = (a.get() for a in csr_gpu.build_csr_gpu(src, dst, n))
    g = tmp_path / "g"
    bfs_cli("generate", "kronecker", "--scale", "12", "--out", g)
    for edges in (graph.streamed_device_edges(chunk=1000),
                  device_edges.streamed_graph_dir(g, chunk_rows=1000)):
        assert edges.streamed and edges.chunk_edges == 1000
        assert sum(int(s.size) for s, _ in edges.chunks()) == graph.n_edges
        s_off, s_col = csr_gpu.csr_from_streamed(edges, n, sort_limit=5000)
        np.testing.assert_array_equal(s_off.get(), off)
        np.testing.assert_array_equal(s_col.get(), col)
        np.testing.assert_array_equal(csr_gpu.nonloop_degrees(edges.chunks, n),
                                      device_edges.nonloop_degrees_device(src, dst, n))
        searcher = get_algorithm("merrill-do").load("gpu").from_csr(s_off, s_col)
        searcher.search(0)
        res = searcher.device_result()
        whole = validate_device(lambda: [(src, dst)], res.parent, res.level, 0)
        streamed = validate_device(edges.chunks, res.parent, res.level, 0)
        assert whole.valid and streamed.valid and whole.nedge == streamed.nedge > 0


def test_run_with_the_edge_list_streamed(tmp_path):
    """bfs run --edge-list stream: the same searches, every one validated over the chunks, as
    with the list on the device; run.json says which, with each run's memory peak; an
    algorithm that needs the whole list refuses a streamed one by name."""
    import json
    runs = {}
    for mode in ("device", "stream"):
        runs[mode] = tmp_path / mode
        bfs_cli("run", "--generate", "kronecker:scale=12", "--algorithm", "merrill-do",
                "--backend", "gpu", "--roots", "4", "--edge-list", mode, "--out", runs[mode])
    key = ("root", "depth", "reached", "nedge", "valid")
    assert [tuple(r[k] for k in key) for r in searches(runs["stream"])] == \
        [tuple(r[k] for k in key) for r in searches(runs["device"])]
    for mode, said in (("device", "device"), ("stream", "streamed")):
        info = json.loads((runs[mode] / "run.json").read_text())
        m = info["measurements"]
        assert m["edge_list"] == said and m["n_validated"] == 4
        assert info["parameters"]["rows"] == "degree"     # rows=auto as it resolved
        (peak,) = m["device_memory_peak_bytes"]
        assert peak["rank"] == 0 and 0 < peak["pool"] <= peak["device_used"]
        # the bytes arrays held at the peak, and the stage that first saw it (Kernel 1's
        # sort or a searcher's build, by the function that noted the pool)
        assert 0 < peak["in_use"] <= peak["pool"] and ":" in peak["stage"], peak
        assert 0 < m["device_bytes_per_directed_edge"] < 1000
    proc = bfs_cli("run", "--generate", "kronecker:scale=10", "--algorithm", "hybrid",
                   "--backend", "gpu", "--roots", "1", "--edge-list", "stream", "--out",
                   tmp_path / "hybrid", check=False)
    assert proc.returncode == 1 and "streamed" in proc.stderr and "hybrid" in proc.stderr


def test_out_of_memory_message(monkeypatch):
    src, dst = generate_edges(10, 16)
    held = device_edges.to_device_edges(src, dst)    # the list on the device, before the fake
    # 4 KiB free: below the scale-10 edge list (131072 bytes), so check_fits must refuse it
    monkeypatch.setattr(cp.cuda.runtime, "memGetInfo", lambda: (4096, 80 << 30))
    monkeypatch.setattr(cp, "get_default_memory_pool",
                        lambda: type("P", (), {"free_bytes": lambda self: 0})())
    with pytest.raises(BfsError) as e:
        device_edges.to_device_edges(src, dst)
    msg = str(e.value)
    assert "GiB" in msg and "(4096 bytes)" in msg and f"({8 * len(src)} bytes)" in msg
    with pytest.raises(BfsError, match="largest Kronecker scale that fits is"):
        device.check_fits(memory.kronecker_bytes(26), "bench at scale 26",
                       lambda free: memory.largest_kronecker_scale(free))
    # Kernel 1 over the held list names the largest scale both ways: held, and streamed
    with pytest.raises(BfsError) as e:
        csr_gpu.build_csr_gpu(*held, 2 ** 10)
    import re
    said = re.search(r"largest Kronecker scale that fits is (\d+) with the edge list on the "
                     r"device, (\d+) with it streamed \(--edge-list stream", str(e.value))
    assert said and int(said.group(2)) >= int(said.group(1)), str(e.value)


def test_largest_scale_model():
    assert memory.largest_kronecker_scale(memory.kronecker_bytes(20)) == 20
    assert memory.largest_kronecker_scale(memory.kronecker_bytes(20) - 1) == 19


def test_cli_run_and_generate(tmp_path):
    g_cpu, g_gpu = tmp_path / "cpu", tmp_path / "gpu"
    bfs_cli("generate", "kronecker", "--scale", "12", "--out", g_cpu)
    bfs_cli("generate", "kronecker", "--scale", "12", "--backend", "gpu", "--out", g_gpu)
    from bfs.graphs.graphdir import read_edges
    a, b = read_edges(g_cpu), read_edges(g_gpu)
    assert edge_hash(*a) == edge_hash(*b)
    run = tmp_path / "run"
    bfs_cli("run", g_gpu, "--algorithm", "merrill", "--backend", "gpu", "--roots", "4",
            "--save-parents", "1", "--out", run)

    rows = searches(run)
    assert len(rows) == 4 and all(r["valid"] for r in rows)
    import json
    assert json.loads((run / "run.json").read_text())["validation"].startswith("gpu")
    bfs_cli("validate", run)   # the CPU validator agrees with the GPU one on the saved parents
    # the same graph on the CPU: same roots, same verdicts and nedge
    run_cpu = tmp_path / "run-cpu"
    bfs_cli("run", g_gpu, "--algorithm", "seq-csr", "--roots", "4", "--out", run_cpu)
    assert [(r["root"], r["nedge"], r["depth"]) for r in rows] == \
        [(r["root"], r["nedge"], r["depth"]) for r in searches(run_cpu)]
    # bench's CuPy baseline is an algorithm of the registry like any other
    run_base = tmp_path / "run-baseline"
    bfs_cli("run", g_gpu, "--algorithm", "cupy-baseline", "--roots", "4", "--out", run_base)
    assert [(r["root"], r["nedge"], r["depth"], r["valid"]) for r in searches(run_base)] == \
        [(r["root"], r["nedge"], r["depth"], True) for r in searches(run_cpu)]


@pytest.mark.parametrize("batch_rows", [1000, 1 << 22])
def test_read_edges_to_device_by_batches(tmp_path, batch_rows):
    from bfs.graphs.graphdir import read_edges
    g = tmp_path / "g"
    bfs_cli("generate", "kronecker", "--scale", "13", "--out", g)
    src_d, dst_d = device_edges.read_edges_to_device(g, batch_rows=batch_rows)
    src, dst = read_edges(g)
    assert src_d.dtype == cp.uint32 and src_d.size == src.size
    np.testing.assert_array_equal(src_d.get(), src)
    np.testing.assert_array_equal(dst_d.get(), dst)
    from bfs.build.csr_cpu import nonloop_degrees
    np.testing.assert_array_equal(device_edges.nonloop_degrees_device(src_d, dst_d, 2**13),
                                  nonloop_degrees(src, dst, 2**13))


def test_read_edges_to_device_count_mismatch(tmp_path):
    import json
    g = tmp_path / "g"
    bfs_cli("generate", "kronecker", "--scale", "10", "--out", g)
    meta = json.loads((g / "graph.json").read_text())
    meta["n_edges"] += 1
    (g / "graph.json").write_text(json.dumps(meta))
    with pytest.raises(BfsError, match="graph.json says"):
        device_edges.read_edges_to_device(g)


@pytest.mark.parametrize("algorithms", [["merrill"],
                                        ["gpu-quadratic", "gpu-out-of-core", "hybrid"]])
def test_bench_small(tmp_path, algorithms):
    out = tmp_path / "bench.json"
    proc = bfs_cli("bench", "--backend", "gpu", "--scales", "10", "12", "--algorithms",
                   *algorithms, "--roots", "4", "--out", out)
    import json
    rec = json.loads(out.read_text())
    assert rec["valid"] and len(rec["records"]) == 2
    for r in rec["records"]:
        for name in algorithms + ["cupy-baseline"]:   # the baseline runs unless named
            rows = searches(Path(r["algorithms"][name]["run_dir"]))
            assert len(rows) == 4 and all(x["valid"] and x["nedge"] > 0 for x in rows)
            assert r["algorithms"][name]["kernel1_first_s"] > 0
            if name != "gpu-out-of-core":   # its graph is never on the device: no floor
                assert r["algorithms"][name]["floor_fraction"] > 0
        if "gpu-out-of-core" in algorithms:   # its copies' rate beside the link's, measured
            ooc = r["algorithms"]["gpu-out-of-core"]
            assert ooc["host_to_device_Bps"] > 1e9 and ooc["transfer_rate_Bps"] > 0
    assert "GTEPS" in proc.stdout
    # each run directory is the report's like any other
    bfs_cli("report", "table", "graphs", *sorted((tmp_path / "bench").glob("*/*")),
            "--out", tmp_path / "table")


def test_bench_profile_grid_and_variants(tmp_path):
    out = tmp_path / "bench.json"
    bfs_cli("bench", "--backend", "gpu", "--scales", "12", "--lattice-graphs", "40x300",
            "--algorithms", "merrill", "merrill-do", "merrill@expand=v0", "2d", "--roots", "3",
            "--profile-levels", "--out", out)
    import json
    rec = json.loads(out.read_text())
    assert rec["valid"] and len(rec["records"]) == 2
    grid_rec = rec["records"][1]
    assert grid_rec["graph"] == "lattice-40x300"
    for r in rec["records"]:
        for name in ("merrill", "merrill-do", "merrill@expand=v0", "2d"):
            prof = r["algorithms"][name]["level_profile"]
            assert prof["n_steps"] >= 1 and prof["total_ms"] > 0
        # 2d on one GPU is merrill's search (its engine): the same level steps
        steps = lambda name: [(s["depth"], s["kind"], s["frontier_vertices"])
                              for s in r["algorithms"][name]["level_profile"]["levels"]]
        assert steps("2d") == steps("merrill")


def test_level_sizes_on_the_device_equal_bincount():
    """device_csr.level_sizes (each level's vertex count, counted on the device, as the
    one-GPU session profiles and counts a search it leaves there): np.bincount of the reached
    vertices' levels, for one vertex, unreached vertices, a Kronecker-like few levels and more
    levels than the shared-memory bins (cupy's bincount then)."""
    import cupy as cp
    from bfs.algorithms.device_csr import LEVEL_BINS_SHARED, level_sizes
    rng = np.random.default_rng(5)
    assert level_sizes(cp.full(7, -1, cp.int32)).size == 0
    for n, depth in ((1, 0), (1000, 3), (300_000, 40), (50_000, LEVEL_BINS_SHARED + 5)):
        level = rng.integers(-1, depth + 1, n).astype(np.int32)
        level[0] = depth
        want = np.bincount(level[level >= 0], minlength=depth + 1)
        np.testing.assert_array_equal(level_sizes(cp.asarray(level)), want, err_msg=str(n))


@pytest.mark.parametrize("algorithm,validate", [("merrill", "every"), ("merrill-do", "first"),
                                                ("2d", "none"), ("gpu-out-of-core", "every")])
def test_run_generate_on_the_gpu(tmp_path, algorithm, validate):
    """bfs run --generate: the graph generated on the GPU (the host for gpu-out-of-core), the
    same searches as from its graph directory, CUDA-event times, the measurements bench
    tabulates, and bfs validate generating it again."""
    import json
    g, ref, run = tmp_path / "g", tmp_path / "ref", tmp_path / "run"
    bfs_cli("generate", "kronecker", "--scale", "12", "--out", g)
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", "4", "--out", ref)
    bfs_cli("run", "--generate", "kronecker:scale=12", "--algorithm", algorithm, "--backend",
            "gpu", "--roots", "4", "--validate", validate, "--profile-levels", "--out", run)
    key = ("root", "depth", "reached", "nedge")
    assert [tuple(r[k] for k in key) for r in searches(run)] == \
        [tuple(r[k] for k in key) for r in searches(ref)]
    info = json.loads((run / "run.json").read_text())
    m = info["measurements"]
    assert info["graph"]["generated"].startswith("kronecker:scale=12,")
    assert m["timing"].startswith("CUDA events") and m["kernel1_first_s"] > 0
    assert m["n_validated"] == {"every": 4, "first": 1, "none": 0}[validate]
    if algorithm in ("merrill", "merrill-do"):
        assert m["floor_fraction"] > 0 and m["launches"] and m["level_profile"]["n_steps"] >= 1
    bfs_cli("validate", run)
