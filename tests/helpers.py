"""Small graph directories and CLI runners shared by the tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from bfs.graphs.graphdir import EdgeWriter, GraphMeta, atomic_dir, id_dtype, write_meta

ROOT = Path(__file__).resolve().parent.parent
SNAP_DIR = ROOT / "data" / "snap"


def write_graph(out: Path, src, dst, n_vertices: int, name: str = "test") -> Path:
    with atomic_dir(out) as tmp:
        with EdgeWriter(tmp, id_dtype(n_vertices)) as w:
            w.write(np.asarray(src), np.asarray(dst))
        write_meta(tmp, GraphMeta(name=name, source="snap", n_vertices=n_vertices,
                                  n_edges=len(src), directed_source=None))
    return out


def random_graph(out: Path, n: int = 300, m: int = 900, seed: int = 1) -> Path:
    """A sparse random graph with several components, self-loops and duplicate edges."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    src[:10], dst[:10] = src[10:20], dst[10:20]  # duplicates
    dst[20:25] = src[20:25]                       # self-loops
    return write_graph(out, src, dst, n, "random")


def bfs_cli(*args, ranks: int | None = None, env: dict | None = None, timeout: int = 300,
            check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "bfs", *map(str, args)]
    if ranks is not None:
        cmd = ["mpiexec", "-n", str(ranks), *cmd]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}")
    return proc


def smallest_parents(src, dst, level, root: int) -> np.ndarray:
    """The BFS tree of these levels in which every reached vertex but the root has its
    smallest-id neighbour one level up as parent (what semiring's min picks); -1 unreached."""
    src, dst, level = np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(level)
    keep = src != dst
    u = np.concatenate([src[keep], dst[keep]])
    v = np.concatenate([dst[keep], src[keep]])
    up = (level[u] >= 0) & (level[v] == level[u] + 1)
    parent = np.full(len(level), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(parent, v[up], u[up])
    parent[level < 0] = -1
    parent[root] = root
    return parent


def searches(run_dir: Path) -> list[dict]:
    return pq.read_table(Path(run_dir) / "searches.parquet").to_pylist()


def build(graph, ctx):
    """A deliberately wrong BFS (registered only by tests): seq-csr with one tree edge broken."""
    from bfs.algorithms import Searcher
    from bfs.algorithms.seq_csr import build as build_seq_csr

    class Broken(Searcher):
        def __init__(self):
            self.inner = build_seq_csr(graph, ctx)

        def search(self, root):
            result = self.inner.search(root)
            far = int(np.argmax(result.level))
            result.parent[far] = far  # a vertex that is its own parent: rule 1
            return result

    return Broken()


def planned_jobs(plan: str) -> list[dict]:
    """Every job of a `snakemake -n -p` plan: {"rule", "local" (a localrule), "output",
    "wildcards", "threads", "resources" (numbers as int), "shell"}."""
    import re
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", plan, flags=re.M):
        head = re.match(r"(local)?rule (\w+):$", block, re.M)
        if not head:
            continue
        field = dict(re.findall(r"^ *(\w[\w ]*): (.*)$", block, re.M))
        resources = {}
        for kv in filter(None, field.get("resources", "").split(", ")):
            key, value = kv.split("=", 1)
            resources[key] = int(value) if re.fullmatch(r"-?[0-9]+", value) else value
        jobs.append({"rule": head.group(2), "local": bool(head.group(1)),
                     "output": field.get("output"), "input": field.get("input"),
                     "wildcards": field.get("wildcards"), "threads": int(field.get("threads", 1)),
                     "resources": resources, "shell": field.get("Shell command")})
    return jobs
