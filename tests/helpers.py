"""Small graph directories and CLI runners shared by the tests."""
from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
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
    """`python -m bfs ARGS` (under `mpiexec -n RANKS` with ranks): its exit code, stdout and
    stderr; check: an AssertionError with the stderr on a non-zero exit."""
    argv = [*map(str, args)]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **{k: str(v) for k, v in (env or {}).items()}}
    if ranks is None and not _needs_fresh_interpreter(full_env):
        proc = _forked_cli(argv, full_env, timeout)
    else:
        cmd = [sys.executable, "-m", "bfs", *argv]
        if ranks is not None:
            cmd = ["mpiexec", "-n", str(ranks), *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=full_env, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(proc.args)} exited {proc.returncode}\n{proc.stderr}")
    return proc


# A `bfs` command without MPI ranks runs in a process forked from a server that imported the
# package once (multiprocessing's forkserver): a fresh process per command, with its own
# signals, state and exit code, without the imports (numba, pyarrow) that cost each
# `python -m bfs` seconds, tens of seconds on a slow CI core. The server imports modules and
# runs nothing (no numba thread pool, no MPI), so forking it is safe. BFS_TEST_SUBPROCESS=1,
# or a variable read at import time, runs a real `python -m bfs` instead.
_PRELOAD = ["bfs.cli", "bfs.harness.runner", "bfs.harness.sessions_local", "bfs.graphs.kronecker",
            "bfs.graphs.snap", "bfs.partition.blocks", "bfs.validate.cpu", "bfs.report.tables",
            "forkserver_warm"]
_IMPORT_TIME_VARS = ("BFS_EXTRA_ALGORITHMS", "NUMBA_", "OMP_", "PYTHONHASHSEED")
_forkserver = None


def _needs_fresh_interpreter(env: dict) -> bool:
    if env.get("BFS_TEST_SUBPROCESS", "") not in ("", "0"):
        return True
    return any(k.startswith(_IMPORT_TIME_VARS) and env.get(k) != os.environ.get(k) for k in
               {*env, *os.environ})


def _forked_cli(argv: list[str], env: dict, timeout: int) -> subprocess.CompletedProcess:
    global _forkserver
    if _forkserver is None:
        _forkserver = multiprocessing.get_context("forkserver")
        _forkserver.set_forkserver_preload(_PRELOAD)
    with tempfile.TemporaryDirectory() as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        mask = os.umask(0)
        os.umask(mask)
        child = _forkserver.Process(target=_cli_child, args=(argv, env, mask, out, err))
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.kill()
            child.join()
            raise subprocess.TimeoutExpired(["bfs", *argv], timeout)
        return subprocess.CompletedProcess([sys.executable, "-m", "bfs", *argv], child.exitcode,
                                           out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))


def _cli_child(argv, env, mask, out: Path, err: Path):
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ROOT)
    os.umask(mask)
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    from bfs.cli import main
    sys.argv = [str(ROOT / "bfs" / "__main__.py"), *argv]
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    raise SystemExit(code)


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
    "wildcards", "threads", "resources" (numbers as int), "priority" (0 unless the rule sets
    it), "shell"}."""
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
                     "resources": resources, "priority": int(field.get("priority", 0)),
                     "shell": field.get("Shell command")})
    return jobs


def kernel_defines(*names, source: str = "bfs/algorithms/level_loop.cu") -> list[int]:
    """A CUDA source's #define values (whole-number expressions such as ((1ULL << 22) - 1)), so
    that a test can hold the host's constants equal to the kernel's."""
    text = (ROOT / source).read_text()
    values = []
    for name in names:
        found = re.search(rf"^#define {name} (.+?)\s*(//.*)?$", text, re.M)
        assert found, name
        values.append(eval(found.group(1).replace("ULL", ""), {}))
    return values


def plant_parent(run: Path) -> tuple[int, int]:
    """Give the first vertex two or more levels deep in the run's first saved search the root
    as its parent (so the levels' +1 rule breaks), rewriting the parents file and its record in
    run.json, as a run that saved a wrong tree would have: `bfs validate` must then find it by
    the rules, not by a damaged file. (that vertex, the root)."""
    import json

    import pyarrow as pa

    from bfs.integrity import file_record
    path = sorted((run / "parents").glob("root-*.parquet"))[0]
    table = pq.read_table(path)
    parent = table.column("parent").to_numpy().copy()
    root = int(path.stem.removeprefix("root-"))
    v = int(np.flatnonzero(table.column("level").to_numpy() >= 2)[0])
    parent[v] = root
    pq.write_table(pa.table({"parent": parent, "level": table.column("level")}), path)
    info = json.loads((run / "run.json").read_text())
    rel = f"parents/{path.name}"
    info["files"] = [file_record(run, rel) if rec["path"] == rel else rec
                     for rec in info["files"]]
    (run / "run.json").write_text(json.dumps(info))
    return v, root


def load_experiment_plan():
    """workflow/experiment_plan.py as a module (it is no package's: the workflow puts its folder
    on sys.path, a test loads the file)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("experiment_plan",
                                                  ROOT / "workflow" / "experiment_plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
