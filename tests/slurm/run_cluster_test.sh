#!/usr/bin/env bash
# End-to-end test of the `slurm` profile on a throw-away single-node SLURM cluster on this host.
#
#   sudo tests/slurm/run_cluster_test.sh          (root, Debian; a few minutes)
#
# 1. installs slurm-wlm and munge from Debian packages (skipped when present);
# 2. in a mount namespace of its own, writes a single-node slurm.conf + gres.conf into a
#    temporary directory (no accounting database, cons_tres, 8 declared CPUs, 4 fake GPUs
#    backed by distinct character devices, MinJobAge=600, free ports) and mounts it over
#    /etc/slurm, with a private /run/munge, then starts munged, slurmctld and slurmd;
# 3. runs a tiny config with `snakemake --profile slurm` from the repository root and checks that
#    every job went through sbatch, that multi-rank runs had that many ranks and one GPU each,
#    and that the searches equal a local run's; then reruns the multi-rank runs of one graph
#    with their jobs shaped as nodes (cluster.gpus_per_node) and checks them again;
# 4. runs a deliberately slow job under a 1-minute limit on its first attempt: SLURM kills it
#    (TIMEOUT) and snakemake's retry, with more time, completes it, nothing left over;
# 5. stops the daemons it started, by pid (trap on exit), and removes its temporary state; the
#    mounts go with the namespace.
#
# Environment: BFS_SLURM_TEST_KEEP=1 keeps the temporary directory; BFS_SLURM_TEST_SKIP_SLOW=1
# leaves out step 4. tests/slurm/run_in_trixie.sh runs this script on Slurm 24.11.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
LOG_PREFIX=slurm-test
# shellcheck source=tests/slurm/lib.sh
. "$REPO/tests/slurm/lib.sh"

require_root_debian "it installs packages and starts slurmctld/slurmd"
# The jobs' inner srun must find this cluster's configuration without SLURM_CONF (the job step
# plugin >= 0.6.1 removes SLURM_* variables), i.e. at /etc/slurm/slurm.conf, and munge clients
# talk to the munged of /run/munge. Both are mounted from the temporary directory in a mount
# namespace of this script's own, which every process it starts (daemons, jobs, snakemake)
# inherits: two runs on one host (two checkouts, or this beside a real cluster's clients) never
# see each other's, and nothing is left behind when the namespace's last process ends.
own_mount_namespace BFS_SLURM_TEST_NAMESPACE "$@"

# --- 1. packages -----------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
   || ! command -v sbatch >/dev/null; then
    say "installing slurm-wlm and munge"
    host_apt_install slurm-wlm munge
fi
python3 -c "import snakemake_executor_plugin_slurm" 2>/dev/null \
    || die "snakemake-executor-plugin-slurm is missing: run the tests through bash envs/venv.sh (it installs '.[all]')"
say "$(python3 -c 'from importlib.metadata import version as v
print(", ".join(f"{p} {v(p)}" for p in ("snakemake", "snakemake-executor-plugin-slurm",
                                         "snakemake-executor-plugin-slurm-jobstep")))')"

# --- 2. a single-node cluster in a temporary directory ---------------------------------------
TMP=$(mktemp -d /tmp/bfs-slurm-test.XXXXXX)
chmod 755 "$TMP"
PIDS=()
cleanup() {
    local rc=$?
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "${BFS_SLURM_TEST_KEEP:-0}" = 1 ]; then
        say "kept $TMP"
    else
        rm -rf "$TMP"
    fi
    if [ $rc = 0 ]; then say "PASS"; else say "exit status $rc"; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

HOST=$(hostname -s)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
[ "$CTLD_PORT" != "$SLURMD_PORT" ] || SLURMD_PORT=$(free_port)
MEM_MB=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
mkdir -p "$TMP/etc" "$TMP/ctld" "$TMP/spool" "$TMP/log"
export SLURM_CONF="$TMP/etc/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=bfstest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$TMP/ctld
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=5
OverTimeLimit=0
InactiveLimit=0
SchedulerParameters=sched_interval=2
GresTypes=gpu
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=$MEM_MB Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
# schedulable fake GPUs: gres files must be distinct character devices for SLURM to set
# CUDA_VISIBLE_DEVICES
cat >"$TMP/etc/gres.conf" <<EOF
AutoDetect=off
NodeName=$HOST Name=gpu File=/dev/null,/dev/zero,/dev/full,/dev/urandom
EOF
# Slurm >= 23.02 starts its cgroup plugin even with proctrack/linuxproc and task/none, and in
# a chroot (tests/slurm/run_in_trixie.sh) there is no cgroup file system: disable it there.
SLURM_VERSION=$(slurmd -V | awk '{print $2}')
if [ "${SLURM_VERSION%%.*}" -ge 23 ]; then
    echo "CgroupPlugin=disabled" >"$TMP/etc/cgroup.conf"
fi

# this namespace's /etc/slurm and /run/munge (see the top): private, over the host's
mkdir -p /etc/slurm /run/munge "$TMP/munge"
mount --bind "$TMP/etc" /etc/slurm
export SLURM_CONF=/etc/slurm/slurm.conf
mount --bind "$TMP/munge" /run/munge
[ -s /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || /usr/sbin/create-munge-key -f; }
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
mkdir -p /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
runuser -u munge -- /usr/sbin/munged --foreground >"$TMP/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.2; done
munge -n </dev/null | unmunge >/dev/null || die "munged did not start"
/usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$TMP/log/slurmctld.out" 2>&1 &
PIDS+=($!)
sleep 1
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$TMP/log/slurmd.out" 2>&1 &
PIDS+=($!)
say "Slurm $SLURM_VERSION: slurmctld port $CTLD_PORT, slurmd port $SLURMD_PORT, state in $TMP"
state=
for _ in $(seq 60); do
    state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 1
done
if [ "$state" != idle ]; then
    tail -n 20 "$TMP"/log/*.log "$TMP"/log/*.out >&2 || true
    die "node $HOST is '$state', not idle"
fi
say "node $HOST idle: $(sinfo -h -N -o '%N %c CPUs %m MB %G')"

# smoke test: a 4-task job with one GPU per task gets four distinct CUDA_VISIBLE_DEVICES
out=$(srun -t 1 -n 4 --gpus=4 --ntasks-per-gpu=1 --mem 100 bash -c 'echo "$SLURM_LOCALID:$CUDA_VISIBLE_DEVICES"' | sort)
say "srun -n 4 --gpus=4 --ntasks-per-gpu=1: $(echo $out)"
[ "$(echo "$out" | cut -d: -f2 | sort -u | wc -l)" = 4 ] || die "tasks did not get distinct GPUs: $out"

if [ "${1:-}" = setup-only ]; then exit 0; fi

# --- 3. the tiny workflow through `snakemake --profile slurm` --------------------------------
WORK="$TMP/slurm-run"
LOCAL="$TMP/local-run"
mkdir -p "$WORK" "$LOCAL"
python3 "$REPO/tests/slurm/check_cluster_run.py" write-config "$WORK/config.yaml" "$REPO"
cp "$WORK/config.yaml" "$LOCAL/config.yaml"
RUN_TARGETS=$(python3 "$REPO/tests/slurm/check_cluster_run.py" run-targets "$WORK/config.yaml")
# the cluster run: every run and its validation job (tables and figures are local work)
VALIDATION_TARGETS=$(python3 "$REPO/tests/slurm/check_cluster_run.py" validation-targets "$WORK/config.yaml")

# the reference: the same runs on this machine without SLURM, alongside the cluster run
# shellcheck disable=SC2086
(cd "$REPO" && env -u SLURM_CONF snakemake -c 1 -d "$LOCAL" --configfile "$LOCAL/config.yaml" \
    -- $RUN_TARGETS >"$TMP/log/local.log" 2>&1) &
LOCAL_PID=$!

cd "$REPO"   # `--profile slurm` as typed: the profile is ./slurm/ in the repository root
# slurm_run LOG ARGS...: `snakemake --profile slurm` as a user runs it, status checks after 5 s
# (profile: 40 s; MinJobAge=600 covers both); on failure the ends of its logs, then die
slurm_run() {
    local log=$1; shift
    if ! snakemake --profile slurm --slurm-init-seconds-before-status-checks 5 "$@" \
            >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        find "$PWD/.snakemake/slurm_logs" "$TMP"/*/.snakemake/slurm_logs -name '*.log' \
            -exec tail -n 20 {} + >&2 2>/dev/null || true
        die "snakemake --profile slurm $* failed"
    fi
}
# the serial searches with several threads: each asks for its cores beside its GPU
# (--gpus=1 --cpus-per-task=N, no --ntasks-per-gpu), as a hybrid run does
SERIAL_THREADS=$(python3 "$REPO/tests/slurm/check_cluster_run.py" serial-threads)
say "snakemake --profile slurm (tiny config, BFS jobs of 1, 2 and 4 tasks with one GPU each, serial ones with $SERIAL_THREADS CPUs)"
# shellcheck disable=SC2086
slurm_run "$TMP/log/snakemake-slurm.log" -d "$WORK" --configfile "$WORK/config.yaml" \
    --set-threads "bfs_serial=$SERIAL_THREADS" -- $VALIDATION_TARGETS
say "workflow finished on SLURM"
scontrol show job -o >"$TMP/log/jobs.txt" 2>/dev/null || true
wait "$LOCAL_PID" || { tail -n 40 "$TMP/log/local.log" >&2; die "the local reference run failed"; }
python3 "$REPO/tests/slurm/check_cluster_run.py" check "$WORK" "$LOCAL" "$TMP/log/jobs.txt" \
    "$TMP/log/snakemake-slurm.log" || die "checks of the SLURM run failed"
say "SLURM run checked: sbatch jobs, ranks, GPUs, searches equal the local run"

# --- 3b. the multi-rank runs again, shaped as nodes (cluster.gpus_per_node) -------------------
# `--nodes=1 --ntasks-per-node=P --gres=gpu:P`, each rank choosing its GPU by SLURM_LOCALID:
# the shape a job of many nodes has, on the one node there is
python3 "$REPO/tests/slurm/check_cluster_run.py" write-config "$WORK/nodes.yaml" "$REPO" 4
NODE_TARGETS=$(python3 "$REPO/tests/slurm/check_cluster_run.py" run-targets "$WORK/nodes.yaml" multi-rank)
say "again with cluster.gpus_per_node: 4: $(echo $NODE_TARGETS | wc -w) multi-rank runs (2 and 4 ranks)"
# shellcheck disable=SC2086
slurm_run "$TMP/log/snakemake-nodes.log" -d "$WORK" --configfile "$WORK/nodes.yaml" \
    --force -- $NODE_TARGETS
scontrol show job -o >"$TMP/log/jobs-nodes.txt" 2>/dev/null || true
python3 "$REPO/tests/slurm/check_cluster_run.py" check "$WORK" "$LOCAL" "$TMP/log/jobs-nodes.txt" \
    "$TMP/log/snakemake-nodes.log" "$WORK/nodes.yaml" || die "checks of the node-shaped runs failed"
say "node-shaped runs checked"

# --- 4. a job killed at its time limit comes back with more time (--retries) ----------------
if [ "${BFS_SLURM_TEST_SKIP_SLOW:-0}" != 1 ]; then
    SLOW="$TMP/slow-run"
    mkdir -p "$SLOW"
    python3 "$REPO/tests/slurm/check_cluster_run.py" write-slow-config "$SLOW/config.yaml"
    SLOW_TARGET=results/runs/kron-s18/seq-list/cpu-serial-default
    # the rules double their runtime with each attempt; here the first attempt gets 1 minute,
    # too little, and the retry the profile allows gets 30
    say "slow job (seq-list, scale 18, 48 roots): 1 minute on the first attempt, 30 on the retry"
    slurm_run "$TMP/log/slow.log" -d "$SLOW" --configfile "$SLOW/config.yaml" \
        --set-resources "bfs_serial:runtime=1 if attempt == 1 else 30" -- "$SLOW_TARGET"
    scontrol show job -o >"$TMP/log/jobs-slow.txt" 2>/dev/null || true
    python3 "$REPO/tests/slurm/check_cluster_run.py" check-retry "$SLOW/$SLOW_TARGET" \
        "$TMP/log/jobs-slow.txt" "$TMP/log/slow.log" || die "the retry after TIMEOUT went wrong"
    leftovers=$(find "$SLOW/results" -name '.*tmp-*' 2>/dev/null | head -n 5 || true)
    [ -z "$leftovers" ] || die "the killed job left temporary directories: $leftovers"
    say "killed at its 1-minute limit (TIMEOUT), retried by snakemake with 30, valid run, nothing left over"
fi
