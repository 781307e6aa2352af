"""The documentation site builds without a warning, and every Python example on it runs.

A page's ```python blocks run in order in one namespace, as a reader pastes them into one session (the
working directory is a fresh temporary folder). A block that needs another environment says so on the
line before it with ``<!-- runs-in: EXTRA -->`` (verl: its own venv); here it is only compiled, and that
extra's install route runs its example (``.ci/install_routes.py``, ``examples/``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(?:<!-- runs-in: (?P<extra>[\w-]+) -->\n)?```python\n(?P<code>.*?)```", re.S)


def python_blocks(page: Path) -> list[tuple[str | None, str]]:
    """The page's Python examples, each with the extra it runs in (None: the test environment)."""
    return [(m.group("extra"), m.group("code")) for m in BLOCK.finditer(page.read_text())]


def test_every_page_is_in_the_table_of_contents() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    pages = {str(p.relative_to(ROOT / "docs").with_suffix("")) for p in (ROOT / "docs").rglob("*.md")}
    listed = set(re.findall(r"^([\w/-]+)$", index, re.M))
    assert pages - {"index"} <= listed, f"pages missing from docs/index.md: {sorted(pages - {'index'} - listed)}"


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for index, (extra, code) in enumerate(python_blocks(page)):
        compiled = compile(code, f"{page.relative_to(ROOT)}[python block {index}]", "exec")
        if extra is None:
            exec(compiled, namespace)


@pytest.mark.slow
def test_the_site_builds_without_warnings(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
