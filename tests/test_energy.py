"""Energy per search (bfs.harness.energy): NVML and RAPL faked at their boundary (a pynvml
module in sys.modules whose counter advances with time.monotonic at a set wattage; RAPL zones
in a directory named by BFS_RAPL_ROOT), the record run.json gets, the report's energy table
and figure; and one GPU test that reads a real board counter."""
import json
import os
import shutil
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from bfs import cli
from bfs.harness import bench, energy
from helpers import bfs_cli, random_graph

BUS = "0000:17:00.0"
WATTS = 250.0


def fake_pynvml(watts: float = WATTS, supported: bool = True):
    """A pynvml whose one GPU (at BUS) has drawn `watts` since the module was made."""
    nvml = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    start = time.monotonic()
    nvml.NVMLError = NVMLError
    nvml.initialized = 0

    def init():
        nvml.initialized += 1

    def shutdown():
        nvml.initialized -= 1

    def handle_by_bus_id(bus_id):
        if nvml.initialized <= 0:
            raise NVMLError("Uninitialized")
        if bus_id.decode() != BUS:
            raise NVMLError("Not Found")
        return ("device", BUS)

    def total_energy(handle):
        if not supported:
            raise NVMLError("Not Supported")
        return int(watts * (time.monotonic() - start) * 1e3)   # millijoules

    nvml.nvmlInit, nvml.nvmlShutdown = init, shutdown
    nvml.nvmlDeviceGetHandleByPciBusId = handle_by_bus_id
    nvml.nvmlDeviceGetTotalEnergyConsumption = total_energy
    return nvml


@pytest.fixture
def nvml(monkeypatch):
    """The fake pynvml imported, CuPy's current device at BUS."""
    module = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    monkeypatch.setattr(energy, "gpu_pci_bus_id", lambda: BUS)
    return module


OPEN_METER = energy.open_meter


@pytest.fixture
def nvml_runs(nvml, monkeypatch):
    """The fake NVML, and the CPU runs of these tests metered by it as a GPU run is."""
    monkeypatch.setattr(energy, "open_meter", lambda gpu: OPEN_METER(gpu=True))
    return nvml


def rapl_zone(root: Path, zone: str, name: str, uj: int, max_uj: int = 262143328850):
    d = root / zone
    d.mkdir(parents=True, exist_ok=True)
    (d / "name").write_text(name + "\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    write_uj(d, uj)
    return d


def write_uj(zone: Path, uj: int) -> None:
    tmp = zone / "energy_uj.tmp"
    tmp.write_text(f"{uj}\n")
    os.replace(tmp, zone / "energy_uj")   # a reader sees the old value or the new one


class RaplWriter:
    """A thread advancing fake package zones' counters at `watts` (split between them), as
    the kernel does, until stopped."""

    def __init__(self, root: Path, watts: float, zones: int = 2):
        self.zones = [rapl_zone(root, f"intel-rapl:{i}", f"package-{i}", 0) for i in range(zones)]
        self.watts, self.stop = watts, threading.Event()
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            uj = int(self.watts / len(self.zones) * (time.monotonic() - self.start) * 1e6)
            for zone in self.zones:
                write_uj(zone, uj)
            time.sleep(0.002)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return random_graph(tmp_path_factory.mktemp("energy") / "graph")


def bfs_run(graph, out, *flags) -> dict:
    """`bfs run GRAPH --algorithm seq-csr` in this process (no interpreter start); run.json."""
    code = cli.main(["run", str(graph), "--algorithm", "seq-csr", "--roots", "4",
                     "--out", str(out), *map(str, flags)])
    assert code == 0
    return json.loads((Path(out) / "run.json").read_text())


# ------------------------------------------------------------------------------ the meters

def test_nvml_meter_reads_the_board_counter_in_joules(nvml):
    meter = energy.open_meter(gpu=True)
    assert (meter.source, meter.covers, meter.device) == ("nvml", "GPU boards", BUS)
    first, start = energy.sample(meter)
    time.sleep(0.05)
    last, end = energy.sample(meter)
    assert last - first == pytest.approx(WATTS * (end - start), rel=0.01)
    meter.close()
    assert nvml.initialized == 0


def test_nvml_unavailable_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)   # import pynvml raises ImportError
    with pytest.raises(energy.Unavailable, match="nvidia-ml-py not installed"):
        energy.NvmlMeter(BUS)
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(supported=False))
    with pytest.raises(energy.Unavailable, match=f"GPU at {BUS}: Not Supported"):
        energy.NvmlMeter(BUS)
    assert sys.modules["pynvml"].initialized == 0   # shut down again
    with pytest.raises(energy.Unavailable, match="Not Found"):
        energy.NvmlMeter("0000:99:00.0")


def test_rapl_meter_sums_the_packages_and_undoes_a_wrap(tmp_path):
    package0 = rapl_zone(tmp_path, "intel-rapl:0", "package-0", 999_000, max_uj=1_000_000)
    package1 = rapl_zone(tmp_path, "intel-rapl:1", "package-1", 5_000)
    dram = rapl_zone(tmp_path, "intel-rapl:0:0", "dram", 0)    # a sub-zone: not counted
    psys = rapl_zone(tmp_path, "intel-rapl:2", "psys", 0)      # the platform: not counted
    meter = energy.RaplMeter(tmp_path)
    assert (meter.source, meter.covers) == ("rapl", "CPU packages (RAPL)")
    assert meter.read() == 0
    write_uj(package0, 1_000)          # wrapped: 999000 -> 1000000 = 0 -> 1000, 2000 uJ
    write_uj(package1, 5_500)
    write_uj(dram, 10**9)
    write_uj(psys, 10**9)
    assert meter.read() == pytest.approx(0.0025)
    write_uj(package0, 3_000)
    assert meter.read() == pytest.approx(0.0045)


def test_rapl_unavailable_says_why(tmp_path):
    with pytest.raises(energy.Unavailable, match=r"no .*none \(RAPL\) readable"):
        energy.RaplMeter(tmp_path / "none")
    with pytest.raises(energy.Unavailable, match="no RAPL package zone"):
        energy.RaplMeter(tmp_path)


def test_record_counts_a_shared_device_once():
    # ranks 0 and 1 on one device, rank 2 on another: two devices, 10 W and 30 W
    record, why = energy.energy_record("rapl", energy.RAPL_COVERS, 1.0, 7,
                                       [(10.0, 1.0, 5), (10.5, 1.01, 5), (60.0, 2.0, 9)],
                                       hmean_teps=4e9)
    assert why is None
    assert record["watts_per_device"] == [10.0, 30.0] and record["watts"] == 40.0
    assert (record["joules"], record["seconds"], record["searches"]) == (70.0, 2.0, 7)
    assert record["teps_per_watt"] == 1e8
    record, why = energy.energy_record("nvml", energy.NVML_COVERS, 1.0, 3, [(0.0, 1.0, 5)], 1e9)
    assert record is None and "did not advance" in why


# --------------------------------------------------------------------------- bfs run's record

def test_run_records_nvml_energy(graph, tmp_path, nvml_runs):
    window = 0.3
    info = bfs_run(graph, tmp_path / "run", "--energy-window", window)
    e = info["energy"]
    assert info["energy_unavailable"] is None
    assert (e["source"], e["covers"], e["window_s"]) == ("nvml", "GPU boards", window)
    assert e["seconds"] >= window and e["searches"] >= 1
    assert e["watts"] == pytest.approx(WATTS, rel=0.03)
    assert e["watts_per_device"] == [e["watts"]]
    assert e["joules"] == pytest.approx(e["watts"] * e["seconds"])
    hmean = info["measurements"]["hmean_teps"]
    assert hmean == pytest.approx(info["graph500"]["TEPS"]["harmonic_mean"], rel=1e-9)
    assert e["teps_per_watt"] == pytest.approx(hmean / e["watts"], rel=1e-12)
    assert nvml_runs.initialized == 0


def test_run_records_rapl_energy(graph, tmp_path, monkeypatch):
    monkeypatch.setenv("BFS_RAPL_ROOT", str(tmp_path / "powercap"))
    with RaplWriter(tmp_path / "powercap", watts=40.0):
        info = bfs_run(graph, tmp_path / "run", "--energy-window", 0.4)
    e = info["energy"]
    assert (e["source"], e["covers"]) == ("rapl", "CPU packages (RAPL)")
    assert e["seconds"] >= 0.4
    # not the writer's 40 W closely: its thread may not run while this one holds the GIL
    # (gc.collect before the window takes seconds on a busy machine), so a read may find a
    # stale count; test_run_records_nvml_energy checks the watts, the test above the sums
    assert e["watts"] > 0 and e["watts_per_device"] == [e["watts"]]
    assert e["joules"] == pytest.approx(e["watts"] * e["seconds"])
    assert e["teps_per_watt"] == pytest.approx(info["measurements"]["hmean_teps"] / e["watts"])


def test_run_without_a_counter_records_null_and_why(graph, tmp_path, monkeypatch):
    monkeypatch.setenv("BFS_RAPL_ROOT", str(tmp_path / "absent"))
    info = bfs_run(graph, tmp_path / "run")   # the default window: nothing to read, no cost
    assert info["energy"] is None
    assert info["energy_unavailable"] == f"no {tmp_path / 'absent'} (RAPL) readable"


def test_energy_window_0_records_null_and_why(graph, tmp_path, nvml_runs):
    info = bfs_run(graph, tmp_path / "run", "--energy-window", 0)
    assert info["energy"] is None and info["energy_unavailable"] == "--energy-window 0"


def test_energy_window_is_refused_below_0(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "g", "--algorithm", "seq-csr", "--energy-window", "-1", "--out", "o"])
    assert exit_.value.code == 2 and "--energy-window" in capsys.readouterr().err


# ------------------------------------------------------------------------ bench and report

def test_bench_table_shows_mteps_per_watt_when_measured():
    run = {"hmean_teps": 2e9, "median_time_s": 1e-3, "kernel1_s": 0.1, "n_validated": 4,
           "valid": True}
    records = [{"graph": "g", "algorithms": {"a": {**run, "energy": None}}}]
    assert "MTEPS/W" not in bench.table(records, None)
    records[0]["algorithms"]["b"] = {**run, "energy": {"teps_per_watt": 8e6}}
    lines = bench.table(records, None).splitlines()
    assert lines[0].split()[-1] == "MTEPS/W"
    assert lines[2].split()[-1] == "nan" and lines[3].split()[-1] == "8"


@pytest.fixture(scope="module")
def energy_runs(graph, tmp_path_factory):
    """{"nvml": a run with energy (the fake NVML), "off": one with --energy-window 0}."""
    base = tmp_path_factory.mktemp("energy-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "pynvml", fake_pynvml())
        mp.setattr(energy, "open_meter", lambda gpu: energy.NvmlMeter(BUS))
        bfs_run(graph, base / "nvml", "--energy-window", 0.2)
    bfs_run(graph, base / "off", "--energy-window", 0)
    return {"nvml": base / "nvml", "off": base / "off"}


def test_energy_table_lists_measured_runs_and_notes_the_others(energy_runs):
    from bfs import report
    runs = report.load_runs([energy_runs["nvml"], energy_runs["off"]])
    table = report.TABLES["energy"](runs)
    measured, note = table.iloc[0], table.iloc[1]
    info = json.loads((energy_runs["nvml"] / "run.json").read_text())
    assert measured["MTEPS/W"] == pytest.approx(info["energy"]["teps_per_watt"] / 1e6)
    assert measured["watts"] == pytest.approx(WATTS, rel=0.05)
    assert (measured["source"], measured["covers"], measured["ranks"]) == ("nvml",
                                                                          "GPU boards", 1)
    assert note["note"] == "left out: 1 run without energy (--energy-window 0)"
    assert len(table) == 2
    none = report.TABLES["energy"](report.load_runs([energy_runs["off"]]))
    assert list(none["note"]) == ["none measured: 1 run without energy (--energy-window 0)"]
    assert list(report.TABLES["energy"](report.load_runs([]))["note"]) == [
        "none measured: no runs"]


def test_gteps_vs_watts_figure(energy_runs, tmp_path):
    from bfs import report
    from bfs.report import figures
    runs = report.load_runs([energy_runs["nvml"], energy_runs["off"]])
    fig, _, note = figures.gteps_vs_watts_figure(runs)
    assert note is None
    (line,) = [l for l in fig.axes[0].get_lines() if l.get_label() == "seq-csr/cpu"]
    assert list(line.get_xdata()) == pytest.approx(list(runs["watts"].dropna()))
    title = " ".join(fig.get_suptitle().split())
    assert "GPU boards only" in title and "1 run without energy left out" in title
    _, _, note = figures.gteps_vs_watts_figure(report.load_runs([energy_runs["off"]]))
    assert note.startswith("no run measured its energy")
    png, _ = report.write_figure("gteps_vs_watts", report.load_runs([energy_runs["off"]]),
                                 tmp_path / "none")
    assert png.stat().st_size > 1000   # a report without energy still builds


# --------------------------------------------------------------------------- MPI and GPU

@pytest.mark.mpi
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec on PATH")
def test_two_ranks_agree_on_the_window_and_count_their_packages_once(tmp_path):
    root = tmp_path / "powercap"
    with RaplWriter(root, watts=30.0):
        bfs_cli("run", "--generate", "kronecker:scale=8", "--algorithm", "2d", "--roots", 2,
                "--energy-window", 0.5, "--out", tmp_path / "run", ranks=2,
                env={"BFS_RAPL_ROOT": str(root)})
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    e = info["energy"]
    assert info["parameters"]["mpi_size"] == 2 and e["source"] == "rapl"
    # both ranks read the same host's packages: one device, not two
    assert len(e["watts_per_device"]) == 1 and e["watts"] == e["watts_per_device"][0] > 0
    assert e["seconds"] >= 0.5


try:
    import cupy
    _GPU = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:   # no CuPy, no driver, no device
    _GPU = False


@pytest.mark.gpu
@pytest.mark.skipif(not _GPU, reason="no CuPy/CUDA GPU")
def test_gpu_run_reads_the_board_counter(tmp_path):
    pytest.importorskip("pynvml", reason="nvidia-ml-py (the gpu extra) is not installed")
    window = 0.5
    bfs_cli("run", "--generate", "kronecker:scale=16", "--algorithm", "merrill-do",
            "--backend", "gpu", "--roots", 8, "--energy-window", window, "--out", tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    e = info["energy"]
    assert e is not None, info["energy_unavailable"]
    assert (e["source"], e["covers"]) == ("nvml", "GPU boards")
    assert e["joules"] > 0 and 20 < e["watts"] < 1000
    assert len(e["watts_per_device"]) == 1
    # the window is the searches back to back: at least its seconds, and not much more
    assert window <= e["seconds"] < window + 0.5
    assert e["teps_per_watt"] == pytest.approx(info["measurements"]["hmean_teps"] / e["watts"])
