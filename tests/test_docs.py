"""The documentation site builds without a warning, and every Python example on it runs.

A page's ```python blocks run in order in one namespace, as a reader pastes them into one session (the
working directory is a fresh temporary folder). A block that needs another environment says so on the
line before it with ``<!-- runs-in: EXTRA -->`` (verl: its own venv); here it is only compiled, and that
extra's install route runs its example (``.ci/install_routes.py``, ``examples/``).
"""

from __future__ import annotations

import html
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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built once with warnings as errors (the build's stderr is the failure message)."""
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.mark.slow
def test_the_site_builds_without_warnings(site: Path) -> None:
    assert (site / "index.html").is_file()


def test_no_warning_is_suppressed() -> None:
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert "suppress_warnings" not in conf, "a suppressed warning hides a broken link or formula: fix the page"


RAW_REST = (".. py:", ".. auto", ":class:", ":func:", ":meth:", ":mod:", ":attr:", ":data:", ":exc:", "{eval-rst}")


def page_text(html_file: Path) -> str:
    """The visible text of a page's article, code blocks left out."""
    page = html_file.read_text()
    article = page[page.index("<article") : page.index("</article>")]
    article = re.sub(r"<pre.*?</pre>", "", article, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", article))


@pytest.mark.slow
def test_the_api_reference_renders_signatures(site: Path) -> None:
    pages = sorted((ROOT / "docs" / "reference").glob("*.md"))
    assert pages
    for source in pages:
        built = site / "reference" / source.with_suffix(".html").name
        signatures = built.read_text().count('class="sig ')
        assert signatures >= 5, f"{built.name}: {signatures} rendered signatures (raw reST instead of autodoc?)"
    for built in site.rglob("*.html"):
        if "_modules" in built.parts or "<article" not in built.read_text():
            continue
        text = page_text(built)
        raw = [pattern for pattern in RAW_REST if pattern in text]
        assert not raw, f"{built.relative_to(site)} shows reST as text: {raw}"


def _generated_synopsis(page: str) -> str:
    """The code block of ``docs/cli.md`` that follows the "generated from the parsers" marker."""
    marker = page.index("<!-- generated from the parsers")
    opening = page.index("```\n", marker) + 4
    return page[opening : page.index("```", opening)].rstrip("\n")


def test_the_cli_reference_is_the_parsers_usage() -> None:
    from agentgym_budget.cli.main import synopsis

    page = (ROOT / "docs" / "cli.md").read_text()
    assert _generated_synopsis(page) == synopsis(), (
        "docs/cli.md's synopsis differs from the parsers: paste the output of\n"
        "python -c 'from agentgym_budget.cli.main import synopsis; print(synopsis())'"
    )


def test_the_train_synopsis_names_every_recipe_and_preset() -> None:
    from agentgym_budget.train.config import RECIPES
    from agentgym_budget.train.train_presets import TRAIN_PRESETS

    page = (ROOT / "docs" / "cli.md").read_text()
    train = _generated_synopsis(page).split("agentgym-budget train ", 1)[1]
    assert f"--recipe {'|'.join(RECIPES)}" in train
    assert f"--preset {'|'.join(TRAIN_PRESETS)}" in " ".join(train.split())
