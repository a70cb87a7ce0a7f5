"""`bfs report` on real run directories: a seq-csr run and 2d runs on 1x1, 1x2 and 2x1 grids
(and copies of them relabelled as GPU runs exchanging through NCCL or MPI)."""
import json
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

from bfs import cli, report
from bfs.report import figures
from bfs.report.runs import one_rank_in_every_series
from helpers import bfs_cli, searches

pytestmark = pytest.mark.mpi
if shutil.which("mpiexec") is None:
    pytestmark = [pytest.mark.mpi, pytest.mark.skip(reason="no mpiexec on PATH")]

ROOTS = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{"seq": run dir, 1: 2d run on 1 rank, 2: 2d run on 2 ranks (1x2), "2x1": 2d run on
    the other 2-rank grid}, one scale-9 graph."""
    base = tmp_path_factory.mktemp("report")
    graph = base / "graph"
    bfs_cli("generate", "kronecker", "--scale", 9, "--edgefactor", 8, "--out", graph)
    bfs_cli("run", graph, "--algorithm", "seq-csr", "--roots", ROOTS, "--out", base / "seq")
    out = {"seq": base / "seq"}
    for ranks, shape in [(1, "1x1"), (2, "1x2")]:
        bfs_cli("partition", graph, "--grid", shape, "--out", base / f"part-{shape}")
        # one rank: a plain process (MPI's singleton), no mpiexec
        bfs_cli("run", base / f"part-{shape}", "--algorithm", "2d", "--roots", ROOTS,
                "--out", base / f"2d-{ranks}", ranks=ranks if ranks > 1 else None)
        out[ranks] = base / f"2d-{ranks}"
    bfs_cli("partition", graph, "--grid", "2x1", "--out", base / "part-2x1")
    bfs_cli("run", base / "part-2x1", "--algorithm", "2d", "--roots", ROOTS,
            "--out", base / "2d-2x1", ranks=2)
    out["2x1"] = base / "2d-2x1"
    return out


def relabelled(run_dir, out, backend=None, comm=None, drop_comm=False, time_factor=1.0,
               **params):
    """A copy of a run directory with run.json's backend/comm (and any other `params`)
    changed and every search's time scaled by time_factor (TEPS with it), standing for a run
    made another way."""
    shutil.copytree(run_dir, out)
    info = json.loads((out / "run.json").read_text())
    info["parameters"].update(params)
    if backend:
        info["parameters"]["backend"] = backend
    if comm:
        info["parameters"]["comm"] = comm
    if drop_comm:
        del info["parameters"]["comm"]
    (out / "run.json").write_text(json.dumps(info))
    table = pq.read_table(out / "searches.parquet").to_pandas()
    table["time_s"] *= time_factor
    table["teps"] /= time_factor
    table.to_parquet(out / "searches.parquet")
    return out


def hybrid_run(runs, out, graph=None, edgefactor=None, time_factor=1.0, **setting):
    """The seq-csr run relabelled as a GPU hybrid run of `setting` (what `bfs run --algorithm
    hybrid` records: tasks, mode, lambda, gpu_share; defaults where not given), on a graph
    renamed `graph` of edge factor `edgefactor` where given."""
    setting = {"tasks": 16, "mode": "workload", "lambda": 1000.0, "gpu_share": 0.5, **setting}
    out = relabelled(runs["seq"], out, backend="gpu", algorithm="hybrid",
                     time_factor=time_factor, **setting)
    if graph:
        info = json.loads((out / "run.json").read_text())
        info["graph"].update(name=graph, edgefactor=edgefactor)
        (out / "run.json").write_text(json.dumps(info))
    return out


def with_energy(run_dir, out, watts: float):
    """A copy of a run directory whose run.json records energy per search at `watts` (what
    `bfs run` writes where a counter could be read: bfs.harness.energy)."""
    out = relabelled(run_dir, out)
    info = json.loads((out / "run.json").read_text())
    teps = harmonic_teps(out)
    info["energy"] = {"source": "rapl", "covers": "CPU packages (RAPL)", "window_s": 2.0,
                      "searches": 100, "seconds": 2.0, "joules": 2.0 * watts, "watts": watts,
                      "watts_per_device": [watts], "teps_per_watt": teps / watts}
    info["energy_unavailable"] = None
    (out / "run.json").write_text(json.dumps(info))
    return out


def harmonic_teps(run_dir):
    rows = searches(run_dir)
    return len(rows) / sum(r["time_s"] / r["nedge"] for r in rows)


def test_load_runs_one_row_per_run(runs):
    table = report.load_runs([runs["seq"], runs[1], runs[2]]).set_index("run_dir")
    seq, two = table.loc[str(runs["seq"])], table.loc[str(runs[2])]
    assert (seq["algorithm"], seq["ranks"], seq["gpus"]) == ("seq-csr", 1, 0)
    assert (two["algorithm"], two["ranks"], two["exchange"]) == ("2d", 2, "scan")
    assert pd.isna(seq["exchange"])
    # how a distributed run exchanged (the CPU's only way: MPI) and its grid; neither for seq
    assert (two["comm"], two["grid"]) == ("mpi", "1x2")
    assert table.loc[str(runs[1]), "grid"] == "1x1"
    assert pd.isna(seq["comm"]) and pd.isna(seq["grid"])
    assert two["graph"] == "kron-s9-e8" and two["scale"] == 9 and two["n_vertices"] == 512
    assert two["n_edges"] == 512 * 8 and two["n_searches"] == ROOTS
    assert two["directed_edges"] == 2 * max(r["nedge"] for r in searches(runs[2]))
    assert two["teps"] == pytest.approx(harmonic_teps(runs[2]), rel=1e-12)


def test_strong_scaling_table(runs, tmp_path):
    bfs_cli("report", "table", "strong_scaling", runs[2], runs[1], "--out", tmp_path / "strong")
    table = pd.read_csv(tmp_path / "strong.csv")
    assert list(table["ranks"]) == [1, 2]
    expected = [harmonic_teps(runs[1]) / 1e9, harmonic_teps(runs[2]) / 1e9]
    assert table["GTEPS"].tolist() == pytest.approx(expected, rel=1e-9)
    assert table["directed GTEPS"].tolist() == pytest.approx([2 * g for g in expected])
    assert table["efficiency"].iloc[0] == 1 and table["speedup"].iloc[0] == 1
    assert table["efficiency"].iloc[1] == pytest.approx(table["speedup"].iloc[1] / 2)
    md = (tmp_path / "strong.md").read_text().splitlines()
    assert md[0].startswith("| graph |") and len(md) == 2 + len(table)


def test_run_from_before_comm_counts_as_mpi(runs, tmp_path):
    old = relabelled(runs[2], tmp_path / "old", drop_comm=True)
    assert "comm" not in json.loads((old / "run.json").read_text())["parameters"]
    assert report.load_runs([old])["comm"].tolist() == ["mpi"]


def test_strong_scaling_table_keeps_grid_shapes_apart(runs, tmp_path):
    bfs_cli("report", "table", "strong_scaling", runs["2x1"], runs[2], runs[1],
            "--out", tmp_path / "strong")
    table = pd.read_csv(tmp_path / "strong.csv")
    assert list(zip(table["ranks"], table["grid"])) == [(1, "1x1"), (2, "1x2"), (2, "2x1")]
    expected = [harmonic_teps(runs[k]) / 1e9 for k in (1, 2, "2x1")]
    assert table["GTEPS"].tolist() == pytest.approx(expected, rel=1e-9)
    # both 2-rank shapes measured against the one 1-rank run
    assert table["speedup"].tolist() == pytest.approx([1, expected[1] / expected[0],
                                                       expected[2] / expected[0]])
    assert table["efficiency"].iloc[1:].tolist() == pytest.approx(
        (table["speedup"].iloc[1:] / 2).tolist())
    assert set(table["comm"]) == {"mpi"}


@pytest.fixture
def gpu_comm_runs(runs, tmp_path):
    """The 1- and 2-rank 2d runs as GPU runs through MPI, and again through NCCL twice as
    fast: {(comm, ranks): run dir}."""
    return {(comm, ranks): relabelled(runs[ranks], tmp_path / f"{comm}-{ranks}", backend="gpu",
                                      comm=comm, time_factor=factor)
            for comm, factor in [("mpi", 1.0), ("nccl", 0.5)] for ranks in (1, 2)}


def test_comm_makes_its_own_scaling_series(gpu_comm_runs, tmp_path):
    dirs = list(gpu_comm_runs.values())
    bfs_cli("report", "table", "strong_scaling", *dirs, "--out", tmp_path / "strong")
    strong = pd.read_csv(tmp_path / "strong.csv")
    assert list(strong.columns[:7]) == ["graph", "algorithm", "backend", "exchange", "comm",
                                        "GPUs", "grid"]
    got = {(r.comm, r.GPUs): r.GTEPS for r in strong.itertuples()}
    expected = {key: harmonic_teps(d) / 1e9 for key, d in gpu_comm_runs.items()}
    assert got == pytest.approx(expected, rel=1e-9)
    assert got[("nccl", 1)] == pytest.approx(2 * got[("mpi", 1)])
    # each series' speedup is against its own 1-GPU run
    assert strong.loc[strong["GPUs"] == 1, "speedup"].tolist() == [1, 1]
    bfs_cli("report", "table", "weak_scaling", *dirs, "--out", tmp_path / "weak")
    weak = pd.read_csv(tmp_path / "weak.csv")
    assert sorted(zip(weak["comm"], weak["GPUs"])) == sorted(gpu_comm_runs)
    bfs_cli("report", "table", "graphs", *dirs, "--out", tmp_path / "graphs")
    assert len(pd.read_csv(tmp_path / "graphs.csv")) == 4  # nothing pooled across comm


def test_one_rank_run_is_every_series_first_point(gpu_comm_runs, tmp_path):
    """The workflow runs a one-rank point once (one rank exchanges nothing): the MPI series
    takes the NCCL run's one-rank point, in the tables and the figure; a series with its own
    one-rank run keeps it."""
    dirs = [gpu_comm_runs[k] for k in [("nccl", 1), ("nccl", 2), ("mpi", 2)]]
    bfs_cli("report", "table", "strong_scaling", *dirs, "--out", tmp_path / "strong")
    strong = pd.read_csv(tmp_path / "strong.csv")
    got = {(r.comm, r.GPUs): r.GTEPS for r in strong.itertuples()}
    one = harmonic_teps(gpu_comm_runs[("nccl", 1)]) / 1e9
    assert got[("mpi", 1)] == pytest.approx(one) and got[("nccl", 1)] == pytest.approx(one)
    mpi_two = harmonic_teps(gpu_comm_runs[("mpi", 2)]) / 1e9
    assert strong.set_index(["comm", "GPUs"]).loc[("mpi", 2), "speedup"] == \
        pytest.approx(mpi_two / one)
    bfs_cli("report", "table", "weak_scaling", *dirs, "--out", tmp_path / "weak")
    weak = pd.read_csv(tmp_path / "weak.csv")
    assert sorted(zip(weak["comm"], weak["GPUs"])) == sorted(gpu_comm_runs)
    line = next(l for l in figures.strong_scaling_figure(report.load_runs(dirs)).axes[0]
                .get_lines() if l.get_label() == "2d/gpu/scan/mpi")
    assert list(line.get_xdata()) == [1, 2]
    # each comm's own one-rank run where there is one (nothing copied)
    whole = report.load_runs(list(gpu_comm_runs.values()))
    assert one_rank_in_every_series(whole) is whole


def test_figures_name_the_comm_where_it_varies(gpu_comm_runs, runs):
    both = report.load_runs(list(gpu_comm_runs.values()))
    ax = figures.strong_scaling_figure(both).axes[0]
    _, labels = ax.get_legend_handles_labels()
    assert {"2d/gpu/scan/nccl", "2d/gpu/scan/mpi"} <= set(labels)
    assert ax.get_title() == "kron-s9-e8"   # a panel per graph
    one = report.load_runs([runs[1], runs[2]])
    _, labels = figures.strong_scaling_figure(one).axes[0].get_legend_handles_labels()
    assert "2d/cpu/scan" in labels  # one comm: not named
    fig, _, _ = figures.comm_vs_compute_figure(both)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    # Fu's Fig. 8 per run, the MPI and NCCL runs of each count side by side
    assert [t.split("\n")[1] for t in titles] == ["1 rank (1x1)"] * 2 + ["2 ranks (1x2)"] * 2
    assert ["(gpu, mpi)" in t for t in titles] == [True, False, True, False]
    assert ["(gpu, nccl)" in t for t in titles] == [False, True, False, True]


def test_strong_scaling_figure_joins_the_fastest_grid_of_a_count(runs, tmp_path):
    """A count run on two grid shapes: the line joins the faster, the other is an open
    marker, each point named by its shape."""
    ratio = harmonic_teps(runs["2x1"]) / harmonic_teps(runs[2])
    for faster, factor in (("2x1", ratio / 2), ("1x2", ratio * 2)):   # 2x1 at 2x, at 0.5x 1x2's
        shape = relabelled(runs["2x1"], tmp_path / faster, time_factor=factor)
        ax = figures.strong_scaling_figure(report.load_runs([runs[1], runs[2], shape])).axes[0]
        line = next(l for l in ax.get_lines() if l.get_label() == "2d/cpu/scan")
        other = next(l for l in ax.get_lines() if l.get_label() == figures.OTHER_SHAPE_LABEL)
        teps = {"1x2": harmonic_teps(runs[2]), "2x1": harmonic_teps(shape)}
        assert list(line.get_xdata()) == [1, 2]
        assert line.get_ydata()[1] == pytest.approx(teps[faster] / 1e9)
        assert other.get_ydata()[0] == pytest.approx(min(teps.values()) / 1e9)
        assert {t.get_text() for t in ax.texts} == {"1x2", "2x1"}


# the hybrid sweeps' tables hold only the runs of a hybrid setting: tested with those below;
# the energy table only runs that measured energy (none here): tests/test_energy.py
SELECTIVE_TABLES = ("task_count", "lambda", "energy")


@pytest.mark.parametrize("kind", [k for k in cli.REPORT_TABLES if k not in SELECTIVE_TABLES])
def test_every_table_kind_writes_csv_and_markdown(runs, tmp_path, kind):
    bfs_cli("report", "table", kind, runs["seq"], runs[1], runs[2], "--out", tmp_path / kind)
    table = pd.read_csv(tmp_path / f"{kind}.csv")
    assert len(table) == 3  # seq-csr, 2d on 1 rank, 2d on 2 ranks: no two pooled
    assert sorted(table["ranks"]) == [1, 1, 2]
    assert (tmp_path / f"{kind}.md").read_text().count("\n") == len(table) + 2


@pytest.mark.parametrize("edit", ["run.json", "searches.parquet", "missing"])
def test_invalid_run_is_refused(runs, tmp_path, edit):
    bad = tmp_path / "bad-run"
    shutil.copytree(runs[1], bad)
    if edit == "run.json":
        info = json.loads((bad / "run.json").read_text())
        info["valid"] = False
        (bad / "run.json").write_text(json.dumps(info))
    elif edit == "searches.parquet":
        table = pq.read_table(bad / "searches.parquet").to_pandas()
        table.loc[1, "valid"] = False
        table.to_parquet(bad / "searches.parquet")
    else:
        (bad / "levels.parquet").unlink()
    proc = bfs_cli("report", "table", "strong_scaling", runs[2], bad, "--out", tmp_path / "t",
                   check=False)
    assert proc.returncode == 1
    assert str(bad) in proc.stderr and "never aggregated" in proc.stderr
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.parametrize("kind", cli.REPORT_FIGURES)
def test_every_figure_kind_writes_png_and_svg(runs, tmp_path, kind):
    runs_file = tmp_path / "runs.txt"
    runs_file.write_text(f"# the 2d runs\n{runs[1]}\n\n{runs[2]}\n")
    extra = []
    if kind == "small_frontier":  # a 1d run with its threshold: what the figure draws
        extra = [relabelled(runs[2], tmp_path / "sf", algorithm="1d", small_frontier=100)]
    if kind in ("task_count", "lambda"):  # a hybrid run: tasks and lambda
        extra = [hybrid_run(runs, tmp_path / "hybrid", tasks=4)]
    if kind == "gteps_vs_watts":  # a run that measured its energy (the others did not)
        extra = [with_energy(runs[2], tmp_path / "energy", watts=35.0)]
    proc = bfs_cli("report", "figure", kind, runs["seq"], *extra, "--runs-file", runs_file,
                   "--out", tmp_path / kind)
    png, svg = tmp_path / f"{kind}.png", tmp_path / f"{kind}.svg"
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 10_000
    assert b"<svg" in svg.read_bytes()[:1000]
    assert "placeholder" not in proc.stderr
    assert not list(tmp_path.glob(".*tmp*"))


def test_figure_without_runs_writes_a_placeholder(tmp_path):
    empty = tmp_path / "none.txt"
    empty.write_text("")
    proc = bfs_cli("report", "figure", "strong_scaling", "--runs-file", empty,
                   "--out", tmp_path / "fig")
    assert "no runs for this figure" in proc.stderr
    assert (tmp_path / "fig.png").stat().st_size > 0
    assert b"no runs for this figure" in (tmp_path / "fig.svg").read_bytes()


def test_comm_vs_compute_of_single_process_runs_says_why_it_is_empty(runs, tmp_path):
    proc = bfs_cli("report", "figure", "comm_vs_compute", runs["seq"], "--out", tmp_path / "f")
    assert "no runs with per-level timing" in proc.stderr
    assert (tmp_path / "f.png").stat().st_size > 0 and (tmp_path / "f.svg").stat().st_size > 0


def test_frontier_counts_each_level_once_in_distributed_runs(runs):
    """Every rank reports the global frontier: the plotted size must not grow with ranks."""
    frames = {k: figures.frontier_levels(report.load_runs([runs[k]])) for k in ("seq", 2)}
    sizes = {k: f.groupby("level")["frontier_size"].sum().tolist() for k, f in frames.items()}
    assert sizes["seq"] == sizes[2]
    reached = sum(r["reached"] for r in searches(runs[2]))
    assert sum(sizes[2]) == reached


def test_small_frontier_table_per_threshold_beside_the_serial_run(runs, tmp_path):
    """Racherla's sweep: a row per threshold, GTEPS from its own searches, the speedup over
    the seq-csr run; the figure draws a line of the thresholds and the serial level."""
    sweep = {sf: relabelled(runs[2], tmp_path / f"sf{sf}", algorithm="1d", small_frontier=sf,
                            time_factor=factor)
             for sf, factor in [(0, 1.0), (1000, 0.5)]}
    bfs_cli("report", "table", "small_frontier", runs["seq"], *sweep.values(),
            "--out", tmp_path / "sf")
    table = pd.read_csv(tmp_path / "sf.csv")
    assert list(table["algorithm"]) == ["1d", "1d", "seq-csr"]
    assert table["small frontier"].iloc[:2].tolist() == [0, 1000]
    assert pd.isna(table["small frontier"].iloc[2])
    expected = [harmonic_teps(sweep[0]) / 1e9, harmonic_teps(sweep[1000]) / 1e9]
    assert table["GTEPS"].iloc[:2].tolist() == pytest.approx(expected, rel=1e-9)
    serial = harmonic_teps(runs["seq"]) / 1e9
    assert table["speedup over serial"].tolist() == pytest.approx(
        [expected[0] / serial, expected[1] / serial, 1.0])
    fig, _, note = figures.small_frontier_figure(report.load_runs([runs["seq"],
                                                                  *sweep.values()]))
    assert note is None
    ax = fig.axes[0]
    line = next(l for l in ax.get_lines() if "1d/cpu" in l.get_label())
    assert list(line.get_xdata()) == [0, 1000]
    level = next(l for l in ax.get_lines() if l.get_label() == "seq-csr/cpu (serial baseline)")
    assert list(level.get_ydata()) == pytest.approx([serial, serial])
    assert ax.get_ylim()[0] < serial < ax.get_ylim()[1]   # drawn inside the axes


def test_task_count_table_and_figure_per_mode_and_tasks(runs, tmp_path):
    """Munguia Fig. 9: a row per (mode, T) of the hybrid runs only, each mode showing the
    setting it reads (workload: lambda; fixed: GPU share), GTEPS from the run's own searches;
    the figure a line per graph and mode over T."""
    sweep = {("fixed", 64): hybrid_run(runs, tmp_path / "f64", tasks=64, mode="fixed",
                                       gpu_share=0.25),
             ("workload", 1): hybrid_run(runs, tmp_path / "w1", tasks=1, time_factor=2.0),
             ("workload", 64): hybrid_run(runs, tmp_path / "w64", tasks=64, time_factor=0.5)}
    bfs_cli("report", "table", "task_count", runs["seq"], *sweep.values(),
            "--out", tmp_path / "tc")
    table = pd.read_csv(tmp_path / "tc.csv")
    assert list(zip(table["mode"], table["tasks"])) == list(sweep)   # no seq-csr row
    assert (tmp_path / "tc.md").read_text().count("\n") == len(table) + 2
    assert set(table["algorithm"]) == {"hybrid"} and set(table["backend"]) == {"gpu"}
    assert table["GTEPS"].tolist() == pytest.approx(
        [harmonic_teps(run) / 1e9 for run in sweep.values()], rel=1e-9)
    assert pd.isna(table["lambda"].iloc[0]) and table["lambda"].tolist()[1:] == [1000, 1000]
    assert table["GPU share"].iloc[0] == 0.25 and pd.isna(table["GPU share"].iloc[1:]).all()
    fig, _, note = figures.task_count_figure(report.load_runs([runs["seq"], *sweep.values()]))
    assert note is None
    lines = {l.get_label(): list(l.get_xdata()) for l in fig.axes[0].get_lines()}
    assert lines == {"kron-s9-e8 · workload, λ = 1000": [1, 64],
                     "kron-s9-e8 · fixed, GPU share 0.25": [64]}


def test_lambda_table_and_figure_per_edge_factor(runs, tmp_path):
    """Munguia Fig. 10: a row per (edge factor, lambda) of the workload runs, edge factors in
    numeric order (not by graph name), an infinite lambda (all CPU, "inf" in run.json) kept in
    the table; the figure a line per graph over the finite lambdas."""
    sweep = {(ef, lam): hybrid_run(runs, tmp_path / f"e{ef}-l{lam}", graph=f"kron-s9-e{ef}",
                                   edgefactor=ef, time_factor=1 + lam / 1000,
                                   **{"lambda": lam})
             for ef in (8, 128) for lam in (0, 1000)}
    all_cpu = hybrid_run(runs, tmp_path / "inf", graph="kron-s9-e8", edgefactor=8,
                         **{"lambda": "inf"})
    fixed = hybrid_run(runs, tmp_path / "fixed", mode="fixed")   # no lambda: not a row
    bfs_cli("report", "table", "lambda", *sweep.values(), all_cpu, fixed,
            "--out", tmp_path / "lam")
    table = pd.read_csv(tmp_path / "lam.csv")
    assert (tmp_path / "lam.md").read_text().count("\n") == len(table) + 2
    assert list(zip(table["edge factor"], table["lambda"])) == \
        [(8, 0), (8, 1000), (8, float("inf")), (128, 0), (128, 1000)]
    assert set(table["tasks"]) == {16} and set(table["scale"]) == {9}
    expected = [harmonic_teps(sweep[8, 0]), harmonic_teps(sweep[8, 1000]),
                harmonic_teps(all_cpu), harmonic_teps(sweep[128, 0]),
                harmonic_teps(sweep[128, 1000])]
    assert table["GTEPS"].tolist() == pytest.approx([t / 1e9 for t in expected], rel=1e-9)
    fig, _, note = figures.lambda_figure(report.load_runs([*sweep.values(), all_cpu, fixed]))
    assert note is None
    lines = {l.get_label(): list(l.get_xdata()) for l in fig.axes[0].get_lines()}
    assert lines == {"kron-s9-e8: edge factor 8": [0, 1000],
                     "kron-s9-e128: edge factor 128": [0, 1000]}


def test_hybrid_figures_without_hybrid_runs_say_why(runs):
    loaded = report.load_runs([runs["seq"]])
    assert loaded[["tasks", "mode", "lambda", "gpu_share"]].isna().all(axis=None)
    for figure in (figures.task_count_figure, figures.lambda_figure):
        fig, _, note = figure(loaded)
        assert fig is None and "no hybrid runs" in note


def test_source_lines_table_counts_each_implementation(runs, tmp_path):
    from bfs.report.sources import algorithm_source_lines
    bfs_cli("report", "table", "source_lines", runs["seq"], runs[2], "--out", tmp_path / "sl")
    table = pd.read_csv(tmp_path / "sl.csv").set_index("algorithm")
    assert table.loc["seq-csr", "source lines"] == algorithm_source_lines("seq-csr", "cpu")
    assert table.loc["2d", "source lines"] == algorithm_source_lines("2d", "cpu")
    assert table.loc["2d", "GTEPS"] == pytest.approx(harmonic_teps(runs[2]) / 1e9, rel=1e-9)
    assert set(table["scale"]) == {9}
    fig, _, note = figures.teps_vs_source_lines_figure(report.load_runs([runs["seq"], runs[2]]))
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert note is None and labels == {"seq-csr/cpu, 1 rank", "2d/cpu/scan, 2 ranks"}


def test_kernel1_vs_scale_draws_construction_time(runs):
    loaded = report.load_runs([runs["seq"], runs[2]])
    fig, _, note = figures.kernel1_vs_scale_figure(loaded)
    assert note is None
    ys = sorted(y for l in fig.axes[0].get_lines() for y in l.get_ydata())
    assert ys == pytest.approx(sorted(loaded["construction_time"]))


def test_cli_kinds_match_the_report_module():
    assert set(cli.REPORT_TABLES) == set(report.TABLES)
    assert set(cli.REPORT_FIGURES) == set(report.FIGURES)


def test_graphs_table_edges_read_per_nedge(runs, tmp_path):
    """Runs that count the edges they read show the median edges read / nedge; the others
    (and runs written before the column existed) show none."""
    counted = relabelled(runs[2], tmp_path / "do", algorithm="2d-do")
    table = pq.read_table(counted / "searches.parquet").to_pandas()
    table["edges_examined"] = table["nedge"] * [3, 1, 1, 2][:len(table)]
    table.to_parquet(counted / "searches.parquet")
    old = relabelled(runs[1], tmp_path / "old")
    table = pq.read_table(old / "searches.parquet").to_pandas()
    table.drop(columns=["edges_examined"]).to_parquet(old / "searches.parquet")
    graphs = report.TABLES["graphs"](report.load_runs([counted, runs[2], old])) \
        .set_index(["algorithm", "ranks"])
    assert graphs.loc[("2d-do", 2), "edges read / nedge"] == 1.5    # median of 3, 1, 1, 2
    # us a level: the mean time over the mean levels expanded (0 to the depth)
    rows = pq.read_table(counted / "searches.parquet").to_pandas()
    assert graphs.loc[("2d-do", 2), "us a level"] == pytest.approx(
        1e6 * rows["time_s"].mean() / (rows["depth"].mean() + 1))
    assert pd.isna(graphs.loc[("2d", 2), "edges read / nedge"])
    assert pd.isna(graphs.loc[("2d", 1), "edges read / nedge"])


# ------------------------------------------------- figures that hold what they claim (#29)

def with_environment(run_dir, out, time_factor=1.0, construction_time=None, **environment):
    """A copy of a run with run.json's environment entries (and Kernel 1 time) replaced."""
    out = relabelled(run_dir, out, time_factor=time_factor)
    info = json.loads((out / "run.json").read_text())
    info["environment"].update(environment)
    if construction_time is not None:
        info["construction_time"] = construction_time
    (out / "run.json").write_text(json.dumps(info))
    return out


@pytest.fixture
def run_set(runs, tmp_path):
    """A small run set that every figure draws something from: the seq-csr COST reference,
    2d on 1 and 2 ranks (the 2-rank point repeated), the 2x1 shape, a 4-rank point that ran
    on 2 cores, energy on the 1- and 4-rank points, a 1d threshold sweep and hybrid runs."""
    four = with_environment(runs[2], tmp_path / "four", time_factor=0.7, mpi_size=4,
                            placement={"ranks_per_host": 4, "cores_per_host": 2,
                                       "ranks_per_gpu": 0, "oversubscribed": True,
                                       "gpu_shared": False})
    info = json.loads((four / "run.json").read_text())
    info["parameters"]["mpi_size"] = 4
    info["partition"]["grid"] = [2, 2]
    (four / "run.json").write_text(json.dumps(info))
    return [runs["seq"], with_energy(runs[1], tmp_path / "one", watts=35.0), runs[2],
            runs["2x1"], with_energy(four, tmp_path / "four-measured", watts=60.0),
            relabelled(runs[2], tmp_path / "again", time_factor=1.5),
            *(relabelled(runs[2], tmp_path / f"sf{sf}", algorithm="1d", small_frontier=sf,
                         time_factor=f) for sf, f in [(0, 1.0), (100, 3.0)]),
            hybrid_run(runs, tmp_path / "h4", tasks=4),
            hybrid_run(runs, tmp_path / "h16", tasks=16, time_factor=0.5)]


def _display_points(artist):
    """An artist's plotted points in display coordinates (axhline: its two ends)."""
    import numpy as np
    from matplotlib.collections import Collection, LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle
    if isinstance(artist, Line2D):
        return artist.get_transform().transform(artist.get_xydata())
    if isinstance(artist, LineCollection):
        segments = [s for s in artist.get_segments() if len(s)]
        return artist.get_transform().transform(np.concatenate(segments)) if segments \
            else np.empty((0, 2))
    if isinstance(artist, Collection):
        return artist.get_offset_transform().transform(artist.get_offsets())
    if isinstance(artist, Rectangle):
        box = artist.get_window_extent()
        return np.array([[box.x0, box.y0], [box.x1, box.y1]])
    return np.empty((0, 2))


def _plotted(ax):
    """Every drawn data artist of an axes: lines, collections, bars."""
    return [a for a in [*ax.lines, *ax.collections, *ax.patches] if a.get_visible()]


def _inside(points, box, slack=1.0):
    return [(box.x0 - slack <= x <= box.x1 + slack) and (box.y0 - slack <= y <= box.y1 + slack)
            for x, y in points]


@pytest.mark.parametrize("kind", list(figures.FIGURES))
def test_every_legend_entry_is_drawn_inside_the_axes_and_clear_of_the_data(run_set, kind):
    """Each legend entry names an artist that is visible and has a point inside its axes'
    limits (the baselines small_frontier once drew above a frozen y axis broke this), and no
    legend covers a plotted point."""
    fig, _, note = figures.FIGURES[kind](report.load_runs(run_set))
    assert fig is not None, note
    fig.canvas.draw()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    data_axes = [ax for ax in fig.axes if ax.get_visible() and _plotted(ax)]
    assert data_axes
    for legend in legends:
        labels = [t.get_text() for t in legend.get_texts()]
        assert labels
        for label in labels:
            drawn = [a for ax in data_axes for a in _plotted(ax)
                     if a.get_label() == label and any(_inside(_display_points(a), ax.bbox))]
            containers = [c for ax in data_axes for c in ax.containers
                          if c.get_label() == label and any(
                              any(_inside(_display_points(p), ax.bbox)) for p in c)]
            assert drawn or containers, f"{kind}: legend entry {label!r} has nothing drawn"
        box = legend.get_window_extent()
        for ax in data_axes:
            for artist in _plotted(ax):
                assert not any(_inside(_display_points(artist), box, slack=-1.0)), \
                    f"{kind}: the legend covers {artist.get_label()!r}"
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_an_implementation_keeps_its_colour_and_marker_in_every_figure(run_set):
    """One style map: 2d/cpu/scan is drawn alike wherever it appears, wave in another colour."""
    loaded = report.load_runs(run_set)
    looks = {}
    for kind in ("strong_scaling", "weak_scaling", "teps_vs_scale", "kernel1_vs_scale"):
        fig, _, _ = figures.FIGURES[kind](loaded)
        for ax in fig.axes:
            for line in ax.lines:
                label = line.get_label()
                if label.startswith(("2d/cpu/scan", "seq-csr/cpu")) and line.get_marker() \
                        not in ("None", "", None) and line.get_linestyle() != "None":
                    looks.setdefault(label.split(" ")[0].split(",")[0], set()).add(
                        (line.get_color() if isinstance(line.get_color(), str)
                         else tuple(line.get_color()), line.get_marker()))
    import matplotlib.pyplot as plt
    plt.close("all")
    assert set(looks) == {"2d/cpu/scan", "seq-csr/cpu"}
    assert all(len(v) == 1 for v in looks.values()), looks
    assert figures.style("2d", "wave")["color"] != figures.style("2d", "scan")["color"]


def test_strong_scaling_names_the_cost_against_the_best_single_process_search(runs, tmp_path):
    """Issue 28's COST: the table names the reference (the graph's best single-process run)
    and the smallest count faster than it; the figure draws it as a level line."""
    fast = relabelled(runs[2], tmp_path / "fast", exchange="wave",
                      time_factor=harmonic_teps(runs[2]) / harmonic_teps(runs["seq"]) / 2)
    slow = relabelled(runs[1], tmp_path / "slow", exchange="wave",
                      time_factor=harmonic_teps(runs[1]) / harmonic_teps(runs["seq"]) * 2)
    loaded = report.load_runs([runs["seq"], runs[1], runs[2], slow, fast])
    bfs_cli("report", "table", "strong_scaling", runs["seq"], runs[1], runs[2], slow, fast,
            "--out", tmp_path / "strong")
    table = pd.read_csv(tmp_path / "strong.csv")
    reference = harmonic_teps(runs["seq"]) / 1e9
    assert set(table["COST reference"]) == {"seq-csr/cpu"}
    assert table["reference GTEPS"].tolist() == pytest.approx([reference] * len(table))
    cost = dict(zip(zip(table["algorithm"], table["exchange"].fillna("–")), table["COST"]))
    assert cost[("2d", "wave")] == "2"                 # 2 ranks at twice the reference
    assert cost[("seq-csr", "–")] == "reference"
    scan = table[(table["algorithm"] == "2d") & (table["exchange"] == "scan")]
    faster = scan["GTEPS"] > reference
    assert set(scan["COST"]) == {str(scan.loc[faster, "ranks"].min()) if faster.any()
                                 else "not reached"}
    md = (tmp_path / "strong.md").read_text()
    assert "| COST |" in md.splitlines()[0] and "e+" not in md and "e-0" not in md
    ax = figures.strong_scaling_figure(loaded).axes[0]
    level = next(l for l in ax.lines if "COST reference" in l.get_label())
    assert level.get_label() == "best single process: seq-csr/cpu (COST reference)"
    assert list(level.get_ydata()) == pytest.approx([reference, reference])
    assert ax.get_ylim()[0] < reference < ax.get_ylim()[1]
    labels = [l.get_label() for l in ax.lines]
    assert "2d/cpu/wave · COST: 2" in labels
    assert not any(l.startswith("seq-csr") for l in labels)   # the reference is no series


def test_points_on_shared_cores_are_marked_and_never_an_efficiency(runs, tmp_path):
    """A 2-rank run on a 1-core host (derived from an old run.json's cpu_cores: no placement
    entry) is marked; it gets no speedup or efficiency and is no base for them."""
    crowded = with_environment(runs[2], tmp_path / "crowded", cpu_cores=1)
    info = json.loads((crowded / "run.json").read_text())
    info["environment"].pop("placement", None)
    for rank in info["environment"]["ranks"]:
        rank.pop("cpu_cores", None)
    (crowded / "run.json").write_text(json.dumps(info))
    loaded = report.load_runs([runs[1], crowded])
    assert loaded["shared"].isna().tolist() == [True, False]
    assert loaded["shared"].iloc[1] == "2 ranks on 1 core"
    table = report.TABLES["strong_scaling"](loaded)
    assert table["shared hardware"].tolist()[1] == "2 ranks on 1 core"
    assert table["efficiency"].iloc[0] == 1 and pd.isna(table["efficiency"].iloc[1])
    assert pd.isna(table["speedup"].iloc[1])
    ax = figures.strong_scaling_figure(loaded).axes[0]
    ring = next(l for l in ax.lines if l.get_label() == figures.SHARED_LABEL)
    assert list(ring.get_xdata()) == [2]
    assert "2 ranks on 1 core" in {t.get_text() for t in ax.texts}
    # a run whose ranks had their own cores carries no mark
    assert report.load_runs([runs[2]])["shared"].isna().all()


def test_repeats_pool_with_their_spread_and_kernel1_takes_the_median(runs, tmp_path):
    """Three runs of one point: GTEPS pooled over every search, the repeats' range and the
    searches' quartiles beside it; Kernel 1 the median of the three constructions."""
    copies = [with_environment(runs[2], tmp_path / f"r{i}", time_factor=f, construction_time=k)
              for i, (f, k) in enumerate([(1.0, 0.2), (2.0, 0.1), (0.5, 5.0)])]
    for c, k in zip(copies, (0.2, 0.1, 5.0)):   # where each Kernel 1 went (distributed runs)
        info = json.loads((c / "run.json").read_text())
        info["measurements"]["kernel1_phases_s"] = {"block CSR": k / 2, "block CSC": k / 4}
        (c / "run.json").write_text(json.dumps(info))
    loaded = report.load_runs(copies)
    table = report.TABLES["strong_scaling"](loaded)
    assert len(table) == 1 and table["repeats"].iloc[0] == 3
    teps = [harmonic_teps(c) / 1e9 for c in copies]
    assert table["GTEPS repeat min"].iloc[0] == pytest.approx(min(teps))
    assert table["GTEPS repeat max"].iloc[0] == pytest.approx(max(teps))
    per_search = [r["nedge"] / r["time_s"] / 1e9 for c in copies for r in searches(c)]
    import numpy as np
    assert table["GTEPS q1"].iloc[0] == pytest.approx(np.percentile(per_search, 25))
    assert table["GTEPS q3"].iloc[0] == pytest.approx(np.percentile(per_search, 75))
    kernel1 = report.TABLES["kernel1"](loaded)
    assert kernel1["Kernel 1 median (s)"].tolist() == [0.2]
    assert (kernel1["min (s)"].iloc[0], kernel1["max (s)"].iloc[0]) == (0.1, 5.0)
    assert kernel1["phases"].tolist() == ["block CSR 0.1 s, block CSC 0.05 s"]
    # the figure's error bar spans the repeats' range
    fig, _, _ = figures.teps_vs_scale_figure(loaded)
    bars = [c for c in fig.axes[0].collections if len(c.get_segments())]
    (segment,) = bars[0].get_segments()
    assert sorted(segment[:, 1]) == pytest.approx([min(teps), max(teps)])


def test_placement_flags_more_ranks_than_cores_and_a_shared_gpu():
    from bfs.harness.envinfo import placement
    rank = {"hostname": "a", "cpu_cores": 2, "cuda_visible_devices": None}
    assert placement([rank] * 2, 2)["oversubscribed"] is False
    four = placement([rank] * 4, 2)
    assert four["oversubscribed"] is True and four["ranks_per_host"] == 4
    gpus = [{**rank, "gpu_index": 0, "cuda_visible_devices": d} for d in ("0", "1")]
    assert placement(gpus, 2)["gpu_shared"] is False    # SLURM bound each rank its own GPU
    assert placement([{**rank, "gpu_index": 0}] * 2, 2)["gpu_shared"] is True
    # jobs side by side on a shared box's GPUs (the slot launcher's count): marked from 2
    assert placement(gpus, 2, 4)["side_by_side"] == 4
    assert placement(gpus, 2, 1)["side_by_side"] is None
    assert placement(gpus, 2)["side_by_side"] is None


def test_a_run_beside_other_jobs_on_a_shared_box_is_marked(runs, tmp_path):
    """A run whose launcher said the box had 4 GPU slots (share_gpus) carries the note in its
    tables and figures, as a run on shared cores does."""
    def beside(run, name):
        out = with_environment(run, tmp_path / name)
        info = json.loads((out / "run.json").read_text())
        info["environment"]["placement"] = {**info["environment"]["placement"],
                                            "side_by_side": 4}
        (out / "run.json").write_text(json.dumps(info))
        return out

    note = "GPU jobs side by side (4 slots)"
    loaded = report.load_runs([runs[1], beside(runs[2], "beside")])
    assert loaded["shared"].tolist()[1] == note
    table = report.TABLES["strong_scaling"](loaded)
    assert table["shared hardware"].tolist()[1] == note
    # one count: the note beside its point; every count (a whole shared box): once a panel
    ax = figures.strong_scaling_figure(loaded).axes[0]
    assert note in {t.get_text() for t in ax.texts}
    ax = figures.strong_scaling_figure(
        report.load_runs([beside(runs[1], "beside1"), beside(runs[2], "beside2")])).axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count(f"ringed: {note}") == 1 and note not in texts


def test_markdown_numbers_stay_positional():
    from bfs.report.tables import to_markdown
    md = to_markdown(pd.DataFrame({"edges": [130654.0, 65327.5], "time": [0.0005123, 12.5]}))
    assert "| 130654 | 0.0005123 |" in md and "| 65328 | 12.50 |" in md


def test_frontier_has_a_panel_per_graph_family_naming_its_run(runs, tmp_path):
    """Kronecker and lattice graphs in panels of their own (a lattice's hundred levels no
    longer squeeze the scale-free ones), each curve naming the run it comes from."""
    lattice = relabelled(runs["seq"], tmp_path / "grid-8x64" / "seq-csr" / "cpu-serial-default")
    info = json.loads((lattice / "run.json").read_text())
    # a run from before lattices had their name (source "grid") lands among the lattices
    info["graph"].update(name="grid-8x64", source="grid")
    (lattice / "run.json").write_text(json.dumps(info))
    fig = figures.frontier_figure(report.load_runs([runs[2], runs["seq"], lattice]))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [figures.FAMILIES["kronecker"], figures.FAMILIES["lattice"]]
    (kron,), (grid,) = (ax.lines for ax in fig.axes)
    # the single-process run of the graph is the one drawn, and named
    assert kron.get_label() == f"kron-s9-e8: run {figures._run_id(runs['seq'])}, {ROOTS} roots"
    assert grid.get_label() == f"grid-8x64: run grid-8x64/seq-csr/cpu-serial-default, " \
        f"{ROOTS} roots"


def test_runs_of_several_machines_are_named_in_tables_figures_and_the_log(runs, tmp_path):
    """A scaling curve resumed on another host of the kind (two four-GPU device calls, two
    SLURM jobs on other nodes) compares the hosts as well: each point's machine is in the
    tables, and the figure's title and bfs report's log say that there are several."""
    from bfs.report.runs import machine_keys, machine_names
    here = report.load_runs([runs[1], runs[2]])
    assert here["machine"].nunique() == 1 and here["machine"].notna().all()
    gpus = ["NVIDIA H200, GPU-aaaa", "NVIDIA H200, GPU-bbbb"]
    other = with_environment(runs[2], tmp_path / "other", gpus=gpus)
    mixed = report.load_runs([runs[1], other])
    one, two = mixed["machine"]
    assert one != two
    # boards in any order are one machine; a job on a subset of a box's boards (a SLURM job
    # of one GPU, of four) is the box; a job across two nodes joins both; no record: None
    a, b, c = (machine_keys({"gpus": g}) for g in (gpus, gpus[::-1], gpus[:1]))
    assert len(set(machine_names([a, b, c]))) == 1
    node2 = machine_keys({"gpus": ["NVIDIA H200, GPU-cccc"]})
    assert len(set(machine_names([c, node2]))) == 2
    assert len(set(machine_names([c, node2, machine_keys({"gpus": [gpus[0], "NVIDIA H200, "
                                                                  "GPU-cccc"]})]))) == 1
    assert machine_names([machine_keys({}), c])[0] is None
    cpu = machine_keys({"ranks": [{"hostname": "n1"}], "cpu_model": "Xeon"})
    n1, n1_n2, n3 = machine_names([cpu, machine_keys({"hostnames": ["n1", "n2"],
                                                      "cpu_model": "Xeon"}),
                                   machine_keys({"hostnames": ["n3"], "cpu_model": "Xeon"})])
    assert n1 == n1_n2 != n3
    assert report.TABLES["strong_scaling"](mixed)["machine"].tolist() == [one, two]
    assert report.TABLES["weak_scaling"](mixed)["machine"].tolist() == [one, two]
    title = figures.strong_scaling_figure(mixed)._suptitle.get_text()
    assert f"runs from 2 machines ({', '.join(sorted([one, two]))})" in title
    assert "machines" not in figures.strong_scaling_figure(here)._suptitle.get_text()
    mixed_log = bfs_cli("report", "table", "strong_scaling", runs[1], other,
                        "--out", tmp_path / "mixed").stderr
    assert f"runs from 2 machines ({', '.join(sorted([one, two]))})" in mixed_log
    same_log = bfs_cli("report", "table", "strong_scaling", runs[1], runs[2],
                       "--out", tmp_path / "same").stderr
    assert "machines" not in same_log


def test_the_landing_page_counts_the_machines(runs, tmp_path):
    """The report's 'On what' names the machines where the runs ran on several (one here)."""
    from bfs.report.landing import environment_facts
    assert len(environment_facts([str(runs[1]), str(runs[2])])["machines"]) == 1
    other = with_environment(runs[2], tmp_path / "other", gpus=["NVIDIA H200, GPU-aaaa"])
    assert len(environment_facts([str(runs[1]), str(other)])["machines"]) == 2


def test_landing_headline_counts_only_runs_of_several_ranks_as_distributed():
    """The landing page's line per graph: the fastest run, then the fastest distributed one, a
    run of more than one rank (a 1d or 2d partition of one rank searches in one process too)."""
    from bfs.report.landing import best_runs_headline
    runs = pd.DataFrame({
        "graph": ["lat"] * 3 + ["kron"] * 3,
        "run_dir": ["r/lat/seq-csr/cpu-serial-default", "r/lat/1d/gpu-p1-sf0",
                    "r/lat/1d/gpu-p1-sf1000", "r/kron/merrill-do/gpu-serial-default",
                    "r/kron/2d-do/gpu-1x1-scan", "r/kron/2d-do/gpu-1x2-scan"],
        "comm": [None, "nccl", "nccl", None, "nccl", "nccl"],
        "ranks": [1, 1, 1, 1, 1, 2],
        "teps": [1e7, 6e8, 7e8, 6e11, 5.9e11, 5e11]})
    assert best_runs_headline(runs) == [
        "kron: fastest merrill-do/gpu-serial-default at 600 GTEPS; fastest distributed "
        "2d-do/gpu-1x2-scan at 500 GTEPS (3 runs)",
        "lat: fastest 1d/gpu-p1-sf1000 at 0.7 GTEPS (3 runs)"]
