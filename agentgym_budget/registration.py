"""Registering environment ids with Gymnasium, and looking them up with helpful errors.

Every id lives in the ``agentgym_budget`` namespace and is registered when
``agentgym_budget`` is imported (entry points are strings, so no engine is imported
until an env is made)::

    import gymnasium as gym
    import agentgym_budget
    env = gym.make("agentgym_budget/TextWorld-Cooking-v0", difficulty=3)

Third-party code that never imports the package can still write
``gym.make("agentgym_budget:agentgym_budget/TextWorld-Cooking-v0")``; Gymnasium imports the
module before the ``:`` first. Every id also has a vector entry point (:class:`VectorEntryPoint`):
``gym.make_vec(id, num_envs=n, vectorization_mode="vector_entry_point")`` (or no mode) returns an in-process
:class:`~agentgym_budget.vector.text_vector_env.TextVectorEnv`. :func:`make` accepts the same ids (with or without the
namespace) and, for an unknown id, raises :class:`~agentgym_budget.errors.UnknownEnvIdError`
naming the closest registered ids.

Example:
    >>> import agentgym_budget
    >>> "agentgym_budget/TextWorld-Cooking-v0" in registered_ids()
    True
    >>> make("TextWorld-Cookin-v0")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.UnknownEnvIdError: Unknown environment id 'TextWorld-Cookin-v0'. Did you mean 'agentgym_budget/TextWorld-Cooking-v0'? ...
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.errors import InvalidOptionError, UnknownEnvIdError, did_you_mean

__all__ = [
    "NAMESPACE",
    "EnvEntryPoint",
    "env_info",
    "make",
    "missing_programs",
    "register_env",
    "registered_ids",
    "resolve_id",
]

NAMESPACE = "agentgym_budget"
"""The Gymnasium namespace of every id: ``gym.make(f"{NAMESPACE}/TextWorld-Cooking-v0")``."""


@dataclass(frozen=True)
class EnvIdInfo:
    """What the package knows about one registered id (for listings and docs).

    Attributes:
        id: Full Gymnasium id, ``agentgym_budget/<name>``.
        family: Task family (``"textworld"``, ...).
        entry_point: ``module:Class`` of the environment.
        description: One line on what the agent does.
        splits: Split names accepted by ``split=...``.
        kwargs: Default constructor arguments registered with the id.
        extra: The agentgym-budget extra the id needs (``None``: the base install plays it).
        requires: Top-level modules that extra installs, checked by :func:`missing_modules`.
        programs: System programs the id runs (e.g. ``java``), checked by :func:`missing_programs`.
        min_python: The oldest Python its extra installs on (``None``: any the package supports).
    """

    id: str
    family: str
    entry_point: str
    description: str
    splits: tuple[str, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    extra: str | None = None
    requires: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    min_python: tuple[int, int] | None = None


_CATALOG: dict[str, EnvIdInfo] = {}


TURN_BUDGET_MODULE = "agentgym_budget.wrappers.turn_budget"

BUDGET_ARGUMENTS = ("max_turns", "show_budget")
"""``gym.make`` arguments that wrap the env in a :class:`~agentgym_budget.wrappers.turn_budget.TurnBudget`."""


@dataclass(frozen=True)
class EnvEntryPoint:
    """The ``entry_point`` of an id: checks the arguments, builds the env, applies the turn budget.

    ``gym.make(id, max_turns=N, show_budget=True)`` returns the env inside
    ``TurnBudget(env, max_turns=N, show_budget=True)``; the spec records both (in ``kwargs`` and as a
    ``TurnBudget`` entry of ``additional_wrappers``), so ``gym.make(env.spec)`` rebuilds the same stack.
    An argument the constructor does not take raises
    :class:`~agentgym_budget.errors.InvalidOptionError` with a did-you-mean (instead of a bare ``TypeError``).

    Attributes:
        target: ``module:Class`` of the environment.
    """

    target: str

    def __call__(self, **kwargs: Any) -> gym.Env:
        module_name, _, attribute = self.target.partition(":")
        constructor = getattr(importlib.import_module(module_name), attribute)
        budget = {key: kwargs.pop(key) for key in BUDGET_ARGUMENTS if key in kwargs}
        _check_arguments(constructor, kwargs)
        env = constructor(**kwargs)
        if budget.get("max_turns") is None:
            if budget.get("show_budget"):
                raise InvalidOptionError(f"{attribute}: show_budget=True needs max_turns=N (the budget to show).")
            return env
        turn_budget = importlib.import_module(TURN_BUDGET_MODULE).TurnBudget  # a higher layer: loaded by name
        return turn_budget(env, budget["max_turns"], show_budget=bool(budget.get("show_budget", False)))


def _check_arguments(constructor: Any, kwargs: Mapping[str, Any]) -> None:
    """Raise :class:`InvalidOptionError` for an argument ``constructor`` does not take, listing those it does."""
    try:
        parameters = inspect.signature(constructor).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    names = [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL] + list(BUDGET_ARGUMENTS)
    for key in kwargs:
        if key not in names:
            raise InvalidOptionError(
                f"{constructor.__name__} has no argument {key!r}.{did_you_mean(key, names)} "
                f"Its arguments: {', '.join(names)}."
            )


@dataclass(frozen=True)
class VectorEntryPoint:
    """The ``vector_entry_point`` of an id: builds its :class:`~agentgym_budget.vector.text_vector_env.TextVectorEnv`.

    Gymnasium calls it as ``entry_point(num_envs=n, **kwargs)`` without the id, so each id has its own.
    The vector env's module is imported on the first call (as string entry points are).

    Attributes:
        env_id: The full id.
    """

    env_id: str

    def __call__(self, num_envs: int = 1, **kwargs: Any) -> Any:
        module = importlib.import_module("agentgym_budget.vector.text_vector_env")
        return module.TextVectorEnv(self.env_id, num_envs, **kwargs)


def register_env(
    name: str,
    entry_point: str,
    *,
    family: str,
    description: str,
    splits: tuple[str, ...] = ("train", "valid", "test"),
    kwargs: Mapping[str, Any] | None = None,
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    programs: tuple[str, ...] = (),
    min_python: tuple[int, int] | None = None,
) -> EnvIdInfo:
    """Register ``agentgym_budget/<name>`` with Gymnasium (idempotent) and in the package catalog."""
    env_id = f"{NAMESPACE}/{name}"
    info = EnvIdInfo(
        env_id, family, entry_point, description, splits, dict(kwargs or {}), extra, requires, programs, min_python
    )
    if env_id not in gym.registry:
        gym.register(
            id=env_id,
            entry_point=f"{__name__}:{entry_point.replace(':', '.')}",
            vector_entry_point=f"{__name__}:{env_id}",
            kwargs=dict(kwargs or {}),
        )
    _CATALOG[env_id] = info
    return info


def __getattr__(name: str) -> Any:
    """The objects behind the ids' string entry points, which Gymnasium loads as ``module:attribute``.

    ``agentgym_budget.registration:<module>.<Class>`` is the :class:`EnvEntryPoint` of a registered class and
    ``agentgym_budget.registration:<id>`` the :class:`VectorEntryPoint` of a registered id. Strings keep
    ``env.spec.to_json()`` and ``EnvSpec.from_json`` working (Gymnasium cannot serialise a callable), and only
    registered targets resolve.

    Example:
        >>> import gymnasium as gym
        >>> gym.spec("agentgym_budget/TextWorld-CoinCollector-v0").entry_point
        'agentgym_budget.registration:agentgym_budget.tasks.textworld.env.CoinCollectorEnv'
    """
    if name in _CATALOG:
        return VectorEntryPoint(name)
    for info in _CATALOG.values():
        if info.entry_point.replace(":", ".") == name:
            return EnvEntryPoint(info.entry_point)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class EngineInfo:
    """What a family's results depend on beyond this package, for every run's provenance.

    Attributes:
        packages: Distributions of its engine (their installed versions are recorded).
        runtime: Called when a run used the family: what else ran, e.g. ``{"java": "openjdk version ..."}``.
    """

    packages: tuple[str, ...]
    runtime: Callable[[], Mapping[str, Any]] | None = None


_ENGINES: dict[str, EngineInfo] = {}


def declare_engine(
    family: str, packages: Sequence[str], runtime: Callable[[], Mapping[str, Any]] | None = None
) -> None:
    """Declare ``family``'s engine (the family's ``register()`` calls it; see :class:`EngineInfo`).

    A family that declares none is described by the distributions of its ids' ``requires`` modules.
    """
    _ENGINES[family] = EngineInfo(tuple(packages), runtime)


def engine_info(family: str) -> EngineInfo:
    """The engine of ``family`` (declared, else the distributions of its ids' ``requires`` modules)."""
    if family in _ENGINES:
        return _ENGINES[family]
    modules = {module for info in _CATALOG.values() if info.family == family for module in info.requires}
    owners = importlib.metadata.packages_distributions() if modules else {}
    return EngineInfo(tuple(sorted({dist for module in modules for dist in owners.get(module, ())})))


def registered_ids(family: str | None = None) -> list[str]:
    """All registered ids (of one family if given), sorted."""
    return sorted(i for i, info in _CATALOG.items() if family is None or info.family == family)


def resolve_id(env_id: str) -> str:
    """Return the full registered id for ``env_id`` (namespace and ``module:`` prefix optional).

    Raises:
        UnknownEnvIdError: No registered id matches; the message suggests the closest ones.
    """
    if not isinstance(env_id, str):
        raise UnknownEnvIdError(f"Environment ids are strings like '{NAMESPACE}/TextWorld-Cooking-v0', got {env_id!r}.")
    name = env_id.split(":", 1)[1] if ":" in env_id else env_id
    candidates = [name, f"{NAMESPACE}/{name}"]
    for candidate in candidates:
        if candidate in _CATALOG:
            return candidate
    raise UnknownEnvIdError.for_id(env_id, _CATALOG)


def env_info(env_id: str) -> EnvIdInfo:
    """The :class:`EnvIdInfo` of ``env_id`` (see :func:`resolve_id` for accepted spellings)."""
    return _CATALOG[resolve_id(env_id)]


def missing_modules(env_id: str) -> list[str]:
    """The modules ``env_id`` needs that are not installed here (found without importing them).

    Example:
        >>> import agentgym_budget
        >>> missing_modules("TextWorld-Cooking-v0")
        []
    """
    return [module for module in env_info(env_id).requires if importlib.util.find_spec(module) is None]


def missing_programs(env_id: str) -> list[str]:
    """The system programs ``env_id`` runs that are not found here (``java`` also counts under ``$JAVA_HOME``).

    Example:
        >>> import agentgym_budget
        >>> missing_programs("TextWorld-Cooking-v0")
        []
    """
    missing = []
    for program in env_info(env_id).programs:
        home = os.environ.get("JAVA_HOME") if program == "java" else None
        if shutil.which(program) is None and not (home and shutil.which(program, path=os.path.join(home, "bin"))):
            missing.append(program)
    return missing


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """``gymnasium.make`` for agentgym-budget ids, with a did-you-mean error for unknown ids."""
    return gym.make(resolve_id(env_id), **kwargs)
