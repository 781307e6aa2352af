"""The score:MODEL agent: shared-prompt scoring equals one forward per candidate, the prompt only grows, choices are
seeded and independent of batching, and hostile input gets a typed error or a bounded behaviour.

Quick tests use the tiny random checkpoint (session fixture ``checkpoint``); SmolLM2 is in the slow ones.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="the score: agent needs the trl extra")

import torch

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.scoring.agent import ScoreAgent, candidate_commands, scoring_model
from agentgym_budget.agents.scoring.prompt import EpisodePrompt, ScoringFormat
from agentgym_budget.agents.scoring.scorer import PromptState, ScoreRequest, score
from agentgym_budget.cli.main import main
from agentgym_budget.errors import AgentError, DataError, InvalidOptionError, ModelPathError
from agentgym_budget.runner.rollout import EnvRef, play_episode
from tests.hf_support import ENV

CANDIDATES = ["go east", "take coin", "look", "", "open the wooden door"]


def _uncached(model, prompt, candidate):
    """Each token's log-prob from one forward pass over the prompt and the candidate (no cache, no batch)."""
    with torch.no_grad():
        logits = model(torch.tensor([[*prompt, *candidate]])).logits[0].double()
    logprobs = torch.log_softmax(logits, dim=-1)
    return [float(logprobs[len(prompt) - 1 + j, token]) for j, token in enumerate(candidate)]


def _prompt_and_candidates(checkpoint: Path):
    scoring = scoring_model(checkpoint)
    prompt = EpisodePrompt(scoring.codec, "You are in a hall.\n\nAdmissible actions: go east | take coin", 4096)
    return scoring, prompt, [scoring.codec.command(c) for c in CANDIDATES]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_shared_prompt_scores_equal_one_forward_per_candidate(checkpoint: Path, dtype) -> None:
    from transformers import AutoModelForCausalLM

    _, prompt, candidates = _prompt_and_candidates(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint).to(dtype).eval()
    state = PromptState()
    turns = []
    for command, text in [(None, None), ("go east", "A coin is here."), ("look", "Still here.\n\tbell:\x07")]:
        if command is not None:
            prompt.add_turn(command, text)
        ids = tuple(prompt.ids)
        # a pass of at most 2 candidates: the first two with the prompt, the others in further passes
        [scored, again] = score(
            model, [ScoreRequest(ids, tuple(candidates), state), ScoreRequest(ids, tuple(candidates))], pad_id=0,
            batch_size=2,
        )  # fmt: skip
        assert scored == again
        turns.append((scored.prompt_tokens, scored.cached_tokens))
        tolerance = 1e-5 if dtype == torch.float32 else 1e-9
        for got, candidate in zip(scored.token_logprobs, candidates, strict=True):
            want = _uncached(model, ids, candidate)
            assert len(got) == len(candidate)
            assert abs(sum(got) / len(got) - sum(want) / len(want)) < tolerance
            assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 50 * tolerance
    # append-only: each turn reads only what was added since the last one
    assert turns[0][1] == 0 and turns[1][1] == turns[0][0] and turns[2][1] == turns[1][0]


def test_prompts_of_different_lengths_share_a_pass(checkpoint: Path) -> None:
    scoring, prompt, candidates = _prompt_and_candidates(checkpoint)
    short = tuple(prompt.ids)
    prompt.add_turn("go east", "A long corridor. " * 20)
    long = tuple(prompt.ids)
    state = PromptState()
    score(scoring.model, [ScoreRequest(short, tuple(candidates[:1]), state)], pad_id=scoring.pad_id)
    together = score(
        scoring.model,
        [ScoreRequest(long, tuple(candidates), state), ScoreRequest(short, tuple(candidates[1:3]))],
        pad_id=scoring.pad_id,
    )
    alone = [score(scoring.model, [ScoreRequest(ids, tuple(c))], pad_id=scoring.pad_id)[0]
             for ids, c in ((long, candidates), (short, candidates[1:3]))]  # fmt: skip
    assert together[0].cached_tokens == len(short)
    for a, b in zip(together, alone, strict=True):
        for x, y in zip(a.token_logprobs, b.token_logprobs, strict=True):
            assert max(abs(p - q) for p, q in zip(x, y, strict=True)) < 1e-5


def _play(spec: str, episodes: int = 4, budget: int = 3, together: bool = True):
    """``episodes`` episodes on the first two tasks (seeds 7, 8, ...), played at once or one after another."""
    ref = EnvRef.parse(*ENV)
    ids = [ref.task_ids()[i % 2] for i in range(episodes)]

    async def run():
        envs = [ref.make() for _ in ids]
        agents = [parse_agent(spec).build() for _ in ids]
        plays = [
            play_episode(env, agent, task_id=task, budget=budget, seed=7 + i)
            for i, (env, agent, task) in enumerate(zip(envs, agents, ids, strict=True))
        ]
        results = await asyncio.gather(*plays) if together else [await p for p in plays]
        for env in envs:
            env.close()
        return results

    return asyncio.run(run())


def test_choices_repeat_and_do_not_depend_on_batching_or_threads(checkpoint: Path) -> None:
    greedy = _play(f"score:{checkpoint}:temperature=0")
    assert [r.actions for r in greedy] == [r.actions for r in _play(f"score:{checkpoint}:temperature=0")]
    sampled = _play(f"score:{checkpoint}:temperature=2,epsilon=0.6")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        alone = _play(f"score:{checkpoint}:temperature=2,epsilon=0.6,batch_size=1", together=False)
    finally:
        torch.set_num_threads(threads)
    assert [r.actions for r in sampled] == [r.actions for r in alone]
    assert all(r.agent_stats["turns"] == r.turns for r in sampled)
    assert all(r.agent_stats["cached_tokens"] > 0 for r in sampled if r.turns > 1)
    assert len({a for r in sampled for a in r.actions}) > 1  # it samples


def test_the_agent_exposes_its_exact_distribution(checkpoint: Path) -> None:
    agent = ScoreAgent(str(checkpoint), temperature=1.0, normalise="sum")
    info = {"admissible_actions": ["go east", "look", "go east"]}

    async def turn():
        await agent.reset("Take the coin.", "A hall.", info, seed=0)
        return await agent.act("A hall.", info)

    action = asyncio.run(turn())
    distribution = agent.action_distribution()
    assert list(distribution) == ["go east", "look"] and action in distribution
    assert abs(sum(distribution.values()) - 1) < 1e-12 and min(distribution.values()) > 0


def test_spec_names_and_bad_values(checkpoint: Path, tmp_path: Path) -> None:
    spec = parse_agent(f"score:{checkpoint}:temperature=0,batch_size=4,threads=2")
    assert spec.name == f"score:{checkpoint}:temperature=0.0"
    agent = spec.build()
    assert isinstance(agent, ScoreAgent) and agent.batch_size == 4 and agent.normalise == "word"
    with pytest.raises(InvalidOptionError, match="normalise='tokens' cannot be used: normalise='tokens' is unknown"):
        parse_agent(f"score:{checkpoint}:normalise=tokens")
    with pytest.raises(InvalidOptionError, match="epsilon=2 is out of range"):
        parse_agent(f"score:{checkpoint}:epsilon=2")
    with pytest.raises(ModelPathError, match="No model directory"):
        parse_agent(f"score:{tmp_path / 'none'}")
    (tmp_path / "agentgym_scoring.json").write_text(json.dumps({"show_actions": "yes"}))
    with pytest.raises(DataError, match="Cannot read the scoring format"):
        ScoringFormat.load(tmp_path)


def _act(agent: ScoreAgent, actions: list[str], goal: str = "Take the coin.", observation: str = "A hall."):
    info = {"admissible_actions": actions}

    async def turn():
        await agent.reset(goal, observation, info, seed=0)
        return await agent.act(observation, info)

    return asyncio.run(turn())


def test_hostile_candidates_get_an_error_or_a_bounded_behaviour(checkpoint: Path) -> None:
    agent = ScoreAgent(str(checkpoint), temperature=0)
    with pytest.raises(
        AgentError, match=r"lists none\. Families that list them: TextWorld, TWX, ALFWorld, BabyAI and ScienceWorld"
    ):
        _act(agent, [])
    many = [f"take coin {i}" for i in range(10_000)]
    with pytest.raises(AgentError, match="10000 candidates in this state, more than max_candidates=1000"):
        _act(agent, many)
    long = "go " + "north " * 5000
    odd = ["\x00\x1b[31mred\u202e", "caf\u00e9 \U0001f600", "go \ud800east", long]
    assert _act(agent, odd) in odd
    assert agent.stats()["candidates"] == 4
    codec = agent.scoring.codec
    assert len(codec.command(long)) == 65  # the first 64 tokens and the end of the turn


@pytest.mark.slow
def test_many_candidates_are_scored_in_bounded_passes(checkpoint: Path) -> None:
    many = [f"take coin {i}" for i in range(1_000)]
    wide = ScoreAgent(str(checkpoint), temperature=0, max_candidates=10_000, batch_size=100)
    assert _act(wide, many) in many  # ten passes of 100 candidates; the prompt listing them all is cut to fit
    assert wide.stats()["context_cuts"] == 1


def test_a_prompt_past_the_context_drops_its_oldest_turns(checkpoint: Path) -> None:
    codec = scoring_model(checkpoint).codec
    prompt = EpisodePrompt(codec, "Goal: take the coin. A hall.", context=200)
    head = len(prompt.ids)
    for turn in range(6):
        prompt.add_turn("go east", f"Room {turn}. " + "It is dark. " * 5)
    assert prompt.fit(room=20) and len(prompt.ids) <= 180 and prompt.ids[:head] == prompt.head
    huge = EpisodePrompt(codec, "word " * 1000, context=200)
    assert huge.fit(room=20) and len(huge.ids) == 180 and huge.cuts == 1


def test_webshop_search_candidates_come_from_the_instruction() -> None:
    goal = "i want a pair of blue running shoes that are lightweight, and price lower than 60.00 dollars"
    info = {"admissible_actions": ["search[<keywords>]", "click[back to search]"]}
    assert candidate_commands(info, goal) == [
        "search[i want a pair of blue running shoes that are lightweight]",
        "search[i want a pair of blue running shoes]",
        "click[back to search]",
    ]
    with pytest.raises(AgentError, match="needs a query built from the goal"):
        candidate_commands(info, "")


def test_the_cli_refuses_a_missing_model_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["passkt", "--agent", f"score:{tmp_path / 'nothing'}", "--out", str(tmp_path / "run")]) == 2
    assert "No model directory at" in capsys.readouterr().err and not (tmp_path / "run").exists()


@pytest.mark.slow
def test_probe_and_recovery_cli_play_a_scoring_agent(checkpoint: Path, tmp_path: Path) -> None:
    agent = f"score:{checkpoint}:temperature=0.5"
    common = ["--env", ENV[0], "--env-args", ENV[1], "--agent", agent, "--workers", "1", "--no-plots", "--no-progress"]
    assert main(["probe", *common, "--states", "2", "--m", "2", "--out", str(tmp_path / "probe")]) == 0
    probes = [json.loads(line) for line in (tmp_path / "probe" / "probes.jsonl").read_text().splitlines()]
    assert probes and {r["agent"] for r in probes} == {agent}
    argv = ["recovery", *common, "--states", "1", "--k", "0,1", "--budgets", "2", "--n", "1", "--natural", "1"]
    assert main([*argv, "--out", str(tmp_path / "recovery")]) == 0
    lines = [json.loads(line) for f in (tmp_path / "recovery").glob("*.jsonl") for line in f.read_text().splitlines()]
    assert any(r.get("agent") == agent for r in lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "env_args"),
    [
        ("TextWorld-CoinCollector-v0", "level=3"),
        ("TWX-CoinCollector-v0", ""),
        ("ALFWorld-v0", ""),
        ("BabyAI-GoToRedBall-v0", ""),
    ],
)
def test_smollm2_plays_each_family_from_the_cli_and_repeats_greedy_runs(
    env: str, env_args: str, tmp_path: Path
) -> None:
    pytest.importorskip("gguf", reason="smollm2-135m needs the smollm2 extra")
    agent = "score:smollm2-135m:temperature=0,concurrency=2"
    argv = ["passkt", "--env", env, *(["--env-args", env_args] if env_args else []), "--agent", agent]
    argv += ["--k", "1", "--t", "3", "--n", "1", "--tasks", "2", "--workers", "1", "--no-plots", "--no-progress"]
    actions = []
    for run in ("a", "b"):
        assert main([*argv, "--out", str(tmp_path / run)]) == 0
        records = [json.loads(line) for line in (tmp_path / run / "episodes.jsonl").read_text().splitlines()]
        assert len(records) == 2 and all(r["agent_stats"]["turns"] == r["turns"] for r in records)
        actions.append(sorted((r["task_id"], r["actions"]) for r in records))
    assert actions[0] == actions[1]


@pytest.mark.slow
def test_smollm2_shared_prompt_scores_equal_one_forward_per_candidate() -> None:
    """In float32 within the noise of kernel choice (sdpa and eager attention alone differ by up to 7e-6 per token
    here): scores within 5e-5, the policy's probabilities within 1e-5 (float64 is exact: the tiny model's test)."""
    pytest.importorskip("gguf", reason="smollm2-135m needs the smollm2 extra")
    from agentgym_budget.agents.scoring.policy import candidate_scores, distribution

    scoring = scoring_model("smollm2-135m")
    model = scoring.model
    text = (
        "-= Kitchen =-\nThere is a coin here. Exits: east, north.\n\nAdmissible actions: go east | go north | take coin"
    )
    prompt = EpisodePrompt(scoring.codec, text, scoring.context)
    commands = ("go east", "go north", "take coin", "inventory")
    candidates = [scoring.codec.command(c) for c in commands]
    state = PromptState()
    for command, observation in [(None, None), ("go east", "-= Hall =-\nA hall. Exits: west.")]:
        if command is not None:
            prompt.add_turn(command, observation)
        ids = tuple(prompt.ids)
        [scored] = score(model, [ScoreRequest(ids, tuple(candidates), state)], pad_id=scoring.pad_id)
        wanted = [_uncached(model, ids, candidate) for candidate in candidates]
        got_scores, want_scores = (candidate_scores(v, commands, "mean") for v in (scored.token_logprobs, wanted))
        assert max(abs(a - b) for a, b in zip(got_scores, want_scores, strict=True)) < 5e-5
        got, want = (distribution(v, temperature=1.0) for v in (got_scores, want_scores))
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-5
    assert scored.cached_tokens > 0


def test_probes_report_the_exact_expected_accuracy_of_a_scoring_agent(checkpoint: Path, tmp_path: Path) -> None:
    from agentgym_budget.eval.probes.plan import ProbeConfig, run_probe

    agent = f"score:{checkpoint}:epsilon=0.1"
    config = ProbeConfig((EnvRef.parse(*ENV),), (agent, "random"), states=3, samples=2, workers=1, resamples=200)
    run = run_probe(config, tmp_path, progress=False, plots=False)
    records = [json.loads(line) for line in (tmp_path / "probes.jsonl").read_text().splitlines()]
    scored = [r for r in records if r["agent"] == agent]
    assert scored and all(0 <= r["p_optimal"] <= 1 and 0 <= r["p_error"] <= 1 for r in scored)
    assert not any("p_optimal" in r for r in records if r["agent"] == "random")
    # the same state gives the same exact value whatever action was sampled
    by_state = {}
    for r in scored:
        by_state.setdefault(r["state_id"], set()).add(r["p_optimal"])
    assert all(len(values) == 1 for values in by_state.values())
    summary = run.summary.to_json()["agents"]
    exact = sum(next(iter(v)) for v in by_state.values()) / len(by_state)
    assert summary[agent]["exact_step_accuracy"] == round(exact, 6) and "exact_step_accuracy" not in summary["random"]


def _vector_info(infos: dict, index: int) -> dict:
    """Sub-env ``index``'s info from a Gymnasium vector env's infos (arrays with ``_key`` masks)."""
    return {key: values[index] for key, values in infos.items() if not key.startswith("_") and infos[f"_{key}"][index]}


def test_agents_play_a_vector_env_together(checkpoint: Path) -> None:
    import gymnasium as gym

    envs = gym.make_vec(f"agentgym_budget/{ENV[0]}", num_envs=3, vectorization_mode="vector_entry_point",
                        max_turns=3, level=1, autoreset_mode="disabled")  # fmt: skip
    agents = [parse_agent(f"score:{checkpoint}:temperature=0").build() for _ in range(3)]

    async def play():
        observations, infos = envs.reset(seed=0, options={"task": [0, 1, 0]})
        for i, agent in enumerate(agents):
            info = _vector_info(infos, i)
            await agent.reset(info["goal"], observations[i], info, seed=i)
        done = [False] * 3
        while not all(done):
            actions = await asyncio.gather(*(agent.act(observations[i], _vector_info(infos, i))
                                             for i, agent in enumerate(agents) if not done[i]))  # fmt: skip
            live = iter(actions)
            step = tuple(next(live) if not done[i] else "look" for i in range(3))
            observations, _, terminated, truncated, infos = envs.step(step)
            done = [d or bool(t) or bool(u) for d, t, u in zip(done, terminated, truncated, strict=True)]
        return [agent.stats()["turns"] for agent in agents]

    try:
        turns = asyncio.run(play())
    finally:
        envs.close()
    assert all(1 <= t <= 3 for t in turns) and turns[0] == turns[2]  # same task, same greedy play


def test_ray_rollouts_continue_a_fork_with_a_scoring_agent(checkpoint: Path) -> None:
    from agentgym_budget.integrations.ray_rollouts import Continuation, ForkPoint, RolloutConfig, play_from

    config = RolloutConfig(ENV[0], env_kwargs=ENV[1], max_turns=3)
    env = config.make()
    observation, info = env.reset(seed=0, options={"task": config.env.task_ids()[0]})
    point = ForkPoint.take(env, observation, info)
    continuation = Continuation(agent=f"score:{checkpoint}:temperature=0", seed=3)
    first, again = play_from(env, point, continuation), play_from(env, point, continuation)
    env.close()
    assert first.actions and first.actions == again.actions


@pytest.mark.slow
def test_a_scoring_agent_plays_scienceworld_from_its_bounded_command_list(checkpoint: Path) -> None:
    """ScienceWorld lists its commands only when asked: the agent asks (``info_keys``), and chooses among them."""
    pytest.importorskip("scienceworld")
    from agentgym_budget.agents.base import required_info_keys

    agent = parse_agent(f"score:{checkpoint}:temperature=0").build()
    assert "admissible_actions" in agent.info_keys
    ref = EnvRef.parse("ScienceWorld-v0", "task=boil,max_admissible=8")
    env = ref.make(required_info_keys(agent))  # as the runners make it
    try:
        result = asyncio.run(play_episode(env, agent, task_id=ref.task_ids()[0], budget=3, seed=0))
        listed = env.unwrapped.reset(seed=0, options={"task": ref.task_ids()[0]})[1]
    finally:
        env.close()
    assert len(result.actions) == 3
    assert result.actions[0] in listed["admissible_actions"] and len(listed["admissible_actions"]) <= 8
