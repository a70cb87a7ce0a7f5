"""workflow/gpu_slots.py, the launcher of a shared GPU box's jobs (share_gpus), as the rules
start it: separate processes taking slots by real fcntl locks. No GPU needed: what a job gets is
its CUDA_VISIBLE_DEVICES."""
import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT

ENV = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
ENV["PYTHONPATH"] = str(ROOT)

# a command that writes the GPUs it was shown to a file, then waits for a second file (so the
# test holds its slots as long as it likes) and exits with the status given
HOLD = ("import os, sys, time, pathlib\n"
        "out, go, status = sys.argv[1:]\n"
        "pathlib.Path(out).write_text(os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'))\n"
        "while go != '-' and not os.path.exists(go): time.sleep(0.02)\n"
        "sys.exit(int(status))\n")


def launcher(slots_dir: Path, take: int, *command, slots=4, timeout=30, env=None):
    return [sys.executable, "-m", "workflow.gpu_slots", "--dir", str(slots_dir),
            "--slots", str(slots), "--take", str(take), "--timeout", str(timeout), "--",
            *command]


def hold(tmp: Path, name: str, go: str = "-", status: int = 0):
    """HOLD's command line: the GPUs it saw go to tmp/name."""
    return [sys.executable, "-c", HOLD, str(tmp / name), go, str(status)]


def start(cmd, env=None):
    return subprocess.Popen(cmd, cwd=ROOT, env={**ENV, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def seen(tmp: Path, name: str, timeout: float = 30) -> str:
    path = tmp / name
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{name}: the command never started"
        time.sleep(0.02)
    return path.read_text()


def free_slots(slots_dir: Path, slots: int = 4) -> list[int]:
    """The slots whose lock this process can take now (and lets go of at once)."""
    free = []
    for k in range(slots):
        with open(slots_dir / f"{k}.lock", "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            free.append(k)
    return free


def test_two_jobs_take_distinct_slots_and_let_them_go_on_exit(tmp_path):
    slots = tmp_path / "results" / ".gpu-slots"
    a = start(launcher(slots, 2, *hold(tmp_path, "a", str(tmp_path / "go-a"))))
    b = start(launcher(slots, 2, *hold(tmp_path, "b", str(tmp_path / "go-b"))))
    got_a, got_b = seen(tmp_path, "a"), seen(tmp_path, "b")
    gpus_a, gpus_b = set(got_a.split(",")), set(got_b.split(","))
    assert len(gpus_a) == len(gpus_b) == 2 and not gpus_a & gpus_b, (got_a, got_b)
    assert gpus_a | gpus_b == {"0", "1", "2", "3"}
    assert free_slots(slots) == []             # both hold theirs while their commands run
    (tmp_path / "go-a").touch()
    assert a.wait(30) == 0, a.stderr.read()
    # a's slots are free again, b's still held
    assert free_slots(slots) == sorted(int(g) for g in gpus_a)
    # a third job gets what a let go of
    c = subprocess.run(launcher(slots, 2, *hold(tmp_path, "c")), cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stderr
    assert set(seen(tmp_path, "c").split(",")) == gpus_a
    (tmp_path / "go-b").touch()
    assert b.wait(30) == 0, b.stderr.read()
    assert free_slots(slots) == [0, 1, 2, 3]


def test_all_slots_held_fails_after_its_timeout_with_one_line(tmp_path):
    slots = tmp_path / ".gpu-slots"
    a = start(launcher(slots, 3, *hold(tmp_path, "a", str(tmp_path / "go"))))
    assert seen(tmp_path, "a") == "0,1,2"
    t = time.monotonic()
    late = subprocess.run(launcher(slots, 2, *hold(tmp_path, "late"), timeout=1), cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=60)
    waited = time.monotonic() - t
    assert late.returncode == 1 and not (tmp_path / "late").exists()   # never started
    lines = late.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu_slots: 2 of the 4 GPU slots were not "
                                                   "free within 1 s"), late.stderr
    assert str(slots) in lines[0]
    assert 1 <= waited < 20
    # one slot is free: a job of one takes it at once, beside the holder
    one = subprocess.run(launcher(slots, 1, *hold(tmp_path, "one"), timeout=1), cwd=ROOT,
                         env=ENV, capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and seen(tmp_path, "one") == "3", one.stderr
    (tmp_path / "go").touch()
    assert a.wait(30) == 0


def test_a_waiting_job_starts_when_the_slots_come_free(tmp_path):
    slots = tmp_path / ".gpu-slots"
    a = start(launcher(slots, 4, *hold(tmp_path, "a", str(tmp_path / "go"))))
    seen(tmp_path, "a")
    b = start(launcher(slots, 4, *hold(tmp_path, "b"), timeout=60))
    time.sleep(0.5)
    assert b.poll() is None and not (tmp_path / "b").exists()   # waiting, not started
    (tmp_path / "go").touch()
    assert a.wait(30) == 0 and b.wait(60) == 0, b.stderr.read()
    assert seen(tmp_path, "b") == "0,1,2,3"


def test_exit_status_and_signal_are_the_commands(tmp_path):
    slots = tmp_path / ".gpu-slots"
    run = subprocess.run(launcher(slots, 1, *hold(tmp_path, "s", status=7)), cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 7, run.stderr
    killed = subprocess.run(launcher(slots, 1, sys.executable, "-c",
                                     "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"),
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60)
    assert killed.returncode == -signal.SIGTERM
    missing = subprocess.run(launcher(slots, 1, str(tmp_path / "no-such-program")), cwd=ROOT,
                             env=ENV, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 127 and "cannot start" in missing.stderr
    assert free_slots(slots) == [0, 1, 2, 3]


def test_a_term_to_the_launcher_reaches_the_command_and_frees_the_slots(tmp_path):
    slots = tmp_path / ".gpu-slots"
    a = start(launcher(slots, 2, *hold(tmp_path, "a", str(tmp_path / "never"))))
    seen(tmp_path, "a")
    a.send_signal(signal.SIGTERM)     # the launcher alone, not its process group
    assert a.wait(30) == -signal.SIGTERM
    assert free_slots(slots) == [0, 1, 2, 3]


def test_slots_stand_for_the_gpus_the_box_shows(tmp_path):
    """Slot k is the k-th GPU of the launcher's own CUDA_VISIBLE_DEVICES (a box shown GPUs 4-7
    hands out 4-7); a box showing fewer GPUs than the slots is refused, as is a job of more
    GPUs than the box."""
    slots = tmp_path / ".gpu-slots"
    shown = subprocess.run(launcher(slots, 3, *hold(tmp_path, "a")), cwd=ROOT,
                           env={**ENV, "CUDA_VISIBLE_DEVICES": "4,5,6,7"}, capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0 and seen(tmp_path, "a") == "4,5,6", shown.stderr
    for env, take, says in [({"CUDA_VISIBLE_DEVICES": "0,1"}, 1, "names fewer GPUs"),
                            ({}, 5, "asks for 5 GPU slots of a box of 4")]:
        refused = subprocess.run(launcher(slots, take, *hold(tmp_path, "b")), cwd=ROOT,
                                 env={**ENV, **env}, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and says in refused.stderr, refused.stderr
        assert not (tmp_path / "b").exists()


def test_the_lock_files_do_not_reach_the_command(tmp_path):
    """The command's processes hold no lock file: a process it leaves behind holds no slot."""
    slots = tmp_path / ".gpu-slots"
    listing = ("import os\n"
               "for fd in os.listdir('/proc/self/fd'):\n"
               "    try: print(os.readlink(f'/proc/self/fd/{fd}'))\n"
               "    except OSError: pass\n")
    run = subprocess.run(launcher(slots, 2, sys.executable, "-c", listing), cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert not [path for path in run.stdout.splitlines() if path.endswith(".lock")], run.stdout


@pytest.mark.parametrize("argv", [["--dir", "d", "--slots", "2", "--take", "1"],
                                  ["--dir", "d", "--slots", "2", "--take", "1", "--"]])
def test_no_command_is_a_usage_error(argv, tmp_path):
    run = subprocess.run([sys.executable, "-m", "workflow.gpu_slots", *argv], cwd=tmp_path,
                         env=ENV, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "no command" in run.stderr


def test_each_process_gets_one_gpus_share_of_the_cores(tmp_path):
    """Jobs side by side must not each start a thread pool as wide as the box: the command sees
    NUMBA_NUM_THREADS and OMP_NUM_THREADS = the launcher's cores // slots (at least 1), and a
    value the caller set is passed through as it is."""
    show = ("import os, sys\n"
            "print(os.environ['NUMBA_NUM_THREADS'], os.environ['OMP_NUM_THREADS'])\n")
    slots = tmp_path / ".gpu-slots"
    cores = len(os.sched_getaffinity(0))
    env = {k: v for k, v in ENV.items() if k not in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")}
    for n_slots in (1, 2, 64):
        got = subprocess.run(launcher(slots / str(n_slots), 1, sys.executable, "-c", show,
                                      slots=n_slots), cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        want = str(max(1, cores // n_slots))
        assert got == [want, want], (n_slots, got)
    got = subprocess.run(launcher(slots / "set", 1, sys.executable, "-c", show, slots=2),
                         cwd=ROOT, env={**env, "NUMBA_NUM_THREADS": "3"}, capture_output=True,
                         text=True, check=True).stdout.split()
    assert got == ["3", str(max(1, cores // 2))]


def test_the_command_is_told_the_box_is_shared(tmp_path):
    """The slot count reaches the command under the name run.json reads it by
    (bfs.harness.envinfo.GPU_SLOTS_ENV), so the report marks side-by-side timings."""
    from bfs.harness import envinfo
    from workflow import gpu_slots
    assert gpu_slots.GPU_SLOTS_ENV == envinfo.GPU_SLOTS_ENV
    show = f"import os; print(os.environ['{envinfo.GPU_SLOTS_ENV}'])"
    got = subprocess.run(launcher(tmp_path / ".gpu-slots", 1, sys.executable, "-c", show,
                                  slots=4), cwd=ROOT, env=ENV, capture_output=True, text=True,
                         check=True).stdout.split()
    assert got == ["4"]
