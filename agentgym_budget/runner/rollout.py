"""Playing one episode of one agent: environment references, env pools and the episode loop.

Shared by every evaluation command (Pass@(K,T), probes, recovery runs):

* :class:`EnvRef` names an environment configuration (registered id, constructor arguments, split)
  in a picklable way, so worker processes can build the same env;
* :class:`EnvPool` keeps built env stacks (``TurnBudget`` over the env, made with the opt-in
  ``info`` keys an agent needs) for reuse across episodes in one process;
* :func:`play_episode` plays one episode with a sync or async agent and returns an
  :class:`EpisodeResult`; :func:`run_episode` is its synchronous form. Given an ``executor``, it
  resets the env there (and steps it in ``step_executor``, if given), so the event loop stays free
  for the agent's requests while the env loads a game (concurrent episodes of an LLM agent).

An episode with budget ``T`` is reset with ``options={"task": task_id, "max_turns": T}`` and
``seed``; the agent is reset with the same seed. When the budget is hidden the agent's ``info``
lacks ``max_turns`` and ``turns_left`` (and the observation has no budget notice); when it is
shown the observation carries ``TurnBudget``'s notice and the agent receives ``budget=T``.

Example:
    >>> from agentgym_budget.agents import NoisyExpertRecover
    >>> ref = EnvRef.parse("TextWorld-CoinCollector-v0")
    >>> env = ref.make(info_keys={"expert_action"})
    >>> result = run_episode(env, NoisyExpertRecover(eps=0.0), task_id=ref.task_ids()[0], budget=20, seed=1)
    >>> result.won, result.turns == result.success_turn == len(result.actions)
    (True, True)
    >>> env.close()
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_budget.agents.base import close_shared_resources, episode_stats, is_async_agent
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.registration import make, resolve_id
from agentgym_budget.runner.env_args import check_env_kwargs, default_split
from agentgym_budget.wrappers import StateSnapshot, TurnBudget

__all__ = ["EnvPool", "EnvRef", "EpisodeResult", "agent_view", "episode_turn_outcome", "play_episode", "run_episode"]

HIDDEN_BUDGET_KEYS = ("max_turns", "turns_left")
"""``info`` keys removed from what the agent sees when the budget is hidden."""


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


@dataclass
class EpisodeResult:
    """What happened in one episode.

    Attributes:
        task_id: The task played.
        budget: The turn budget ``T``.
        seed: Seed of the env reset and of the agent.
        won: The task was won within the budget.
        lost: The task was lost (a terminal failure in the game).
        turns: Turns played.
        success_turn: The turn of the win (``None`` if not won).
        total_return: Sum of rewards.
        progress: The ``progress`` of the last state.
        actions: Every action, in order.
        rewards: Every reward, in order.
        agent_stats: ``agent.stats()`` after the episode.
        elapsed_s: Wall-clock seconds.
    """

    task_id: str
    budget: int
    seed: int
    won: bool
    lost: bool
    turns: int
    success_turn: int | None
    total_return: float
    progress: float
    actions: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    agent_stats: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_record(self) -> dict[str, Any]:
        """JSON form; the return is stored under ``"return"``."""
        record = asdict(self)
        record["return"] = record.pop("total_return")
        return record


def agent_view(info: Mapping[str, Any], show_budget: bool, hidden: Iterable[str] = ()) -> dict[str, Any]:
    """The ``info`` the agent sees: without :data:`HIDDEN_BUDGET_KEYS` when the budget is hidden, nor ``hidden``.

    ``hidden`` removes keys the env computes for someone else (e.g. the expert's plan a probe needs
    to judge an agent that did not ask for it).

    Example:
        >>> sorted(agent_view({"turn": 1, "max_turns": 5, "turns_left": 4, "won": False}, show_budget=False))
        ['turn', 'won']
        >>> sorted(agent_view({"turn": 1, "expert_plan": ["go east"]}, show_budget=True, hidden={"expert_plan"}))
        ['turn']
    """
    dropped = set(hidden) if show_budget else {*hidden, *HIDDEN_BUDGET_KEYS}
    return {key: value for key, value in info.items() if key not in dropped}


async def _call(method: Any, *args: Any, **kwargs: Any) -> Any:
    result = method(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


async def _run_env(executor: Executor | None, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    if executor is None:
        return method(*args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, lambda: method(*args, **kwargs))


async def play_episode(
    env: gym.Env,
    agent: Any,
    *,
    task_id: str,
    budget: int,
    seed: int,
    show_budget: bool | None = None,
    start: tuple[str, Mapping[str, Any]] | None = None,
    reset_agent: bool = True,
    hidden_keys: Iterable[str] = (),
    executor: Executor | None = None,
    step_executor: Executor | None = None,
) -> EpisodeResult:
    """Play one episode of ``agent`` (sync or async) on ``env`` (a stack with a ``TurnBudget``).

    Args:
        env: The env stack; it is reset here unless ``start`` is given.
        agent: An :class:`~agentgym_budget.agents.Agent` or :class:`~agentgym_budget.agents.AsyncAgent`.
        task_id: Task to play.
        budget: Turn budget ``T`` (passed as the ``max_turns`` reset option).
        seed: Seed of the env reset and of the agent.
        show_budget: Whether the agent is told its budget; ``None`` reads the ``TurnBudget``'s setting.
        start: ``(observation, info)`` of an env already positioned (e.g. restored from a snapshot):
            the env is not reset and the episode continues from there with the turns it has left.
        reset_agent: ``False`` when the caller already reset the agent (e.g. and told it the turns
            before ``start`` with ``observe``): the agent continues its episode.
        hidden_keys: ``info`` keys the agent must not see (see :func:`agent_view`).
        executor: Where ``env.reset`` runs (e.g. a thread, so that concurrent episodes of an async
            agent keep the event loop free while an env loads or generates its game); ``None``: inline.
        step_executor: Where ``env.step`` runs; ``None``: inline. Steps take milliseconds, and handing
            each one to a thread costs a busy worker more CPU than it frees its event loop (see
            :mod:`agentgym_budget.eval.passkt.worker`). The env must not be used by anyone else
            meanwhile; the trajectory is the same wherever it runs.

    Returns:
        The :class:`EpisodeResult`; ``turns`` counts only the turns played here.
    """
    if show_budget is None:
        show_budget = bool(env.get_wrapper_attr("show_budget"))
    began = time.perf_counter()
    if start is None:
        observation, info = await _run_env(
            executor, env.reset, seed=seed, options={"task": task_id, "max_turns": budget}
        )
    else:
        observation, info = start[0], dict(start[1])
    hidden_keys = frozenset(hidden_keys)
    if reset_agent:
        await _call(
            agent.reset,
            info.get("goal", ""),
            observation,
            agent_view(info, show_budget, hidden_keys),
            seed=seed,
            budget=budget if show_budget else None,
        )
    actions, rewards, success_turn, info = await _play_turns(
        env, agent, observation, info, show_budget, hidden_keys, step_executor
    )
    return EpisodeResult(
        task_id=task_id,
        budget=int(budget),
        seed=int(seed),
        won=bool(info.get("won")),
        lost=bool(info.get("lost")),
        turns=len(actions),
        success_turn=success_turn,
        total_return=float(sum(rewards)),
        progress=float(info.get("progress", 0.0)),
        actions=actions,
        rewards=rewards,
        agent_stats=episode_stats(agent),
        elapsed_s=round(time.perf_counter() - began, 4),
    )


async def _play_turns(
    env: gym.Env,
    agent: Any,
    observation: str,
    info: dict[str, Any],
    show_budget: bool,
    hidden_keys: frozenset[str],
    step_executor: Executor | None,
) -> tuple[list[str], list[float], int | None, dict[str, Any]]:
    """Turns until the episode ends: ``(actions, rewards, turn of the first win or None, last info)``."""
    actions: list[str] = []
    rewards: list[float] = []
    success_turn: int | None = None
    done = bool(info.get("won")) or bool(info.get("lost")) or info.get("turns_left") == 0
    while not done:
        action = await _call(agent.act, observation, agent_view(info, show_budget, hidden_keys))
        observation, reward, terminated, truncated, info = await _run_env(step_executor, env.step, action)
        actions.append(action)
        rewards.append(float(reward))
        if info.get("won") and success_turn is None:
            success_turn = len(actions)
        done = bool(terminated or truncated)
    return actions, rewards, success_turn, info


def run_episode(env: gym.Env, agent: Any, **kwargs: Any) -> EpisodeResult:
    """Synchronous :func:`play_episode` (not from inside a running event loop)."""
    if is_async_agent(agent):

        async def play_and_clean_up() -> EpisodeResult:
            try:
                return await play_episode(env, agent, **kwargs)
            finally:
                await close_shared_resources()

        return asyncio.run(play_and_clean_up())
    coroutine = play_episode(env, agent, **kwargs)
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()
    raise RuntimeError("run_episode: a synchronous agent awaited something; pass an async agent's coroutine.")


def episode_turn_outcome(record: Mapping[str, Any], budget: int) -> tuple[bool, int, float]:
    """``(won, turns, return)`` of a logged episode read at a smaller or equal ``budget`` (prefix reading).

    Example:
        >>> record = {"won": True, "success_turn": 4, "turns": 4, "rewards": [0, 0, 0, 1.0], "budget": 10}
        >>> episode_turn_outcome(record, 3), episode_turn_outcome(record, 4)
        ((False, 3, 0.0), (True, 4, 1.0))
    """
    if budget > record["budget"]:
        raise InvalidOptionError(f"An episode run with budget {record['budget']} cannot be read at budget {budget}.")
    turns = min(int(record["turns"]), int(budget))
    success = record.get("success_turn")
    won = success is not None and success <= budget
    return won, turns, float(sum(record.get("rewards", [])[:turns]))
