"""The text spaces shared by every environment, and normalisation into them.

Gymnasium's :class:`~gymnasium.spaces.Text` defaults to 62 alphanumeric
characters, which rejects ordinary game text such as ``"go east"``. All
agentgym-budget environments instead use :data:`CHARSET`: printable ASCII,
newline and tab. Observations are passed through :func:`normalize_text` so that
they always belong to the observation space:

* typographic characters are mapped to ASCII (curly quotes, dashes, ellipses),
  accents are removed (``"café"`` becomes ``"cafe"``), any other character
  outside the charset becomes ``"?"``;
* line endings become ``"\\n"``, trailing spaces are removed from every line,
  runs of blank lines collapse to one, leading/trailing blank space is removed;
* text longer than the limit is cut and ends with :data:`TRUNCATION_MARK`.

Example:
    >>> normalize_text("Caf\\u00e9 \\u2014 \\u201cwelcome\\u201d   \\r\\n\\r\\n\\r\\n> ")
    'Cafe - "welcome"\\n\\n>'
    >>> observation_space().contains("go east")
    True
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence

from gymnasium import spaces

from agentgym_budget.core.text_space import TextSpace

__all__ = ["ACTION_STEP_LIMIT", "action_space", "is_admissible", "observation_space"]

CHARSET: frozenset[str] = frozenset(string.ascii_letters + string.digits + string.punctuation + " \n\t")
"""Characters allowed in observations and actions: printable ASCII, newline, tab."""

OBSERVATION_MAX_LENGTH = 16_384
"""Maximum observation length in characters; longer text is cut (see :data:`TRUNCATION_MARK`)."""

ACTION_MAX_LENGTH = 512
"""Maximum length of actions in the action space. Longer strings are still accepted by
``step``; each task family documents how it shortens commands for its engine."""

ACTION_STEP_LIMIT = 65_536
"""Longest action ``step`` accepts, in characters (every family): far above any real command (the
action space's :data:`ACTION_MAX_LENGTH`), far below a size whose parsing costs seconds. A longer
action raises :class:`~agentgym_budget.errors.InvalidActionError` and spends no turn."""

TRUNCATION_MARK = "\n[...]"
"""Appended to observations that were cut to :data:`OBSERVATION_MAX_LENGTH`."""

_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2026": "...",
        "\u00a0": " ",
        "\u00d7": "x",
    }
)
_OUTSIDE_CHARSET = re.compile(r"[^\x20-\x7e\n\t]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_ASCII_OUTSIDE = bytes(code for code in range(128) if (code < 0x20 and chr(code) not in "\n\t") or code == 0x7F)


def _to_charset(text: str) -> str:
    if not text.isascii():
        folded = unicodedata.normalize("NFKD", text.translate(_TYPOGRAPHY))
        text = "".join(char for char in folded if not unicodedata.combining(char))
    return _OUTSIDE_CHARSET.sub("?", text)


def normalize_text(text: str, max_length: int = OBSERVATION_MAX_LENGTH) -> str:
    """Return ``text`` rewritten into :data:`CHARSET` and at most ``max_length`` characters.

    Args:
        text: Any string, typically raw engine output.
        max_length: Length limit; longer results are cut and end with :data:`TRUNCATION_MARK`.

    Returns:
        The normalised text (see the module docstring for the exact rules).

    Example:
        >>> normalize_text("a" * 20, max_length=10)
        'aaaa\\n[...]'
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not (text.isascii() and len(text.encode("ascii").translate(None, _ASCII_OUTSIDE)) == len(text)):
        text = _to_charset(text)  # else it is in CHARSET already (the check is several times faster than the rewrite)
    if " \n" in text or "\t\n" in text:  # trailing white space at the very end goes with strip()
        text = "\n".join(line.rstrip(" \t") for line in text.split("\n"))  # several times faster than a regex
    if "\n\n\n" in text:
        text = _BLANK_RUNS.sub("\n\n", text)
    text = text.strip()
    if len(text) > max_length:
        text = text[: max_length - len(TRUNCATION_MARK)] + TRUNCATION_MARK
    return text


def observation_space() -> spaces.Text:
    """The observation space of every environment: text of 0 to :data:`OBSERVATION_MAX_LENGTH` chars.

    A :class:`~agentgym_budget.core.text_space.TextSpace`, safe in ``AsyncVectorEnv(shared_memory=True)``.
    """
    return TextSpace(max_length=OBSERVATION_MAX_LENGTH, min_length=0, charset=CHARSET)


def action_space() -> spaces.Text:
    """The action space of every environment: text of 0 to :data:`ACTION_MAX_LENGTH` chars."""
    return TextSpace(max_length=ACTION_MAX_LENGTH, min_length=0, charset=CHARSET)


_COMMAND_SPACES = re.compile(r"\s+")
_PLACEHOLDER = re.compile(r"<[^<>]+>")


def normalize_command(command: str) -> str:
    """``command`` lower-cased, with runs of white space collapsed and the ends stripped.

    Example:
        >>> normalize_command("  Take   the Coin ")
        'take the coin'
    """
    return _COMMAND_SPACES.sub(" ", command).strip().lower()


def is_admissible(action: str, admissible: Sequence[str]) -> bool:
    """Whether ``action`` is one of ``admissible`` (see the module docstring for the comparison).

    Example:
        >>> is_admissible("Go  North", ["go north", "look"])
        True
        >>> is_admissible("search[red socks]", ["search[<keywords>]"]), is_admissible("search[]", ["search[<keywords>]"])
        (True, False)
        >>> is_admissible("dance", ["go north", "look"])
        False
    """
    if not isinstance(action, str):
        return False
    if action in admissible:  # the common case, without normalising every entry
        return True
    command = normalize_command(action)
    for entry in admissible:
        candidate = normalize_command(entry)
        if candidate == command:
            return True
        if _PLACEHOLDER.search(candidate):
            pieces = _PLACEHOLDER.split(candidate)
            pattern = "(?:.+)".join(re.escape(piece) for piece in pieces)
            if re.fullmatch(pattern, command):
                return True
    return False
