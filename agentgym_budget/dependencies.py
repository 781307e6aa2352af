"""Importing an RL library lazily, with an error that names the extra to install.

Every integration module imports its library only when a feature needs it, through :func:`require`.
A missing library raises :class:`~agentgym_budget.errors.MissingDependencyError` saying which extra
installs it with the command that fits this install (``pip install "agentgym-budget[trl]"``, or
``pip install -e "<checkout>[trl]"`` for an editable checkout); a library that needs a newer Python says so.

Example:
    >>> require("json", extra="test", feature="Parsing").__name__
    'json'
    >>> require("surely_not_installed_lib", extra="openenv", feature="The OpenEnv server")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentgym_budget.errors.MissingDependencyError: The OpenEnv server needs the 'surely_not_installed_lib' package, which is not installed. Install it with: pip install ...[openenv]"
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from agentgym_budget.errors import MissingDependencyError

__all__ = ["require"]


def require(
    module: str,
    *,
    extra: str,
    feature: str,
    package: str | None = None,
    min_python: tuple[int, int] | None = None,
) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``extra``.

    Args:
        module: The module to import (e.g. ``"openenv.core"``).
        extra: The agentgym-budget extra that installs it.
        feature: What needs it, for the message (e.g. ``"The OpenEnv server"``).
        package: The distribution name when it differs from the top-level module name.
        min_python: The oldest Python the library supports; on older ones the error says so.

    Raises:
        MissingDependencyError: The module (or its top-level package) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".", 1)[0]
        missing = getattr(err, "name", None)
        if missing is not None and missing != module and missing != top and not module.startswith(missing + "."):
            raise  # the library is installed but one of *its* imports is broken: show that error as is
        name = package or top
        if min_python is not None and sys.version_info < min_python:
            version = ".".join(map(str, min_python))
            raise MissingDependencyError(
                f"{feature} needs the '{name}' package, which requires Python >= {version} "
                f"(this is Python {sys.version_info.major}.{sys.version_info.minor})."
            ) from err
        raise MissingDependencyError.for_extra(name, extra, feature) from err
