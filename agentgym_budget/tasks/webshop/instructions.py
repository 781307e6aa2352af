"""Instruction (goal) generation: what to buy, with which attributes and options, under which price.

An instruction is written for one target product. It names the product type, asks
for one to three of the product's attributes, for a value of some of its option
groups, and (usually) for a price bound chosen by WebShop's rule
(:func:`price_upper_for`): among the multiples of ten above the product's price, the
larger of two drawn from the first four, so the bound is 10 to 40 dollars above the price.
The text mixes WebShop's two styles: human-like sentences ("i need a machine wash
t-shirt in navy ...") and synthetic ones ("... with color: navy, and size: large").

Example:
    >>> import random
    >>> price_upper_for(23.5, random.Random(0))
    (60.0, ', and price lower than 60.00 dollars')
    >>> price_upper_for(995.0, random.Random(0))
    (1000000.0, '')
    >>> join_words(["a", "b", "c"])
    'a, b and c'
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from agentgym_budget.tasks.webshop.catalog import Goal, Product
from agentgym_budget.tasks.webshop.taxonomy import ProductType

__all__: list[str] = []

PRICE_STEPS: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))
"""Candidate price bounds (WebShop's ``PRICE_RANGE``)."""

NO_PRICE_BOUND = 1_000_000.0
"""``price_upper`` of instructions without a price bound."""


def price_upper_for(price: float, rng: random.Random) -> tuple[float, str]:
    """Draw a price bound for a product costing ``price``; returns the bound and its instruction text."""
    candidates = [step for step in PRICE_STEPS if step > price][:4]
    if len(candidates) < 2:
        return NO_PRICE_BOUND, ""
    upper = max(rng.sample(candidates, 2))
    return upper, f", and price lower than {upper:.2f} dollars"


def article(phrase: str) -> str:
    """``"a"`` or ``"an"`` for ``phrase``."""
    return "an" if phrase[:1] in "aeiou" else "a"


def join_words(words: Sequence[str]) -> str:
    """Join phrases as ``"a"``, ``"a and b"``, ``"a, b and c"``."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def noun_phrase(ptype: ProductType, noun: str) -> str:
    """The product type as an instruction names it, e.g. ``"men's t-shirt"``."""
    query = ptype.queries[0]
    for who in ("women's", "men's", "kids", "toddler"):
        if query.startswith(who) and not noun.startswith(who):
            return f"{who} {noun}"
    return noun


_OPTION_PHRASES = {
    "color": "in {v}",
    "size": "in size {v}",
    "flavor": "in {v} flavor",
    "scent": "with {v} scent",
}


def _option_text(groups: Sequence[str], values: Sequence[str], rng: random.Random) -> str:
    if not values:
        return ""
    if rng.random() < 0.5:
        return " with " + ", and ".join(f"{g}: {v}" for g, v in zip(groups, values, strict=True))
    return " " + join_words(
        [_OPTION_PHRASES.get(g, g + " {v}").format(v=v) for g, v in zip(groups, values, strict=True)]
    )


def _sentence(np: str, attrs: Sequence[str], rng: random.Random) -> str:
    wanted = join_words(attrs)
    return rng.choice(
        (
            f"i'm looking for {article(np)} {np} with {wanted}",
            f"i need {article(np)} {np} that has {wanted}",
            f"find me {article(np)} {np} with {wanted}",
            f"i want to buy {article(np)} {np} which has {wanted}",
            f"i would like {article(np)} {np} featuring {wanted}",
        )
    )


def make_goal(goal_id: str, product: Product, ptype: ProductType, rng: random.Random) -> Goal:
    """Write an instruction for ``product`` (of type ``ptype``).

    Args:
        goal_id: Task id of the instruction.
        product: The target product.
        ptype: Its product type (for the noun used in the text).
        rng: Source of randomness (the only one: same state, same goal).

    Returns:
        The goal. Buying ``product`` with the goal's options satisfies it fully (reward 1).
    """
    count = min(len(product.attributes), rng.choice((1, 2, 2, 3)))
    attrs = sorted(rng.sample(range(len(product.attributes)), count))
    attributes = tuple(product.attributes[i] for i in attrs)
    groups: list[str] = []
    values: list[str] = []
    for name, choices in product.options:
        if rng.random() < 0.8:
            groups.append(name)
            values.append(rng.choice(choices))
    noun = rng.choice(ptype.nouns)
    upper, price_text = price_upper_for(product.price, rng)
    text = _sentence(noun_phrase(ptype, noun), attributes, rng) + _option_text(groups, values, rng) + price_text
    return Goal(
        goal_id=goal_id,
        asin=product.asin,
        instruction=text,
        attributes=attributes,
        options=tuple(values),
        price_upper=upper,
        query=product.query,
        category=product.category,
        product_category=product.product_category,
        name=product.title,
        option_groups=tuple(groups),
    )
