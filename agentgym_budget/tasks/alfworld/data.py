"""Loading the official ALFWorld data (the ``json_2.1.1`` tree), with errors instead of empty envs.

ALFWorld's release data is a directory tree::

    <data_dir>/json_2.1.1/<split>/<task folder>/<trial folder>/game.tw-pddl
                                                               /traj_data.json

with the splits ``train``, ``valid_seen`` and ``valid_unseen`` (and ``valid_train``). ``data_dir``
may be the folder that holds ``json_2.1.1`` (``$ALFWORLD_DATA`` in ALFWorld's setup), the
``json_2.1.1`` folder itself, or a folder holding the split folders directly. When no
``data_dir`` is passed, :data:`DATA_ENV_VAR` is read.

:func:`find_games` selects games as ALFWorld's ``AlfredTWEnv.collect_game_files`` does:
trials with both files, of an accepted task type (the prefix of ALFWorld's task folder names,
else ``traj_data.json``'s ``task_type``) and whose game is marked ``"solvable": true``, skipping
``movable``/``Sliced`` trials (which the text engine does not support). Unlike ALFWorld (which logs "0 games" and carries on), a missing
directory or a selection without games raises :class:`~agentgym_budget.errors.DataError`
naming the path and what was expected.

Game files (official or generated) are read by :func:`read_game` and :func:`_translate_game`,
which parse them and never run them: JSON, TextWorld's grammar with every ``{expression}``
checked against the grammar's small language (:func:`~.grammar.check_grammar`; TextWorld
itself would ``eval`` it), and the PDDL by the planner's translator. A file that is truncated,
not JSON, lacks a field or holds anything else raises :class:`~agentgym_budget.errors.DataError`
naming it.

Example:
    >>> import tempfile
    >>> find_games(tempfile.mkdtemp(), "train", None)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: ALFWorld data: no split folder 'train' under ...
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_budget.errors import DataError
from agentgym_budget.storage.safe_json import read_json_file, resolve_user_path
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__: list[str] = []

DATA_ENV_VAR = "AGENTGYM_BUDGET_ALFWORLD_DATA"
"""Environment variable naming the official ALFWorld data directory (used when ``data_dir`` is not given)."""

_SOLVABLE = re.compile(r'"solvable"\s*:\s*(true|false)')
_GAME_FIELDS = ("pddl_domain", "grammar", "pddl_problem")
_LAYOUT = "<data_dir>/json_2.1.1/<split>/<task>/<trial>/{game.tw-pddl, traj_data.json}"


@dataclass(frozen=True)
class OfficialGame:
    """One trial of the official data.

    Attributes:
        task_id: ``"<task folder>/<trial folder>"``.
        game_path: Its ``game.tw-pddl``.
        task_type: ALFRED task type from ``traj_data.json``.
    """

    task_id: str
    game_path: str
    task_type: str


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """``data_dir``, else :data:`DATA_ENV_VAR` if set, else ``None`` (generated games)."""
    if data_dir is None:
        data_dir = os.environ.get(DATA_ENV_VAR) or None
    return None if data_dir is None else resolve_user_path(data_dir, what="ALFWorld data")


def _data_root(data_dir: Path, split: str) -> Path:
    """The folder of ``split`` inside ``data_dir`` (see the module docstring for accepted layouts).

    Raises:
        DataError: ``data_dir`` does not exist or holds no folder for ``split``.
    """
    if not data_dir.is_dir():
        raise DataError(
            f"ALFWorld data: {data_dir} does not exist or is not a directory. Expected the official data "
            f"laid out as {_LAYOUT} (download it with ALFWorld's `alfworld-download`)."
        )
    for candidate in (data_dir / "json_2.1.1" / split, data_dir / split):
        if candidate.is_dir():
            return candidate
    raise DataError(
        f"ALFWorld data: no split folder {split!r} under {data_dir} (looked for {data_dir / 'json_2.1.1' / split} "
        f"and {data_dir / split}). Expected {_LAYOUT}."
    )


def _read_json(path: str | os.PathLike[str], expected: str) -> Any:
    return read_json_file(path, what=f"ALFWorld data (expected {expected})")


def read_game_data(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON content of a ``game.tw-pddl``, its fields checked (the grammar is not parsed here).

    Raises:
        DataError: The file is unreadable, or not a JSON object with the text fields ``pddl_domain``,
            ``grammar`` and ``pddl_problem`` (and, if present, a ``walkthrough`` list of commands).
    """
    expected = "a JSON object with " + ", ".join(_GAME_FIELDS)
    data = _read_json(path, expected)
    if not isinstance(data, dict):
        raise DataError(f"ALFWorld data: {path} holds a JSON {type(data).__name__}; expected {expected}.")
    for key in _GAME_FIELDS:
        if not isinstance(data.get(key), str):
            raise DataError(f"ALFWorld data: {path} has no text field {key!r}; expected {expected}.")
    walkthrough = data.get("walkthrough")
    if walkthrough is not None and not (isinstance(walkthrough, list) and all(isinstance(c, str) for c in walkthrough)):
        raise DataError(f"ALFWorld data: {path}: 'walkthrough' must be a list of commands, got {walkthrough!r:.80}.")
    return data


def read_game(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Any]:
    """The JSON content of a ``game.tw-pddl`` and its ``GameLogic`` (grammar parsed and checked).

    Raises:
        DataError: The file is unreadable, not a JSON object with the text fields ``pddl_domain``,
            ``grammar`` and ``pddl_problem``, or its grammar does not parse or holds expressions
            outside the grammar's language.
    """
    from textworld.envs.pddl import logic as pddl_logic

    from agentgym_budget.tasks.alfworld.grammar import check_grammar

    data = read_game_data(path)
    try:
        logic = pddl_logic.GameLogic(domain=data["pddl_domain"], grammar=data["grammar"])
    except Exception as err:  # TatSu's FailedParse, JSONDecodeError of the grammar's blocks, ...
        message = " ".join(str(err).split())[:300]
        raise DataError(
            f"ALFWorld data: the grammar of {path} does not parse ({type(err).__name__}: {message})."
        ) from err
    check_grammar(logic, str(path))
    return data, logic


def _translate_game(path: str | os.PathLike[str], data: dict[str, Any]) -> Any:
    """The planner's translation (:func:`~.planner.translate`) of a game read by :func:`read_game`.

    Raises:
        DataError: The planner's translator refuses the PDDL (it raises, or calls ``sys.exit``).
    """
    from agentgym_budget.tasks.alfworld.planner import translate

    try:
        return translate(data["pddl_domain"], data["pddl_problem"])
    except (Exception, SystemExit) as err:
        message = " ".join(str(err).split())[:300]
        raise DataError(
            f"ALFWorld data: the PDDL of {path} cannot be read by the planner ({type(err).__name__}: {message})."
        ) from err


def read_trajectory(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A trial's ``traj_data.json`` (``{}`` if there is none).

    Raises:
        DataError: The file exists but is unreadable or not a JSON object.
    """
    if not os.path.lexists(path):  # present but not a regular file (a FIFO, a loop): DataError below
        return {}
    data = _read_json(path, "a JSON object (ALFRED's traj_data.json)")
    if not isinstance(data, dict):
        raise DataError(f"ALFWorld data: {path} holds a JSON {type(data).__name__}; expected a JSON object.")
    return data


def _solvable(game_path: Path) -> bool:
    """The game's ``"solvable"`` flag (ALFWorld writes it last, so the file's tail usually suffices)."""
    with open(game_path, "rb") as file:
        file.seek(0, os.SEEK_END)
        file.seek(max(0, file.tell() - 200))
        tail = file.read().decode("utf-8", "replace")
    match = _SOLVABLE.search(tail)
    if match and tail.rstrip().endswith("}"):
        return match.group(1) == "true"
    data = _read_json(game_path, "a JSON object (ALFWorld's game.tw-pddl)")
    if not isinstance(data, dict):
        raise DataError(f"ALFWorld data: {game_path} holds a JSON {type(data).__name__}; expected a JSON object.")
    return bool(data.get("solvable", False))


def _task_type(trial: Path, traj_path: Path) -> str | None:
    """The trial's task type: the prefix of ALFWorld's task folder name, else ``traj_data.json``'s."""
    prefix = trial.parent.name.split("-", 1)[0]
    if prefix in TASK_TYPES:
        return prefix
    return read_trajectory(traj_path).get("task_type")


def find_games(data_dir: str | os.PathLike[str], split: str, task_types: Collection[str] | None) -> list[OfficialGame]:
    """The playable games of ``split`` with a task type in ``task_types`` (all if ``None``), sorted by id.

    Raises:
        DataError: The split folder is missing, or it holds no playable game of those types.
    """
    root = _data_root(Path(data_dir), split)
    games, seen_trials = [], 0
    for traj_path in sorted(root.glob("*/*/traj_data.json")):
        trial = traj_path.parent
        seen_trials += 1
        if "movable" in trial.parent.name or "Sliced" in trial.parent.name:
            continue
        game_path = trial / "game.tw-pddl"
        if not game_path.is_file():
            continue
        try:
            task_type = _task_type(trial, traj_path)
            if task_types is not None and task_type not in task_types:
                continue
            if not _solvable(game_path):
                continue
        except DataError:
            raise
        except (OSError, ValueError) as err:
            raise DataError(f"ALFWorld data: cannot read {trial}: {type(err).__name__}: {err}") from err
        games.append(OfficialGame(f"{trial.parent.name}/{trial.name}", str(game_path), task_type))
    if not games:
        wanted = "any task type" if task_types is None else "task types " + ", ".join(sorted(task_types))
        raise DataError(
            f"ALFWorld data: no playable game of {wanted} in {root} ({seen_trials} trial folders with a "
            f'traj_data.json). Expected {_LAYOUT}, each game.tw-pddl marked "solvable": true.'
        )
    return games
