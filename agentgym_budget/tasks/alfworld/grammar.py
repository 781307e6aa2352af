"""A precompiled form of TextWorld's context-sensitive grammar, which makes ALFWorld steps fast.

TextWorld's PDDL backend writes every observation and every admissible command with a
context-sensitive grammar (``textworld.envs.pddl.textgen.ContextSensitiveGrammar``). At each
step it derives one string per applicable action, and each derivation re-parses the
command template with TatSu, re-parses every condition and query, and deep-copies the
derivation context (entity infos included) for every symbol: about 99% of a step.

:class:`CompiledGrammar` gives exactly the same strings while doing the constant work once:

* templates, rule bodies and queries are parsed once per process, by TextWorld's own parsers
  (``textgen._parse_and_convert`` and ``Rule.parse_conjunctive_query``), and never mutated,
  so no copy is needed;
* contexts are shared instead of deep-copied (derivations only read them);
* a derivation whose queries and conditions only read *static* predicates (those no PDDL
  action changes, e.g. ``receptacleatlocation``) depends only on its template and variable
  binding (expressions only read entity fields), so its result is cached: after the first
  visit, most admissible commands of a state cost a dictionary lookup;
* ``{expr}`` is never given to Python's ``eval`` (TextWorld's way, which lets a game file run
  code): it is compiled by :func:`~.expressions.compile_expression`, which accepts only the
  small language ALFWorld's grammar uses (entity fields, string literals, ``+``, ``or``), and
  :func:`check_grammar` refuses a game whose grammar holds anything else when it is loaded.

The derivation rules are TextWorld's: a non-terminal is replaced by the first of its
productions whose condition holds; ``{expr | query}`` expands ``expr`` once per answer to the
query; ``[...]`` joins the expansions as a list (``list_separator``, ``list_last_separator``,
``list_empty``); ``{expr}`` evaluates an expression over the bound entities.
The equivalence with the stock grammar is tested on many random trajectories.

Example:
    >>> from textworld.envs.pddl.textgen import ContextSensitiveGrammar
    >>> rules = '{"greet": [{"rhs": "Hello, #who#!"}], "who": [{"rhs": "world"}]}'
    >>> CompiledGrammar(ContextSensitiveGrammar.parse(rules)).derive("#greet#", {"mapping": {}, "variables": {}})
    'Hello, world!'
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from textworld.envs.pddl import textgen
from textworld.envs.pddl.textgen import (
    ConditionalSymbol,
    CSGUnknownSymbolError,
    EvalSymbol,
    ListSymbol,
    NonterminalSymbol,
    TerminalSymbol,
)
from textworld.logic import Rule

from agentgym_budget.errors import DataError
from agentgym_budget.tasks.alfworld.expressions import compile_expression

__all__ = ["CompiledGrammar", "check_grammar"]


class _Dependency:
    """Records whether a derivation read a fluent (non-static) predicate."""

    __slots__ = ("fluent",)

    def __init__(self) -> None:
        self.fluent = False


@functools.lru_cache(maxsize=8192)
def _parse_symbols(text: str) -> list[Any]:
    return textgen._parse_and_convert(text, rule_name="symbols")


@functools.lru_cache(maxsize=4096)
def _parse_query(expression: str) -> Rule:
    return Rule.parse_conjunctive_query(expression)


class CompiledGrammar:
    """Derives text like TextWorld's ``ContextSensitiveGrammar.derive``, with the constant work cached.

    Args:
        grammar: The game's grammar (``GameLogic.grammar``).
        fluent_predicates: Lower-case names of the predicates that actions change. ``None``
            treats every predicate as fluent (nothing is cached across states).
        results: Where cached derivations go (engines playing the same game with the same entity
            names may share one); a private dictionary by default.
    """

    def __init__(
        self,
        grammar: Any,
        fluent_predicates: Iterable[str] | None = None,
        results: dict[tuple[Any, ...], str] | None = None,
    ) -> None:
        self._rules: Mapping[str, list[Any]] = grammar._rules
        self._fluent = None if fluent_predicates is None else frozenset(p.lower() for p in fluent_predicates)
        self._queries: dict[str, tuple[Rule, bool]] = {}
        self._results: dict[tuple[Any, ...], str] = {} if results is None else results

    # ------------------------------------------------------------------ caches
    def use_results(self, results: dict[tuple[Any, ...], str]) -> None:
        """Cache derivations in ``results`` from now on (call it whenever entity names change)."""
        self._results = results

    def clear_results(self) -> None:
        """Forget cached derivations (use a fresh private cache)."""
        self._results = {}

    def _parse(self, text: str) -> list[Any]:
        return _parse_symbols(text)

    def _query(self, expression: str) -> tuple[Rule, bool]:
        entry = self._queries.get(expression)
        if entry is None:
            rule = _parse_query(expression)
            names = (p.name[4:] if p.name.startswith("not_") else p.name for p in rule.preconditions)
            fluent = self._fluent is None or any(name.lower() in self._fluent for name in names)
            entry = self._queries[expression] = (rule, fluent)
        return entry

    # ------------------------------------------------------------------ derivation
    def derive(self, start: str, context: Mapping[str, Any]) -> str:
        """Derive ``start`` in ``context`` (``state``, ``variables``, ``mapping``, ``entity_infos``)."""
        return self._derive(start, context, _Dependency())

    def derive_cached(self, start: str, context: Mapping[str, Any]) -> str:
        """:meth:`derive`, reusing the result of an earlier call with the same binding when the
        derivation only read static predicates."""
        return self.derive_static(start, context)[0]

    def derive_static(self, start: str, context: Mapping[str, Any]) -> tuple[str, bool]:
        """:meth:`derive_cached` and whether the text only depends on static predicates (it never changes)."""
        key = (start, *sorted((ph.name, var.name) for ph, var in context["mapping"].items()))
        text = self._results.get(key)
        if text is not None:
            return text, True
        dependency = _Dependency()
        text = self._derive(start, context, dependency)
        if not dependency.fluent:
            self._results[key] = text
        return text, not dependency.fluent

    def _derive(self, start: str, context: Mapping[str, Any], dependency: _Dependency) -> str:
        stack = [(symbol, context) for symbol in reversed(self._parse(start))]
        derived: list[str] = []
        while stack:
            symbol, ctx = stack.pop()
            if isinstance(symbol, TerminalSymbol):
                derived.append(str(symbol.symbol))
            elif isinstance(symbol, NonterminalSymbol):
                stack.extend((s, ctx) for s in reversed(self._replace(symbol, ctx, dependency)))
            elif isinstance(symbol, ConditionalSymbol):
                stack.extend(reversed(self._conditional(symbol, ctx, dependency)))
            elif isinstance(symbol, EvalSymbol):
                derived.append(str(self._evaluate(symbol, ctx)))
            elif isinstance(symbol, ListSymbol):
                stack.extend(reversed(self._list(symbol, ctx, dependency)))
            else:
                raise NotImplementedError(f"Unknown symbol: {type(symbol)}")
        return "".join(derived)

    def _replace(self, symbol: Any, ctx: Mapping[str, Any], dependency: _Dependency) -> list[Any]:
        rules = self._rules.get(str(symbol))
        if not rules:
            raise CSGUnknownSymbolError(symbol)
        for rule in rules:
            if not rule.condition:
                return rule.rhs
            query, fluent = self._query(rule.condition)
            dependency.fluent |= fluent
            if next(iter(ctx["state"].all_assignments(query, ctx["mapping"])), None) is not None:
                return rule.rhs
        raise IndexError(f"No production of #{symbol}# applies.")

    def _conditional(self, symbol: Any, ctx: Mapping[str, Any], dependency: _Dependency) -> list[tuple[Any, Any]]:
        if not symbol.given:
            return [(symbol.expression, ctx)]
        query, fluent = self._query(symbol.given)
        dependency.fluent |= fluent
        infos = ctx["entity_infos"]
        answers = []
        for mapping in ctx["state"].all_assignments(query, ctx["mapping"]):
            variables = dict(ctx["variables"])
            variables.update({ph.name: infos[var.name] for ph, var in mapping.items()})
            merged = dict(ctx["mapping"])
            merged.update(mapping)
            answers.append((symbol.expression, {**ctx, "variables": variables, "mapping": merged}))
        return answers

    def _list(self, symbol: Any, ctx: Mapping[str, Any], dependency: _Dependency) -> list[tuple[Any, Any]]:
        inner = symbol.symbol
        if isinstance(inner, ConditionalSymbol):
            items = self._conditional(inner, ctx, dependency)
        else:
            items = [(TerminalSymbol(self._evaluate(inner, ctx)), ctx)]
        if not items:
            return [(NonterminalSymbol("list_empty"), ctx)]
        if len(items) == 1:
            return items
        joined: list[tuple[Any, Any]] = []
        for item in items[:-2]:
            joined += [item, (NonterminalSymbol("list_separator"), ctx)]
        joined += [items[-2], (NonterminalSymbol("list_last_separator"), ctx), items[-1]]
        return joined

    @staticmethod
    def _evaluate(symbol: Any, ctx: Mapping[str, Any]) -> Any:
        return compile_expression(symbol.expression)(ctx["variables"])


def _expressions(symbols: Iterable[Any]) -> Iterator[str]:
    for symbol in symbols:
        if isinstance(symbol, EvalSymbol):
            yield symbol.expression
        elif isinstance(symbol, ConditionalSymbol):
            yield from _expressions([symbol.expression])
        elif isinstance(symbol, ListSymbol):
            yield from _expressions([symbol.symbol])


def _queries(symbols: Iterable[Any]) -> Iterator[str]:
    for symbol in symbols:
        if isinstance(symbol, ConditionalSymbol):
            if symbol.given:
                yield symbol.given
            yield from _queries([symbol.expression])
        elif isinstance(symbol, ListSymbol):
            yield from _queries([symbol.symbol])


def _places(logic: Any) -> Iterator[tuple[str, Any, str]]:
    """Every piece of grammar text of a game: ``(where, parsed symbols or template text, condition)``."""
    for name, rules in logic.grammar._rules.items():
        for rule in rules:
            yield f"grammar rule #{name}#", rule.rhs, rule.condition or ""
    for name, action in logic.actions.items():
        yield f"the template of action {name!r}", action.template, ""
        yield f"the feedback of action {name!r}", action.feedback_rule, ""


def check_grammar(logic: Any, source: str) -> None:
    """Check a game's grammar before it is used: every ``{expression}`` is in the grammar's
    language (:mod:`.expressions`) and every template, condition and query parses.

    Args:
        logic: The game's ``GameLogic`` (its grammar rules and actions).
        source: The game file, for the error message.

    Raises:
        DataError: Something is outside the language or does not parse (the message names the file and the rule).
    """
    for where, symbols, condition in _places(logic):
        try:
            if isinstance(symbols, str):
                symbols = _parse_symbols(symbols)
            for query in filter(None, [condition, *_queries(symbols)]):
                _parse_query(query)
            for expression in _expressions(symbols):
                compile_expression(expression)
        except DataError as err:
            raise DataError(f"ALFWorld game {source}, {where}: {err}") from None
        except Exception as err:  # TatSu's FailedParse and friends
            message = " ".join(str(err).split())[:300]
            raise DataError(
                f"ALFWorld game {source}, {where}: does not parse ({type(err).__name__}: {message})."
            ) from err
