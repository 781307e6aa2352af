"""Checking environment arguments before an env is made: argument names and the default split.

:func:`env_parameters` reads the constructor signature of a registered id's entry point (it imports
the module, it does not build the env). :func:`check_env_kwargs` refuses an argument the constructor
does not take, listing the ones it does with a did-you-mean, instead of the ``TypeError`` that
``gym.make`` would raise deep inside the first env construction (possibly in a worker process).
:func:`default_split` is the split an env uses when none is given, so run records can name the
split actually used.

Example:
    >>> check_env_kwargs("TextWorld-CoinCollector-v0", {"levle": 110})
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: TextWorld-CoinCollector-v0 has no argument 'levle'. Did you mean 'level'? Its arguments: level (default 5), progress (default 'plan'), split (default 'train'), render_mode (default None), lean (default False).
    >>> default_split("TextWorld-CoinCollector-v0"), default_split("agentgym_budget/TextWorld-File-v0")
    ('train', 'all')
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from gymnasium import error as gym_error

from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.registration import env_info, resolve_id

__all__: list[str] = []

RUNNER_ARGUMENTS = ("info_keys",)
"""Constructor arguments the evaluation runner sets itself (from what the agents need)."""


@functools.cache
def entry_point(env_id: str) -> Any:
    """The constructor (usually the class) ``env_id`` is registered with; ``None`` if it cannot be imported here.

    Raises:
        UnknownEnvIdError: ``env_id`` is not registered.
    """
    module_name, _, attribute = env_info(env_id).entry_point.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, gym_error.Error):
        return None


def _signature(env_id: str) -> tuple[inspect.Parameter, ...] | None:
    constructor = entry_point(env_id)
    try:
        return tuple(inspect.signature(constructor).parameters.values()) if constructor is not None else None
    except (ValueError, TypeError):
        return None


@functools.cache
def env_parameters(env_id: str) -> tuple[inspect.Parameter, ...] | None:
    """The keyword parameters of the constructor of ``env_id``'s entry point.

    Returns ``None`` when they cannot be known: the constructor takes ``**kwargs``, or its module
    cannot be imported here (e.g. an extra is missing; making the env then raises the proper error).

    Raises:
        UnknownEnvIdError: ``env_id`` is not registered.
    """
    parameters = _signature(env_id)
    if parameters is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return tuple(
        p for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )


def expert_recovers(env_id: str) -> bool:
    """Whether the expert of ``env_id`` re-plans from any state (``TextEnv.expert_recovers``; ``True`` if unknown).

    Example:
        >>> expert_recovers("TextWorld-CoinCollector-v0"), expert_recovers("TWX-CoinCollector-v0")
        (True, False)
    """
    return bool(getattr(entry_point(resolve_id(env_id)), "expert_recovers", True))


def _describe(parameter: inspect.Parameter) -> str:
    if parameter.default is inspect.Parameter.empty:
        return f"{parameter.name} (required)"
    return f"{parameter.name} (default {parameter.default!r})"


def check_env_kwargs(env_id: str, kwargs: Mapping[str, Any]) -> None:
    """Raise if ``kwargs`` are not constructor arguments of ``env_id`` (see the module docstring).

    Arguments registered with the id count as given. Nothing is checked when the constructor's
    arguments cannot be known (:func:`env_parameters` returns ``None``).

    Raises:
        InvalidOptionError: An unknown argument, an argument the runner sets itself, or a missing
            required one; the message lists the valid arguments.
        UnknownEnvIdError: ``env_id`` is not registered.
    """
    full_id = resolve_id(env_id)
    name = full_id.split("/", 1)[-1]
    runner_set = [key for key in kwargs if key in RUNNER_ARGUMENTS]
    if runner_set:
        raise InvalidOptionError(
            f"{name}: {runner_set[0]!r} is set by the runner from what the agents need; remove it from the "
            "environment arguments."
        )
    parameters = env_parameters(full_id)
    if parameters is None:
        return
    registered = env_info(full_id).kwargs
    shown = [p for p in parameters if p.name not in RUNNER_ARGUMENTS and p.name not in registered]
    listing = ", ".join(_describe(p) for p in shown) or "none"
    names = {p.name for p in parameters}
    for key in kwargs:
        if key not in names:
            raise InvalidOptionError(
                f"{name} has no argument {key!r}.{did_you_mean(key, [p.name for p in shown])} Its arguments: {listing}."
            )
    missing = [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty and p.name not in kwargs and p.name not in registered
    ]
    if missing:
        raise InvalidOptionError(
            f"{name} needs the argument {missing[0]!r} (--env-args {missing[0]}=...). Its arguments: {listing}."
        )


@functools.cache
def default_split(env_id: str) -> str | None:
    """The split ``env_id`` uses when none is given: the registered one, else the constructor's default.

    Returns ``None`` when it cannot be known (see :func:`env_parameters`).
    """
    info = env_info(env_id)
    if info.kwargs.get("split") is not None:
        return str(info.kwargs["split"])
    for parameter in _signature(info.id) or ():  # also a constructor taking **kwargs (the TWX games' arguments)
        if parameter.name == "split" and isinstance(parameter.default, str):
            return parameter.default
    return None
