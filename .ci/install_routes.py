"""Check every install route in fresh venvs: the base install and each extra of pyproject.toml alone.

Routes come from ``pyproject.toml`` (every extra except ``test`` and ``all``, which CI's own venv and
a static test cover) plus ``base``. For each route: a new venv, ``pip install -e ".[EXTRA]"`` (then ``pip install --no-deps`` of the
route's data packages, ``[tool.agentgym-budget.no-deps]``; pip's cache and ``find-links`` wheels are reused; ``--no-compile``: only what a route imports gets bytecode), then every ``examples/*.py`` whose first line is
``# route: EXTRA`` (the README includes them verbatim: tests/test_install_routes.py), or, for an
extra with no example yet, an import smoke of ``agentgym_budget.integrations.<extra>``. The base
route runs the quick start's main job on a small grid. A route whose library cannot share CI's venv
(``verl``) also runs its own tests against the real library there (``ROUTE_TESTS``; with ``twx`` beside it, ``ROUTE_EXTRAS``). Routes run ``--jobs`` at a time; any failure
(including a pip that cannot reach its index) fails the run with the log's tail.

Usage: ``python .ci/install_routes.py [--jobs 2] [--only base,webshop] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip vendors the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_EXTRAS = {"test", "all"}
BASE_JOB = ["agentgym-budget", "passkt", "--tasks", "2", "--n", "2", "--k", "1,2", "--t", "10,40", "--no-plots"]
ROUTE_TESTS = {
    "verl": [
        "tests/test_integration_verl.py",
        "agentgym_budget/integrations/verl.py",
        "agentgym_budget/integrations/verl_data.py",
        "agentgym_budget/cli/cmd_export_dataset.py",
    ],
}
ROUTE_EXTRAS = {"verl": "verl,twx"}
"""Extras a route installs besides its own: verl's tests also play the TWX ids through its agent loop."""
TEST_PACKAGES = ["pytest>=8", "hypothesis>=6", "pytest-timeout>=2"]
ROUTE_MARKER = re.compile(r"^# route: ([\w-]+)\s*$")


def no_deps(route: str) -> list[str]:
    """Packages the route installs with ``pip install --no-deps`` after its extra (pyproject's
    ``[tool.agentgym-budget.no-deps]``: only their files are used, their own dependencies never)."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["agentgym-budget"]["no-deps"]
    return list(table.get(route, []))


def routes() -> list[str]:
    """``base`` and every extra of pyproject.toml but ``test`` / ``all``."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return ["base", *sorted(set(extras) - SKIPPED_EXTRAS)]


def examples(route: str) -> list[Path]:
    """The example files marked ``# route: <route>``."""
    found = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        match = ROUTE_MARKER.match(path.read_text().split("\n", 1)[0])
        if match and match.group(1) == route:
            found.append(path)
    return found


def commands(route: str, bin_dir: Path) -> list[list[str]]:
    """What the route runs once installed."""
    python = str(bin_dir / "python")
    if route == "base":
        return [[str(bin_dir / BASE_JOB[0]), *BASE_JOB[1:]], [python, "-m", "agentgym_budget", "list", "--envs"]]
    runs = [[python, str(path)] for path in examples(route)]
    if route in ROUTE_TESTS:
        runs += [
            [python, "-m", "pip", "install", "--quiet", "--no-compile", *TEST_PACKAGES],
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *ROUTE_TESTS[route]],
        ]
    return runs or [[python, "-c", f"import agentgym_budget.integrations.{route}"]]


def check(route: str, work: Path, cache: Path) -> tuple[str, bool, float, str]:
    """Build the route's venv and run its commands; returns (route, ok, seconds, log)."""
    start = time.monotonic()
    venv = work / f"venv-{route}"
    run_dir = work / f"run-{route}"
    run_dir.mkdir(parents=True, exist_ok=True)
    target = str(ROOT) if route == "base" else f"{ROOT}[{ROUTE_EXTRAS.get(route, route)}]"
    env = {**os.environ, "AGENTGYM_BUDGET_CACHE": str(cache), "PYTHONPATH": "", "AGENTGYM_REQUIRE_VERL": "1"}
    env.pop("VIRTUAL_ENV", None)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--no-compile", "-e", target],
        *(
            [[str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--no-deps", *no_deps(route)]]
            * bool(no_deps(route))
        ),
        *commands(route, venv / "bin"),
    ]
    log = []
    for step in steps:
        log.append("$ " + " ".join(step))
        cwd = ROOT if "pytest" in step[1:3] else run_dir  # a route's own tests run from the checkout
        done = subprocess.run(step, cwd=cwd, env=env, capture_output=True, text=True)
        log.append(done.stdout + done.stderr)
        if done.returncode != 0:
            log.append(f"exit status {done.returncode}")
            return route, False, time.monotonic() - start, "\n".join(log)
    return route, True, time.monotonic() - start, "\n".join(log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=2, help="routes built at once (default 2)")
    parser.add_argument("--only", default=None, help="comma-separated routes (default: all)")
    parser.add_argument("--keep", default=None, help="build in this folder and keep it (default: a temp folder)")
    args = parser.parse_args(argv)
    wanted = routes() if args.only is None else args.only.split(",")
    unknown = set(wanted) - set(routes())
    if unknown:
        parser.error(f"unknown routes {sorted(unknown)}; routes: {', '.join(routes())}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="install-routes-"))
    work.mkdir(parents=True, exist_ok=True)
    wall, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    failed = []
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            jobs = [pool.submit(check, route, work, work / "cache") for route in wanted]
            for job in concurrent.futures.as_completed(jobs):
                route, ok, seconds, log = job.result()
                print(f"install route {route:<10} {'ok' if ok else 'FAILED'} ({seconds:.0f} s wall)", flush=True)
                if not ok:
                    failed.append(route)
                    print(log[-6000:], flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    with open("/proc/loadavg") as load:
        loadavg = load.read().split()[0]
    print(
        f"install routes: {len(wanted) - len(failed)}/{len(wanted)} ok in {time.monotonic() - wall:.0f} s wall, "
        f"{cpu:.0f} s CPU, {args.jobs} at a time (load average {loadavg})"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
