"""Strict JSON for what clients send the server: every HTTP body and WebSocket frame is read by :func:`loads_wire`.

Python's :func:`json.loads` accepts ``NaN``, ``Infinity`` and ``1e400`` (which becomes ``inf``), builds
integers of thousands of digits (and raises a bare ``ValueError`` past 4,300), recurses until
``RecursionError`` on deep nesting and returns strings holding lone surrogates (``"\\ud800"``) that
cannot be encoded again. Each of those reached the routes and ended in a 500 or a lost WebSocket
session. :func:`loads_wire` refuses them all with :class:`WireJSONError`, which says what was wrong:

* the text is UTF-8 (bytes) and valid JSON (:rfc:`8259`);
* numbers are finite and integers lie in the signed 64-bit range (:data:`MAX_INT_DIGITS` digits at most);
* arrays and objects nest at most :data:`MAX_DEPTH` levels;
* strings and keys are valid Unicode (no lone surrogates).

Example:
    >>> loads_wire(b'{"seed": 3, "task": "a"}')
    {'seed': 3, 'task': 'a'}
    >>> loads_wire('{"seed": NaN}')
    Traceback (most recent call last):
    ...
    agentgym_budget.integrations.wire_json.WireJSONError: Invalid JSON: NaN is not a finite number; send finite numbers only.
"""

from __future__ import annotations

import json
import math
from typing import Any

from agentgym_budget.errors import InvalidOptionError

__all__ = ["WireJSONError", "loads_wire"]

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects read (a request nests 3 levels: ``{"type", "data": {...}}``)."""

MAX_INT_DIGITS = 19
"""Most digits of an integer read; its value must also lie in [-2**63, 2**63 - 1]."""

_INT_BOUND = 2**63


class WireJSONError(InvalidOptionError):
    """A request body or frame that is not strict JSON (see :mod:`~agentgym_budget.integrations.wire_json`)."""


def _constant(name: str) -> Any:
    raise WireJSONError(f"Invalid JSON: {name} is not a finite number; send finite numbers only.")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WireJSONError(f"Invalid JSON: {text[:40]} is not a finite number; send finite numbers only.")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS or not -_INT_BOUND <= (value := int(text)) < _INT_BOUND:
        raise WireJSONError(
            f"Invalid JSON: an integer of {digits:,} digits is outside the signed 64-bit range; "
            f"integers hold at most {MAX_INT_DIGITS} digits."
        )
    return value


def _check_string(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise WireJSONError(
                f"Invalid JSON: a string holds a lone surrogate ({text[err.start : err.start + 1]!r}); "
                "send valid Unicode."
            ) from None


def _check_tree(value: Any) -> None:
    """Depth and strings of a parsed value, walked without recursion."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            _check_string(item)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise WireJSONError(
                    f"Invalid JSON: arrays and objects nest deeper than {MAX_DEPTH} levels; at most {MAX_DEPTH} are read."
                )
            if isinstance(item, dict):
                for key in item:
                    _check_string(key)
                pending.extend((child, depth + 1) for child in item.values())
            else:
                pending.extend((child, depth + 1) for child in item)


def loads_wire(data: bytes | str) -> Any:
    """Parse a request body or frame strictly (see the module docstring).

    Raises:
        WireJSONError: The text is not UTF-8 or not JSON, or holds a non-finite number, an integer
            outside the signed 64-bit range, nesting past :data:`MAX_DEPTH` or a lone surrogate.
    """
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as err:
            raise WireJSONError(f"Invalid JSON: the text is not UTF-8 ({err.reason} at byte {err.start}).") from None
    try:
        value = json.loads(data, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise WireJSONError(f"Invalid JSON: arrays and objects nest deeper than {MAX_DEPTH} levels.") from None
    except json.JSONDecodeError as err:
        raise WireJSONError(f"Invalid JSON: {err}.") from None
    _check_tree(value)
    return value
