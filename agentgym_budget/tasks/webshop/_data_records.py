"""Reading the product and review records of WebShop's data files (see :mod:`.data`).

Each reader checks the fields it takes and raises :class:`~agentgym_budget.errors.DataError`
naming the file, the product and the field; :mod:`.data` assembles them into a catalog.

Example:
    >>> parse_pricing("$10.00 - $15.50", "file.json", 0)
    [10.0, 15.5]
    >>> check_string_list(None, "file.json", "asin B0 'attributes'")
    []
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_json_file
from agentgym_budget.tasks.webshop.catalog import Product, ProductDetails, Review, format_price

__all__ = ["check_string_list", "parse_pricing", "read_data_json", "read_product", "read_reviews"]

_NOT_PRICE = re.compile(r"[^\d.]")
_TEXT_KEYS = ("category", "query", "product_category")


def read_data_json(path: Path, expected: type) -> Any:
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
    return tuple(check_string_list(entry["attributes"], path, f"asin {asin} 'attributes'"))


def read_product(raw: Any, position: int, path: Path, attr_path: Path, attributes: Mapping[str, Any]) -> tuple[Product, ProductDetails]:  # fmt: skip
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


def read_reviews(path: Path) -> dict[str, tuple[tuple[Review, ...], str]]:
    out = {}
    for position, entry in enumerate(read_data_json(path, list)):
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


def check_string_list(value: Any, path: Path, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"WebShop data: {path}, {where} must be a list of strings, got {value!r:.80}.")
    return value
