"""Scrubbing secrets from what the runner writes (records, actions, raw model responses).

A model server may echo the request's ``Authorization`` header or API key back in its answer, and
that answer becomes the agent's action, which every run records. :func:`scrub` replaces, in every
string of a record (recursively through dicts, lists and tuples):

* the value of every environment variable whose name says it holds a secret (``*API_KEY*``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``; values of 8 characters or more), e.g. ``OPENAI_API_KEY``;
* ``Bearer <token>``, and the value after ``Authorization``, ``api_key``, ``api-key`` or
  ``x-api-key`` followed by ``:`` or ``=``;
* OpenAI-style keys (``sk-`` and 16 or more characters);
* the password of a URL's ``user:password@`` part;
* the whole value of a dict key named ``authorization``, ``api_key`` or ``x-api-key``;

by ``***``.

Example:
    >>> scrub({"action": 'echo {"Authorization": "Bearer abc123def"}', "api_key": "k-1234567"})
    {'action': 'echo {"Authorization": "Bearer ***"}', 'api_key': '***'}
    >>> _scrub_text("use sk-abcdefghijklmnopqrstuv or api_key=hunter2hunter2", secrets=())
    'use *** or api_key=***'
    >>> _scrub_text("base_url=http://me:pa55word@localhost:8000/v1", secrets=())
    'base_url=http://me:***@localhost:8000/v1'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["scrub"]

_REDACTED = "***"
_SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_SECRET_KEYS = frozenset({"authorization", "api_key", "api-key", "apikey", "x-api-key"})
_PATTERNS = (
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{4,}"),
    re.compile(r"""(?i)(\b(?:authorization|x-api-key|api[_-]?key)["']?\s*[:=]\s*["']?)(?!bearer\s)[^\s"',}]{4,}"""),
    re.compile(r"()\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(://[^/\s:@]+:)[^@\s/]+(?=@)"),
)


def _environment_secrets() -> list[str]:
    """Values (8+ characters) of the environment variables whose names say they hold secrets, longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def _scrub_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with secrets replaced by ``***`` (``secrets``: default :func:`_environment_secrets`)."""
    for secret in _environment_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, _REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda match: match.group(1) + _REDACTED, text)
    return text


def scrub(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """``value`` with :func:`_scrub_text` applied to every string in it (containers are copied, not changed)."""
    known = _environment_secrets() if secrets is None else list(secrets)
    return _scrub(value, known)


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _scrub_text(value, secrets)
    if isinstance(value, dict):
        return {
            k: _REDACTED if isinstance(k, str) and k.lower() in _SECRET_KEYS and v else _scrub(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(_scrub(v, secrets) for v in value) if not hasattr(value, "_fields") else value
    return value


_RENAMED = {"scrub_text": "_scrub_text", "environment_secrets": "_environment_secrets", "REDACTED": "_REDACTED"}


def __getattr__(name: str) -> Any:
    """The names this module had before 2026-12-06, with a DeprecationWarning (they are private now)."""
    if name in _RENAMED:
        import warnings

        warnings.warn(
            f"agentgym_budget.runner.scrub.{name} is private since 2026-12-06; use scrub() (it scrubs strings too).",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
