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
product or instruction, and the field (the product and review records are read by
:mod:`._data_records`). :func:`~.export.export_webshop_data` writes a catalog in the same
format and :func:`~.export.example_data_dir` keeps a generated example folder.

Example:
    >>> catalog = load_webshop_data(example_data_dir(60), goals="human")
    >>> [len(catalog.goal_ids(split)) for split in DATA_SPLITS]
    [500, 1000, 300]
    >>> catalog.goals[0].goal_id
    'human-00000'
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError, InvalidOptionError
from agentgym_budget.storage.safe_json import resolve_user_path, stat_regular_file
from agentgym_budget.tasks.webshop._data_records import (
    check_string_list,
    read_data_json,
    read_product,
    read_reviews,
)
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal, Product, ProductDetails
from agentgym_budget.tasks.webshop.export import (
    example_data_dir as example_data_dir,
)
from agentgym_budget.tasks.webshop.export import (
    export_webshop_data as export_webshop_data,
)
from agentgym_budget.tasks.webshop.instructions import price_upper_for

__all__: list[str] = []

LOADER_VERSION = 2
"""Bumped whenever the loader's output changes (part of the index cache key)."""

GOAL_SOURCES: tuple[str, ...] = ("human", "synthetic")
"""Accepted ``goals`` values."""

GOAL_SHUFFLE_SEED = 233
"""WebShop's goal shuffle seed."""

DATA_SPLITS: Mapping[str, tuple[int, int | None]] = {"test": (0, 500), "valid": (500, 1500), "train": (1500, None)}
"""Goal index ranges of each split for data files (WebShop's baselines: test 0-499, valid 500-1,499)."""


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
        info = stat_regular_file(path, what="WebShop data")
        stats[role] = [str(path), info.st_size, info.st_mtime_ns]
    return {
        "source": "webshop-data",
        "version": LOADER_VERSION,
        "files": stats,
        "goals": goals,
        "num_products": num_products,
    }


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
    table = read_data_json(path, dict)
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
            attrs = check_string_list(entry.get("instruction_attributes"), path, f"{where} 'instruction_attributes'")
            if not attrs:
                continue
            opts = check_string_list(entry.get("instruction_options"), path, f"{where} 'instruction_options'")
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
        attrs = check_string_list(
            entry.get("instruction_attributes"), path, f"asin {product.asin} 'instruction_attributes'"
        )
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
    raw_products = read_data_json(files["products"], list)
    attributes = read_data_json(files["attributes"], dict)
    reviews = read_reviews(files["reviews"]) if "reviews" in files else {}
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
        product, detail = read_product(raw, position, files["products"], files["attributes"], attributes)
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
