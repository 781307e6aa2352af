"""Recovery probes: forced wrong actions, continuations from forks, natural recovery, the noisy-expert contrast."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path

import pytest

from agentgym_budget.cli.main import main
from agentgym_budget.core.env import TextEnv
from agentgym_budget.errors import EpisodeOverError, InvalidBudgetError
from agentgym_budget.eval.probes.judge import try_action
from agentgym_budget.eval.probes.references import expert_trajectories
from agentgym_budget.eval.probes.states import walk
from agentgym_budget.eval.recovery.config import RecoveryConfig
from agentgym_budget.eval.recovery.natural import analyze_trace
from agentgym_budget.eval.recovery.plan import recovery_key, run_recovery
from agentgym_budget.eval.recovery.summary import recovered_at
from agentgym_budget.registration import make
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl
from agentgym_budget.wrappers import TurnBudget

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=110")
COIN_CHAIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=10")
WEBSHOP = EnvRef.parse("WebShop-1k-v0", split="test")
NOISY = ("noisy-expert-recover", "noisy-expert-norecover")


def _episodes(path: Path, kind: str) -> list[dict]:
    return [r for r in read_jsonl(path / "episodes.jsonl") if r["kind"] == kind]


@pytest.mark.slow
def test_the_recovering_noisy_expert_recovers_more(tmp_path: Path) -> None:
    config = RecoveryConfig(
        (COIN,), NOISY, states=6, ks=(0, 1), budgets=(10, 20), samples=3, natural=2, workers=1, resamples=500
    )
    run = run_recovery(config, tmp_path, progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    recover, stale = (summary["agents"][spec.name] for spec in config.specs)
    assert recover["recovery_rate"] > 0.6 > 0.3 > stale["recovery_rate"]
    (comparison,) = summary["comparisons"]
    assert comparison["significant"] and comparison["recovery_rate_diff"]["ci"][0] > 0
    assert recover["control_success"] >= recover["recovery_rate"]
    natural = summary["natural_recovery"]
    assert (
        natural[config.specs[0].name]["success_after_error"]["mean"]
        > natural[config.specs[1].name]["success_after_error"]["mean"]
    )
    assert set(summary["process_signal"]) == {"textworld"}
    assert run.played == 2 * 6 * 2 * 3 + 2 * 6 * 2 == len(read_jsonl(tmp_path / "episodes.jsonl"))
    assert (tmp_path / "recovery_vs_budget.png").stat().st_size > 1000
    again = run_recovery(config, tmp_path, progress=False, plots=False)
    assert (again.played, again.reused) == (0, run.played)


@pytest.mark.slow
def test_perturbations_are_shared_nested_and_really_wrong(tmp_path: Path) -> None:
    config = RecoveryConfig((COIN,), NOISY, states=4, ks=(1, 2, 3), budgets=(8,), samples=2, natural=0, workers=1)
    run_recovery(config, tmp_path, progress=False, plots=False)
    forced: dict[tuple[str, int], set[tuple[str, ...]]] = defaultdict(set)
    for record in _episodes(tmp_path, "perturbed"):
        forced[(record["state_id"], record["k"])].add(tuple(record["forced"]))
        assert len(record["forced"]) == record["k"] and record["budget"] == 8 and record["turns"] <= 8
    assert all(len(sequences) == 1 for sequences in forced.values()), "every agent and sample gets the same actions"
    states = {state for state, _ in forced}
    for state in states:
        sequences = [next(iter(forced[(state, k)])) for k in (1, 2, 3) if (state, k) in forced]
        assert all(longer[: len(shorter)] == shorter for shorter, longer in itertools.pairwise(sequences))
    # Replay the perturbations independently: each forced action is admissible, not optimal, keeps the task solvable.
    env = COIN.make({"expert_plan", "expert_action"}, snapshots=True, max_turns=500)
    records = {r["state_id"]: r for r in _episodes(tmp_path, "perturbed") if r["k"] == 3}
    for trajectory in expert_trajectories(COIN.task_ids()[:4], seed=0):
        (point,) = walk(env, trajectory, lambda length, t=trajectory: config.chosen_depths(t, length))
        snapshot, info = point.snapshot, point.info
        for action in records[point.state_id]["forced"]:
            assert action in info["admissible_actions"]
            outcome = try_action(env, snapshot, info, action)
            assert not outcome.optimal and not outcome.ended and outcome.plan_after is not None
            snapshot, info = outcome.snapshot, outcome.info
    env.close()


@pytest.mark.slow
def test_prefix_reading_equals_one_episode_per_budget_for_budget_blind_agents(tmp_path: Path) -> None:
    common = {"states": 3, "ks": (0, 1), "budgets": (4, 9), "samples": 2, "natural": 0, "workers": 1}
    run_recovery(RecoveryConfig((COIN_CHAIN,), NOISY, **common), tmp_path / "prefix", progress=False, plots=False)
    run_recovery(
        RecoveryConfig((COIN_CHAIN,), NOISY, show_budget=True, **common),
        tmp_path / "shown",
        progress=False,
        plots=False,
    )
    outcomes = {}
    for name, mode in (("prefix", "prefix"), ("shown", "independent")):
        table = {}
        for record in _episodes(tmp_path / name, "perturbed"):
            for budget in (4, 9):
                value = recovered_at(record, budget, mode)
                if value is not None:
                    table[(record["agent"], record["state_id"], record["k"], record["sample"], budget)] = value
        outcomes[name] = table
    assert outcomes["prefix"] == outcomes["shown"] and len(outcomes["prefix"]) == 2 * 3 * 2 * 2 * 2


@pytest.mark.slow
def test_perturbed_episodes_continue_from_forks_without_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resets = []
    original_reset = TextEnv.reset

    def counting_reset(self: TextEnv, **kwargs: object) -> object:
        resets.append(kwargs.get("options"))
        return original_reset(self, **kwargs)

    monkeypatch.setattr(TextEnv, "reset", counting_reset)
    config = RecoveryConfig((COIN_CHAIN,), NOISY, states=3, ks=(0, 1, 2), budgets=(6,), samples=2, natural=0, workers=1)
    run = run_recovery(config, tmp_path, progress=False, plots=False)
    assert run.played == 2 * 3 * 3 * 2
    assert len(resets) == 3, "one reset per reference trajectory; every continuation starts from a restored snapshot"


@pytest.mark.slow
def test_natural_recovery_from_live_traces_and_from_replayed_logs(tmp_path: Path) -> None:
    config = RecoveryConfig((COIN_CHAIN,), NOISY, states=2, ks=(0,), budgets=(3,), samples=1, natural=2, workers=1)
    run_recovery(config, tmp_path / "first", progress=False, plots=False)
    log = tmp_path / "first" / "episodes.jsonl"
    second = RecoveryConfig(
        (COIN_CHAIN,), NOISY, states=2, ks=(0,), budgets=(3,), samples=1, natural=0, episodes=(str(log),), workers=1
    )
    summary = run_recovery(second, tmp_path / "second", progress=False, plots=False).summary
    live = {(r["agent"], r["task_id"], r["sample"]): r for r in _episodes(tmp_path / "first", "natural")}
    traced = {(r["agent"], r["task_id"], r["sample"]): r for r in _episodes(tmp_path / "second", "traced")}
    assert set(live) == set(traced) and len(live) == 2 * 2 * 2
    for key, record in live.items():
        assert traced[key]["plan_lengths"] == record["plan_lengths"]
        assert traced[key]["progress_trace"] == record["progress_trace"]
        assert len(record["plan_lengths"]) == record["turns"] + 1
    assert summary.traced and not summary.natural
    lost = analyze_trace([3, 2, None], [0.0, 0.0, 0.0], won=False)
    assert lost == {"error_turn": 1, "back_on_track_turn": None, "recovery_turns": None, "won": False}
    wasted = analyze_trace([2, 2, 1, 0], [0.0, 0.0, 0.0, 1.0], won=True)
    assert wasted["error_turn"] is None  # a wasted turn is not an error
    worse = analyze_trace([2, 2, 1, 1], [0.5, 0.25, 0.25, 0.5], won=False)
    assert worse["error_turn"] == 0 and worse["back_on_track_turn"] == 2  # progress fell, then came back


def test_webshop_smoke(tmp_path: Path) -> None:
    config = RecoveryConfig(
        (WEBSHOP,), ("expert", "random"), states=2, ks=(0, 1), budgets=(8,), samples=1, natural=1, workers=1
    )
    summary = run_recovery(config, tmp_path, progress=False, plots=False).summary
    assert summary.agents["expert"].recovery_rate.mean == 1.0 == summary.agents["expert"].control.mean
    assert summary.agents["random"].recovery_rate.mean <= summary.agents["expert"].recovery_rate.mean
    assert set(summary.process_signal) == {"webshop"}
    assert summary.natural["expert"]["success_rate"]["mean"] == 1.0


@pytest.mark.slow
def test_cli_recovery_writes_per_agent_recovery_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "recovery"
    args = ["recovery", "--env", "TextWorld-CoinCollector-v0", "--env-args", "level=10", "--states", "2", "--k", "0,1"]
    args += ["--budgets", "5,10", "--n", "1", "--natural", "1", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "recovery rate (R=10)" in printed and "Natural recovery" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert all("recovery_rate" in agent for agent in summary["agents"].values()) and len(summary["agents"]) == 2
    assert {"episodes.jsonl", "run.json", "summary.json", "summary.csv", "recovery_vs_budget.png"} <= {
        p.name for p in out.iterdir()
    }
    records = read_jsonl(out / "episodes.jsonl")
    assert len(records) == len({recovery_key(r) for r in records})


def test_set_episode_budget_refuses_what_it_cannot_do() -> None:
    env = TurnBudget(make("TextWorld-CoinCollector-v0", level=10), max_turns=5)
    with pytest.raises(EpisodeOverError):
        env.set_episode_budget(3)
    env.reset(seed=0, options={"task": 0})
    env.step("look")
    env.step("look")
    with pytest.raises(InvalidBudgetError, match="leaves no turn"):
        env.set_episode_budget(2)
    env.set_episode_budget(3)
    assert env.step("look")[3] and env.turns_left == 0
    env.close()
