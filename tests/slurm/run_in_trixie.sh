#!/usr/bin/env bash
# The cluster test (tests/slurm/run_cluster_test.sh) on Slurm 24.11: Debian 12 ships Slurm 22.05,
# and mixing Debian 13's packages into the host is unsafe (glibc 2.41 vs 2.36), so a Debian 13
# (trixie) tree made with debootstrap holds slurm-wlm 24.11, munge and Python, and the daemons,
# the venv and the workflow all run inside it (chroot). The same script as the 22.05 test runs
# there: what differs is only where it runs.
#
#   sudo tests/slurm/run_in_trixie.sh [ARGS...]     (root, Debian; ARGS go to run_cluster_test.sh)
#
# 1. installs debootstrap on the host (if missing) and builds the tree, unless a complete one is
#    cached at $BFS_TRIXIE_TREE (default /var/cache/bfs-slurm-test/trixie; about 1-2 minutes);
# 2. bind-mounts /proc, /sys, /dev (its fake GPUs are /dev/null, /dev/zero, ...) and the
#    repository (at /repo), and copies the host's CA bundle in (pip reaches PyPI through it);
# 3. runs `bash envs/venv.sh bash tests/slurm/run_cluster_test.sh ARGS` in the tree, with the
#    venv kept in the tree (/opt/bfs-venv: Python 3.13, reused by the next run);
# 4. unmounts what it mounted (trap on exit); all of it is in a mount namespace of the run's
#    own besides, so nothing outlives the run.
#
# Environment: BFS_TRIXIE_TREE=DIR (the cached tree), BFS_TRIXIE_MIRROR=URL (Debian mirror),
# BFS_SLURM_TEST_* as for run_cluster_test.sh (passed through).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
TREE=${BFS_TRIXIE_TREE:-/var/cache/bfs-slurm-test/trixie}
MIRROR=${BFS_TRIXIE_MIRROR:-http://deb.debian.org/debian}
# what the tree needs: the daemons and clients, Python with venv, git (run.json's commit)
PACKAGES="slurm-wlm munge python3 python3-venv git ca-certificates"
LOG_PREFIX=trixie
# shellcheck source=tests/slurm/lib.sh
. "$REPO/tests/slurm/lib.sh"

require_root_debian "debootstrap, mount, chroot"
# every mount below is private to this run and goes with it (run_cluster_test.sh does the same
# inside the tree)
own_mount_namespace BFS_TRIXIE_NAMESPACE "$@"

# --- 1. the tree ------------------------------------------------------------------------------
# A tree counts as built only once its stamp (the package list) is written, so an interrupted
# build is redone, not reused. flock: two runs at once build it once.
STAMP=$TREE/.bfs-tree
build_tree() {
    if ! command -v debootstrap >/dev/null; then
        say "installing debootstrap"
        host_apt_install debootstrap
    fi
    local new=$TREE.new.$$
    rm -rf "$new"
    say "debootstrap --variant=minbase trixie ($MIRROR)"
    debootstrap --variant=minbase trixie "$new" "$MIRROR" >"$new.log" 2>&1 \
        || { tail -n 20 "$new.log" >&2; rm -rf "$new"; die "debootstrap failed"; }
    say "apt-get install $PACKAGES (in the tree)"
    # apt needs /proc only while installing; unmounted before the tree is renamed into place
    mount -t proc proc "$new/proc"
    if ! chroot "$new" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
            sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $PACKAGES" \
            >>"$new.log" 2>&1; then
        umount "$new/proc"
        tail -n 20 "$new.log" >&2
        rm -rf "$new"
        die "apt-get install in the tree failed"
    fi
    umount "$new/proc"
    chroot "$new" apt-get clean
    echo "$PACKAGES" >"$new/.bfs-tree"
    rm -rf "$TREE" && mv "$new" "$TREE" && mv "$new.log" "$TREE.log"
}
mkdir -p "$(dirname "$TREE")"
exec 9>"$TREE.lock"
flock 9
# Mounts a killed run left in the tree are taken down first: a tree rebuilt (rm -rf) through a
# bind mount of /dev or of the repository would empty those.
mounts_under() { awk -v t="$1" '$2 == t || index($2, t "/") == 1 {print $2}' /proc/mounts | sort -r; }
for m in $(mounts_under "$TREE"); do umount -R "$m" 2>/dev/null || umount -l "$m" || true; done
[ -z "$(mounts_under "$TREE")" ] || die "mounts remain under $TREE: $(mounts_under "$TREE" | tr '\n' ' ')"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$PACKAGES" ]; then
    build_tree
else
    say "using the tree at $TREE"
fi
say "$(chroot "$TREE" /usr/sbin/slurmctld -V) in $TREE"

# --- 2. mounts --------------------------------------------------------------------------------
MOUNTED=()
cleanup() {
    local rc=$? i
    # innermost first; lazy as a last resort so a busy mount never keeps the test hanging
    for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do
        umount -R "${MOUNTED[$i]}" 2>/dev/null || umount -R -l "${MOUNTED[$i]}" || true
    done
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bind() {  # bind SRC DEST [--rbind]
    mkdir -p "$2"
    mount "${3:---bind}" "$1" "$2"
    # a recursive bind must not pass our unmounts back to the host's submounts
    [ "${3:-}" != --rbind ] || mount --make-rslave "$2"
    MOUNTED+=("$2")
}
# the tree's root a mount point of its own: in the chroot, run_cluster_test.sh's unshare makes
# "/" private, which only a mount point can be
bind "$TREE" "$TREE"
mount -t proc proc "$TREE/proc" && MOUNTED+=("$TREE/proc")
# /sys without its cgroup mount: the configuration disables Slurm's cgroup plugin instead
bind /sys "$TREE/sys"
# /dev recursively: /dev/shm (MPICH's shared memory) and /dev/pts are mounts of their own
bind /dev "$TREE/dev" --rbind
bind "$REPO" "$TREE/repo"
# pip in the tree trusts what the host trusts (a site's proxy CA included), else the tree's own
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$TREE/etc/bfs-host-ca.crt"
else
    cp "$TREE/etc/ssl/certs/ca-certificates.crt" "$TREE/etc/bfs-host-ca.crt"
fi
cp /etc/resolv.conf "$TREE/etc/resolv.conf" 2>/dev/null || true

# --- 3. the cluster test inside ---------------------------------------------------------------
passthrough=()
for var in $(compgen -e); do
    case $var in
        BFS_SLURM_TEST_*|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|PIP_INDEX_URL|PIP_EXTRA_INDEX_URL)
            passthrough+=("$var=${!var}") ;;
    esac
done
# The job step plugin the venv gets: by default 0.6.0, the oldest snakemake-executor-plugin-slurm
# accepts and the one that passes the batch step's SLURM_* variables on to the job's inner srun
# (0.6.1 strips them), with which GPU jobs carrying --cpus-per-task died on Slurm >= 23.x.
JOBSTEP=${BFS_SLURM_TEST_JOBSTEP:-0.6.0}
say "running tests/slurm/run_cluster_test.sh in the tree (jobstep plugin $JOBSTEP)"
chroot "$TREE" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TMPDIR=/tmp BFS_VENV=/opt/bfs-venv JOBSTEP="$JOBSTEP" \
    PIP_CERT=/etc/bfs-host-ca.crt SSL_CERT_FILE=/etc/bfs-host-ca.crt \
    REQUESTS_CA_BUNDLE=/etc/bfs-host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "${passthrough[@]}" \
    bash -c 'cd /repo \
        && bash envs/venv.sh python3 -m pip install -q "snakemake-executor-plugin-slurm-jobstep==$JOBSTEP" \
        && bash envs/venv.sh bash tests/slurm/run_cluster_test.sh "$@"' run "$@"
