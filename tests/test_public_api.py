"""Every public module declares __all__ and every name in it imports."""

from __future__ import annotations

import importlib
import pkgutil

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
