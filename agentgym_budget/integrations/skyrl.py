"""SkyRL-gym integration: every agentgym-budget environment as a SkyRL text env (extra ``skyrl``).

:func:`register_skyrl_env` registers :class:`BudgetTextEnv` under ``agentgym_budget`` (or another id)
with ``skyrl_gym.register``; a second call is a no-op when the same entry point is registered, and
an id taken by another env raises :class:`~agentgym_budget.errors.InvalidOptionError`. How SkyRL's
contract is mapped:

* SkyRL makes one env per trajectory: ``BudgetTextEnv(env_config, extras)``. ``env_config`` (the
  ``environment.skyrl_gym.agentgym_budget`` section of a SkyRL config, or a dict) is a
  :class:`~agentgym_budget.integrations.session_config.SessionConfig` mapping (``env_id``, ``env_kwargs``,
  ``max_turns``, ``budgets``, ``show_budget``, ``reward``, ...). Stacks are reused across
  trajectories from a process-wide :class:`~agentgym_budget.integrations.pool.SessionPool`.
* The episode comes from the dataset row's ``extra_info`` (``task``, ``seed``, ``max_turns``,
  ``show_budget``; other keys are ignored unless they look like a misspelling of one of these).
  The episode's budget is the row's ``max_turns``, else a ``budgets`` draw, else the config's
  ``max_turns``. SkyRL's generator overwrites ``extras["max_turns"]`` with one global value and stops
  every trajectory there, so that value is the generator's limit, never the budget: when an episode's
  budget exceeds it, ``init`` warns with :class:`GeneratorLimitWarning` (the generator would cut the
  episode before its budget runs out, and ``truncated`` would never be reported). Set the generator's
  ``max_turns`` to at least the largest budget.
* ``init(prompt)`` resets and returns the prompt plus a user message with the first observation
  (appended to the prompt's last user message when it has no content).
* ``step(text)``: the whole LLM response is parsed into one command (one turn) by the shared
  parser; the result has the turn's reward, ``done`` (terminated or truncated), the next
  observation as a user message (none once done) and ``metadata`` with ``terminated``,
  ``truncated``, ``turn``, ``max_turns``, ``won``, ``command`` and ``matched``.
* ``get_metrics()`` reports ``won``, ``turns``, ``budget``, ``truncated`` and ``return`` per trajectory,
  plus ``won@T`` and ``return@T`` under the episode's budget ``T``. SkyRL averages each key over the
  trajectories that report it, so ``won@T`` becomes the success rate at budget ``T`` under BudgetMix
  (``won`` alone mixes the budgets); ``aggregate_metrics`` adds ``episodes@T``, the count per budget.

Example:
    >>> register_skyrl_env()
    'agentgym_budget'
    >>> register_skyrl_env()  # idempotent
    'agentgym_budget'
    >>> import skyrl_gym
    >>> env = skyrl_gym.make("agentgym_budget", env_config={"env_id": "TextWorld-CoinCollector-v0",
    ...     "env_kwargs": "level=1", "max_turns": 4}, extras={"extra_info": {"seed": 0}, "max_turns": 99})
    >>> prompt, meta = env.init([{"role": "user", "content": "Play."}])
    >>> out = env.step("I see a coin.\\nAction: take coin")
    >>> out["reward"], out["done"], out["metadata"]["terminated"], env.max_turns
    (1.0, True, True, 4)
    >>> env.close()
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.errors import EpisodeOverError, InvalidOptionError, did_you_mean
from agentgym_budget.integrations.pool import shared_pool
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.session_config import EPISODE_FIELDS, SessionConfig, episode_fields

__all__ = [
    "BudgetTextEnv",  # noqa: F822 (built on first use by __getattr__: it needs skyrl-gym)
    "GeneratorLimitWarning",
    "register_skyrl_env",
]


class GeneratorLimitWarning(UserWarning):
    """An episode's budget exceeds the ``max_turns`` SkyRL's generator stops every trajectory at."""


DEFAULT_SKYRL_ID = "agentgym_budget"
"""The id :func:`register_skyrl_env` registers by default (SkyRL's ``env_class``)."""

_ENTRY_POINT = f"{__name__}:BudgetTextEnv"
_REGISTER_LOCK = threading.Lock()


def _skyrl() -> Any:
    return require("skyrl_gym", extra="skyrl", feature="The SkyRL-gym integration", package="skyrl-gym")


def __getattr__(name: str) -> Any:
    if name == "BudgetTextEnv":
        return _classes().BudgetTextEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plain(value: Any) -> Any:
    """An OmegaConf node (SkyRL configs are OmegaConf) as plain containers; anything else unchanged."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value


def _episode(extra_info: Mapping[str, Any]) -> dict[str, Any]:
    """The episode fields of a row's ``extra_info``; other keys are ignored unless they look like a typo of one."""
    ignored = [key for key in extra_info if key not in EPISODE_FIELDS and not did_you_mean(str(key), EPISODE_FIELDS)]
    return episode_fields(extra_info, ignore=ignored)


def _generator_limit(extras: Mapping[str, Any] | None) -> int | None:
    value = (extras or {}).get("max_turns")
    return None if value is None or isinstance(value, bool) else int(value)


def aggregate_budget_metrics(metrics: list[Mapping[str, Any]]) -> dict[str, float]:
    """SkyRL's averaging (each numeric key over the trajectories reporting it) plus ``episodes@T`` counts.

    Example:
        >>> aggregate_budget_metrics([{"won": 1.0, "won@5": 1.0}, {"won": 0.0, "won@10": 0.0},
        ...     {"won": 1.0, "won@10": 1.0}])
        {'won': 0.6666666666666666, 'won@5': 1.0, 'won@10': 0.5, 'episodes@5': 1.0, 'episodes@10': 2.0}
    """
    sums: dict[str, list[float]] = {}
    for metric in metrics:
        for key, value in metric.items():
            if isinstance(value, (bool, int, float)):
                sums.setdefault(key, []).append(float(value))
    result = {key: sum(values) / len(values) for key, values in sums.items()}
    for key, values in sums.items():
        if key.startswith("won@"):
            result[f"episodes@{key[4:]}"] = float(len(values))
    return result


def _warn_if_cut(max_turns: int, generator_max_turns: int | None) -> None:
    """Warn when SkyRL's generator would stop an episode of ``max_turns`` turns before its budget."""
    if generator_max_turns is not None and max_turns > generator_max_turns:
        warnings.warn(
            f"BudgetTextEnv: the episode's budget is {max_turns} turns but SkyRL's generator stops "
            f"every trajectory at max_turns={generator_max_turns}, so it is cut before its budget "
            "(and never reported truncated). Raise the generator's max_turns to at least the largest budget.",
            GeneratorLimitWarning,
            stacklevel=3,
        )


def _first_messages(prompt: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """``prompt`` with the first observation ``text``: filling an empty last user message, else appended."""
    messages = [dict(message) for message in prompt]
    if messages and messages[-1].get("role") == "user" and not messages[-1].get("content"):
        messages[-1]["content"] = text
    else:
        messages.append({"role": "user", "content": text})
    return messages


def _step_metadata(turn: Any) -> dict[str, Any]:
    """The ``metadata`` of a SkyRL step output: the session turn's outcome and parsed command."""
    return {
        "terminated": turn.terminated,
        "truncated": turn.truncated,
        "turn": turn.turn,
        "max_turns": turn.max_turns,
        "won": turn.won,
        "command": turn.command,
        "matched": turn.matched,
        "env_reward": turn.env_reward,
    }


def _record_metrics(record: Mapping[str, Any]) -> dict[str, Any]:
    """An episode record as SkyRL metrics, with ``won@T`` and ``return@T`` keyed by its budget ``T``."""
    budget = record["budget"]
    return {
        "won": float(record["won"]),
        "turns": record["turns"],
        "budget": budget,
        "truncated": float(record["truncated"]),
        "return": record["return"],
        f"won@{budget}": float(record["won"]),
        f"return@{budget}": record["return"],
    }


class _SessionTextEnv:
    """The methods of :class:`BudgetTextEnv`, mixed into SkyRL-gym's ``BaseTextEnv`` when skyrl_gym is imported."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        values = _plain(env_config) or {}
        if not isinstance(values, Mapping):
            raise InvalidOptionError(f"BudgetTextEnv: env_config must be a mapping, got {type(values).__name__}.")
        self.config = SessionConfig.from_mapping(values)
        self._fields = _episode(_plain((extras or {}).get("extra_info") or {}))
        self._pool = shared_pool(self.config)
        self._session = self._pool.acquire()
        self._record: dict[str, Any] | None = None
        self.max_turns = self._fields.get("max_turns", self.config.max_turns)
        self.generator_max_turns = _generator_limit(extras)

    @property
    def session(self) -> EpisodeSession | None:
        """The session playing this trajectory (``None`` once closed)."""
        return self._session

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        turn = self._session.reset(**self._fields)
        self.turns, self.max_turns = 0, turn.max_turns
        _warn_if_cut(turn.max_turns, self.generator_max_turns)
        messages = _first_messages(prompt, turn.text)
        return messages, {"task_id": turn.task_id, "max_turns": turn.max_turns}

    def step(self, action: str) -> Any:
        from skyrl_gym.envs.base_text_env import BaseTextEnvStepOutput

        if self._session is None:
            raise EpisodeOverError("BudgetTextEnv.step: the env is closed.")
        turn = self._session.step(action)
        self.turns = turn.turn
        self._record = self._session.record()
        return BaseTextEnvStepOutput(
            observations=[] if turn.done else [{"role": "user", "content": turn.text}],
            reward=turn.reward,
            done=turn.done,
            metadata=_step_metadata(turn),
            postprocessed_action=turn.command,
        )

    def get_metrics(self) -> dict[str, Any]:
        record = (
            self._record
            if self._record is not None
            else (self._session.record() if self._session is not None and self._session.last is not None else None)
        )
        return {} if record is None else _record_metrics(record)

    @staticmethod
    def aggregate_metrics(metrics: list[dict[str, Any]]) -> dict[str, Any]:
        return aggregate_budget_metrics(metrics)

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            self._record = session.record() if session.last is not None else None
            self._pool.release(session)


@functools.cache
def _classes() -> SimpleNamespace:
    _skyrl()
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    class BudgetTextEnv(_SessionTextEnv, BaseTextEnv):
        """A SkyRL text env over an :class:`EpisodeSession` (see the module docstring)."""

    BudgetTextEnv.__module__ = __name__
    return SimpleNamespace(BudgetTextEnv=BudgetTextEnv)


def register_skyrl_env(env_id: str = DEFAULT_SKYRL_ID) -> str:
    """Register :class:`BudgetTextEnv` with ``skyrl_gym`` under ``env_id`` (idempotent); return the id.

    Raises:
        MissingDependencyError: ``skyrl-gym`` is not installed (extra ``skyrl``).
        InvalidOptionError: ``env_id`` is already registered for another environment.
    """
    skyrl_gym = _skyrl()
    from skyrl_gym.envs import registration

    with _REGISTER_LOCK:
        existing = registration.registry.get(env_id)
        if existing is not None:
            if existing.entry_point == _ENTRY_POINT:
                return env_id
            raise InvalidOptionError(
                f"The SkyRL env id {env_id!r} is already registered for {existing.entry_point!r}; "
                "pass another id to register_skyrl_env()."
            )
        skyrl_gym.register(id=env_id, entry_point=_ENTRY_POINT)
    return env_id
