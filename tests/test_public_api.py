"""Every public module declares __all__, every name in it imports, and the names are the documented list.

After a deliberate change of public names, ``python -m tests.test_public_api`` rewrites the list in
docs/public-api.md from the code (the page's prose is kept).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import agentgym_budget
from agentgym_budget.errors import MissingDependencyError


def _public_modules() -> list[str]:
    names = ["agentgym_budget"]
    for module in pkgutil.walk_packages(agentgym_budget.__path__, prefix="agentgym_budget."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            names.append(module.name)
    return names


HEAVY_IMPORTS = ("agentgym_budget.integrations.",)
"""Modules that import an RL library (torch, transformers, fastapi...) when loaded: slow to import."""


def _module_params() -> list:
    return [
        pytest.param(name, marks=pytest.mark.slow) if name.startswith(HEAVY_IMPORTS) else name
        for name in _public_modules()
    ]


@pytest.mark.parametrize("module_name", _module_params())
def test_all_names_import(module_name):
    module = importlib.import_module(module_name)
    assert hasattr(module, "__all__"), f"{module_name} has no __all__"
    for name in module.__all__:
        try:
            present = hasattr(module, name)
        except MissingDependencyError:  # built on first use from an optional library not installed here (verl)
            continue
        assert present, f"{module_name}.__all__ names {name!r}, which does not exist"


PUBLIC_API_DOC = Path(__file__).resolve().parent.parent / "docs" / "public-api.md"


def _documented_api() -> dict[str, list[str]]:
    documented = {}
    for line in PUBLIC_API_DOC.read_text().splitlines():
        match = re.fullmatch(r"- `([\w.]+)`: (.*)", line)
        if match:
            documented[match[1]] = [] if match[2] == "(none)" else re.findall(r"\{py:obj\}`(\w+) <", match[2])
    return documented


def reference_target(module_name: str, name: str) -> str:
    """Where the API reference documents ``module_name.name``: the module that defines it, if that one is public.

    A name re-exported by a package links to the entry of the module that defines it (which the reference
    pages document), so no object is documented twice.
    """
    module = importlib.import_module(module_name)
    try:
        obj = getattr(module, name)
    except MissingDependencyError:
        return f"{module_name}.{name}"
    if inspect.ismodule(obj):
        return obj.__name__
    home, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    defined = home and qualname and "<locals>" not in qualname and home in set(_public_modules())
    defined = defined and name in getattr(importlib.import_module(home), "__all__", ())  # documented there
    if (inspect.isclass(obj) or inspect.isfunction(obj)) and defined:
        return f"{home}.{qualname}"
    if hasattr(module, "__path__"):  # a package re-exporting a constant or alias: the submodule that lists it
        for sub in (sub for sub in _public_modules() if sub.startswith(f"{module_name}.")):
            listing = importlib.import_module(sub)
            if name in getattr(listing, "__all__", ()) and getattr(listing, name) is obj:
                return f"{sub}.{name}"
    return f"{module_name}.{name}"


@pytest.mark.slow  # imports every module, the RL adapters included
def test_the_public_names_are_the_documented_list():
    """A public name added, removed or moved is a visible decision: docs/public-api.md changes with it."""
    actual = _public_api()
    documented = _documented_api()
    assert sorted(documented) == sorted(actual), "modules differ from docs/public-api.md"
    for name, names in actual.items():
        assert documented[name] == names, f"{name}.__all__ differs from docs/public-api.md"
    total = sum(len(names) for names in actual.values())
    assert f"{total} public names in {len(actual)} modules." in PUBLIC_API_DOC.read_text()


MAX_PUBLIC_NAMES = 400
"""The whole surface, counted over every module's ``__all__``: a helper gets no public name."""


def test_the_public_surface_stays_narrow():
    """Counted from docs/public-api.md (which the test above holds to the code), so no RL library is imported."""
    documented = _documented_api()
    total = sum(len(names) for names in documented.values())
    assert total <= MAX_PUBLIC_NAMES, f"{total} names in __all__ lists across modules; at most {MAX_PUBLIC_NAMES}"


def test_the_top_level_hands_on_what_user_code_writes():
    import agentgym_budget.wrappers

    assert agentgym_budget.TurnBudget is agentgym_budget.wrappers.TurnBudget
    assert {"make", "StateSnapshot", "AgentGymBudgetError", "Agent", "run_passkt", "EnvRef"} <= set(
        dir(agentgym_budget)
    )
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        agentgym_budget.nothing  # noqa: B018


def _public_api() -> dict[str, list[str]]:
    return {name: list(getattr(importlib.import_module(name), "__all__", [])) for name in _public_modules()}


def write_public_api_doc() -> int:
    """Rewrite the module list and the count of docs/public-api.md from the code; return the number of names."""
    actual = _public_api()
    total = sum(len(names) for names in actual.values())
    listing = [f"{total} public names in {len(actual)} modules.", ""] + [
        f"- `{module}`: "
        + (", ".join(f"{{py:obj}}`{name} <{reference_target(module, name)}>`" for name in names) if names else "(none)")
        for module, names in sorted(actual.items())
    ]
    lines = PUBLIC_API_DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"\d+ public names in \d+ modules\.", line))
    end = max(i for i, line in enumerate(lines) if re.fullmatch(r"- `([\w.]+)`: (.*)", line)) + 1
    PUBLIC_API_DOC.write_text("\n".join([*lines[:start], *listing, *lines[end:]]) + "\n")
    return total


if __name__ == "__main__":
    print(f"docs/public-api.md: {write_public_api_doc()} public names")
