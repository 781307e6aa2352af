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


def _fuzz(family: str, *args: str) -> dict:
    """The counts printed by ``python -m tests.snapshot_fuzz FAMILY ARGS`` in a child process."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.snapshot_fuzz", family, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 0, f"child exited with {result.returncode}: {result.stderr[-3000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld", "webshop", "babyai"])
def test_fuzzed_snapshots_restore_or_raise_typed_errors(family):
    counts = _fuzz(family, "30")
    assert counts["refused"] > 0, counts  # the fuzzer reached fields the env checks


@pytest.mark.slow
@pytest.mark.parametrize("family", ["textworld", "alfworld", "webshop", "babyai"])
def test_every_field_of_every_part_forged_restores_or_is_refused_and_then_steps(family):
    """Each field of each part (wrappers' and the base env's, one level into its engine record) is forged twice,
    restored, stepped, and followed by the genuine snapshot's replay (issue 38)."""
    counts = _fuzz(family, "2", "fields")
    assert counts["fields"] >= 8 and counts["refused"] > counts["accepted"], counts
