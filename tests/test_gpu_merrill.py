"""GPU: merrill and merrill-do (bfs.algorithms.merrill, merrill_do) against the CPU: their
kernel variants and switch settings, the frontier scan, the level loop (one GPU), Kronecker and
SNAP graphs. Skipped (with the reason) without CuPy or a CUDA device; on a GPU machine:
python3 -m pytest -q -m gpu tests/test_gpu_merrill.py
"""
import numpy as np
import pytest

from bfs.errors import BfsError
from gpu_helpers import cp, require_gpu  # noqa: E402

require_gpu()
pytestmark = pytest.mark.gpu

from bfs.algorithms import merrill_do
from bfs.build import csr_gpu
from bfs import device
from bfs.graphs import device_edges
from bfs.algorithms import get_algorithm  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.graphs.kronecker import generate_edges  # noqa: E402
from bfs.harness.roots import graph500_roots  # noqa: E402

from helpers import SNAP_DIR, bfs_cli, searches  # noqa: E402

from gpu_helpers import check_against_cpu, merrill, random_edges  # noqa: E402


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


