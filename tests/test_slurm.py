"""The `slurm` profile on a real (single-node, throw-away) SLURM cluster: runs
tests/slurm/run_cluster_test.sh, which installs slurm-wlm and munge from Debian packages, starts
the daemons, runs the tiny workflow with `snakemake --profile slurm`, checks it, and stops what
it started. It needs root and apt-get; set BFS_SKIP_SLURM_TEST=1 to leave it out."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT

SCRIPT = ROOT / "tests" / "slurm" / "run_cluster_test.sh"


def why_not() -> str | None:
    if os.environ.get("BFS_SKIP_SLURM_TEST", "0") not in ("", "0"):
        return "BFS_SKIP_SLURM_TEST is set"
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root (installs slurm-wlm and munge, starts slurmctld and slurmd)"
    if shutil.which("apt-get") is None or not Path("/etc/debian_version").is_file():
        return "needs Debian with apt-get"
    if shutil.which("snakemake") is None or shutil.which("mpiexec") is None:
        return "needs snakemake and mpiexec"
    if Path("/etc/slurm/slurm.conf").exists() and not Path("/etc/slurm/slurm.conf").is_symlink():
        return "a real SLURM configuration is installed (/etc/slurm/slurm.conf)"
    return None


@pytest.mark.slow
@pytest.mark.skipif(why_not() is not None, reason=why_not() or "")
def test_workflow_on_a_single_node_slurm_cluster():
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-8000:]
    assert "PASS" in proc.stderr
