"""Energy per search (Green Graph500): joules, mean watts and TEPS per watt of a run's searches,
read from the hardware's cumulative energy counters.

What is measured, and how:

- GPUs (--backend gpu): each rank reads its own GPU's board counter through NVML
  (nvidia-ml-py's pynvml), nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver
  was loaded, on Volta and later. The rank's device is CuPy's current one, found in NVML by its
  PCI bus id (NVML numbers devices without regard to CUDA_VISIBLE_DEVICES). It covers the GPU
  boards only: not the host's CPUs, memory, network or power supplies.
- CPUs: RAPL through /sys/class/powercap (BFS_RAPL_ROOT names another root, for tests): each
  package zone's intel-rapl:N/energy_uj, microjoules, wrapping to 0 at max_energy_range_uj (a
  read after a wrap adds that range back). It covers the CPU packages (cores, caches, uncore),
  not DRAM or the rest of the node; the counters are readable by root only on most kernels
  since Linux 5.10, so often there is none.

The counters update every few to a hundred milliseconds (NVML's period depends on the GPU),
longer than one search may take, so a run's timed searches are repeated over the same roots,
back to back, for a window of at least --energy-window seconds (default 2) between two reads
(measure_window). Each rank reads its own device; ranks that share a device (two ranks on one
GPU, every rank of a node on its RAPL packages) count it once.

run.json's `energy` (energy_record): source, covers, window_s, searches, seconds, joules,
watts (the mean over the window, summed over the devices), watts_per_device, teps_per_watt
(the harmonic-mean TEPS of the timed searches over watts); or null, with the reason in
`energy_unavailable`.

NVML is reached only through import_nvml and gpu_pci_bus_id, RAPL only through the files
under rapl_root(), so that tests can fake them (a pynvml module in sys.modules; a directory of
fake zones named by BFS_RAPL_ROOT).
"""
from __future__ import annotations

import gc
import hashlib
import os
import socket
import time
from pathlib import Path

import numpy as np

RAPL_ROOT = "/sys/class/powercap"
NVML_COVERS = "GPU boards"
RAPL_COVERS = "CPU packages (RAPL)"


# ----------------------------------------------------------------- the hardware's boundary

def import_nvml():
    """pynvml (nvidia-ml-py, the gpu extra)."""
    import pynvml
    return pynvml


def gpu_pci_bus_id() -> str:
    """The PCI bus id of this process's current CUDA device (CuPy's)."""
    import cupy
    return cupy.cuda.Device().pci_bus_id


def rapl_root() -> Path:
    return Path(os.environ.get("BFS_RAPL_ROOT", RAPL_ROOT))


def read_uj(path: Path) -> int:
    return int(path.read_text().strip())


# ------------------------------------------------------------------------------- meters

class Unavailable(Exception):
    """Why no meter could be opened: run.json's energy_unavailable."""


class NvmlMeter:
    """This rank's GPU board: read() is joules since the driver was loaded."""
    source, covers = "nvml", NVML_COVERS

    def __init__(self, bus_id: str):
        try:
            self.nvml = import_nvml()
        except ImportError:
            raise Unavailable("nvidia-ml-py not installed (pip install nvidia-ml-py, in the "
                              "gpu extra)") from None
        try:
            self.nvml.nvmlInit()
        except self.nvml.NVMLError as e:
            raise Unavailable(f"NVML: {e}") from None
        try:
            self.handle = self.nvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode())
            self.read()
        except self.nvml.NVMLError as e:   # e.g. Not Supported: a GPU older than Volta
            self.close()
            raise Unavailable(f"NVML energy counter of the GPU at {bus_id}: {e}") from None
        self.device = bus_id

    def read(self) -> float:
        return self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) / 1e3

    def close(self) -> None:
        self.nvml.nvmlShutdown()


class RaplMeter:
    """Every RAPL package zone under root, summed: read() is joules since the meter was made,
    each zone's wrap-arounds undone (at most one a zone between two reads: the range is
    hundreds of kilojoules, minutes at full power)."""
    source, covers = "rapl", RAPL_COVERS

    def __init__(self, root: Path):
        if not root.is_dir():
            raise Unavailable(f"no {root} (RAPL) readable")
        self.zones = []
        for zone in sorted(root.glob("intel-rapl:*")):
            # packages only: intel-rapl:N:M are their sub-zones (cores, DRAM), psys the
            # platform, which would count the packages twice
            if zone.name.count(":") != 1 or not (zone / "energy_uj").exists():
                continue
            name = (zone / "name").read_text().strip() if (zone / "name").exists() else ""
            if name.startswith("psys"):
                continue
            try:
                self.zones.append([zone / "energy_uj", read_uj(zone / "max_energy_range_uj"),
                                   read_uj(zone / "energy_uj")])
            except PermissionError:
                raise Unavailable(f"{zone / 'energy_uj'} is not readable (RAPL counters are "
                                  "root-only on most kernels)") from None
            except (OSError, ValueError) as e:
                raise Unavailable(f"{zone}: unreadable RAPL zone ({e})") from None
        if not self.zones:
            raise Unavailable(f"no RAPL package zone (intel-rapl:N) under {root}")
        self.total_uj = 0
        self.device = "rapl"   # the node's packages: every rank of a host reads the same

    def read(self) -> float:
        for zone in self.zones:
            path, wrap, last = zone
            now = read_uj(path)
            self.total_uj += now - last if now >= last else now - last + wrap
            zone[2] = now
        return self.total_uj / 1e6

    def close(self) -> None:
        pass


def open_meter(gpu: bool):
    """This rank's meter for the backend: NVML on the GPU, RAPL on the CPU. Raises
    Unavailable with the reason where none can be read."""
    return NvmlMeter(gpu_pci_bus_id()) if gpu else RaplMeter(rapl_root())


def device_key(meter) -> int:
    """A number naming the device a meter reads (host and device), the same on every rank
    that reads it: ranks sharing a device count it once."""
    name = f"{socket.gethostname()}/{meter.device}".encode()
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "little", signed=True)


# ----------------------------------------------------------------------------- the window

def sample(meter) -> tuple[float, float]:
    """(joules, time.perf_counter()) read together: the clock's midpoint around the counter's
    read, read again (up to three times) where the process was stalled inside it, as a busy
    or throttled host does for tens of milliseconds."""
    for _ in range(3):
        before = time.perf_counter()
        joules = meter.read()
        after = time.perf_counter()
        if after - before < 1e-3:
            break
    return joules, (before + after) / 2


def measure_window(session, searcher, roots, meter, window_s: float):
    """The searches over roots repeated cyclically, back to back (unvalidated, the garbage
    collector off, as Clock.search), from a barrier until at least window_s seconds have
    passed (the maximum over the ranks decides, so all stop together), the device
    synchronized before the last read. This rank's (joules, seconds, searches)."""
    gc.collect()
    session.barrier()
    gc.disable()
    try:
        start_j, start = sample(meter)
        searches = 0
        while True:
            searcher.search(int(roots[searches % len(roots)]))
            searches += 1
            if session.max(time.perf_counter() - start) >= window_s:
                break
        if session.gpu:
            import cupy
            cupy.cuda.Device().synchronize()
        end_j, end = sample(meter)
    finally:
        gc.enable()
    return end_j - start_j, end - start, searches


def energy_record(source: str, covers: str, window_s: float, searches: int, per_rank,
                  hmean_teps: float) -> tuple[dict | None, str | None]:
    """(run.json's energy, energy_unavailable) from every rank's (joules, seconds, device
    key), in rank order; each device counted once, by the first rank that read it."""
    devices = {}
    for joules, seconds, key in per_rank:
        devices.setdefault(key, (joules, seconds))
    joules = sum(j for j, _ in devices.values())
    seconds = max(s for _, s, _ in per_rank)
    if joules <= 0:
        return None, f"the {source} counter did not advance over the {seconds:.3g} s window"
    watts_per_device = [j / s for j, s in devices.values()]
    watts = sum(watts_per_device)
    return {"source": source, "covers": covers, "window_s": window_s, "searches": searches,
            "seconds": seconds, "joules": joules, "watts": watts,
            "watts_per_device": watts_per_device,
            "teps_per_watt": hmean_teps / watts}, None


def measure(session, searcher, roots, window_s: float, hmean_teps: float | None):
    """Every rank: the energy window after a run's timed searches, where every rank has a
    meter. Rank 0: (run.json's energy, energy_unavailable); (None, None) elsewhere.
    hmean_teps: the timed searches' harmonic-mean TEPS (rank 0's)."""
    if window_s <= 0:
        return None, "--energy-window 0"
    try:
        meter, reason = open_meter(session.gpu), None
    except Unavailable as e:
        meter, reason = None, str(e)
    # every rank must take the window or none: one without a meter stops them all
    if session.max(0.0 if meter is not None else 1.0) > 0:
        if meter is not None:
            meter.close()
        return None, reason or "another rank could not read its energy counter"
    try:
        joules, seconds, searches = measure_window(session, searcher, roots, meter, window_s)
    finally:
        meter.close()
    # float64 holds the key's 64 bits only approximately; a separate int64 column keeps them
    values = session.gather(np.array([joules, seconds]))
    keys = session.gather(np.array([device_key(meter)], np.int64))
    if not session.is_root:
        return None, None
    per_rank = [(float(j), float(s), int(k)) for (j, s), k in zip(values.reshape(-1, 2), keys)]
    return energy_record(meter.source, meter.covers, window_s, searches, per_rank,
                         hmean_teps or 0.0)
