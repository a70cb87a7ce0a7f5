"""The one exception every layer raises for bad input or an impossible request.

The command line turns it into a one-line message and exit status 1 (no traceback); anything
else that escapes is a bug."""


class BfsError(Exception):
    """A user-facing error: the message names the file, line or value that was wrong."""
