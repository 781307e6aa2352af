r"""One game action per turn: screening agent commands before they reach the z-machine interpreter.

TextWorld games run on Inform 7's parser inside Jericho's frotz interpreter, and one input line
can do much more than one action there (each point below was measured on generated games):

* ``.``, ``,`` and ``then`` separate commands: ``"west, north. east then take coin"`` plays four
  actions in one line, and ``"me, look"`` / ``"myself, look"`` are orders the player gives itself;
* ``all``, ``each``, ``every``, ``everything``, ``both``, ``and``, ``but`` / ``except`` and a quantity
  at the start of a noun phrase (``"insert 2 into safe"``) act on several objects: one action each;
* ``again`` / ``g`` repeat the previous line (after a reset, an internal TextWorld command),
  ``oops`` re-runs it with a word replaced, ``undo`` rewinds;
* out-of-world commands act on the interpreter, not the game: ``restart`` / ``restore`` / ``quit``
  leave it in a yes/no prompt TextWorld's trackers know nothing about, ``save`` and ``script``
  write files into the working directory, ``brief`` / ``notify`` change later observations, and
  TextWorld's debug commands (``tw-...``, ``print_state``, ``enable print state option``,
  ``restrict commands``) print the whole world state or change the rules;
* the dictionary keeps the first 9 Z-characters of a word, so ``transcripts`` is ``transcript``
  and ``print_stuff`` is ``print_state``;
* input starting with a backslash makes the interpreter loop forever or crash, and input longer
  than 198 bytes is cut silently.

:func:`check_command` therefore turns any string into at most one game action:

1. fold to ASCII (accents removed) and replace control characters and backslashes by spaces;
2. **cut a chained line to its first command**: the text before the first ``.``, ``,``, ``;``,
   ``!``, ``?`` or the word ``then`` (the rest is dropped; the game never sees it);
3. lower-case, collapse white space, cut to :data:`MAX_COMMAND_LENGTH` characters at a word end;
4. **refuse** the command (the turn is spent, the game does not see it, the observation is the
   game's own parser message) when its first word is an interpreter meta-command, a parser
   special or a TextWorld debug command (:data:`_REFUSED_VERBS`, ``tw-...``): *"That's not a verb
   I recognise."*; or when it names several objects at once (:data:`_MULTI_OBJECT_WORDS`, or a
   number where a noun phrase starts): *"You can't use multiple objects with that verb."*

Cutting (rather than refusing) chained lines keeps the turn useful to an agent that writes
``"open fridge, then take carrot"``: the first action happens, as one turn, and the observation
shows only its outcome. Multi-object commands cannot be cut meaningfully, so they are refused
with the message Inform itself prints for verbs that take one object. TextWorld's admissible
commands and expert plans never contain any of these words or separators, so every admissible
command passes through unchanged.

Example:
    >>> sanitize_command("  Open the FRIDGE, then take the carrot.")
    'open the fridge'
    >>> sanitize_command("west, north, east, take coin"), sanitize_command("me, look")
    ('west', 'me')
    >>> check_command("look. restart")
    CommandCheck(command='look', refusal=None)
    >>> check_command("RESTART please")
    CommandCheck(command=None, refusal="That's not a verb I recognise.")
    >>> check_command("insert 2 into safe").refusal
    "You can't use multiple objects with that verb."
    >>> sanitize_command("take type 0 key from type 0 locker"), sanitize_command("\\help me")
    ('take type 0 key from type 0 locker', 'help me')
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

__all__: list[str] = []

MAX_COMMAND_LENGTH = 180
"""Longest command passed to the interpreter (its input buffer holds 198 bytes)."""

DICTIONARY_WORD_LENGTH = 9
"""Z-characters a version 8 story file keeps of each dictionary word (the rest is ignored)."""

_REFUSED_VERBS = frozenset(
    {
        # Inform 7's out-of-world actions (Standard Rules) and their abbreviations.
        "quit",
        "q",
        "save",
        "restore",
        "restart",
        "verify",
        "script",
        "transcript",
        "noscript",
        "unscript",
        "superbrief",
        "short",
        "verbose",
        "long",
        "brief",
        "normal",
        "score",
        "full",
        "fullscore",
        "notify",
        "pronouns",
        "nouns",
        "version",
        # Handled by the parser itself: repeat, correct or rewind the previous line.
        "again",
        "g",
        "oops",
        "o",
        "undo",
        # TextWorld's debug and framework commands (``tw-...`` is refused as a prefix too).
        "print_state",
        "enable",
        "disable",
        "restrict",
    }
)
"""First words that never reach the interpreter (compared by :func:`dictionary_key`, as the game does)."""

_MULTI_OBJECT_WORDS = frozenset({"all", "each", "every", "everything", "both", "and", "but", "except", "things"})
"""Words that make Inform act on several objects in one turn (one action per object)."""

UNKNOWN_VERB_FEEDBACK = "That's not a verb I recognise."
"""The game's reply to a refused verb (Inform's own message for a verb it does not know)."""

MULTIPLE_OBJECTS_FEEDBACK = "You can't use multiple objects with that verb."
"""The game's reply to a refused multi-object command (Inform's own message)."""

_NUMBER_WORDS = frozenset(
    {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
     "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty",
     "sixty", "seventy", "eighty", "ninety", "hundred"}
)  # fmt: skip
_PHRASE_OPENERS = frozenset(
    # Descriptors Inform skips before a quantity, and prepositions that open a noun phrase.
    {"a", "an", "the", "some", "my", "your", "his", "her", "its", "their", "this", "that", "these", "those", "lit",
     "lighted", "unlit", "other", "another", "of", "about", "across", "against", "around", "at", "behind", "below",
     "beneath", "beside", "down", "for", "from", "in", "inside", "into", "near", "off", "on", "onto", "out",
     "outside", "over", "through", "to", "top", "toward", "towards", "under", "underneath", "up", "upon", "using",
     "with", "within"}
)  # fmt: skip
_UNSAFE = re.compile(r"[^\x20-\x5b\x5d-\x7e]")
_COMMAND_BREAK = re.compile(r"[.,;!?]|\bthen\b")
_SPACES = re.compile(r"\s+")
_ONE_ZCHAR = frozenset("abcdefghijklmnopqrstuvwxyz")
_TWO_ZCHARS = frozenset("0123456789.,!?_#'\"/\\-:()\n")


def dictionary_key(word: str) -> str:
    """What the game's dictionary keeps of ``word``: its first :data:`DICTIONARY_WORD_LENGTH` Z-characters.

    Lower-case letters take one Z-character, digits and ``.,!?_#'"/\\-:()`` two, other characters
    four; a character cut in the middle is dropped.

    Example:
        >>> dictionary_key("transcripts"), dictionary_key("print_stuff"), dictionary_key("look")
        ('transcrip', 'print_st', 'look')
    """
    word = word.lower()
    if word.isalpha() and word.isascii():
        return word[:DICTIONARY_WORD_LENGTH]
    key, used = [], 0
    for char in word:
        used += 1 if char in _ONE_ZCHAR else 2 if char in _TWO_ZCHARS else 4
        if used > DICTIONARY_WORD_LENGTH:
            break
        key.append(char)
    return "".join(key)


_REFUSED_KEYS = frozenset(map(dictionary_key, _REFUSED_VERBS))
_MULTI_OBJECT_KEYS = frozenset(map(dictionary_key, _MULTI_OBJECT_WORDS))
_NUMBER_KEYS = frozenset(map(dictionary_key, _NUMBER_WORDS))
_OPENER_KEYS = frozenset(map(dictionary_key, _PHRASE_OPENERS))


@dataclass(frozen=True)
class CommandCheck:
    """What :func:`check_command` made of an agent's input.

    Attributes:
        command: The single command the interpreter receives, or ``None`` when the input is refused.
        refusal: The game's message for a refused input (``None`` when ``command`` is set).
    """

    command: str | None
    refusal: str | None = None


def _is_number(word: str, key: str) -> bool:
    return (
        word.isdigit() or key in _NUMBER_KEYS or all(dictionary_key(part) in _NUMBER_KEYS for part in word.split("-"))
    )


def _names_several_objects(words: list[str], keys: list[str]) -> bool:
    if not _MULTI_OBJECT_KEYS.isdisjoint(keys):
        return True
    return any(
        (position <= 1 or keys[position - 1] in _OPENER_KEYS) and _is_number(word, keys[position])
        for position, word in enumerate(words)
    )


CACHED_ACTION_CHARS = 256
"""Actions up to this length are remembered (agents repeat their commands); longer ones are screened each time.

The cache holds at most 4,096 actions, so at most about 4,096 x (256 + 100 bytes of object overhead)
~ 1.5 MiB, whatever the agent sends (a 64 KiB action is never kept)."""


def check_command(action: str) -> CommandCheck:
    """Screen ``action`` into at most one game action (see the module docstring for the rules).

    Args:
        action: Any string an agent produced.

    Returns:
        The lower-case ASCII command of at most :data:`MAX_COMMAND_LENGTH` characters the
        interpreter receives (possibly empty, which the game answers as an empty line), or a
        refusal with the game's message for it.
    """
    return _check_short(action) if len(action) <= CACHED_ACTION_CHARS else _check(action)


@functools.lru_cache(maxsize=4096)  # a pure function of the text, of bounded size (CACHED_ACTION_CHARS)
def _check_short(action: str) -> CommandCheck:
    return _check(action)


def _check(action: str) -> CommandCheck:
    if not action.isascii():
        action = unicodedata.normalize("NFKD", action)
        action = "".join(char for char in action if char.isascii())
    command = _UNSAFE.sub(" ", action)
    command = _COMMAND_BREAK.split(command.lower(), maxsplit=1)[0]
    command = _SPACES.sub(" ", command).strip()
    if len(command) > MAX_COMMAND_LENGTH:
        command = command[: MAX_COMMAND_LENGTH + 1].rsplit(" ", 1)[0][:MAX_COMMAND_LENGTH]
    words = command.replace('"', " ").split()
    keys = [dictionary_key(word) for word in words]
    if words and (keys[0] in _REFUSED_KEYS or words[0].startswith("tw-")):
        return CommandCheck(None, UNKNOWN_VERB_FEEDBACK)
    if _names_several_objects(words, keys):
        return CommandCheck(None, MULTIPLE_OBJECTS_FEEDBACK)
    return CommandCheck(command)


def sanitize_command(action: str) -> str | None:
    """The single command the interpreter receives for ``action``, or ``None`` when it is refused.

    Shorthand for ``check_command(action).command``.
    """
    return check_command(action).command
