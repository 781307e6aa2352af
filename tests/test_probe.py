"""Single-step probes: expert agreement, probe states and priming, runs, resume, the noisy-expert contrast."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentgym_budget.agents import NoisyExpertNoRecover
from agentgym_budget.agents.openai_chat import OpenAIChatAgent
from agentgym_budget.cli.main import main
from agentgym_budget.core.env import TextEnv
from agentgym_budget.errors import DataError, InvalidOptionError, RunConfigError
from agentgym_budget.eval.passkt.config import PassKTConfig
from agentgym_budget.eval.passkt.plan import run_passkt
from agentgym_budget.eval.probes.judge import StateJudge, is_optimal
from agentgym_budget.eval.probes.plan import ProbeConfig, probe_key, run_probe
from agentgym_budget.eval.probes.references import choose_depths, expert_trajectories, logged_trajectories
from agentgym_budget.eval.probes.states import HistoryTurn, prime_agent, walk
from agentgym_budget.runner.rollout import EnvRef
from agentgym_budget.runner.store import read_jsonl
from tests.chat_server import ScriptedChatServer, first_admissible

COIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=110")
COIN_CHAIN = EnvRef.parse("TextWorld-CoinCollector-v0", "level=10")
COOKING = EnvRef.parse("TextWorld-Cooking-v0", "difficulty=3")
WEBSHOP = EnvRef.parse("WebShop-1k-v0", split="test")
NOISY = ("noisy-expert-recover", "noisy-expert-norecover")
KEYS = {"expert_plan", "expert_action"}
VOLATILE = ("elapsed_s",)


def _points(ref: EnvRef, task: int, depths: list[int]) -> tuple[object, list]:
    env = ref.make(KEYS, snapshots=True, max_turns=100)
    trajectory = expert_trajectories([ref.task_ids()[task]], seed=0)[0]
    return env, walk(env, trajectory, lambda length: depths)


# ------------------------------------------------------------------ judging
def test_expert_agreement_credits_ties_and_tells_wasted_turns_from_errors() -> None:
    env, points = _points(COOKING, 0, [0, 2])
    start, late = points
    judge = StateJudge(env, start)
    expert = judge.outcome(start.plan[0])
    tie = judge.outcome("take knife from table")  # another order of the same recipe
    wasted = judge.outcome("look")
    assert expert.optimal and not expert.error
    assert tie.action != start.plan[0] and tie.optimal and tie.plan_after == tie.plan_before - 1
    assert not wasted.optimal and not wasted.error and wasted.plan_after == wasted.plan_before
    fatal = StateJudge(env, late).outcome("eat carrot")  # the recipe needs it: the game is lost
    assert fatal.lost and fatal.error and not fatal.optimal and fatal.plan_after is None
    env.close()
    env, (point,) = _points(COIN, 0, [3])
    judge = StateJudge(env, point)
    moves = [a for a in point.info["admissible_actions"] if a.startswith("go ") and a != point.plan[0]]
    detour = judge.outcome(moves[0])
    assert detour.error and not detour.optimal and detour.plan_after == detour.plan_before + 1
    assert is_optimal("take coin", {"expert_plan": ["go east"]}, {"won": True})  # winning is always optimal
    env.close()


def test_probe_states_are_snapshotted_once_and_restored_without_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    resets = []
    original_reset = TextEnv.reset

    def counting_reset(self: TextEnv, **kwargs: object) -> object:
        resets.append(kwargs)
        return original_reset(self, **kwargs)

    monkeypatch.setattr(TextEnv, "reset", counting_reset)
    env, points = _points(COIN, 1, [0, 4, 7, 100])
    assert [p.depth for p in points] == [0, 4, 7] and len(resets) == 1
    length = points[0].length
    assert [len(p.history) for p in points] == [0, 4, 7] and length == len(points[0].plan)
    judge = StateJudge(env, points[1])
    for action in points[1].info["admissible_actions"]:
        judge.outcome(action)
    env.restore(points[2].snapshot)
    *_, info = env.step(points[2].plan[0])
    assert len(resets) == 1, "judging and restoring must not reset (replay) the env"
    assert len(info["expert_plan"]) == len(points[2].plan) - 1
    assert choose_depths(10, 3, None, seed=4, key="t") == choose_depths(10, 3, None, seed=4, key="t")
    assert set(choose_depths(10, 3, None, seed=4, key="t")) < set(choose_depths(10, 6, None, seed=4, key="t"))
    env.close()


def test_priming_tells_agents_the_reference_prefix() -> None:
    env, (point,) = _points(COIN, 2, [5])
    primed, unprimed = NoisyExpertNoRecover(eps=0.0), NoisyExpertNoRecover(eps=0.0)
    asyncio.run(prime_agent(primed, point.start, point.history, seed=0, budget=None, show_budget=False))
    asyncio.run(prime_agent(unprimed, point.start, (), seed=0, budget=None, show_budget=False))
    assert primed.act(point.observation, point.info) == point.plan[0]
    assert unprimed.act(point.observation, point.info) == point.history[0].action  # its plan is stale
    chat = OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1", history=3)
    asyncio.run(prime_agent(chat, point.start, point.history, seed=0, budget=None, show_budget=False))
    messages = chat.messages(point.observation, point.info)
    assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * 3, "user"]
    assert messages[-2]["content"].endswith(point.history[-1].action)
    env.close()


# ------------------------------------------------------------------ runs
@pytest.mark.slow
def test_the_noisy_experts_have_the_same_single_step_accuracy(tmp_path: Path) -> None:
    config = ProbeConfig((COIN,), NOISY, states=8, samples=4, workers=1, resamples=500)
    run = run_probe(config, tmp_path, progress=False, plots=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    recover, stale = (summary["agents"][spec.name] for spec in config.specs)
    assert 0.5 < recover["step_accuracy"] < 0.95, "the agents must err for the comparison to mean something"
    assert recover["step_accuracy"] == pytest.approx(stale["step_accuracy"])
    assert recover["step_value"] == pytest.approx(stale["step_value"])
    (comparison,) = summary["comparisons"]
    low, high = comparison["step_accuracy_diff"]["ci"]
    assert low <= 0 <= high and not comparison["step_accuracy_significant"]
    assert run.probed == 2 * 8 * 4 == len(read_jsonl(tmp_path / "probes.jsonl"))
    for record in read_jsonl(tmp_path / "probes.jsonl"):
        shorter = record["plan_length_after"] is not None and 0 < record["plan_length_after"] < record["plan_length"]
        assert record["optimal"] == (record["action"] == record["expert_action"] or record["won_now"] or shorter)
        assert record["turns_left"] == record["budget"] - record["depth"] and record["continuation"] == "expert"


@pytest.mark.slow
def test_the_agents_own_continuation_separates_them(tmp_path: Path) -> None:
    """With itself as continuation (and slack to recover), the stale planner's actions are worth less."""
    config = ProbeConfig((COIN,), NOISY, states=8, samples=4, slack=10, continuation="self", workers=1, resamples=500)
    summary = run_probe(config, tmp_path, progress=False, plots=False).summary
    recover, stale = (summary.agents[spec.name] for spec in config.specs)
    assert recover.step_accuracy.mean == stale.step_accuracy.mean
    (comparison,) = summary.comparisons
    assert comparison.value.mean > 0.2 and comparison.value.significant


@pytest.mark.slow
def test_expert_and_random_on_two_families(tmp_path: Path) -> None:
    """Family-agnostic: TextWorld and WebShop in one run, reported by family, with the process signal."""
    config = ProbeConfig((COIN_CHAIN, WEBSHOP), ("expert", "random"), states=2, samples=2, workers=1, resamples=200)
    summary = run_probe(config, tmp_path, progress=False).summary
    expert, random_agent = summary.agents["expert"], summary.agents["random"]
    assert expert.step_accuracy.mean == 1.0 and expert.step_value.mean == 1.0
    assert set(expert.by_family) == {"textworld", "webshop"} == set(summary.process_signal)
    assert random_agent.step_accuracy.mean < 1.0
    assert (tmp_path / "accuracy_by_depth.png").stat().st_size > 1000
    rows = (tmp_path / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("agent,family,depth,states,step_accuracy") and any(",webshop,all," in r for r in rows)


@pytest.mark.slow
def test_rerun_resumes_extends_and_refuses_other_settings(tmp_path: Path) -> None:
    base = {"states": 2, "samples": 2, "workers": 1, "resamples": 100}
    first = run_probe(ProbeConfig((COIN_CHAIN,), NOISY, **base), tmp_path, progress=False, plots=False)
    again = run_probe(ProbeConfig((COIN_CHAIN,), NOISY, **base), tmp_path, progress=False, plots=False)
    assert (first.probed, again.probed, again.reused) == (8, 0, 8)
    wider = run_probe(
        ProbeConfig((COIN_CHAIN,), NOISY, **{**base, "states": 3, "samples": 3}), tmp_path, progress=False, plots=False
    )
    records = read_jsonl(tmp_path / "probes.jsonl")
    assert (wider.probed, wider.reused) == (2 * 3 * 3 - 8, 8)
    assert len(records) == len({probe_key(r) for r in records}) == 18
    with pytest.raises(RunConfigError, match=r"continuation: 'expert' -> 'self'"):
        run_probe(ProbeConfig((COIN_CHAIN,), NOISY, continuation="self", **base), tmp_path, progress=False)


@pytest.mark.slow
def test_serial_and_parallel_runs_give_identical_records(tmp_path: Path) -> None:
    config = {"states": 3, "samples": 2, "resamples": 100}
    run_probe(ProbeConfig((COIN,), NOISY, workers=1, **config), tmp_path / "a", progress=False, plots=False)
    run_probe(ProbeConfig((COIN,), NOISY, workers=2, **config), tmp_path / "b", progress=False, plots=False)
    serial, parallel = (
        sorted(read_jsonl(tmp_path / d / "probes.jsonl"), key=lambda r: repr(probe_key(r))) for d in "ab"
    )
    assert serial == parallel


@pytest.mark.slow
def test_states_from_logged_episodes_and_a_chat_agent(tmp_path: Path) -> None:
    """Reference = an agent's passkt episodes; the chat agent is primed with that prefix (history in its prompt)."""
    passkt = PassKTConfig(COIN_CHAIN, ["noisy-expert-recover:eps=0.5"], ks=(1,), budgets=(12,), samples=1, tasks=2)
    run_passkt(passkt, tmp_path / "passkt", progress=False, plots=False)
    log = tmp_path / "passkt" / "episodes.jsonl"
    trajectories = logged_trajectories(log, COIN_CHAIN)
    assert [t.source for t in trajectories] == ["noisy-expert-recover:eps=0.5#s0"] * 2
    with ScriptedChatServer(first_admissible) as server:
        config = ProbeConfig(
            (COIN_CHAIN,),
            (f"openai:scripted:base_url={server.base_url},history=20", "expert"),
            states=2,
            samples=1,
            depths=(3,),
            reference=str(log),
            workers=1,
            resamples=100,
        )
        run_probe(config, tmp_path / "probe", progress=False, plots=False)
        requests = list(server.requests)
    records = read_jsonl(tmp_path / "probe" / "probes.jsonl")
    assert {r["source"] for r in records} == {trajectories[0].source} and {r["depth"] for r in records} == {3}
    assert len(requests) == 2
    for _, body in requests:
        messages = body["messages"]
        assert [m["role"] for m in messages][-2:] == ["assistant", "user"] and len(messages) == 1 + 2 * 3 + 1
    with pytest.raises(DataError, match="no logged episode"):
        logged_trajectories(log, COIN)
    with pytest.raises(InvalidOptionError, match="distinct agents"):
        ProbeConfig((COIN,), ("random", "random"))


@pytest.mark.slow
def test_cli_probe_writes_per_agent_accuracy_and_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "probe"
    args = ["probe", "--env", "TextWorld-CoinCollector-v0", "--env-args", "level=10", "--agent", "expert"]
    args += ["--agent", "random", "--states", "2", "--m", "2", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "step accuracy" in printed and "expert  minus  random" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["agents"]) == {"expert", "random"}
    assert all({"step_accuracy", "step_value"} <= set(a) for a in summary["agents"].values())
    assert {"probes.jsonl", "run.json", "summary.json", "summary.csv", "accuracy_by_depth.png"} <= {
        p.name for p in out.iterdir()
    }


def test_history_turns_keep_the_info_the_agent_would_see() -> None:
    turn = HistoryTurn("A hall.", {"expert_plan": ["go east"], "turns_left": 3}, "go east")
    seen = []

    class Memory:
        def reset(self, goal: str, observation: str, info: dict, *, seed: int, budget: int | None = None) -> None:
            seen.append(("reset", sorted(info)))

        def observe(self, observation: str, info: dict, action: str) -> None:
            seen.append((action, sorted(info)))

    asyncio.run(
        prime_agent(
            Memory(), ("Start.", {"goal": "g"}), [turn], seed=0, budget=5, show_budget=False, hidden={"expert_plan"}
        )
    )
    assert seen == [("reset", ["goal"]), ("go east", [])]


def test_a_reference_log_is_pinned_relative_to_the_run_so_a_moved_run_resumes(tmp_path):
    from agentgym_budget.runner.store import pin_settings

    def pin(study, reference):
        return pin_settings(study / "probe" / "run.json", {"reference": str(reference), "seed": 0},
                            ["reference", "seed"], keep="the reference", files=("reference",))  # fmt: skip

    first = tmp_path / "first"
    (first / "passkt").mkdir(parents=True)
    (first / "passkt" / "episodes.jsonl").write_text("")
    pin(first, first / "passkt" / "episodes.jsonl")
    assert json.loads((first / "probe" / "run.json").read_text())["reference"] == "../passkt/episodes.jsonl"
    moved = first.rename(tmp_path / "moved")
    pin(moved, moved / "passkt" / "episodes.jsonl")  # moved together: the same run
    (moved / "other.jsonl").write_text("")
    with pytest.raises(RunConfigError, match="reference"):
        pin(moved, moved / "other.jsonl")
    pin(tmp_path, "expert")  # not a file: kept as given
    assert json.loads((tmp_path / "probe" / "run.json").read_text())["reference"] == "expert"
