# Shared by tests/slurm/run_cluster_test.sh and run_in_trixie.sh (sourced, after setting
# LOG_PREFIX): progress lines, the checks both need, and the mount namespace each runs in.

START=$(date +%s)
say() { printf '[%s %4ss] %s\n' "$LOG_PREFIX" "$(( $(date +%s) - START ))" "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }

# require_root_debian WHY: both install Debian packages and start or mount things as root
require_root_debian() {
    [ "$(id -u)" = 0 ] || die "must run as root ($1)"
    command -v apt-get >/dev/null || die "needs Debian's apt-get"
}

# host_apt_install PACKAGES...: apt-get update and install on this host, one at a time with
# any other install the tests start (the report test's chromium; pytest -n runs tests side by
# side): dpkg's lock refuses a second apt-get at once rather than wait for it.
APT_LOCK=/var/lock/bfs-tests-apt.lock
host_apt_install() {
    flock "$APT_LOCK" sh -c 'apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null' sh "$@"
}

# own_mount_namespace MARKER ARGS...: runs the calling script again, with ARGS, in a mount
# namespace of its own (once: MARKER holds the pid, which exec keeps), so that every mount it
# makes is private to the run and goes with its last process, however the run ends.
own_mount_namespace() {
    local marker=$1; shift
    [ "${!marker:-}" != "$$" ] || return 0
    command -v unshare >/dev/null || die "needs unshare (util-linux)"
    export "$marker=$$"
    exec unshare --mount --propagation private bash "$0" "$@"
}
