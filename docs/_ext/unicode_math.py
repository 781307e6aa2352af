"""Math rendered when the site is built, as HTML text: no script, no CDN, readable offline.

Sphinx's HTML builder renders ``:math:`` and ``.. math::`` with MathJax, fetched from a CDN by the reader's
browser, so an offline reader sees raw TeX. This extension registers an HTML math renderer (``unicode``) that
turns the TeX of the package's docstrings into HTML: Greek letters and operators as Unicode, sub- and
superscripts as ``<sub>``/``<sup>``, ``\\binom`` and ``\\frac`` as stacked pairs, variables in italics. It
covers a small subset of TeX on purpose: a command outside it fails the build (a warning, and the build runs
with warnings as errors) with the formula and what to do, never a silently wrong formula.

Example:
    >>> to_html(r"G = \\sum_{t<T} r_t")
    '<i>G</i> = ∑<sub><i>t</i>&lt;<i>T</i></sub> <i>r</i><sub><i>t</i></sub>'
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

__all__ = ["UnsupportedTeX", "setup", "to_html"]

_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu",
          "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")  # fmt: skip
_CAPITALS = ("Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega")
SYMBOLS = {
    **{name: unicodedata.lookup(f"GREEK SMALL LETTER {name.replace('mbda', 'mda')}") for name in _GREEK},
    **{name: unicodedata.lookup(f"GREEK CAPITAL LETTER {name.replace('mbda', 'mda')}") for name in _CAPITALS},
    "varepsilon": "\N{GREEK LUNATE EPSILON SYMBOL}", "sum": "\N{N-ARY SUMMATION}", "prod": "\N{N-ARY PRODUCT}",
    "ldots": "\N{HORIZONTAL ELLIPSIS}", "cdots": "\N{MIDLINE HORIZONTAL ELLIPSIS}", "cdot": "\N{MIDDLE DOT}",
    "times": "\N{MULTIPLICATION SIGN}", "le": "\N{LESS-THAN OR EQUAL TO}", "leq": "\N{LESS-THAN OR EQUAL TO}",
    "ge": "\N{GREATER-THAN OR EQUAL TO}", "geq": "\N{GREATER-THAN OR EQUAL TO}", "ne": "\N{NOT EQUAL TO}",
    "neq": "\N{NOT EQUAL TO}", "approx": "\N{ALMOST EQUAL TO}", "in": "\N{ELEMENT OF}", "infty": "\N{INFINITY}",
    "to": "\N{RIGHTWARDS ARROW}", "pm": "\N{PLUS-MINUS SIGN}", "mid": "|", ",": "\N{THIN SPACE}",
    ";": "\N{FOUR-PER-EM SPACE}", "quad": "\N{EM SPACE}", " ": " ",
}  # fmt: skip
"""TeX commands written as one character."""
DELIMITERS = ("bigl", "bigr", "Bigl", "Bigr", "big", "Big", "left", "right")
"""Size commands: the delimiter after them is kept, at text size."""
_OPERATORS = {"-": "\N{MINUS SIGN}", "'": "\N{PRIME}", "*": "\N{ASTERISK OPERATOR}"}


class UnsupportedTeX(ValueError):
    """A formula uses TeX this renderer does not know."""


class _Reader:
    def __init__(self, tex: str) -> None:
        self.tex, self.at = tex, 0

    def fail(self, what: str) -> UnsupportedTeX:
        return UnsupportedTeX(
            f"{what} in the formula {self.tex!r}: docs/_ext/unicode_math.py renders a small subset of TeX "
            "(extend it, or write the formula with the commands it knows)"
        )

    def group(self) -> str:
        """The HTML of a ``{...}`` group or of a single token."""
        self.skip_spaces()
        if self.at < len(self.tex) and self.tex[self.at] == "{":
            self.at += 1
            inner = self.sequence(until="}")
            self.at += 1
            return inner
        return self.token()

    def raw_group(self) -> str:
        """The text of a ``{...}`` group, unparsed (for ``\\text``)."""
        self.skip_spaces()
        if self.at >= len(self.tex) or self.tex[self.at] != "{":
            raise self.fail("a \\text without braces")
        end = self.tex.index("}", self.at)
        text, self.at = self.tex[self.at + 1 : end], end + 1
        return html.escape(text)

    def skip_spaces(self) -> None:
        while self.at < len(self.tex) and self.tex[self.at] == " ":
            self.at += 1

    def command(self) -> str:
        match = re.compile(r"\\([A-Za-z]+|.)").match(self.tex, self.at)
        if match is None:
            raise self.fail("a lone backslash")
        name, self.at = match[1], match.end()
        if name in SYMBOLS:
            return SYMBOLS[name]
        if name in DELIMITERS:
            self.skip_spaces()
            delimiter = self.tex[self.at]
            self.at += 1
            return html.escape(delimiter)
        if name in ("text", "mathrm", "operatorname"):
            return self.raw_group()
        if name in ("widehat", "hat"):
            return f'<span class="math-hat">{self.group()}</span>'
        if name in ("binom", "frac"):
            top, bottom = self.group(), self.group()
            stacked = f'<span class="math-stack"><span>{top}</span><span>{bottom}</span></span>'
            return f"({stacked})" if name == "binom" else stacked
        raise self.fail(f"the command \\{name}")

    def token(self) -> str:
        char = self.tex[self.at]
        if char == "\\":
            return self.command()
        self.at += 1
        if char.isalpha():
            return f"<i>{char}</i>"
        return _OPERATORS.get(char, html.escape(char))

    def sequence(self, until: str = "") -> str:
        out = []
        while self.at < len(self.tex) and self.tex[self.at] != until:
            char = self.tex[self.at]
            if char in "_^":
                self.at += 1
                tag = "sub" if char == "_" else "sup"
                out.append(f"<{tag}>{self.group()}</{tag}>")
            elif char == "}":
                raise self.fail("an unmatched }")
            else:
                out.append(self.token())
        if until and self.at >= len(self.tex):
            raise self.fail("an unclosed {")
        return "".join(out)


def to_html(tex: str) -> str:
    """The HTML of the TeX formula ``tex`` (raises :class:`UnsupportedTeX` outside the known subset)."""
    return _Reader(" ".join(tex.split())).sequence()


def _render(translator: Any, node: Any, block: bool) -> None:
    from docutils import nodes
    from sphinx.util import logging

    try:
        rendered = to_html(node.astext())
    except UnsupportedTeX as err:
        logging.getLogger(__name__).warning(str(err), location=node)
        rendered = html.escape(node.astext())
    if block:
        translator.body.append(f'<div class="math-unicode">{rendered}</div>\n')
    else:
        translator.body.append(f'<span class="math-unicode">{rendered}</span>')
    raise nodes.SkipNode


def _depart(translator: Any, node: Any) -> None:
    """Nothing: :func:`_render` wrote the whole node."""


def setup(app: Any) -> dict[str, Any]:
    """Register the ``unicode`` HTML math renderer and its style sheet (``static/unicode_math.css``)."""
    from pathlib import Path

    app.add_html_math_renderer(
        "unicode",
        inline_renderers=(lambda self, node: _render(self, node, block=False), _depart),
        block_renderers=(lambda self, node: _render(self, node, block=True), _depart),
    )
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))
    app.add_css_file("unicode_math.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
