"""Fuzzed snapshots of every family (valid digest, one field changed) restore or raise a typed error.

Bounded budget here; the longer run is ``python -m tests.snapshot_fuzz FAMILY 1000`` (README, trust section).
Each family runs in a child process, so a crash of an engine fails the test instead of pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld", "webshop"])
def test_fuzzed_snapshots_restore_or_raise_typed_errors(family):
    result = subprocess.run(
        [sys.executable, "-m", "tests.snapshot_fuzz", family, "30"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 0, f"child exited with {result.returncode}: {result.stderr[-3000:]}"
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["refused"] > 0, counts  # the fuzzer reached fields the env checks
