"""Writing catalogs as WebShop data files, and a small example data folder.

:func:`export_webshop_data` writes a catalog (e.g. a generated one) in the format of
WebShop's data folder (:mod:`.data` reads it back); :func:`example_data_dir` keeps a
generated catalog in that format in the cache, with several instructions per product so
that WebShop's index split (500 test, 1,000 valid, the rest train) has every split, for
tests and demos of :class:`~.env.WebShopDataEnv`.

Example:
    >>> from agentgym_budget.tasks.webshop.data import load_webshop_data
    >>> folder = example_data_dir(60)
    >>> sorted(p.name for p in folder.glob("*.json") if p.name != "key.json")
    ['items_human_ins.json', 'items_ins_v2.json', 'items_shuffle.json', 'reviews.json']
    >>> catalog = load_webshop_data(folder)
    >>> len(catalog), len(catalog.goals), [len(catalog.goal_ids(s)) for s in ("test", "valid", "train")]
    (60, 1800, [500, 1000, 300])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_budget.storage.cache import cached_directory
from agentgym_budget.tasks.webshop.catalog import Catalog, Product, ProductDetails

__all__: list[str] = []

EXAMPLE_VERSION = 2
"""Bumped whenever the exported files change (part of the example folder's cache key)."""


def _item_record(product: Product, details: ProductDetails) -> dict[str, Any]:
    """``product`` as an ``items_shuffle.json`` entry (a price range written ``"$low - $high"``)."""
    low, _, high = product.price_text.partition(" to ")
    return {
        "asin": product.asin,
        "name": product.title,
        "category": product.category,
        "query": product.query,
        "product_category": product.product_category,
        "full_description": details.description,
        "small_description": list(details.bullet_points),
        "pricing": f"{low} - {high}" if high else low,
        "customization_options": {g: [{"value": v, "image": None} for v in vs] for g, vs in product.options} or "",
        "images": [],
    }


def _review_record(asin: str, details: ProductDetails) -> dict[str, Any]:
    """A product's reviews as a ``reviews.json`` entry, with WebShop's keys (``score``, ``review``)."""
    return {
        "asin": asin,
        "reviews": [{"title": r.title, "score": r.score, "review": r.body} for r in details.reviews],
        "average_rating": details.rating,
    }


def export_webshop_data(catalog: Catalog, folder: Path | str) -> dict[str, Path]:
    """Write ``catalog`` as WebShop data files (``items_shuffle.json``, ``items_ins_v2.json``,
    ``items_human_ins.json``, ``reviews.json``) into ``folder``; returns the paths by role.

    Each goal becomes a human instruction (its text without the price clause), so loading the
    folder back gives the same products and instructions (with freshly drawn price bounds); the
    first goal of a product also becomes its synthetic instruction in ``items_ins_v2.json``.
    Reviews use WebShop's keys (``score``, ``review``).
    """
    from agentgym_budget.tasks.webshop.expert import strip_price

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    items, attrs, human, reviews = [], {}, {}, []
    for index, product in enumerate(catalog.products):
        details = catalog.details(index)
        items.append(_item_record(product, details))
        attrs[product.asin] = {
            "attributes": list(product.attributes),
            "instruction": None,
            "instruction_attributes": None,
        }
        reviews.append(_review_record(product.asin, details))
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


def example_data_dir(
    num_products: int = 300, seed: int = 0, *, instructions: int = 1_800, root: Path | None = None
) -> Path:
    """A folder of WebShop data files made from a generated catalog (built once, cached on disk).

    Args:
        num_products: Products in the folder.
        seed: Catalog seed.
        instructions: Human instructions at least (every product gets the same number, so
            there are ``num_products * ceil(instructions / num_products)``).
        root: Cache root (default: the cache).
    """
    from agentgym_budget.tasks.webshop.generator import GENERATOR_VERSION, generate_catalog

    per_product = -(-instructions // num_products)
    params = {"generator": GENERATOR_VERSION, "format": EXAMPLE_VERSION, "size": num_products, "seed": seed,
              "per_product": per_product}  # fmt: skip
    return cached_directory(
        "webshop-example-data",
        params,
        lambda path: export_webshop_data(generate_catalog(num_products, seed, goals_per_product=per_product), path),
        root=root,
    )
