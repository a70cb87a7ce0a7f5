"""`bfs compare` (bfs.report.compare) on synthetic run directories: a known speedup is found,
a null one is not, runs of other roots are refused, and the CLI writes its tables and figure
(no MPI, no GPU: the run directories are written here as the harness writes them)."""
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bfs import cli
from bfs.errors import BfsError
from bfs.harness.rundir import (GRAPH500_FILE, LEVELS_FILE, LEVELS_SCHEMA, RUN_JSON,
                                SEARCHES_FILE, SEARCHES_SCHEMA, data_files)
from bfs.integrity import file_records
from bfs.report import compare
from helpers import ROOT, bfs_cli

N_ROOTS = 48


def roots_of(n=N_ROOTS, seed=5):
    return np.random.default_rng(seed).choice(1 << 16, n, replace=False)


def base_times(roots, seed=7):
    """Each root's search time: roots differ a lot (a 3x spread), as Kronecker roots do."""
    return np.random.default_rng(seed).uniform(1e-3, 3e-3, len(roots))


def write_run(out, roots, times, algorithm="merrill-do", variant=None, graph="kron-s16-e16",
              n_vertices=1 << 16, n_edges=1 << 20, valid=True):
    """A complete run directory (run.json last, its files recorded) of these searches."""
    out.mkdir(parents=True)
    nedge = 1_000_000 + (np.asarray(roots) % 1000)       # each root its own component size
    rows = [{"root": int(r), "time_s": float(t), "nedge": int(e), "teps": float(e / t),
             "depth": 6, "reached": 50_000, "valid": True, "validate_s": 0.01,
             "edges_examined": None, "bytes_copied": None, "copy_s": None}
            for r, t, e in zip(roots, times, nedge)]
    pq.write_table(pa.Table.from_pylist(rows, schema=SEARCHES_SCHEMA), out / SEARCHES_FILE)
    pq.write_table(pa.Table.from_pylist([], schema=LEVELS_SCHEMA), out / LEVELS_FILE)
    (out / GRAPH500_FILE).write_text("# synthetic\n")
    params = {"algorithm": algorithm, "backend": "gpu", "n_roots": len(roots),
              "roots": [int(r) for r in roots], "mpi_size": 1}
    if variant:
        params["variant"] = variant
    info = {"valid": valid, "parameters": params, "construction_time": 0.5,
            "graph": {"name": graph, "source": "kronecker", "n_vertices": n_vertices,
                      "n_edges": n_edges, "scale": 16, "edgefactor": 16},
            "environment": {}, "files": file_records(out, data_files(out))}
    (out / RUN_JSON).write_text(json.dumps(info))
    return out


def noisy(times, factor, seed, noise=0.03):
    """times / factor (B `factor` times faster), each search with its own noise."""
    jitter = np.exp(np.random.default_rng(seed).normal(0, noise, len(times)))
    return times / factor * jitter


@pytest.fixture
def pair_10(tmp_path):
    roots = roots_of()
    t = base_times(roots)
    return (write_run(tmp_path / "a", roots, noisy(t, 1.0, 1)),
            write_run(tmp_path / "b", roots, noisy(t, 1.10, 2), variant="merrill-do@tail=0"))


def test_a_known_ten_percent_speedup_is_found(pair_10):
    summary, per_root = compare.compare(*pair_10)
    row = summary.iloc[0]
    assert len(per_root) == N_ROOTS and row["roots"] == N_ROOTS
    assert 1.07 < row["speedup B/A (geomean)"] < 1.13
    assert 1 < row["95% CI low"] < row["speedup B/A (geomean)"] < row["95% CI high"]
    assert row["Wilcoxon p"] < 1e-6
    assert row["verdict"] == "B faster"
    assert row["A"] == "merrill-do/gpu" and row["B"] == "merrill-do@tail=0/gpu"
    # the speedup is the TEPS ratio, root by root
    a = pq.read_table(pair_10[0] / SEARCHES_FILE).to_pandas().set_index("root")
    b = pq.read_table(pair_10[1] / SEARCHES_FILE).to_pandas().set_index("root")
    expected = (b["teps"] / a["teps"]).loc[per_root["root"]].to_numpy()
    np.testing.assert_allclose(per_root["speedup B/A"], expected, rtol=1e-12)
    # the other way round: the reciprocal, B slower
    back, _ = compare.compare(pair_10[1], pair_10[0])
    assert math.isclose(back.iloc[0]["speedup B/A (geomean)"],
                        1 / row["speedup B/A (geomean)"], rel_tol=1e-12)
    assert back.iloc[0]["verdict"] == "B slower"


def test_a_null_difference_is_not(tmp_path):
    roots = roots_of()
    t = base_times(roots)
    summary, _ = compare.compare(write_run(tmp_path / "a", roots, noisy(t, 1.0, 3)),
                                 write_run(tmp_path / "b", roots, noisy(t, 1.0, 4)))
    row = summary.iloc[0]
    assert row["95% CI low"] < 1 < row["95% CI high"]
    assert row["Wilcoxon p"] > 0.05
    assert row["verdict"] == "no significant difference"


def test_a_few_far_roots_alone_are_no_difference():
    """Three roots far faster and thirteen unchanged pull the bootstrap interval past 1, but
    the signed-rank test finds nothing: no difference is claimed (two runs of one command on
    a GPU looked like this). The same interval with a consistent shift is a difference."""
    far = [1.5, 1.4, 1.3, 1.02, 0.99, 0.98, 1.01, 0.99, 0.98, 1.01, 0.99, 0.995, 1.005, 0.99,
           1.0, 1.6]
    st = compare.speedup_stats(far)
    assert st["low"] > 1 and st["p"] > 0.05
    assert st["verdict"] == "no significant difference"
    assert compare.verdict(st["low"], st["high"], 0.01) == "B faster"
    assert compare.verdict(0.8, 0.95, 0.01) == "B slower"
    assert compare.verdict(0.8, 0.95, float("nan")) == "no significant difference"


def test_the_interval_is_reproducible_and_follows_the_seed(pair_10):
    one, _ = compare.compare(*pair_10)
    two, _ = compare.compare(*pair_10)
    pd.testing.assert_frame_equal(one, two)
    other, _ = compare.compare(*pair_10, seed=compare.SEED + 1)
    assert other.iloc[0]["95% CI low"] != one.iloc[0]["95% CI low"]
    assert math.isclose(other.iloc[0]["95% CI low"], one.iloc[0]["95% CI low"], rel_tol=0.01)


def test_statistics_of_known_speedups():
    st = compare.speedup_stats([2.0, 0.5, 1.0, 1.0])
    assert st["speedup"] == pytest.approx(1.0) and st["faster_roots"] == 1
    assert compare.speedup_stats([1.0, 1.0, 1.0])["p"] == 1.0
    st = compare.speedup_stats([1.1] * 20)
    assert st["low"] == pytest.approx(1.1) and st["high"] == pytest.approx(1.1)
    with pytest.raises(BfsError, match="positive"):
        compare.speedup_stats([1.0, 0.0])
    one = compare.speedup_stats([1.5])
    assert one["speedup"] == 1.5 and math.isnan(one["low"]) and one["verdict"] == "too few roots"


def test_runs_of_other_roots_are_refused_naming_them(tmp_path):
    roots = roots_of()
    t = base_times(roots)
    a = write_run(tmp_path / "a", roots, t)
    other = roots.copy()
    other[:2] = [70_001, 70_002]
    b = write_run(tmp_path / "b", other, t, n_vertices=1 << 16)
    with pytest.raises(BfsError) as e:
        compare.compare(a, b)
    said = str(e.value)
    assert "searched different roots" in said and str(a) in said and str(b) in said
    assert f"[{min(roots[:2])}, {max(roots[:2])}]" in said and "[70001, 70002]" in said
    c = write_run(tmp_path / "c", roots[:-1], t[:-1])
    with pytest.raises(BfsError, match=f"1 only in A .*{roots[-1]}"):
        compare.compare(a, c)


def test_runs_of_other_graphs_and_invalid_runs_are_refused(tmp_path):
    roots = roots_of()
    t = base_times(roots)
    a = write_run(tmp_path / "a", roots, t)
    with pytest.raises(BfsError, match="different graphs"):
        compare.compare(a, write_run(tmp_path / "b", roots, t, n_edges=1 << 19))
    with pytest.raises(BfsError, match="marks the run invalid"):
        compare.compare(a, write_run(tmp_path / "c", roots, t, valid=False))
    with pytest.raises(BfsError, match="neither a run directory"):
        compare.compare(a, tmp_path)


def test_bench_folders_are_paired_by_graph_and_variant(tmp_path):
    roots = roots_of(16)
    t = base_times(roots)
    for side, factor in (("A", 1.0), ("B", 1.2)):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "bench.json").write_text("{}")
        for graph in ("kron-s16-e16", "kron-s17-e16"):
            for variant in ("merrill", "merrill-do"):
                write_run(folder / graph / variant, roots, noisy(t, factor, len(variant)),
                          algorithm=variant, graph=graph)
    write_run(tmp_path / "B" / "kron-s16-e16" / "gpu-quadratic", roots, t,
              algorithm="gpu-quadratic")   # only in B: left out
    summary, per_root = compare.compare(tmp_path / "A", tmp_path / "B")
    assert list(zip(summary["graph"], summary["A"])) == [
        ("kron-s16-e16", "merrill/gpu"), ("kron-s16-e16", "merrill-do/gpu"),
        ("kron-s17-e16", "merrill/gpu"), ("kron-s17-e16", "merrill-do/gpu")]
    assert (summary["verdict"] == "B faster").all() and len(per_root) == 4 * 16
    with pytest.raises(BfsError, match="two run directories or two bench folders"):
        compare.compare(tmp_path / "A", tmp_path / "B" / "kron-s16-e16" / "merrill")


def test_cli_writes_tables_figure_and_record(pair_10, tmp_path, capsys):
    out = tmp_path / "cmp"
    proc = bfs_cli("compare", *pair_10, "--out", out)
    names = {"summary.csv", "summary.md", "per_root.csv", "per_root.md", "speedups.png",
             "speedups.svg", "comparison.json"}
    assert {p.name for p in out.iterdir()} == names
    assert set(proc.stdout.split()) == {str(out / name) for name in names}
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[0, "verdict"] == "B faster" and summary.loc[0, "roots"] == N_ROOTS
    assert "B faster" in (out / "summary.md").read_text()
    assert len(pd.read_csv(out / "per_root.csv")) == N_ROOTS
    assert (out / "speedups.png").stat().st_size > 5000
    record = json.loads((out / "comparison.json").read_text())
    assert record["seed"] == compare.SEED and record["resamples"] == compare.RESAMPLES
    assert record["summary"][0]["verdict"] == "B faster"
    # in this process: an existing --out is refused without --force; a refused comparison
    # is one line and leaves nothing
    assert cli.main(["compare", *map(str, pair_10), "--out", str(out)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert cli.main(["compare", *map(str, pair_10), "--out", str(out), "--force",
                     "--resamples", "500"]) == 0
    assert json.loads((out / "comparison.json").read_text())["resamples"] == 500
    roots = roots_of()
    other = write_run(tmp_path / "other", roots[:-1], base_times(roots)[:-1])
    capsys.readouterr()
    assert cli.main(["compare", str(pair_10[0]), str(other), "--out",
                     str(tmp_path / "bad")]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("bfs: error: ") and "different roots" in err
    assert not (tmp_path / "bad").exists() and not list(tmp_path.glob(".bad*"))


def test_missing_scipy_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(BfsError, match="needs scipy"):
        compare.wilcoxon_p([0.1, -0.2, 0.3])


def test_cli_defaults_are_the_modules():
    assert (cli.COMPARE_RESAMPLES, cli.COMPARE_SEED) == (compare.RESAMPLES, compare.SEED)


def test_building_the_parser_imports_no_pandas():
    code = ("import sys; from bfs.cli import build_parser; build_parser(); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "False"
