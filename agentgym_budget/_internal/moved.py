"""The module paths of releases before the layout of subpackages, kept importable with a warning.

``import agentgym_budget.snapshot`` (or ``from agentgym_budget.snapshot import get_state``) still works:
a finder on ``sys.meta_path`` answers each old path with the module it moved to, after a
:class:`DeprecationWarning` that names the new path. Pickles and snapshots written by older releases
that name an old path load the same way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

MOVED_MODULES: dict[str, str] = {
    f"agentgym_budget.{old}": f"agentgym_budget.{new}"
    for old, new in {
        "_conformance_play": "testing._play",
        "_env_support": "core._env_support",
        "_numerics": "_internal.numerics",
        "cache": "storage.cache",
        "env": "core.env",
        "game_cache_size": "storage.game_cache_size",
        "group": "vector.group",
        "group_vector": "vector.group_vector",
        "info_keys": "core.info_keys",
        "install_hint": "_internal.install_hint",
        "memory_cache": "storage.memory_cache",
        "safe_json": "storage.safe_json",
        "scrub": "runner.scrub",
        "snapshot": "snapshots.stack",
        "snapshot_codec": "snapshots.codec",
        "snapshot_keys": "snapshots.keys",
        "state": "snapshots.state",
        "text": "core.text",
        "text_space": "core.text_space",
        "turn": "core.turn",
        "vector_env": "vector.text_vector_env",
    }.items()
}
"""Old dotted module path -> the path it moved to."""


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves the old paths of :data:`MOVED_MODULES` to their new modules, with a deprecation warning."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED_MODULES[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path goes in a later release).",
            DeprecationWarning,
            stacklevel=_caller_stacklevel(),
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed under its new path already."""


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside the import machinery (the user's import statement)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == __file__
    ):
        frame, level = frame.f_back, level + 1
    return level


def install() -> None:
    """Put one :class:`MovedModuleFinder` on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
