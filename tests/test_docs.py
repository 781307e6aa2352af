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


# --- what a reader gets: the built pages checked as a reader sees them (tests/docs_reader.py) ---

GUIDES = ("getting-started", "training", "study")
"""Pages that start with a command that runs in minutes and must stay a few screens long."""
GUIDE_SCREENS = 6
"""At most this many screens of 1280 x 800 (estimated from the HTML: tests/docs_reader.py)."""
CODE_CHARS = 92
"""Characters of a code line that fit the content column at 1280 px (longer lines scroll out of sight)."""
MAX_CELL_CHARS = 150
"""A table cell longer than this is a paragraph squeezed into a column: make it a list or a note below."""
NOT_NARRATIVE = ("reference/", "results/", "_modules/", "benchmarks.html", "public-api.html", "genindex.html",
                 "py-modindex.html", "search.html")  # fmt: skip
"""Pages that are reference or logs, not narrative pages whose API names must link (public-api has its own test)."""


def _built_pages(site: Path) -> list[Path]:
    return [page for page in sorted(site.rglob("*.html")) if "<article" in page.read_text()]


def _public_names() -> set[str]:
    """The public names a reader may meet in running text: classes and names with an underscore (``make`` or
    ``tasks`` alone read as ordinary words), info keys aside (they are strings, not API)."""
    from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS, STANDARD_INFO_KEYS
    from tests.test_public_api import _documented_api

    names = {name for names in _documented_api().values() for name in names}
    keys = set(EXPERT_INFO_KEYS) | set(STANDARD_INFO_KEYS)
    return {n for n in names if ((n[0].isupper() and not n.isupper()) or "_" in n.strip("_")) and n not in keys}


@pytest.mark.slow
def test_every_api_name_on_a_narrative_page_links_to_its_reference(site: Path) -> None:
    from tests.docs_reader import article, literals

    names, unlinked = _public_names(), []
    for page in _built_pages(site):
        where = str(page.relative_to(site))
        if where.startswith(NOT_NARRATIVE):
            continue
        for literal in literals(article(page)):
            core = literal.text.removesuffix("()")
            name = core.rsplit(".", 1)[-1]
            if name in names and (core == name or core.startswith("agentgym_budget.")) and not literal.linked:
                unlinked.append(f"{where}: {literal.text}")
    assert not unlinked, "API names without a link (write {py:obj}`.Name`):\n" + "\n".join(unlinked)


@pytest.mark.slow
def test_the_public_api_page_links_every_name(site: Path) -> None:
    from tests.docs_reader import article, literals
    from tests.test_public_api import _documented_api

    shown = [literal for literal in literals(article(site / "public-api.html")) if literal.role]
    total = sum(len(names) for names in _documented_api().values())
    assert len(shown) == total and total > 0
    unlinked = sorted(literal.text for literal in shown if not literal.linked)
    assert not unlinked, (
        f"{len(unlinked)} public names with no reference entry (add the module to docs/reference/): {unlinked}"
    )


@pytest.mark.slow
def test_no_table_cell_is_a_paragraph(site: Path) -> None:
    from tests.docs_reader import article, table_cells

    long = [
        f"{page.relative_to(site)}: {len(cell)} characters: {cell[:80]}..."
        for page in _built_pages(site)
        if page.name not in ("genindex.html", "py-modindex.html")
        for cell in table_cells(article(page))
        if len(cell) > MAX_CELL_CHARS
    ]
    assert not long, f"table cells over {MAX_CELL_CHARS} characters:\n" + "\n".join(long)


@pytest.mark.slow
def test_guides_fit_in_a_few_screens_and_open_with_a_command(site: Path) -> None:
    from tests.docs_reader import SCREEN_PX, article, estimated_height

    for guide in GUIDES:
        page = site / f"{guide}.html"
        screens = estimated_height(page) / SCREEN_PX
        assert screens <= GUIDE_SCREENS, f"{guide}: about {screens:.1f} screens at 1280 px; move history to results/log"
        first_block = re.search(r"<(pre|p)[ >]", article(page))
        assert first_block and first_block[1] == "pre", f"{guide}: the first thing on the page is not a command"
        source = (ROOT / "docs" / f"{guide}.md").read_text()
        first_code = source[source.index("```") : source.index("```", source.index("```") + 3)]
        assert "..." not in first_code, f"{guide}: its first command holds a literal '...' that breaks when pasted"
        wide = [line for line in first_code.splitlines() if len(line) > CODE_CHARS]
        assert not wide, f"{guide}: wider than the page's code column ({CODE_CHARS} characters): {wide}"


@pytest.mark.slow
def test_wide_figures_are_linked_to_their_full_image(site: Path) -> None:
    from tests.docs_reader import COLUMN_PX, article, images, png_size

    shown = 0
    for page in _built_pages(site):
        for src, href in images(article(page)):
            if png_size((page.parent / src).resolve())[0] > COLUMN_PX:
                shown += 1
                assert href and href.split("/")[-1] == src.split("/")[-1], f"{page.name}: {src} links to {href}"
    assert shown >= 3


def _unicode_math():
    """``docs/_ext/unicode_math.py``, the site's math renderer, loaded from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("unicode_math", ROOT / "docs" / "_ext" / "unicode_math.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_math_renders_to_html_and_unknown_tex_is_refused() -> None:
    math = _unicode_math()
    assert math.to_html(r"1 - \prod_{i=n-c+1}^{n} (1 - k/i)") == (
        "1 \N{MINUS SIGN} \N{N-ARY PRODUCT}<sub><i>i</i>=<i>n</i>\N{MINUS SIGN}<i>c</i>+1</sub><sup><i>n</i></sup> "
        "(1 \N{MINUS SIGN} <i>k</i>/<i>i</i>)"
    )
    assert 'class="math-stack"' in math.to_html(r"\binom{n}{k}") and "<sub>" in math.to_html(r"\Phi(s_{t+1})")
    for tex in (r"\sqrt{x}", r"x_{1", "a}"):
        with pytest.raises(math.UnsupportedTeX, match=r"docs/_ext/unicode_math\.py"):
            math.to_html(tex)


@pytest.mark.slow
def test_the_site_loads_nothing_from_the_network_and_its_math_is_text(site: Path) -> None:
    remote = re.compile(r"<(?:script|link|img)[^>]+(?:src|href)=\"(?:https?:)?//", re.I)
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert not remote.search(text) and "mathjax" not in text.lower(), f"{page.relative_to(site)} loads from a CDN"
    reference = (site / "reference" / "eval.html").read_text()
    assert 'class="math-unicode"' in reference and "\N{N-ARY PRODUCT}" in reference and "\\prod" not in reference
