"""WebShop's purchase reward, as its released code computes it.

For a goal with attribute list ``U_att``, option list ``U_opt`` and price bound ``u``, buying
product ``y`` with selected options ``O`` earns (``web_agent_site/engine/goal.py``,
``get_reward``)::

    r = r_type * (n_att + n_opt + [price(y) <= u]) / (|U_att| + |U_opt| + 1)

* ``n_att``: goal attributes that fuzzily equal (thefuzz ``token_set_ratio > 85``) one of
  the product's attributes, or appear in its title, feature bullets or description
  (lowercased, as substrings);
* ``n_opt``: selected option values, each colour-normalised (:func:`normalize_color`), that
  match a colour-normalised goal option: exactly in a group named ``size``, fuzzily
  (``> 85``) in other groups; a selected value that matches no goal option still counts
  when it appears in the product's title, bullets or description. Every selected value is
  counted, so ``n_opt`` can exceed ``|U_opt|`` and the reward can exceed 1, as in the
  released code;
* ``r_type`` (``get_type_reward``): 1 when the product type matches (same search query, at
  least two shared breadcrumb levels, or a title noun overlap above 0.2), else 0.5; 0.1 when
  the overlap is below 0.1, 0 when it is 0. The overlap is the number of distinct nouns of
  the goal's product title found among the bought title's nouns, divided by the length of
  the goal's noun list (duplicates included; 0.2 when the goal title has no noun).

The only divergence from the released code is where title nouns come from: WebShop runs
spaCy's ``en_core_web_lg`` (a model download); :func:`~.nouns.title_nouns` is a
download-free tagger trained to agree with spaCy (figures in the README).

Example:
    >>> normalize_color("black forest"), normalize_color("123alabaster"), normalize_color("webshop")
    ('black', 'alabaster', 'webshop')
    >>> fuzzy_score("machine wash", "Machine-Wash"), fuzzy_score("pack of 2", "pack of 3")
    (100, 89)
    >>> title_nouns("Xanly Coffee")
    ['xanly', 'coffee']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentgym_budget.errors import MissingDependencyError
from agentgym_budget.tasks.webshop.catalog import BREADCRUMB_SEP, Goal, Product, ProductDetails
from agentgym_budget.tasks.webshop.nouns import title_nouns
from agentgym_budget.tasks.webshop.vocabulary import COLOR_WORDS

__all__: list[str] = []

EXACT_MATCH_OPTIONS: frozenset[str] = frozenset({"size"})
"""Option groups whose values must match exactly (WebShop's ``EXACT_MATCH_OPTS``)."""

FUZZY_THRESHOLD = 85
"""A fuzzy match needs a ``token_set_ratio`` above this."""

try:  # pragma: no cover - exercised through MissingDependencyError when absent
    from rapidfuzz import fuzz as _fuzz
    from rapidfuzz import utils as _fuzz_utils
except ImportError:  # pragma: no cover
    _fuzz = None


def normalize_color(value: str) -> str:
    """The first word of :data:`~.vocabulary.COLOR_WORDS` contained in ``value``, else ``value`` (WebShop's rule)."""
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
    """thefuzz's ``token_set_ratio(a, b)``: ASCII-only, lowercased, punctuation-free strings, 0-100 rounded.

    Raises:
        MissingDependencyError: ``rapidfuzz`` is not installed (the ``webshop`` extra).
    """
    check_dependencies()
    return round(_fuzz.token_set_ratio(_process(a), _process(b)))


@dataclass(frozen=True)
class ProductText:
    """The lowercase texts of a product that attributes and options are looked up in, and its title nouns."""

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
        reward: The reward (in [0, 1], except above 1 when more options match than the goal has).
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
    product: Product, text: ProductText, goal: Goal, goal_nouns: Sequence[str]
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
    """How many selected options match the goal's or the product's text (see the module docstring)."""
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
    return matches


def compute_reward(
    product: Product,
    text: ProductText,
    goal: Goal,
    chosen: Mapping[str, str],
    goal_nouns: Sequence[str] | None = None,
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
