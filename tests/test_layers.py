"""The package's layers: no room imports a room above it, no import cycle, a short top level.

Each module's imports are read with ``ast`` (none is executed), function-level and ``TYPE_CHECKING`` imports
included. The order is the one docs/development.md draws; a new subpackage or top-level module must be
placed in it here, and there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentgym_budget"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_internal",),
    ("errors", "_version", "dependencies"),
    ("storage",),
    ("snapshots",),
    ("core", "registration"),
    ("wrappers",),
    ("tasks", "testing"),
    ("agentgym_budget",),  # the front door (__init__.py): re-exports, the rest loaded on first use by name
    ("vector",),
    ("agents", "chat", "stats"),
    ("runner", "prepare"),
    ("eval",),
    ("integrations",),
    ("train",),
    ("study",),
    ("cli", "__main__", "demo"),
)
"""Rooms from the bottom up: a room may import its own layer's rooms and the layers below it."""

LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}

MAX_TOP_LEVEL_MODULES = 10


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str:
    """``agentgym_budget.core.env`` -> ``core``; the package itself -> ``agentgym_budget``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported(module: str, source: str, *, top_only: bool = False) -> set[str]:
    """The agentgym_budget modules that ``source`` (module ``module``) imports; ``top_only``: at import time."""
    tree = ast.parse(source)
    nodes = tree.body if top_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                package = module.split(".")
                if not (PACKAGE.parent.joinpath(*package) / "__init__.py").is_file():
                    package = package[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")}
            found |= submodules if len(submodules) == len(node.names) else {base, *submodules}
    return {name for name in found if name == "agentgym_budget" or name.startswith("agentgym_budget.")}


def upward_imports(module: str, source: str) -> list[str]:
    """The imports of ``source`` (module ``module``) that reach a higher layer than the module's room."""
    level = LEVEL[_room(module)]
    return sorted(target for target in _imported(module, source) if LEVEL[_room(target)] > level)


def _sources() -> dict[str, str]:
    return {_module_name(path): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_room_is_placed_in_a_layer():
    rooms = {_room(module) for module in _sources()}
    assert rooms <= set(LEVEL), (
        f"rooms without a layer (add them to LAYERS and docs/development.md): {rooms - set(LEVEL)}"
    )


def test_no_module_imports_a_higher_layer():
    upward = {module: found for module, source in _sources().items() if (found := upward_imports(module, source))}
    assert not upward, f"imports from a higher layer: {upward}"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "agentgym_budget.snapshots.state",
            "from agentgym_budget.core.env import TextEnv",
            ["agentgym_budget.core.env"],
        ),
        ("agentgym_budget.storage.cache", "def f():\n    import agentgym_budget.eval\n", ["agentgym_budget.eval"]),
        ("agentgym_budget.wrappers.turn_budget", "from agentgym_budget import vector", ["agentgym_budget.vector"]),
        ("agentgym_budget.core.env", "from ..snapshots import state\nfrom agentgym_budget.errors import DataError", []),
    ],
)
def test_the_check_sees_an_upward_import(module, source, expected):
    assert upward_imports(module, source) == expected


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycle():
    graph = {module: _imported(module, source, top_only=True) - {module} for module, source in _sources().items()}
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_top_level_is_short():
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
