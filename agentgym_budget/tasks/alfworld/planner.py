"""The Fast Downward planner under ALFWorld, shared without leaks.

TextWorld's PDDL backend keeps its game state inside Fast Downward's shared library
(``fast_downward.load_lib()``), which holds one task at a time in global variables. The
stock engine therefore loads a *private copy* of the 33 MB library for every env and never
unloads it (memory grows with every env ever made), and unloading it with
``fast_downward.close_lib`` crashes the interpreter at exit. Two process-wide helpers fix
that:

* :data:`LIBRARIES` (a :class:`LibraryPool`) hands each engine a library of its own and takes
  it back when the engine closes (after ``cleanup()``, which frees the task), so the number
  of libraries ever loaded equals the largest number of engines open at the same time;
* :func:`translate` converts a PDDL domain + problem to the planner's SAS format (ALFWorld
  translates twice at every ``reset``, ~0.6 s each on a kitchen; here it runs once per game
  and machine, see :mod:`.parsed_game`), one translation at a time (Fast Downward's translator
  keeps its options in globals), without ``fast_downward.pddl2sas``'s process-wide
  redirection of ``sys.stdout`` (which swallows other threads' output) and its ``sys.argv`` overwrite;
* :func:`relevant_problem` and :func:`solve` make the planner usable as an expert: the planner
  searches the goal-relevant part of the current state (see :func:`relevant_problem`), which
  takes milliseconds where the whole ALFRED scene takes seconds to minutes.

Example:
    >>> pool = LibraryPool()
    >>> lib = pool.acquire()
    >>> pool.release(lib)
    >>> pool.acquire() is lib, pool.loaded
    (True, 1)
"""

from __future__ import annotations

import ctypes
import functools
import io
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["LIBRARIES", "translate"]


class LibraryPool:
    """Planner libraries reused across engines (see the module docstring)."""

    def __init__(self) -> None:
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self.loaded = 0
        """How many libraries this pool has loaded in total."""

    def acquire(self) -> Any:
        """A planner library for the caller's exclusive use."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
            self.loaded += 1
        import fast_downward

        lib = fast_downward.load_lib()
        lib.get_state_id.argtypes = []
        lib.get_state_id.restype = ctypes.c_int
        lib.set_state_id.argtypes = [ctypes.c_int]
        lib.set_state_id.restype = None
        lib.solve_sas.argtypes = [ctypes.c_char_p, ctypes.c_bool]
        lib.solve_sas.restype = ctypes.c_bool
        lib.agb_has_task = False
        return lib

    def release(self, lib: Any) -> None:
        """Give ``lib`` back (its task is freed); the caller must not use it any more."""
        if getattr(lib, "agb_has_task", False):
            lib.cleanup()
            lib.agb_has_task = False
        with self._lock:
            self._idle.append(lib)

    @property
    def idle(self) -> int:
        """Libraries loaded and currently unused."""
        return len(self._idle)


LIBRARIES = LibraryPool()
"""The process-wide pool used by every ALFWorld engine."""


@dataclass(frozen=True)
class Translation:
    """A PDDL task translated for the planner (shared, never mutated).

    Attributes:
        task: Fast Downward's parsed PDDL task (types, objects, actions, initial atoms).
        sas: The full SAS encoding (the game state, every operator kept).
        sas_replan: The optimised SAS encoding the planner searches in.
    """

    task: Any
    sas: bytes
    sas_replan: bytes


_TRANSLATE_LOCK = threading.Lock()
_TRANSLATOR: Any = None
_FULL_OPTIONS = {
    "filter_unimportant_vars": False,
    "filter_unreachable_facts": False,
    "use_partial_encoding": False,
    "skip_variable_reordering": True,
    "add_implied_preconditions": False,
    "invariant_generation_max_candidates": 0,
}
"""TextWorld's translation settings for the game state (``pddl2sas``): nothing pruned."""
_SEARCH_OPTIONS = {
    "filter_unimportant_vars": True,
    "filter_unreachable_facts": True,
    "use_partial_encoding": True,
    "skip_variable_reordering": False,
    "add_implied_preconditions": True,
    "invariant_generation_max_candidates": 0,
}
"""TextWorld's translation settings for searching (``pddl2sas(optimize=True)``)."""


def _quiet_print(*args: Any, file: Any = None, **kwargs: Any) -> None:
    """Stands in for ``print`` in the translator's modules: drops what goes to ``sys.stdout`` (progress
    messages), writes the rest (the SAS output goes to a ``file``)."""
    if file is not None:
        print(*args, file=file, **kwargs)


def _translator() -> Any:
    """Fast Downward's translator modules, imported once, with their ``print`` silenced (call under the lock).

    ``fast_downward.pddl2sas`` silences the translator by replacing ``sys.stdout`` for the whole
    translation, which also swallows what other threads print meanwhile; its ``options`` module
    parses ``sys.argv`` when first imported.
    """
    global _TRANSLATOR
    if _TRANSLATOR is None:
        argv = list(sys.argv)
        sys.argv = ["translate.py", "domain", "task"]
        try:
            from fast_downward.translate import normalize, options
            from fast_downward.translate import translate as translator
            from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions
        finally:
            sys.argv = argv
        for name, module in list(sys.modules.items()):
            if name.startswith("fast_downward.translate") and module is not None:
                module.print = _quiet_print
        _TRANSLATOR = (options, lisp_parser, parsing_functions, normalize, translator)
    return _TRANSLATOR


def _pddl_to_sas(domain: str, problem: str, settings: dict[str, Any]) -> tuple[Any, bytes]:
    """What ``fast_downward.pddl2sas`` computes, without touching ``sys.stdout`` (call under the lock)."""
    options, lisp_parser, parsing_functions, normalize, translator = _translator()
    for name, value in settings.items():
        setattr(options, name, value)
    task = parsing_functions.parse_task(
        lisp_parser.parse_nested_list(domain.split("\n")), lisp_parser.parse_nested_list(problem.split("\n"))
    )
    normalize.normalize(task)
    output = io.StringIO()
    translator.pddl_to_sas(task).output(output)
    return task, output.getvalue().encode("utf-8")


def translate(domain: str, problem: str) -> Translation:
    """Translate ``domain`` + ``problem`` as TextWorld's ``PddlState`` does (not cached: games store the
    result, see :mod:`.parsed_game`). Translations run one at a time (the translator keeps its options in
    module globals); nothing is printed and ``sys.stdout`` / ``sys.argv`` are left alone."""
    with _TRANSLATE_LOCK:
        task, sas = _pddl_to_sas(domain, problem, _FULL_OPTIONS)
        _, sas_replan = _pddl_to_sas(domain, problem, _SEARCH_OPTIONS)
    return Translation(task, sas, sas_replan)


@functools.lru_cache(maxsize=64)
def translate_for_search(domain: str, problem: str) -> bytes:
    """The optimised SAS encoding of ``domain`` + ``problem`` (what the planner searches), cached."""
    with _TRANSLATE_LOCK:
        return _pddl_to_sas(domain, problem, _SEARCH_OPTIONS)[1]


_TYPE_CONSTANT = re.compile(r"\((?:objectType|receptacleType)\s+\?\w+\s+(\w+)\)", re.IGNORECASE)


def _type_constants(text: str) -> set[str]:
    return {name.lower() for name in _TYPE_CONSTANT.findall(text)}


def relevant_problem(
    facts: Iterable[tuple[str, tuple[str, ...]]],
    name2type: dict[str, str],
    goal: str,
    domain: str,
) -> str:
    """A PDDL problem: the current state restricted to what the goal can depend on, and the goal.

    In the ALFRED domain an object only matters to a plan through the goal, through the
    agent's single hand (``holdsAny``) or through the appliances actions require (sink
    basin, microwave, fridge). The problem therefore keeps every location, the objects of
    the types the goal names (plus the held object), the receptacles holding them, the
    receptacles of the types the goal or the domain's actions name, and every fact among
    those. Any plan of this problem is a plan of the full one, with the same commands.

    Args:
        facts: The true facts of the state, as ``(predicate, argument names)`` (lower case).
        name2type: The PDDL type of every object of the full problem.
        goal: The problem's ``(:goal ...)`` section (with the closing parenthesis of ``define``).
        domain: The domain text (for the type constants its actions test).
    """
    facts = list(facts)
    goal_types = _type_constants(goal)
    needed_types = goal_types | _type_constants(domain)
    keep = {name for name, kind in name2type.items() if kind not in ("object", "receptacle")}
    for predicate, args in facts:
        if predicate == "objecttype" and args[1] in goal_types:
            keep.add(args[0])
        elif predicate == "holds":
            keep.add(args[1])
        elif predicate == "receptacletype" and args[1] in needed_types:
            keep.add(args[0])
    keep |= {args[1] for predicate, args in facts if predicate == "inreceptacle" and args[0] in keep}
    declared = "\n".join(f"    {name} - {name2type[name]}" for name in sorted(keep))
    init = "\n".join(
        f"    ({predicate} {' '.join(args)})" for predicate, args in sorted(facts) if all(arg in keep for arg in args)
    )
    return f"(define (problem relevant)\n(:domain alfred)\n(:objects\n{declared}\n)\n(:init\n{init}\n)\n{goal}"


def solve(lib: Any, sas: bytes) -> list[str] | None:
    """Run the planner (on ``lib``, which must not hold a game) on ``sas``; return its operator names.

    Returns:
        The plan (possibly empty when the goal already holds), or ``None`` if there is none.
    """
    import fast_downward

    lib.agb_has_task = True
    if not lib.solve_sas(sas, False):
        return None
    operators = (fast_downward.Operator * lib.get_last_plan_length())()
    lib.get_last_plan(operators)
    return [op.name for op in operators]
