"""The shopping session: pages, actions and transitions of WebShop's text mode, as plain data.

A :class:`Session` is an immutable record of where the agent is (page, query, result
list, result page, product, selected options); :class:`Shop` moves it with
:meth:`Shop.step`. Nothing else is mutable, so snapshots are the session itself.

Pages and their clickable labels (labels are matched case-insensitively; results list
products by their lowercase ASIN, as WebShop does):

==============  ======================================================================
``search``      none; the search box: ``search[keywords]``
``results``     ``back to search``, ``< prev`` (after page 1), ``next >`` (not on the last
                page, unless ``next_on_every_page``), the page's 10 ASINs (of 50 at most)
``item``        ``back to search``, ``< prev`` (to the results), every option value,
                ``description``, ``features``, ``reviews``, ``buy now``
sub-pages       ``back to search``, ``< prev`` (to the item); pages ``description``,
                ``features`` and ``reviews``
``done``        none: the purchase ended the episode
==============  ======================================================================

Actions are ``search[keywords]`` and ``click[label]`` (whitespace and case are
ignored). Searching is possible on the search page only (where WebShop has its search
box), or anywhere with ``search_anywhere=True`` as in WebShop's text env. Anything
else, including a label that is not on the page, leaves the session unchanged and
sets :attr:`Session.feedback`. Clicking an option value selects it in its group
(replacing the group's previous choice); returning to the results clears the product
and its options, as in WebShop.

Example:
    >>> parse_action(" Click[ Next  > ] "), parse_action("search[Red Shoes]"), parse_action("look")
    (('click', 'next >'), ('search', 'red shoes'), None)
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import ClassVar

from agentgym_budget.snapshots import schema
from agentgym_budget.tasks.webshop.catalog import Catalog
from agentgym_budget.tasks.webshop.search import SearchIndex

__all__ = ["SEARCH_TEMPLATE", "Session", "parse_action"]

BACK_TO_SEARCH = "back to search"
NEXT_PAGE = "next >"
PREV_PAGE = "< prev"
BUY_NOW = "buy now"
SUB_PAGES: tuple[str, ...] = ("description", "features", "reviews")
RESULTS_PER_PAGE = 10
PAGES: frozenset[str] = frozenset({"search", "results", "item", "done", *SUB_PAGES})
"""Every page a session can be on."""
"""Products per results page (WebShop's ``PRODUCT_WINDOW``)."""

SEARCH_TEMPLATE = "search[<keywords>]"
"""How ``admissible_actions`` says that the search box is available."""

_ACTION = re.compile(r"\s*(search|click)\s*\[(.*)\]\s*", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"\s+")
_ECHO = 60


def parse_action(action: str) -> tuple[str, str] | None:
    """``(verb, argument)`` of a ``search[...]`` / ``click[...]`` action (lowercase, spaces collapsed), else ``None``."""
    match = _ACTION.fullmatch(action)
    if match is None:
        return None
    return match.group(1).lower(), _SPACES.sub(" ", match.group(2)).strip().lower()


@dataclass(frozen=True)
class Session:
    """Where the agent is (see the module docstring); immutable plain data.

    Attributes:
        page: ``search``, ``results``, ``item``, ``description``, ``features``, ``reviews`` or ``done``.
        keywords: The last search query.
        results: Catalog indices of the last search's hits.
        results_page: Current results page (from 1).
        item: Catalog index of the product being viewed (``-1`` for none).
        options: Selected options as ``(group, value)`` pairs, in selection order.
        feedback: Why the last action did nothing (``""`` after a valid action).
    """

    __snapshot_record__: ClassVar[str] = "WebShopSession/1"

    page: str = "search"
    keywords: str = ""
    results: tuple[int, ...] = ()
    results_page: int = 1
    item: int = -1
    options: tuple[tuple[str, str], ...] = ()
    feedback: str = ""

    @property
    def num_pages(self) -> int:
        """Number of results pages of the last search."""
        return max(1, -(-len(self.results) // RESULTS_PER_PAGE))

    def page_results(self) -> tuple[int, ...]:
        """Catalog indices of the products on the current results page."""
        start = (self.results_page - 1) * RESULTS_PER_PAGE
        return self.results[start : start + RESULTS_PER_PAGE]

    def chosen(self) -> dict[str, str]:
        """Selected options, group -> value."""
        return dict(self.options)


def check_session(session: object, products: int) -> None:
    """Raise :class:`~agentgym_budget.errors.SnapshotMismatchError` unless ``session`` fits a catalog of ``products``.

    A snapshot read without a key may hold any values: every field is checked for its type and range (pages
    by name, product indices inside the catalog) before the session is used.
    """
    if not isinstance(session, Session):
        raise schema.mismatch("the WebShop session", session, "a WebShop Session")
    if session.page not in PAGES:
        raise schema.mismatch("the WebShop page", session.page, f"one of {sorted(PAGES)}")
    schema.text(session.keywords, "the WebShop search keywords")
    schema.text(session.feedback, "the WebShop feedback")
    for index in schema.sequence(session.results, "the WebShop results"):
        schema.count(index, "a WebShop result", high=products - 1)
    schema.count(session.results_page, "the WebShop results page", low=1, high=2**31 - 1)
    schema.count(session.item, "the WebShop product", low=-1, high=products - 1)
    for pair in schema.sequence(session.options, "the WebShop options"):
        for value in schema.sequence(pair, "a WebShop option", 2):
            schema.text(value, "a WebShop option")


class Shop:
    """A catalog with its search index, and the rules that move a :class:`Session`.

    Args:
        catalog: The products and instructions.
        index: The catalog's search index.
        search_anywhere: Accept ``search[...]`` on every page (WebShop's text env does),
            instead of on the search page only.
        next_on_every_page: Offer ``next >`` on every results page, the last one included (as
            WebShop's results template does; past the last page the results are empty).
    """

    def __init__(
        self, catalog: Catalog, index: SearchIndex, *, search_anywhere: bool = False, next_on_every_page: bool = False
    ) -> None:
        self.catalog = catalog
        self.index = index
        self.search_anywhere = search_anywhere
        self.next_on_every_page = next_on_every_page
        self._option_labels: dict[int, dict[str, str]] = {}

    # ------------------------------------------------------------------ queries
    def option_labels(self, item: int) -> dict[str, str]:
        """Option value -> group of a product (a value in several groups belongs to the last one, as in WebShop)."""
        labels = self._option_labels.get(item)
        if labels is None:
            labels = {value: group for group, values in self.catalog.products[item].options for value in values}
            if len(self._option_labels) > 4096:
                self._option_labels.clear()
            self._option_labels[item] = labels
        return labels

    def has_next(self, session: Session) -> bool:
        """Whether a results page offers ``next >``."""
        return self.next_on_every_page or session.results_page < session.num_pages

    def can_search(self, session: Session) -> bool:
        """Whether ``search[...]`` works on the session's page."""
        return session.page == "search" or (self.search_anywhere and session.page != "done")

    def clickables(self, session: Session) -> list[str]:
        """The clickable labels of the session's page, in page order."""
        page = session.page
        if page == "results":
            labels = [BACK_TO_SEARCH]
            if session.results_page > 1:
                labels.append(PREV_PAGE)
            if self.has_next(session):
                labels.append(NEXT_PAGE)
            return labels + [self.catalog.products[i].asin.lower() for i in session.page_results()]
        if page == "item":
            return [BACK_TO_SEARCH, PREV_PAGE, *self.option_labels(session.item), *SUB_PAGES, BUY_NOW]
        if page in SUB_PAGES:
            return [BACK_TO_SEARCH, PREV_PAGE]
        return []

    def admissible(self, session: Session) -> tuple[str, ...]:
        """Sorted admissible actions: ``click[label]`` per clickable, plus :data:`SEARCH_TEMPLATE` when searching works."""
        actions = {f"click[{label}]" for label in self.clickables(session)}
        if self.can_search(session):
            actions.add(SEARCH_TEMPLATE)
        return tuple(sorted(actions))

    # ------------------------------------------------------------------ transitions
    def step(self, session: Session, action: str) -> Session:
        """The session after ``action`` (a new object; ``session`` is unchanged)."""
        if session.page == "done":
            return dataclasses.replace(session, feedback="The purchase is complete; the episode is over.")
        parsed = parse_action(action)
        if parsed is None:
            return self._invalid(session, action, "actions are search[keywords] or click[label]")
        verb, argument = parsed
        if verb == "search":
            if not self.can_search(session):
                return self._invalid(
                    session, action, f"there is no search box on this page; click[{BACK_TO_SEARCH}] first"
                )
            if not argument:
                return self._invalid(session, action, "type some keywords between the brackets")
            return Session(page="results", keywords=argument, results=self.index.search(argument))
        return self._click(session, action, argument)

    def _click(self, session: Session, action: str, label: str) -> Session:
        page = session.page
        if label == BACK_TO_SEARCH and page != "search":
            return Session()
        if page == "results":
            if label == NEXT_PAGE and self.has_next(session):
                return dataclasses.replace(session, results_page=session.results_page + 1, feedback="")
            if label == PREV_PAGE and session.results_page > 1:
                return dataclasses.replace(session, results_page=session.results_page - 1, feedback="")
            for index in session.page_results():
                if self.catalog.products[index].asin.lower() == label:
                    return dataclasses.replace(session, page="item", item=index, options=(), feedback="")
        elif page == "item":
            if label == PREV_PAGE:
                return dataclasses.replace(session, page="results", item=-1, options=(), feedback="")
            if label in SUB_PAGES:
                return dataclasses.replace(session, page=label, feedback="")
            if label == BUY_NOW:
                return dataclasses.replace(session, page="done", feedback="")
            group = self.option_labels(session.item).get(label)
            if group is not None:
                options = (*((g, v) for g, v in session.options if g != group), (group, label))
                return dataclasses.replace(session, options=options, feedback="")
        elif page in SUB_PAGES and label == PREV_PAGE:
            return dataclasses.replace(session, page="item", feedback="")
        return self._invalid(session, action, "that label is not clickable on this page")

    @staticmethod
    def _invalid(session: Session, action: str, reason: str) -> Session:
        shown = action if len(action) <= _ECHO else action[:_ECHO] + "..."
        return dataclasses.replace(session, feedback=f"Invalid action {shown!r}: {reason}.")
