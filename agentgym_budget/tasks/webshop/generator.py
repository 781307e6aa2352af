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
import functools
import json
import math
import random
import string
import typing
from collections.abc import Sequence
from pathlib import Path

from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal, Product, ProductDetails, Review, format_price
from agentgym_budget.tasks.webshop.instructions import make_goal
from agentgym_budget.tasks.webshop.reward import normalize_color
from agentgym_budget.tasks.webshop.storage import (
    load_or_rebuild,
    read_json,
)
from agentgym_budget.tasks.webshop.taxonomy import PRODUCT_TYPES, ProductType
from agentgym_budget.tasks.webshop.vocabulary import (
    ADJECTIVES,
    BRAND_HEADS,
    BRAND_TAILS,
    OPTION_POOLS,
    REVIEW_BODIES,
    REVIEW_TITLES,
)

__all__ = ["cached_catalog", "generate_catalog"]

GENERATOR_VERSION = 4
"""Bumped whenever the generator's output or the record classes change (part of every cache key)."""

MIN_PRODUCTS = 50
"""Smallest catalog the generator makes."""

MAX_PRODUCTS = 2_000_000
"""Largest catalog the generator makes."""

MAX_GOALS = 12_000
"""Default number of instructions of large catalogs."""

_CATALOG_FILE = "catalog.json"
_OPENING = "The {brand} {noun} is {adj} {desc} {noun} made {usage}."
_ATTRIBUTE_SENTENCES = (
    "Designed with {attr} so you can count on it.",
    "Customers choose it for its {attr}.",
    "{Attr}: one more reason it stands out in its class.",
    "Every {noun} is checked by hand; {attr} is part of our promise.",
)
_CLOSINGS = (
    "Backed by {brand} customer service: contact us with any question about your {noun}.",
    "Colours may vary a little from the pictures.",
    "A great gift for friends and family who need a reliable {noun}.",
)
_ATTRIBUTE_BULLET = "{ATTR} - {adj} design that makes daily use easy."
_FIRST_BULLET = "{Desc} {noun} {usage}."
_OPTIONS_BULLET = "CHOOSE YOUR {GROUPS} on the product page."
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


@functools.cache
def _type_text(ptype: ProductType) -> str:
    """Every fixed text a product of ``ptype`` can show in its title, bullets or description (lowercase)."""
    templates = (_OPENING, *_ATTRIBUTE_SENTENCES, *_CLOSINGS, _ATTRIBUTE_BULLET, _FIRST_BULLET, _OPTIONS_BULLET)
    parts = [*templates, *ADJECTIVES, *ptype.descriptors, *ptype.nouns, ptype.usage, *_GENDER.values()]
    parts += [group for group, _ in ptype.options]
    return " | ".join(parts).lower()


@functools.cache
def _forms(value: str) -> tuple[str, str]:
    return value, normalize_color(value)


def _absent_values(pool: tuple[str, ...], text: str) -> tuple[str, ...]:
    """Values of ``pool`` that neither appear in ``text`` nor colour-normalise to a word of it.

    WebShop's reward credits a bought option value found in the product's text whatever the
    instruction asked for, so generated text must not contain the values a product offers.
    """
    return tuple(v for v in pool if not any(form in text for form in _forms(v)))


@functools.cache
def _type_pool(ptype: ProductType, pool_name: str) -> tuple[str, ...]:
    return _absent_values(OPTION_POOLS[pool_name], _type_text(ptype))


def _make_product(index: int, ptype: ProductType, brand: str, asin: str, rng: random.Random) -> Product:
    attributes = tuple(sorted(rng.sample(ptype.attributes, min(len(ptype.attributes), rng.randint(3, 6)))))
    own_text = " | ".join((brand.lower(), *attributes))
    options = []
    for group, pool_name in ptype.options:
        if rng.random() < 0.85:
            pool = _absent_values(_type_pool(ptype, pool_name), own_text)
            if len(pool) < 2:
                continue
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
        _OPENING.format(brand=brand, noun=noun, adj=rng.choice(ADJECTIVES), desc=rng.choice(ptype.descriptors),
                        usage=ptype.usage),
    ]  # fmt: skip
    for attr in attrs[: rng.randint(1, len(attrs))]:
        sentences.append(rng.choice(_ATTRIBUTE_SENTENCES).format(attr=attr, Attr=title_case(attr), noun=noun))
    sentences.append(rng.choice(_CLOSINGS).format(brand=brand, noun=noun))
    bullets = [_ATTRIBUTE_BULLET.format(ATTR=attr.upper(), adj=rng.choice(ADJECTIVES)) for attr in attrs]
    bullets.insert(0, _FIRST_BULLET.format(Desc=title_case(rng.choice(ptype.descriptors)), noun=noun,
                                           usage=ptype.usage))  # fmt: skip
    if product.options:
        groups = " and ".join(group for group, _ in product.options)
        bullets.append(_OPTIONS_BULLET.format(GROUPS=groups.upper()))
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


def _generate(
    num_products: int, seed: int, num_goals: int, goals_per_product: int = 1
) -> tuple[list[Product], list[Goal], list[int], list[str]]:
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
    targets: Sequence[int] = rng.sample(range(num_products), num_goals) * goals_per_product
    goals = [
        make_goal(f"ins-{n:05d}", products[i], PRODUCT_TYPES[type_of[i]], random.Random(f"goal-{seed}-{n}"))
        for n, i in enumerate(targets)
    ]
    return products, goals, type_of, brand_of


def generate_catalog(
    num_products: int, seed: int = 0, num_goals: int | None = None, *, goals_per_product: int = 1
) -> Catalog:
    """Generate a catalog (see the module docstring).

    Args:
        num_products: Number of products, :data:`MIN_PRODUCTS` to :data:`MAX_PRODUCTS`.
        seed: Catalog seed; different seeds give different catalogs.
        num_goals: Number of target products (default ``min(num_products, MAX_GOALS)``).
        goals_per_product: Instructions written for each target (more than 1 only for
            WebShop-style data with several instructions per product; targets then recur
            across splits).

    Raises:
        InvalidOptionError: A size is out of range or not an integer.
    """
    num_goals = _check(num_products, seed, num_goals)
    if isinstance(goals_per_product, bool) or not isinstance(goals_per_product, int) or goals_per_product < 1:
        raise InvalidOptionError(
            f"WebShop catalog: goals_per_product must be a positive integer, got {goals_per_product!r}."
        )
    return _assemble(*_generate(num_products, seed, num_goals, goals_per_product), seed)


def cached_catalog(num_products: int, seed: int = 0, *, root: Path | None = None) -> Catalog:
    """:func:`generate_catalog` with the default instructions, stored in the on-disk cache.

    The first call generates the catalog and stores its records as JSON under
    ``webshop-catalog`` in the cache (:func:`agentgym_budget.storage.cache.cached_directory`); later calls,
    in any process, load and check them (:mod:`.storage`: a corrupt entry is rebuilt).

    Raises:
        InvalidOptionError: A size is out of range or not an integer.
    """
    num_goals = _check(num_products, seed, None)

    def build(folder: Path) -> None:
        products, goals, type_of, brand_of = _generate(num_products, seed, num_goals)
        columns = {
            "products": _columns(products, Product),
            "goals": _columns(goals, Goal),
            "type_of": type_of,
            "brand_of": brand_of,
        }
        (folder / _CATALOG_FILE).write_text(json.dumps(columns, separators=(",", ":")), encoding="utf-8")

    def load(folder: Path) -> Catalog:
        path = folder / _CATALOG_FILE
        parts = read_json(path, dict)
        products = _records(parts.get("products"), Product, num_products, path)
        goals = _records(parts.get("goals"), Goal, num_goals, path)
        type_of, brand_of = parts.get("type_of"), parts.get("brand_of")
        if (
            not isinstance(type_of, list)
            or len(type_of) != num_products
            or not all(type(t) is int and 0 <= t < len(PRODUCT_TYPES) for t in type_of)
        ):
            raise DataError(f"WebShop cache: {path}: 'type_of' must list a product type index per product.")
        if not isinstance(brand_of, list) or len(brand_of) != num_products or not all(type(b) is str for b in brand_of):
            raise DataError(f"WebShop cache: {path}: 'brand_of' must list a brand per product.")
        return _assemble(products, goals, type_of, brand_of, seed)

    params = {"version": GENERATOR_VERSION, "size": num_products, "seed": seed, "goals": num_goals}
    return load_or_rebuild("webshop-catalog", params, build, load, root=root)


_KINDS = {str: "text", float: "number", tuple[str, ...]: "texts", tuple[tuple[str, tuple[str, ...]], ...]: "groups"}


def _columns(records: Sequence[Product | Goal], cls: type) -> dict[str, list]:
    return {f.name: [getattr(r, f.name) for r in records] for f in dataclasses.fields(cls)}


def _column(values: object, kind: str, count: int) -> list | None:
    """``values`` converted for a record field of ``kind``, or ``None`` if they do not fit it."""
    if not isinstance(values, list) or len(values) != count:
        return None
    if kind == "text":
        return values if all(type(v) is str for v in values) else None
    if kind == "number":
        ok = all(type(v) in (int, float) and math.isfinite(v) for v in values)
        return [float(v) for v in values] if ok else None
    if kind == "texts":
        ok = all(type(v) is list and all(type(x) is str for x in v) for v in values)
        return [tuple(v) for v in values] if ok else None
    ok = all(
        type(v) is list
        and all(type(g) is list and len(g) == 2 and type(g[0]) is str and type(g[1]) is list for g in v)
        and all(type(x) is str for g in v for x in g[1])
        for v in values
    )
    return [tuple((g[0], tuple(g[1])) for g in v) for v in values] if ok else None


def _records(columns: object, cls: type, count: int, path: Path) -> list:
    """The ``cls`` records stored column by column, checked (:class:`DataError` when they do not fit)."""
    if not isinstance(columns, dict):
        raise DataError(f"WebShop cache: {path} lacks the {cls.__name__} records.")
    hints = typing.get_type_hints(cls)
    fields = []
    for field in dataclasses.fields(cls):
        values = _column(columns.get(field.name), _KINDS[hints[field.name]], count)
        if values is None:
            raise DataError(f"WebShop cache: {path}: the {cls.__name__} field {field.name!r} is missing or malformed.")
        fields.append(values)
    return [cls(*row) for row in zip(*fields, strict=True)]


def astuple_shallow(record: Product | Goal) -> tuple:
    """The field values of a record, in field order (nested values are kept as they are)."""
    return tuple(getattr(record, f.name) for f in dataclasses.fields(record))
