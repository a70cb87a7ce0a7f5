#!/usr/bin/env bash
# Run a command in the project's virtual environment, making it first if needed:
#
#   bash envs/venv.sh COMMAND [ARGS...]        e.g. bash envs/venv.sh snakemake -c 2
#
# 1. Python: $PYTHON if set, else python3; it must be >= 3.11.
# 2. .venv/ at the repository root (BFS_VENV=DIR puts it elsewhere) is made with
#    `python -m venv` when missing. It works with a distribution's own python3 (PEP 668's
#    externally-managed-environment guard only stops installs outside a venv). Without
#    ensurepip (Debian/Ubuntu without python3-venv) pip comes from PyPI's pip wheel, its sha256
#    checked against the one PyPI gives. A failed or interrupted creation leaves no .venv.
# 3. `pip install -e '.[all]'` runs when pyproject.toml changed since the last install (its
#    sha256 is kept in .venv/.bfs-pyproject.sha256), so later calls start at once.
# 4. COMMAND runs with .venv/bin first on PATH and VIRTUAL_ENV set, so that it and everything
#    it starts (Snakemake rules, tests) find the venv's python3, snakemake and mpiexec. The
#    exit status is COMMAND's.
# Progress and errors go to stderr; errors exit 1 (2 for a usage error).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${BFS_VENV:-$ROOT/.venv}
case $VENV in /*) ;; *) VENV=$PWD/$VENV ;; esac
PY=${PYTHON:-python3}
STAMP=$VENV/.bfs-pyproject.sha256
INCOMPLETE=$VENV/.bfs-incomplete
PYPI_PIP=https://pypi.org/pypi/pip/json

say() { printf 'envs/venv.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

if [ $# -eq 0 ]; then
    say "usage: bash envs/venv.sh COMMAND [ARGS...]   (runs COMMAND in $VENV)"
    exit 2
fi

CREATING=0
SCRATCH=   # the venv build's temporary folder (not WORK: callers pass that name on)
cleanup() {
    local rc=$?
    [ -z "$SCRATCH" ] || rm -rf "$SCRATCH"
    if [ "$CREATING" = 1 ] && [ "$rc" != 0 ]; then
        rm -rf "$VENV"
        say "removed the unfinished $VENV"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The chosen interpreter's version, checked: >= 3.11.
check_python() {
    local version
    command -v "$PY" >/dev/null 2>&1 || die "no Python '$PY' found: install python3 >= 3.11 or set PYTHON=/path/to/python3"
    version=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) \
        || die "'$PY' does not run as Python (set PYTHON to a Python >= 3.11)"
    if ! [[ "$version" =~ ^3\.([0-9]+)\.[0-9]+$ ]] || [ "${BASH_REMATCH[1]}" -lt 11 ]; then
        die "'$PY' is Python $version; bfs needs Python >= 3.11 (set PYTHON=/path/to/python3.11 or newer)"
    fi
    PY_VERSION=$version
}

# pip into the new venv: ensurepip where the interpreter has it, else PyPI's pip wheel.
install_pip() {
    local vpy=$VENV/bin/python log=$SCRATCH/ensurepip.log wheel
    if "$vpy" -m ensurepip --upgrade --default-pip >"$log" 2>&1; then
        return 0
    fi
    say "no ensurepip ($(tail -n 1 "$log")); fetching pip from PyPI"
    wheel=$("$vpy" - "$SCRATCH" "$PYPI_PIP" <<'PY'
import hashlib, json, pathlib, sys, urllib.parse, urllib.request

dest, url = pathlib.Path(sys.argv[1]), sys.argv[2]
try:
    with urllib.request.urlopen(url, timeout=60) as r:
        meta = json.load(r)
    files = [f for f in meta["urls"] if f["packagetype"] == "bdist_wheel"
             and f["filename"].endswith("-py3-none-any.whl") and not f.get("yanked")]
    if not files:
        sys.exit(f"{url} lists no py3-none-any pip wheel")
    f = files[0]
    wheel_url = urllib.parse.urljoin(url, f["url"])
    with urllib.request.urlopen(wheel_url, timeout=300) as r:
        data = r.read()
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"cannot download pip from PyPI ({url}): {e}")
got, want = hashlib.sha256(data).hexdigest(), f["digests"]["sha256"]
if got != want:
    sys.exit(f"{wheel_url}: sha256 {got}, PyPI gives {want}")
path = dest / f["filename"]
path.write_bytes(data)
print(path)
PY
) || die "no pip for $VENV; install your distribution's venv package (Debian/Ubuntu: apt install python3-venv) or set PYTHON to a Python with ensurepip"
    # A pip wheel runs pip from inside itself: pip installs its own wheel.
    "$vpy" "$wheel/pip" install -q --no-index --disable-pip-version-check "$wheel" >&2 \
        || die "installing $(basename "$wheel") into $VENV failed"
}

create_venv() {
    check_python
    say "creating $VENV with $PY (Python $PY_VERSION)"
    CREATING=1
    mkdir -p "$VENV"
    : >"$INCOMPLETE"  # a creation killed before the end is redone by the next call
    SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/bfs-venv.XXXXXX")
    "$PY" -m venv --without-pip "$VENV" >&2 || die "'$PY -m venv --without-pip $VENV' failed"
    install_pip
    "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || die "pip does not run in $VENV"
    rm -f "$INCOMPLETE"
    CREATING=0
}

if [ -e "$INCOMPLETE" ]; then
    say "removing $VENV: an earlier creation was interrupted"
    rm -rf "$VENV"
fi
if [ ! -e "$VENV" ]; then
    create_venv
elif [ ! -x "$VENV/bin/python" ]; then
    die "$VENV exists but is no virtual environment (no bin/python): remove it and rerun"
fi

# The venv's Python: its version, its base interpreter and pyproject.toml's sha256.
INFO=$("$VENV/bin/python" -c 'import hashlib, os, sys
print("%d.%d.%d" % sys.version_info[:3])
print(os.path.realpath(sys._base_executable))
print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$ROOT/pyproject.toml") \
    || die "$VENV/bin/python does not run (was its Python removed?): remove $VENV and rerun"
{ read -r VENV_VERSION; read -r VENV_BASE; read -r HASH; } <<<"$INFO"
[[ "$VENV_VERSION" =~ ^3\.(1[1-9]|[2-9][0-9])\. ]] \
    || die "$VENV has Python $VENV_VERSION; bfs needs >= 3.11: remove $VENV and rerun"
if [ -n "${PYTHON:-}" ]; then
    want=$("$PY" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null || true)
    [ "$want" = "$VENV_BASE" ] \
        || say "note: $VENV was made with $VENV_BASE, PYTHON=$PYTHON is not used (remove $VENV to switch)"
fi

if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$HASH" ]; then
    say "installing -e '.[all]' into $VENV (pyproject.toml is new or changed; minutes the first time)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[all]" >&2 \
        || die "pip install -e '$ROOT[all]' into $VENV failed (see above); the next call tries again"
    printf '%s\n' "$HASH" >"$STAMP"
fi

trap - EXIT INT TERM
export VIRTUAL_ENV=$VENV
export PATH=$VENV/bin:$PATH
unset PYTHONHOME
exec "$@"
