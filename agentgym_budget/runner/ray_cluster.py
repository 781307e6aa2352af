"""Connecting to Ray: a new local cluster, or an existing one with this package shipped to its workers.

Ray workers import :mod:`agentgym_budget` to run evaluation jobs
(:class:`~agentgym_budget.runner.ray_executor.RayBackend`, ``--backend ray``) and rollouts
(:mod:`~agentgym_budget.integrations.ray_rollouts`). :func:`ray_connection` makes sure they can:

* **No address**: a new local cluster is started (``ray.init(address="local")``, ~10 s on 2 cores);
  ``$RAY_ADDRESS``, when set, is used as the address instead, as Ray's own tools do. The local
  cluster's workers run this process's Python with its environment variables and working
  directory, so they import the package exactly as this process does (installed, or on
  ``PYTHONPATH``) and share its cache (``AGENTGYM_BUDGET_CACHE``); nothing is shipped. The cluster is
  shut down when the block ends.
* **An address** (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``): this process connects to that
  cluster, whose nodes may lack the package or hold another version of it. By default the package
  directory this process imports is shipped in the job's ``runtime_env`` as ``py_modules`` (about
  1 MB, uploaded once per cluster and content), so the workers run exactly this code; the nodes need
  its dependencies (``textworld``, ``gymnasium``, ...) installed. With ``ship_package=False`` the
  workers import the package installed on the nodes instead. The block's end disconnects.
* **Already connected** (``ray.is_initialized()``): the connection is used as it is and left open.
  When you call ``ray.init`` yourself for a cluster whose nodes lack the package, pass it
  :func:`package_runtime_env` (Ray ships local directories only at ``ray.init``, not per actor).

A cluster started elsewhere does not see this process's environment variables: set
``AGENTGYM_BUDGET_CACHE`` where the cluster is started, or pass ``runtime_env={"env_vars": {...}}``.

Example:
    >>> env = package_runtime_env()
    >>> Path(env["py_modules"][0]).name, env["excludes"]
    ('agentgym_budget', ['__pycache__', '*.pyc'])
    >>> sorted(init_arguments("ray://head:10001"))
    ['address', 'runtime_env']
    >>> init_arguments(None, environ={})
    {'address': 'local'}
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from agentgym_budget.dependencies import require
from agentgym_budget.errors import RunConfigError

__all__ = ["package_runtime_env", "ray_connection"]

LOCAL = "local"
"""Ray's address for "start a new local cluster"."""

_EXCLUDES = ["__pycache__", "*.pyc"]


def import_ray(feature: str = "Running on Ray") -> ModuleType:
    """Import ``ray`` or raise :class:`~agentgym_budget.errors.MissingDependencyError` naming the ``ray`` extra."""
    return require("ray", extra="ray", feature=feature)


def package_runtime_env(runtime_env: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``runtime_env`` (a copy) with this process's ``agentgym_budget`` directory added to ``py_modules``."""
    env = dict(runtime_env or {})
    package = str(Path(__file__).resolve().parent.parent)
    env["py_modules"] = [*[m for m in env.get("py_modules", []) if m != package], package]
    env["excludes"] = [*env.get("excludes", []), *[e for e in _EXCLUDES if e not in env.get("excludes", [])]]
    return env


def init_arguments(
    address: str | None,
    *,
    ship_package: bool | None = None,
    runtime_env: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``ray.init`` for :func:`ray_connection` (see the module docstring).

    Args:
        address: Cluster address, or ``None`` for a new local cluster (or ``$RAY_ADDRESS``).
        ship_package: Ship this package to the workers (``None``: when connecting to an existing cluster).
        runtime_env: The job's runtime environment (the package is added to its ``py_modules``).
        init_options: Further ``ray.init`` arguments (e.g. ``num_cpus`` of a local cluster).
        environ: Environment variables to read ``RAY_ADDRESS`` from (default ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    resolved = address or environ.get("RAY_ADDRESS") or LOCAL
    ship = (resolved != LOCAL) if ship_package is None else bool(ship_package)
    env = package_runtime_env(runtime_env) if ship else dict(runtime_env or {})
    arguments: dict[str, Any] = {"address": resolved, **dict(init_options or {})}
    if env:
        arguments["runtime_env"] = env
    return arguments


@contextlib.contextmanager
def ray_connection(
    address: str | None = None,
    *,
    ship_package: bool | None = None,
    runtime_env: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> Iterator[ModuleType]:
    """Connect to Ray for the block (see the module docstring) and yield the ``ray`` module.

    Args:
        address: Cluster address; ``None``: start a new local cluster (or use ``$RAY_ADDRESS``).
        ship_package: Ship this package to the workers (``None``: only to an existing cluster).
        runtime_env: The job's runtime environment.
        init_options: Further ``ray.init`` arguments.

    Raises:
        MissingDependencyError: Ray is not installed.
        RunConfigError: The cluster at ``address`` cannot be reached.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    arguments = init_arguments(address, ship_package=ship_package, runtime_env=runtime_env, init_options=init_options)
    try:
        ray.init(**arguments)
    except (ConnectionError, TimeoutError, ValueError) as err:
        raise RunConfigError(
            f"Could not connect to the Ray cluster at {arguments['address']!r}: {err} Check the address "
            "(`ray status` on the head node prints it), or give no address to start a local cluster."
        ) from err
    try:
        yield ray
    finally:
        ray.shutdown()
