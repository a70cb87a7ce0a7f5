"""The strong- and weak-scaling figures of a box of GPUs, drawn from a synthetic run table (what
bfs.report.load_runs returns) without runs or MPI: config/gpu_box.yaml's plan on 8 GPUs, four
GPU counts (1, 2, 4, 8), the 1xP and squarer grids of each, and the exchange ablation's ten
series a graph (2d and 2d-do by scan/wave and NCCL/MPI, 1d by comm) beside merrill-do, the
COST reference. The figures must stay legible: a panel per graph and algorithm, each panel's
legend clear of every panel's data, the COST line in every panel; weak scaling with GTEPS per
GPU against the count."""
import matplotlib
import numpy as np
import pandas as pd
import pytest

from bfs.partition import squarest_grid
from bfs.report import figures
from bfs.report.runs import RUN_COLUMNS

matplotlib.use("Agg")

COUNTS = [1, 2, 4, 8]
GRIDS = {1: ["1x1"], 2: ["1x2", "2x1"], 4: ["1x4", "2x2"], 8: ["1x8", "2x4"]}
REFERENCE = 540e9      # merrill-do on one GPU


def run(graph, algorithm, ranks, grid=None, exchange=None, comm=None, teps=1e11, scale=26):
    """One run's row: only what the scaling figures read is meaningful."""
    row = dict.fromkeys(RUN_COLUMNS)
    row.update(run_dir=f"results/runs/{graph}/{algorithm}/gpu-{grid or ranks}-{exchange}-{comm}",
               graph=graph, source="kronecker", scale=scale, n_vertices=2 ** scale,
               n_edges=16 * 2 ** scale, directed_edges=32 * 2 ** scale, algorithm=algorithm,
               backend="gpu", ranks=ranks, gpus=ranks, exchange=exchange, comm=comm, grid=grid,
               construction_time=1.0, n_searches=8, search_teps=(teps,) * 8, teps=teps,
               mean_time_s=1.0, max_depth=6, mean_depth=5.0, mean_reached=1.0, mean_nedge=1.0,
               examined_per_nedge=float("nan"))
    return row


def speed(algorithm, ranks, grid, exchange, comm) -> float:
    """Made-up TEPS with the measured shape: 2d-do fastest, 1xP ahead of the squarer grid,
    wave and MPI behind scan and NCCL."""
    base = {"2d-do": 4.5e11, "2d": 0.4e11, "1d": 0.3e11}[algorithm]
    factor = ranks ** 0.4
    if grid and grid != f"1x{ranks}":
        factor *= 0.65
    factor *= 0.8 if exchange == "wave" else 1.0
    return base * factor * (0.6 if comm == "mpi" else 1.0)


def strong_runs(graphs=("kron-s26", "kron-s27"), exchanges=("scan", "wave"),
                comms=("nccl", "mpi")) -> pd.DataFrame:
    rows = []
    for graph in graphs:
        rows.append(run(graph, "merrill-do", 1, teps=REFERENCE))
        for algorithm in ("2d", "2d-do"):
            rows.append(run(graph, algorithm, 1, "1x1", exchanges[0], comms[0],
                            speed(algorithm, 1, "1x1", exchanges[0], comms[0])))
            for count in COUNTS[1:]:
                for grid in GRIDS[count]:
                    for exchange in exchanges:
                        for comm in comms:
                            rows.append(run(graph, algorithm, count, grid, exchange, comm,
                                            speed(algorithm, count, grid, exchange, comm)))
        rows.append(run(graph, "1d", 1, None, None, comms[0], speed("1d", 1, None, None, None)))
        for count in COUNTS[1:]:
            for comm in comms:
                rows.append(run(graph, "1d", count, None, None, comm,
                                speed("1d", count, None, None, comm)))
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _data_points(ax):
    """Every plotted point of an axes in display coordinates (lines and error bars)."""
    points = [line.get_transform().transform(line.get_xydata()) for line in ax.lines
              if line.get_visible() and len(line.get_xydata())]
    for c in ax.collections:
        segments = [s for s in getattr(c, "get_segments", lambda: [])() if len(s)]
        if segments:
            points.append(c.get_transform().transform(np.concatenate(segments)))
    return np.concatenate(points) if points else np.empty((0, 2))


def _clear_of_every_panel(fig):
    """No legend of the figure covers a plotted point of any panel, nor another legend."""
    fig.canvas.draw()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    boxes = [legend.get_window_extent() for legend in legends]
    for box in boxes:
        for ax in fig.axes:
            pts = _data_points(ax)
            inside = (pts[:, 0] > box.x0 + 1) & (pts[:, 0] < box.x1 - 1) \
                & (pts[:, 1] > box.y0 + 1) & (pts[:, 1] < box.y1 - 1)
            assert not inside.any(), f"a legend covers data of {ax.get_title()!r}"
            assert not box.overlaps(ax.bbox), f"a legend overlaps the panel {ax.get_title()!r}"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), "two legends overlap"
    width, height = fig.canvas.get_width_height()
    for box in boxes:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1


def test_strong_scaling_of_ten_series_a_graph_gets_a_panel_per_algorithm(tmp_path):
    runs = strong_runs()
    fig = figures.strong_scaling_figure(runs)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [f"{g} · {a}" for g in ("kron-s26", "kron-s27") for a in ("2d", "2d-do", "1d")]
    for ax in fig.axes:
        graph, algorithm = ax.get_title().split(" · ")
        series = [line for line in ax.lines if line.get_linestyle() in ("-", "--")
                  and "COST reference" not in line.get_label()]
        assert 2 <= len(series) <= figures.MAX_SERIES_PER_PANEL
        assert all(line.get_label().startswith(f"{algorithm}/gpu/") for line in series)
        # every series from 1 to 8 GPUs, its COST named (merrill-do at 540 GTEPS)
        assert all(list(line.get_xdata()) == COUNTS for line in series)
        assert all(" · COST: " in line.get_label() for line in series)
        # the COST line in every panel, at merrill-do's GTEPS
        level = [line for line in ax.lines if "COST reference" in line.get_label()]
        assert [line.get_label() for line in level] == \
            ["best single process: merrill-do/gpu (COST reference)"]
        assert list(level[0].get_ydata()) == pytest.approx([REFERENCE / 1e9] * 2)
        assert ax.get_ylim()[0] < REFERENCE / 1e9 < ax.get_ylim()[1]
        # the counts on the x axis, each count's grids under it (none per point: legible)
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert [t.split("\n")[0] for t in ticks] == ["1", "2", "4", "8"]
        if algorithm != "1d":   # every line joins 1xP, the fastest of each count
            assert ticks[1:] == ["2\n1x2\no 2x1", "4\n1x4\no 2x2", "8\n1x8\no 2x4"]
        assert not [t for t in ax.texts if t.get_text() in sum(GRIDS.values(), [])]
        # each panel's own legend: its series, the COST line and the open markers' meaning
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert set(labels) >= {line.get_label() for line in series} | \
            {"best single process: merrill-do/gpu (COST reference)"}
        if algorithm != "1d":
            assert figures.OTHER_SHAPE_LABEL in labels
    # 2d-do beats merrill-do from 2 GPUs (scan, NCCL), on the 1x2 grid the line does not join
    do = next(ax for ax in fig.axes if ax.get_title() == "kron-s26 · 2d-do")
    assert "2d-do/gpu/scan/nccl · COST: 2" in [line.get_label() for line in do.lines]
    _clear_of_every_panel(fig)
    import matplotlib.pyplot as plt
    plt.close(fig)
    png, svg = figures.write_figure("strong_scaling", runs, tmp_path / "strong_scaling")
    assert png.stat().st_size > 10_000 and svg.stat().st_size > 10_000


def test_strong_scaling_of_a_few_series_keeps_a_panel_a_graph():
    """strong_scaling itself (scan, NCCL: three series a graph): a panel per graph, one legend
    under them, the grids named on the ticks once the series are more than two."""
    fig = figures.strong_scaling_figure(strong_runs(exchanges=("scan",), comms=("nccl",)))
    assert [ax.get_title() for ax in fig.axes] == ["kron-s26", "kron-s27"]
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in fig.axes)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == \
        ["1", "2\n1x2\no 2x1", "4\n1x4\no 2x2", "8\n1x8\no 2x4"]
    assert sum("COST reference" in line.get_label() for line in ax.lines) == 1
    _clear_of_every_panel(fig)
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_lines_of_a_crowded_panel_that_join_other_grids_name_them():
    """A panel of more series than are named point by point, whose lines join different
    grids at a count (2d-do fastest on 2x2 at 4 GPUs, 2d on 1x4): that count's tick lists its
    grids plainly and each line's point there is named by its grid; the other counts keep the
    tick's 'line first, o others'."""
    runs = strong_runs(exchanges=("scan",), comms=("nccl",))
    flip = (runs["algorithm"] == "2d-do") & (runs["ranks"] == 4)
    runs.loc[flip & (runs["grid"] == "2x2"), ["teps"]] = 9e11
    runs["search_teps"] = [(t,) * 8 for t in runs["teps"]]
    fig = figures.strong_scaling_figure(runs)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == \
        ["1", "2\n1x2\no 2x1", "4\n1x4\n2x2", "8\n1x8\no 2x4"]
    do = next(line for line in ax.lines if line.get_label().startswith("kron-s26 · 2d-do/"))
    assert list(do.get_ydata())[2] == pytest.approx(900)    # its line joins 2x2 at 4 GPUs
    named = sorted(t.get_text() for t in ax.texts if t.get_text() in GRIDS[4])
    assert named == ["1x4", "2x2"]     # 2d's (and 1d has no grid) point and 2d-do's
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_weak_scaling_shows_gteps_per_gpu_against_the_count():
    """2d and 1d, one scale more each time the GPUs double: GTEPS, and GTEPS per GPU, whose
    ideal is level at the one-GPU point's."""
    rows = []
    for i, count in enumerate(COUNTS):
        for algorithm in ("2d", "1d"):
            grid = f"1x{count}" if algorithm == "2d" else None
            rows.append(run(f"kron-s{26 + i}", algorithm, count, grid, "scan" if grid else None,
                            "nccl", teps=1e11 * count * 0.9 ** i, scale=26 + i))
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    fig = figures.weak_scaling_figure(runs)
    total, per_gpu = fig.axes
    assert "per GPU" in per_gpu.get_ylabel() and "per GPU" in per_gpu.get_title()
    assert per_gpu.get_xlabel().startswith("GPUs")
    line = next(l for l in per_gpu.lines if l.get_label() == "2d/gpu/scan")
    assert list(line.get_xdata()) == COUNTS
    assert list(line.get_ydata()) == pytest.approx([100 * 0.9 ** i for i in range(4)])
    ideal = next(l for l in per_gpu.lines if l.get_label() == figures.IDEAL_LABEL
                 and l.get_color() == line.get_color())
    assert list(ideal.get_ydata()) == pytest.approx([100.0] * 4)     # level: perfect
    summed = next(l for l in total.lines if l.get_label() == "2d/gpu/scan")
    assert list(summed.get_ydata()) == pytest.approx([100 * c * 0.9 ** i
                                                      for i, c in enumerate(COUNTS)])
    assert [t.get_text() for t in per_gpu.get_xticklabels()] == ["1", "2", "4", "8"]
    assert {t.get_text() for t in per_gpu.texts} >= {f"scale {26 + i}" for i in range(4)}
    _clear_of_every_panel(fig)
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_squarest_grid_is_the_lines():
    """The line joins each count's squarest grid (what `ranks:` plans), as the ticks say."""
    assert ["{}x{}".format(*squarest_grid(c)) for c in COUNTS[1:]] == ["1x2", "2x2", "2x4"]
