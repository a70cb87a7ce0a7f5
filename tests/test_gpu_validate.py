"""GPU: the Graph500 validation on the GPU (bfs.validate.gpu) gives the CPU validator's
verdicts on valid searches and on every planted fault; bench validates every search there.
Skipped (with the reason) without CuPy or a CUDA device; on a GPU machine: python3 -m pytest
-q -m gpu tests/test_gpu_validate.py
"""
from pathlib import Path

import numpy as np
import pytest

from gpu_helpers import cp, require_gpu  # noqa: E402

require_gpu()
pytestmark = pytest.mark.gpu

from bfs.algorithms.seq_csr import bfs_csr  # noqa: E402
from bfs.build.csr_cpu import build_csr  # noqa: E402
from bfs.validate import validate  # noqa: E402

from helpers import SNAP_DIR, bfs_cli, searches  # noqa: E402

from gpu_helpers import random_edges  # noqa: E402


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


def test_bfs_validate_checks_an_in_place_run_on_the_gpu_as_the_cpu_does(tmp_path):
    """`bfs validate` of a GPU run over a graph generated in place makes the edges again on the
    GPU and checks each saved search there (bfs.validate.gpu); its report equals the CPU's
    (CUDA_VISIBLE_DEVICES empty: generated and checked on the CPU) on a valid saved search and
    on a planted wrong tree."""
    import json
    from helpers import plant_parent
    run = tmp_path / "run"
    bfs_cli("run", "--generate", "kronecker:scale=12,edgefactor=16", "--algorithm",
            "merrill-do", "--backend", "gpu", "--roots", "2", "--save-parents", "1",
            "--out", run)
    reports = {}
    for planted in (False, True):
        if planted:
            plant_parent(run)
        for where, env in (("gpu", {}), ("cpu", {"CUDA_VISIBLE_DEVICES": ""})):
            out = bfs_cli("validate", run, "--report", tmp_path / f"{where}.json", env=env,
                          check=False)
            assert out.returncode == (1 if planted else 0), out.stderr
            assert f"on the {where.upper()} to validate against" in out.stderr, out.stderr
            reports[where] = json.loads((tmp_path / f"{where}.json").read_text())
        assert reports["gpu"] == reports["cpu"], reports
        assert reports["gpu"]["valid"] is not planted
