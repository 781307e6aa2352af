r"""Sanitising agent commands before they reach the z-machine interpreter.

The interpreter under TextWorld (Jericho's frotz) is fragile: input starting with a
backslash makes it loop forever or crash, input longer than 198 bytes is cut
silently, and interpreter meta-commands (``restart``, ``save``, ``quit``, ...) leave it
in a yes/no prompt that TextWorld's trackers know nothing about. Inform's parser also
runs several commands from one line (``"look. restart"``, ``"look then quit"``).

:func:`sanitize_command` therefore turns any string into at most one safe command:

1. fold to ASCII (accents removed) and replace control characters and backslashes by spaces;
2. keep the first command only (text before the first ``.``, ``;``, ``!``, ``?`` or ``then``);
3. lower-case, collapse white space, cut to :data:`MAX_COMMAND_LENGTH` characters at a word end;
4. return ``None`` (the turn is spent, the game does not see it) when the verb is an
   interpreter meta-command (:data:`BLOCKED_VERBS`) or a TextWorld debug command (``tw-...``).

Example:
    >>> sanitize_command("  Open the FRIDGE.  then restart")
    'open the fridge'
    >>> sanitize_command("\\help me")
    'help me'
    >>> sanitize_command("restart") is None, sanitize_command("\\q") is None
    (True, True)
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BLOCKED_VERBS", "MAX_COMMAND_LENGTH", "sanitize_command"]

MAX_COMMAND_LENGTH = 180
"""Longest command passed to the interpreter (its input buffer holds 198 bytes)."""

BLOCKED_VERBS = frozenset(
    {
        "restart",
        "restore",
        "save",
        "quit",
        "q",
        "undo",
        "oops",
        "o",
        "script",
        "transcript",
        "unscript",
        "noscript",
    }
)
"""First words that never reach the interpreter (they act on the interpreter, not the game).

``q`` and ``o`` are the parser's abbreviations of ``quit`` and ``oops``; ``oops`` is blocked
because it re-runs the previous line with a word replaced."""

_UNSAFE = re.compile(r"[^\x20-\x5b\x5d-\x7e]")
_COMMAND_BREAK = re.compile(r"[.;!?]|\bthen\b")
_SPACES = re.compile(r"\s+")


def sanitize_command(action: str) -> str | None:
    """Return the single safe command the interpreter receives for ``action``, or ``None`` to block it.

    Args:
        action: Any string an agent produced.

    Returns:
        A lower-case ASCII command of at most :data:`MAX_COMMAND_LENGTH` characters (possibly
        empty, which the game answers as an empty line), or ``None`` for a blocked command.
    """
    if not action.isascii():
        action = unicodedata.normalize("NFKD", action)
        action = "".join(char for char in action if char.isascii())
    command = _UNSAFE.sub(" ", action)
    command = _COMMAND_BREAK.split(command.lower(), maxsplit=1)[0]
    command = _SPACES.sub(" ", command).strip()
    if len(command) > MAX_COMMAND_LENGTH:
        command = command[: MAX_COMMAND_LENGTH + 1].rsplit(" ", 1)[0][:MAX_COMMAND_LENGTH]
    verb = command.split(" ", 1)[0]
    if verb in BLOCKED_VERBS or verb.startswith("tw-"):
        return None
    return command
