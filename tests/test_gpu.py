"""GPU backend: merrill and gpu-quadratic BFS, GPU Kernel 1 and the GPU Kronecker generator
against the CPU code.

Every test is marked gpu; the whole module is skipped (with the reason) without CuPy or a CUDA
device. On a GPU machine: python3 -m pytest -q -m gpu tests/test_gpu.py
"""
import hashlib
from pathlib import Path

import numpy as np
import pytest

from bfs.errors import BfsError

try:
    import cupy as cp
    _N_GPUS = cp.cuda.runtime.getDeviceCount()
    _WHY = "" if _N_GPUS > 0 else "CuPy sees no CUDA device"
except Exception as e:  # ImportError, or a CUDA runtime/driver error
    cp = None
    _WHY = f"no CuPy/CUDA GPU: {type(e).__name__}: {e}"

if _WHY:
    pytest.skip(_WHY, allow_module_level=True)

pytestmark = pytest.mark.gpu

from bfs.algorithms import merrill_do
from bfs.build import csr_gpu, memory
from bfs import device
from bfs.graphs import device_edges
from bfs.algorithms import EdgeList, RunContext, get_algorithm  # noqa: E402
from bfs.algorithms.seq_csr import bfs_csr  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.graphs.kronecker import generate_edges  # noqa: E402
from bfs.graphs.kronecker_gpu import generate_edges_gpu  # noqa: E402
from bfs.harness.roots import graph500_roots  # noqa: E402
from bfs.validate import validate  # noqa: E402

from helpers import SNAP_DIR, bfs_cli, searches  # noqa: E402


def merrill(src, dst, n, name="merrill", **options):
    # build() passes ctx.options to the searcher as keywords (what `bfs run` checked)
    return get_algorithm(name).load("gpu").build(EdgeList(src, dst, n),
                                                 RunContext("gpu", options))


# merrill-do switching settings: the GPU defaults; Beamer's paper values; bottom-up from the
# first level and never back (alpha = inf makes every frontier "large", beta = inf keeps it);
# bottom-up whenever the frontier grows and top-down when it shrinks (beta tiny: every
# shrinking frontier is "small")
DO_SETTINGS = {"default": {}, "beamer": {"alpha": 14.0, "beta": 24.0},
               "all-bottom-up": {"alpha": float("inf"), "beta": float("inf")},
               "alternate": {"alpha": float("inf"), "beta": 1e-9}}
# bottom-up kernel shapes beside the default, all levels after the first bottom-up (and two
# with registers capped)
DO_SHAPES = ["1x4", "1x8", "2x4", "2x8", "4x4", "1x8m5"]
# merrill-do's output writes and offsets other than the defaults (dense writes, 32-bit offsets
# below 2^32 edges): the reset pass, 64-bit offsets, and the CAS claim that keeps the reset;
# and fewer bottom-up levels run ahead of the host than the default 8
DO_WRITES = {"reset": {"writes": "reset"}, "offsets64": {"offset_bits": 64},
             "cas": {"expand": "tiles-cas"}, "rows-graph": {"rows": "graph"},
             "ahead0": {"ahead": 0}, "ahead1": {"ahead": 1}, "head0": {"head": 0}}
VARIANTS = [("merrill", {"expand": "tiles"}), ("merrill", {"expand": "tiles-cas"}),
            ("merrill", {"expand": "v0"}), ("merrill", {"order": "degree"})] + \
    [("merrill-do", o) for o in DO_SETTINGS.values()] + \
    [("merrill-do", {**DO_SETTINGS["all-bottom-up"], "bu": bu}) for bu in DO_SHAPES] + \
    [("merrill-do", {**DO_SETTINGS["alternate"], **o}) for o in DO_WRITES.values()] + \
    [("merrill-do", {**DO_SETTINGS["all-bottom-up"], "ahead": 1}), ("merrill-do", {"tail": 0})] + \
    [("merrill-do", {"fold": 1}), ("merrill-do", {**DO_SETTINGS["alternate"], "fold": 1}),
     ("merrill-do", {"fold": 1, "tail": 0})] + \
    [("merrill", {"loop": "cta"}), ("merrill", {"loop_blocks": 3}),
     ("merrill-do", {"loop": "cta"}), ("merrill", {"loop_spread": 0}),
     ("merrill-do", {"loop_spread": 0, "loop_blocks": 3})]
VARIANT_IDS = ["tiles", "tiles-cas", "v0", "degree-order"] + [f"do-{k}" for k in DO_SETTINGS] \
    + [f"do-bu{bu}" for bu in DO_SHAPES] + [f"do-{k}" for k in DO_WRITES] \
    + ["do-all-bottom-up-ahead1", "do-tail0", "do-fold1", "do-alternate-fold1", "do-fold1-tail0",
       "loop-cta", "loop-3-blocks", "do-loop-cta", "loop-spread0", "do-loop-spread0-3-blocks"]


def test_degree_order_renames_hubs_first_and_is_refused_where_unsupported(monkeypatch):
    rng = np.random.default_rng(5)
    n = 3000
    src, dst = random_edges(rng, n, 8 * n)
    s = merrill(src, dst, n, order="degree")
    deg_new = np.diff(s.offsets.get())
    assert (np.diff(deg_new) <= 0).all()                      # falling degree
    perm = s.out_id.get()
    np.testing.assert_array_equal(np.sort(perm), np.arange(n))  # a permutation
    np.testing.assert_array_equal(deg_new, np.diff(s.offsets_out.get())[perm])
    assert s.kernel1_extra_s > 0
    with pytest.raises(BfsError, match="order=graph"):
        merrill(src, dst, n, "merrill-do", order="degree")
    with pytest.raises(BfsError, match="expand=tiles only"):
        merrill(src, dst, n, order="degree", expand="v0")
    do = merrill(src, dst, n, "merrill-do", rows="degree")  # rows hubs first, ids unchanged
    np.testing.assert_array_equal(do.offsets.get(), s.offsets_out.get())
    off, cols, deg = do.offsets.get(), do.columns.get(), np.diff(do.offsets.get())
    ref = build_csr(src, dst, n)
    for r in range(0, n, 37):
        row = cols[off[r]:off[r + 1]]
        np.testing.assert_array_equal(np.sort(row),
                                      np.sort(ref.columns[ref.offsets[r]:ref.offsets[r + 1]]))
        np.testing.assert_array_equal(row, sorted(row, key=lambda c: (-deg[c], c)))
    has_row = deg > 0       # each vertex's first entry (its biggest hub) beside the offsets
    np.testing.assert_array_equal(do.head.get()[has_row], cols[off[:-1][has_row]])
    # built a slice of rows at a time (the last slice short): the same copy
    monkeypatch.setattr(merrill_do, "HEAD_SLICE", 37)
    sliced = merrill_do.head_entries(do.offsets, do.columns, do.nnz).get()
    np.testing.assert_array_equal(sliced[has_row], cols[off[:-1][has_row]])
    assert do.kernel1_extra_s > 0
    # bench's shared CSR (from_csr): the same rows, re-sorted in a copy, the CSR left alone;
    # built for the searcher (above), re-sorted in place
    off_d, col_d = csr_gpu.build_csr_gpu(*device_edges.to_device_edges(src, dst), n)
    given = col_d.get()
    shared = get_algorithm("merrill-do").load("gpu").from_csr(off_d, col_d, rows="degree")
    np.testing.assert_array_equal(shared.columns.get(), cols)
    np.testing.assert_array_equal(col_d.get(), given)
    assert shared.columns.data.ptr != col_d.data.ptr
    from bfs.algorithms.merrill_do import MerrillDoSearcher
    owned = MerrillDoSearcher(off_d, col_d, rows="degree", own_csr=True)
    assert owned.columns.data.ptr == col_d.data.ptr
    np.testing.assert_array_equal(owned.columns.get(), cols)
    assert merrill(src, dst, n, "merrill-do").rows == "degree"   # auto, where the re-sort fits
    with pytest.raises(BfsError, match="rows must be auto, graph or degree"):
        merrill(src, dst, n, "merrill-do", rows="hubs")
    with pytest.raises(BfsError, match="writes must be one of"):
        merrill(src, dst, n, "merrill-do", writes="sparse")
    with pytest.raises(BfsError, match="offset_bits must be"):
        merrill(src, dst, n, "merrill-do", offset_bits=16)
    with pytest.raises(BfsError, match="ahead"):
        merrill(src, dst, n, "merrill-do", ahead=-1)
    with pytest.raises(BfsError, match="head"):
        merrill(src, dst, n, "merrill-do", head=2)


def test_rows_hubs_first_in_small_buckets_equal_one_bucket(monkeypatch):
    # the in-place re-sort (rows kept: renamed_keys with a null perm) cut into buckets of 1000
    # entries gives the rows of the one-bucket re-sort
    rng = np.random.default_rng(6)
    n = 3000
    src, dst = random_edges(rng, n, 8 * n)
    one = merrill(src, dst, n, "merrill-do", rows="degree").columns.get()
    from bfs.algorithms import merrill as merrill_module
    monkeypatch.setattr(merrill_module, "resort_bucket", lambda n_rows: 1000)
    many = merrill(src, dst, n, "merrill-do", rows="degree")
    np.testing.assert_array_equal(many.columns.get(), one)
    check_against_cpu(many, src, dst, n, [0, 1, n - 1])


def test_merrill_do_dense_writes_leave_no_entry_of_an_earlier_search():
    """Dense writes have no reset pass: every entry of parent and level comes from this search.
    Two components plus isolated vertices; searches alternate between the components (each
    leaves the other's entries behind) in the directions that write them differently."""
    rng = np.random.default_rng(9)
    n = 40_000
    a, b = np.arange(0, 20_000), np.arange(20_000, 39_000)       # 39_000.. are isolated
    src = np.concatenate([rng.choice(a, 300_000), rng.choice(b, 300_000)]).astype(np.uint32)
    dst = np.concatenate([rng.choice(a, 300_000), rng.choice(b, 300_000)]).astype(np.uint32)
    for options in DO_SETTINGS.values():
        s = merrill(src, dst, n, "merrill-do", **options)
        check_against_cpu(s, src, dst, n, [5, 25_000, 7, 30_000, 39_500])


@pytest.mark.parametrize("q", [1, 7, 4095, 4096, 4097, 300_001, 4096 ** 2 + 5])
def test_scan_matches_numpy(q):
    """tiles.Scan, the frontier-degree scan of merrill and 2d: one chunk, chunk edges, several
    chunks, and past SCAN_CHUNK^2 items (the chunk totals scanned in chunks themselves)."""
    from bfs.algorithms import merrill as m, tiles
    rng = np.random.default_rng(q)
    x = rng.integers(0, 1 << 20, q).astype(np.int64)
    x[: min(q, 3)] = [1 << 40, 0, 5][: min(q, 3)]       # sums past 32 bits
    src = cp.asarray(x)
    dst = cp.full(q + 3, -7, dtype=cp.int64)
    scan = tiles.Scan(cp, m._module(), q + 3)
    scan(src, dst, q)
    np.testing.assert_array_equal(dst[:q].get(), np.cumsum(x))
    assert (dst[q:].get() == -7).all()                  # nothing written past q
    scan(src, src, q)                                   # in place
    np.testing.assert_array_equal(src.get(), np.cumsum(x))


def check_against_cpu(searcher, src, dst, n, roots):
    csr = build_csr(src, dst, n)
    for root in roots:
        root = int(root)
        searcher.search(root)
        res = searcher.gather(n)
        assert res.parent.dtype == np.int64 and res.level.dtype == np.int32
        assert res.parent.shape == (n,) and res.level.shape == (n,)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
        check = validate(src, dst, res.parent, root, res.level)
        assert check.valid, f"root {root}: {check.message}"
        assert searcher.nedge() == check.nedge


def random_edges(rng, n, m, dtype=np.uint32):
    src = rng.integers(0, n, m).astype(dtype)
    dst = rng.integers(0, n, m).astype(dtype)
    if m >= 20:
        src[:5], dst[:5] = src[5:10], dst[5:10]   # duplicates
        dst[10:15] = src[10:15]                    # self-loops
    return src, dst


@pytest.mark.parametrize("seed", range(12))
def test_levels_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    m = int(rng.integers(0, 4 * n + 1))
    src, dst = random_edges(rng, n, m)
    s = merrill(src, dst, n)
    roots = rng.integers(0, n, 5)
    check_against_cpu(s, src, dst, n, roots)


@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=VARIANT_IDS)
@pytest.mark.parametrize("seed", range(4))
def test_variants_random_graphs(variant, seed):
    # dense enough (up to 40 edges per vertex) that multi-block tiles and bottom-up levels run
    name, options = VARIANTS[variant]
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2000, 60_000))
    src, dst = random_edges(rng, n, int(rng.integers(n, 20 * n)))
    s = merrill(src, dst, n, name, **options)
    check_against_cpu(s, src, dst, n, rng.integers(0, n, 3))
    if name == "merrill-do" and options:
        assert s.launches["bottom_up"] > 0


@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=VARIANT_IDS)
def test_variants_kronecker(variant):
    name, options = VARIANTS[variant]
    src, dst = generate_edges(15, 16)
    n = 2 ** 15
    csr = build_csr(src, dst, n)
    roots = graph500_roots(n, np.diff(csr.offsets) > 0, count=4)
    s = merrill(src, dst, n, name, **options)
    check_against_cpu(s, src, dst, n, roots)
    if name == "merrill-do":
        assert s.launches["bottom_up"] > 0   # Beamer's switch fires on a Kronecker graph too


@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=VARIANT_IDS)
def test_variants_grid(variant):
    # high diameter: ~1000 levels whose frontiers (up to ~1400 vertices) need the single-CTA
    # kernel's 4-per-thread scan (past 1024 vertices), plus a root in the middle
    from bfs.graphs.lattice import lattice_edges
    name, options = VARIANTS[variant]
    src, dst, n = lattice_edges(700, 700, diagonal_prob=0.3, seed=5)
    s = merrill(src, dst, n, name, **options)
    check_against_cpu(s, src, dst, n, [0, n // 2])


@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=VARIANT_IDS)
def test_variants_path_and_star(variant):
    name, options = VARIANTS[variant]
    n = 3000
    perm = np.random.default_rng(4).permutation(n).astype(np.uint32)
    check_against_cpu(merrill(perm[:-1], perm[1:], n, name, **options), perm[:-1], perm[1:], n,
                      [perm[0], perm[n // 2]])
    n = 60_000   # hub of degree 50000 plus a path: whole-tile vertices, then a long tail
    src = np.concatenate([np.zeros(50_000, np.uint32), np.arange(50_001, n - 1, dtype=np.uint32),
                          [50_000]]).astype(np.uint32)
    dst = np.concatenate([np.arange(1, 50_001, dtype=np.uint32),
                          np.arange(50_002, n, dtype=np.uint32), [50_001]]).astype(np.uint32)
    check_against_cpu(merrill(src, dst, n, name, **options), src, dst, n, [0, 7, n - 1])


@pytest.mark.parametrize("setting", ["default", "beamer", "all-bottom-up", "all-top-down"])
def test_merrill_do_edges_examined(setting):
    """Top-down levels read every edge of their frontier; a bottom-up level reads at least one
    neighbour of each vertex it finds and only rows of vertices still open (reachable, not yet
    reached); the profile's bytes follow from those counts."""
    from bfs.harness.timing import profile_search
    options = {**DO_SETTINGS, "all-top-down": {"alpha": 1e-9}}[setting]
    src, dst = generate_edges(14, 16)
    n = 2 ** 14
    deg = np.diff(build_csr(src, dst, n).offsets)
    s = merrill(src, dst, n, "merrill-do", **options)
    for root in graph500_roots(n, deg > 0, count=3):
        s.search(int(root))
        level = s.gather(n).level
        examined = s.level_edges_examined
        assert len(examined) == len(s.directions) == s.levels_run
        assert s.edges_examined == sum(examined)
        reached = level >= 0
        by_level = np.bincount(level[reached], weights=deg[reached], minlength=s.levels_run)
        found = np.bincount(level[reached], minlength=s.levels_run + 1)
        for lv, (direction, read) in enumerate(zip(s.directions, examined)):
            if direction == "top-down":
                assert read == by_level[lv], (root, lv)
            else:
                open_edges = deg[(level > lv) | ((level < 0) & (deg > 0))].sum()
                assert found[lv + 1] <= read <= open_edges, (root, lv, read)
        if setting == "all-top-down":
            assert set(s.directions) == {"top-down"} and s.edges_examined == deg[reached].sum()
        else:
            assert "bottom-up" in s.directions
        if setting == "beamer":   # (all bottom-up re-reads unreachable rows every level)
            assert s.edges_examined < deg[reached].sum()
    profile = profile_search(s, int(root), "merrill-do")
    prof = profile["levels"]
    assert sum(p["edges_read"] for p in prof) == s.edges_examined
    assert all(p["min_bytes"] >= 4 * p["edges_read"] + 12 * p["next_vertices"] for p in prof)
    # run-ahead chains come back one entry a level, sized from the level array, and the
    # entries still add up to the search
    level = s.gather(n).level
    sizes = np.bincount(level[level >= 0], minlength=s.levels_run + 2)
    for p in prof:
        if p["kind"] == "bottom-up":
            assert p["levels"] == 1 and p["frontier_vertices"] == sizes[p["depth"]]
            assert p["next_vertices"] == sizes[p["depth"] + 1] and p["ms"] >= 0
    assert sum(p["levels"] for p in prof) == s.levels_run
    assert sum(p["ms"] for p in prof) <= profile["total_ms"] * 1.001


def test_merrill_do_run_ahead_decides_as_the_host():
    """Bottom-up levels enqueued ahead of the host's reading, each run or skipped on the device
    (decide_bottom_up), take the host's decisions: the same directions, levels and edges
    examined as one level per control read (ahead=0), with chains that end on the device's
    "no" (beta), on an empty frontier, and by running out of levels enqueued (ahead=1)."""
    src, dst = generate_edges(14, 16)
    n = 2 ** 14
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    for setting in (DO_SETTINGS["beamer"], DO_SETTINGS["alternate"], {}):
        runs = {ahead: merrill(src, dst, n, "merrill-do", ahead=ahead, **setting)
                for ahead in (0, 1, 4)}
        for root in roots:
            seen, launched = {}, {}
            for ahead, s in runs.items():
                before = s.launches["bottom_up"]
                s.search(int(root))
                launched[ahead] = s.launches["bottom_up"] - before
                seen[ahead] = (list(s.directions), list(s.level_edges_examined),
                               s.gather(n).level.tolist())
            assert seen[1] == seen[0] and seen[4] == seen[0], (setting, root)
            levels = seen[0][0].count("bottom-up")
            assert levels > 0, (setting, root)
            # ahead=0 launches a level at a time; ahead=4 enqueues 5 at each host decision
            assert launched[0] == levels and launched[4] % 5 == 0 and launched[4] >= levels
    check_against_cpu(runs[4], src, dst, n, roots)


def test_merrill_do_tail_list_searches_as_the_bitmask(monkeypatch):
    """The last levels over a list of the vertices still open (tail=1, beta = inf) find the
    same levels, edges examined and bottom-up parents as levels over the whole bitmask
    (tail=0), whether the chain runs ahead or not, and so do searches whose lists overflow (no
    room). Only the parents a bottom-up level found are compared: a bottom-up vertex takes the
    first frontier vertex of its row, while top-down levels let racing writers pick."""
    src, dst = generate_edges(14, 16)
    n = 2 ** 14
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    for setting in ({}, DO_SETTINGS["all-bottom-up"], {"ahead": 0}):
        plain = merrill(src, dst, n, "merrill-do", tail=0, **setting)
        listed = merrill(src, dst, n, "merrill-do", tail=1, **setting)
        assert plain.tail is None and listed.tail is not None
        assert merrill(src, dst, n, "merrill-do", **setting).tail is not None  # default
        tight = merrill(src, dst, n, "merrill-do", tail=1, **setting)
        tight.list_cap = 0      # no room: every collecting warp with a vertex left overflows
        sparse_runs = 0
        for root in roots:
            seen = []
            for s in (plain, listed, tight):
                s.search(int(root))
                out = s.gather(n)
                by_bottom_up = np.array([d == "bottom-up" for d in s.directions] + [False])
                found_bu = (out.level > 0) & by_bottom_up[np.maximum(out.level - 1, 0)]
                seen.append((list(s.directions), list(s.level_edges_examined),
                             out.level.tolist(), out.parent[found_bu].tolist()))
            assert seen[1] == seen[0] and seen[2] == seen[0], (setting, root)
            sparse_runs += listed.sparse_levels
            assert plain.sparse_levels == 0
        assert sparse_runs > 0, setting
        check_against_cpu(listed, src, dst, n, roots)
    assert merrill(src, dst, n, "merrill-do", tail=1, **DO_SETTINGS["beamer"]).tail is None
    with pytest.raises(BfsError, match="tail"):
        merrill(src, dst, n, "merrill-do", tail=2)
    # a GPU without room for the lists: every level sweeps the bitmask, as with tail=0
    from bfs.algorithms import merrill_do
    monkeypatch.setattr(merrill_do, "tail_lists_bytes", lambda n: device.free_memory()[0] + 1)
    swept = merrill(src, dst, n, "merrill-do")
    assert swept.tail is None
    check_against_cpu(swept, src, dst, n, roots)


def test_level_profile_adds_up():
    src, dst = generate_edges(14, 16)
    n = 2 ** 14
    for name in ("merrill", "merrill-do"):
        s = merrill(src, dst, n, name)
        s.profile_levels = prof = []
        res = s.search(1)
        levels = res.level.get()
        assert sum(p["levels"] for p in prof) == s.levels_run
        assert s.levels_run in (levels.max(), levels.max() + 1)  # last step may find nothing
        assert prof[0]["frontier_vertices"] == 1 and all(p["ms"] >= 0 for p in prof)


def test_nvtx_ranges_name_kernel1_phases_and_every_level_step(monkeypatch, tmp_path):
    """BFS_NVTX=1: Kernel 1's phases and every level step of merrill and merrill-do are pushed
    and popped through CuPy's NVTX (recorded on the way), one at a time, named as bfs.nvtx
    says, and the searches stay right; `bfs run` with BFS_NVTX=1 runs and validates."""
    import cupy.cuda.nvtx as real
    from bfs import nvtx
    names, open_ranges = [], []
    range_push, range_pop = real.RangePush, real.RangePop   # the real ones, before the patch

    def push(message, id_color=-1):
        assert not open_ranges, (open_ranges, message)     # never nested
        open_ranges.append(message)
        names.append(message)
        range_push(message, id_color)

    def pop():
        open_ranges.pop()
        range_pop()

    monkeypatch.setattr(real, "RangePush", push)
    monkeypatch.setattr(real, "RangePop", pop)
    monkeypatch.setenv("BFS_NVTX", "1")
    nvtx.reset()
    try:
        src, dst = generate_edges(12, 16)
        n = 2 ** 12
        hub = int(np.argmax(np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)))
        for name in ("merrill", "merrill-do"):
            names.clear()
            s = merrill(src, dst, n, name)
            assert {f"bfs:kernel1:{p}" for p in ("copy edges", "degrees", "offsets", "keys",
                                                 "sort", "columns")} <= set(names), names
            names.clear()
            s.profile_levels = prof = []
            check_against_cpu(s, src, dst, n, [hub])
            steps = {f"bfs:{name}:level {p['depth']} {p['kind']}" for p in prof}
            assert steps <= set(names) and not open_ranges, (steps, names)
            assert all(x.startswith(f"bfs:{name}:level ") for x in names), names
            kinds = {x.rsplit(" ", 1)[1] for x in names}
            assert kinds <= {"loop", "top-down", "bottom-up"}
            assert ("bottom-up" in kinds) == (name == "merrill-do"), kinds
    finally:
        nvtx.reset()
    g = tmp_path / "g"
    bfs_cli("generate", "kronecker", "--scale", 10, "--out", g)
    bfs_cli("run", g, "--algorithm", "merrill-do", "--backend", "gpu", "--roots", 4,
            "--out", tmp_path / "run", env={"BFS_NVTX": "1"})
    assert all(r["valid"] for r in searches(tmp_path / "run"))


def test_long_path_many_levels():
    # a path of 5000 vertices: thousands of tiny levels (the level loop's case)
    n = 5000
    perm = np.random.default_rng(3).permutation(n).astype(np.uint32)
    src, dst = perm[:-1], perm[1:]
    check_against_cpu(merrill(src, dst, n), src, dst, n, [perm[0], perm[n // 2]])


@pytest.mark.parametrize("name,alpha", [("merrill", None), ("merrill-do", None),
                                        ("merrill-do", 1e3)])
def test_level_loop_runs_a_lattice_search_in_one_launch(name, alpha):
    """A road-like search (a 300 x 300 lattice from its middle, 301 levels) is one launch of
    the level loop and one read of its result block: no multi-block level, no level from the
    host. merrill-do leaves the loop exactly where the host's rule goes bottom-up (Beamer's
    alpha test and a frontier of at least n * BOTTOM_UP_FLOOR edges), computed here from the
    levels: with alpha = 1000 near radius 90."""
    from bfs.algorithms.merrill_do import ALPHA, BOTTOM_UP_FLOOR
    from bfs.graphs.lattice import lattice_edges
    src, dst, n = lattice_edges(300, 300, ordered=True)     # vertex r * 300 + c
    root = 150 * 300 + 150
    s = merrill(src, dst, n, name, **({} if alpha is None else {"alpha": alpha}))
    calls = []
    real = s._loop_levels
    s._loop_levels = lambda q, depth: calls.append(depth) or real(q, depth)
    check_against_cpu(s, src, dst, n, [root])
    assert calls == [0] and s.launches["loop"] == 1 and s.launches["expand"] == 0
    depth = 301                     # 300 to the far corner, and the empty level that ends it
    assert s.levels_run == depth
    if name == "merrill":
        return
    level = s.gather(n).level
    degree = np.bincount(np.concatenate([src, dst]), minlength=n)
    edges = np.bincount(level, weights=degree, minlength=depth).astype(np.int64)
    nnz, seen, switch = 2 * src.size, 0, depth
    for d in range(depth):
        seen += edges[d]
        if edges[d] > (nnz - seen) / (alpha or ALPHA) and edges[d] >= int(n * BOTTOM_UP_FLOOR):
            switch = d
            break
    assert alpha is None or 50 < switch < 150
    assert s.directions == ["top-down"] * switch + ["bottom-up"] * (depth - switch)


def test_level_loop_barrier_wait_is_bounded(monkeypatch):
    """A grid barrier that waits past its bound (here 0 s: no block waits for the last
    arrival) flags the level, every block leaves, and the search raises naming it instead of
    hanging."""
    from bfs.algorithms import merrill as merrill_module
    from bfs.errors import BfsError
    n = 5000
    src, dst = np.arange(n - 1, dtype=np.uint32), np.arange(1, n, dtype=np.uint32)
    s = merrill(src, dst, n)
    monkeypatch.setattr(merrill_module, "LOOP_TIMEOUT_S", 0.0)
    with pytest.raises(BfsError, match=r"level loop: a grid barrier of level \d+ waited"):
        s.search(0)
    monkeypatch.setattr(merrill_module, "LOOP_TIMEOUT_S", 10.0)
    check_against_cpu(s, src, dst, n, [0, n // 2])     # the next search starts clean


def test_star_and_big_frontiers():
    # a hub of degree 200000 (whole-CTA gathers, multi-block levels) plus a path hanging off it
    n = 250_000
    hub = np.zeros(200_000, np.uint32)
    leaves = np.arange(1, 200_001, dtype=np.uint32)
    path = np.arange(200_001, n, dtype=np.uint32)
    src = np.concatenate([hub, path[:-1], [leaves[-1]]]).astype(np.uint32)
    dst = np.concatenate([leaves, path[1:], [path[0]]]).astype(np.uint32)
    check_against_cpu(merrill(src, dst, n), src, dst, n, [0, 5, n - 1])


def test_isolated_root_and_empty_graph():
    src = np.array([0, 1], np.uint32)
    dst = np.array([1, 1], np.uint32)
    s = merrill(src, dst, 4)
    s.search(3)
    res = s.gather(4)
    np.testing.assert_array_equal(res.parent, [-1, -1, -1, 3])
    np.testing.assert_array_equal(res.level, [-1, -1, -1, 0])
    s = merrill(np.empty(0, np.uint32), np.empty(0, np.uint32), 1)
    s.search(0)
    np.testing.assert_array_equal(s.gather(1).level, [0])


@pytest.mark.parametrize("name", ["merrill", "merrill-do"])
def test_queues_hold_the_vertices_with_an_edge(name):
    # 100000 vertices, a star of 5001 and the rest isolated: the queues and their degree
    # arrays hold the 5001 vertices with an edge plus an isolated root, and the star's level
    # of 5000 leaves fills them
    n, leaves = 100_000, np.arange(1, 5001, dtype=np.uint32)
    src, dst = np.zeros(leaves.size, np.uint32), leaves
    s = merrill(src, dst, n, name, **({"beta": 24.0} if name == "merrill-do" else {}))
    assert s.queue_cap == 5002
    assert all(q.size == 5002 for q in s.queues) and all(d.size == 5002 for d in s.degs)
    check_against_cpu(s, src, dst, n, [0, 1, 4999, n - 1])


@pytest.mark.parametrize("scale", [10, 12, 14])
def test_kronecker_levels(scale):
    src, dst = generate_edges(scale, 16)
    n = 2 ** scale
    csr = build_csr(src, dst, n)
    roots = graph500_roots(n, np.diff(csr.offsets) > 0, count=8)
    check_against_cpu(merrill(src, dst, n), src, dst, n, roots)


@pytest.mark.parametrize("name", ["email-Eu-core.txt", "p2p-Gnutella09.txt"])
def test_snap_graphs(tmp_path, name):
    from bfs.graphs.graphdir import read_edges, read_meta
    from bfs.graphs.snap import convert_snap
    out = tmp_path / "g"
    convert_snap(SNAP_DIR / name, out)
    src, dst = read_edges(out)
    n = read_meta(out).n_vertices
    csr = build_csr(src, dst, n)
    roots = graph500_roots(n, np.diff(csr.offsets) > 0, count=8)
    check_against_cpu(merrill(src, dst, n), src, dst, n, roots)


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


# --- gpu-quadratic (bfs.algorithms.gpu_quadratic): Harish and Narayanan's baseline ----------

QUADRATIC = "gpu-quadratic"


@pytest.mark.parametrize("seed", range(8))
def test_quadratic_random_graphs(seed):
    rng = np.random.default_rng(3000 + seed)
    n = int(rng.integers(1, 20_000))
    src, dst = random_edges(rng, n, int(rng.integers(0, 8 * n + 1)))
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, rng.integers(0, n, 4))


def test_quadratic_grid_high_diameter():
    """Grids are the quadratic case: every one of ~n^(1/2) levels inspects all n vertices.
    A labelled 400 x 400 grid with diagonals from a vertex and from the middle, and a
    row-major 100 x 1500 grid from its corner (1598 levels)."""
    from bfs.graphs.lattice import lattice_edges
    src, dst, n = lattice_edges(400, 400, diagonal_prob=0.3, seed=5)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, [0, n // 2])
    src, dst, n = lattice_edges(100, 1500, ordered=True)
    s = merrill(src, dst, n, QUADRATIC)
    check_against_cpu(s, src, dst, n, [0])
    assert s.levels_run == 100 + 1500 - 1   # depth 1598, plus the level that found nothing


def test_quadratic_kronecker_and_snap(tmp_path):
    from bfs.graphs.graphdir import read_edges, read_meta
    from bfs.graphs.snap import convert_snap
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, roots)
    convert_snap(SNAP_DIR / "p2p-Gnutella09.txt", tmp_path / "g")
    src, dst = read_edges(tmp_path / "g")
    n = read_meta(tmp_path / "g").n_vertices
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_against_cpu(merrill(src, dst, n, QUADRATIC), src, dst, n, roots)


def test_quadratic_path_star_isolated_root_and_empty_graph():
    n = 3000
    perm = np.random.default_rng(4).permutation(n).astype(np.uint32)
    check_against_cpu(merrill(perm[:-1], perm[1:], n, QUADRATIC), perm[:-1], perm[1:], n,
                      [perm[0], perm[n // 2]])
    hub = np.zeros(50_000, np.uint32)   # a hub's row walked by one thread
    leaves = np.arange(1, 50_001, dtype=np.uint32)
    check_against_cpu(merrill(hub, leaves, 50_001, QUADRATIC), hub, leaves, 50_001, [0, 9])
    s = merrill(np.array([0, 1], np.uint32), np.array([1, 1], np.uint32), 4, QUADRATIC)
    s.search(3)
    res = s.gather(4)
    np.testing.assert_array_equal(res.parent, [-1, -1, -1, 3])
    np.testing.assert_array_equal(res.level, [-1, -1, -1, 0])
    assert s.levels_run == 1
    s = merrill(np.empty(0, np.uint32), np.empty(0, np.uint32), 1, QUADRATIC)
    s.search(0)
    np.testing.assert_array_equal(s.gather(1).level, [0])
    with pytest.raises(BfsError, match="not a vertex"):
        s.search(1)


def test_quadratic_level_profile_adds_up():
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    root = int(graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=1)[0])
    s = merrill(src, dst, n, QUADRATIC)
    s.profile_levels = prof = []
    levels = s.search(root).level.get()
    assert len(prof) == s.levels_run == levels.max() + 1
    assert prof[0]["frontier_vertices"] == 1 and prof[-1]["next_vertices"] == 0
    for a, b in zip(prof, prof[1:]):
        assert a["next_vertices"] == b["frontier_vertices"]
    assert [p["frontier_vertices"] for p in prof] == \
        [int((levels == d).sum()) for d in range(len(prof))]


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


def test_quadratic_cli_run_and_bench_on_a_grid(tmp_path):
    """bfs run (GPU Kernel 1 from the edge list, validated on the GPU, saved parents
    re-validated on the CPU) and bfs bench (from the device CSR) on a high-diameter grid."""
    import json
    g = tmp_path / "grid"
    bfs_cli("generate", "lattice", "--rows", "60", "--cols", "400", "--diagonal-prob", "0.2",
            "--out", g)
    run, ref = tmp_path / "run", tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", QUADRATIC, "--roots", "4", "--save-parents", "1",
            "--out", run)   # --backend auto: its only backend
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", "4", "--out", ref)
    rows = searches(run)
    assert all(r["valid"] for r in rows)
    assert [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in rows] == \
        [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(ref)]
    assert json.loads((run / "run.json").read_text())["parameters"]["backend"] == "gpu"
    bfs_cli("validate", run)
    out = tmp_path / "bench.json"
    bfs_cli("bench", "--backend", "gpu", "--lattice-graphs", "40x300", "--algorithms",
            f"merrill,{QUADRATIC}", "--roots", "3", "--profile-levels", "--out", out)
    rec = json.loads(out.read_text())
    assert rec["valid"]
    a = rec["records"][0]["algorithms"][QUADRATIC]
    # a root's depth on the grid is at least its distance to the farther end: >= 150 columns
    assert a["n_validated"] == 3 and a["level_profile"]["n_steps"] > 150


# --- 2d --backend gpu (bfs.algorithms.fu_2d_gpu) ----------------------------------------------

def symmetric_block(src, dst):
    """Both directions of every non-self-loop edge: what a 1x1 partition's block holds."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    keep = src != dst
    return np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])


def check_2d_gpu(src, dst, n, roots):
    """2d --backend gpu on a 1x1 grid, both ways it is built: from a block with a communicator
    of one rank (bfs run's path) and from a device CSR with no MPI (bfs bench's path)."""
    from mpi4py import MPI

    from bfs.algorithms.fu_2d_gpu import Fu2DGpu
    from bfs.algorithms import Block
    fu_2d = get_algorithm("2d").load("gpu")   # the registry's pick for --backend gpu
    bsrc, bdst = symmetric_block(src, dst)
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]}, bsrc, bdst)
    from_block = fu_2d.build(block, RunContext("gpu"))
    assert isinstance(from_block, Fu2DGpu)
    d_src, d_dst = device_edges.to_device_edges(src, dst)
    offsets, columns = csr_gpu.build_csr_gpu(d_src, d_dst, n)
    from_csr = fu_2d.from_csr(offsets, columns)
    csr = build_csr(src, dst, n)
    for root in roots:
        root = int(root)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        for name, s in (("block", from_block), ("csr", from_csr)):
            s.search(root)
            res = s.gather(n)
            assert res.parent.shape == (n,) and res.level.shape == (n,)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"{name} root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"{name} root {root}: {check.message}"
            if name == "csr":
                assert s.nedge() == check.nedge


@pytest.mark.parametrize("seed", range(6))
def test_2d_gpu_random_graphs(seed):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(2, 40_000))   # n not a multiple of 64 most of the time: padded words
    src, dst = random_edges(rng, n, int(rng.integers(n, 12 * n)))
    check_2d_gpu(src, dst, n, rng.integers(0, n, 3))


def test_2d_gpu_kronecker():
    src, dst = generate_edges(15, 16)
    n = 2 ** 15
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_2d_gpu(src, dst, n, roots)


def test_2d_gpu_path_and_isolated_root():
    n = 3000
    perm = np.random.default_rng(4).permutation(n).astype(np.uint32)
    check_2d_gpu(perm[:-2], perm[1:-1], n, [perm[0], perm[n // 2], perm[-1]])  # last: isolated


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("grid", ["1x1", "1x2", "2x1", "2x2"])
def test_2d_gpu_mpirun_equals_seq_csr(tmp_path, grid):
    """bfs run --algorithm 2d and 2d-do --backend gpu under mpiexec, ranks sharing the one GPU
    (the exchanges through MPI): on one rank the engine (merrill, merrill-do), on more the
    grid's levels with merrill-do's bottom-up kernel over each block (2d-do bottom-up from
    level 1, and the defaults). Every search valid on the GPU (grid_gpu: parents and levels),
    the same depths, reached counts and nedge as seq-csr."""
    from helpers import random_graph
    g = tmp_path / "graph"
    bfs_cli("generate", "kronecker", "--scale", 12, "--edgefactor", 8, "--out", g)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    r, c = map(int, grid.split("x"))
    runs = [("2d",), ("2d-do",), ("2d-do", "--alpha", 1e9)]
    for graph in (g, random_graph(tmp_path / "random")):
        ref = graph.parent / f"{graph.name}-ref"
        bfs_cli("run", graph, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
        part = graph.parent / f"{graph.name}-part"
        bfs_cli("partition", graph, "--grid", grid, "--out", part)
        for k, (name, *options) in enumerate(runs):
            out = graph.parent / f"{graph.name}-run{k}"
            bfs_cli("run", part, "--algorithm", name, "--backend", "gpu", *options,
                    "--roots", 4, "--save-parents", 1, "--out", out, ranks=r * c)
            assert comparable(searches(out)) == comparable(searches(ref)), (name, options)


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
def test_grid_too_big_for_the_gpus_is_refused_before_generation(tmp_path):
    """A GPU grid whose blocks no GPU holds (scale 31 on 1x2: ~1 TiB a rank) stops at once,
    before generating, every rank exiting non-zero, with the need, the free memory and the
    largest scale this grid holds (ranks sharing the one GPU here)."""
    import time
    t = time.perf_counter()
    proc = bfs_cli("run", "--generate", "kronecker:scale=31", "--algorithm", "2d-do",
                   "--backend", "gpu", "--grid", "1x2", "--roots", 1, "--out", tmp_path / "r",
                   ranks=2, check=False, timeout=120)
    assert proc.returncode != 0
    assert "2d-do on a 1x2 grid (2147483648 vertices" in proc.stderr, proc.stderr[-2000:]
    said = __import__("re").search(r"largest Kronecker scale that fits is (\d+) on this 1x2 grid",
                                   proc.stderr)
    assert said and 20 <= int(said.group(1)) < 31, proc.stderr[-2000:]
    assert time.perf_counter() - t < 60            # generating scale 31 would take minutes
    assert not (tmp_path / "r" / "run.json").exists()


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("name,grid", [("2d", "1x1"), ("2d", "1x2"), ("2d-do", "2x1"),
                                       ("1d", "2"), ("semiring", "2x2")])
def test_unvalidated_grid_search_is_counted_on_the_gpus(tmp_path, name, grid):
    """Under mpiexec (ranks sharing the one GPU), a distributed GPU search left unvalidated is
    counted on the GPUs (bfs.validate.grid_gpu.count_grid_device, no gather, no host copy of
    the block): the same nedge, depth and reached as the GPU validator gives."""
    from helpers import random_graph
    from bfs.algorithms import ALGORITHMS
    graph = random_graph(tmp_path / "graph", n=2000, m=12000)
    part = tmp_path / "part"
    one_d = ALGORITHMS[name].partition == "1d"
    bfs_cli("partition", graph, "--1d" if one_d else "--grid", grid, "--out", part)
    ranks = int(grid) if one_d else int(grid[0]) * int(grid[2])
    runs = {}
    for mode in ("every", "none"):
        out = tmp_path / mode
        bfs_cli("run", part, "--algorithm", name, "--backend", "gpu", "--roots", 4,
                "--validate", mode, "--save-parents", 0, "--out", out, ranks=ranks)
        runs[mode] = searches(out)
    key = lambda rows: [(r["root"], r["nedge"], r["depth"], r["reached"]) for r in rows]
    assert all(r["valid"] for r in runs["every"])
    assert all(r["valid"] is None for r in runs["none"])
    assert key(runs["none"]) == key(runs["every"])


def test_count_grid_device_one_rank_engine_and_level_loop():
    """count_grid_device over a 1x1 grid, with the single-GPU engine's view and with the
    grid's level loop (engine=0): validate_grid_device's nedge, depth and reached."""
    from mpi4py import MPI

    from bfs.algorithms import Block, fu_2d_gpu
    from bfs.validate.grid_gpu import count_grid_device, validate_grid_device
    src, dst = generate_edges(11, 16)
    keep = src != dst     # a block holds both directions of every non-loop edge
    src, dst = np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])
    block = Block(comm=MPI.COMM_SELF, src=src, dst=dst,
                  manifest={"grid": [1, 1], "bounds": [0, 2 ** 11]})
    roots = graph500_roots(2 ** 11, np.bincount(src, minlength=2 ** 11) > 0, count=3)
    for engine in (1, 0):
        s = fu_2d_gpu.build(block, RunContext("gpu", {"engine": engine}))
        try:
            for root in roots:
                s.search(int(root))
                check = validate_grid_device(s.grid_view(), int(root), MPI.COMM_SELF,
                                             s.world_x, s.row_x, s.col_x)
                assert check.valid
                assert count_grid_device(s.grid_view(), MPI.COMM_SELF, s.row_x) == \
                    (check.nedge, check.depth, check.reached)
        finally:
            s.close()


def test_one_rank_searches_with_the_single_gpu_engine(monkeypatch):
    """2d and 2d-do on a 1x1 grid run merrill and merrill-do over the block (Fu2DGpu.ENGINE):
    the same levels as seq-csr and as merrill-do built from Kernel 1 on the same graph, the
    same directions and edges examined as that merrill-do, valid by the grid validator
    (grid_view) and the single-GPU one; and one host read per level step, where a run-ahead
    chain of bottom-up levels is one step, so a Kronecker search reads fewer times than it has
    levels. 2d-do's engine owns the block CSR it was built over (rows re-sorted in place)."""
    from mpi4py import MPI

    from bfs.algorithms.merrill import MerrillSearcher
    from bfs.algorithms.merrill_do import MerrillDoSearcher
    from bfs.validate.grid_gpu import validate_grid_device
    from bfs.comm.exchange import MpiExchange
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    csr = build_csr(src, dst, n)
    d_src, d_dst = device_edges.to_device_edges(src, dst)
    alone = MerrillDoSearcher(*csr_gpu.build_csr_gpu(d_src, d_dst, n))
    x = MpiExchange(MPI.COMM_SELF)
    for name, engine in (("2d", MerrillSearcher), ("2d-do", MerrillDoSearcher)):
        s = do_1x1(src, dst, n, "gpu", name)
        assert type(s.engine) is engine
        reads, steps = [0], [0]
        read_ctl, step = s.engine._read_ctl, s.engine._step
        monkeypatch.setattr(s.engine, "_read_ctl",
                            lambda *a: (reads.__setitem__(0, reads[0] + 1), read_ctl(*a))[1])
        monkeypatch.setattr(s.engine, "_step",
                            lambda *a: (steps.__setitem__(0, steps[0] + 1), step(*a))[1])
        chained = False
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
            root = int(root)
            reads[0] = steps[0] = 0
            s.search(root)
            res = s.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"{name} root {root}")
            verdict = validate_grid_device(s.grid_view(), root, MPI.COMM_SELF, x, x, x)
            check = validate(src, dst, res.parent, root, res.level)
            assert verdict.valid and check.valid, (verdict.message, check.message)
            assert verdict.nedge == check.nedge == s.nedge()
            assert reads[0] == steps[0] and reads[0] <= s.levels_run
            assert s.profile[:, 1].sum() == check.reached      # frontier sizes of every level
            if name == "2d-do":
                alone.search(root)
                assert s.directions == alone.directions
                assert s.level_edges_examined == alone.level_edges_examined
                chained |= reads[0] < s.levels_run
        if name == "2d-do":
            assert chained, "no search ran a chain of bottom-up levels past one host read"
            # the block CSR was built for the engine alone: its rows re-sorted in place, where
            # a CSR from_csr shares (bench's) is re-sorted in a copy
            assert s.engine.own_csr
            shared = type(s).from_csr(*csr_gpu.build_csr_gpu(d_src, d_dst, n))
            assert not shared.engine.own_csr


# --- 2d-do --backend gpu (bfs.algorithms.fu_2d_do_gpu) -------------------------------------------

def do_1x1(src, dst, n, backend, algorithm="2d-do", cls=None, **options):
    """A grid algorithm (2d-do, semiring) built from a 1x1 block over MPI.COMM_SELF (bfs run's
    path on one rank); cls: that searcher class instead of the registry's."""
    from mpi4py import MPI

    from bfs.algorithms import Block
    bsrc, bdst = symmetric_block(src, dst)
    block = Block(MPI.COMM_SELF, {"grid": [1, 1], "bounds": [0, n]}, bsrc, bdst)
    if cls is not None:
        return cls(block, RunContext(backend, options))
    return get_algorithm(algorithm).load(backend).build(block, RunContext(backend, options))


def test_semiring_gpu_one_rank_equals_cpu_semiring():
    """semiring --backend gpu on a 1x1 grid, a Kronecker and a random graph (n not a multiple
    of 64): levels equal seq-csr's, every tree valid and the CPU semiring's, parent for parent
    (each vertex's smallest-id neighbour one level up)."""
    rng = np.random.default_rng(901)
    n_random = 3000 + 5
    for src, dst, n in [(*generate_edges(12, 16), 2 ** 12),
                        (*random_edges(rng, n_random, 8 * n_random), n_random)]:
        gpu = do_1x1(src, dst, n, "gpu", "semiring")
        cpu = do_1x1(src, dst, n, "cpu", "semiring")
        csr = build_csr(src, dst, n)
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=3):
            root = int(root)
            gpu.search(root)
            cpu.search(root)
            got, want = gpu.gather(n), cpu.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(got.level, ref_level, err_msg=f"root {root}")
            np.testing.assert_array_equal(got.parent, want.parent, err_msg=f"root {root}")
            check = validate(src, dst, got.parent, root, got.level)
            assert check.valid, f"root {root}: {check.message}"


@pytest.mark.parametrize("alpha,rows,floor", [(1.0, "auto", 0.0), (15.0, "graph", 1 / 64),
                                              (1e9, "degree", 0.0)])
def test_2d_do_gpu_one_rank_both_directions(alpha, rows, floor):
    """2d-do --backend gpu's grid levels on a 1x1 grid (fu_2d_gpu.level_loop_class: Fu2D's
    level loop with one rank's exchanges, merrill-do's bottom_up over the block CSC) on a
    Kronecker graph and a random one (n not a multiple of 64: padded words): levels equal
    seq-csr's, every tree valid, the directions the CPU 2d-do's (both switch on the same n_f,
    m_f and m_u, and the same floor: 1/64 is the GPU's default), and a search that stays
    top-down examines the same edges per level."""
    from bfs.algorithms.fu_2d_do_gpu import Fu2DDoGpu
    from bfs.algorithms.fu_2d_gpu import level_loop_class
    rng = np.random.default_rng(900)
    n_random = 5000 + 17
    graphs = [(*generate_edges(12, 16), 2 ** 12),
              (*random_edges(rng, n_random, 12 * n_random), n_random)]
    for src, dst, n in graphs:
        gpu = do_1x1(src, dst, n, "gpu", cls=level_loop_class(Fu2DDoGpu), alpha=alpha,
                     beta=18.0, rows=rows, floor=floor)
        cpu = do_1x1(src, dst, n, "cpu", alpha=alpha, beta=18.0, floor=floor)
        assert isinstance(gpu, Fu2DDoGpu) and gpu.engine is None
        # rows hubs first: each column's rows by falling degree (ties by id), the head first
        offsets, col_rows = gpu.csc_offsets.get(), gpu.csc_rows.get()
        degree = np.diff(gpu.csr_offsets.get())
        key = -degree[col_rows].astype(np.int64) * (2 * n) + col_rows
        column = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        in_order = (np.diff(key) >= 0) | (np.diff(column) != 0)   # duplicates: equal keys
        assert gpu.rows_order == ("graph" if rows == "graph" else "degree")
        assert in_order.all() == (rows != "graph") or not col_rows.size
        np.testing.assert_array_equal(gpu.head.get()[np.diff(offsets) > 0],
                                      col_rows[offsets[:-1][np.diff(offsets) > 0]])
        csr = build_csr(src, dst, n)
        for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=3):
            root = int(root)
            gpu.search(root)
            res = gpu.gather(n)
            _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"root {root}: {check.message}"
            cpu.search(root)
            assert gpu.directions == cpu.directions, (root, gpu.directions, cpu.directions)
            assert len(gpu.directions) == gpu.levels_run == len(gpu.level_edges_examined)
            assert gpu.edges_examined == sum(gpu.level_edges_examined)
            if alpha == 1.0:
                assert set(gpu.directions) == {"top-down"}
                assert gpu.level_edges_examined == cpu.level_edges_examined
            if alpha == 1e9:   # bottom-up from level 1: the bottom-up kernel ran
                assert gpu.directions[:2] == ["top-down", "bottom-up"]
    if alpha == 1e9:
        assert gpu.launches["bottom_up"] > 0


def _count_reads(searcher) -> None:
    """searcher.reads += 1 at each read of the device's control block."""
    read = searcher._read_ctl

    def counted(*where):
        searcher.reads += 1
        return read(*where)
    searcher.reads, searcher._read_ctl = 0, counted


@pytest.mark.parametrize("options", [{}, {"beta": 18.0, "ahead": 1}, {"alpha": 1.0}],
                         ids=["defaults", "back-to-top-down", "top-down"])
def test_2d_do_gpu_chains_replayed_as_cuda_graphs(options):
    """2d-do's grid levels on a 1x1 grid (NCCL over one rank): each chain of levels captured
    once as a CUDA graph and replayed (graphs=1, the default) searches as the chains launched
    one by one (graphs=0): levels equal seq-csr's, trees valid, the same directions and edges
    examined per level; a second search from a root replays what the first captured (no new
    graph) and reads the device as often."""
    from bfs.algorithms.fu_2d_do_gpu import Fu2DDoGpu
    from bfs.algorithms.fu_2d_gpu import level_loop_class
    src, dst = generate_edges(13, 16)
    n = 2 ** 13
    cls = level_loop_class(Fu2DDoGpu)
    replayed = do_1x1(src, dst, n, "gpu", cls=cls, **options)
    launched = do_1x1(src, dst, n, "gpu", cls=cls, graphs=0, **options)
    assert (replayed.graphs, launched.graphs) == (1, 0)
    for s in (replayed, launched):
        _count_reads(s)
    csr = build_csr(src, dst, n)
    for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
        root = int(root)
        _, ref_level = bfs_csr(csr.offsets, csr.columns, root)
        seen = []
        for s in (replayed, launched, replayed):
            s.reads = 0
            s.search(root)
            res = s.gather(n)
            np.testing.assert_array_equal(res.level, ref_level, err_msg=f"root {root}")
            check = validate(src, dst, res.parent, root, res.level)
            assert check.valid, f"root {root}: {check.message}"
            seen.append((s.directions, s.level_edges_examined, s.reads,
                         len(replayed._captured)))
        (d1, e1, r1, kept1), (d0, e0, r0, _), (d2, e2, r2, kept2) = seen
        assert d1 == d0 == d2 and e1 == e0 == e2, (root, seen)
        assert r1 == r0 == r2, (root, seen)      # a replayed chain still ends in one read
        assert kept2 == kept1 > 0, (root, seen)  # the second search captured nothing new
    assert not launched._captured
    if options.get("alpha") == 1.0:
        assert set(replayed.directions) == {"top-down"}
    else:
        assert "bottom-up" in replayed.directions


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
def test_2d_do_gpu_run_equals_seq_csr(tmp_path):
    """bfs run --algorithm 2d-do --backend gpu on a 1x1 partition of a small Kronecker graph,
    with the default switch and bottom-up from level 1: every search valid (on the GPU), the
    same depths, reached counts and nedge as seq-csr."""
    import json
    g = tmp_path / "graph"
    bfs_cli("generate", "kronecker", "--scale", 12, "--edgefactor", 16, "--out", g)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    ref = tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
    part = tmp_path / "part"
    bfs_cli("partition", g, "--grid", "1x1", "--out", part)
    for alpha in (15, 1e9):
        out = tmp_path / f"run-{alpha}"
        bfs_cli("run", part, "--algorithm", "2d-do", "--backend", "gpu", "--alpha", alpha,
                "--roots", 4, "--save-parents", 1, "--out", out, ranks=1)
        info = json.loads((out / "run.json").read_text())
        assert info["valid"] and "grid_gpu" in info["validation"]
        assert info["parameters"]["alpha"] == alpha
        assert comparable(searches(out)) == comparable(searches(ref))


# -- bfs.validate.gpu: the same verdicts as the CPU validator ---------------------------------
def _validate_both(src, dst, parent, level, root, chunks=1, dtype=np.uint32):
    from bfs.validate.gpu import validate_device
    cpu = validate(src, dst, parent, root, level)
    pieces = [(cp.asarray(a.astype(dtype)), cp.asarray(b.astype(dtype)))
              for a, b in zip(np.array_split(src, chunks), np.array_split(dst, chunks))]
    dev = validate_device(lambda: pieces, cp.asarray(parent), cp.asarray(level), root)
    return cpu, dev


def _two_component_search(seed):
    """A random graph plus a disjoint path (another component), searched by seq-csr."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    src, dst = random_edges(rng, n, 3 * n)
    extra = np.arange(n, n + 10, dtype=np.uint32)
    src = np.concatenate([src, extra[:-1]])
    dst = np.concatenate([dst, extra[1:]])
    n += 10
    csr = build_csr(src, dst, n)
    root = int(src[0])
    parent, level = bfs_csr(csr.offsets, csr.columns, root)
    return rng, src, dst, n, root, parent.astype(np.int64), level.astype(np.int32)


@pytest.mark.parametrize("chunks,dtype", [(1, np.uint32), (3, np.uint32), (2, np.int64)])
def test_validate_gpu_agrees_on_valid_searches(chunks, dtype):
    for seed in range(5):
        _, src, dst, n, root, parent, level = _two_component_search(seed)
        cpu, dev = _validate_both(src, dst, parent, level, root, chunks, dtype)
        assert cpu.valid and dev.valid, dev.message
        assert (dev.nedge, dev.reached, dev.depth) == (cpu.nedge, cpu.reached, cpu.depth)


def _mutations(rng, n, root, parent, level):
    """Named single faults, each breaking one Graph500 rule (the rule the GPU must name)."""
    reached = np.flatnonzero((parent != -1) & (np.arange(n) != root))
    unreached = np.flatnonzero(parent == -1)
    v = int(rng.choice(reached))
    yield "root-parent", 1, {("parent", root): int(v)}
    yield "out-of-range", 1, {("parent", v): n + 5}
    yield "negative", 1, {("parent", v): -7}
    a, b = int(unreached[0]), int(unreached[1])
    # a parent 2-cycle in the other component, levels left -1 (rule 2 catches what the
    # levels cannot explain; the CPU validator calls it a cycle, rule 1)
    yield "two-cycle", (1, 2), {("parent", a): b, ("parent", b): a}
    yield "two-cycle-levels", (1, 2), {("parent", a): b, ("parent", b): a,
                                        ("level", a): 4, ("level", b): 5}
    yield "level-off", 2, {("level", v): int(level[v]) + 1}
    yield "root-level", 2, {("level", root): 1}
    deepest = int(np.argmax(level))
    yield "dropped-leaf", 4, {("parent", deepest): -1, ("level", deepest): -1}
    # re-parent v to a same-level-minus-one vertex that is not its neighbour
    same = np.flatnonzero(level == level[v] - 1)
    yield "not-an-edge", (3, 5), {("parent", v): int(same[-1]) if len(same) else root}


@pytest.mark.parametrize("seed", range(6))
def test_validate_gpu_catches_every_fault(seed):
    rng, src, dst, n, root, parent, level = _two_component_search(100 + seed)
    for name, rules, changes in _mutations(rng, n, root, parent, level):
        p, lv = parent.copy(), level.copy()
        for (which, i), value in changes.items():
            (p if which == "parent" else lv)[i] = value
        cpu, dev = _validate_both(src, dst, p, lv, root, chunks=2)
        assert cpu.valid == dev.valid, f"{name}: cpu {cpu.message} / gpu {dev.message}"
        if dev.valid:   # e.g. the re-parent happened to pick a neighbour: still a valid tree
            continue
        rules = rules if isinstance(rules, tuple) else (rules,)
        assert dev.rule in rules, f"{name}: {dev.message}"
        assert dev.message.startswith(f"rule {dev.rule}:")


def test_validate_gpu_random_faults_match_cpu():
    # random single-entry corruptions: both validators must agree on valid / invalid
    rng, src, dst, n, root, parent, level = _two_component_search(7)
    for _ in range(300):
        p, lv = parent.copy(), level.copy()
        i = int(rng.integers(0, n))
        if rng.random() < 0.5:
            p[i] = int(rng.integers(-1, n))
        else:
            lv[i] = int(rng.integers(-1, level.max() + 2))
        cpu, dev = _validate_both(src, dst, p, lv, root)
        assert cpu.valid == dev.valid, f"entry {i}: cpu {cpu.message} / gpu {dev.message}"


def test_validate_gpu_bad_edge_ids_and_directed_halves():
    from bfs.validate.gpu import validate_device
    _, src, dst, n, root, parent, level = _two_component_search(3)
    bad_dst = dst.copy()
    bad_dst[5] = n + 1
    dev = validate_device(lambda: [(cp.asarray(src), cp.asarray(bad_dst))], cp.asarray(parent),
                          cp.asarray(level), root)
    assert not dev.valid and f"outside 0..{n - 1}" in dev.message and "edge 5" in dev.message
    # directed halves (a partition's block): both directions listed, only u -> v marks
    loops = src == dst
    s2 = np.concatenate([src[~loops], dst[~loops]])
    d2 = np.concatenate([dst[~loops], src[~loops]])
    dev = validate_device(lambda: [(cp.asarray(s2), cp.asarray(d2))], cp.asarray(parent),
                          cp.asarray(level), root, both_directions=False)
    assert dev.valid and dev.nedge == validate(src, dst, parent, root, level).nedge


def test_bench_validates_every_search_on_gpu(tmp_path):
    import json
    from bfs.harness.bench import run_bench
    from bfs.graphs.snap import convert_snap
    snap = tmp_path / "email"
    convert_snap(SNAP_DIR / "email-Eu-core.txt", snap)
    out = tmp_path / "b.json"
    assert run_bench("gpu", [10], ["merrill", "2d"], 4, out, lattices=[(30, 40)],
                     graph_dirs=[snap]) == 0
    records = json.loads(out.read_text())["records"]
    assert [r["graph"] for r in records] == ["kron-s10-e16", "lattice-30x40", "email-Eu-core"]
    for rec in records:
        assert set(rec["algorithms"]) == {"cupy-baseline", "merrill", "2d"}
        for a in rec["algorithms"].values():
            rows = searches(Path(a["run_dir"]))
            assert len(rows) == 4 and a["n_validated"] == 4
            assert all(r["valid"] for r in rows)


@pytest.mark.parametrize("command", [
    ["bench", "--backend", "gpu", "--graphs", "{g}", "--algorithms", "merrill", "--roots", "2"],
    ["run", "{g}", "--algorithm", "merrill", "--backend", "gpu", "--roots", "2", "--out", "{r}"],
], ids=["bench", "run"])
@pytest.mark.parametrize("how", ["truncated", "foreign"])
def test_damaged_graph_is_named_by_the_gpu_readers(tmp_path, command, how):
    """The GPU edge reader (pinned batches of row groups) goes through the same checked parts."""
    g = tmp_path / "g"
    bfs_cli("generate", "kronecker", "--scale", "10", "--out", g)
    part = g / "edges" / "part-00000.parquet"
    part.write_bytes(part.read_bytes()[:5000] if how == "truncated" else b"not parquet" * 100)
    proc = bfs_cli(*[a.format(g=g, r=tmp_path / "r") for a in command], check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("bfs: error:") and "g/edges/part-00000.parquet: " in last, last
    assert not (tmp_path / "r").exists()


# hybrid (Munguia et al.): every placement of the tasks against seq-csr, every tree validated
HYBRID_SETTINGS = {"workload-all-gpu": {"mode": "workload", "lambda": 0},
                   "workload-all-cpu": {"mode": "workload", "lambda": float("inf")},
                   "workload-mixed": {"mode": "workload", "lambda": 200},
                   "fixed-0": {"mode": "fixed", "gpu_share": 0.0},
                   "fixed-0.5": {"mode": "fixed", "gpu_share": 0.5},
                   "fixed-1": {"mode": "fixed", "gpu_share": 1.0}}


@pytest.mark.parametrize("tasks", [1, 16])
@pytest.mark.parametrize("setting", list(HYBRID_SETTINGS))
def test_hybrid_levels_equal_seq_csr(setting, tasks):
    src, dst = generate_edges(14, 16)
    n = 1 << 14
    opts = {"tasks": tasks, **HYBRID_SETTINGS[setting]}
    searcher = get_algorithm("hybrid").load("gpu").build(EdgeList(src, dst, n),
                                                          RunContext("gpu", opts))
    csr = build_csr(src, dst, n)
    ran = {"cpu": 0, "gpu": 0}
    for root in graph500_roots(n, np.diff(csr.offsets) > 0, count=4):
        root = int(root)
        res = searcher.search(root)
        _, want = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(res.level, want)
        check = validate(src, dst, res.parent, root, res.level)
        assert check.valid, check.message
        for side in ran:
            ran[side] += searcher.task_levels[side]
    if setting in ("workload-all-gpu", "fixed-1"):
        assert ran["cpu"] == 0 and ran["gpu"] > 0
    if setting in ("workload-all-cpu", "fixed-0"):
        assert ran["gpu"] == 0 and ran["cpu"] > 0
    if setting == "workload-mixed" or (setting == "fixed-0.5" and tasks > 1):
        assert ran["cpu"] > 0 and ran["gpu"] > 0


def test_hybrid_run_records_its_options(tmp_path):
    from bfs.cli import main
    graph = tmp_path / "g"
    assert main(["generate", "kronecker", "--scale", "10", "--out", str(graph)]) == 0
    assert main(["run", str(graph), "--algorithm", "hybrid", "--mode", "fixed", "--tasks", "4",
                 "--roots", "4", "--out", str(tmp_path / "r")]) == 0
    import json
    params = json.loads((tmp_path / "r" / "run.json").read_text())["parameters"]
    assert params["mode"] == "fixed" and params["tasks"] == 4 and params["gpu_share"] == 0.5
    assert all(row["valid"] for row in searches(tmp_path / "r"))


# --- gpu-out-of-core (bfs.algorithms.gpu_out_of_core): the CSR in host memory, streamed -----

OOC = "gpu-out-of-core"


def out_of_core(src, dst, n, limit, **options):
    from bfs.algorithms.gpu_out_of_core import vertex_state_bytes
    limit = vertex_state_bytes(n) + limit      # the state, plus `limit` for buffers and table
    return get_algorithm(OOC).load("gpu").build(
        EdgeList(src, dst, n), RunContext("gpu", {"device_memory_limit": limit, **options}))


def check_out_of_core(src, dst, n, roots, limit=64 * 1024):
    """Levels equal seq-csr's and every search validates, with far more blocks than one; each
    search streams more than the whole CSR (its blocks again at every level)."""
    from bfs.algorithms.gpu_out_of_core import csr_bytes
    s = out_of_core(src, dst, n, limit)
    csr = build_csr(src, dst, n)
    assert s.n_blocks > 4 and s.buffer_bytes * 4 < csr_bytes(csr.offsets)
    assert s.device_bytes <= s.limit
    check_against_cpu(s, src, dst, n, roots)
    for root in roots:
        s.search(int(root))
        res = s.gather(n)
        if (res.level >= 0).sum() > n // 2:    # a search of the giant component
            assert s.bytes_copied > csr_bytes(csr.offsets)
            assert s.copy_s > 0 and s.transfer_rate() > 0
        assert s.nedge() == validate(src, dst, res.parent, int(root), res.level).nedge
    return s


def test_out_of_core_kronecker_12_many_blocks():
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    s = check_out_of_core(src, dst, n, roots)
    assert s.n_blocks > 10


def test_out_of_core_snap_and_grid(tmp_path):
    from bfs.graphs.graphdir import read_edges, read_meta
    from bfs.graphs.lattice import lattice_edges
    from bfs.graphs.snap import convert_snap
    convert_snap(SNAP_DIR / "p2p-Gnutella09.txt", tmp_path / "g")
    src, dst = read_edges(tmp_path / "g")
    n = read_meta(tmp_path / "g").n_vertices
    roots = graph500_roots(n, np.diff(build_csr(src, dst, n).offsets) > 0, count=4)
    check_out_of_core(src, dst, n, roots)
    src, dst, n = lattice_edges(100, 300, diagonal_prob=0.2, seed=3)
    check_out_of_core(src, dst, n, [0, n // 2], limit=16 * 1024)


def test_out_of_core_hub_rows_split_isolated_root_and_tiny_blocks():
    hub = np.zeros(50_000, np.uint32)           # a hub row split over many blocks
    leaves = np.arange(1, 50_001, dtype=np.uint32)
    s = out_of_core(hub, leaves, 50_001, 16 * 1024)
    assert s.n_blocks > 50
    check_against_cpu(s, hub, leaves, 50_001, [0, 9])
    rng = np.random.default_rng(11)
    src, dst = random_edges(rng, 500, 3000)
    s = out_of_core(src, dst, 500, 1 << 20, max_block_bytes=32)   # a few edges a block
    assert s.buffer_bytes <= 32 and s.n_blocks > 500
    check_against_cpu(s, src, dst, 500, [0, 7])
    s = out_of_core(np.array([0, 1], np.uint32), np.array([1, 1], np.uint32), 4, 1024)
    s.search(3)
    np.testing.assert_array_equal(s.gather(4).level, [-1, -1, -1, 0])
    assert s.levels_run == 1


def test_out_of_core_too_small_limit_is_refused():
    from bfs.algorithms.gpu_out_of_core import vertex_state_bytes
    src, dst = generate_edges(10, 16)
    n = 2 ** 10
    need = vertex_state_bytes(n)
    with pytest.raises(BfsError) as e:
        get_algorithm(OOC).load("gpu").build(EdgeList(src, dst, n),
                                             RunContext("gpu", {"device_memory_limit": 1000}))
    assert str(need) in str(e.value) and "1000" in str(e.value)


def test_out_of_core_cli_run_validates_on_the_cpu(tmp_path):
    import json
    g = tmp_path / "grid"
    bfs_cli("generate", "lattice", "--rows", "60", "--cols", "200", "--diagonal-prob", "0.2",
            "--out", g)
    run, ref = tmp_path / "run", tmp_path / "ref"
    bfs_cli("run", g, "--algorithm", OOC, "--device-memory-limit", "192K", "--roots", "4",
            "--save-parents", "1", "--out", run)
    bfs_cli("run", g, "--algorithm", "seq-csr", "--roots", "4", "--out", ref)
    rows = searches(run)
    assert all(r["valid"] for r in rows)
    assert [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in rows] == \
        [(r["root"], r["depth"], r["reached"], r["nedge"]) for r in searches(ref)]
    info = json.loads((run / "run.json").read_text())
    assert info["parameters"]["device_memory_limit"] == 192 * 1024
    assert info["validation"].startswith("cpu")
    bfs_cli("validate", run)
    proc = bfs_cli("run", g, "--algorithm", OOC, "--device-memory-limit", "1K", "--out",
                   tmp_path / "small", check=False)
    assert proc.returncode == 1 and "device memory limit of 1024 bytes" in proc.stderr


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("grid", ["1x2", "1x4"])
def test_peer_level_loop_searches_as_seq_csr(tmp_path, grid):
    """2d-do on a grid of one row with peer=on (ranks sharing the one GPU: their windows are
    the same device's memory, opened by CUDA IPC from the other processes): a lattice's every
    level runs in the ranks' level loops (no host-launched top-down level), a Kronecker graph's
    hand the hub levels back to the host's chains and return; every search valid, with the
    depths, reached counts and nedge of seq-csr, as peer=off gives them (and loop_spread=0,
    the frontier on the fewest blocks, the default's other choice)."""
    import json
    from helpers import random_graph
    ranks = int(grid[2])
    lattice, kron = tmp_path / "lattice", tmp_path / "kron"
    bfs_cli("generate", "lattice", "--rows", 30, "--cols", 41, "--out", lattice)
    bfs_cli("generate", "kronecker", "--scale", 11, "--edgefactor", 8, "--out", kron)
    comparable = lambda rows: [(r["root"], r["depth"], r["reached"], r["nedge"], r["valid"])
                               for r in rows]
    for graph in (lattice, kron, random_graph(tmp_path / "random")):
        ref = graph.parent / f"{graph.name}-ref"
        bfs_cli("run", graph, "--algorithm", "seq-csr", "--roots", 4, "--out", ref)
        part = graph.parent / f"{graph.name}-part"
        bfs_cli("partition", graph, "--grid", grid, "--out", part)
        for mode, options in (("on", "peer=on"), ("spread", "peer=on,loop_spread=0"),
                              ("off", "peer=off")):
            out = graph.parent / f"{graph.name}-{mode}"
            bfs_cli("run", part, "--algorithm", f"2d-do@{options}", "--backend", "gpu",
                    "--roots", 4, "--save-parents", 1, "--out", out, ranks=ranks, timeout=600)
            assert comparable(searches(out)) == comparable(searches(ref)), (graph.name, mode)
            launches = json.loads((out / "run.json").read_text())["measurements"]["launches"]
            if mode == "off":
                assert "loop" not in launches
            elif graph is lattice:       # every level in the loop: one launch a search
                assert launches["loop"] >= 4 and launches["expand"] == 0, launches
            else:
                assert launches["loop"] >= 4, launches


@pytest.mark.skipif(__import__("shutil").which("mpiexec") is None, reason="no mpiexec on PATH")
@pytest.mark.parametrize("graph", ["lattice", "hub"])
def test_peer_level_loop_leaves_its_wait_when_a_rank_stops(tmp_path, graph):
    """A rank that stops before a search (here: it never starts it) leaves the others waiting
    on its flag: the lattice's level loop (PEER_TIMEOUT_S), or on a graph with a hub, which the
    loop does not take, the peer share of In (SHARE_TIMEOUT_S); they leave within the bounded
    wait and the search raises one line naming the rank waited on and the level (ranks sharing
    the one GPU; a BfsError ends a run non-zero with nothing half written, the CPU fault
    tests')."""
    import os
    import subprocess
    import sys
    import time
    from helpers import ROOT
    script = tmp_path / "stall.py"
    script.write_text(
        "import sys\n"
        "from mpi4py import MPI\n"
        "from bfs.algorithms import Block, RunContext, get_algorithm\n"
        "from bfs.errors import BfsError\n"
        "from bfs.graphs.lattice import lattice_edges\n"
        "from bfs.harness.sessions_mpi import select_gpu\n"
        "from bfs.partition import GridLayout\n"
        "import numpy as np\n"
        "comm = MPI.COMM_WORLD\n"
        "rank = comm.Get_rank()\n"
        "select_gpu(rank)\n"
        f"src, dst, n = lattice_edges({'20, 20' if graph == 'lattice' else '80, 80'})\n"
        "if n > 400:   # a hub (vertex 0 joined to every other): the level loop does not run\n"
        "    src = np.concatenate([src, np.zeros(n - 1, src.dtype)])\n"
        "    dst = np.concatenate([dst, np.arange(1, n, dtype=dst.dtype)])\n"
        "src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])\n"
        "layout = GridLayout(n, 1, 2)\n"
        "mine = (dst >= layout.bounds[rank]) & (dst < layout.bounds[rank + 1])\n"
        "manifest = {'grid': [1, 2], 'bounds': layout.bounds.tolist(), 'n_vertices': n}\n"
        "s = get_algorithm('2d-do').load('gpu').build(\n"
        "    Block(comm, manifest, src[mine], dst[mine]), RunContext('gpu', {'peer': 'on'}))\n"
        "assert s.peers is not None and s.in_share is not None\n"
        "s.search(0)\n"
        "comm.Barrier()\n"
        "if rank == 1:\n"
        "    print('rank 1 stops', flush=True)\n"
        "    comm.Barrier()\n"
        "    sys.exit(0)\n"
        "try:\n"
        "    s.search(5)\n"
        "except BfsError as e:\n"
        "    print('raised:', e, flush=True)\n"
        "    comm.Barrier()\n"
        "    sys.exit(0)\n"
        "print('no error', flush=True)\n"
        "comm.Barrier()\n")
    t = time.perf_counter()
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "OMPI_ALLOW_RUN_AS_ROOT": "1",
                               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    from bfs.algorithms.fu_2d_do_peer import PEER_TIMEOUT_S
    from bfs.comm.peer import SHARE_TIMEOUT_S
    out = proc.stdout + proc.stderr
    if graph == "lattice":
        assert "raised: 2d-do level loop, rank 0 of the grid row: level 0: rank 1 did not " \
               f"arrive within {PEER_TIMEOUT_S:g} s" in out, out[-3000:]
    else:
        assert "raised: peer share, rank 0 of the grid row: level 0: rank 1 did not arrive " \
               f"('cleared' flag) within {SHARE_TIMEOUT_S:g} s" in out, out[-3000:]
    assert time.perf_counter() - t < 120, out[-3000:]
