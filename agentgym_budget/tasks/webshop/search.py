"""BM25 product search with ``bm25s``, built once per catalog and cached on disk.

WebShop searches with Pyserini (Lucene BM25, ``k1=0.9``, ``b=0.4``, Porter stemming,
Lucene's English stop words) over each product's title, description, first feature
bullet and option text, and shows the top 50 hits. :class:`SearchIndex` does the same
in pure Python: documents are tokenised by :func:`tokenize` (lowercase alphanumeric
runs, stop words dropped, Porter-stemmed with PyStemmer, words that stem to nothing such
as ``"s"`` dropped) and scored by ``bm25s.BM25(method="lucene", k1=0.9, b=0.4)``. The
index lives in the on-disk cache (keyed by the catalog's fingerprint, the tokenizer
version and the ``bm25s`` version) as code-free files: ``vocab.json`` and three ``.npy``
arrays, memory-mapped when loaded (so processes share them) and checked
(:mod:`.storage`; a corrupt index is rebuilt).

Ranking is deterministic: documents with a positive score, by decreasing score, ties
broken by catalog order. Queries are cut to their first :data:`MAX_QUERY_TOKENS` tokens;
any string is a valid query (one without known words finds nothing).

Example:
    >>> tokenize("Men's Running Shoes, size 10 and more")
    ['men', 'run', 'shoe', 'size', '10', 'more']
    >>> tokenize("t-shirt size s"), tokenize("")
    (['t', 'shirt', 'size'], [])
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentgym_budget.errors import DataError, MissingDependencyError
from agentgym_budget.tasks.webshop.storage import load_array, load_or_rebuild, read_json
from agentgym_budget.tasks.webshop.vocabulary import LUCENE_STOPWORDS

if TYPE_CHECKING:
    from agentgym_budget.tasks.webshop.catalog import Catalog

__all__ = ["SearchIndex"]

SEARCH_RESULTS = 50
"""Number of hits a search returns (WebShop's ``SEARCH_RETURN_N``)."""

MAX_QUERY_TOKENS = 32
"""Query tokens kept (the rest are ignored), which bounds the cost of one search."""

BM25_PARAMS: dict[str, Any] = {"method": "lucene", "k1": 0.9, "b": 0.4}
"""BM25 variant and parameters (Pyserini's defaults, which WebShop uses)."""

TOKENIZER_VERSION = 2
"""Bumped whenever :func:`tokenize` changes (part of the index cache key)."""

_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"'s\b")
_INDEX_NAMESPACE = "webshop-index"
_VOCAB = "vocab.json"
_ARRAYS = {"data": "float32", "indices": "int32", "indptr": "int64"}


def _require(module: str, package: str) -> Any:
    try:
        return __import__(module)
    except ImportError as err:
        raise MissingDependencyError.for_extra(package, "webshop", "WebShop product search") from err


CACHED_WORD_CHARS = 32
"""Words up to this length have their stems remembered; longer ones (rare, or an agent's junk) are stemmed each time."""

STEM_CACHE_WORDS = 65_536
"""Stems remembered at most: with words of at most :data:`CACHED_WORD_CHARS` characters the cache holds
about 65,536 x (two strings of at most 81 bytes + 100 bytes of entry) ~ 17 MiB at worst, whatever is searched."""


@functools.lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str]:
    stemmer_module = _require("Stemmer", "PyStemmer")
    stem_word = stemmer_module.Stemmer("porter", 0).stemWord  # 0: no cache of its own (it keeps words of any length)
    cached = functools.lru_cache(maxsize=STEM_CACHE_WORDS)(stem_word)

    def stem(word: str) -> str:
        return cached(word) if len(word) <= CACHED_WORD_CHARS else stem_word(word)

    stem.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return stem


def tokenize(text: str) -> list[str]:
    """Lowercase, drop possessive ``'s``, split into alphanumeric runs, drop Lucene's stop words, Porter-stem
    (dropping words that stem to nothing)."""
    stem = _stemmer()
    stems = (stem(w) for w in _WORD.findall(_POSSESSIVE.sub("", text.lower())) if w not in LUCENE_STOPWORDS)
    return [s for s in stems if s]


def _build(documents: Iterable[str], folder: Path) -> None:
    bm25s = _require("bm25s", "bm25s")
    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    stem = _stemmer()
    stems: dict[str, int | None] = {}
    for document in documents:
        row = []
        for word in _WORD.findall(_POSSESSIVE.sub("", document)):
            if word not in stems:
                stemmed = stem(word) if word not in LUCENE_STOPWORDS else ""
                stems[word] = vocab.setdefault(stemmed, len(vocab)) if stemmed else None
            token = stems[word]
            if token is not None:
                row.append(token)
        ids.append(row)
    retriever = bm25s.BM25(**BM25_PARAMS)
    retriever.index((ids, dict(vocab)), show_progress=False)  # bm25s may add an empty token to the dict it gets
    for name, dtype in _ARRAYS.items():
        np.save(folder / f"{name}.npy", np.ascontiguousarray(retriever.scores[name], dtype=dtype), allow_pickle=False)
    (folder / _VOCAB).write_text(json.dumps({"documents": len(ids), "vocab": vocab}), encoding="utf-8")


class SearchIndex:
    """A BM25 index over a catalog (see the module docstring).

    Args:
        folder: A folder written by :meth:`build`.

    Raises:
        DataError: The folder does not hold a complete index.
        MissingDependencyError: ``bm25s`` or ``PyStemmer`` is not installed (the ``webshop`` extra).
    """

    def __init__(self, folder: Path) -> None:
        _stemmer()
        payload = read_json(folder / _VOCAB, dict)
        vocab, count = payload.get("vocab"), payload.get("documents")
        arrays = {name: load_array(folder / f"{name}.npy", dtype) for name, dtype in _ARRAYS.items()}
        indptr, indices = arrays["indptr"], arrays["indices"]
        if (
            not isinstance(vocab, dict)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in vocab.values())
            or isinstance(count, bool)
            or not isinstance(count, int)
            or count < 0
            or len(indptr) != len(vocab) + 1
            or len(arrays["data"]) != len(indices)
            or (len(indptr) and (indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0)))
            or any(not 0 <= v < len(vocab) for v in vocab.values())
            or (len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= count))
        ):
            raise DataError(f"WebShop cache: the search index in {folder} is inconsistent.")
        self.folder = folder
        self.num_documents = count
        self._vocab: dict[str, int] = vocab
        self._data = arrays["data"]
        self._indices = indices
        self._indptr = np.asarray(indptr)

    @classmethod
    def build(cls, catalog: Catalog, *, root: Path | None = None) -> SearchIndex:
        """Return the index of ``catalog``, building and caching it on disk the first time (rebuilt if corrupt)."""
        bm25s = _require("bm25s", "bm25s")
        params = {
            "catalog": dict(catalog.fingerprint),
            "tokenizer": TOKENIZER_VERSION,
            "bm25s": bm25s.__version__,
            "bm25": BM25_PARAMS,
            "format": 2,
        }

        def build(path: Path) -> None:
            _build((catalog.search_document(i) for i in range(len(catalog))), path)

        return load_or_rebuild(_INDEX_NAMESPACE, params, build, cls, root=root)

    def query_ids(self, query: str) -> list[int]:
        """Vocabulary ids of the query's tokens (unknown tokens dropped, at most :data:`MAX_QUERY_TOKENS`)."""
        tokens = tokenize(query)[:MAX_QUERY_TOKENS]
        return [self._vocab[t] for t in tokens if t in self._vocab]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (float32, one per catalog product)."""
        scores = np.zeros(self.num_documents, dtype=np.float32)
        indptr = self._indptr
        for token in self.query_ids(query):
            start, end = indptr[token], indptr[token + 1]
            # A term's postings hold each document once, so fancy-index addition is exact.
            scores[self._indices[start:end]] += self._data[start:end]
        return scores

    def search(self, query: str, k: int = SEARCH_RESULTS) -> tuple[int, ...]:
        """Catalog indices of the top ``k`` documents for ``query`` (see the module docstring)."""
        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            top = np.argpartition(-scores[hits], k - 1)[:k]
            cutoff = scores[hits[top]].min()
            hits = np.flatnonzero(scores >= cutoff)
        order = np.lexsort((hits, -scores[hits]))[:k]
        return tuple(int(i) for i in hits[order])
