"""gpu-out-of-core without a GPU: the edge-block plan (plan_blocks, plan_for_limit), a host
emulation of the block-by-block search over it, byte-count parsing, and the CLI's refusals."""
import numpy as np
import pytest

from bfs.algorithms import ALGORITHMS
from bfs.algorithms.gpu_out_of_core import (MIN_BLOCK_BYTES, block_bytes, csr_bytes,
                                            plan_blocks, plan_for_limit, state_bytes,
                                            vertex_state_bytes)
from bfs.build.csr_cpu import build_csr
from bfs.algorithms.seq_csr import bfs_csr
from bfs.cli import main
from bfs.device import parse_bytes
from bfs.errors import BfsError
from bfs.graphs.kronecker import generate_edges
from helpers import write_graph


def check_plan(offsets, budget, blocks):
    """Every invariant plan_blocks promises."""
    offsets = np.asarray(offsets, np.int64)
    n, nnz = len(offsets) - 1, int(offsets[-1])
    assert blocks[0][0] == 0 and blocks[0][2] == 0
    assert blocks[-1][1] == n and blocks[-1][3] == nnz
    for (rl, rh, el, eh) in blocks:
        assert rl < rh and el <= eh
        assert block_bytes(rh - rl, eh - el) <= budget
        assert offsets[rl] <= el and eh <= offsets[rh]          # edges of the block's rows
    for a, b in zip(blocks, blocks[1:]):
        assert b[2] == a[3]                                       # edges partition [0, nnz)
        if b[0] == a[1] - 1:                                      # a shared row: split
            r = b[0]
            assert block_bytes(1, offsets[r + 1] - offsets[r]) > budget
            assert a[3] < offsets[r + 1]
        else:
            assert b[0] == a[1]                                   # rows in order, no gap
    seen = np.zeros(n, int)
    for rl, rh, el, eh in blocks:
        seen[rl:rh] += 1
    assert (seen >= 1).all()
    deg_bytes = np.array([block_bytes(1, d) for d in np.diff(offsets)])
    assert (seen[deg_bytes <= budget] == 1).all()                 # only split rows repeat


def emulate_search(offsets, columns, blocks, root):
    """The search the device runs, on the host: per level only the blocks whose row range
    holds a frontier vertex (and that have edges), each expanding its part of those rows."""
    n = len(offsets) - 1
    level = np.full(n, -1, np.int32)
    level[root] = 0
    frontier = np.array([root])
    depth, copied = 0, 0
    while len(frontier):
        depth += 1
        nxt = []
        fset = np.zeros(n, bool)
        fset[frontier] = True
        for rl, rh, el, eh in blocks:
            if eh == el or not fset[rl:rh].any():
                continue
            copied += block_bytes(rh - rl, eh - el)
            for v in np.flatnonzero(fset[rl:rh]) + rl:
                for e in range(max(offsets[v], el), min(offsets[v + 1], eh)):
                    w = columns[e]
                    if level[w] == -1:
                        level[w] = depth
                        nxt.append(w)
        frontier = np.array(nxt, dtype=np.int64)
    return level, copied


def random_offsets(rng, n, hubs=()):
    deg = rng.integers(0, 4, n) * (rng.random(n) < 0.7)
    for h in hubs:
        deg[h] = 500
    return np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)


@pytest.mark.parametrize("budget", [MIN_BLOCK_BYTES, 24, 37, 100, 1000, 4096, 10**9])
def test_plan_covers_rows_and_edges_within_budget(budget):
    rng = np.random.default_rng(budget)
    offsets = random_offsets(rng, 300, hubs=(0, 17, 299))
    blocks = plan_blocks(offsets, budget)
    check_plan(offsets, budget, blocks)
    if budget == 10**9:
        assert blocks == [(0, 300, 0, int(offsets[-1]))]


def test_plan_tiny_budget_one_edge_per_block_and_huge_rows_split():
    offsets = np.array([0, 3, 3, 3, 10], np.int64)      # rows of 3, 0, 0, 7 edges
    blocks = plan_blocks(offsets, MIN_BLOCK_BYTES)
    check_plan(offsets, MIN_BLOCK_BYTES, blocks)
    assert [b for b in blocks if b[3] > b[2]] == \
        [(0, 1, e, e + 1) for e in range(3)] + [(3, 4, e, e + 1) for e in range(3, 10)]
    # the empty rows 1, 2 get a block of their own (16 + 8 bytes > 20 with a neighbour)
    assert (1, 2, 3, 3) in blocks and (2, 3, 3, 3) in blocks
    # a hub of 1000 edges with 1 KiB blocks (252 edges of one row): three split parts, then
    # the hub's last 244 edges share a block with the next row
    hub = np.array([0, 1000, 1001], np.int64)
    assert plan_blocks(hub, 1024) == [(0, 1, 0, 252), (0, 1, 252, 504), (0, 1, 504, 756),
                                      (0, 2, 756, 1001)]
    check_plan(hub, 1024, plan_blocks(hub, 1024))


def test_plan_empty_rows_and_edgeless_graph():
    offsets = np.zeros(1001, np.int64)                    # 1000 vertices, no edges
    blocks = plan_blocks(offsets, 808)                    # 100 rows' offsets a block
    check_plan(offsets, 808, blocks)
    assert len(blocks) == 10 and all(b[2] == b[3] == 0 for b in blocks)
    with pytest.raises(BfsError, match="at least 20 bytes"):
        plan_blocks(offsets, 19)
    with pytest.raises(BfsError, match="no vertices"):
        plan_blocks(np.zeros(1, np.int64), 100)


@pytest.mark.parametrize("budget", [MIN_BLOCK_BYTES, 60, 333, 2048])
def test_emulated_block_search_matches_seq_csr(budget):
    rng = np.random.default_rng(7)
    n = 400
    src = rng.integers(0, n, 1200).astype(np.uint32)
    dst = rng.integers(0, n, 1200).astype(np.uint32)
    src[:300] = 5                                         # a hub split across blocks
    csr = build_csr(src, dst, n)
    blocks = plan_blocks(csr.offsets, budget)
    check_plan(csr.offsets, budget, blocks)
    for root in (5, 0, 399):
        level, copied = emulate_search(csr.offsets, csr.columns, blocks, root)
        _, ref = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(level, ref)


def test_plan_for_limit_on_kronecker_12_and_refusals():
    src, dst = generate_edges(12, 16)
    n = 2 ** 12
    csr = build_csr(src, dst, n)
    limit = 64 * 1024 + vertex_state_bytes(n)
    blocks, buffer, total = plan_for_limit(csr.offsets, limit)
    assert total <= limit and total == state_bytes(n, len(blocks)) + 2 * buffer
    assert csr_bytes(csr.offsets) > 10 * buffer and len(blocks) > 10
    check_plan(csr.offsets, buffer, blocks)
    need = vertex_state_bytes(n)
    with pytest.raises(BfsError) as e:
        plan_for_limit(csr.offsets, need - 1)
    assert str(need) in str(e.value) and str(need - 1) in str(e.value)
    with pytest.raises(BfsError, match="two edge-block buffers"):
        plan_for_limit(csr.offsets, need + 30)


@pytest.mark.parametrize("text,value", [("65536", 65536), ("64K", 65536), ("64KiB", 65536),
                                        ("64kb", 65536), ("16G", 16 * 2**30),
                                        ("1.5M", 3 * 2**19), ("2T", 2 * 2**40), (7, 7),
                                        (65536.0, 65536)])
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "x", "0", "-1", "16Q", "iB", "5iB", "1e3"])
def test_parse_bytes_refuses(text):
    with pytest.raises(BfsError):
        parse_bytes(text)


@pytest.fixture(scope="module")
def small_graph(tmp_path_factory):
    rng = np.random.default_rng(3)
    return write_graph(tmp_path_factory.mktemp("g") / "g", rng.integers(0, 50, 200),
                       rng.integers(0, 50, 200), 50)


def test_registered_as_a_gpu_algorithm_on_the_host_graph():
    spec = ALGORITHMS["gpu-out-of-core"]
    assert spec.backends == ("gpu",) and spec.host_graph and not spec.distributed


def test_cli_refuses_without_a_gpu(small_graph, tmp_path, capsys, monkeypatch):
    from bfs.harness import request
    monkeypatch.setattr(request, "gpu_available", lambda: False)
    assert main(["run", str(small_graph), "--algorithm", "gpu-out-of-core",
                 "--device-memory-limit", "64K", "--out", str(tmp_path / "r")]) == 1
    assert "'gpu-out-of-core' runs only on the GPU" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_cli_limit_only_for_out_of_core_and_parsed(small_graph, tmp_path, capsys):
    assert main(["run", str(small_graph), "--algorithm", "seq-csr", "--device-memory-limit",
                 "16G", "--out", str(tmp_path / "r")]) == 1
    assert ("--device-memory-limit is not an option of seq-csr (it takes no options)"
            in capsys.readouterr().err)
    with pytest.raises(SystemExit):
        main(["run", str(small_graph), "--algorithm", "gpu-out-of-core",
              "--device-memory-limit", "lots", "--out", str(tmp_path / "r")])
    assert "not a byte count: 'lots'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
