"""Where a run ran: hardware, scheduler, software versions and the project's git commit; and
the process's host memory peak.

Recorded in every run.json so a table's number can be traced to the machine and code behind it.
Every probe is best-effort: a missing tool yields None, never an exception.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

from ..errors import BfsError

PACKAGES = ["numpy", "numba", "pyarrow", "mpi4py", "mpich", "cupy-cuda12x", "cupy-cuda13x",
            "cupy", "snakemake"]


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def reset_host_memory_peak() -> bool:
    """Start the process's resident-set high-water mark again from its current size (Linux:
    5 written to /proc/self/clear_refs), so that a run's peak is its own and not that of what
    ran before it in the process; False where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def host_memory_peak() -> int:
    """The process's resident-set high-water mark in bytes: VmHWM in /proc/self/status on
    Linux (since reset_host_memory_peak), else getrusage's ru_maxrss (the process's whole
    life; kilobytes, bytes on macOS)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def gpus() -> list[str]:
    """GPU names visible to this process (CUDA_VISIBLE_DEVICES honoured via nvidia-smi's view)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,uuid", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def package_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def git_commit() -> dict:
    root = Path(__file__).resolve().parent.parent
    def git(*args):
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                 text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None}
    return {"commit": commit, "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


SLURM_VARS = ["SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
              "SLURM_STEP_ID", "SLURM_LOCALID", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
              "SLURM_PROCID", "SLURM_JOB_PARTITION", "CUDA_VISIBLE_DEVICES"]


def mpi_library() -> str | None:
    """The MPI library this process runs on, as it names itself (MPICH, Open MPI, Cray MPICH,
    with version and build): which one ran matters when the site's MPI replaces the pip wheel.
    None where the run never loaded MPI (a serial run): importing mpi4py.MPI here would start
    MPI just to ask."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None:
        return None
    try:
        return mpi.Get_library_version().strip()
    except Exception:   # best-effort, like every probe here
        return None


def slurm() -> dict:
    return {k: os.environ[k] for k in SLURM_VARS if k in os.environ}


def local_rank(node_rank: int | None = None) -> int:
    """This process's index among the ranks on its node: SLURM_LOCALID under srun, else the
    launcher's own variable, else `node_rank` (the rank in a shared-memory split), else 0."""
    for var in ("SLURM_LOCALID", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                "PMI_LOCAL_RANK"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return node_rank or 0


def gpu_index(local: int, n_devices: int) -> int:
    """The device a rank drives: SLURM may have bound each task to one GPU (then index 0 of
    what it sees); otherwise ranks on a node take the visible devices in turn."""
    return local % n_devices if n_devices > 0 else 0


# Where a GPU rank's host threads run (BFS_CPU_AFFINITY): `inherit` (the default) keeps what the
# launcher gave (mpiexec's binding, SLURM's cgroup); `gpu` narrows it to the cores of the rank's
# GPU's own NUMA node where the two meet (a rank whose launcher gave it another socket's cores
# keeps them), so the host's launches and its pinned buffers sit beside the GPU. Four-GPU runs
# of one command spread 1.29x from launch to launch (BENCHMARKS.md, "Both strong-scaling
# experiments whole"); each rank's cores and its GPU's are in run.json either way.
AFFINITY_ENV = "BFS_CPU_AFFINITY"
AFFINITY_MODES = ("inherit", "gpu")
PCI_DEVICES = Path("/sys/bus/pci/devices")
_gpu_cpus: str | None = None     # the cores of this rank's GPU's NUMA node (bind_near_gpu)


def parse_cpulist(text: str) -> set[int]:
    """The cores of a kernel CPU list ("0-31,64-95")."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def format_cpulist(cpus) -> str:
    """A set of cores as a kernel CPU list, runs joined ("0-3,8")."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{lo}-{hi}" if hi > lo else f"{lo}" for lo, hi in runs)


def gpu_local_cpus(bus_id: str | None, devices: Path = PCI_DEVICES) -> set[int] | None:
    """The cores of the NUMA node of the PCI device `bus_id` (CUDA's "0000:1B:00.0"), from
    sysfs; None where the kernel does not say (no sysfs, a virtual device, no address)."""
    if not bus_id:
        return None
    domain, _, rest = bus_id.strip().lower().partition(":")
    try:
        text = (devices / f"{domain[-4:].rjust(4, '0')}:{rest}" / "local_cpulist").read_text()
    except (OSError, ValueError):
        return None
    return parse_cpulist(text) or None


def bind_near_gpu(bus_id: str | None, mode: str | None = None,
                  devices: Path = PCI_DEVICES) -> bool:
    """Apply BFS_CPU_AFFINITY (or `mode`) for the GPU at bus_id: under `gpu` narrow this
    process's cores to those it may use on that GPU's NUMA node. Whether it narrowed them."""
    global _gpu_cpus
    mode = mode or os.environ.get(AFFINITY_ENV) or "inherit"
    if mode not in AFFINITY_MODES:
        raise BfsError(f"{AFFINITY_ENV}={mode!r}: expected one of {', '.join(AFFINITY_MODES)}")
    near = gpu_local_cpus(bus_id, devices)
    _gpu_cpus = format_cpulist(near) if near else None
    if mode != "gpu" or not near or not hasattr(os, "sched_setaffinity"):
        return False
    allowed = os.sched_getaffinity(0)
    both = allowed & near
    if not both or both == allowed:
        return False
    os.sched_setaffinity(0, both)
    return True


def cpu_affinity() -> str | None:
    """This process's cores as a CPU list, None where the platform does not say."""
    return format_cpulist(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def rank_info(node_rank: int | None = None) -> dict:
    """What one rank saw: small metadata gathered to rank 0 for run.json (with its cores, and
    its GPU's NUMA node's cores where bind_near_gpu found them)."""
    return {"hostname": socket.gethostname(),
            "slurm_procid": os.environ.get("SLURM_PROCID"),
            "slurm_localid": os.environ.get("SLURM_LOCALID"),
            "local_rank": local_rank(node_rank),
            "cpu_cores": os.cpu_count(),
            "cpus": cpu_affinity(),
            "gpu_numa_cpus": _gpu_cpus,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


# Set by the workflow's GPU-slot launcher (workflow/gpu_slots.py, config share_gpus): the
# box's GPU slots, whose jobs run side by side; recorded so the report marks their timings.
GPU_SLOTS_ENV = "BFS_GPU_SLOTS"


def gpu_slots() -> int | None:
    """The slots of the shared box this job ran on (GPU_SLOTS_ENV), None off one."""
    text = os.environ.get(GPU_SLOTS_ENV, "")
    return int(text) if text.isdigit() else None


def environment(hostnames: list[str] | None = None, mpi_size: int = 1,
                ranks: list[dict] | None = None) -> dict:
    return {
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "gpus": gpus(),
        "mpi_size": mpi_size,
        "mpi_library": mpi_library(),
        "hostnames": hostnames or [socket.gethostname()],
        "slurm": slurm(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        # per rank: host, SLURM_PROCID/LOCALID, node-local rank, CUDA_VISIBLE_DEVICES and the
        # device index it used (gpu runs)
        "ranks": ranks or [rank_info()],
        "placement": placement(ranks or [rank_info()], os.cpu_count(), gpu_slots()),
        "packages": package_versions(),
        "git": git_commit(),
    }


def placement(ranks: list[dict], cores: int | None, slots: int | None = None) -> dict:
    """Whether the ranks had the machine to themselves: the most ranks on one host against that
    host's cores (os.cpu_count(); a rank list from before cpu_cores was recorded uses `cores`),
    the most ranks driving one GPU (same host, CUDA_VISIBLE_DEVICES and device index), and
    whether other jobs ran beside this one on the box's other GPUs (slots: the GPU slots of a
    shared box, gpu_slots(); side_by_side where more than one). More ranks than cores
    time-share them, ranks sharing a GPU share its memory and SMs, and jobs side by side share
    the host's cores and links: each way the point measures contention, not scaling, and the
    report marks it."""
    hosts = Counter(r.get("hostname") for r in ranks)
    host, on_host = hosts.most_common(1)[0]
    host_cores = next((r.get("cpu_cores") for r in ranks if r.get("hostname") == host), None)
    host_cores = host_cores or cores
    devices = Counter((r.get("hostname"), r.get("cuda_visible_devices"), r.get("gpu_index"))
                      for r in ranks if r.get("gpu_index") is not None)
    per_gpu = max(devices.values(), default=0)
    return {"ranks_per_host": on_host, "cores_per_host": host_cores,
            "ranks_per_gpu": per_gpu,
            "oversubscribed": bool(host_cores) and on_host > host_cores,
            "gpu_shared": per_gpu > 1,
            "side_by_side": slots if slots and slots > 1 else None}


def rank_infos(comm, extra: dict | None = None) -> list[dict]:
    """What each rank of comm saw (host, SLURM ids, GPUs), gathered everywhere: metadata, a few
    hundred bytes per rank, so a pickled allgather."""
    from ..comm.mpi import node_rank
    return comm.allgather({**rank_info(node_rank(comm)), **(extra or {})})


def hostnames(comm) -> list[str]:
    # host names are metadata, a few bytes per rank
    return comm.allgather(socket.gethostname())
