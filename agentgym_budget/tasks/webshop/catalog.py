"""The data model of a shop: products, their detail pages, instructions (goals) and splits.

A :class:`Catalog` holds the products (compact :class:`Product` records, always in
memory), a way to get each product's long texts (:class:`ProductDetails`: description,
feature bullets, reviews; generated on demand for built-in catalogs, stored for real
data), the instructions (:class:`Goal`) and the train / valid / test split of the
instructions. Both sources of catalogs (:mod:`~.webshop.generator` and :mod:`.data`) produce one.

Splits follow WebShop's convention for its human instructions: after a fixed shuffle,
the first 500 instructions are the test split, the next 1,000 the valid split and the
rest the train split. Smaller instruction sets keep the same order with 10% / 20% / 70%
(:func:`split_bounds`).

Example:
    >>> split_bounds(12_087), split_bounds(1_000)
    ((500, 1500), (100, 300))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_budget.errors import UnknownSplitError

__all__ = ["Catalog"]

SPLITS: tuple[str, ...] = ("train", "valid", "test")
"""The instruction splits of every catalog."""

BREADCRUMB_SEP = "\u203a"
"""The character between the levels of a ``product_category`` breadcrumb (as on Amazon and in WebShop)."""


@dataclass(frozen=True, slots=True)
class Product:
    """The always-in-memory part of a product (WebShop's product record, minus long texts).

    Attributes:
        asin: Product id (10 characters, uppercase), shown on results pages.
        title: Product title (WebShop's ``Title``).
        category: WebShop category (``beauty``, ``electronics``, ``fashion``, ``food``, ``furniture``).
        query: The search query the product was listed under (lowercase).
        product_category: Breadcrumb, levels joined by :data:`BREADCRUMB_SEP` with spaces.
        price: The price used by the reward (for a price range, a fixed draw inside it).
        price_text: The price as displayed, e.g. ``"$12.99"`` or ``"$10.0 to $15.5"``.
        attributes: Attribute phrases (WebShop's ``Attributes``).
        options: Option groups: ``(name, values)`` pairs, names and values lowercase.
    """

    asin: str
    title: str
    category: str
    query: str
    product_category: str
    price: float
    price_text: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]

    def option_text(self) -> str:
        """Options as WebShop's search documents write them: ``"color: a, b, and size: s, m"``."""
        return ", and ".join(f"{name}: {', '.join(values)}" for name, values in self.options)


@dataclass(frozen=True, slots=True)
class Review:
    """One customer review: ``title``, ``score`` (1-5 stars) and ``body``."""

    title: str
    score: int
    body: str


@dataclass(frozen=True, slots=True)
class ProductDetails:
    """The long texts of a product's sub-pages.

    Attributes:
        description: The Description page (WebShop's ``Description``).
        bullet_points: The Features page (WebShop's ``BulletPoints``).
        reviews: The Reviews page.
        rating: Average rating as shown on the item page (``"N.A."`` when unknown).
    """

    description: str
    bullet_points: tuple[str, ...]
    reviews: tuple[Review, ...]
    rating: str


@dataclass(frozen=True)
class Goal:
    """One instruction: what to buy (WebShop's goal record).

    Attributes:
        goal_id: Task id (unique in the catalog).
        asin: The product the instruction was written for.
        instruction: The instruction text shown to the agent.
        attributes: Attribute phrases the purchase must have.
        options: Option values the purchase must be bought with.
        price_upper: Price bound in dollars (``1000000.0`` when the instruction states none).
        query: ``query`` of the target product (for the type reward).
        category: ``category`` of the target product.
        product_category: ``product_category`` of the target product (for the type reward).
        name: Title of the target product (for the type reward).
        option_groups: Group name of each option value (``""`` when unknown, as in WebShop's human data).
    """

    goal_id: str
    asin: str
    instruction: str
    attributes: tuple[str, ...]
    options: tuple[str, ...]
    price_upper: float
    query: str
    category: str
    product_category: str
    name: str
    option_groups: tuple[str, ...] = ()


def format_price(price: float) -> str:
    """WebShop's price tag for one price (``"$12.99"``, ``"$100.0"``).

    Example:
        >>> format_price(12.99), format_price(100)
        ('$12.99', '$100.0')
    """
    return f"${float(price)}"


def split_bounds(count: int) -> tuple[int, int]:
    """End of the test split and of the valid split in a shuffled list of ``count`` instructions."""
    test_end = min(500, max(1, round(count * 0.1)))
    valid_end = test_end + min(1000, max(1, round(count * 0.2)))
    return test_end, min(valid_end, count)


@dataclass
class Catalog:
    """A shop's products and instructions (see the module docstring).

    Attributes:
        name: Short description (e.g. ``"generated-10000-seed0"``), used in messages.
        fingerprint: Everything the contents depend on (cache key of the search index).
        products: The products, in index order.
        goals: Every instruction, in split order (test, valid, train after the shuffle).
        details_of: Returns the :class:`ProductDetails` of a product index.
        split_goals: Goal indices of each split.
    """

    name: str
    fingerprint: Mapping[str, Any]
    products: Sequence[Product]
    goals: Sequence[Goal]
    details_of: Callable[[int], ProductDetails]
    split_goals: Mapping[str, range] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.split_goals:
            test_end, valid_end = split_bounds(len(self.goals))
            self.split_goals = {
                "test": range(0, test_end),
                "valid": range(test_end, valid_end),
                "train": range(valid_end, len(self.goals)),
            }
        self.index_of_asin: dict[str, int] = {p.asin: i for i, p in enumerate(self.products)}
        self.goal_index: dict[str, int] = {g.goal_id: i for i, g in enumerate(self.goals)}
        self.details = functools.lru_cache(maxsize=4096)(self.details_of)

    def __len__(self) -> int:
        return len(self.products)

    def goal_ids(self, split: str) -> list[str]:
        """Task ids of ``split`` in order.

        Raises:
            UnknownSplitError: ``split`` is not one of :data:`SPLITS`.
        """
        if split not in self.split_goals:
            raise UnknownSplitError.for_split(split, SPLITS, f"the WebShop catalog {self.name}")
        return [self.goals[i].goal_id for i in self.split_goals[split]]

    def goal(self, goal_id: str) -> Goal:
        """The goal with id ``goal_id``."""
        return self.goals[self.goal_index[goal_id]]

    def search_document(self, index: int) -> str:
        """The text the search index holds for a product (WebShop's indexed fields), lowercase.

        Title, description, first feature bullet and the option text, as WebShop indexes them.
        """
        product = self.products[index]
        details = self.details_of(index)
        first_bullet = details.bullet_points[0] if details.bullet_points else ""
        return " ".join((product.title, details.description, first_bullet, product.option_text())).lower()
