"""What a reader of the built site gets, read from its HTML: the article, its code literals, table cells, figures
and an estimate of its height at 1280 px (``tests/test_docs.py``).

The height is estimated, not rendered (a browser in CI would cost minutes): text lines at the article's width
(Furo's content column is about 46em, 740 px at 1280 px; about 95 characters a line), code lines, table rows and
images scaled to the column. Calibrated against headless Chromium at 1280 x 800 on 2026-12-07 (full-page
screenshots): study 3,606 px estimated against 3,545 rendered, training 3,709 against 3,720, getting started 987
against 1,150; on long pages of tables (benchmarks) it errs high (9,083 against 7,371).
"""

from __future__ import annotations

import html
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

__all__: list[str] = []

COLUMN_PX = 740
CHARS_PER_LINE = 95
TEXT_LINE_PX = 27
BLOCK_GAP_PX = 16
CODE_LINE_PX = 20
CODE_BLOCK_PX = 34
HEADING_PX = 60
ROW_PADDING_PX = 12
SCREEN_PX = 800
"""One screen of a 1280 x 800 window."""


def article(page: Path) -> str:
    """The HTML of a built page's article (its main content)."""
    text = page.read_text()
    return text[text.index("<article") : text.index("</article>")]


def visible(fragment: str) -> str:
    """The text a reader sees in an HTML fragment, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


@dataclass(frozen=True)
class Literal:
    """An inline code literal of a page: its text and whether a link wraps it."""

    text: str
    linked: bool
    role: bool
    """Written as a cross-reference role (``{py:obj}`...```), resolved or not."""


def literals(fragment: str) -> list[Literal]:
    """Every inline code literal (not code blocks) of an article, and whether it is a link."""
    fragment = re.sub(r"<pre.*?</pre>", "", fragment, flags=re.S)
    found = []
    pattern = r"(<a [^>]*>\s*)?<code class=\"([^\"]*literal[^\"]*)\"[^>]*>(.*?)</code>"
    for match in re.finditer(pattern, fragment, flags=re.S):
        found.append(Literal(visible(match[3]), match[1] is not None, "xref" in match[2]))
    return found


def table_cells(fragment: str) -> list[str]:
    """The visible text of every table cell (header and body) of an article."""
    return [visible(cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", fragment, flags=re.S)]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG file, from its header."""
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def images(fragment: str) -> list[tuple[str, str | None]]:
    """Each image's ``src`` and the ``href`` of a link wrapping it (None when there is none)."""
    found = []
    for match in re.finditer(r"(<a [^>]*href=\"([^\"]+)\"[^>]*>\s*)?<img [^>]*src=\"([^\"]+)\"", fragment):
        found.append((match[3], match[2]))
    return found


def _text_px(text: str) -> int:
    return math.ceil(max(len(text), 1) / CHARS_PER_LINE) * TEXT_LINE_PX + BLOCK_GAP_PX


def _table_px(table: str) -> int:
    height = 0
    for row in re.findall(r"<tr.*?</tr>", table, flags=re.S):
        cells = [visible(cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S)]
        if cells:
            width = CHARS_PER_LINE / len(cells)
            lines = max(math.ceil(max(len(cell), 1) / width) for cell in cells)
            height += lines * TEXT_LINE_PX + ROW_PADDING_PX
    return height + BLOCK_GAP_PX


def estimated_height(page: Path) -> int:
    """The article's height in pixels at 1280 px, estimated from its HTML (see the module docstring)."""
    fragment = article(page)
    height = 0
    for match in re.finditer(r"<pre[^>]*>(.*?)</pre>", fragment, flags=re.S):
        height += CODE_BLOCK_PX + CODE_LINE_PX * match[1].rstrip("\n").count("\n")
    fragment = re.sub(r"<pre.*?</pre>", "", fragment, flags=re.S)
    for table in re.findall(r"<table.*?</table>", fragment, flags=re.S):
        height += _table_px(table)
    fragment = re.sub(r"<table.*?</table>", "", fragment, flags=re.S)
    for src, _ in images(fragment):
        width, tall = png_size((page.parent / src).resolve())
        height += round(tall * min(1.0, COLUMN_PX / width)) + BLOCK_GAP_PX
    height += HEADING_PX * len(re.findall(r"<h[1-6]", fragment))
    fragment = re.sub(r"<h([1-6])[^>]*>.*?</h\1>", "", fragment, flags=re.S)
    for block in re.findall(r"<(p|li|dt|dd|figcaption)[^>]*>(.*?)</\1>", fragment, flags=re.S):
        if "<p" not in block[1] and "<li" not in block[1]:
            height += _text_px(visible(block[1]))
    return height
