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
``load_products`` / ``get_goals`` do, accepting every field shape that loader accepts:
products with an ``"nan"``, over-long or repeated ASIN are skipped; ``customization_options``
may be an object, ``null`` or ``""`` (groups set to ``null`` are skipped); option values are
lowercased with ``/`` written as ``" | "``; ``small_description`` may be a list or one string;
``pricing`` may be missing or empty (``$100.0``); a product's attributes come from
``items_ins_v2`` when its entry has an ``attributes`` key (an empty list stays empty), else
``["DUMMY_ATTR"]``; a review's body is its ``review`` text. Beyond that loader, missing
``category`` / ``query`` / ``product_category`` / ``full_description`` read as empty and
``null`` bullets as none. A price range's price is a fixed draw inside it (drawn from the
ASIN: the same in every run, where WebShop draws it anew in each process). Every instruction
gets WebShop's price bound (:func:`~.instructions.price_upper_for`, drawn per product) and
``", and price lower than X dollars"`` text. Human goals are made from each instruction with
attributes (its text with dots stripped from the ends); synthetic goals from every option
combination of each product with an instruction, all with the product's one price bound.
The goals are shuffled as WebShop does (``random.Random(233)``) and split by index as
WebShop's baselines do: goals 0-499 are the test split, 500-1,499 the valid split, the rest
the train split (:data:`DATA_SPLITS`). Task ids are ``human-<n>`` / ``synthetic-<n>``, ``n``
being the index after the shuffle (WebShop's session index).

Malformed content raises :class:`~agentgym_budget.errors.DataError` naming the file, the
product or instruction, and the field. :func:`~.export.export_webshop_data` writes a catalog
in the same format and :func:`~.export.example_data_dir` keeps a generated example folder.

Example:
    >>> parse_pricing("$10.00 - $15.50", "file.json", 0)
    [10.0, 15.5]
    >>> parse_pricing("", "file.json", 0)
    [100.0]
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.safe_json import read_json_file, resolve_user_path
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal, Product, ProductDetails, Review, format_price
from agentgym_budget.tasks.webshop.export import example_data_dir, export_webshop_data
from agentgym_budget.tasks.webshop.instructions import price_upper_for

__all__ = ["example_data_dir", "export_webshop_data", "load_webshop_data"]

LOADER_VERSION = 2
"""Bumped whenever the loader's output changes (part of the index cache key)."""

GOAL_SOURCES: tuple[str, ...] = ("human", "synthetic")
"""Accepted ``goals`` values."""

GOAL_SHUFFLE_SEED = 233
"""WebShop's goal shuffle seed."""

DATA_SPLITS: Mapping[str, tuple[int, int | None]] = {"test": (0, 500), "valid": (500, 1500), "train": (1500, None)}
"""Goal index ranges of each split for data files (WebShop's baselines: test 0-499, valid 500-1,499)."""

_NOT_PRICE = re.compile(r"[^\d.]")
_TEXT_KEYS = ("category", "query", "product_category")


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
    return read_json_file(path, what="WebShop data", expected=expected, max_bytes=2**40)


def parse_pricing(pricing: str | None, path: str, position: int) -> list[float]:
    """WebShop's price list from a ``pricing`` text (``[100.0]`` when missing or empty)."""
    if not pricing:
        return [100.0]
    if not isinstance(pricing, str):
        raise DataError(f"WebShop data: {path}, product #{position}: 'pricing' must be a string, got {pricing!r}.")
    try:
        prices = [float(Decimal(_NOT_PRICE.sub("", part))) for part in pricing.split("$")[1:]]
    except InvalidOperation as err:
        raise DataError(f"WebShop data: {path}, product #{position}: cannot read the price {pricing!r}.") from err
    if not prices:
        raise DataError(f"WebShop data: {path}, product #{position}: no '$' price in 'pricing' {pricing!r}.")
    return prices[:2]


def _text(raw: Mapping[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DataError(f"{where}: {key!r} must be a string, got {type(value).__name__} {value!r:.60}.")
    return value


def _options(raw: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not raw:  # null, "", {} and [] all mean "no options", as in WebShop's loader
        return ()
    if not isinstance(raw, dict):
        raise DataError(f"{where}: 'customization_options' must be an object, null or \"\", got {raw!r:.60}.")
    options = []
    for group, contents in raw.items():
        if contents is None:
            continue
        if not isinstance(contents, list) or not all(
            isinstance(c, dict) and isinstance(c.get("value"), str) for c in contents
        ):
            raise DataError(f"{where}: customization option {group!r} must be a list of {{'value': str}}.")
        options.append((group.lower(), tuple(c["value"].strip().replace("/", " | ").lower() for c in contents)))
    return tuple(options)


def _bullets(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list) or not all(isinstance(b, str) for b in raw):
        raise DataError(f"{where}: 'small_description' must be a list of strings or a string, got {raw!r:.60}.")
    return tuple(raw)


def _attributes(entry: Any, asin: str, path: Path) -> tuple[str, ...]:
    if entry is None:
        return ("DUMMY_ATTR",)
    if not isinstance(entry, dict):
        raise DataError(f"WebShop data: {path}, asin {asin}: expected a JSON object, got {entry!r:.60}.")
    if "attributes" not in entry:
        return ("DUMMY_ATTR",)
    return tuple(_check_list(entry["attributes"], path, f"asin {asin} 'attributes'"))


def _product(raw: Any, position: int, path: Path, attr_path: Path, attributes: Mapping[str, Any]) -> tuple[Product, ProductDetails]:  # fmt: skip
    where = f"WebShop data: {path}, product #{position}"
    asin = raw["asin"]
    where += f" (asin {asin})"
    title = raw.get("name")
    if not isinstance(title, str):
        raise DataError(f"{where}: 'name' must be a string, got {title!r:.60}.")
    prices = parse_pricing(raw.get("pricing"), str(path), position)
    if len(prices) == 1:
        price, price_text = prices[0], format_price(prices[0])
    else:
        price = random.Random(f"webshop-price-{asin}").uniform(prices[0], prices[1])
        price_text = f"{format_price(prices[0])} to {format_price(prices[1])}"
    texts = {key: _text(raw, key, where) for key in _TEXT_KEYS}
    product = Product(
        asin=asin,
        title=title,
        category=texts["category"],
        query=texts["query"].lower().strip(),
        product_category=texts["product_category"],
        price=price,
        price_text=price_text,
        attributes=_attributes(attributes.get(asin), asin, attr_path),
        options=_options(raw.get("customization_options"), where),
    )
    details = ProductDetails(
        _text(raw, "full_description", where), _bullets(raw.get("small_description"), where), (), "N.A."
    )
    return product, details


def _reviews(path: Path) -> dict[str, tuple[tuple[Review, ...], str]]:
    out = {}
    for position, entry in enumerate(_read_json(path, list)):
        where = f"WebShop data: {path}, entry #{position}"
        if not isinstance(entry, dict) or not isinstance(entry.get("asin"), str):
            raise DataError(f"{where} needs an 'asin' string.")
        raw_reviews = entry.get("reviews") or []
        if not isinstance(raw_reviews, list):
            raise DataError(f"{where}: 'reviews' must be a list, got {raw_reviews!r:.60}.")
        reviews = []
        for k, review in enumerate(raw_reviews):
            if not isinstance(review, dict):
                raise DataError(f"{where}, review #{k}: each review must be a JSON object.")
            score = review.get("score", review.get("stars", 0))
            try:
                score = int(float(score))
            except (TypeError, ValueError) as err:
                raise DataError(f"{where}, review #{k}: 'score' {score!r} is not a number.") from err
            body = review["review"] if "review" in review else review.get("body", "")
            reviews.append(Review(str(review.get("title", "")), score, str(body)))
        out[entry["asin"]] = (tuple(reviews), str(entry.get("average_rating", "N.A.")))
    return out


def _check_list(value: Any, path: Path, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"WebShop data: {path}, {where} must be a list of strings, got {value!r:.80}.")
    return value


def _goal(product: Product, text: str, attributes: Sequence[str], options: Sequence[str], groups: Sequence[str],
          bound: tuple[float, str]) -> Goal:  # fmt: skip
    upper, price_text = bound
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
            bound = price_upper_for(product.price, random.Random(f"webshop-human-{product.asin}-{k}"))
            goals.append(_goal(product, entry["instruction"].strip("."), attrs, opts, (), bound))
    return goals


def _synthetic_goals(products: Sequence[Product], table: Mapping[str, Any], path: Path) -> list[Goal]:
    goals = []
    for product in products:
        entry = table.get(product.asin)
        if not isinstance(entry, dict) or entry.get("instruction") is None:
            continue
        if not isinstance(entry["instruction"], str):
            raise DataError(f"WebShop data: {path}, asin {product.asin}: 'instruction' must be a string.")
        attrs = _check_list(entry.get("instruction_attributes"), path, f"asin {product.asin} 'instruction_attributes'")
        if not attrs:
            continue
        bound = price_upper_for(product.price, random.Random(f"webshop-synthetic-{product.asin}"))
        groups = sorted(product.options, key=lambda g: g[0])
        names = [name for name, _ in groups]
        for combination in itertools.product(*(values for _, values in groups)):
            option_text = ", and ".join(f"{g}: {v}" for g, v in zip(names, combination, strict=True))
            text = entry["instruction"] + (f" with {option_text}" if option_text else "")
            goals.append(_goal(product, text, attrs, combination, names, bound))
    return goals


def _split_goals(count: int) -> dict[str, range]:
    return {
        split: range(min(start, count), count if end is None else min(end, count))
        for split, (start, end) in DATA_SPLITS.items()
    }


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
    root = resolve_user_path(root, what="WebShop data")
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
        if not isinstance(raw, dict) or not isinstance(raw.get("asin"), str):
            raise DataError(
                f"WebShop data: {files['products']}, product #{position}: expected a JSON object with an 'asin' "
                f"string, got {raw!r:.80}."
            )
        asin = raw["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        product, detail = _product(raw, position, files["products"], files["attributes"], attributes)
        if asin in reviews:
            detail = ProductDetails(detail.description, detail.bullet_points, *reviews[asin])
        seen.add(asin)
        products.append(product)
        details.append(detail)
    if not products:
        raise DataError(f"WebShop data: {files['products']} holds no usable product.")
    made = (
        _human_goals(products, files["human"])
        if goals == "human"
        else _synthetic_goals(products, attributes, files["attributes"])
    )
    if not made:
        raise DataError(
            f"WebShop data: no {goals} instruction with attributes for the {len(products)} products of "
            f"{files['products'].name}."
        )
    random.Random(GOAL_SHUFFLE_SEED).shuffle(made)
    final = [dataclasses.replace(g, goal_id=f"{goals}-{n:05d}") for n, g in enumerate(made)]
    return Catalog(
        f"webshop-data:{root.name}", fingerprint, products, final, details.__getitem__, _split_goals(len(final))
    )
