"""Shared by the cache-integrity tests (``tests/test_cache_integrity*.py``): damaging a file, a fresh process's view."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentgym_budget.storage import cache

__all__ = ["CORRUPTIONS", "corrupt", "new_process"]

CORRUPTIONS = ("truncated", "junk", "bit flip")


def corrupt(path: Path, kind: str) -> None:
    """Damage ``path``: cut it in half, replace it with random bytes, or flip one bit in its middle."""
    data = bytearray(path.read_bytes())
    if kind == "truncated":
        data = data[: len(data) // 2]
    elif kind == "junk":
        data = bytearray(random.Random(0).randbytes(len(data)))
    elif kind == "bit flip":
        data[len(data) // 2] ^= 0x10
    else:
        raise ValueError(kind)
    path.write_bytes(bytes(data))


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process verified, as a new process would."""
    monkeypatch.setattr(cache, "_VERIFIED", {})
