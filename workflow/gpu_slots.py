"""A job's GPUs on one shared box (config `share_gpus: true`): take K free GPU slots, run the
job's command on them, let them go when it exits.

    python3 -m workflow.gpu_slots --dir RESULTS/.gpu-slots --slots N --take K [--timeout S] \
        -- COMMAND...

Slot k is GPU k of the box (the k-th entry of CUDA_VISIBLE_DEVICES where the launcher sees
one, else device k); it is held by an exclusive non-blocking fcntl.flock on DIR/k.lock. The
launcher takes K slots, starts COMMAND with CUDA_VISIBLE_DEVICES naming the GPUs it holds (a
job's ranks then each drive their own: a rank picks visible device local_rank % count), waits
for it and exits with its status (or dies of the signal that killed it); the locks go with the
launcher's process (the kernel drops a flock when its holder exits, so a killed launcher leaves
no stale lock). The lock files are opened close-on-exec: the command's processes never hold
them. Snakemake's `--resources gpu=N` (N = the slots) keeps the jobs asking for GPUs within
the box, so K slots are free whenever a job starts; where they are not (another program holding
them) the launcher polls until --timeout and then fails with one line naming DIR.

A command that does not say how many threads its processes run gets one GPU's share of the
cores (NUMBA_NUM_THREADS and OMP_NUM_THREADS = cores // slots, where the caller did not set
them), not a pool as wide as the box each (Numba's default): side by side on four H100s,
without a bound, hybrid's CPU-task searches at scale 18 took 2.4-7 s each (at scale 16 alone on
one GPU: 4-11 ms) and its 16 serial jobs 700 s in all; with it, 129 s in all (BENCHMARKS.md,
"The frontier's fold"). The workflow's run and validate rules set it themselves:
NUMBA_NUM_THREADS is the cores their job holds (workflow/experiment_plan.py's run_threads,
VALIDATE_THREADS), which snakemake keeps within --cores; the share still bounds OMP_NUM_THREADS
and commands run through the launcher by hand.

Standard library only: it runs in whichever environment the job's rule has (envs/gpu.yaml,
envs/cpu.yaml or none).
"""
from __future__ import annotations

import argparse
import fcntl
import os
import random
import signal
import subprocess
import sys
import time

PROG = "gpu_slots"


class SlotsBusy(Exception):
    pass


def visible_devices(slots: int, environ=None) -> list[str]:
    """The device each slot stands for: the entries of CUDA_VISIBLE_DEVICES where it is set
    (the box's GPUs as this job's parent sees them), else 0 .. slots-1."""
    environ = os.environ if environ is None else environ
    if "CUDA_VISIBLE_DEVICES" not in environ:
        return [str(k) for k in range(slots)]
    entries = [e.strip() for e in environ["CUDA_VISIBLE_DEVICES"].split(",")]
    if len(entries) < slots or any(not e or e.startswith("-") for e in entries[:slots]):
        raise SlotsBusy(f"{slots} GPU slots but CUDA_VISIBLE_DEVICES "
                        f"({environ['CUDA_VISIBLE_DEVICES']!r}) names fewer GPUs: set gpus: to "
                        "the GPUs the machine shows")
    return entries[:slots]


def try_take(directory: str, slots: int, count: int) -> list[tuple[int, int]]:
    """(slot, fd) of `count` slots locked now, lowest free first; [] (none kept) when fewer are
    free."""
    held = []
    for k in range(slots):
        fd = os.open(os.path.join(directory, f"{k}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        held.append((k, fd))
        if len(held) == count:
            return held
    release(held)
    return []


def release(held: list[tuple[int, int]]) -> None:
    for _, fd in held:
        os.close(fd)


def take(directory: str, slots: int, count: int, timeout: float,
         poll: float = 0.2) -> list[tuple[int, int]]:
    """`count` slots of `slots`, waiting up to `timeout` seconds for them to be free."""
    if not 1 <= count <= slots:
        raise SlotsBusy(f"a job asks for {count} GPU slots of a box of {slots}")
    os.makedirs(directory, exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        held = try_take(directory, slots, count)
        if held:
            return held
        if time.monotonic() >= deadline:
            raise SlotsBusy(
                f"{count} of the {slots} GPU slots were not free within {timeout:g} s: their "
                f"locks in {directory} are held (by another program? snakemake's --resources "
                f"gpu= should be {slots}, and every GPU job start through this launcher)")
        # a little jitter: launchers that collided on a slot do not retry in step
        time.sleep(poll * (0.5 + random.random()))


THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")
GPU_SLOTS_ENV = "BFS_GPU_SLOTS"   # bfs.harness.envinfo's: this launcher imports no package


def job_environment(held: list[tuple[int, int]], devices: list[str], slots: int) -> dict:
    """The command's environment: the held GPUs visible, each process's threads one GPU's
    share of the cores this launcher may use (a variable the caller set is kept), and the slot
    count, which run.json records (bfs.harness.envinfo.GPU_SLOTS_ENV): the report marks the
    timings of jobs that ran side by side."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(devices[k] for k, _ in held),
           GPU_SLOTS_ENV: str(slots)}
    share = str(max(1, len(os.sched_getaffinity(0)) // slots))
    for name in THREAD_VARIABLES:
        env.setdefault(name, share)
    return env


def run(command: list[str], held: list[tuple[int, int]], devices: list[str],
        slots: int) -> int:
    """COMMAND on the held slots' GPUs (job_environment); its exit status (a negative one:
    killed by a signal). SIGTERM, SIGINT and SIGHUP reaching the launcher are passed on to it."""
    env = job_environment(held, devices, slots)
    started = []

    def forward(signum, _frame):
        if not started:     # before the command starts: stop here, it never runs
            raise SystemExit(128 + signum)
        if started[0].poll() is None:
            started[0].send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    started.append(subprocess.Popen(command, env=env))
    return started[0].wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=f"python3 -m workflow.{PROG}",
                                description="run a command on K free GPU slots of one box")
    p.add_argument("--dir", required=True, help="the slots' lock files (DIR/k.lock)")
    p.add_argument("--slots", type=int, required=True, help="the box's GPU count")
    p.add_argument("--take", type=int, required=True, help="GPUs the command uses")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds to wait for free slots before failing (default 600)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command given (after --)")
    try:
        devices = visible_devices(args.slots)
        held = take(args.dir, args.slots, args.take, args.timeout)
    except SlotsBusy as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    try:
        status = run(command, held, devices, args.slots)
    except OSError as e:
        print(f"{PROG}: cannot start {command[0]}: {e.strerror}", file=sys.stderr)
        return 127
    finally:
        release(held)
    if status < 0:   # killed by a signal: end the same way, so the caller sees that signal
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status


if __name__ == "__main__":
    sys.exit(main())
