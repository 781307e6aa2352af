"""The module paths of the flat layout still import, to the same objects, with a DeprecationWarning."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentgym_budget._internal.moved import MOVED_MODULES


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_an_old_path_imports_the_moved_module_and_warns(old):
    code = (
        "import importlib, warnings\n"
        "warnings.simplefilter('always')\n"
        "import agentgym_budget\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    module = importlib.import_module({old!r})\n"
        f"assert module is importlib.import_module({MOVED_MODULES[old]!r})\n"
        "messages = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
        f"assert any({MOVED_MODULES[old]!r} in m for m in messages), messages\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_paths_users_write_keep_working():
    from agentgym_budget.snapshot import get_state
    from agentgym_budget.vector_env import TextVectorEnv

    import agentgym_budget
    from agentgym_budget.vector import reset_each
    from agentgym_budget.wrappers import StateSnapshot

    assert get_state is agentgym_budget.get_state
    assert TextVectorEnv.__module__ == "agentgym_budget.vector.text_vector_env"
    assert callable(reset_each) and StateSnapshot.__module__.startswith("agentgym_budget.wrappers")


def test_the_top_level_is_a_map():
    import pathlib

    import agentgym_budget

    top = pathlib.Path(agentgym_budget.__file__).parent
    modules = sorted(p.name for p in top.glob("*.py"))
    assert len(modules) <= 10, modules
    for package in (p for p in top.iterdir() if (p / "__init__.py").exists()):
        doc = (package / "__init__.py").read_text()
        assert doc.lstrip().startswith(('"""', 'r"""')), f"{package.name}/__init__.py has no docstring"


def test_the_scrub_helpers_made_private_still_import_with_a_warning() -> None:
    from agentgym_budget.runner import scrub

    with pytest.warns(DeprecationWarning, match="scrub_text is private"):
        scrub_text = scrub.scrub_text
    assert scrub_text("key sk-abcdefghijklmnopqrstuv", secrets=()) == "key ***"
    with pytest.warns(DeprecationWarning):
        assert scrub.REDACTED == "***"
    with pytest.raises(AttributeError, match="no attribute 'scrubber'"):
        scrub.scrubber  # noqa: B018
