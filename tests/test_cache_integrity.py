"""Damaged cache entries never crash the process: each is verified against its manifest and rebuilt.

Each cache entry carries a SHA-256 manifest of its files; a truncated, junk or bit-flipped file
is detected on load and the entry rebuilt (same content, since builds are deterministic). These
tests check the mechanism on a small entry built here, and builds killed or still running in other
processes and threads. The entries of each task family, and user data (no manifest: a damaged file
raises :class:`DataError`), are in ``tests/test_cache_integrity_families.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

from agentgym_budget.storage import cache
from agentgym_budget.storage.cache import CacheRepairWarning, cached_directory, check_entry
from tests.cache_support import CORRUPTIONS, corrupt, new_process


# ---------------------------------------------------------------------- the generic mechanism
def _builder(log: list[str]):
    def build(folder: Path) -> None:
        log.append("built")
        (folder / "data.bin").write_bytes(bytes(range(256)) * 64)
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.txt").write_text("hello")

    return build


DAMAGES = {
    **{kind: (lambda entry, kind=kind: corrupt(entry / "data.bin", kind)) for kind in CORRUPTIONS},
    "file in a sub-folder": lambda entry: corrupt(entry / "sub" / "notes.txt", "bit flip"),
    "file deleted": lambda entry: (entry / "data.bin").unlink(),
    "key.json changed": lambda entry: (entry / "key.json").write_text("{}"),
    "manifest truncated": lambda entry: corrupt(entry / "manifest.sha256", "truncated"),
    "manifest junk": lambda entry: corrupt(entry / "manifest.sha256", "junk"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_entry_is_rebuilt_with_a_warning(tmp_path, monkeypatch, damage):
    log: list[str] = []
    entry = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    original = {p.relative_to(entry): p.read_bytes() for p in entry.rglob("*") if p.is_file()}
    DAMAGES[damage](entry)
    new_process(monkeypatch)
    assert check_entry(entry) is not None
    with pytest.warns(CacheRepairWarning, match=re.escape(str(entry))):
        again = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    assert again == entry and log == ["built", "built"]
    assert {p.relative_to(entry): p.read_bytes() for p in entry.rglob("*") if p.is_file()} == original
    assert check_entry(entry) is None


def test_an_entry_without_manifest_is_rebuilt_quietly(tmp_path, monkeypatch):
    """Entries written before manifests existed cannot be verified: they are rebuilt once, without a warning."""
    log: list[str] = []
    entry = cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    (entry / "manifest.sha256").unlink()
    new_process(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cached_directory("demo", {"n": 1}, _builder(log), root=tmp_path)
    assert log == ["built", "built"] and (entry / "manifest.sha256").is_file()


def test_the_manifest_is_sha256sum_format_and_lists_every_file(tmp_path):
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    lines = (entry / "manifest.sha256").read_text().splitlines()
    assert sorted(line.split("  ", 1)[1] for line in lines) == ["data.bin", "key.json", "sub/notes.txt"]
    if shutil.which("sha256sum"):
        checked = subprocess.run(["sha256sum", "--check", "--quiet", "manifest.sha256"], cwd=entry)
        assert checked.returncode == 0


def test_files_are_hashed_once_per_process_and_again_when_they_change(tmp_path, monkeypatch):
    hashed: list[str] = []
    real = cache._sha256
    monkeypatch.setattr(cache, "_sha256", lambda path: hashed.append(Path(path).name) or real(path))
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    new_process(monkeypatch)
    hashed.clear()
    for _ in range(3):
        assert cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path) == entry
    assert sorted(hashed) == ["data.bin", "key.json", "notes.txt"]  # the first use only
    hashed.clear()
    corrupt(entry / "data.bin", "bit flip")
    stat = os.stat(entry / "data.bin")
    os.utime(entry / "data.bin", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # coarse clocks: make it visible
    with pytest.warns(CacheRepairWarning):
        cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    assert "data.bin" in hashed


def test_a_path_traversal_in_a_manifest_is_refused(tmp_path, monkeypatch):
    entry = cached_directory("demo", {"n": 1}, _builder([]), root=tmp_path)
    manifest = entry / "manifest.sha256"
    manifest.write_text(manifest.read_text() + f"{'0' * 64}  ../../outside\n")
    new_process(monkeypatch)
    assert "unreadable" in check_entry(entry)


# ---------------------------------------------------------------------- killed builds
_SLOW_BUILD = """
    import sys, time
    from pathlib import Path
    from agentgym_budget.storage.cache import cached_directory

    def build(folder):
        (folder / "half.txt").write_text("half")
        Path(sys.argv[2]).write_text("building")
        time.sleep(float(sys.argv[4]))
        (folder / "done.txt").write_text("done")

    print(cached_directory("demo", {"n": int(sys.argv[3])}, build, root=Path(sys.argv[1])))
"""


def _start_builder(root: Path, n: int, seconds: float) -> tuple[subprocess.Popen, Path]:
    ready = root.parent / f"ready-{n}-{time.monotonic_ns()}"
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_SLOW_BUILD), str(root), str(ready), str(n), str(seconds)],
        cwd=str(Path(__file__).parent.parent),
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the builder did not start"
        time.sleep(0.05)
    return process, ready


def _scratch(root: Path, n: int) -> list[Path]:
    return sorted((root / "demo").glob(cache.cache_key({"n": n}) + ".tmp-*"))


def test_a_killed_build_leaves_scratch_that_the_next_build_of_the_entry_removes(tmp_path):
    root = tmp_path / "cache"
    process, _ = _start_builder(root, 1, 300)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert len(_scratch(root, 1)) == 1  # what a killed build leaves
    entry = cached_directory("demo", {"n": 1}, lambda folder: (folder / "done.txt").write_text("done"), root=root)
    assert (entry / "done.txt").read_text() == "done" and _scratch(root, 1) == []


@pytest.mark.slow
def test_orphans_of_other_entries_are_swept_but_live_builds_are_left_alone(tmp_path):
    root = tmp_path / "cache"
    killed, _ = _start_builder(root, 1, 300)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    live, _ = _start_builder(root, 2, 3)  # still building while we sweep
    log: list[str] = []
    cached_directory("demo", {"n": 3}, _builder(log), root=root)  # a miss in the same namespace sweeps it
    assert _scratch(root, 1) == [], "the killed build's scratch directory was not removed"
    assert len(_scratch(root, 2)) == 1, "a live build's scratch directory was removed"
    out, _ = live.communicate(timeout=120)
    assert live.returncode == 0 and (Path(out.strip()) / "done.txt").read_text() == "done"
    assert _scratch(root, 2) == []


def test_a_build_in_another_thread_is_left_alone(tmp_path):
    root = tmp_path / "cache"
    started, release = threading.Event(), threading.Event()

    def slow(folder: Path) -> None:
        started.set()
        release.wait(60)
        (folder / "done.txt").write_text("done")

    worker = threading.Thread(target=cached_directory, args=("demo", {"n": 1}, slow), kwargs={"root": root})
    worker.start()
    assert started.wait(60)
    cached_directory("demo", {"n": 2}, _builder([]), root=root)  # sweeps the namespace
    assert len(_scratch(root, 1)) == 1
    release.set()
    worker.join(60)
    assert check_entry(root / "demo" / cache.cache_key({"n": 1})) is None and _scratch(root, 1) == []
