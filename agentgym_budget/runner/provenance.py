"""What produced a run: ``provenance.json`` in every result directory, and a warning when runs disagree.

Every command that writes a result directory (``passkt``, ``probe``, ``recovery``, ``report``, ``train``,
``study``) records, when it starts, what is producing the results (:func:`collect_provenance`):

* ``agentgym_budget``: this package's version and, for a git checkout, its commit (``dirty`` when tracked
  files differ from it); no git, no commit, never an error;
* ``python`` (version, implementation) and ``machine`` (CPU model, cores, platform);
* ``engines``: per task family the run plays (or this process has made an env of), its engine's installed
  distributions (:func:`~agentgym_budget.registration.declare_engine`) and what else ran, e.g. TWX's Java version;
* ``libraries``: gymnasium, numpy, torch, transformers, ... as installed, for those imported in this process
  when it wrote the record, and for those the run's agents load (``hf:`` agents: torch and transformers);
* ``models`` and ``data``: the SHA-256 of every model (an ``hf:`` agent's folder, a training run's base model)
  and of every file a user gave (a game file or data folder among the env's arguments, a reference log),
  each hashed once per version of the file (:mod:`agentgym_budget.storage.file_digests`);
* ``command``: the command line, secrets scrubbed (:func:`~agentgym_budget.runner.scrub.scrub`).

A directory keeps one record (``{"records": [...]}``): a resumed run whose record is the same but for
the command line adds nothing, one with a different setup (an upgraded engine) adds its own. Commands
that combine runs (``report``, ``study``) compare them with :func:`provenance_warnings`: one line per
engine package, library or model whose version or digest differs, naming both values. Benchmarks put
the same record under ``provenance`` in their result file.

Example:
    >>> record = collect_provenance(env_ids=["TextWorld-CoinCollector-v0"])
    >>> sorted(record["engines"]["textworld"]["packages"])
    ['jericho', 'textworld']
    >>> other = {**record, "engines": {"textworld": {"packages": {"textworld": "0.1", "jericho": "3.3.1"}}}}
    >>> provenance_warnings({"runs/a": [record], "runs/b": [other]})[0]  # doctest: +ELLIPSIS
    'runs/a and runs/b differ in engines.textworld.packages.textworld: ... vs 0.1'
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentgym_budget._version import __version__
from agentgym_budget.errors import DataError
from agentgym_budget.registration import engine_info, env_info, registered_ids
from agentgym_budget.runner.scrub import scrub
from agentgym_budget.runner.store import atomic_write_json
from agentgym_budget.storage.file_digests import path_digest
from agentgym_budget.storage.safe_json import read_json_file

__all__: list[str] = []

PROVENANCE_FILE = "provenance.json"
"""The file name of a result directory's provenance."""

LIBRARIES = ("gymnasium", "numpy", "torch", "transformers", "trl", "peft", "accelerate", "ray", "verl", "openai")
"""Libraries whose versions a record names when they are imported (module and distribution share the name)."""

AGENT_LIBRARIES = {"hf": ("torch", "transformers")}
"""Libraries an agent kind loads in whichever process plays it (recorded even if this one never imported them)."""

COMPARED = ("engines", "libraries", "models")
"""The parts of two records whose differences :func:`provenance_warnings` names."""

_VOLATILE = ("command",)
_ROOT = Path(__file__).resolve().parents[2]


class ProvenanceWarning(UserWarning):
    """Runs combined into one result were produced by different engines, libraries or models."""


def _installed(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=_ROOT, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def package_record() -> dict[str, Any]:
    """This package's version, and its git commit when it runs from a git checkout (else ``None``)."""
    record: dict[str, Any] = {"version": __version__, "commit": None}
    if (_ROOT / ".git").exists() and (commit := _git("rev-parse", "HEAD")):
        record["commit"] = commit
        record["dirty"] = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return record


def machine_record() -> dict[str, Any]:
    """The CPU model, cores (all and usable) and platform."""
    model = platform.processor() or None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu_model": model, "cores": os.cpu_count(), "usable_cores": usable, "platform": platform.platform()}


def _engines(env_ids: Iterable[str]) -> dict[str, Any]:
    """The engines of the families of ``env_ids`` and of every family whose env module this process imported."""
    imported = {
        env_info(i).family for i in registered_ids() if env_info(i).entry_point.partition(":")[0] in sys.modules
    }
    families = sorted({env_info(env_id).family for env_id in env_ids} | imported)
    engines = {}
    for family in families:
        engine = engine_info(family)
        record: dict[str, Any] = {"packages": {name: _installed(name) for name in engine.packages}}
        if engine.runtime is not None:
            record.update(engine.runtime())
        engines[family] = record
    return engines


def _libraries(extra: Iterable[str]) -> dict[str, str | None]:
    wanted = {name for name in LIBRARIES if name in sys.modules} | set(extra)
    return {name: _installed(name) for name in sorted(wanted)}


def _digests(paths: Mapping[str, str | os.PathLike[str]]) -> dict[str, Any]:
    found = {}
    for label, path in sorted(paths.items()):
        try:
            found[label] = {"path": str(Path(path).resolve()), **path_digest(path)}
        except OSError as err:
            found[label] = {"path": str(path), "error": str(err)}
    return found


def collect_provenance(
    *,
    env_ids: Iterable[str] = (),
    agents: Iterable[Any] = (),
    models: Mapping[str, str | os.PathLike[str]] | None = None,
    data: Mapping[str, str | os.PathLike[str]] | None = None,
    libraries: Iterable[str] = (),
) -> dict[str, Any]:
    """The record of the module docstring.

    Args:
        env_ids: The ids the run plays (their families' engines are recorded).
        agents: Its agents (:class:`~agentgym_budget.agents.AgentSpec`); an ``hf:`` agent's folder is a model.
        models: Further model files or folders, by the name the run gives them.
        data: Files or folders a user gave, by the name the run gives them (the setting that named them).
        libraries: Distributions the run loads in other processes (recorded as installed).
    """
    models = dict(models or {})
    libraries = set(libraries)
    for spec in agents:
        libraries.update(AGENT_LIBRARIES.get(spec.kind.name, ()))
        if spec.kind.name == "hf" and spec.argument:
            models[spec.name] = spec.argument
    return {
        "agentgym_budget": package_record(),
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
        "engines": _engines(env_ids),
        "libraries": _libraries(libraries),
        "models": _digests(models),
        "data": _digests(dict(data or {})),
        "machine": machine_record(),
        "command": scrub(list(sys.argv)),
    }


def env_data(kwargs: Iterable[tuple[str, Any]]) -> dict[str, str]:
    """The env arguments that name an existing file or folder (``path=game.z8``, ``data_dir=...``), by name.

    Example:
        >>> env_data([("level", 3), ("path", ".")])
        {'path': '.'}
    """
    return {key: value for key, value in kwargs if isinstance(value, str) and value and os.path.exists(value)}


def run_inputs(
    envs: Sequence[Any], agents: Iterable[Any] = (), files: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The :func:`collect_provenance` arguments of a run of ``envs`` (:class:`~agentgym_budget.runner.env_ref.EnvRef`)
    and ``agents``: the envs' ids, the agents, and as data the env arguments and ``files`` (settings that may
    name a file: ``reference``) that name an existing file or folder."""
    data: dict[str, str] = {}
    for env in envs:
        prefix = f"{env.env_id}:" if len(envs) > 1 else ""
        data.update({prefix + key: value for key, value in env_data(env.kwargs).items()})
    for key, value in (files or {}).items():
        paths = [value] if isinstance(value, str) else list(value)
        for index, path in enumerate(paths):
            data.update(env_data([(key if len(paths) == 1 else f"{key}[{index}]", path)]))
    return {"env_ids": [env.env_id for env in envs], "agents": list(agents), "data": data}


def read_provenance(directory: str | Path) -> list[dict[str, Any]]:
    """The records of ``directory``'s ``provenance.json`` (``[]`` when it has none: a run of an older version).

    Raises:
        DataError: The file is not a JSON object holding a list of records (within the safe reader's limits).
    """
    path = Path(directory) / PROVENANCE_FILE
    if not path.exists():
        return []
    data = read_json_file(path, what="run provenance", expected=dict)
    records = data.get("records")
    if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
        raise DataError(f"{path} holds no list of provenance records under 'records'.")
    return records


def write_provenance(directory: str | Path, **inputs: Any) -> Path:
    """Record what produces the run in ``directory`` (see the module docstring; ``inputs`` as for
    :func:`collect_provenance`); a record equal to the last one but for the command line is not added."""
    path = Path(directory) / PROVENANCE_FILE
    record = collect_provenance(**inputs)
    records = read_provenance(directory)
    if not records or _stable(records[-1]) != _stable(record):
        records.append(record)
        atomic_write_json(path, {"records": records})
    return path


def _stable(record: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key not in _VOLATILE}


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    """``{"engines.textworld.textworld": "1.7.0", "models.hf:x.sha256": ...}``: the compared leaves."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key not in ("path", "bytes", "files"):
                out.update(_flatten(item, f"{prefix}.{key}"))
        return out
    return {prefix: value}


def warn_if_different(runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Warn (:class:`ProvenanceWarning`) once per line of :func:`provenance_warnings`; returns the lines."""
    lines = provenance_warnings(runs)
    for line in lines:
        warnings.warn(line, ProvenanceWarning, stacklevel=2)
    return lines


def provenance_warnings(runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """One line for every engine package, library or model (by name) whose version or digest differs
    between the records of ``runs`` (directory -> its records), within a run or between runs.

    Only what two records both name is compared: runs of other families or other agents do not warn.
    """
    first: dict[str, tuple[str, Any]] = {}
    lines = []
    for label, records in runs.items():
        for record in records:
            for part in COMPARED:
                for key, value in _flatten(record.get(part, {}), part).items():
                    seen = first.setdefault(key, (label, value))
                    if seen[1] != value:
                        where = f"{seen[0]} and {label}" if seen[0] != label else f"{label} (resumed)"
                        line = f"{where} differ in {key}: {seen[1]} vs {value}"
                        if line not in lines:
                            lines.append(line)
    return lines
