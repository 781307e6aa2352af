"""Environment references and pools: which env to build, and built stacks kept for reuse.

* :class:`EnvRef` names an environment configuration (registered id, constructor arguments, split)
  in a picklable way, so worker processes can build the same env;
* :class:`EnvPool` keeps built env stacks (``TurnBudget`` over the env, made with the opt-in
  ``info`` keys an agent needs) for reuse across episodes in one process.

Example:
    >>> ref = EnvRef.parse("TextWorld-CoinCollector-v0")
    >>> pool = EnvPool()
    >>> env = pool.acquire(ref, info_keys={"expert_action"}, show_budget=False)
    >>> pool.release(env)
    >>> pool.acquire(ref, info_keys={"expert_action"}, show_budget=False) is env
    True
    >>> pool.close()
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.registration import make, resolve_id
from agentgym_budget.runner.env_args import check_env_kwargs, default_split
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

__all__ = ["EnvPool", "EnvRef"]


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        lowered = text.lower()
        return {"true": True, "false": False, "none": None}.get(lowered, text)


@dataclass(frozen=True)
class EnvRef:
    """A picklable reference to an environment configuration.

    Attributes:
        env_id: The full registered id.
        kwargs: Constructor arguments as sorted ``(name, value)`` pairs.
        split: Task split; ``None`` is resolved to the env's default split
            (:func:`~agentgym_budget.runner.env_args.default_split`), so records name the split used.
    """

    env_id: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    split: str | None = None

    def __post_init__(self) -> None:
        if self.split is None:
            object.__setattr__(self, "split", default_split(self.env_id))

    @classmethod
    def parse(cls, env_id: str, kwargs: str | Mapping[str, Any] | None = None, split: str | None = None) -> EnvRef:
        """Build a reference from an id (namespace optional) and ``"key=value,..."`` or a mapping.

        Values are Python literals when they parse as one (``level=3`` is an int), else strings.

        Raises:
            UnknownEnvIdError: The id is not registered.
            InvalidOptionError: Malformed ``kwargs``, or an argument the env's constructor does not
                take (the message lists those it does, with a did-you-mean).

        Example:
            >>> ref = EnvRef.parse("TextWorld-Cooking-v0", "difficulty=1")
            >>> ref.label, ref.split
            ('TextWorld-Cooking-v0(difficulty=1)', 'train')
            >>> EnvRef.parse("TextWorld-Cooking-v0", "dificulty=1")
            Traceback (most recent call last):
            ...
            agentgym_budget.errors.InvalidOptionError: TextWorld-Cooking-v0 has no argument 'dificulty'. Did you mean 'difficulty'? ...
        """
        if isinstance(kwargs, str):
            items = {}
            for part in filter(None, (p.strip() for p in kwargs.split(","))):
                name, sep, value = part.partition("=")
                if not sep or not name.strip().isidentifier():
                    raise InvalidOptionError(f"Environment arguments look like 'level=3,split=train', got {part!r}.")
                items[name.strip()] = _literal(value.strip())
            kwargs = items
        options = dict(kwargs or {})
        if "split" in options:
            split = split or options.pop("split")
        full_id = resolve_id(env_id)
        check_env_kwargs(full_id, options)
        return cls(full_id, tuple(sorted(options.items())), split)

    @property
    def label(self) -> str:
        """Short readable name: id without namespace, plus arguments and the split unless it is the default."""
        name = self.env_id.split("/", 1)[-1]
        shown_split = self.split is not None and self.split != default_split(self.env_id)
        args = [f"{k}={v}" for k, v in self.kwargs] + ([f"split={self.split}"] if shown_split else [])
        return f"{name}({','.join(args)})" if args else name

    def make_base(self, info_keys: Iterable[str] = ()) -> gym.Env:
        """The env (no budget wrapper) with the given opt-in ``info`` keys."""
        options = dict(self.kwargs)
        if self.split is not None:
            options["split"] = self.split
        keys = sorted(set(info_keys))
        return make(self.env_id, info_keys=keys or None, **options)

    def make(
        self, info_keys: Iterable[str] = (), *, show_budget: bool = False, max_turns: int = 1, snapshots: bool = False
    ) -> gym.Env:
        """``TurnBudget(env, max_turns, show_budget)``; set each episode's budget with reset options.

        With ``snapshots=True`` the stack is wrapped in :class:`~agentgym_budget.wrappers.StateSnapshot`
        (``snapshot()`` / ``restore()`` / ``fork()``), as the probes need.
        """
        env = TurnBudget(self.make_base(info_keys), max_turns=max_turns, show_budget=show_budget)
        return StateSnapshot(env) if snapshots else env

    def task_ids(self) -> tuple[str, ...]:
        """The task ids of the split, in order."""
        env = self.make_base()
        try:
            return tuple(env.unwrapped.task_ids)
        finally:
            env.close()

    def to_json(self) -> dict[str, Any]:
        """JSON form (``env_id``, ``env_kwargs``, ``split``)."""
        return {"env_id": self.env_id, "env_kwargs": dict(self.kwargs), "split": self.split}


class EnvPool:
    """Env stacks kept for reuse in one process, by (reference, ``info`` keys, budget shown, snapshots).

    :meth:`acquire` hands out a free stack (building one if none is free) and :meth:`release`
    returns it; several can be out at once (concurrent episodes of an async agent). Both may be
    called from any thread.
    """

    def __init__(self) -> None:
        self._free: dict[tuple[Any, ...], list[gym.Env]] = {}
        self._all: list[gym.Env] = []
        self._lock = threading.Lock()

    def acquire(self, ref: EnvRef, info_keys: Iterable[str], show_budget: bool, *, snapshots: bool = False) -> gym.Env:
        """A stack for ``ref`` with these ``info`` keys and budget visibility (``StateSnapshot`` outermost if asked)."""
        key = (ref, frozenset(info_keys), bool(show_budget), bool(snapshots))
        with self._lock:
            free = self._free.setdefault(key, [])
            if free:
                return free.pop()
        env = ref.make(key[1], show_budget=key[2], snapshots=key[3])
        env._pool_key = key  # type: ignore[attr-defined]
        with self._lock:
            self._all.append(env)
        return env

    def release(self, env: gym.Env) -> None:
        """Return a stack obtained from :meth:`acquire`."""
        with self._lock:
            self._free[env._pool_key].append(env)  # type: ignore[attr-defined]

    def close(self) -> None:
        """Close every stack (the pool can be used again afterwards)."""
        with self._lock:
            envs, self._all = self._all, []
            self._free.clear()
        for env in envs:
            env.close()
