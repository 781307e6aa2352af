"""Discriminating probe states (real TextWorld engine): the value filter, its log, resume, and a metric that varies."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_budget.errors import InvalidOptionError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.eval.probes.plan import ProbeConfig, run_probe
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=10")


def _states(out: Path) -> list[dict]:
    return [r for r in read_jsonl(out / "probes.jsonl") if r["kind"] == "state"]


def test_the_filter_needs_a_fixed_continuation_and_a_gap_in_range() -> None:
    with pytest.raises(InvalidOptionError, match="continuation='self' is the probed agent"):
        ProbeConfig((COIN,), ("expert",), min_value_gap=0.5, continuation="self")
    with pytest.raises(InvalidOptionError, match=r"min_value_gap must be a number in \[0, 1\].*got 2"):
        ProbeConfig((COIN,), ("expert",), min_value_gap=2)
    assert "min_value_gap" not in ProbeConfig((COIN,), ("expert",)).to_json()  # earlier run.json files still match


@pytest.mark.slow
def test_tight_budgets_keep_states_and_loose_ones_reject_them(tmp_path: Path) -> None:
    """With no turn to spare a wrong move loses (values differ); with many, the expert recovers from any move."""
    common = {"states": 2, "samples": 1, "per_trajectory": 3, "min_value_gap": 0.5, "workers": 1, "resamples": 100}
    tight = run_probe(ProbeConfig((COIN,), ("random",), slack=0, **common), tmp_path / "tight", progress=False)
    kept = _states(tmp_path / "tight")
    assert kept and all(r["discriminating"] and r["value_gap"] == 1.0 for r in kept)
    assert all(max(r["candidate_values"].values()) == 1.0 for r in kept)
    assert tight.summary.agents["random"].step_value.n == len(kept)
    loose = run_probe(ProbeConfig((COIN,), ("random",), slack=30, **common), tmp_path / "loose", progress=False)
    rejected = _states(tmp_path / "loose")
    assert rejected and not any(r["discriminating"] for r in rejected)
    assert all(set(r["candidate_values"].values()) == {1.0} for r in rejected)
    assert "random" not in loose.summary.agents  # no state left to probe: no agent was asked
    again = run_probe(ProbeConfig((COIN,), ("random",), slack=30, **common), tmp_path / "loose", progress=False)
    assert again.probed == 0 and len(_states(tmp_path / "loose")) == len(rejected)  # a rerun skips rejected states


@pytest.mark.slow
def test_states_the_agents_visited_separate_agents_that_differ(tmp_path: Path) -> None:
    """States from the agents' own episodes, kept when actions differ in value: step value differs by agent."""
    agents = ("expert", "noisy-expert-recover:eps=0.5", "random")
    passkt = PassKTConfig(COIN, agents, ks=(1,), budgets=(11,), samples=1, tasks=4, workers=1)
    run_passkt(passkt, tmp_path / "passkt", progress=False, plots=False)
    config = ProbeConfig(
        (COIN,),
        agents,
        states=24,
        samples=2,
        per_trajectory=2,  # 12 trajectories: each agent's episode on each of the 4 tasks
        reference=str(tmp_path / "passkt" / "episodes.jsonl"),
        budget=11,  # level 10: routes of 10 turns, so the expert has one turn to spare
        min_value_gap=0.5,
        workers=1,
        resamples=200,
    )
    summary = run_probe(config, tmp_path / "probe", progress=False, plots=False).summary
    states = _states(tmp_path / "probe")
    sources = {r["source"].split("#")[0] for r in states}
    assert sources == set(agents)  # every agent's own episodes gave states
    kept = [r for r in states if r["discriminating"]]
    assert 0 < len(kept) < len(states)  # the filter rejects some states and keeps others
    values = {name: summary.agents[name].step_value.mean for name in agents}
    assert values["expert"] == 1.0 and values["random"] < values["expert"]
    assert len(set(values.values())) >= 2  # not saturated: the metric is not one value for every agent


def test_state_ids_do_not_depend_on_where_the_run_directory_lives(tmp_path: Path) -> None:
    """A study copied elsewhere names its hf: agents by other absolute paths; its probe states stay the same."""
    import json

    from agentgym_budget.eval.probes.references import logged_trajectories

    def log(root: Path) -> Path:
        path = root / "study" / "passkt" / "episodes.jsonl"
        path.parent.mkdir(parents=True)
        record = {"env_id": COIN.env_id, "env_kwargs": dict(COIN.kwargs), "split": COIN.split, "task_id": "t1",
                  "seed": 5, "budget": 4, "sample": 0, "actions": ["go east"]}  # fmt: skip
        agents = [f"hf:{root / 'study' / name / 'final'}" for name in ("sft", "fixed")] + ["expert"]
        path.write_text("".join(json.dumps({**record, "agent": agent}) + "\n" for agent in agents))
        return path

    here, there = logged_trajectories(log(tmp_path / "a"), COIN), logged_trajectories(log(tmp_path / "b"), COIN)
    assert [t.state_id(1) for t in here] == [t.state_id(1) for t in there]
    assert {t.source for t in here} == {"hf:../fixed/final#s0", "hf:../sft/final#s0", "expert#s0"}
