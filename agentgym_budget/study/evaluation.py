"""The study's evaluation stages on held-out tasks, and the tables ``study.json`` takes from them.

* ``passkt/``: the Pass@(K,T) grid of every trained agent (:func:`passkt_stage`), and from its
  ``summary.json`` the Pass@1 table (:func:`study_table`) and the paired differences
  (:func:`study_differences`) at every budget;
* ``probe/``: single-step probes (:func:`probe_stage`) at states **the evaluated agents visited** (their
  ``passkt`` episodes are the reference trajectories), kept only where the admissible actions differ in
  value (``min_value_gap``: the expert's continuation from the state's snapshot wins after some actions
  and not after others; :mod:`agentgym_budget.eval.probes.discriminate`); :func:`step_value_distribution`
  reports each agent's per-state step values as quantiles and histogram counts, with the filter's counts;
* ``recovery/``: recovery probes with ``k = 0..3`` forced errors (``k = 0``: the control).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_budget.core.text import normalize_command
from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.runner.store import atomic_write_text, read_jsonl

__all__: list[str] = []

ORDER = ("sft", "fixed", "budgetmix", "curriculum", "budgetmix_turn", "budgetmix_process")
"""Report order of the agents (a difference is later minus earlier: ``fixed - sft``)."""

PROBE_VALUE_GAP = 0.5
"""Probe states are kept when the best and worst admissible actions' continuation values differ by this much."""

PROBE_DEPTHS_PER_EPISODE = 4
"""States examined per reference episode (random depths; fewer when the episode is shorter)."""

QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
BINS = tuple(round(0.1 * i, 1) for i in range(11))


def study_table(passkt_summary: dict[str, Any], agents: dict[str, str], budget: int) -> list[dict[str, Any]]:
    """Rows ``agent, budget, pass@1, low, high, tasks`` of a Pass@(K,T) ``summary.json`` (K=1 only).

    Example:
        >>> summary = {"agents": [{"agent": "hf:runs/s/sft/final", "tasks": 2, "grid": [
        ...     {"k": 1, "t": 4, "pass": 0.25, "ci_low": 0.0, "ci_high": 0.5},
        ...     {"k": 1, "t": 8, "pass": 0.5, "ci_low": 0.25, "ci_high": 0.75}]}]}
        >>> study_table(summary, {"sft": "hf:runs/s/sft/final"}, 8)
        [{'agent': 'sft', 'budget': 8, 'pass@1': 0.5, 'low': 0.25, 'high': 0.75, 'tasks': 2}]
    """
    names = {spec: name for name, spec in agents.items()}
    rows = []
    for entry in passkt_summary.get("agents", []):
        for cell in entry["grid"]:
            if cell["k"] == 1 and cell["t"] == budget:
                rows.append(
                    {
                        "agent": names.get(entry["agent"], entry["agent"]),
                        "budget": budget,
                        "pass@1": cell["pass"],
                        "low": cell["ci_low"],
                        "high": cell["ci_high"],
                        "tasks": entry["tasks"],
                    }
                )
    return rows


def _rank(name: str) -> int:
    base = name.partition("@")[0]
    return ORDER.index(base) if base in ORDER else len(ORDER)


def study_differences(passkt_summary: dict[str, Any], agents: dict[str, str], budget: int) -> list[dict[str, Any]]:
    """Paired Pass@1 differences at ``budget`` on common tasks (later recipe minus earlier: ``fixed - sft``).

    Example:
        >>> summary = {"differences": [{"first": "hf:a", "second": "hf:b", "tasks": 3, "grid": [
        ...     {"k": 1, "t": 6, "diff": 0.2, "ci_low": 0.05, "ci_high": 0.4, "significant": True}]}]}
        >>> row = study_differences(summary, {"sft": "hf:a", "fixed": "hf:b"}, 6)[0]
        >>> row["pair"], row["diff"], row["low"], row["high"]
        ('fixed - sft', -0.2, -0.4, -0.05)
    """
    names = {spec: name for name, spec in agents.items()}
    rows = []
    for entry in passkt_summary.get("differences", []):
        for cell in entry["grid"]:
            if cell["k"] == 1 and cell["t"] == budget:
                first, second = names.get(entry["first"], entry["first"]), names.get(entry["second"], entry["second"])
                diff, low, high = cell["diff"], cell["ci_low"], cell["ci_high"]
                if _rank(first) < _rank(second):  # report later recipe minus earlier one: RL - SFT
                    first, second, diff, low, high = second, first, 0.0 - diff, 0.0 - high, 0.0 - low  # no -0.0
                rows.append(
                    {
                        "pair": f"{first} - {second}",
                        "budget": budget,
                        "diff": diff,
                        "low": low,
                        "high": high,
                        "significant": cell["significant"],
                        "tasks": entry["tasks"],
                    }
                )
    return rows


EVALUATION_LOGS = ("passkt/episodes.jsonl", "probe/probes.jsonl", "recovery/episodes.jsonl")
"""The evaluation stages' logs in a study directory: each record names its agent as the study gave it."""


def relocate_logs(out: Path, agents: dict[str, str]) -> int:
    """Rename, in the evaluation logs of a study moved or copied to ``out``, its agents to their names here.

    A study names its agents ``hf:OUT/RUN/final`` (``score:OUT/RUN/final`` for a scoring policy); after a move
    the logged records still carry the old ``OUT``, and would be played again under the new names. A record whose
    agent is ``hf:X/RUN/final`` (or ``score:``) for a run ``RUN`` of ``agents`` with another ``X`` is renamed to ``agents[RUN]`` (the episodes are
    the same: seeds do not depend on the agent's name). Returns how many records were renamed.
    """
    renamed = 0
    for name in EVALUATION_LOGS:
        path = out / name
        if not path.is_file():
            continue
        records = read_jsonl(path)
        changed = 0
        for record in records:
            spec = record.get("agent")
            run = _run_of(spec)
            if run in agents and spec != agents[run]:
                record["agent"], changed = agents[run], changed + 1
        if changed:
            lines = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n" for record in records)
            atomic_write_text(path, "".join(lines))
            renamed += changed
    return renamed


def _run_of(spec: Any) -> str | None:
    """The run ``RUN`` of an agent spec ``hf:X/RUN/final`` or ``score:X/RUN/final`` (``None`` for another spec).

    Example:
        >>> _run_of("score:/runs/s/fixed@1/final"), _run_of("hf:s/sft/final"), _run_of("random")
        ('fixed@1', 'sft', None)
    """
    if not isinstance(spec, str):
        return None
    kind, _, path = spec.partition(":")
    parts = path.rsplit("/", 2) if kind in ("hf", "score") else []
    return parts[-2] if len(parts) >= 2 and parts[-1] == "final" else None


def passkt_stage(config: Any, env: Any, agents: dict[str, str], out: Path, progress: bool) -> str:
    """The held-out Pass@(K,T) stage; returns its summary text."""
    from agentgym_budget.eval.passkt.config import PassKTConfig
    from agentgym_budget.eval.passkt.plan import run_passkt
    from agentgym_budget.eval.passkt.tables import format_summary

    show = bool(config.train and config.train.show_budget)
    passkt = PassKTConfig(
        env,
        tuple(agents.values()),
        ks=config.eval_ks,
        budgets=config.eval_budgets,
        samples=config.eval_samples,
        tasks=config.eval_tasks,
        mode="independent" if show else "prefix",
        show_budget=show,
        seed=config.seed,
        workers=config.workers,
    )
    return format_summary(run_passkt(passkt, out / "passkt", progress=progress).summary)


def passkt_tables(config: Any, agents: dict[str, str], out: Path) -> tuple[list[dict], list[dict]]:
    """The Pass@1 table and the paired differences at every budget, from ``passkt/summary.json`` (empty without)."""
    path = out / "passkt" / "summary.json"
    if not path.exists():
        return [], []
    summary = json.loads(path.read_text())
    table: list[dict[str, Any]] = []
    differences: list[dict[str, Any]] = []
    for budget in config.eval_budgets:
        table += study_table(summary, agents, budget)
        differences += study_differences(summary, agents, budget)
    return table, differences


def probe_stage(config: Any, env: Any, agents: dict[str, str], out: Path, progress: bool) -> str:
    """The probe stage: ``probe_states`` agent episodes of ``passkt/`` walked, up to 4 states each, filtered.

    Needs the ``passkt`` stage's log (its episodes are the reference trajectories).
    """
    from agentgym_budget.eval.probes.plan import ProbeConfig, run_probe
    from agentgym_budget.eval.probes.summary import format_probe_summary

    probe = ProbeConfig(
        envs=(env,),
        agents=tuple(agents.values()),
        states=config.probe_states * PROBE_DEPTHS_PER_EPISODE,
        samples=2,
        per_trajectory=PROBE_DEPTHS_PER_EPISODE,
        reference=str(out / "passkt" / "episodes.jsonl"),
        min_value_gap=PROBE_VALUE_GAP,
        budget=config.train_budget,
        show_budget=bool(config.train and config.train.show_budget),
        seed=config.seed,
        workers=config.workers,
    )
    return format_probe_summary(run_probe(probe, out / "probe", progress=progress).summary)


def recovery_stage(config: Any, env: Any, agents: dict[str, str], out: Path, progress: bool) -> str:
    """The recovery stage: ``k = 0..3`` forced errors (``k = 0`` the control) at the training and largest budget."""
    from agentgym_budget.eval.recovery.config import RecoveryConfig
    from agentgym_budget.eval.recovery.plan import run_recovery
    from agentgym_budget.eval.recovery.summary import format_recovery_summary

    recovery = RecoveryConfig(
        envs=(env,),
        agents=tuple(agents.values()),
        states=config.recovery_states,
        ks=(0, 1, 2, 3),
        budgets=tuple(sorted({config.train_budget, max(config.budgets)})),
        samples=2,
        natural=0,
        show_budget=bool(config.train and config.train.show_budget),
        seed=config.seed,
        workers=config.workers,
    )
    return format_recovery_summary(run_recovery(recovery, out / "recovery", progress=progress).summary)


def step_value_distribution(out: Path, agents: dict[str, str]) -> dict[str, Any]:
    """Per agent, the distribution of its per-state step value (mean over samples), and the filter's counts.

    ``states_examined`` / ``states_kept``: states valued by the filter and those whose actions differed
    enough; ``quantiles`` (at :data:`QUANTILES`) and ``histogram`` (counts over the bins :data:`BINS`,
    the last one closed) per agent: a metric that saturates shows as every state in the top (or bottom) bin.
    """
    path = out / "probe" / "probes.jsonl"
    records = read_jsonl(path) if path.exists() else []
    names = {spec: name for name, spec in agents.items()}
    per_state: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if record.get("kind") == "probe" and record.get("agent") in names:
            per_state[names[record["agent"]]][record["state_id"]].append(float(record["value"]))
    states = [r for r in records if r.get("kind") == "state"]
    result: dict[str, Any] = {
        "states_examined": len(states),
        "states_kept": sum(bool(r["discriminating"]) for r in states),
        "value_gap": PROBE_VALUE_GAP,
        "bins": list(BINS),
        "agents": {},
    }
    for name in sorted(per_state, key=lambda n: (_rank(n), n)):
        values = np.array([np.mean(v) for _, v in sorted(per_state[name].items())])
        counts, _ = np.histogram(values, bins=BINS)
        result["agents"][name] = {
            "states": int(values.size),
            "mean": round(float(values.mean()), 6),
            "quantiles": {str(q): round(float(np.quantile(values, q)), 6) for q in QUANTILES},
            "histogram": [int(c) for c in counts],
        }
    return result


def expert_first_moves(held_out: Any, task_ids: Iterable[str]) -> dict[str, str]:
    """The reference solver's first command on each task of ``held_out`` (an ``EnvRef``), by task id.

    Empty when the environment has no ``expert_plan`` info key (no reference solver to compare with).
    """
    try:
        env = held_out.make_base(("expert_plan",))
    except InvalidOptionError:
        return {}
    moves = {}
    try:
        for task_id in sorted(set(task_ids)):
            _, info = env.reset(options={"task": task_id})
            if info.get("expert_plan"):
                moves[task_id] = normalize_command(info["expert_plan"][0])
    finally:
        env.close()
    return moves


def turn_quality(out: Path, agents: dict[str, str], held_out: Any = None) -> dict[str, dict[str, Any]]:
    """Per agent, how its held-out turns were spent: the share naming an action that is not admissible there.

    From ``passkt/episodes.jsonl`` (every agent's turns in the Pass@(K,T) grid): ``episodes``, ``turns``,
    ``inadmissible`` (share of turns whose action is not one of the state's admissible actions) and
    ``free_text`` (share of replies that were not a well-formed ``act`` call). A base that spends most
    turns on inadmissible actions leaves RL the job of teaching it to read its observation. With
    ``held_out`` (the evaluation's ``EnvRef``) and a reference solver, also ``first_move_expert``: the
    share of episodes whose first action is the solver's first command, which an agent that ignores its
    task matches only by chance (1 in 4 for Coin Collector's four directions).

    Example:
        >>> import json, tempfile
        >>> out = Path(tempfile.mkdtemp()); (out / "passkt").mkdir()
        >>> stats = {"unmatched_actions": 1, "free_text_turns": 0}
        >>> record = {"agent": "hf:b", "turns": 4, "agent_stats": stats}
        >>> _ = (out / "passkt" / "episodes.jsonl").write_text(json.dumps(record) + "\\n")
        >>> turn_quality(out, {"sft": "hf:b"})
        {'sft': {'episodes': 1, 'turns': 4, 'inadmissible': 0.25, 'free_text': 0.0}}
    """
    path = out / "passkt" / "episodes.jsonl"
    names = {spec: name for name, spec in agents.items()}
    records = [r for r in (read_jsonl(path) if path.exists() else []) if r.get("agent") in names]
    moves = expert_first_moves(held_out, (r["task_id"] for r in records)) if held_out is not None else {}
    totals: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        stats, total = record.get("agent_stats") or {}, totals[names[record["agent"]]]
        total["episodes"] += 1
        total["turns"] += int(record.get("turns", 0))
        total["unmatched"] += int(stats.get("unmatched_actions", 0))
        total["free_text"] += int(stats.get("free_text_turns", 0))
        if record.get("task_id") in moves:
            total["compared"] += 1
            total["agreed"] += normalize_command((record.get("actions") or [""])[0]) == moves[record["task_id"]]
    return {name: _turn_shares(**counts) for name, counts in sorted(totals.items(), key=lambda i: (_rank(i[0]), i[0]))}


def _turn_shares(
    episodes: int = 0, turns: int = 0, unmatched: int = 0, free_text: int = 0, compared: int = 0, agreed: int = 0
) -> dict:
    shares = {
        "episodes": episodes,
        "turns": turns,
        "inadmissible": round(unmatched / turns, 6) if turns else 0.0,
        "free_text": round(free_text / turns, 6) if turns else 0.0,
    }
    if compared:
        shares["first_move_expert"] = round(agreed / compared, 6)
    return shares
