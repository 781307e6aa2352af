"""The version line a program prints (``java -version``), for run provenance; never raises.

Example:
    >>> program_version(["python3", "--version"]).startswith("Python 3")
    True
    >>> program_version(["surely-not-a-program-here", "--version"]) is None
    True
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Sequence

__all__: list[str] = []


@functools.cache
def _run(argv: tuple[str, ...]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    lines = [line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines() if line.strip()]
    return lines[0] if done.returncode == 0 and lines else None


def program_version(argv: Sequence[str]) -> str | None:
    """The first line ``argv`` prints (stdout, then stderr, where ``java -version`` writes), cached per
    process; ``None`` when the program is missing, fails or prints nothing."""
    return _run(tuple(argv))
