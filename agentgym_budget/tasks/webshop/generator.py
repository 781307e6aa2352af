"""The built-in catalog: a deterministic generator of WebShop-like products and instructions.

:func:`generate_catalog` makes ``num_products`` products of the types in
:mod:`.taxonomy` (brand, title, query, breadcrumb, 3-6 attributes, option groups
such as colour / size / flavour, a price or a price range) and instructions for a
sample of them (:mod:`.instructions`). The same ``(num_products, seed)`` always gives
the same catalog, in any process. Long texts (description, feature bullets, reviews,
rating) are generated on demand from the product's own seed, so a 100k-product catalog
keeps only the compact records in memory. :func:`cached_catalog` stores the records in
the on-disk cache, so each catalog is generated once per machine.

Instructions target distinct products, so the test, valid and train splits ask for
different products. There are ``min(num_products, 12_000)`` instructions by default
(WebShop has about 12k human instructions).

Example:
    >>> catalog = generate_catalog(200, seed=0)
    >>> len(catalog), len(catalog.goals), [len(catalog.goal_ids(s)) for s in ("train", "valid", "test")]
    (200, 200, [140, 40, 20])
    >>> generate_catalog(200, seed=0).products[7] == catalog.products[7]
    True
    >>> product = catalog.products[0]
    >>> len(product.asin), product.asin.startswith("B0"), product.category in {"beauty", "fashion", "food",
    ...     "electronics", "furniture"}
    (10, True, True)
"""

from __future__ import annotations

import dataclasses
import pickle
import random
import string
from collections.abc import Sequence
from pathlib import Path

from agentgym_budget.cache import cached_directory
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal, Product, ProductDetails, Review, format_price
from agentgym_budget.tasks.webshop.instructions import make_goal
from agentgym_budget.tasks.webshop.taxonomy import PRODUCT_TYPES, ProductType
from agentgym_budget.tasks.webshop.vocabulary import (
    ADJECTIVES,
    BRAND_HEADS,
    BRAND_TAILS,
    OPTION_POOLS,
    REVIEW_BODIES,
    REVIEW_TITLES,
)

__all__ = [
    "GENERATOR_VERSION",
    "MAX_GOALS",
    "MAX_PRODUCTS",
    "MIN_PRODUCTS",
    "astuple_shallow",
    "cached_catalog",
    "generate_catalog",
    "title_case",
]

GENERATOR_VERSION = 2
"""Bumped whenever the generator's output or the record classes change (part of every cache key)."""

MIN_PRODUCTS = 50
"""Smallest catalog the generator makes."""

MAX_PRODUCTS = 2_000_000
"""Largest catalog the generator makes."""

MAX_GOALS = 12_000
"""Default number of instructions of large catalogs."""

_CATALOG_FILE = "catalog.pickle"
_ASIN_CHARS = string.digits + string.ascii_uppercase
_GENDER = {"men's": "Men's", "women's": "Women's", "kids": "Kids", "toddler": "Toddler"}


def title_case(phrase: str) -> str:
    """Capitalise every word and hyphenated part: ``"t-shirt (pack of 2)"`` -> ``"T-Shirt (Pack Of 2)"``."""
    return " ".join("-".join(_capitalize(part) for part in word.split("-")) for word in phrase.split(" "))


def _capitalize(word: str) -> str:
    start = 1 if word[:1] in "('\"" else 0
    return word[:start] + word[start : start + 1].upper() + word[start + 1 :]


def _brands(category: str, seed: int) -> list[str]:
    names = sorted({head + tail for head in BRAND_HEADS for tail in BRAND_TAILS})
    rng = random.Random(f"webshop-brands-{category}-{seed}")
    return rng.sample(names, 150)


def _price(ptype: ProductType, rng: random.Random) -> float:
    low, high = ptype.price
    raw = low + (high - low) * rng.random() ** 1.6
    return max(0.99, round(raw) - rng.choice((0.01, 0.01, 0.01, 0.51, 0.05)))


def _make_product(index: int, ptype: ProductType, brand: str, asin: str, rng: random.Random) -> Product:
    attributes = tuple(sorted(rng.sample(ptype.attributes, min(len(ptype.attributes), rng.randint(3, 6)))))
    options = []
    for group, pool_name in ptype.options:
        if rng.random() < 0.85:
            pool = OPTION_POOLS[pool_name]
            count = rng.randint(2, min(len(pool), 8))
            chosen = sorted(rng.sample(range(len(pool)), count))
            options.append((group, tuple(pool[i] for i in chosen)))
    noun = rng.choice(ptype.nouns)
    parts = [brand]
    gender = next((label for key, label in _GENDER.items() if ptype.queries[0].startswith(key)), None)
    if gender and gender.lower() not in noun:
        parts.append(gender)
    if rng.random() < 0.5:
        parts.append(title_case(rng.choice(ADJECTIVES)))
    in_title = rng.sample(attributes, 2)
    if rng.random() < 0.6:
        parts.append(title_case(in_title[0]))
    if rng.random() < 0.7:
        parts.append(title_case(rng.choice(ptype.descriptors)))
    parts.append(title_case(noun))
    title = " ".join(parts)
    roll = rng.random()
    if roll < 0.35:
        title += " - " + title_case(in_title[1])
    elif roll < 0.55 and options:
        group, values = options[-1]
        title += ", " + title_case(values[0])
    price = _price(ptype, rng)
    if options and rng.random() < 0.15:
        high = round(price * rng.uniform(1.1, 1.6), 2)
        price_text = f"{format_price(price)} to {format_price(high)}"
        price = round(rng.uniform(price, high), 2)
    else:
        price_text = format_price(price)
    return Product(
        asin=asin,
        title=title,
        category=ptype.category,
        query=rng.choice(ptype.queries),
        product_category=ptype.breadcrumb,
        price=price,
        price_text=price_text,
        attributes=attributes,
        options=tuple(options),
    )


def _details(product: Product, ptype: ProductType, brand: str, rng: random.Random) -> ProductDetails:
    noun = ptype.nouns[0]
    attrs = list(product.attributes)
    rng.shuffle(attrs)
    sentences = [
        f"The {brand} {noun} is {rng.choice(ADJECTIVES)} {rng.choice(ptype.descriptors)} {noun} made {ptype.usage}.",
    ]
    for attr in attrs[: rng.randint(1, len(attrs))]:
        sentences.append(
            rng.choice(
                (
                    f"Designed with {attr} so you can count on it.",
                    f"Customers choose it for its {attr}.",
                    f"{title_case(attr)}: one more reason it stands out in its class.",
                    f"Every {noun} is checked by hand; {attr} is part of our promise.",
                )
            )
        )
    sentences.append(
        rng.choice(
            (
                f"Backed by {brand} customer service: contact us with any question about your {noun}.",
                "Please allow a small color difference due to lighting and monitor settings.",
                f"A great gift for friends and family who need a reliable {noun}.",
            )
        )
    )
    bullets = [f"{attr.upper()} - {rng.choice(ADJECTIVES)} design that makes daily use easy." for attr in attrs]
    bullets.insert(0, f"{title_case(rng.choice(ptype.descriptors))} {noun} {ptype.usage}.")
    if product.options:
        group, values = product.options[0]
        bullets.append(f"AVAILABLE IN {len(values)} {group.upper()} CHOICES: {', '.join(values)}.")
    reviews = []
    for _ in range(rng.choice((0, 1, 2, 2, 3, 4))):
        score = rng.choice((5, 5, 5, 4, 4, 3, 2, 1))
        title = rng.choice([t for s, t in REVIEW_TITLES if s == score])
        attr = rng.choice(product.attributes)
        body = rng.choice(REVIEW_BODIES[score]).format(noun=noun, attr=attr, Attr=attr[:1].upper() + attr[1:])
        reviews.append(Review(title=title, score=score, body=body))
    rating = f"{sum(r.score for r in reviews) / len(reviews):.1f}" if reviews else "N.A."
    return ProductDetails(" ".join(sentences), tuple(bullets), tuple(reviews), rating)


def _asin(rng: random.Random, taken: set[str]) -> str:
    while True:
        asin = "B0" + "".join(rng.choice(_ASIN_CHARS) for _ in range(8))
        if asin not in taken:
            taken.add(asin)
            return asin


def _check(num_products: int, seed: int, num_goals: int | None) -> int:
    for name, value, low, high in (
        ("num_products", num_products, MIN_PRODUCTS, MAX_PRODUCTS),
        ("seed", seed, 0, 2**63),
        ("num_goals", num_products if num_goals is None else num_goals, 1, num_products),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidOptionError(f"WebShop catalog: {name} must be an integer in [{low}, {high}], got {value!r}.")
    return min(num_products, MAX_GOALS) if num_goals is None else num_goals


def _assemble(
    products: list[Product], goals: list[Goal], type_of: list[int], brand_of: list[str], seed: int
) -> Catalog:
    def details_of(index: int) -> ProductDetails:
        ptype = PRODUCT_TYPES[type_of[index]]
        return _details(products[index], ptype, brand_of[index], random.Random(seed * 10_000_019 + index))

    size = len(products)
    fingerprint = {"source": "generated", "version": GENERATOR_VERSION, "size": size, "seed": seed}
    return Catalog(f"generated-{size}-seed{seed}", fingerprint, products, goals, details_of)


def _generate(num_products: int, seed: int, num_goals: int) -> tuple[list[Product], list[Goal], list[int], list[str]]:
    rng = random.Random(f"webshop-catalog-{seed}")
    brands = {cat: _brands(cat, seed) for cat in sorted({t.category for t in PRODUCT_TYPES})}
    type_of: list[int] = []
    brand_of: list[str] = []
    products: list[Product] = []
    taken: set[str] = set()
    for index in range(num_products):
        t = rng.randrange(len(PRODUCT_TYPES))
        ptype = PRODUCT_TYPES[t]
        brand = rng.choice(brands[ptype.category])
        products.append(_make_product(index, ptype, brand, _asin(rng, taken), rng))
        type_of.append(t)
        brand_of.append(brand)
    targets: Sequence[int] = rng.sample(range(num_products), num_goals)
    goals = [
        make_goal(f"ins-{n:05d}", products[i], PRODUCT_TYPES[type_of[i]], random.Random(f"goal-{seed}-{n}"))
        for n, i in enumerate(targets)
    ]
    return products, goals, type_of, brand_of


def generate_catalog(num_products: int, seed: int = 0, num_goals: int | None = None) -> Catalog:
    """Generate a catalog (see the module docstring).

    Args:
        num_products: Number of products, :data:`MIN_PRODUCTS` to :data:`MAX_PRODUCTS`.
        seed: Catalog seed; different seeds give different catalogs.
        num_goals: Number of instructions (default ``min(num_products, MAX_GOALS)``).

    Raises:
        InvalidOptionError: A size is out of range or not an integer.
    """
    num_goals = _check(num_products, seed, num_goals)
    return _assemble(*_generate(num_products, seed, num_goals), seed)


def cached_catalog(num_products: int, seed: int = 0, *, root: Path | None = None) -> Catalog:
    """:func:`generate_catalog` with the default instructions, stored in the on-disk cache.

    The first call generates the catalog and stores its records (plain tuples, pickled) under
    ``webshop-catalog`` in the cache (:func:`agentgym_budget.cache.cached_directory`); later calls,
    in any process, load them, which is about ten times faster than generating them again.

    Raises:
        InvalidOptionError: A size is out of range or not an integer.
    """
    num_goals = _check(num_products, seed, None)

    def build(folder: Path) -> None:
        products, goals, type_of, brand_of = _generate(num_products, seed, num_goals)
        parts = {
            "products": [astuple_shallow(p) for p in products],
            "goals": [astuple_shallow(g) for g in goals],
            "type_of": type_of,
            "brand_of": brand_of,
        }
        with (folder / _CATALOG_FILE).open("wb") as handle:
            pickle.dump(parts, handle, protocol=pickle.HIGHEST_PROTOCOL)

    params = {"version": GENERATOR_VERSION, "size": num_products, "seed": seed, "goals": num_goals}
    folder = cached_directory("webshop-catalog", params, build, root=root)
    with (folder / _CATALOG_FILE).open("rb") as handle:
        parts = pickle.load(handle)
    products = [Product(*row) for row in parts["products"]]
    goals = [Goal(*row) for row in parts["goals"]]
    return _assemble(products, goals, parts["type_of"], parts["brand_of"], seed)


def astuple_shallow(record: Product | Goal) -> tuple:
    """The field values of a record, in field order (nested values are kept as they are)."""
    return tuple(getattr(record, f.name) for f in dataclasses.fields(record))
