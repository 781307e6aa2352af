"""Repository-wide pytest hooks: the slow-marker policy that keeps the quick loop quick (see tests/README.md).

``python -m pytest -m "not slow"`` is the developers' quick loop; ``python -m pytest`` (CI) runs
everything. A test (or doctest) is marked ``slow`` when it takes more than :data:`QUICK_TEST_SECONDS`
on a quiet 2-core machine with a warm cache. So that the policy holds while tests are added, every
run ends with a short report: the time spent in tests that are not marked slow, and the unmarked
tests that took longer than the threshold (candidates for ``@pytest.mark.slow``, or for a cheaper
setup), and the ten slowest tests of the run (docs/development.md says what each covers). It is advice,
never a failure: timings on a busy machine vary.

Hypothesis runs without its per-example deadline (200 ms by default): a deadline is a timed assertion, and on a
busy machine it failed examples that take 0.2 ms when the machine is quiet; the examples' number and seed are
unchanged.

Doctests are marked slow by module in :data:`SLOW_DOCTEST_MODULES` (a docstring cannot carry a marker).
Their examples make scratch files with :mod:`tempfile` as a reader would; during a doctest,
``tempfile`` makes them under pytest's own temporary directory, so runs leave nothing in ``/tmp``.

A full run (no ``-m``, ``-k`` or paths) also starts ``tests/warm_games.py`` in the background, at low
priority: it generates the TextWorld games the suite will ask for on the second core while tests run
on the first (set ``AGENTGYM_BUDGET_NO_WARM_GAMES=1`` to turn it off).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("agentgym-budget", deadline=None)
settings.load_profile("agentgym-budget")

QUICK_TEST_SECONDS = 1.0
"""Longest a test not marked ``slow`` should take (setup + call + teardown, quiet machine, warm cache)."""

SLOW_DOCTEST_MODULES: frozenset[str] = frozenset(
    {
        "agentgym_budget.eval.passkt.plots",
        "agentgym_budget.runner.parent_watch",
        "agentgym_budget.tasks.alfworld.shared_planner",
        "agentgym_budget.tasks.sciworld.env",
    }
)
"""Modules whose doctests are marked ``slow`` (they play many episodes or generate data)."""

_warm_games: subprocess.Popen | None = None
_durations: dict[str, float] = defaultdict(float)
_slow: set[str] = set()


def _is_full_run(config: pytest.Config) -> bool:
    """No test selection: ``python -m pytest`` from the root (testpaths), or on the root itself."""
    root = Path(str(config.rootpath)).resolve()
    everything = config.args_source == pytest.Config.ArgsSource.TESTPATHS or all(
        Path(argument).resolve() == root for argument in config.args
    )
    return everything and not (config.option.markexpr or config.option.keyword)


def pytest_sessionstart(session: pytest.Session) -> None:
    global _warm_games
    if _is_full_run(session.config) and not os.environ.get("AGENTGYM_BUDGET_NO_WARM_GAMES"):
        command = [sys.executable, "-m", "tests.warm_games"]
        if shutil.which("nice"):
            command = ["nice", "-n", "10", *command]
        _warm_games = subprocess.Popen(command, cwd=session.config.rootpath, stdout=subprocess.DEVNULL)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _warm_games is not None and _warm_games.poll() is None:
        _warm_games.terminate()
        try:
            _warm_games.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _warm_games.kill()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(getattr(item, "dtest", None), "name", None)  # doctest items only
        if name and any(name == module or name.startswith(module + ".") for module in SLOW_DOCTEST_MODULES):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _doctest_scratch_files(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        if getattr(request.node, "dtest", None) is not None:
            patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("doctest")))
        yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _durations[report.nodeid] += report.duration
    if "slow" in report.keywords:
        _slow.add(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _durations:
        return
    quick = {node: seconds for node, seconds in _durations.items() if node not in _slow}
    slow_total = sum(seconds for node, seconds in _durations.items() if node in _slow)
    over = sorted(((s, n) for n, s in quick.items() if s > QUICK_TEST_SECONDS), reverse=True)
    terminalreporter.write_sep("-", "slow-marker policy (tests/README.md)")
    terminalreporter.write_line(
        f"{len(quick)} tests not marked slow: {sum(quick.values()):.0f} s; "
        f"{len(_durations) - len(quick)} marked slow: {slow_total:.0f} s."
    )
    if over:
        terminalreporter.write_line(
            f"{len(over)} unmarked tests took over {QUICK_TEST_SECONDS:g} s here (on a busy machine everything "
            "is slower; judge on a quiet one): mark them @pytest.mark.slow or make them cheaper."
        )
        for seconds, node in over[:15]:
            terminalreporter.write_line(f"  {seconds:6.1f} s  {node}")
    slowest = sorted(((s, n) for n, s in _durations.items()), reverse=True)[:10]
    terminalreporter.write_line("the ten slowest tests of this run:")
    for seconds, node in slowest:
        terminalreporter.write_line(f"  {seconds:6.1f} s  {node}")
