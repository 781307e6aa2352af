"""verl dataset rows: what a row of a verl parquet names, and writing those rows (no verl needed).

A verl dataset row plays one episode with the ``agentgym_budget`` agent loop
(:mod:`agentgym_budget.integrations.verl`). Its ``extra_info`` names the episode:

* the env: ``env_id`` (required), ``env_kwargs`` (``"key=value,..."`` or a mapping), ``split``,
  ``budgets`` / ``budget_weights`` (a :class:`~agentgym_budget.wrappers.BudgetMix` draw per episode),
  ``reward`` (``"env"`` or ``"process"``), ``process_reward``, ``show_actions``, ``info_keys``: the
  :class:`~agentgym_budget.integrations.session.SessionConfig` fields;
* the episode: ``task`` (id or index), ``seed`` (picks the task when ``task`` is absent and seeds the
  budget draw), ``max_turns`` (this episode's budget, overriding a draw) and ``show_budget``.

``None`` counts as absent (parquet fills missing struct fields with nulls); other keys (verl's own
``index``, your bookkeeping) are ignored unless they look like a misspelling of one of these.
:func:`verl_rows` builds rows for a split and :func:`write_parquet` writes them
(``agentgym-budget export-dataset --format verl``).

Example:
    >>> config, episode = row_episode({"env_id": "TextWorld-CoinCollector-v0", "env_kwargs": "level=1",
    ...     "seed": 3, "max_turns": 5, "index": 0})
    >>> config.label, episode
    ('TextWorld-CoinCollector-v0(level=1) max_turns=30 reward=env', {'seed': 3, 'max_turns': 5})
    >>> rows = verl_rows(SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1", budgets=(2, 8)),
    ...     episodes=2, seed=10)
    >>> rows[1]["agent_name"], rows[1]["extra_info"]["seed"], rows[1]["extra_info"]["budgets"]
    ('agentgym_budget', 11, [2, 8])
    >>> row_episode({"env_id": "TextWorld-CoinCollector-v0", "max_turn": 5})
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: Unknown field 'max_turn' in a verl row's extra_info. Did you mean 'max_turns'?
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.errors import InvalidOptionError, did_you_mean
from agentgym_budget.integrations.session_config import EPISODE_FIELDS, SessionConfig, episode_fields

__all__ = ["verl_rows"]

AGENT_NAME = "agentgym_budget"
"""The name the agent loop is registered under (a row's ``agent_name``)."""

CONFIG_FIELDS = tuple(
    f.name for f in dataclasses.fields(SessionConfig) if f.init and f.name not in ("max_turns", "show_budget")
)
"""``extra_info`` keys that configure the env stack (``max_turns`` / ``show_budget`` are episode fields)."""

DEFAULT_VERL_SYSTEM_PROMPT = (
    "You are an agent solving a text-based task, one command per turn; every reply is one turn of a limited "
    "budget. Think briefly if you need to, then give your command on the last line as: Action: <command>"
)
"""System message of the rows :func:`verl_rows` makes (one reply = one command, see the action parser)."""

_KNOWN = (*CONFIG_FIELDS, *EPISODE_FIELDS)


def _plain(value: Any) -> Any:
    """Numpy arrays and scalars (how verl and pandas hand parquet values over) as Python values."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def row_episode(extra_info: Mapping[str, Any]) -> tuple[SessionConfig, dict[str, Any]]:
    """Read a row's ``extra_info``: the env stack's config and the episode fields (see the module docstring).

    Raises:
        InvalidOptionError: Not a mapping, no ``env_id``, a misspelt key or a field of the wrong type.
        InvalidBudgetError: A budget is not a positive integer.
        UnknownEnvIdError: ``env_id`` is not registered.
    """
    if not isinstance(extra_info, Mapping):
        raise InvalidOptionError(
            f"A verl row's extra_info must be a mapping naming the episode (env_id, seed, max_turns, ...), "
            f"got {type(extra_info).__name__}."
        )
    values = {key: _plain(value) for key, value in extra_info.items() if value is not None}
    for key in values:
        hint = "" if key in _KNOWN else did_you_mean(str(key), _KNOWN)
        if hint:
            raise InvalidOptionError(f"Unknown field {key!r} in a verl row's extra_info.{hint}")
    if "env_id" not in values:
        raise InvalidOptionError(
            "A verl row's extra_info needs 'env_id' (e.g. 'TextWorld-CoinCollector-v0'); "
            "build rows with `agentgym-budget export-dataset --format verl`."
        )
    config = SessionConfig.from_mapping({key: values[key] for key in CONFIG_FIELDS if key in values})
    return config, episode_fields({key: values[key] for key in EPISODE_FIELDS if key in values})


def _config_info(config: SessionConfig) -> dict[str, Any]:
    return {
        "env_id": config.env_id,
        "env_kwargs": ",".join(f"{key}={value}" for key, value in config.env_kwargs),
        "split": config.split,
        "budgets": None if config.budgets is None else list(config.budgets),
        "budget_weights": None if config.budget_weights is None else list(config.budget_weights),
        "reward": config.reward,
        "show_actions": config.show_actions,
    }


def verl_rows(
    config: SessionConfig,
    *,
    episodes: int,
    seed: int = 0,
    tasks: Sequence[str | int] | None = None,
    system_prompt: str = DEFAULT_VERL_SYSTEM_PROMPT,
) -> list[dict[str, Any]]:
    """Rows of a verl dataset, one episode each (row ``i``: ``seed + i``, ``tasks[i % len(tasks)]``).

    Each row has ``data_source``, ``prompt`` (the system message and an empty user message that the loop
    fills with the goal and first observation), ``agent_name``, ``reward_model`` and ``extra_info``.
    Without ``budgets`` every row sets ``max_turns`` to ``config.max_turns``.

    Raises:
        InvalidOptionError: ``episodes`` is not a positive integer, or ``tasks`` mixes ids and indices.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise InvalidOptionError(f"verl_rows: episodes must be a positive integer, got {episodes!r}.")
    if tasks and len({isinstance(task, numbers.Integral) for task in tasks}) > 1:
        raise InvalidOptionError("verl_rows: tasks must be all ids (str) or all indices (int), not a mix.")
    if config.process_reward or config.info_keys:
        raise InvalidOptionError("verl_rows: process_reward parameters and info_keys are not exported to rows.")
    rows = []
    for i in range(episodes):
        info = {
            **_config_info(config),
            "index": i,
            "seed": seed + i,
            "task": tasks[i % len(tasks)] if tasks else None,
            "max_turns": None if config.budgets else config.max_turns,
            "show_budget": config.show_budget,
        }
        rows.append(
            {
                "data_source": f"agentgym_budget/{config.ref.label}",
                "prompt": [{"role": "system", "content": system_prompt}, {"role": "user", "content": ""}],
                "agent_name": AGENT_NAME,
                "ability": "agent",
                "reward_model": {"style": "env", "ground_truth": ""},
                "extra_info": info,
            }
        )
    return rows


def write_parquet(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` as a parquet file (needs ``pyarrow``, in the ``verl`` extra); return its path.

    Raises:
        InvalidOptionError: No rows.
        MissingDependencyError: ``pyarrow`` is not installed.
    """
    if not rows:
        raise InvalidOptionError("write_parquet: no rows to write.")
    pyarrow = require("pyarrow", extra="verl", feature="Writing a verl parquet dataset")
    parquet = require("pyarrow.parquet", extra="verl", feature="Writing a verl parquet dataset", package="pyarrow")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parquet.write_table(pyarrow.Table.from_pylist([dict(row) for row in rows]), path)
    return path
