"""The expressions between braces in ALFWorld's grammar, parsed and evaluated without ``eval``.

TextWorld's context-sensitive grammar (``textworld.envs.pddl.textgen``) writes text such as
``"You open the {r.name}."`` or ``"[{o.indefinite + ' ' + o.name | inreceptacle(o, r)}]"``, and
evaluates the text between the braces with Python's ``eval``: a game file (it carries its own
grammar) could run any code. Here those expressions are a small language of their own, enough
for ALFWorld's ``alfred.twl2`` and nothing more::

    expression := term (("or" | "and") term)*        # Python's short-circuit or / and
    term       := atom ("+" atom)*                     # concatenation
    atom       := NAME | NAME "." FIELD | STRING | "(" expression ")"

``NAME`` is a variable the derivation binds (an entity such as ``r`` or ``o``), ``FIELD`` one of
the entity fields of TextWorld's ``EntityInfo`` (``name``, ``indefinite``, ``id``, ...) and
``STRING`` a Python string literal. Anything else (calls, subscripts, other attributes,
other operators, names the derivation does not bind) is refused with
:class:`~agentgym_budget.errors.DataError`. The text is parsed by Python's parser
(``ast.parse``, which never runs code), checked node by node against that language, and
turned into a small Python closure, which computes what ``eval`` computed on the same
expression (the operators are Python's own).

Example:
    >>> from textworld.generator.game import EntityInfo
    >>> fridge = EntityInfo("fridge_1", "fridge")
    >>> fridge.name, fridge.indefinite = "fridge 1", "a"
    >>> compile_expression("r.indefinite + ' ' + r.name")({"r": fridge})
    'a fridge 1'
    >>> compile_expression("r.name or r.id")({"r": fridge})
    'fridge 1'
    >>> compile_expression("__import__('os').system('id')")
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.DataError: Grammar expression "__import__('os').system('id')" is not allowed: ...
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping
from typing import Any

from agentgym_budget.errors import DataError

__all__ = ["compile_expression"]

ENTITY_FIELDS = frozenset(
    {"id", "type", "name", "noun", "adj", "desc", "room_type", "definite", "indefinite", "synonyms"}
)
"""The fields of TextWorld's ``EntityInfo`` an expression may read (``EntityInfo.__slots__``)."""

Expression = Callable[[Mapping[str, Any]], Any]
"""A compiled expression: takes the derivation's variables (name -> entity), returns the value."""

_MAX_LENGTH = 500
_LANGUAGE = (
    "expected variables (r), entity fields (r.name, r.indefinite, ...), string literals, "
    "'+', 'or', 'and' and parentheses, as in ALFWorld's alfred.twl2"
)


class _Refused(Exception):
    """Raised while compiling: the reason an expression is not in the language."""


def _variable(name: str) -> Expression:
    def value(variables: Mapping[str, Any]) -> Any:
        try:
            return variables[name]
        except KeyError:
            bound = ", ".join(sorted(variables)) or "none"
            raise DataError(
                f"Grammar expression variable {name!r} is not bound here (bound variables: {bound})."
            ) from None

    return value


def _field(name: str, field: str) -> Expression:
    entity = _variable(name)

    def value(variables: Mapping[str, Any]) -> Any:
        return getattr(entity(variables), field)

    return value


def _constant(text: str) -> Expression:
    return lambda variables: text


def _concatenation(parts: list[Expression]) -> Expression:
    first, rest = parts[0], parts[1:]

    def value(variables: Mapping[str, Any]) -> Any:
        result = first(variables)
        for part in rest:
            result = result + part(variables)
        return result

    return value


def _boolean(parts: list[Expression], is_or: bool) -> Expression:
    def value(variables: Mapping[str, Any]) -> Any:
        for part in parts[:-1]:
            result = part(variables)
            if bool(result) is is_or:
                return result
        return parts[-1](variables)

    return value


def _flatten_sum(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_flatten_sum(node.left), *_flatten_sum(node.right)]
    return [node]


def _compile(node: ast.expr) -> Expression:
    if isinstance(node, ast.Name):
        return _variable(node.id)
    if isinstance(node, ast.Attribute):
        if not isinstance(node.value, ast.Name):
            raise _Refused("only a variable's field may be read (e.g. r.name)")
        if node.attr not in ENTITY_FIELDS:
            raise _Refused(f"{node.attr!r} is not an entity field (fields: {', '.join(sorted(ENTITY_FIELDS))})")
        return _field(node.value.id, node.attr)
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str):
            raise _Refused(f"only string literals are allowed, got {node.value!r}")
        return _constant(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concatenation([_compile(part) for part in _flatten_sum(node)])
    if isinstance(node, ast.BoolOp):
        return _boolean([_compile(part) for part in node.values], isinstance(node.op, ast.Or))
    raise _Refused(f"{type(node).__name__} ({ast.unparse(node)[:60]!r}) is not part of the grammar's language")


@functools.lru_cache(maxsize=4096)
def compile_expression(text: str) -> Expression:
    """Compile the grammar expression ``text`` (see the module docstring), cached per text.

    Raises:
        DataError: ``text`` is not in the grammar's expression language.
    """
    if not isinstance(text, str) or len(text) > _MAX_LENGTH:
        raise DataError(f"Grammar expression {str(text)[:80]!r}... is not allowed: longer than {_MAX_LENGTH} chars.")
    try:
        tree = ast.parse(text.strip(" \t"), mode="eval")
        return _compile(tree.body)
    except _Refused as err:
        reason = str(err)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
        reason = f"it does not parse ({type(err).__name__}: {err})"
    raise DataError(f"Grammar expression {text!r} is not allowed: {reason}; {_LANGUAGE}.")
