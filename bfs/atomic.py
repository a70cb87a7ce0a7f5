"""Outputs built under a temporary sibling name and renamed into place only when complete, so a
crash or a bad input never leaves half a directory or file.

The temporaries get the modes any new file or directory gets (0o666 / 0o777 less the umask, and
a directory's default ACL), not tempfile's private 0o600 / 0o700: those modes survive the
rename, and on a cluster's shared file system the rest of a group could not read the results
that a umask of 022 or 002 means to share.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path

from .errors import BfsError


def _fresh(parent: Path, prefix: str, make) -> Path:
    """make(path) on a new name `prefix` + random hex in parent (tempfile's way, its modes
    aside): the names are unpredictable and creation is exclusive, so no two writers share one."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(4)}"
        try:
            make(path)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: no free temporary name {prefix}* after 100 tries")


def temp_dir(parent: Path, prefix: str) -> Path:
    """A new empty directory in parent, with the umask's mode."""
    return _fresh(parent, prefix, lambda p: os.mkdir(p, 0o777))


def temp_file(parent: Path, prefix: str) -> Path:
    """A new empty file in parent, with the umask's mode."""
    return _fresh(parent, prefix,
                  lambda p: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)))


@contextlib.contextmanager
def atomic_dir(out: str | os.PathLike, force: bool = False):
    """Yield a temporary sibling of `out`; rename it to `out` only if the block succeeds."""
    out = Path(out)
    if out.exists() and not force:
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # an empty directory (e.g. made by a workflow engine) is replaced
        else:
            raise BfsError(f"{out}: already exists (remove it or pass --force)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(out.parent, f".{out.name}.tmp-")
    try:
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write(path: str | os.PathLike, write) -> None:
    """Call write(tmp_path) on a temporary sibling of `path`, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_file(path.parent, f".{path.name}.tmp-")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
