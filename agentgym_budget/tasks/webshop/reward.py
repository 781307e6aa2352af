"""WebShop's purchase reward.

For a goal with attribute set ``U_att`` and option set ``U_opt`` and a purchase ``y``
(a product bought with some options), WebShop's reward is::

    r = r_type * (|U_att matched by y| + |U_opt matched by y| + [price(y) <= u_price])
                 / (|U_att| + |U_opt| + 1)

with the matching rules of WebShop's ``web_agent_site/engine/goal.py``:

* an attribute is matched when it is fuzzily equal (``token_set_ratio > 85`` on
  thefuzz's processed strings) to one of the product's attributes, or appears in its
  title, feature bullets or description;
* each purchased option value (colour-normalised by :func:`normalize_color`) counts
  once when it matches a goal option: exactly for option groups named ``size``,
  fuzzily otherwise; or when it appears in the product's title, bullets or description;
* ``r_type`` is 1 when the product type matches (same search query, two shared
  breadcrumb levels, or title noun overlap ``> 0.2``), 0.5 otherwise, 0.1 when the
  title noun overlap is below 0.1 and 0 when it is 0.

Two documented differences from the released code: the option count is capped at
``|U_opt|`` (the released code can exceed it, giving rewards above 1 when more options
are bought than asked for), and title nouns come from a deterministic word filter
(:func:`title_nouns`) instead of spaCy's ``en_core_web_lg`` part-of-speech tagger,
which needs a model download. Rewards are in [0, 1] and equal 1 only for a full match.

Example:
    >>> normalize_color("black forest"), normalize_color("123alabaster"), normalize_color("webshop")
    ('black', '123alabaster', 'webshop')
    >>> fuzzy_score("machine wash", "Machine-Wash"), fuzzy_score("pack of 2", "pack of 3")
    (100, 89)
    >>> title_nouns("Hanesco Men's Premium Cotton Crew Neck T-Shirt, Navy")
    ['hanesco', 'men', 'cotton', 'crew', 'neck', 'shirt']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentgym_budget.errors import MissingDependencyError
from agentgym_budget.tasks.webshop.catalog import BREADCRUMB_SEP, Goal, Product, ProductDetails
from agentgym_budget.tasks.webshop.vocabulary import COLOR_WORDS, LUCENE_STOPWORDS, NON_NOUNS

__all__ = [
    "EXACT_MATCH_OPTIONS",
    "FUZZY_THRESHOLD",
    "ProductText",
    "RewardInfo",
    "attribute_matches",
    "check_dependencies",
    "compute_reward",
    "fuzzy_score",
    "normalize_color",
    "option_matches",
    "title_nouns",
    "type_reward",
]

EXACT_MATCH_OPTIONS: frozenset[str] = frozenset({"size"})
"""Option groups whose values must match exactly."""

FUZZY_THRESHOLD = 85
"""A fuzzy match needs a ``token_set_ratio`` above this."""

_LETTERS = re.compile(r"[a-z]+")

try:  # pragma: no cover - exercised through MissingDependencyError when absent
    from rapidfuzz import fuzz as _fuzz
    from rapidfuzz import utils as _fuzz_utils
except ImportError:  # pragma: no cover
    _fuzz = None


def normalize_color(value: str) -> str:
    """The first colour word of :data:`~.vocabulary.COLOR_WORDS` found in ``value``, else ``value``."""
    for color in COLOR_WORDS:
        if color in value:
            return color
    return value


def check_dependencies() -> None:
    """Raise :class:`~agentgym_budget.errors.MissingDependencyError` if ``rapidfuzz`` is missing."""
    if _fuzz is None:  # pragma: no cover
        raise MissingDependencyError.for_extra("rapidfuzz", "webshop", "The WebShop reward")


def _process(text: str) -> str:
    return _fuzz_utils.default_process(text.encode("ascii", "ignore").decode())


def fuzzy_score(a: str, b: str) -> int:
    """thefuzz's ``token_set_ratio(a, b)`` (0-100, rounded), computed with ``rapidfuzz``.

    Raises:
        MissingDependencyError: ``rapidfuzz`` is not installed (the ``webshop`` extra).
    """
    check_dependencies()
    return round(_fuzz.token_set_ratio(_process(a), _process(b)))


def title_nouns(title: str) -> list[str]:
    """Approximate nouns of a title: lowercase letter runs of 2+ characters minus stop words,
    adjectives, colours, units and other non-nouns (:data:`~.vocabulary.NON_NOUNS`)."""
    return [
        word
        for word in _LETTERS.findall(title.lower().replace("'s", ""))
        if len(word) > 1 and word not in NON_NOUNS and word not in LUCENE_STOPWORDS
    ]


@dataclass(frozen=True)
class ProductText:
    """The lowercase texts of a product that attributes and options are looked up in."""

    title: str
    bullets: str
    description: str
    nouns: frozenset[str]

    @classmethod
    def of(cls, product: Product, details: ProductDetails) -> ProductText:
        """Build from a product and its details."""
        return cls(
            product.title.lower(),
            " ".join(details.bullet_points).lower(),
            details.description.lower(),
            frozenset(title_nouns(product.title)),
        )

    def mentions(self, phrase: str) -> bool:
        """Whether ``phrase`` appears in the title, the bullets or the description."""
        return phrase in self.title or phrase in self.bullets or phrase in self.description


@dataclass(frozen=True)
class RewardInfo:
    """A reward and its parts (WebShop's verbose reward info).

    Attributes:
        reward: The reward in [0, 1].
        r_type: Product type factor (1, 0.5, 0.1 or 0).
        r_att: Fraction of goal attributes matched.
        r_option: Fraction of goal options matched (``None`` when the goal has none).
        r_price: Whether the price is within the bound.
        query_match: Same search query as the target.
        category_match: At least two shared breadcrumb levels.
        title_score: Title noun overlap with the target's title.
    """

    reward: float
    r_type: float
    r_att: float
    r_option: float | None
    r_price: bool
    query_match: bool
    category_match: bool
    title_score: float

    def as_dict(self) -> dict[str, float | bool | None]:
        """The fields as a plain dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def type_reward(
    product: Product, text: ProductText, goal: Goal, goal_nouns: list[str]
) -> tuple[float, bool, bool, float]:
    """``(r_type, query_match, category_match, title_score)`` of buying ``product`` for ``goal``."""
    query_match = product.query == goal.query
    bought_levels = {level.strip() for level in product.product_category.split(BREADCRUMB_SEP)}
    goal_levels = {level.strip() for level in goal.product_category.split(BREADCRUMB_SEP)}
    category_match = len(bought_levels & goal_levels) >= 2
    title_score = len(text.nouns & set(goal_nouns)) / len(goal_nouns) if goal_nouns else 0.2
    r_type = 1.0 if (query_match or category_match or title_score > 0.2) else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def attribute_matches(product: Product, text: ProductText, goal_attributes: Iterable[str]) -> int:
    """How many goal attributes ``product`` has (see the module docstring)."""
    matches = 0
    for wanted in goal_attributes:
        if any(fuzzy_score(have, wanted) > FUZZY_THRESHOLD for have in product.attributes) or text.mentions(wanted):
            matches += 1
    return matches


def option_matches(text: ProductText, goal_options: Iterable[str], chosen: Mapping[str, str]) -> int:
    """How many chosen options match the goal's (see the module docstring), capped at the goal's count."""
    wanted = [normalize_color(value) for value in goal_options]
    matches = 0
    for group, raw in chosen.items():
        value = normalize_color(raw)
        if group.lower() in EXACT_MATCH_OPTIONS:
            matched = value in wanted
        else:
            matched = any(fuzzy_score(option, value) > FUZZY_THRESHOLD for option in wanted)
        if matched or text.mentions(value):
            matches += 1
    return min(matches, len(wanted))


def compute_reward(
    product: Product, text: ProductText, goal: Goal, chosen: Mapping[str, str], goal_nouns: list[str] | None = None
) -> RewardInfo:
    """The reward of buying ``product`` with options ``chosen`` (group -> value) for ``goal``.

    Args:
        product: The purchased product.
        text: Its :class:`ProductText`.
        goal: The instruction.
        chosen: Selected options, group name to value.
        goal_nouns: ``title_nouns(goal.name)``, if already computed.
    """
    nouns = title_nouns(goal.name) if goal_nouns is None else goal_nouns
    r_type, query_match, category_match, title_score = type_reward(product, text, goal, nouns)
    n_att = attribute_matches(product, text, goal.attributes)
    n_opt = option_matches(text, goal.options, chosen)
    r_price = product.price <= goal.price_upper
    total = (n_att + n_opt + int(r_price)) / (len(goal.attributes) + len(goal.options) + 1)
    return RewardInfo(
        reward=total * r_type,
        r_type=r_type,
        r_att=n_att / len(goal.attributes) if goal.attributes else 1.0,
        r_option=n_opt / len(goal.options) if goal.options else None,
        r_price=r_price,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
    )
