"""Portable TextWorld engine states: the interpreter's memory and TextWorld's trackers as plain data.

A native TextWorld snapshot (:class:`~.engine.TextWorldEngineState`) holds live TextWorld objects:
propositions, actions and the dependency trees of the quest trackers. TextWorld caches their hash
codes when it builds them, and those codes depend on the process's ``PYTHONHASHSEED``, so such
objects unpickled in another process break the next step. :class:`PortableTextWorldState` holds
the same state as plain data, which :func:`freeze_trackers` writes and :func:`thaw_trackers`
rebuilds into objects of the current process (for the current process's ``Game``):

* the z-machine state (RAM and stack as ``uint8`` arrays, registers, random generator, narrative);
* the trackers, as tables: variables ``[name, type]``, propositions ``[name, [variable, ...]]``,
  actions ``[name, pre, post, command_template, reverse_name, reverse_command_template,
  feedback_rule, mapping]``, tree elements ``[action, parent element]`` (shared elements stay
  shared), then the state's facts (sorted) and variable counts, the valid actions, each quest's
  ``[completions, win events, fail events]`` with events ``[triggered, untriggerable, policy,
  tree]`` (a tree is a list of nodes ``[element, [children]]``), the last action and the
  previous and current winning policies;
* the game's identity (:func:`game_digest` of the ``.z8`` and ``.json`` files), checked on
  restore, since the trackers refer to the game's quests by position.

Example:
    >>> from agentgym_budget.tasks.textworld import games
    >>> from agentgym_budget.tasks.textworld.engine import load_game
    >>> from textworld.generator.game import GameProgression
    >>> path = str(games.generate_game(games.coin_collector_recipe(level=3), seed=0, split="train"))
    >>> progression = GameProgression(load_game(path))
    >>> frozen = freeze_trackers(progression, None, None, progression.winning_policy)
    >>> again = thaw_trackers(frozen, load_game(path))
    >>> sorted(again[0].state.facts) == sorted(progression.state.facts), again[3] == progression.winning_policy
    (True, True)
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from textworld.generator.dependency_tree import DependencyTree
from textworld.generator.game import (
    ActionDependencyTree,
    ActionDependencyTreeElement,
    EventProgression,
    Game,
    GameProgression,
    QuestProgression,
)
from textworld.logic import Action, Placeholder, Proposition, State, Variable

from agentgym_budget.errors import SnapshotMismatchError, SnapshotUnsupportedError
from agentgym_budget.snapshots.codec import JsonData
from agentgym_budget.storage.safe_json import MAX_BYTES, read_regular_file
from agentgym_budget.tasks.textworld.story_file import MAX_STORY_BYTES

__all__: list[str] = []

_ACTION_ATTRIBUTES = frozenset(
    {
        "name",
        "mapping",
        "feedback_rule",
        "command_template",
        "reverse_name",
        "reverse_command_template",
        "preconditions",
        "postconditions",
        "_pre_set",
        "_post_set",
        "_variables",
    }
)


@dataclass(frozen=True)
class PortableTextWorldState:
    """A TextWorld engine state as plain data (see the module docstring).

    Attributes:
        game_digest: :func:`game_digest` of the game the state belongs to.
        ram: The z-machine's dynamic memory.
        stack: The z-machine's stack.
        registers: ``pc, sp, fp, frame_count, opcode`` and the random generator's ``a, interval, counter``.
        narrative: The interpreter's narrative text buffer.
        score: The score so far.
        moves: Moves that changed the game state (TextWorld's count).
        tracked_infos: The extra infos TextWorld asked the game to print, and their last values.
        trackers: TextWorld's trackers (:func:`freeze_trackers`).
    """

    __snapshot_record__: ClassVar[str] = "TextWorldState/1"
    __snapshot_libraries__: ClassVar[tuple[str, ...]] = ("textworld", "jericho")
    __snapshot_trust__: ClassVar[bool] = True

    game_digest: str
    ram: np.ndarray
    stack: np.ndarray
    registers: tuple[int, ...]
    narrative: bytes
    score: int
    moves: int
    tracked_infos: tuple[tuple[str, Any], ...]
    trackers: JsonData


@functools.lru_cache(maxsize=256)
def _digest(z8_path: str, stamp: tuple[int, int, int, int]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for path, cap in ((z8_path, MAX_STORY_BYTES), (os.path.splitext(z8_path)[0] + ".json", MAX_BYTES)):
        digest.update(read_regular_file(path, what="TextWorld game", max_bytes=cap))
    return digest.hexdigest()


def game_digest(z8_path: str) -> str:
    """A content digest of a TextWorld game (its ``.z8`` and ``.json`` files), cached while they are unchanged."""
    json_path = os.path.splitext(z8_path)[0] + ".json"
    z8, meta = os.stat(z8_path), os.stat(json_path)
    return _digest(z8_path, (z8.st_mtime_ns, z8.st_size, meta.st_mtime_ns, meta.st_size))


# ---------------------------------------------------------------------------------------------- freezing
class _Freezer:
    def __init__(self) -> None:
        self.variables: list[list[str]] = []
        self.propositions: list[list[Any]] = []
        self.actions: list[list[Any]] = []
        self.elements: list[list[int]] = []
        self._variable_ids: dict[Variable, int] = {}
        self._proposition_ids: dict[Proposition, int] = {}
        self._action_ids: dict[int, int] = {}
        self._element_ids: dict[int, int] = {}
        self._keep: list[Any] = []  # objects whose id() is a key above stay alive while freezing

    def variable(self, variable: Variable) -> int:
        index = self._variable_ids.get(variable)
        if index is None:
            index = self._variable_ids[variable] = len(self.variables)
            self.variables.append([variable.name, variable.type])
        return index

    def proposition(self, proposition: Proposition) -> int:
        index = self._proposition_ids.get(proposition)
        if index is None:
            arguments = [self.variable(v) for v in proposition.arguments]
            index = self._proposition_ids[proposition] = len(self.propositions)
            self.propositions.append([proposition.name, arguments])
        return index

    def action(self, action: Action) -> int:
        index = self._action_ids.get(id(action))
        if index is None:
            unknown = set(vars(action)) - _ACTION_ATTRIBUTES
            if unknown:
                raise SnapshotUnsupportedError(
                    f"Cannot serialise the TextWorld action {action.name!r}: unknown attributes {sorted(unknown)} "
                    "(a TextWorld version this snapshot format does not know)."
                )
            row = [
                action.name,
                [self.proposition(p) for p in action.preconditions],
                [self.proposition(p) for p in action.postconditions],
                action.command_template,
                action.reverse_name,
                action.reverse_command_template,
                action.feedback_rule,
                [[ph.name, ph.type, self.variable(var)] for ph, var in action.mapping.items()],
            ]
            self._keep.append(action)
            index = self._action_ids[id(action)] = len(self.actions)
            self.actions.append(row)
        return index

    def actions_of(self, actions: Sequence[Action] | None) -> list[int] | None:
        return None if actions is None else [self.action(a) for a in actions]

    def element(self, element: ActionDependencyTreeElement) -> int:
        index = self._element_ids.get(id(element))
        if index is None:
            parent = -1 if element.parent is None else self.element(element.parent)
            self._keep.append(element)
            index = self._element_ids[id(element)] = len(self.elements)
            self.elements.append([self.action(element.value), parent])
        return index

    def node(self, node: Any) -> list[Any]:
        return [self.element(node.element), [self.node(child) for child in node.children]]

    def event(self, event: EventProgression) -> list[Any]:
        tree = [self.node(root) for root in event._tree.roots]
        return [event._triggered, event._untriggerable, self.actions_of(event._policy), tree]


def freeze_trackers(
    progression: GameProgression,
    last_action: Action | None,
    previous_policy: Sequence[Action] | None,
    current_policy: Sequence[Action] | None,
) -> JsonData:
    """TextWorld's tracker state (``StateTracking``'s progression, last action and policies) as plain data."""
    freezer = _Freezer()
    state = progression.state
    facts = [freezer.proposition(p) for p in sorted(state.facts)]
    counts = [[freezer.variable(state._vars_by_name[name]), n] for name, n in sorted(state._var_counts.items())]
    valid = [freezer.action(a) for a in progression._valid_actions]
    quests = [
        [qp.nb_completions, [freezer.event(e) for e in qp.win_events], [freezer.event(e) for e in qp.fail_events]]
        for qp in progression.quest_progressions
    ]
    rest = {
        "last_action": None if last_action is None else freezer.action(last_action),
        "previous_policy": freezer.actions_of(previous_policy),
        "current_policy": freezer.actions_of(current_policy),
    }
    return JsonData(
        {
            "variables": freezer.variables,
            "propositions": freezer.propositions,
            "actions": freezer.actions,
            "elements": freezer.elements,
            "facts": facts,
            "counts": counts,
            "valid": valid,
            "quests": quests,
            **rest,
        }
    )


# ---------------------------------------------------------------------------------------------- thawing
def _tree(kb: Any, nodes: list[Any], elements: list[ActionDependencyTreeElement]) -> ActionDependencyTree:
    def build(row: list[Any], parent: Any) -> Any:
        node = DependencyTree._Node(elements[row[0]])
        node.parent = parent
        node.children = [build(child, node) for child in row[1]]
        return node

    tree = ActionDependencyTree(kb=kb, element_type=ActionDependencyTreeElement)
    tree.roots = [build(row, None) for row in nodes]
    tree._update()
    return tree


def _events(kb: Any, rows: list[Any], events: Sequence[Any], actions: list[Action], elements: list[Any]) -> list[Any]:
    if len(rows) != len(events):
        raise SnapshotMismatchError(f"The snapshot tracks {len(rows)} events where the game has {len(events)}.")
    progressions = []
    for (triggered, untriggerable, policy, tree), event in zip(rows, events, strict=True):
        progression = EventProgression.__new__(EventProgression)
        progression._kb = kb
        progression.event = event
        progression._triggered = bool(triggered)
        progression._untriggerable = bool(untriggerable)
        progression._policy = tuple(actions[i] for i in policy)
        progression._tree = _tree(kb, tree, elements)
        progressions.append(progression)
    return progressions


def thaw_trackers(
    frozen: JsonData, game: Game
) -> tuple[GameProgression, Action | None, tuple[Action, ...] | None, tuple[Action, ...] | None]:
    """Rebuild ``(progression, last_action, previous_policy, current_policy)`` from :func:`freeze_trackers`.

    Raises:
        SnapshotMismatchError: The data does not fit ``game`` (another game) or is malformed.
    """
    data = frozen.value
    try:
        variables, actions, elements, propositions = _thaw_logic(data)
        progression = GameProgression.__new__(GameProgression)
        progression.game, progression.state = game, _thaw_state(data, game, variables, propositions)
        progression._valid_actions = [actions[i] for i in data["valid"]]
        progression.quest_progressions = _thaw_quests(data, game, actions, elements)

        def policy(indices: list[int] | None) -> tuple[Action, ...] | None:
            return None if indices is None else tuple(actions[i] for i in indices)

        last = data["last_action"]
        return (
            progression,
            None if last is None else actions[last],
            policy(data["previous_policy"]),
            policy(data["current_policy"]),
        )
    except SnapshotMismatchError:
        raise
    except (KeyError, IndexError, TypeError, ValueError) as err:
        raise SnapshotMismatchError(f"Corrupt TextWorld snapshot: {type(err).__name__}: {err}.") from err


def _thaw_logic(
    data: Any,
) -> tuple[list[Variable], list[Action], list[ActionDependencyTreeElement], list[Proposition]]:
    """The variables, actions, dependency-tree elements and propositions that the frozen trackers index."""
    variables = [Variable(name, kind) for name, kind in data["variables"]]
    propositions = [Proposition(name, [variables[i] for i in args]) for name, args in data["propositions"]]
    actions = []
    for name, pre, post, command, reverse_name, reverse_command, feedback, mapping in data["actions"]:
        action = Action(name, [propositions[i] for i in pre], [propositions[i] for i in post])
        action.command_template, action.feedback_rule = command, feedback
        action.reverse_name, action.reverse_command_template = reverse_name, reverse_command
        action.mapping = {Placeholder(ph, kind): variables[i] for ph, kind, i in mapping}
        actions.append(action)
    elements = [ActionDependencyTreeElement(actions[row[0]]) for row in data["elements"]]
    for element, (_, parent) in zip(elements, data["elements"], strict=True):
        element.parent = None if parent < 0 else elements[parent]
    return variables, actions, elements, propositions


def _thaw_state(data: Any, game: Game, variables: list[Variable], propositions: list[Proposition]) -> State:
    """The logic state: its facts and its variables by name, type and count."""
    state = State(game.kb.logic)
    for index in data["facts"]:
        proposition = propositions[index]
        state._facts[proposition.signature].add(proposition)
    by_type: defaultdict[str, set[Variable]] = defaultdict(set)
    for index, _ in data["counts"]:
        by_type[variables[index].type].add(variables[index])
    state._vars_by_name = {variables[i].name: variables[i] for i, _ in data["counts"]}
    state._vars_by_type = by_type
    state._var_counts = Counter({variables[i].name: n for i, n in data["counts"]})
    return state


def _thaw_quests(
    data: Any, game: Game, actions: list[Action], elements: list[ActionDependencyTreeElement]
) -> list[QuestProgression]:
    """One progression per tracked quest (none when tracking was off).

    Raises:
        SnapshotMismatchError: The snapshot tracks another number of quests than ``game`` has.
    """
    if data["quests"] and len(data["quests"]) != len(game.quests):
        raise SnapshotMismatchError(
            f"The snapshot tracks {len(data['quests'])} quests where the game has {len(game.quests)}."
        )
    quests = []
    for (completions, wins, fails), quest in zip(data["quests"], game.quests[: len(data["quests"])], strict=True):
        progression = QuestProgression.__new__(QuestProgression)
        progression.quest, progression.kb, progression.nb_completions = quest, game.kb, int(completions)
        progression.win_events = _events(game.kb, wins, quest.win_events, actions, elements)
        progression.fail_events = _events(game.kb, fails, quest.fail_events, actions, elements)
        quests.append(progression)
    return quests
