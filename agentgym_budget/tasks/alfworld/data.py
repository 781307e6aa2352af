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

Example:
    >>> import tempfile
    >>> find_games(tempfile.mkdtemp(), "train", None)
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: ALFWorld data: no split folder 'train' under ...
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from agentgym_budget.errors import DataError
from agentgym_budget.tasks.alfworld.task_types import TASK_TYPES

__all__ = ["DATA_ENV_VAR", "OfficialGame", "data_root", "find_games", "resolve_data_dir"]

DATA_ENV_VAR = "AGENTGYM_BUDGET_ALFWORLD_DATA"
"""Environment variable naming the official ALFWorld data directory (used when ``data_dir`` is not given)."""

_SOLVABLE = re.compile(r'"solvable"\s*:\s*(true|false)')
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
    return None if data_dir is None else Path(data_dir).expanduser().resolve()


def data_root(data_dir: Path, split: str) -> Path:
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


def _solvable(game_path: Path) -> bool:
    """The game's ``"solvable"`` flag (ALFWorld writes it last, so the file's tail usually suffices)."""
    with open(game_path, "rb") as file:
        file.seek(0, os.SEEK_END)
        file.seek(max(0, file.tell() - 200))
        tail = file.read().decode("utf-8", "replace")
    match = _SOLVABLE.search(tail)
    if match and tail.rstrip().endswith("}"):
        return match.group(1) == "true"
    with open(game_path) as file:
        return bool(json.load(file).get("solvable", False))


def _task_type(trial: Path, traj_path: Path) -> str | None:
    """The trial's task type: the prefix of ALFWorld's task folder name, else ``traj_data.json``'s."""
    prefix = trial.parent.name.split("-", 1)[0]
    if prefix in TASK_TYPES:
        return prefix
    return json.loads(traj_path.read_text()).get("task_type")


def find_games(data_dir: str | os.PathLike[str], split: str, task_types: Collection[str] | None) -> list[OfficialGame]:
    """The playable games of ``split`` with a task type in ``task_types`` (all if ``None``), sorted by id.

    Raises:
        DataError: The split folder is missing, or it holds no playable game of those types.
    """
    root = data_root(Path(data_dir), split)
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
