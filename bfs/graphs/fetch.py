"""`bfs fetch`: download a dataset and check it against a known sha256 before anything uses it.

The workflow's download rule calls this for SNAP files given by URL; a file whose digest differs
from the one in the config is never converted. http(s):// and file:// URLs; the file appears at
--out only once complete and verified.
"""
from __future__ import annotations

import hashlib
import os
import urllib.request
from pathlib import Path

from ..atomic import temp_file
from ..errors import BfsError


def fetch(url: str, out: Path, sha256: str, progress=None, timeout: float = 60) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    tmp = temp_file(out.parent, f".{out.name}.")
    try:
        with open(tmp, "wb") as f:
            try:
                response = urllib.request.urlopen(url, timeout=timeout)
            except (OSError, ValueError) as e:
                raise BfsError(f"{url}: download failed: {e}") from None
            with response:
                total = int(response.headers.get("Content-Length") or 0)
                done = 0
                while chunk := response.read(1 << 20):
                    f.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total or done)
        if digest.hexdigest() != sha256.lower():
            raise BfsError(f"{url}: sha256 is {digest.hexdigest()}, the config expects {sha256}; "
                           "not using it")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
