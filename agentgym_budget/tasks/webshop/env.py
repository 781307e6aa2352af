"""WebShop environments: the built-in generated catalog, and the real WebShop data files.

Both follow the :class:`~agentgym_budget.core.env.TextEnv` contract. Family specifics:

* actions: ``search[keywords]`` and ``click[label]``
  (:mod:`agentgym_budget.tasks.webshop.session`); any other string is a normal turn that changes
  nothing and explains why;
* ``admissible_actions``: ``click[label]`` for every clickable label of the page, plus the
  template ``search[<keywords>]`` when the page has a search box (replace
  ``<keywords>`` with the query);
* observation: the page in the ``"clean"`` or ``"webshop"`` (``[SEP]``) format (:mod:`.pages`;
  with ``"webshop"``, ``next >`` is offered on every results page, as in WebShop);
* reward: 0 until ``click[buy now]``, which ends the episode with WebShop's purchase
  reward (:mod:`.reward`, as its released code computes it, so it exceeds 1 in the rare
  purchase with more matching options than asked); ``won`` when it is exactly 1 (WebShop's
  success), ``lost`` otherwise;
* ``progress``: on an item page or its sub-pages, the reward that buying the viewed
  product with the selected options would get now; after the purchase, the reward;
  elsewhere 0. It is a step-level signal usable as process supervision;
* opt-in ``info`` keys: ``expert_action`` / ``expert_plan`` (:mod:`.expert`), ``page``,
  ``asin``, ``selected_options``, ``reward_info``, ``goal_asin``, ``available_actions``,
  ``state_digest`` (of the page, keywords, results page, product and selected options as a set);
* snapshots are native: the engine state is the immutable :class:`~.session.Session`.

Catalogs and their search indexes are loaded once per process and shared by every env
that uses them; generated catalogs and all indexes are built once per machine, in the
on-disk cache (:mod:`agentgym_budget.storage.cache`).

Example:
    >>> import gymnasium as gym
    >>> env = gym.make("agentgym_budget/WebShop-1k-v0", split="test", info_keys={"expert_plan"})
    >>> obs, info = env.reset(seed=0)
    >>> info["admissible_actions"]
    ['search[<keywords>]']
    >>> for action in info["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(action)
    >>> reward, terminated, info["won"], obs.splitlines()[-1]
    (1.0, True, True, 'Your score (min 0.0, max 1.0): 1.0')
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from gymnasium.utils import EzPickle

from agentgym_budget.core.env import TextEnv, Turn
from agentgym_budget.core.info_keys import EXPERT_INFO_KEYS
from agentgym_budget.errors import DataError, InvalidOptionError, MissingDependencyError
from agentgym_budget.snapshots.state import TextEnvState
from agentgym_budget.storage.cache import cache_key
from agentgym_budget.storage.safe_json import resolve_user_path
from agentgym_budget.tasks.webshop.catalog import Catalog, Goal
from agentgym_budget.tasks.webshop.expert import expert_plan
from agentgym_budget.tasks.webshop.generator import cached_catalog
from agentgym_budget.tasks.webshop.pages import OBSERVATION_FORMATS, render_page
from agentgym_budget.tasks.webshop.reward import (
    ProductText,
    RewardInfo,
    check_dependencies,
    compute_reward,
    title_nouns,
)
from agentgym_budget.tasks.webshop.search import SearchIndex
from agentgym_budget.tasks.webshop.session import Session, Shop, check_session

__all__ = ["WebShopDataEnv", "WebShopEnv", "WebShopEnvBase"]

WEBSHOP_INFO_KEYS: Mapping[str, str] = {
    **EXPERT_INFO_KEYS,
    "page": "the current page: search, results, item, description, features, reviews or done",
    "asin": "ASIN of the product being viewed (None when no product is open)",
    "selected_options": "options selected for the viewed product (dict: group -> value)",
    "reward_info": "parts of the progress / purchase reward (dict: reward, r_type, r_att, r_option, r_price, ...)",
    "goal_asin": "ASIN of the product the instruction was written for",
    "available_actions": "WebShop's get_available_actions(): {'has_search_bar': bool, 'clickables': [...]}",
}

_SHARED: OrderedDict[tuple[Any, ...], tuple[Catalog, SearchIndex]] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 4


def shared_catalog(key: tuple[Any, ...], load: Callable[[], Catalog]) -> tuple[Catalog, SearchIndex]:
    """The catalog and index for ``key``, loaded once per process (the last few are kept)."""
    with _SHARED_LOCK:
        if key in _SHARED:
            _SHARED.move_to_end(key)
            return _SHARED[key]
        catalog = load()
        entry = (catalog, SearchIndex.build(catalog))
        _SHARED[key] = entry
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.popitem(last=False)
        return entry


_VIEW_ARGUMENTS = ("observation_format", "search_anywhere", "split", "info_keys", "render_mode")


class WebShopEnvBase(TextEnv):
    """Plays WebShop sessions on a catalog; subclasses say where the catalog comes from."""

    optional_info_keys: ClassVar[Mapping[str, str]] = WEBSHOP_INFO_KEYS
    blocked_feedback: ClassVar[str] = "That action is not available here."
    max_replay_actions: ClassVar[int | None] = None  # states always hold the engine state

    def __init__(
        self,
        catalog: Catalog,
        index: SearchIndex,
        *,
        observation_format: str = "clean",
        search_anywhere: bool = False,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(split=split, info_keys=info_keys, render_mode=render_mode)
        check_dependencies()
        if observation_format not in OBSERVATION_FORMATS:
            raise InvalidOptionError(
                f"{type(self).__name__}: unknown observation_format {observation_format!r}; "
                f"expected one of {OBSERVATION_FORMATS}."
            )
        if not isinstance(search_anywhere, bool):
            raise InvalidOptionError(f"{type(self).__name__}: search_anywhere must be a bool, got {search_anywhere!r}.")
        self.catalog = catalog
        self.shop = Shop(
            catalog, index, search_anywhere=search_anywhere, next_on_every_page=observation_format == "webshop"
        )
        if not catalog.goal_ids(split):
            raise DataError(
                f"{type(self).__name__}: the {split!r} split of {catalog.name} has no instruction "
                f"({len(catalog.goals)} in all; WebShop's data split is goals 0-499 test, 500-1,499 valid, "
                "the rest train). Pick another split or a folder with more instructions."
            )
        self.observation_format = observation_format
        self.search_anywhere = search_anywhere
        self._session = Session()
        self._goal: Goal | None = None
        self._goal_nouns: list[str] = []
        self._texts: dict[int, ProductText] = {}

    # ------------------------------------------------------------------ hooks
    def _open(
        self, source: dict[str, Any], view: tuple[Any, ...], key: tuple[Any, ...], load: Callable[[], Catalog]
    ) -> None:
        """A subclass's constructor: records ``source`` (its own arguments) and ``view`` (the arguments of
        :data:`_VIEW_ARGUMENTS`, in order) for pickling, then opens the catalog shared under ``key``."""
        options = dict(zip(_VIEW_ARGUMENTS, view, strict=True))
        EzPickle.__init__(self, **source, **options)
        catalog, index = shared_catalog(key, load)
        WebShopEnvBase.__init__(self, catalog, index, **options)

    def _config(self) -> Mapping[str, Any]:
        return {
            "catalog": dict(self.catalog.fingerprint),
            "observation_format": self.observation_format,
            "search_anywhere": self.search_anywhere,
        }

    def _list_tasks(self) -> Sequence[str]:
        return self.catalog.goal_ids(self.split)

    def _begin(self, task_id: str, engine_seed: int) -> Turn:
        self._set_goal(task_id)
        self._session = Session()
        return self._turn()

    def _act(self, command: str) -> Turn:
        self._session = self.shop.step(self._session, command)
        return self._turn()

    def _save_engine(self) -> Any:
        return self._session

    def _state_data(self) -> Any:
        session = self._session  # not its feedback: it only explains the last action
        return [session.page, session.keywords, session.results_page, session.item, sorted(session.chosen().items())]

    def _verify_state(self, state: TextEnvState) -> None:
        check_session(state.engine, len(self.shop.catalog))

    def _load_engine(self, task_id: str, engine_seed: int, engine_state: Any) -> None:
        self._set_goal(task_id)
        self._session = engine_state

    # ------------------------------------------------------------------ API
    @property
    def session(self) -> Session:
        """The current session (immutable)."""
        return self._session

    @property
    def goal(self) -> Goal | None:
        """The current instruction (``None`` before the first reset)."""
        return self._goal

    def reward_info(self, session: Session | None = None) -> RewardInfo | None:
        """The reward of buying the viewed product with the selected options (``None`` if no product is open)."""
        session = self._session if session is None else session
        if session.item < 0 or self._goal is None:
            return None
        return compute_reward(
            self.catalog.products[session.item],
            self._text(session.item),
            self._goal,
            session.chosen(),
            self._goal_nouns,
        )

    # ------------------------------------------------------------------ internals
    def _set_goal(self, task_id: str) -> None:
        self._goal = self.catalog.goal(task_id)
        self._goal_nouns = title_nouns(self._goal.name)

    def _text(self, item: int) -> ProductText:
        text = self._texts.get(item)
        if text is None:
            if len(self._texts) > 1024:
                self._texts.clear()
            text = self._texts[item] = ProductText.of(self.catalog.products[item], self.catalog.details(item))
        return text

    def _turn(self) -> Turn:
        session, goal = self._session, self._goal
        assert goal is not None
        info = self.reward_info(session)
        score = info.reward if info is not None else 0.0
        done = session.page == "done"
        page = render_page(session, self.shop, goal.instruction, self.observation_format, score)
        extras: dict[str, Any] = {}
        keys = self.info_keys
        if keys & {"expert_action", "expert_plan"}:
            plan = expert_plan(self.shop, goal, session)
            extras["expert_plan"] = plan
            extras["expert_action"] = plan[0] if plan else None
        if "page" in keys:
            extras["page"] = session.page
        if "asin" in keys:
            extras["asin"] = self.catalog.products[session.item].asin if session.item >= 0 else None
        if "selected_options" in keys:
            extras["selected_options"] = session.chosen()
        if "reward_info" in keys:
            extras["reward_info"] = info.as_dict() if info is not None else None
        if "goal_asin" in keys:
            extras["goal_asin"] = goal.asin
        if "available_actions" in keys:
            extras["available_actions"] = {
                "has_search_bar": self.shop.can_search(session),
                "clickables": self.shop.clickables(session),
            }
        return Turn(
            observation=page,
            reward=score if done else 0.0,
            won=done and score == 1.0,
            lost=done and score != 1.0,
            progress=min(1.0, max(0.0, score)),
            admissible_actions=self.shop.admissible(session),
            goal=goal.instruction,
            extras=extras,
        )


class WebShopEnv(WebShopEnvBase):
    """``WebShop-v0`` and its sized variants: the built-in generated catalog (:mod:`~.webshop.generator`).

    Args:
        num_products: Catalog size (50 to 2,000,000; ids fix it: 1k, 10k, 100k).
        catalog_seed: Seed of the catalog; different seeds give different shops.
        observation_format: ``"clean"`` or ``"webshop"`` (WebShop's ``[SEP]`` text mode).
        search_anywhere: Accept ``search[...]`` on every page, as WebShop's text env does.
        split: ``"train"``, ``"valid"`` or ``"test"`` instructions.
        info_keys: Opt-in ``info`` keys (:data:`WEBSHOP_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.

    Raises:
        InvalidOptionError: An argument is out of range.
        MissingDependencyError: The ``webshop`` extra is not installed.
    """

    def __init__(
        self,
        num_products: int = 10_000,
        catalog_seed: int = 0,
        *,
        observation_format: str = "clean",
        search_anywhere: bool = False,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
    ) -> None:
        view = (observation_format, search_anywhere, split, info_keys, render_mode)
        source = {"num_products": num_products, "catalog_seed": catalog_seed}
        self._open(
            source, view, ("generated", num_products, catalog_seed), lambda: cached_catalog(num_products, catalog_seed)
        )


_EXTRA_PACKAGES = {"bm25s": "bm25s", "Stemmer": "PyStemmer", "rapidfuzz": "rapidfuzz"}


def _require_webshop_extra(feature: str) -> None:
    """Raise :class:`MissingDependencyError` naming the ``webshop`` extra if one of its packages is missing."""
    for module, package in _EXTRA_PACKAGES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # an import hook or a broken install refusing the module
            found = False
        if not found:
            raise MissingDependencyError.for_extra(package, "webshop", feature)


class WebShopDataEnv(WebShopEnvBase):
    """``WebShop-Data-v0``: the real WebShop product and instruction files (:mod:`.data`).

    Args:
        data_dir: Folder holding ``items_shuffle*.json`` and ``items_ins_v2*.json`` (and
            ``items_human_ins.json`` for human instructions).
        goals: ``"human"`` (``items_human_ins.json``) or ``"synthetic"`` (``items_ins_v2``) instructions.
        num_products: Use only the first products of the file (``None`` for all).
        observation_format: ``"clean"`` or ``"webshop"``.
        search_anywhere: Accept ``search[...]`` on every page, as WebShop's text env does.
        split: ``"train"``, ``"valid"`` or ``"test"``.
        info_keys: Opt-in ``info`` keys (:data:`WEBSHOP_INFO_KEYS`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.

    Splits follow WebShop's goal index (after its fixed shuffle): goals 0-499 are ``test``,
    500-1,499 ``valid``, the rest ``train``.

    Raises:
        DataError: The files are missing or malformed (the message names the file and the problem),
            or the requested split has no instruction.
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        goals: str = "human",
        num_products: int | None = None,
        *,
        observation_format: str = "clean",
        search_anywhere: bool = False,
        split: str = "train",
        info_keys: Any = None,
        render_mode: str | None = None,
    ) -> None:
        from agentgym_budget.tasks.webshop.data import data_fingerprint, load_webshop_data

        _require_webshop_extra("WebShop-Data-v0")  # before any argument check: a missing extra is named first
        if data_dir is None:
            raise DataError(
                "WebShop-Data-v0 needs data_dir=: the folder holding WebShop's items_shuffle*.json, "
                "items_ins_v2*.json and items_human_ins.json (the generated ids, e.g. WebShop-v0, need no data)."
            )
        root = resolve_user_path(data_dir, what="WebShop data")
        key = ("data", cache_key(data_fingerprint(root, goals, num_products)))
        view = (observation_format, search_anywhere, split, info_keys, render_mode)
        source = {"data_dir": data_dir, "goals": goals, "num_products": num_products}
        self._open(source, view, key, lambda: load_webshop_data(root, goals=goals, num_products=num_products))
