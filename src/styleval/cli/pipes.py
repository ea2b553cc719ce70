"""What every verb does when the reader of its standard output goes away."""
from __future__ import annotations

import os
import sys


def quiet_broken_pipe() -> int:
    """The reader of standard output went away (``styleval ... | head``): stop quietly. Standard output is pointed
    at the null device so that Python's final flush does not complain either; the exit status is 0, as for a
    command that had written everything."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real descriptor behind sys.stdout (a test's capture)
        pass
    return 0
