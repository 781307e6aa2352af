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

The loop's YAML entry may carry the session fields too (``max_turns: 12``, ``env_id: ...``): they are
job-wide defaults (:func:`entry_defaults`), and a row's ``extra_info`` wins field by field. The env
(``env_id`` with its ``env_kwargs`` and ``split``) is one unit: a row that names an ``env_id`` takes
none of the entry's. The entry's ``max_turns`` is the budget of a row that sets none and draws none
(a row's ``budgets`` draw wins); ``task`` and ``seed`` belong to each row, never to the entry.

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

    Job-wide defaults from the loop's YAML entry; the row's fields win:

    >>> defaults, _ = entry_defaults({"max_turns": 12, "env_id": "TextWorld-CoinCollector-v0", "tokenizer": None})
    >>> config, episode = row_episode({"seed": 4}, defaults)
    >>> config.label, episode
    ('TextWorld-CoinCollector-v0 max_turns=12 reward=env', {'seed': 4})
    >>> row_episode({"seed": 4, "max_turns": 3}, defaults)[1]
    {'seed': 4, 'max_turns': 3}
"""

from __future__ import annotations

import dataclasses
import difflib
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

ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(SessionConfig) if f.init)
"""Keys of the loop's YAML entry that are job-wide defaults: the ``SessionConfig`` fields."""

_ENV_FIELDS = ("env_id", "env_kwargs", "split")
_ROW_ONLY = ("task", "seed")


def _plain(value: Any) -> Any:
    """Numpy arrays and scalars (how verl and pandas hand parquet values over) and omegaconf containers as Python values."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, Mapping):  # also an omegaconf DictConfig (a YAML entry's value)
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):  # also a ListConfig
        return [_plain(item) for item in value]
    return value


def entry_defaults(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split the loop's constructor arguments into job-wide session defaults and verl's own arguments.

    verl passes the keys of the loop's YAML entry to its constructor beside its own arguments
    (``trainer_config``, ``tokenizer``, ...). The :data:`ENTRY_FIELDS` among them are defaults for every
    row (see the module docstring); ``None`` counts as absent. With an ``env_id`` the defaults are
    checked at once (an unregistered id or a bad value fails the job's start, not its first row).

    Raises:
        InvalidOptionError: ``task`` or ``seed`` (they name one episode: a row field), a near miss of a
            session field (did-you-mean), or a value the session config refuses.
        InvalidBudgetError: ``max_turns`` or ``budgets`` is not a positive integer.

    Example:
        >>> entry_defaults({"max_turns": 12, "tokenizer": None, "hf_model_type": "qwen2"})
        ({'max_turns': 12}, {'tokenizer': None, 'hf_model_type': 'qwen2'})
        >>> entry_defaults({"max_turn": 12})
        Traceback (most recent call last):
        ...
        agentgym_budget.errors.InvalidOptionError: Unknown key 'max_turn' in the agentgym_budget agent-loop entry. Did you mean 'max_turns'? The entry's session fields (env_id, env_kwargs, split, max_turns, budgets, budget_weights, show_budget, show_actions, reward, process_reward, info_keys) are job-wide defaults; a row's extra_info overrides them.
    """
    defaults: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in _ROW_ONLY:
            raise InvalidOptionError(
                f"{key!r} in the {AGENT_NAME} agent-loop entry names one episode: it is a field of each row's "
                "extra_info (agentgym-budget export-dataset writes it), not a job-wide default."
            )
        if key in ENTRY_FIELDS:
            if value is not None:
                defaults[key] = _plain(value)
            continue
        close = difflib.get_close_matches(str(key), _KNOWN, n=1, cutoff=0.8)  # verl's own names stay clear
        if close:
            raise InvalidOptionError(
                f"Unknown key {key!r} in the {AGENT_NAME} agent-loop entry. Did you mean {close[0]!r}? The entry's "
                f"session fields ({', '.join(ENTRY_FIELDS)}) are job-wide defaults; a row's extra_info overrides them."
            )
        rest[key] = value
    if "env_id" in defaults:
        _session_config(defaults, {})
    return defaults, rest


def _session_config(defaults: Mapping[str, Any], row: Mapping[str, Any]) -> SessionConfig:
    """The session config of a row: the entry's ``defaults`` overridden by the row's config fields."""
    base = {key: value for key, value in defaults.items() if not ("env_id" in row and key in _ENV_FIELDS)}
    values = {**base, **{key: row[key] for key in CONFIG_FIELDS if key in row}}
    if "env_id" not in values:
        raise InvalidOptionError(
            "A verl row's extra_info needs 'env_id' (e.g. 'TextWorld-CoinCollector-v0'), or the "
            f"{AGENT_NAME} agent-loop entry a job-wide env_id; build rows with "
            "`agentgym-budget export-dataset --format verl`."
        )
    return SessionConfig.from_mapping(values)


def row_episode(
    extra_info: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> tuple[SessionConfig, dict[str, Any]]:
    """Read a row's ``extra_info``: the env stack's config and the episode fields (see the module docstring).

    Args:
        extra_info: The row's ``extra_info``.
        defaults: Job-wide session defaults from the loop's YAML entry (:func:`entry_defaults`).

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
    config = _session_config(defaults or {}, values)
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
