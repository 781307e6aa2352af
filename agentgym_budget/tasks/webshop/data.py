"""Loading the real WebShop data files (and writing catalogs in their format).

WebShop's data folder holds (the small versions end in ``_1000``):

* ``items_shuffle.json``: a list of products with ``asin``, ``name``, ``category``,
  ``query``, ``product_category``, ``full_description``, ``small_description``
  (feature bullets), ``pricing`` (``"$12.99"`` or ``"$10.00 - $15.00"``) and
  ``customization_options`` (``{group: [{"value": ...}, ...]}`` or ``null``);
* ``items_ins_v2.json``: ``{asin: {"attributes": [...], "instruction": ...,
  "instruction_attributes": [...]}}``;
* ``items_human_ins.json``: ``{asin: [{"instruction": ..., "instruction_attributes":
  [...], "instruction_options": [...]}, ...]}`` (human instructions);
* optionally ``reviews.json``: ``[{"asin": ..., "reviews": [{"title", "score" or
  "stars", "body" or "review"}], "average_rating": ...}]``.

:func:`load_webshop_data` turns them into a :class:`~.catalog.Catalog` the way WebShop's
``load_products`` / ``get_goals`` do: products with an invalid or repeated ASIN are
skipped, options are lowercased with ``/`` written as ``" | "``, products without
attributes get ``["DUMMY_ATTR"]``, a price range's price is a fixed draw inside it (drawn
from the ASIN, so it is the same in every run), and every instruction gets WebShop's
price bound and ``", and price lower than X dollars"`` text. Human goals are made from
each instruction with attributes; synthetic goals from each option combination of each
product with an instruction. The goals are shuffled as WebShop does
(``random.Random(233)``), and the first 500 form the test split, the next 1,000 the valid
split (:func:`~.catalog.split_bounds`). Task ids are ``human-<n>`` / ``synthetic-<n>``,
``n`` being the position after the shuffle (WebShop's session index).

:func:`export_webshop_data` writes a catalog (e.g. a generated one) in the same format, and
:func:`example_data_dir` keeps a small generated catalog in that format in the cache, for
tests and demos of :class:`~.env.WebShopDataEnv`.

Example:
    >>> parse_pricing("$10.00 - $15.50", "file.json", 0)
    [10.0, 15.5]
    >>> parse_pricing("", "file.json", 0)
    [100.0]
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from agentgym_budget.cache import cached_directory
from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal, Product, ProductDetails, Review, format_price
from agentgym_budget.tasks.webshop.instructions import price_upper_for

__all__ = [
    "GOAL_SOURCES",
    "LOADER_VERSION",
    "data_fingerprint",
    "example_data_dir",
    "export_webshop_data",
    "find_data_files",
    "load_webshop_data",
    "parse_pricing",
]

LOADER_VERSION = 1
"""Bumped whenever the loader's output changes (part of the index cache key)."""

GOAL_SOURCES: tuple[str, ...] = ("human", "synthetic")
"""Accepted ``goals`` values."""

GOAL_SHUFFLE_SEED = 233
"""WebShop's goal shuffle seed."""

_NOT_PRICE = re.compile(r"[^\d.]")
_PRODUCT_KEYS: Mapping[str, type | tuple[type, ...]] = {
    "asin": str,
    "name": str,
    "category": str,
    "query": str,
    "product_category": str,
    "full_description": (str, type(None)),
    "small_description": (list, str, type(None)),
    "customization_options": (dict, type(None)),
}


def _candidates(root: Path, stem: str) -> list[Path]:
    exact = [root / f"{stem}.json", root / f"{stem}_1000.json"]
    for path in exact:
        if path.is_file():
            return [path]
    return sorted(root.glob(f"{stem}*.json"))


def find_data_files(root: Path, goals: str = "human") -> dict[str, Path]:
    """The data files of ``root``: ``products``, ``attributes``, and ``human`` / ``reviews`` when present.

    ``items_shuffle.json`` is preferred to ``items_shuffle_1000.json``, then to any single
    other ``items_shuffle*.json`` (the same for ``items_ins_v2``).

    Raises:
        DataError: ``root`` is not a folder, a required file is missing, or the choice is ambiguous.
    """
    if not root.is_dir():
        raise DataError(f"WebShop data: {root} is not a folder; pass data_dir= the folder holding items_shuffle*.json.")
    files: dict[str, Path] = {}
    required = {"products": "items_shuffle", "attributes": "items_ins_v2"}
    if goals == "human":
        required["human"] = "items_human_ins"
    for role, stem in required.items():
        found = _candidates(root, stem)
        if not found:
            raise DataError(
                f"WebShop data: no {stem}*.json in {root}. Expected WebShop's data files "
                "(items_shuffle.json, items_ins_v2.json and, for human goals, items_human_ins.json)."
            )
        if len(found) > 1:
            raise DataError(
                f"WebShop data: several {stem}*.json files in {root} ({', '.join(p.name for p in found)}); "
                f"keep one, or name one {stem}.json."
            )
        files[role] = found[0]
    if (root / "reviews.json").is_file():
        files["reviews"] = root / "reviews.json"
    return files


def data_fingerprint(root: Path, goals: str, num_products: int | None) -> dict[str, Any]:
    """What a loaded catalog depends on: the files (path, size, modification time) and the arguments."""
    if goals not in GOAL_SOURCES:
        raise InvalidOptionError(f"WebShop data: goals must be one of {GOAL_SOURCES}, got {goals!r}.")
    if num_products is not None and (
        isinstance(num_products, bool) or not isinstance(num_products, int) or num_products < 1
    ):
        raise InvalidOptionError(
            f"WebShop data: num_products must be a positive integer or None, got {num_products!r}."
        )
    stats = {}
    for role, path in sorted(find_data_files(root, goals).items()):
        stat = path.stat()
        stats[role] = [str(path), stat.st_size, stat.st_mtime_ns]
    return {
        "source": "webshop-data",
        "version": LOADER_VERSION,
        "files": stats,
        "goals": goals,
        "num_products": num_products,
    }


def _read_json(path: Path, expected: type) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            value = json.load(handle)
    except json.JSONDecodeError as err:
        raise DataError(f"WebShop data: {path} is not valid JSON ({err}).") from err
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"WebShop data: cannot read {path} ({err}).") from err
    if not isinstance(value, expected):
        raise DataError(
            f"WebShop data: {path} holds a JSON {type(value).__name__}; expected a JSON "
            f"{'list' if expected is list else 'object'} at the top level."
        )
    return value


def parse_pricing(pricing: str | None, path: str, position: int) -> list[float]:
    """WebShop's price list from a ``pricing`` text (``[100.0]`` when empty)."""
    if not pricing:
        return [100.0]
    if not isinstance(pricing, str):
        raise DataError(f"WebShop data: {path}, product #{position}: 'pricing' must be a string, got {pricing!r}.")
    try:
        prices = [float(Decimal(_NOT_PRICE.sub("", part))) for part in pricing.split("$")[1:]]
    except InvalidOperation as err:
        raise DataError(f"WebShop data: {path}, product #{position}: cannot read the price {pricing!r}.") from err
    return prices[:2] or [100.0]


def _product(raw: Any, position: int, path: Path, attributes: Mapping[str, Any]) -> tuple[Product, ProductDetails]:
    where = f"WebShop data: {path}, product #{position}"
    if not isinstance(raw, dict):
        raise DataError(f"{where} is a {type(raw).__name__}; expected a JSON object.")
    for key, kind in _PRODUCT_KEYS.items():
        if key not in raw:
            raise DataError(f"{where} (asin {raw.get('asin')!r}) lacks the key {key!r}.")
        if not isinstance(raw[key], kind):
            raise DataError(
                f"{where} (asin {raw.get('asin')!r}): {key!r} has the wrong type ({type(raw[key]).__name__})."
            )
    asin = raw["asin"]
    prices = parse_pricing(raw.get("pricing"), str(path), position)
    if len(prices) == 1:
        price, price_text = prices[0], format_price(prices[0])
    else:
        price = random.Random(f"webshop-price-{asin}").uniform(prices[0], prices[1])
        price_text = f"{format_price(prices[0])} to {format_price(prices[1])}"
    options = []
    for group, contents in (raw["customization_options"] or {}).items():
        if contents is None:
            continue
        if not isinstance(contents, list) or not all(
            isinstance(c, dict) and isinstance(c.get("value"), str) for c in contents
        ):
            raise DataError(
                f"{where} (asin {asin}): customization option {group!r} must be a list of {{'value': str}}."
            )
        options.append((group.lower(), tuple(c["value"].strip().replace("/", " | ").lower() for c in contents)))
    entry = attributes.get(asin)
    attrs = entry.get("attributes") if isinstance(entry, dict) else None
    bullets = raw["small_description"]
    bullets = bullets if isinstance(bullets, list) else [bullets or ""]
    product = Product(
        asin=asin,
        title=raw["name"],
        category=raw["category"],
        query=raw["query"].lower().strip(),
        product_category=raw["product_category"],
        price=price,
        price_text=price_text,
        attributes=tuple(str(a) for a in attrs) if attrs else ("DUMMY_ATTR",),
        options=tuple(options),
    )
    details = ProductDetails(raw["full_description"] or "", tuple(str(b) for b in bullets), (), "N.A.")
    return product, details


def _reviews(path: Path) -> dict[str, tuple[tuple[Review, ...], str]]:
    out = {}
    for position, entry in enumerate(_read_json(path, list)):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("asin"), str)
            or not isinstance(entry.get("reviews"), list)
        ):
            raise DataError(f"WebShop data: {path}, entry #{position} needs 'asin' (str) and 'reviews' (list).")
        reviews = []
        for review in entry["reviews"]:
            if not isinstance(review, dict):
                raise DataError(f"WebShop data: {path}, entry #{position}: each review must be a JSON object.")
            score = review.get("score", review.get("stars", 0))
            try:
                score = int(float(score))
            except (TypeError, ValueError) as err:
                raise DataError(
                    f"WebShop data: {path}, entry #{position}: review score {score!r} is not a number."
                ) from err
            reviews.append(
                Review(str(review.get("title", "")), score, str(review.get("body", review.get("review", ""))))
            )
        out[entry["asin"]] = (tuple(reviews), str(entry.get("average_rating", "N.A.")))
    return out


def _check_list(value: Any, path: Path, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"WebShop data: {path}, {where} must be a list of strings, got {value!r:.80}.")
    return value


def _goal(product: Product, text: str, attributes: Sequence[str], options: Sequence[str], groups: Sequence[str],
          rng: random.Random) -> Goal:  # fmt: skip
    upper, price_text = price_upper_for(product.price, rng)
    return Goal(
        goal_id="",
        asin=product.asin,
        instruction=text + price_text,
        attributes=tuple(attributes),
        options=tuple(options),
        price_upper=upper,
        query=product.query,
        category=product.category,
        product_category=product.product_category,
        name=product.title,
        option_groups=tuple(groups),
    )


def _human_goals(products: Sequence[Product], path: Path) -> list[Goal]:
    table = _read_json(path, dict)
    goals = []
    for product in products:
        entries = table.get(product.asin)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise DataError(f"WebShop data: {path}, asin {product.asin}: expected a list of instructions.")
        for k, entry in enumerate(entries):
            where = f"asin {product.asin} instruction #{k}"
            if not isinstance(entry, dict) or not isinstance(entry.get("instruction"), str):
                raise DataError(f"WebShop data: {path}, {where} needs an 'instruction' string.")
            attrs = _check_list(entry.get("instruction_attributes"), path, f"{where} 'instruction_attributes'")
            if not attrs:
                continue
            opts = _check_list(entry.get("instruction_options"), path, f"{where} 'instruction_options'")
            rng = random.Random(f"webshop-human-{product.asin}-{k}")
            goals.append(_goal(product, entry["instruction"].strip().strip("."), attrs, opts, (), rng))
    return goals


def _synthetic_goals(products: Sequence[Product], table: Mapping[str, Any], path: Path) -> list[Goal]:
    goals = []
    for product in products:
        entry = table.get(product.asin)
        if not isinstance(entry, dict) or not entry.get("instruction"):
            continue
        attrs = _check_list(entry.get("instruction_attributes"), path, f"asin {product.asin} 'instruction_attributes'")
        if not attrs:
            continue
        groups = sorted(product.options, key=lambda g: g[0])
        names = [name for name, _ in groups]
        for combination in itertools.product(*(values for _, values in groups)):
            option_text = ", and ".join(f"{g}: {v}" for g, v in zip(names, combination, strict=True))
            text = str(entry["instruction"]) + (f" with {option_text}" if option_text else "")
            rng = random.Random(f"webshop-synthetic-{product.asin}-{'|'.join(combination)}")
            goals.append(_goal(product, text, attrs, combination, names, rng))
    return goals


def load_webshop_data(root: Path | str, *, goals: str = "human", num_products: int | None = None) -> Catalog:
    """Load a WebShop data folder into a catalog (see the module docstring).

    Args:
        root: The data folder.
        goals: ``"human"`` or ``"synthetic"`` instructions.
        num_products: Keep only the first products of the file (``None`` for all).

    Raises:
        DataError: A file is missing or malformed; the message names the file and the problem.
        InvalidOptionError: ``goals`` or ``num_products`` is invalid.
    """
    root = Path(root).expanduser().resolve()
    fingerprint = data_fingerprint(root, goals, num_products)
    files = find_data_files(root, goals)
    raw_products = _read_json(files["products"], list)
    attributes = _read_json(files["attributes"], dict)
    reviews = _reviews(files["reviews"]) if "reviews" in files else {}
    if num_products is not None:
        raw_products = raw_products[:num_products]
    products: list[Product] = []
    details: list[ProductDetails] = []
    seen: set[str] = set()
    for position, raw in enumerate(raw_products):
        asin = raw.get("asin") if isinstance(raw, dict) else None
        if isinstance(asin, str) and (asin == "nan" or len(asin) > 10 or asin in seen):
            continue
        product, detail = _product(raw, position, files["products"], attributes)
        if product.asin in reviews:
            detail = ProductDetails(detail.description, detail.bullet_points, *reviews[product.asin])
        seen.add(product.asin)
        products.append(product)
        details.append(detail)
    if not products:
        raise DataError(f"WebShop data: {files['products']} holds no usable product.")
    made = (
        _human_goals(products, files["human"])
        if goals == "human"
        else _synthetic_goals(products, attributes, files["attributes"])
    )
    if len(made) < 3:
        raise DataError(
            f"WebShop data: only {len(made)} {goals} instructions with attributes for the {len(products)} products "
            f"of {files['products'].name}; at least 3 are needed to form the train / valid / test splits."
        )
    random.Random(GOAL_SHUFFLE_SEED).shuffle(made)
    final = [dataclasses.replace(g, goal_id=f"{goals}-{n:05d}") for n, g in enumerate(made)]
    return Catalog(f"webshop-data:{root.name}", fingerprint, products, final, details.__getitem__)


def export_webshop_data(catalog: Catalog, folder: Path | str) -> dict[str, Path]:
    """Write ``catalog`` as WebShop data files (``items_shuffle.json``, ``items_ins_v2.json``,
    ``items_human_ins.json``, ``reviews.json``) into ``folder``; returns the paths by role.

    Each goal becomes a human instruction (its text without the price clause), so loading the
    folder back gives the same products and instructions (with freshly drawn price bounds); the
    first goal of a product also becomes its synthetic instruction in ``items_ins_v2.json``.
    """
    from agentgym_budget.tasks.webshop.expert import strip_price

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    items, attrs, human, reviews = [], {}, {}, []
    for index, product in enumerate(catalog.products):
        details = catalog.details(index)
        low, _, high = product.price_text.partition(" to ")
        items.append(
            {
                "asin": product.asin,
                "name": product.title,
                "category": product.category,
                "query": product.query,
                "product_category": product.product_category,
                "full_description": details.description,
                "small_description": list(details.bullet_points),
                "pricing": f"{low} - {high}" if high else low,
                "customization_options": {g: [{"value": v, "image": None} for v in vs] for g, vs in product.options}
                or None,
                "images": [],
            }
        )
        attrs[product.asin] = {
            "attributes": list(product.attributes),
            "instruction": None,
            "instruction_attributes": None,
        }
        reviews.append(
            {
                "asin": product.asin,
                "reviews": [{"title": r.title, "score": r.score, "body": r.body} for r in details.reviews],
                "average_rating": details.rating,
            }
        )
    for goal in catalog.goals:
        if attrs[goal.asin]["instruction"] is None:
            attrs[goal.asin].update(
                instruction=strip_price(goal.instruction), instruction_attributes=list(goal.attributes)
            )
        human.setdefault(goal.asin, []).append(
            {
                "asin": goal.asin,
                "instruction": strip_price(goal.instruction),
                "instruction_attributes": list(goal.attributes),
                "instruction_options": list(goal.options),
            }
        )
    paths = {
        "products": folder / "items_shuffle.json",
        "attributes": folder / "items_ins_v2.json",
        "human": folder / "items_human_ins.json",
        "reviews": folder / "reviews.json",
    }
    for role, value in (("products", items), ("attributes", attrs), ("human", human), ("reviews", reviews)):
        paths[role].write_text(json.dumps(value, indent=1))
    return paths


def example_data_dir(num_products: int = 300, seed: int = 0, *, root: Path | None = None) -> Path:
    """A folder of WebShop data files made from a generated catalog (built once, cached on disk).

    Example:
        >>> folder = example_data_dir(60)
        >>> sorted(p.name for p in folder.glob("*.json") if p.name != "key.json")
        ['items_human_ins.json', 'items_ins_v2.json', 'items_shuffle.json', 'reviews.json']
        >>> len(load_webshop_data(folder)), len(load_webshop_data(folder).goals)
        (60, 60)
    """
    from agentgym_budget.tasks.webshop.generator import GENERATOR_VERSION, generate_catalog

    params = {"generator": GENERATOR_VERSION, "loader": LOADER_VERSION, "size": num_products, "seed": seed}
    return cached_directory(
        "webshop-example-data",
        params,
        lambda path: export_webshop_data(generate_catalog(num_products, seed), path),
        root=root,
    )
