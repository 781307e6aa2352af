"""ScienceWorld's 30 tasks, their variations and splits, and its simplifications, known without the engine.

:data:`TASKS` lists the tasks of scienceworld 1.2.3 in the paper's order (ids ``1-1`` to ``10-2``), each
with its number of variations and where its dev and test variations start: every split is a contiguous
range (train from 0, about half; dev about a quarter; test the rest), as the engine's
``get_variations_train/dev/test()`` list them after a load (checked by ``tests/test_sciworld_env.py``).
7,207 variations in all: 3,592 train, 1,796 dev, 1,819 test. The engine's ``get_random_variation_*``
draw with an unseeded generator; here the env's seeded ``np_random`` draws a task id.

Example:
    >>> resolve_tasks("1-1"), resolve_tasks("boil,melt")
    (('boil',), ('boil', 'melt'))
    >>> TASKS["boil"].variations("dev")
    range(14, 21)
    >>> sum(len(task.variations("train")) for task in TASKS.values())
    3592
    >>> resolve_simplifications("openDoors,teleportAction"), resolve_simplifications(["easy"])
    ('openDoors,teleportAction', 'easy')
    >>> resolve_tasks("boill")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.InvalidOptionError: ScienceWorld-v0: unknown task 'boill'. Did you mean 'boil'? Tasks are named by their name or paper id (agentgym-budget docs, ScienceWorld page): boil (1-1), melt (1-2), ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentgym_budget.errors import InvalidOptionError, did_you_mean

__all__ = ["TASKS"]

SPLITS: tuple[str, ...] = ("train", "dev", "test")
"""The engine's variation splits."""

SIMPLIFICATIONS: Mapping[str, str] = {
    "teleportAction": "adds 'teleport to ROOM' actions",
    "openDoors": "every door starts open",
    "openContainers": "every container starts open",
    "selfWateringFlowerPots": "flower pots keep themselves watered",
    "noElectricalAction": "removes the 'connect' and 'disconnect' actions (not on the electricity tasks)",
    "easy": "teleportAction, openDoors, selfWateringFlowerPots and (but on the electricity tasks) noElectricalAction",
}
"""The engine's simplifications (``easy`` is the engine's own bundle; it does not open containers)."""

_ELECTRICAL = ("power-component", "test-conductivity")
_ENV = "ScienceWorld-v0"


@dataclass(frozen=True)
class TaskSpec:
    """One ScienceWorld task.

    Attributes:
        paper_id: The paper's id (``"1-1"``).
        name: The engine's name (``"boil"``).
        topic: The paper's topic.
        title: What the agent does.
        count: Number of variations.
        dev_start: First dev variation (train is ``0 .. dev_start - 1``).
        test_start: First test variation (test runs to ``count - 1``).
    """

    paper_id: str
    name: str
    topic: str
    title: str
    count: int
    dev_start: int
    test_start: int

    def variations(self, split: str) -> range:
        """The variations of ``split``."""
        bounds = {"train": (0, self.dev_start), "dev": (self.dev_start, self.test_start)}
        start, stop = bounds.get(split, (self.test_start, self.count))
        return range(start, stop)

    @property
    def electrical(self) -> bool:
        """The task needs the ``connect`` actions (``noElectricalAction`` cannot apply)."""
        return self.name.startswith(_ELECTRICAL)


def _task(paper_id: str, name: str, topic: str, title: str, count: int, dev: int, test: int) -> TaskSpec:
    return TaskSpec(paper_id, name, topic, title, count, dev, test)


TASKS: Mapping[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        _task("1-1", "boil", "Matter", "boil a substance", 30, 14, 21),
        _task("1-2", "melt", "Matter", "melt a substance", 30, 14, 21),
        _task("1-3", "freeze", "Matter", "freeze a substance", 30, 14, 21),
        _task("1-4", "change-the-state-of-matter-of", "Matter", "change a substance's state of matter", 30, 14, 21),
        _task("2-1", "use-thermometer", "Measurement", "measure an object's temperature, then sort it", 540, 270, 405),
        _task("2-2", "measure-melting-point-known-substance", "Measurement",
              "measure a named substance's melting point", 436, 218, 327),
        _task("2-3", "measure-melting-point-unknown-substance", "Measurement",
              "measure an unknown substance's melting point", 300, 150, 225),
        _task("3-1", "power-component", "Electricity", "build a circuit that powers a component", 20, 10, 15),
        _task("3-2", "power-component-renewable-vs-nonrenewable-energy", "Electricity",
              "power a component from a renewable source", 20, 10, 15),
        _task("3-3", "test-conductivity", "Electricity", "test whether a named object conducts", 900, 450, 675),
        _task("3-4", "test-conductivity-of-unknown-substances", "Electricity",
              "test whether an unknown substance conducts", 600, 300, 450),
        _task("4-1", "find-living-thing", "Classification", "find a living thing, put it in a box", 300, 150, 225),
        _task("4-2", "find-non-living-thing", "Classification",
              "find a non-living thing, put it in a box", 300, 150, 225),
        _task("4-3", "find-plant", "Classification", "find a plant, put it in a box", 300, 150, 225),
        _task("4-4", "find-animal", "Classification", "find an animal, put it in a box", 300, 150, 225),
        _task("5-1", "grow-plant", "Biology", "grow a plant from a seed", 126, 62, 93),
        _task("5-2", "grow-fruit", "Biology", "grow plants until they bear fruit", 126, 62, 93),
        _task("6-1", "chemistry-mix", "Chemistry", "mix a named chemical", 32, 16, 24),
        _task("6-2", "chemistry-mix-paint-secondary-color", "Chemistry", "mix a secondary colour", 36, 18, 27),
        _task("6-3", "chemistry-mix-paint-tertiary-color", "Chemistry", "mix a tertiary colour", 36, 18, 27),
        _task("7-1", "lifespan-longest-lived", "Biology", "find the longest-lived animal", 125, 62, 93),
        _task("7-2", "lifespan-shortest-lived", "Biology", "find the shortest-lived animal", 125, 62, 93),
        _task("7-3", "lifespan-longest-lived-then-shortest-lived", "Biology",
              "find the longest-, then the shortest-lived animal", 125, 62, 93),
        _task("8-1", "identify-life-stages-1", "Biology", "order a plant's life stages", 14, 6, 9),
        _task("8-2", "identify-life-stages-2", "Biology", "order an animal's life stages", 10, 4, 6),
        _task("9-1", "inclined-plane-determine-angle", "Forces", "find the steeper inclined plane", 168, 84, 126),
        _task("9-2", "inclined-plane-friction-named-surfaces", "Forces",
              "find the surface with more friction (named)", 1386, 692, 1038),
        _task("9-3", "inclined-plane-friction-unnamed-surfaces", "Forces",
              "find the surface with more friction (unnamed)", 162, 80, 120),
        _task("10-1", "mendelian-genetics-known-plant", "Biology",
              "predict a known plant's trait from a cross", 120, 60, 90),
        _task("10-2", "mendelian-genetics-unknown-plant", "Biology",
              "find whether an unknown plant's trait is dominant", 480, 240, 360),
    )
}  # fmt: skip
"""Every task by engine name, in the paper's order."""

_BY_PAPER_ID = {spec.paper_id: spec.name for spec in TASKS.values()}


def _listing() -> str:
    return ", ".join(f"{spec.name} ({spec.paper_id})" for spec in TASKS.values())


def resolve_tasks(task: str | Sequence[str] | None) -> tuple[str, ...]:
    """The engine names of ``task``: a name or paper id, several (a list, or comma-separated), ``None`` for all 30.

    Raises:
        InvalidOptionError: An unknown task (with did-you-mean), an empty selection, or a wrong type.
    """
    if task is None:
        return tuple(TASKS)
    if isinstance(task, str):
        given = [part.strip() for part in task.split(",")]
    elif isinstance(task, Sequence) and all(isinstance(part, str) for part in task):
        given = [part.strip() for part in task]
    else:
        raise InvalidOptionError(
            f"{_ENV}: task must be a task name or paper id (str), a list of them, or None for all 30; "
            f"got {type(task).__name__} {task!r:.80}."
        )
    names: list[str] = []
    for part in given:
        name = _BY_PAPER_ID.get(part, part)
        if name not in TASKS:
            hint = did_you_mean(part, [*TASKS, *_BY_PAPER_ID])
            raise InvalidOptionError(
                f"{_ENV}: unknown task {part!r}.{hint} Tasks are named by their name or paper id "
                f"(agentgym-budget docs, ScienceWorld page): {_listing()}."
            )
        if name not in names:
            names.append(name)
    if not names:
        raise InvalidOptionError(f"{_ENV}: task names no task; use None for all 30.")
    return tuple(sorted(names, key=list(TASKS).index))


def resolve_simplifications(given: str | Sequence[str], tasks: Sequence[str] = ()) -> str:
    """The engine's simplification string for ``given`` (comma-separated or a list), sorted, for ``tasks``.

    Raises:
        InvalidOptionError: An unknown simplification (with did-you-mean), a wrong type, or
            ``noElectricalAction`` with an electricity task among ``tasks``.
    """
    if isinstance(given, str):
        parts = [part.strip() for part in given.split(",") if part.strip()]
    elif isinstance(given, Sequence) and all(isinstance(part, str) for part in given):
        parts = [part.strip() for part in given if part.strip()]
    else:
        raise InvalidOptionError(
            f"{_ENV}: simplifications must be a comma-separated str or a list of str, got {type(given).__name__}."
        )
    for part in parts:
        if part not in SIMPLIFICATIONS:
            raise InvalidOptionError(
                f"{_ENV}: unknown simplification {part!r}.{did_you_mean(part, SIMPLIFICATIONS)} "
                f"Simplifications: {', '.join(SIMPLIFICATIONS)}."
            )
    electrical = [name for name in tasks if TASKS[name].electrical]
    if "noElectricalAction" in parts and electrical:
        raise InvalidOptionError(
            f"{_ENV}: noElectricalAction removes the actions {electrical[0]!r} needs; choose tasks without the "
            "electricity tasks (3-1 to 3-4), or 'easy', which leaves them their actions."
        )
    return ",".join(sorted(set(parts)))
