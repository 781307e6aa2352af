"""The reference solver (opt-in ``expert_action`` / ``expert_plan``): an oracle that knows the target.

From any page the expert goes to the product the instruction was written for, selects
the instruction's options and buys it, so it earns reward 1 on every generated task:

1. on the search page it searches for the instruction (without the price clause) when
   the target is among those results, else for the target's title;
2. on a results page it moves to the results page holding the target (``next >`` /
   ``< prev``) and clicks it, or goes back to search when the target is not listed;
3. on an item page it clicks each instruction option that is not selected yet, then
   ``buy now``; on another product it clicks ``< prev``; on a sub-page ``< prev``.

Each plan is computed from the current session only, so it is the same however that
session was reached (and it needs at most two searches).

Example:
    >>> strip_price("i need socks in black, and price lower than 20.00 dollars")
    'i need socks in black'
"""

from __future__ import annotations

import re

from agentgym_budget.tasks.webshop.catalog import Goal
from agentgym_budget.tasks.webshop.reward import fuzzy_score
from agentgym_budget.tasks.webshop.session import (
    BACK_TO_SEARCH,
    BUY_NOW,
    NEXT_PAGE,
    PREV_PAGE,
    RESULTS_PER_PAGE,
    SUB_PAGES,
    Session,
    Shop,
)

__all__ = ["expert_plan", "strip_price"]

_PRICE_CLAUSE = re.compile(r",? and price lower than [0-9.]+ dollars\s*$")


def strip_price(instruction: str) -> str:
    """The instruction without its trailing price clause."""
    return _PRICE_CLAUSE.sub("", instruction).strip()


def goal_option_clicks(shop: Shop, goal: Goal, item: int) -> list[tuple[str, str]]:
    """``(group, value)`` the expert selects on product ``item`` for ``goal``'s options.

    A goal value that the product offers verbatim is used as is; otherwise (e.g. WebShop's
    human instructions) the product's closest value by fuzzy score is used.
    """
    labels = shop.option_labels(item)
    product = shop.catalog.products[item]
    picks: list[tuple[str, str]] = []
    for n, value in enumerate(goal.options):
        group = goal.option_groups[n] if n < len(goal.option_groups) and goal.option_groups[n] else None
        if value in labels and (group is None or labels[value] == group):
            picks.append((labels[value], value))
            continue
        candidates = [(fuzzy_score(value, v), g, v) for g, values in product.options for v in values]
        if candidates:
            _, best_group, best_value = max(candidates, key=lambda c: c[0])
            picks.append((best_group, best_value))
    return picks


def _search_plan(shop: Shop, goal: Goal, target: int) -> list[str]:
    query = strip_price(goal.instruction).lower()
    results = shop.index.search(query)
    if target not in results:
        query = shop.catalog.products[target].title.lower()
        results = shop.index.search(query)
    if target not in results:
        return [f"search[{query}]", *([f"click[{shop.catalog.products[results[0]].asin.lower()}]"] if results else [])]
    session = Session(page="results", keywords=query, results=results)
    return [f"search[{query}]", *_results_plan(shop, goal, target, session)]


def _results_plan(shop: Shop, goal: Goal, target: int, session: Session) -> list[str]:
    if target not in session.results:
        return [f"click[{BACK_TO_SEARCH}]", *_search_plan(shop, goal, target)]
    page = session.results.index(target) // RESULTS_PER_PAGE + 1
    moves = page - session.results_page
    steps = [f"click[{NEXT_PAGE}]"] * moves if moves > 0 else [f"click[{PREV_PAGE}]"] * -moves
    item = Session(page="item", keywords=session.keywords, results=session.results, results_page=page, item=target)
    return [*steps, f"click[{shop.catalog.products[target].asin.lower()}]", *_item_plan(shop, goal, target, item)]


def _item_plan(shop: Shop, goal: Goal, target: int, session: Session) -> list[str]:
    if session.item != target:
        back = Session(
            page="results", keywords=session.keywords, results=session.results, results_page=session.results_page
        )
        return [f"click[{PREV_PAGE}]", *_results_plan(shop, goal, target, back)]
    chosen = session.chosen()
    steps: list[str] = []
    for group, value in goal_option_clicks(shop, goal, target):
        if chosen.get(group) != value:
            steps.append(f"click[{value}]")
            chosen[group] = value
    return [*steps, f"click[{BUY_NOW}]"]


def expert_plan(shop: Shop, goal: Goal, session: Session) -> list[str]:
    """The expert's remaining actions from ``session`` (empty once the purchase is made)."""
    target = shop.catalog.index_of_asin.get(goal.asin)
    if session.page == "done" or target is None:
        return []
    if session.page == "search":
        return _search_plan(shop, goal, target)
    if session.page == "results":
        return _results_plan(shop, goal, target, session)
    if session.page in SUB_PAGES:
        return [f"click[{PREV_PAGE}]", *_item_plan(shop, goal, target, session)]
    return _item_plan(shop, goal, target, session)
