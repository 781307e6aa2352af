"""Title nouns for the type reward, without a model download.

WebShop's type reward compares the nouns of two product titles, taken from spaCy's
``en_core_web_lg`` pipeline (tokens tagged ``NOUN`` or ``PROPN``, lowercased; the list
keeps duplicates). That pipeline is a separate download, so this module reproduces it in
two deterministic, download-free steps:

1. :func:`tokenize_title` splits a title the way spaCy's English tokenizer does (its
   prefix, suffix and infix rules for Latin text: ``"Men's"`` -> ``Men`` ``'s``,
   ``"T-Shirt"`` -> ``T`` ``-`` ``Shirt``, ``"16oz"`` -> ``16`` ``oz``, ``"100%"`` ->
   ``100`` ``%``);
2. a small averaged perceptron (:class:`NounTagger`, weights shipped in
   ``noun_tagger.json``) decides noun or not for each token from the word, its suffixes,
   its shape and its neighbours. It was trained on titles tagged by spaCy's
   ``en_core_web_md`` pipeline (the closest English pipeline available from PyPI); the
   training and the agreement figures are reproduced by ``benchmarks/webshop_title_nouns.py``.

Tokens without a letter or a digit never count as nouns, and neither do pure numbers or the
closed-class words of :data:`FUNCTION_WORDS` that the tagger never saw in training.

Example:
    >>> tokenize_title("Hanesco Men's T-Shirt, 3-Pack (16oz)")
    ['Hanesco', 'Men', "'s", 'T', '-', 'Shirt', ',', '3', '-', 'Pack', '(', '16', 'oz', ')']
    >>> title_nouns("Xanly Coffee")
    ['xanly', 'coffee']
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["NounTagger", "default_tagger", "token_features", "tokenize_title"]

MODEL_PATH = Path(__file__).with_name("noun_tagger.json")
"""The shipped weights of :func:`default_tagger`."""

_FUNCTION_TEXT = """
a an the this that these those my your his her its our their some any each every no all both either neither such
what which whose about above across after against along amid among around as at before behind below beneath
beside besides between beyond by despite during except for from in inside into near of on onto per since than
through throughout till to toward towards under underneath unlike until upon via with within without and or but
nor so yet if because while although though whether i me you he him she it we us they them myself yourself
itself ourselves themselves who whom is are was were be been being am do does did have has had will would shall
should can could may might must not 's n't \u2019s
"""
FUNCTION_WORDS: frozenset[str] = frozenset(_FUNCTION_TEXT.split())
"""Determiners, prepositions, conjunctions, pronouns and auxiliaries: never nouns."""

_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff"
_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_ALPHA = _LOWER + _UPPER
_QUOTES = "'\"\u201d\u201c`\u2018\u00b4\u2019\u201a,\u201e\u00bb\u00ab"
_PUNCT = r"\u2026,:;!?\u00bf\u00a1()\[\]{}<>_#*&\u00b7"
_UNITS = (
    "km|km²|km³|m|m²|m³|dm|dm²|dm³|cm|cm²|cm³|mm|mm²|mm³|ha|µm|nm|yd|in|ft|kg|g|mg|µg|t|lb|oz|m/s|km/h|kmh|mph|"
    "hPa|Pa|mbar|mb|MB|kb|KB|gb|GB|tb|TB|T|G|M|K|%"
)
_CURRENCY = r"\$|£|€|¥"
_PREFIX = re.compile(
    rf"^(?:§|%|=|\u2014|\u2013|\+(?![0-9])|\.\.+|…|[{_PUNCT}]|[{re.escape(_QUOTES)}]|US\$|C\$|A\$|{_CURRENCY})"
)
_SUFFIX = re.compile(
    rf"(?:\.\.+|…|[{_PUNCT}]|'s|'S|\u2019s|\u2019S|[{re.escape(_QUOTES)}]|\u2014|\u2013|(?<=[0-9])\+|(?<=°[FfCcKk])\."
    rf"|(?<=[0-9])(?:{_CURRENCY})|(?<=[0-9])(?:{_UNITS})"
    rf"|(?<=[0-9{_LOWER}%²\-+…,:;!?¿¡()\[\]{{}}<>_#*&{re.escape(_QUOTES)}])\.|(?<=[{_UPPER}][{_UPPER}])\.)$"
)
_INFIX = re.compile(
    rf"\.\.+|…|(?<=[0-9])[+\-*^](?=[0-9-])|(?<=[{_LOWER}{re.escape(_QUOTES)}])\.(?=[{_UPPER}{re.escape(_QUOTES)}])"
    rf"|(?<=[{_ALPHA}]),(?=[{_ALPHA}])|(?<=[{_ALPHA}0-9])(?:---|--|\u2014\u2014|-|\u2013|\u2014|~)(?=[{_ALPHA}])"
    rf"|(?<=[{_ALPHA}0-9])[:<>=/](?=[{_ALPHA}])"
)
_CONTRACTION = re.compile(r"^(.+?)(n't|n\u2019t)$", re.IGNORECASE)
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:[.,/:]\d+)*|\d*\.\d+)$")
_HAS_WORD_CHAR = re.compile(r"[^\W_]")
_SHAPE_RUN = re.compile(r"(.)\1+")


def _split_affixes(chunk: str) -> tuple[list[str], str, list[str]]:
    prefixes: list[str] = []
    suffixes: list[str] = []
    last = -1
    while chunk and len(chunk) != last:
        last = len(chunk)
        prefix = _PREFIX.search(chunk)
        pre_len = prefix.end() if prefix else 0
        rest = chunk[pre_len:]
        suffix = _SUFFIX.search(rest)
        suf_len = len(rest) - suffix.start() if suffix else 0
        if pre_len and suf_len and pre_len + suf_len <= len(chunk):
            prefixes.append(chunk[:pre_len])
            suffixes.append(chunk[len(chunk) - suf_len :])
            chunk = chunk[pre_len : len(chunk) - suf_len]
        elif pre_len:
            prefixes.append(chunk[:pre_len])
            chunk = chunk[pre_len:]
        elif suf_len:
            suffixes.append(chunk[len(chunk) - suf_len :])
            chunk = chunk[: len(chunk) - suf_len]
    return prefixes, chunk, suffixes[::-1]


def _split_infixes(core: str) -> list[str]:
    tokens: list[str] = []
    start = 0
    for match in _INFIX.finditer(core):
        if match.start() == 0 and match.end() == len(core):
            break
        if match.start() > start:
            tokens.append(core[start : match.start()])
        if match.end() > match.start():
            tokens.append(match.group())
        start = match.end()
    if start < len(core):
        tokens.append(core[start:])
    return tokens


def tokenize_title(title: str) -> list[str]:
    """Tokens of ``title``, split like spaCy's English tokenizer (see the module docstring)."""
    tokens: list[str] = []
    for chunk in title.split():
        prefixes, core, suffixes = _split_affixes(chunk)
        tokens += prefixes
        if core:
            contraction = _CONTRACTION.match(core)
            if contraction and core[: contraction.end(1)].isalpha():
                tokens += [contraction.group(1), contraction.group(2)]
            else:
                tokens += _split_infixes(core)
        tokens += suffixes
    return tokens


def _shape(token: str) -> str:
    mapped = "".join("X" if c.isupper() else "x" if c.isalpha() else "d" if c.isdigit() else c for c in token)
    return _SHAPE_RUN.sub(r"\1", mapped)


def token_features(tokens: Sequence[str], i: int) -> list[str]:
    """The perceptron's features of token ``i`` of a tokenized title."""
    word = tokens[i]
    lower = word.lower()
    prev = tokens[i - 1] if i > 0 else "<s>"
    nxt = tokens[i + 1] if i + 1 < len(tokens) else "</s>"
    return [
        "bias",
        "w=" + lower,
        "s3=" + lower[-3:],
        "s2=" + lower[-2:],
        "p2=" + lower[:2],
        "sh=" + _shape(word),
        "pos=" + ("first" if i == 0 else "last" if i == len(tokens) - 1 else "mid"),
        "pw=" + prev.lower(),
        "nw=" + nxt.lower(),
        "psh=" + _shape(prev),
        "nsh=" + _shape(nxt),
        "ns3=" + nxt.lower()[-3:],
        "w|nw=" + lower + "|" + nxt.lower(),
        "pw|w=" + prev.lower() + "|" + lower,
    ]


class NounTagger:
    """A binary averaged-perceptron tagger: is a title token a noun (``NOUN``/``PROPN``)?

    Args:
        weights: Feature -> weight (positive means noun).
    """

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.weights = dict(weights)

    @classmethod
    def load(cls, path: Path | str = MODEL_PATH) -> NounTagger:
        """Load weights written by :meth:`save`."""
        with Path(path).open(encoding="utf-8") as handle:
            payload = json.load(handle)
        scale = float(payload["scale"])
        return cls({feature: value / scale for feature, value in payload["weights"].items()})

    def save(self, path: Path | str, *, source: str, scale: int = 1000) -> None:
        """Write the weights as JSON (integers, ``weight * scale``), with a note on where they come from."""
        weights = {f: round(w * scale) for f, w in sorted(self.weights.items()) if round(w * scale)}
        Path(path).write_text(
            json.dumps({"source": source, "scale": scale, "weights": weights}, separators=(",", ":")) + "\n"
        )

    def is_noun(self, tokens: Sequence[str], i: int) -> bool:
        """Whether token ``i`` is tagged a noun."""
        token = tokens[i]
        if not _HAS_WORD_CHAR.search(token) or _NUMBER.match(token):
            return False
        weights = self.weights
        lower = token.lower()
        if lower in FUNCTION_WORDS and "w=" + lower not in weights:
            return False
        return sum(weights.get(f, 0.0) for f in token_features(tokens, i)) > 0

    def nouns(self, title: str) -> list[str]:
        """Lowercased noun tokens of ``title`` in order (duplicates kept, as WebShop's list)."""
        tokens = tokenize_title(title)
        return [token.lower() for i, token in enumerate(tokens) if self.is_noun(tokens, i)]


@functools.lru_cache(maxsize=1)
def default_tagger() -> NounTagger:
    """The shipped tagger (loaded once per process)."""
    return NounTagger.load()


@functools.lru_cache(maxsize=65_536)
def _cached_nouns(title: str) -> tuple[str, ...]:
    return tuple(default_tagger().nouns(title))


def title_nouns(title: str) -> list[str]:
    """Nouns of a product title, as WebShop's type reward takes them (see the module docstring)."""
    return list(_cached_nouns(title))
