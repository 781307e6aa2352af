"""verl: the agentgym_budget agent loop against the real verl package, with a scripted server manager.

verl and trl need different transformers versions, so these tests run in their own environment (the
``verl`` extra; README "verl"). In an environment without verl the module is reported as skipped with
that reason, unless ``AGENTGYM_REQUIRE_VERL=1`` (the verl CI job), which turns a missing verl into a failure.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import pytest

if os.environ.get("AGENTGYM_REQUIRE_VERL") != "1":
    pytest.importorskip("verl", reason="needs the [verl] extra in its own venv (README: verl)")

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, DictConfigWrap, _agent_loop_registry

from agentgym_budget.errors import InvalidOptionError, UnknownEnvIdError
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.verl import AGENT_LOOP_CONFIG, AGENT_NAME, BudgetAgentLoop, register_agent_loop
from agentgym_budget.integrations.verl_data import verl_rows
from tests.verl_support import ScriptedServer, build_tokenizer, trainer_config

COIN = {"env_id": "TextWorld-CoinCollector-v0", "env_kwargs": "level=5"}
TWX_COIN = {"env_id": "TWX-CoinCollector-v0", "env_kwargs": "num_locations=3"}  # the route installs [verl,twx]
PROMPT = [{"role": "system", "content": "Play. Reply with: Action: <command>"}, {"role": "user", "content": ""}]


def _expert_plan(seed: int, env_row: dict = COIN) -> list[str]:
    env = SessionConfig(env_row["env_id"], env_kwargs=env_row["env_kwargs"]).ref.make_base({"expert_plan"})
    try:
        return list(env.reset(seed=seed)[1]["expert_plan"])
    finally:
        env.close()


def _loop(tokenizer: Any, server: ScriptedServer, response_length: int = 4096) -> Any:
    config = OmegaConf.create(
        {"actor_rollout_ref": {"rollout": {"prompt_length": 1024, "response_length": response_length}}, "data": {}}
    )

    async def build() -> Any:  # verl's loops capture the running event loop: build inside it
        return BudgetAgentLoop(
            trainer_config=DictConfigWrap(config),
            server_manager=server,
            tokenizer=tokenizer,
            processor=None,
            dataset_cls=None,
            data_config=DictConfigWrap(config.data),
            hf_model_type="qwen2",
        )

    return build


def _run(tokenizer: Any, server: ScriptedServer, extra_info: dict, *, response_length: int = 4096) -> AgentLoopOutput:
    async def main() -> AgentLoopOutput:
        loop = await _loop(tokenizer, server, response_length)()
        return await loop.run({"temperature": 1.0, "logprobs": True}, raw_prompt=PROMPT, extra_info=extra_info)

    return asyncio.run(main())


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer()


def _check_bookkeeping(output: AgentLoopOutput, tokenizer: Any, server: ScriptedServer) -> None:
    """Mask 1 = exactly the model's tokens with their log-probs; mask 0 = the env's text, log-prob 0."""
    pairs = list(zip(output.response_ids, output.response_mask, output.response_logprobs, strict=True))
    assert len(output.response_mask) == len(output.response_ids) == len(output.response_logprobs)
    assert [t for t, m, _ in pairs if m == 1] == [t for reply in server.replies for t in reply]
    assert [lp for _, m, lp in pairs if m == 1] == [lp for reply in server.logprobs for lp in reply]
    assert all(lp == 0.0 for _, m, lp in pairs if m == 0)
    env_text = tokenizer.decode([t for t, m, _ in pairs if m == 0], skip_special_tokens=True)
    for before, after, reply in zip(server.calls, server.calls[1:], server.replies, strict=False):
        observation = tokenizer.decode(after[len(before) + len(reply) :], skip_special_tokens=True).strip()
        assert observation and observation in env_text  # each observation lies in mask-0 spans
        assert observation not in tokenizer.decode(reply)


@pytest.mark.parametrize(("env_row", "budget"), [(COIN, 10), (TWX_COIN, 30)], ids=["textworld", "twx"])
def test_expert_replies_win(tokenizer: Any, env_row: dict, budget: int) -> None:
    plan = _expert_plan(0, env_row)
    server = ScriptedServer(tokenizer, [f"I go.\nAction: {command}" for command in plan])
    output = _run(tokenizer, server, {**env_row, "seed": 0, "max_turns": budget, "index": 3})
    fields = output.extra_fields
    assert fields["won"] and fields["terminated"] and not fields["truncated"] and not fields["cut_by_length"]
    assert (fields["env_turns"], fields["budget"], fields["admissible_rate"]) == (len(plan), budget, 1.0)
    assert output.reward_score == pytest.approx(fields["env_return"]) and output.reward_score > 0
    assert output.num_turns == 1 + 2 * len(plan) - 1  # prompt, replies and observations between them (no final one)
    assert len(server.calls) == len(plan)
    # each call's prompt is the previous call's prompt plus the reply and the observation, token for token
    for before, after, reply in zip(server.calls, server.calls[1:], server.replies, strict=False):
        assert after[: len(before) + len(reply)] == before + reply
    assert server.calls[0] == output.prompt_ids
    assert "Action: take coin" in tokenizer.decode(output.response_ids)
    _check_bookkeeping(output, tokenizer, server)


@pytest.mark.slow
def test_wrong_command_truncates_at_the_row_budget(tokenizer: Any) -> None:
    server = ScriptedServer(tokenizer, ["Action: dance wildly"] * 20)
    output = _run(tokenizer, server, {**COIN, "seed": 1, "max_turns": 4})
    fields = output.extra_fields
    assert fields["truncated"] and not fields["terminated"] and not fields["won"]
    assert (fields["env_turns"], fields["budget"], len(server.calls)) == (4, 4, 4)
    assert fields["admissible_rate"] == 0.0
    assert output.reward_score == 0.0
    assert output.response_mask[-1] == 1  # the episode ends on the model's reply
    assert len(output.response_mask) == len(output.response_ids) == len(output.response_logprobs)


def test_response_length_cut_is_detected_and_reported(tokenizer: Any, caplog: pytest.LogCaptureFixture) -> None:
    server = ScriptedServer(tokenizer, ["Action: look"] * 50)
    with caplog.at_level("WARNING"):
        output = _run(tokenizer, server, {**COIN, "seed": 1, "max_turns": 40}, response_length=200)
    fields = output.extra_fields
    assert fields["cut_by_length"] and not fields["truncated"] and not fields["terminated"]
    assert 0 < fields["env_turns"] < 40
    assert len(output.response_ids) <= 200 and len(output.response_mask) == len(output.response_ids)
    assert "cut by rollout.response_length=200" in caplog.text


@pytest.mark.slow
def test_budget_mix_rows_draw_their_budget_from_the_seed(tokenizer: Any) -> None:
    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(2, 3, 5))
    rows = verl_rows(config, episodes=6, seed=0)
    budgets = []
    for row in rows:
        server = ScriptedServer(tokenizer, ["Action: wait"] * 10)
        output = _run(tokenizer, server, row["extra_info"])
        assert output.extra_fields["truncated"] and output.extra_fields["env_turns"] == output.extra_fields["budget"]
        budgets.append(output.extra_fields["budget"])
    assert set(budgets) <= {2, 3, 5} and len(set(budgets)) > 1
    again = [_run(tokenizer, ScriptedServer(tokenizer, ["Action: wait"] * 10), rows[i]["extra_info"]) for i in (0, 1)]
    assert [o.extra_fields["budget"] for o in again] == budgets[:2]  # same seed, same budget


def test_registration_and_shipped_config() -> None:
    assert register_agent_loop() == AGENT_NAME == "agentgym_budget"
    assert _agent_loop_registry[AGENT_NAME] == {"_target_": "agentgym_budget.integrations.verl.BudgetAgentLoop"}
    entries = OmegaConf.load(AGENT_LOOP_CONFIG)
    assert [(e.name, e._target_) for e in entries] == [
        (AGENT_NAME, "agentgym_budget.integrations.verl.BudgetAgentLoop")
    ]


def _fresh(code: str, **env: str) -> str:
    """``code``'s stdout in a fresh interpreter (the checkout importable, verl's plug-in policy as given)."""
    environ = {key: value for key, value in os.environ.items() if key != "VERL_USE_EXTERNAL_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**environ, **env}, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


REGISTRY = (
    "from verl.experimental.agent_loop.agent_loop import _agent_loop_registry as r; print(r.get('agentgym_budget'))"
)


@pytest.mark.slow
def test_a_process_that_imports_only_verl_has_the_loop_from_the_entry_point() -> None:
    loop = "{'_target_': 'agentgym_budget.integrations.verl.BudgetAgentLoop'}"
    assert _fresh(f"import verl; {REGISTRY}") == loop  # verl.plugins, as in each Ray worker
    assert _fresh(f"import verl; {REGISTRY}", VERL_USE_EXTERNAL_PLUGINS="none") == "None"
    assert _fresh(f"import agentgym_budget.integrations.verl; {REGISTRY}", VERL_USE_EXTERNAL_PLUGINS="none") == loop


def test_the_loops_yaml_entry_refuses_near_misses_and_per_episode_fields(tokenizer: Any) -> None:
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"response_length": 64}}, "data": {}})

    async def build(**entry: Any) -> Any:
        return BudgetAgentLoop(trainer_config=DictConfigWrap(config), server_manager=None, tokenizer=tokenizer,
                               processor=None, dataset_cls=None, data_config=DictConfigWrap(config.data), **entry)  # fmt: skip

    assert asyncio.run(build(max_turns=12, name=AGENT_NAME)).session_defaults == {"max_turns": 12}
    for entry, message in [
        ({"env_idd": "x"}, "Did you mean 'env_id'"),
        ({"max_turn": 12}, "Did you mean 'max_turns'"),
        ({"seed": 3}, "names one episode"),
        ({"env_id": "TextWorld-CoinColector-v0"}, "Did you mean"),  # checked when the job starts
    ]:
        with pytest.raises(Exception, match=message) as raised:
            asyncio.run(build(**entry))
        assert isinstance(raised.value, InvalidOptionError | UnknownEnvIdError)


@pytest.mark.slow
def test_the_loops_yaml_entry_sets_job_wide_defaults_through_verls_agent_loop_worker(
    tokenizer: Any, tmp_path: Any
) -> None:
    """``max_turns: 12`` and the env in the YAML entry: 12-turn episodes for rows without a budget, the row's own
    budget where it has one (verl's AgentLoopWorker builds the loop from the entry, as in a Ray actor)."""
    import numpy as np
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto

    entry = tmp_path / "agent_loops.yaml"
    entry.write_text(
        f"- name: {AGENT_NAME}\n  _target_: agentgym_budget.integrations.verl.BudgetAgentLoop\n"
        "  max_turns: 12\n  env_id: TextWorld-CoinCollector-v0\n  env_kwargs: {level: 5}\n"
    )
    overrides = [f"actor_rollout_ref.rollout.agent.agent_loop_config_path={entry}", "data.max_prompt_length=512"]
    config = trainer_config(tokenizer, str(tmp_path / "model"), [*overrides, "data.max_response_length=4096"])
    extra_info = [{"seed": 0, "index": 0}, {"seed": 1, "index": 1}, {"seed": 2, "index": 2, "max_turns": 3}]
    batch = DataProto.from_dict(
        non_tensors={
            "raw_prompt": np.array([None, *[PROMPT] * 3], dtype=object)[1:],
            "extra_info": np.array(extra_info, dtype=object),
            "agent_name": np.array([AGENT_NAME] * 3, dtype=object),
            "index": np.array([0, 1, 2]),
        },
        meta_info={"validate": False, "global_steps": 1},
    )
    server = ScriptedServer(tokenizer, ["Action: wait"], repeat=True)
    registered = _agent_loop_registry.pop(AGENT_NAME, None)  # as in a fresh Ray actor: only the YAML names it
    try:

        async def generate() -> Any:
            return await AgentLoopWorker(config, server).generate_sequences(batch)

        out = asyncio.run(generate())
    finally:
        _agent_loop_registry[AGENT_NAME] = registered or {
            "_target_": "agentgym_budget.integrations.verl.BudgetAgentLoop"
        }
    extra = out.non_tensor_batch
    assert list(extra["budget"]) == list(extra["env_turns"]) == [12, 12, 3]
    assert all(extra["truncated"]) and not any(extra["cut_by_length"])
    assert len(set(extra["task_id"])) > 1  # the seeds pick the tasks of the entry's env


def test_bad_rows_raise_typed_errors(tokenizer: Any) -> None:
    with pytest.raises(InvalidOptionError, match="needs 'env_id'"):
        _run(tokenizer, ScriptedServer(tokenizer, []), {"seed": 0})
    with pytest.raises(InvalidOptionError, match="Did you mean 'max_turns'"):
        _run(tokenizer, ScriptedServer(tokenizer, []), {**COIN, "max_turn": 3})


@pytest.mark.slow
def test_export_dataset_rows_play_through_the_loop(tokenizer: Any, tmp_path: Any) -> None:
    import pyarrow.parquet as pq

    from agentgym_budget.cli.main import main

    path = tmp_path / "coin.parquet"
    argv = ["export-dataset", "TextWorld-CoinCollector-v0", "--env-args", "level=5", "--episodes", "3"]
    assert main([*argv, "--seed", "7", "--budget", "6", "--output", str(path)]) == 0
    rows = pq.read_table(path).to_pylist()
    assert [(r["agent_name"], r["extra_info"]["seed"], r["extra_info"]["max_turns"]) for r in rows] == [
        ("agentgym_budget", 7, 6),
        ("agentgym_budget", 8, 6),
        ("agentgym_budget", 9, 6),
    ]
    plan = _expert_plan(seed=8)
    output = _run(tokenizer, ScriptedServer(tokenizer, [f"Action: {c}" for c in plan]), rows[1]["extra_info"])
    assert output.extra_fields["won"] and output.extra_fields["budget"] == 6


@pytest.mark.slow
def test_budget_mix_rows_through_verls_agent_loop_worker(tokenizer: Any, tmp_path: Any) -> None:
    """verl's own AgentLoopWorker.generate_sequences, the loop found through the shipped YAML only."""
    import numpy as np
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto

    config = trainer_config(
        tokenizer,
        str(tmp_path / "model"),
        [
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={AGENT_LOOP_CONFIG}",
            "data.max_prompt_length=512",
            "data.max_response_length=2048",
        ],
    )
    rows = verl_rows(SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=5", budgets=(2, 3, 5)), episodes=4)
    rows = [rows[i] for i in (0, 0, 1, 2, 3)]  # a GRPO group: verl repeats a row n times
    batch = DataProto.from_dict(
        non_tensors={
            "raw_prompt": np.array([None, *[row["prompt"] for row in rows]], dtype=object)[1:],
            "extra_info": np.array([row["extra_info"] for row in rows], dtype=object),
            "agent_name": np.array([row["agent_name"] for row in rows], dtype=object),
            "index": np.array([row["extra_info"]["index"] for row in rows]),
        },
        meta_info={"validate": False, "global_steps": 1},
    )
    server = ScriptedServer(tokenizer, ["Action: wait"], repeat=True)
    registered = _agent_loop_registry.pop(AGENT_NAME, None)  # as in a fresh Ray actor: only the YAML names it
    try:

        async def generate() -> Any:
            return await AgentLoopWorker(config, server).generate_sequences(batch)

        out = asyncio.run(generate())
    finally:
        if registered is not None:
            _agent_loop_registry[AGENT_NAME] = registered
    extra = out.non_tensor_batch
    budgets, turns = list(extra["budget"]), list(extra["env_turns"])
    assert budgets == turns and set(budgets) <= {2, 3, 5} and len(set(budgets)) > 1
    assert budgets[0] == budgets[1] and extra["task_id"][0] == extra["task_id"][1]  # same row, same episode
    assert all(extra["truncated"]) and not any(extra["won"]) and not any(extra["cut_by_length"])
    assert list(extra["__num_turns__"]) == [2 * b for b in budgets]
    assert len(server.calls) == sum(budgets)
    responses, mask = out.batch["responses"], out.batch["response_mask"]
    assert responses.shape == mask.shape == out.batch["rollout_log_probs"].shape == (5, 2048)
    for i, budget in enumerate(budgets):  # model tokens: `budget` replies; log-probs only on them
        reply = [*tokenizer.encode("Action: wait", add_special_tokens=False), tokenizer.eos_token_id]
        assert int(mask[i].sum()) == budget * len(reply)
        assert bool((out.batch["rollout_log_probs"][i][mask[i] == 0] == 0).all())
    assert float(out.batch["rm_scores"].sum()) == 0.0


def test_the_example_trainer_config_composes_over_verls_own() -> None:
    import os

    from hydra import compose, initialize_config_dir

    from agentgym_budget.integrations.verl import EXAMPLE_TRAINER_CONFIG

    with initialize_config_dir(config_dir=os.path.dirname(EXAMPLE_TRAINER_CONFIG), version_base=None):
        config = compose(
            "verl_trainer_example",
            overrides=[
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={AGENT_LOOP_CONFIG}",
                "actor_rollout_ref.model.path=/models/any",
            ],
        )
    rollout = config.actor_rollout_ref.rollout
    assert (config.algorithm.adv_estimator, rollout.agent.default_agent_loop) == ("grpo", AGENT_NAME)
    assert (rollout.prompt_length, rollout.response_length) == (1024, 4096)  # from data.max_*_length
    assert rollout.calculate_log_probs and config.data.return_raw_chat and rollout.n == 4
