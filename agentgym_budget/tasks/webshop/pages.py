"""Observation text of each page, in two formats.

``"clean"`` (the default) is a readable layout. Every page starts with the
instruction, then a header line ``--- <page> ---``; clickable labels are written in
square brackets, and the last line lists the page's buttons. For example, an item page::

    Instruction: i need a men's t-shirt with machine wash, and price lower than 30.00 dollars
    --- Item B0ABCDEFGH ---
    Hanesco Men's Classic Fit T-Shirt
    Price: $12.99 | Rating: 4.5
    Options (click one value per group):
      color: [black] [navy] (selected) [white]
      size: [small] [medium] [large]
    Buttons: [Back to Search] [< Prev] [Description] [Features] [Reviews] [Buy Now]

After an invalid action the page is shown again below a line starting with
``Invalid action``. Results pages list ``N. [asin] title | price``; the search page says
to type ``search[keywords]``; the done page gives the score.

``"webshop"`` reproduces WebShop's simple text mode exactly: the text nodes its page
templates render, each stripped, joined with ``" [SEP] "`` as its text env's
``convert_html_to_text(simple=True)`` does (``Instruction: [SEP] ... [SEP] Back to Search
[SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B0... [SEP] title [SEP] $12.99 ...``).
As there, ``Next >`` is on every results page (clicking it past the last page shows an
empty page), a review title is quoted, an empty description or feature bullet shows as
WebShop shows it, the done page carries the hidden purchase details of WebShop's template,
and an invalid action shows the page unchanged.

Example:
    >>> from agentgym_budget.tasks.webshop.session import Session
    >>> render_page(Session(), None, "i need socks", "clean").splitlines()
    ['Instruction: i need socks', '--- Search ---', 'Type search[your keywords] to look for products.']
    >>> render_page(Session(), None, "i need socks", "webshop")
    'WebShop [SEP] Instruction: [SEP] i need socks [SEP] Search'
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agentgym_budget.tasks.webshop.session import RESULTS_PER_PAGE, Session

if TYPE_CHECKING:
    from agentgym_budget.tasks.webshop.catalog import Catalog, Product, ProductDetails
    from agentgym_budget.tasks.webshop.session import Shop

__all__: list[str] = []

OBSERVATION_FORMATS: tuple[str, ...] = ("clean", "webshop")
"""Accepted ``observation_format`` values."""

SEP = " [SEP] "
_ASCII_SPACES = " \n\t\f\r"


def _buttons(labels: list[str]) -> str:
    return "Buttons: " + " ".join(f"[{label}]" for label in labels)


def _clean(session: Session, shop: Shop | None, instruction: str, reward: float) -> list[str]:
    lines = [f"Instruction: {instruction}"]
    page = session.page
    if page == "search":
        return [*lines, "--- Search ---", "Type search[your keywords] to look for products."]
    assert shop is not None
    catalog = shop.catalog
    if page == "results":
        return [*lines, *_results_lines(session, catalog)]
    product = catalog.products[session.item]
    if page == "done":
        chosen = ", ".join(f"{g} = {v}" for g, v in session.options) or "no options"
        return [
            *lines,
            "--- Purchase complete ---",
            f"You bought [{product.asin}] {product.title} ({chosen}) for {product.price_text}.",
            f"Your score (min 0.0, max 1.0): {round(reward, 4)}",
        ]
    details = catalog.details(session.item)
    if page == "item":
        return [*lines, *_item_lines(session, product, details)]
    return [*lines, *_detail_lines(page, product, details)]


def _results_lines(session: Session, catalog: Catalog) -> list[str]:
    """The results page: its heading, one line per product shown, its buttons."""
    total = len(session.results)
    first = (session.results_page - 1) * RESULTS_PER_PAGE
    shown = session.page_results()
    lines = [
        f'--- Results for "{session.keywords}": page {session.results_page} of {session.num_pages} '
        f"(results {first + 1 if shown else 0}-{first + len(shown)} of {total}) ---"
    ]
    if not shown:
        lines.append("No products match these keywords.")
    for rank, index in enumerate(shown, start=first + 1):
        product = catalog.products[index]
        lines.append(f"{rank}. [{product.asin}] {product.title} | {product.price_text}")
    buttons = ["Back to Search"]
    if session.results_page > 1:
        buttons.append("< Prev")
    if session.results_page < session.num_pages:
        buttons.append("Next >")
    return [*lines, _buttons(buttons)]


def _item_lines(session: Session, product: Product, details: ProductDetails) -> list[str]:
    """The item page: title, price and rating, the option groups with the chosen values marked, its buttons."""
    lines = [f"--- Item {product.asin} ---", product.title, f"Price: {product.price_text} | Rating: {details.rating}"]
    if product.options:
        chosen = session.chosen()
        lines.append("Options (click one value per group):")
        for group, values in product.options:
            marked = " ".join(f"[{v}] (selected)" if chosen.get(group) == v else f"[{v}]" for v in values)
            lines.append(f"  {group}: {marked}")
    return [*lines, _buttons(["Back to Search", "< Prev", "Description", "Features", "Reviews", "Buy Now"])]


def _detail_lines(page: str, product: Product, details: ProductDetails) -> list[str]:
    """A description, features or reviews page of the item."""
    lines = [f"--- {page.capitalize()} of {product.asin}: {product.title} ---"]
    if page == "description":
        lines.append(details.description or "No description.")
    elif page == "features":
        lines += [f"- {bullet}" for bullet in details.bullet_points] or ["No features."]
    else:
        for review in details.reviews:
            lines += [f'"{review.title}" ({review.score}/5 stars)', f"  {review.body}"]
        if not details.reviews:
            lines.append("No reviews found.")
    return [*lines, _buttons(["Back to Search", "< Prev"])]


def _text_node(text: str) -> str | None:
    """One template value as WebShop's ``convert_html_to_text`` sees it (``None``: no text node)."""
    if not text:
        return None
    if not text.strip(_ASCII_SPACES):  # BeautifulSoup collapses these to "\n" (dropped) or " "
        return None if "\n" in text else ""
    return text.strip()


def _options_json(options: tuple[tuple[str, str], ...]) -> str:
    """Flask's ``tojson`` of the selected options (sorted keys, ASCII, HTML-safe escapes)."""
    text = json.dumps(dict(options), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")


def _webshop(session: Session, shop: Shop | None, instruction: str, reward: float) -> list[str | None]:
    page = session.page
    if page == "search":
        return ["WebShop", "Instruction:", instruction, "Search"]
    assert shop is not None
    catalog = shop.catalog
    if page == "done":
        product = catalog.products[session.item]
        target = ["asin", "options", "attrs", "price upper", "instuction text", "category", "product category"]
        return [
            "Thank you for shopping with us!", "Your code:", "None", " (Paste it in your MTurk interface.)",
            "Purchased", "asin", product.asin, "options", _options_json(session.options), "attrs", "None",
            "category", "None", "query", "None", "product category", "None", "Target", *target, "query",
            "Goal ", "None", "Reward", "Your score (min 0.0, max 1.0)", f"{reward}", "Reward Details ", "None",
        ]  # fmt: skip
    texts: list[str | None] = ["Instruction:", instruction, "Back to Search"]
    if page == "results":
        texts.append(f"Page {session.results_page} (Total results: {len(session.results)})")
        if session.results_page > 1:
            texts.append("< Prev")
        texts.append("Next >")
        for index in session.page_results():
            product = catalog.products[index]
            texts += [product.asin, product.title, product.price_text]
        return texts
    product = catalog.products[session.item]
    details = catalog.details(session.item)
    texts.append("< Prev")
    if page == "item":
        for group, values in product.options:
            texts += [group, *values]
        return [*texts, product.title, f"Price: {product.price_text}", f"Rating: {details.rating}", "Description",
                "Features", "Reviews", "Buy Now"]  # fmt: skip
    if page == "description":
        return [*texts, details.description]
    if page == "features":
        return texts + [" " + bullet for bullet in details.bullet_points]
    for review in details.reviews:
        texts += [f'"{review.title}"', str(review.score), review.body]
    return texts


def render_page(session: Session, shop: Shop | None, instruction: str, fmt: str, reward: float = 0.0) -> str:
    """The observation of ``session``'s page.

    Args:
        session: The session to show.
        shop: The shop (may be ``None`` for the search page).
        instruction: The goal's instruction text.
        fmt: ``"clean"`` or ``"webshop"`` (see the module docstring).
        reward: The purchase's reward (shown on the done page).
    """
    if fmt == "webshop":
        nodes = (_text_node(text) for text in _webshop(session, shop, instruction, reward) if text is not None)
        return SEP.join(node for node in nodes if node is not None)
    lines = _clean(session, shop, instruction, reward)
    if session.feedback:
        lines.insert(0, session.feedback)
    return "\n".join(lines)
