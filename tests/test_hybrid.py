"""hybrid (Munguia et al. task-based hybrid BFS) without a GPU: the task split, the CPU tasks
(host-only driver: workload with lambda = inf, fixed with gpu-share 0) against seq-csr, the
mode logic with a NumPy stand-in for the device (same contract as hybrid.DeviceSide, serial
kernels), the CLI's options and its refusal without a GPU. The real GPU path: tests/test_gpu_seeds.py."""
import math
from pathlib import Path

import numpy as np
import pytest

from bfs.algorithms import EdgeList
from bfs.algorithms.hybrid import HostHybrid, SearchState, TaskGraph, build_host, cpu_level
from bfs.build.csr_cpu import build_csr
from bfs.algorithms.seq_csr import bfs_csr
from bfs.cli import main
from bfs.graphs.kronecker import generate_edges
from bfs.graphs.snap import parse_edges
from bfs.validate import validate
from helpers import SNAP_DIR


def _random(n=2000, m=6000, seed=3):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m).astype(np.uint32), rng.integers(0, n, m).astype(np.uint32), n


def _kron():
    src, dst = generate_edges(10, 16)
    return src, dst, 1 << 10


def _snap():
    buf = (Path(SNAP_DIR) / "email-Eu-core.txt").read_bytes()
    src, dst = parse_edges(np.frombuffer(buf, np.uint8))[:2]
    n = int(max(src.max(), dst.max())) + 1
    return np.asarray(src, np.uint32), np.asarray(dst, np.uint32), n


GRAPHS = {"random": _random, "kronecker": _kron, "snap": _snap}


@pytest.fixture(scope="module", params=list(GRAPHS))
def graph(request):
    return GRAPHS[request.param]()


def _roots(src, n, k=4):
    deg = np.bincount(src, minlength=n)
    return [int(r) for r in np.flatnonzero(deg > 0)[:: max(1, n // k)][:k]]


def _check(searcher, src, dst, n, roots):
    csr = build_csr(src, dst, n)
    for root in roots:
        res = searcher.search(root)
        _, want = bfs_csr(csr.offsets, csr.columns, root)
        np.testing.assert_array_equal(res.level, want)
        check = validate(src, dst, res.parent, root, res.level)
        assert check.valid, check.message


@pytest.mark.parametrize("tasks", [1, 3, 16, 5000])
def test_split_covers_every_vertex_and_edge_once(tasks):
    src, dst, n = _random()
    csr = build_csr(src, dst, n)
    tg = TaskGraph.split(csr.offsets, csr.columns, tasks)
    assert tg.n_tasks == min(tasks, n)
    ranges = [tg.rows(t) for t in range(tg.n_tasks)]
    assert ranges[0][0] == 0 and ranges[-1][1] == n
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))
    edges = [tg.edges(t) for t in range(tg.n_tasks)]
    assert edges[0][0] == 0 and edges[-1][1] == len(csr.columns)
    assert all(a[1] == b[0] for a, b in zip(edges, edges[1:]))
    assert sum(hi - lo for lo, hi in edges) == len(csr.columns)


def test_cpu_level_claims_each_vertex_once_one_level_up():
    src, dst, n = _random()
    csr = build_csr(src, dst, n)
    tg = TaskGraph.split(csr.offsets, csr.columns, 1)
    root = int(src[0])
    state = SearchState.fresh(n, root)
    found = cpu_level(tg, 0, np.array([root], np.int64), state, 0)
    assert len(found) == len(set(found.tolist()))
    assert set(found.tolist()) == set(csr.columns[csr.offsets[root]:csr.offsets[root + 1]]) - {root}
    assert (state.level[found] == 1).all() and (state.parent[found] == root).all()
    with pytest.raises(Exception, match="outside"):
        cpu_level(TaskGraph.split(csr.offsets, csr.columns, 3), 2, found[:1] * 0, state, 1)


@pytest.mark.parametrize("tasks", [1, 3, 16])
@pytest.mark.parametrize("setting", [{"mode": "workload", "lambda": math.inf},
                                     {"mode": "fixed", "gpu_share": 0.0}],
                         ids=["workload-lambda-inf", "fixed-share-0"])
def test_cpu_only_levels_equal_seq_csr(graph, tasks, setting):
    src, dst, n = graph
    searcher = build_host(EdgeList(src, dst, n), {"tasks": tasks, **setting})
    _check(searcher, src, dst, n, _roots(src, n))
    assert searcher.task_levels["gpu"] == 0 and searcher.task_levels["cpu"] > 0


def test_host_driver_refuses_gpu_tasks():
    src, dst, n = _random()
    searcher = build_host(EdgeList(src, dst, n), {"mode": "workload", "lambda": 0})
    with pytest.raises(Exception, match="host-only"):
        searcher.search(int(src[0]))


class FakeDevice:
    """hybrid.DeviceSide's contract in NumPy, kernels run serially (a CAS / atomicOr winner is
    the first in frontier order): checks the host driver's exchange logic without a GPU."""

    def __init__(self, offsets, columns):
        self.offsets, self.columns = offsets, columns.astype(np.int64)
        self.n = len(offsets) - 1

    def _rows(self, frontier):
        for u in frontier:
            for w in self.columns[self.offsets[u]:self.offsets[u + 1]]:
                yield int(u), int(w)

    def reset_workload(self, root):
        self.level = np.full(self.n, -1, np.int32)
        self.parent = np.full(self.n, -1, np.int64)
        self.level[root], self.parent[root] = 0, root

    def scatter_found(self, found, parents, depth):
        self.level[found], self.parent[found] = depth, parents

    def launch_expand_cas(self, frontier, next_depth):
        self.out = []
        for u, w in self._rows(frontier[::-1]):   # another order than the CPU's
            if self.level[w] == -1:
                self.level[w], self.parent[w] = next_depth, u
                self.out.append(w)

    def collect_expand_cas(self):
        found = np.array(self.out, np.int64)
        return found, self.parent[found]

    def reset_fixed(self, root, gpu_end):
        self.gpu_end = gpu_end
        self.parent = np.full(self.n, -1, np.int64)
        self.parent[root] = root
        self.visited = np.zeros(self.n, bool)
        self.visited[root] = True
        self.next = np.zeros(self.n, bool)
        self.frontier = np.array([root] if root < gpu_end else [], np.int64)

    def launch_expand_bits(self, k):
        assert k == len(self.frontier)
        for u, w in self._rows(self.frontier[::-1]):
            if not self.visited[w] and not self.next[w]:
                self.next[w], self.parent[w] = True, u

    def exchange_bits(self, cpu_found, n):
        g_found = np.flatnonzero(self.next).astype(np.int64)
        self.next[cpu_found] = True
        return g_found

    def advance_bits(self, expect):
        self.visited |= self.next
        self.frontier = np.flatnonzero(self.next[:self.gpu_end])
        assert len(self.frontier) == expect
        self.next[:] = False

    def parents(self):
        return self.parent.copy()


@pytest.mark.parametrize("tasks", [1, 3, 16])
@pytest.mark.parametrize("setting", [
    {"mode": "workload", "lambda": 0}, {"mode": "workload", "lambda": 20},
    {"mode": "fixed", "gpu_share": 0.5}, {"mode": "fixed", "gpu_share": 1.0}],
    ids=["workload-0", "workload-20", "fixed-0.5", "fixed-1"])
def test_mode_logic_with_a_stand_in_device(tasks, setting):
    src, dst, n = _kron()
    csr = build_csr(src, dst, n)
    tg = TaskGraph.split(csr.offsets, csr.columns, tasks)
    searcher = HostHybrid(tg, {"tasks": tasks, **setting}, FakeDevice(csr.offsets, csr.columns))
    _check(searcher, src, dst, n, _roots(src, n))
    assert searcher.task_levels["gpu"] > 0
    if setting == {"mode": "workload", "lambda": 20} or setting.get("gpu_share") == 0.5:
        if tasks > 1:
            assert searcher.task_levels["cpu"] > 0


@pytest.fixture(scope="module")
def kron8(tmp_path_factory):
    out = tmp_path_factory.mktemp("g") / "kron8"
    assert main(["generate", "kronecker", "--scale", "8", "--out", str(out)]) == 0
    return out


def test_cli_refuses_without_a_gpu(kron8, tmp_path, capsys, monkeypatch):
    from bfs.harness import request
    monkeypatch.setattr(request, "gpu_available", lambda: False)
    assert main(["run", str(kron8), "--algorithm", "hybrid", "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "bfs: error:" in err and "'hybrid'" in err and "no CUDA GPU" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_cli_passes_hybrid_options_only_to_hybrid(kron8, tmp_path, monkeypatch):
    from bfs.harness import runner
    seen = {}
    monkeypatch.setattr(runner, "run", lambda graph, out, opts, extra, generate=None:
                        seen.update({opts.algorithm: extra}) or 0)
    assert main(["run", str(kron8), "--algorithm", "hybrid", "--tasks", "3", "--mode", "fixed",
                 "--lambda", "inf", "--gpu-share", "0.25", "--out", str(tmp_path / "r")]) == 0
    assert seen["hybrid"] == {"tasks": 3, "mode": "fixed", "lambda": "inf",
                              "gpu_share": 0.25}
    assert main(["run", str(kron8), "--algorithm", "seq-csr", "--out", str(tmp_path / "s")]) == 0
    assert seen["seq-csr"] == {}
