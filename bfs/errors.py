"""The one exception every layer raises for bad input or an impossible request.

The command line turns it into a one-line message and exit status 1 (no traceback); anything
else that escapes is a bug. Under it, a safety net (`input_errors`) catches what bad input can
still raise past the readers' own checks, also as one line; BFS_DEBUG=1 shows the traceback."""
from __future__ import annotations

import os


class BfsError(Exception):
    """A user-facing error: the message names the file, line or value that was wrong."""


class RankError(BfsError):
    """A failure every rank of a distributed run agreed on (bfs.comm.mpi.agree): every rank
    raises it, so every rank exits 1, but only the one with `reports` set prints it, so that a
    failure is one line on the job's stderr rather than one per rank."""

    def __init__(self, message: str, reports: bool):
        super().__init__(message)
        self.reports = reports


def debugging() -> bool:
    """BFS_DEBUG=1 (any value but empty or 0): errors end in their traceback, not one line."""
    return os.environ.get("BFS_DEBUG", "") not in ("", "0")


def input_errors() -> tuple[type[BaseException], ...]:
    """What bad input (a damaged or foreign file) can still raise past the readers' checks:
    OS errors, ValueError (JSON, Unicode, numpy and pyarrow parsing), EOFError, zlib errors and
    every pyarrow error."""
    import zlib
    errors = [OSError, ValueError, EOFError, zlib.error]
    try:
        import pyarrow
        errors.append(pyarrow.ArrowException)
    except ImportError:
        pass
    return tuple(errors)


def one_line(e: BaseException) -> str:
    """An error's message on one line; for the safety net's catch, what kind it was."""
    if isinstance(e, BfsError):
        return " ".join(str(e).splitlines())
    if isinstance(e, OSError) and e.filename is not None:
        return f"{e.filename}: {e.strerror or e}"
    text = " ".join(str(e).split()) or "no detail"
    return f"{text} ({type(e).__name__}; BFS_DEBUG=1 shows where)"
