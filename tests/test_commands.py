"""The README's two commands, `.ci/run`, and `envs/venv.sh` that both run through. The script's
runs here use throw-away venvs (BFS_VENV) and fake interpreters: nothing is downloaded."""
import hashlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

SCRIPT = ROOT / "envs" / "venv.sh"
STAMP = ".bfs-pyproject.sha256"


def readme_command(marker: str) -> str:
    """The indented command line that follows `marker` in the README's "The two commands"."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## The two commands\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"^    (\S.*)$", section.split(marker, 1)[1], re.M)
    assert found, f"no command after {marker} in the README"
    return found.group(1)


def ci_command() -> str:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_exactly_the_readme_test_command():
    assert shlex.split(ci_command()) == shlex.split(readme_command("**Tests**"))
    assert 'cd "$(dirname "$0")/.."' in (ROOT / ".ci" / "run").read_text()  # from the root


def test_readme_commands_run_every_step_through_the_venv_script():
    for marker in ("**Main job**", "**Tests**"):
        steps = [shlex.split(step) for step in readme_command(marker).split("&&")]
        assert all(step[:2] == ["bash", "envs/venv.sh"] for step in steps), steps
    assert shlex.split(readme_command("**Tests**"))[2:] == ["python3", "-m", "pytest", "-q",
                                                            "-n", "auto", "--dist", "loadgroup"]
    assert "/.venv/" in (ROOT / ".gitignore").read_text().splitlines()


def run_script(*args, env=None, cwd=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "BFS_VENV")}
    full_env.update(env or {})
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd or ROOT, timeout=120)


def fake_python(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture
def ready_venv(tmp_path):
    """A venv (made without pip, in a second) whose stamp says this pyproject.toml is installed."""
    path = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    (path / STAMP).write_text(digest + "\n")
    return path


def test_python_older_than_3_11_is_refused(tmp_path):
    python = fake_python(tmp_path / "python3.10", "echo 3.10.12\n")
    proc = run_script("true", env={"PYTHON": python, "BFS_VENV": tmp_path / "venv"})
    assert proc.returncode == 1
    assert "Python 3.10.12" in proc.stderr and ">= 3.11" in proc.stderr and "PYTHON=" in proc.stderr
    assert not (tmp_path / "venv").exists()


def test_missing_python_is_named(tmp_path):
    proc = run_script("true", env={"PYTHON": tmp_path / "no-python", "BFS_VENV": tmp_path / "venv"})
    assert proc.returncode == 1 and "no Python" in proc.stderr and "no-python" in proc.stderr
    assert not (tmp_path / "venv").exists()


def test_failed_creation_leaves_no_venv(tmp_path):
    # passes the version check, then `-m venv DIR` leaves a half-made DIR and fails
    python = fake_python(tmp_path / "python3", 'if [ "$1" = -m ]; then\n'
                         '  for dir; do :; done; mkdir -p "$dir/bin"; echo "disk full" >&2; exit 1\n'
                         'fi\necho 3.12.1\n')
    marker = tmp_path / "ran"
    proc = run_script("touch", marker, env={"PYTHON": python, "BFS_VENV": tmp_path / "venv"})
    assert proc.returncode == 1
    assert "creating" in proc.stderr and "disk full" in proc.stderr and "-m venv" in proc.stderr
    assert not (tmp_path / "venv").exists() and not marker.exists()


def test_interrupted_creation_is_removed_and_redone(ready_venv, tmp_path):
    (ready_venv / ".bfs-incomplete").touch()  # what a creation killed half-way leaves
    python = fake_python(tmp_path / "python3.10", "echo 3.10.0\n")
    proc = run_script("true", env={"PYTHON": python, "BFS_VENV": ready_venv})
    assert "interrupted" in proc.stderr and "Python 3.10.0" in proc.stderr
    assert proc.returncode == 1 and not ready_venv.exists()


@pytest.mark.parametrize("status", [0, 7])
def test_command_runs_in_the_venv_and_its_exit_status_passes_through(ready_venv, tmp_path, status):
    script = ('pwd; echo "$VIRTUAL_ENV"; command -v python3; python3 -c "import sys; print(sys.prefix)"; '
              f"exit {status}")
    proc = run_script("bash", "-c", script, env={"BFS_VENV": ready_venv}, cwd=tmp_path)
    assert proc.returncode == status, proc.stderr
    cwd, virtual_env, python3, prefix = proc.stdout.splitlines()
    assert cwd == str(tmp_path)  # the command runs where the script was called
    assert virtual_env == str(ready_venv) and python3 == str(ready_venv / "bin" / "python3")
    assert os.path.realpath(prefix) == os.path.realpath(ready_venv)
    assert proc.stderr == ""  # installed and up to date: nothing to do, nothing said


def test_changed_pyproject_installs_again_before_the_command(ready_venv, tmp_path):
    (ready_venv / STAMP).write_text("0" * 64 + "\n")  # installed from another pyproject.toml
    marker = tmp_path / "ran"
    proc = run_script("touch", marker, env={"BFS_VENV": ready_venv})
    # the install runs; this venv has no pip, so it fails, and the command does not run
    assert "installing -e '.[all]'" in proc.stderr and "No module named pip" in proc.stderr
    assert proc.returncode == 1 and "failed" in proc.stderr and not marker.exists()
    assert (ready_venv / STAMP).read_text() == "0" * 64 + "\n" and ready_venv.is_dir()


def test_no_command_is_a_usage_error(tmp_path):
    proc = run_script(env={"BFS_VENV": tmp_path / "venv"})
    assert proc.returncode == 2 and "usage: bash envs/venv.sh COMMAND" in proc.stderr
    assert not (tmp_path / "venv").exists()
