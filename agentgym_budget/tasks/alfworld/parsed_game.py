"""What the ALFWorld engine derives from a game file, computed once per machine and stored as data.

Starting a game that is not in a process's memory used to cost 0.4-2.5 s: Fast Downward
translates the PDDL problem to SAS twice (about two thirds of it) and TatSu parses the
game's grammar document and every production of its text grammar (the other third). None
of it depends on anything but the game's domain, grammar and problem, so it is done once
per machine and stored in the cache (:func:`agentgym_budget.storage.cache.cached_directory`, namespace
``alfworld-parsed``, keyed by a SHA-256 of those three texts and the library versions):

* ``parsed.json.gz``: the planner task's types, objects and action parameters, the initial
  facts and the facts of the initial SAS state, the fluent predicates, the grammar's
  actions (template, feedback rule) and its production rules as text;
* ``sas.txt.gz`` / ``sas_replan.txt.gz``: the two SAS encodings the planner library loads.

All are plain data (gzip-compressed JSON and Fast Downward's text format, ~60 KB a game where
the raw form takes ~1 MB): nothing in them is executed by Python when loaded.
:func:`load_parsed` reads them back (a few milliseconds); production
rules are parsed with TextWorld's parser through a process-wide cache keyed by their text,
and ALFWorld games share almost all of them, so a new game parses only its task sentence.

Example:
    >>> from agentgym_budget.tasks.alfworld.env import ALFWorldEnv
    >>> import json
    >>> game = json.load(open(ALFWorldEnv("pick_and_place_simple", num_games=1)._game_path("pick_and_place_simple-0")))
    >>> parsed = load_parsed(game["pddl_domain"], game["grammar"], game["pddl_problem"])
    >>> parsed.sas.startswith(b"begin_version"), "gotolocation" in parsed.action_parameters
    (True, True)
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from agentgym_budget.storage.cache import cached_directory

__all__: list[str] = []

PARSED_FORMAT = 2
"""Version of the stored form (part of the cache key)."""

_NAMESPACE = "alfworld-parsed"
_DOCUMENT, _SAS, _SAS_REPLAN = "parsed.json.gz", "sas.txt.gz", "sas_replan.txt.gz"


@dataclass(frozen=True)
class Parameter:
    """A parameter of a planner action (what TextWorld reads from Fast Downward's ``TypedObject``)."""

    name: str
    type_name: str


@dataclass(frozen=True)
class ActionSchema:
    """A planner action's name and parameters (what the PDDL state reads from Fast Downward's ``Action``)."""

    name: str
    parameters: tuple[Parameter, ...]


@dataclass(frozen=True)
class ParsedGame:
    """The stored form of one game, read back (see the module docstring).

    Attributes:
        document: The content of ``parsed.json.gz``.
        sas: The full SAS encoding (the game state).
        sas_replan: The optimised SAS encoding (what the planner searches).
    """

    document: dict[str, Any]
    sas: bytes
    sas_replan: bytes

    @property
    def action_parameters(self) -> dict[str, list[list[str]]]:
        """Parameters ``[name, type]`` of each planner action."""
        return self.document["actions"]


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("textworld", "fast-downward-textworld")}


def _fact(atom: Any) -> list[Any] | None:
    """``[predicate, [args]]`` of an initial atom, as TextWorld's ``PddlState`` keeps it (else ``None``)."""
    import fast_downward

    if isinstance(atom, fast_downward.translate.pddl.conditions.Atom):
        return None if atom.predicate == "=" else [atom.predicate, list(atom.args)]
    if isinstance(atom, fast_downward.translate.pddl.f_expression.Assign):
        name = f"{atom.expression.value}"
        if atom.fluent.symbol == "total-cost" or name.isdigit():
            return None
        return [name, list(atom.fluent.args)]
    return None


def _grammar_document(grammar: str) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """The grammar's actions and production rules (as text), as TextWorld's ``GameLogic`` reads them."""
    from textworld.envs.pddl import logic as pddl_logic
    from textworld.envs.pddl.logic import model

    document = pddl_logic._PARSER.parse(grammar, rule_name="pddlStart")
    converter = pddl_logic._ModelConverter()
    actions: dict[str, dict[str, str]] = {}
    rules: dict[str, Any] = {}
    for part in document.parts:
        if isinstance(part, model.ActionTypeNode):
            action = converter.walk(part)
            actions[action.name.lower()] = {
                "name": action.name,
                "template": action.template,
                "feedback_rule": action.feedback_rule,
                "pddl": action.pddl,
                "grammar": action.grammar,
            }
            lines = (line for line in action.grammar.split("\n") if not line.lstrip().startswith("#"))
            rules.update(json.loads("\n".join(lines)))
        elif isinstance(part, model.ActionGrammarNode):
            rules.update(json.loads(converter._unescape_block(part.code)))
    return actions, rules


def _state_facts(sas: bytes) -> list[list[Any]]:
    """The true facts of the SAS encoding's initial state, as ``[predicate, [args]]``."""
    from textworld.envs.pddl import logic as pddl_logic

    from agentgym_budget.tasks.alfworld.planner import LIBRARIES

    lib = LIBRARIES.acquire()
    try:
        lib.load_sas(sas)
        lib.agb_has_task = True
        atoms = (pddl_logic.Atom * lib.get_state_size())()
        lib.get_state(atoms)
        facts = []
        for atom in atoms:
            kind, rest = atom.name.split(" ", 1)
            if kind == "NegatedAtom":
                continue
            name, args = rest.split("(", 1)
            facts.append([name, [arg for arg in args[:-1].split(", ") if arg]])
        return facts
    finally:
        LIBRARIES.release(lib)


def _build(domain: str, grammar: str, problem: str, folder: Path) -> None:
    from agentgym_budget.tasks.alfworld.planner import translate

    translation = translate(domain, problem)
    task = translation.task
    fluents = {effect.literal.predicate.lower() for action in task.actions for effect in action.effects}
    fluents |= {axiom.name.lower() for axiom in task.axioms}
    actions, rules = _grammar_document(grammar)
    document = {
        "format": PARSED_FORMAT,
        "types": [[kind.name, list(kind.supertype_names)] for kind in task.types],
        "objects": {obj.name: obj.type_name for obj in task.objects},
        "actions": {a.name: [[p.name, p.type_name] for p in a.parameters] for a in task.actions},
        "init": sorted(fact for fact in map(_fact, task.init) if fact is not None),  # canonical order: the
        "state": sorted(_state_facts(translation.sas)),  # translator's depends on the hash seed
        "fluents": sorted(fluents),
        "logic_actions": actions,
        "grammar": rules,
    }
    for name, content in (
        (_DOCUMENT, json.dumps(document).encode()),
        (_SAS, translation.sas),
        (_SAS_REPLAN, translation.sas_replan),
    ):
        (folder / name).write_bytes(gzip.compress(content, compresslevel=6, mtime=0))


def load_parsed(domain: str, grammar: str, problem: str) -> ParsedGame:
    """The stored form of the game made of ``domain``, ``grammar`` and ``problem`` (built on first use)."""
    digest = hashlib.sha256(json.dumps([domain, grammar, problem]).encode()).hexdigest()
    params = {"format": PARSED_FORMAT, "game_sha256": digest, **_versions()}
    folder = cached_directory(_NAMESPACE, params, lambda path: _build(domain, grammar, problem, path))
    document, sas, sas_replan = (
        gzip.decompress((folder / name).read_bytes()) for name in (_DOCUMENT, _SAS, _SAS_REPLAN)
    )
    return ParsedGame(json.loads(document), sas, sas_replan)


@functools.lru_cache(maxsize=16384)
def _symbols(text: str) -> list[Any]:
    """A production's right-hand side parsed by TextWorld (shared: never mutated by the engines)."""
    from textworld.envs.pddl import textgen

    return textgen._parse_and_convert(text, rule_name="symbols")


def build_logic(domain: str, parsed: ParsedGame) -> Any:
    """TextWorld's ``GameLogic`` of the game (actions, grammar, types), built from its stored form."""
    import textworld
    from textworld.envs.pddl import logic as pddl_logic
    from textworld.envs.pddl.textgen import ContextSensitiveGrammar, ProductionRule

    document = parsed.document
    logic = pddl_logic.GameLogic.__new__(pddl_logic.GameLogic)
    logic.domain = domain
    logic.actions = {key: pddl_logic.Action(**fields) for key, fields in document["logic_actions"].items()}
    logic.grammar = ContextSensitiveGrammar()
    for symbol, rules in document["grammar"].items():
        for rule in rules:
            production = ProductionRule(
                lhs=symbol,
                rhs=_symbols(rule["rhs"]),
                weight=rule.get("weight", 1),
                condition=rule.get("condition", ""),
            )
            logic.grammar.add_rule(production)
    logic.types = textworld.logic.TypeHierarchy()
    for name, parents in document["types"]:
        if name not in logic.types._types:  # a repeated type keeps its first definition, as in TextWorld
            logic.types.add(textworld.logic.Type(name, parents))
    return logic
