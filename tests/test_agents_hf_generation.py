"""The hf:PATH agent's turns: conversation tokens and replies as TRL builds and reads them, seeded batched generation.

Spec checks, model loading and the CLI are in ``tests/test_agents_hf.py``; both use the session
fixture ``checkpoint`` (``tests/conftest.py``, built by ``tests/hf_support.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("trl", reason="the hf: agent needs the trl extra")

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.hf_agent import HFAgent
from agentgym_budget.agents.hf_generation import (
    Batcher,
    Generation,
    GenerationRequest,
    PrefixCache,
    Sampling,
    generate,
)
from agentgym_budget.agents.hf_model import load_local_model
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.integrations.session import EpisodeSession
from agentgym_budget.integrations.trl import BudgetToolEnv
from agentgym_budget.runner.rollout import EnvRef, run_episode
from tests.hf_support import CONFIG, ENV


def _reply_ids(local: Any, text: str) -> tuple[int, ...]:
    return tuple(local.tokenizer.encode(text + local.tokenizer.eos_token, add_special_tokens=False))


def _call(command: str) -> str:
    return f'<tool_call>\n{{"name": "act", "arguments": {{"command": "{command}"}}}}\n</tool_call>'


class _Scripted(Batcher):
    """A batcher that answers with scripted replies (the model's output is the test's input)."""

    def __init__(self, local: Any, replies: list[str]) -> None:
        super().__init__(local, 1)
        self.replies = [_reply_ids(local, text) for text in replies]
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Generation:
        self.requests.append(request)
        return Generation(self.replies.pop(0), True, len(request.ids), 0)


def test_replies_are_read_as_trl_runs_them(checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two calls in one reply are two turns; their answers are appended together with TRL's own suffix ids."""
    from trl import GRPOTrainer

    local = load_local_model(checkpoint)
    scripted = _Scripted(local, [_call("go east") + _call("take coin"), "I think.\nAction: Look."])
    monkeypatch.setattr("agentgym_budget.agents.hf_agent.batcher_for", lambda *_: scripted)
    agent = HFAgent(str(checkpoint))
    info = {"admissible_actions": ["go east", "take coin", "look"]}

    async def play() -> list[str]:
        await agent.reset("Take the coin.", "A hall.", info, seed=3)
        first = await agent.act("A hall.", info)
        before_second = list(agent.token_ids)
        second = await agent.act("A kitchen.", info)
        assert agent.token_ids == before_second  # a queued call: no new reply
        third = await agent.act("The coin is yours.", info)
        return [first, second, third]

    assert asyncio.run(play()) == ["go east", "take coin", "look"]
    assert agent.stats()["replies"] == 2 and agent.stats()["act_calls"] == 2 and agent.stats()["free_text_turns"] == 1
    # The second reply was generated after TRL's suffix for both tool answers.
    trainer = SimpleNamespace(
        processing_class=local.tokenizer, _tokenizer=local.tokenizer, _is_vlm=False, chat_template=None
    )
    trainer.chat_template_kwargs = {"tools": [BudgetToolEnv(CONFIG).act]}
    answers = [
        {"role": "tool", "name": "act", "content": text + "\n\nAdmissible actions: go east | take coin | look"}
        for text in ("A kitchen.", "The coin is yours.")
    ]
    suffix = GRPOTrainer._get_tool_suffix_ids(trainer, answers)
    first_prompt, second_prompt = (list(r.ids) for r in scripted.requests)
    assert second_prompt == first_prompt + list(_reply_ids(local, _call("go east") + _call("take coin"))) + suffix


def test_conversation_tokens_are_the_training_conversation(checkpoint: Path) -> None:
    """Turns told to the agent give the ids of the conversation BudgetToolEnv would have had with TRL."""
    local = load_local_model(checkpoint)
    ref = EnvRef.parse(*ENV)
    env = ref.make(())
    session = EpisodeSession(CONFIG)
    try:
        observation, info = env.reset(seed=0, options={"task": ref.task_ids()[0], "max_turns": 5})
        first = session.reset(seed=0, task=ref.task_ids()[0], max_turns=5)
        agent = HFAgent(str(checkpoint))
        asyncio.run(agent.reset(info["goal"], observation, info, seed=0))
        messages = [
            {"role": "system", "content": ChatFormat().system_prompt},
            {"role": "user", "content": first.text},
        ]
        for command in ("look", "inventory"):
            asyncio.run(agent.observe(observation, info, command))
            observation, _, _, _, info = env.step(command)
            messages.append({"role": "assistant", "content": "", "tool_calls": [_tool(command)]})
            messages.append({"role": "tool", "name": "act", "content": session.step(command).text})
        asyncio.run(agent.observe(observation, info, "take coin"))
    finally:
        env.close()
        session.close()
    expected = local.tokenizer.apply_chat_template(
        messages, tools=[BudgetToolEnv(CONFIG).act], add_generation_prompt=True, tokenize=True, return_dict=False
    )
    call_ids = local.tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": "", "tool_calls": [_tool("take coin")]}],
        tools=[BudgetToolEnv(CONFIG).act],
        tokenize=True,
        return_dict=False,
    )
    assert agent.token_ids[: len(expected)] == list(expected)
    assert agent.token_ids == list(call_ids)[: len(agent.token_ids)] and len(agent.token_ids) > len(expected)


def _tool(command: str) -> dict[str, Any]:
    from agentgym_budget.chat.tool import tool_call

    return tool_call("act", command=command)


def test_a_batch_generates_what_each_row_generates_alone(checkpoint: Path) -> None:
    local = load_local_model(checkpoint)
    prompts = [tuple(local.tokenizer.encode("You are in a hall. " * n)) for n in (1, 9, 20, 4)]
    for sampling in (Sampling(max_new_tokens=8), Sampling(temperature=0.0, max_new_tokens=8), Sampling(0.7, 0.9, 5, 8)):
        requests = [GenerationRequest(p, 100 + i, sampling) for i, p in enumerate(prompts)]
        together = generate(local, requests)
        alone = [generate(local, [request])[0] for request in requests]
        assert together == alone
        if sampling.temperature > 0:
            assert len({reply.ids for reply in together}) > 1


def test_a_prefix_cache_reads_only_new_tokens_and_changes_no_reply(checkpoint: Path) -> None:
    local = load_local_model(checkpoint)
    starts = [tuple(local.tokenizer.encode("You are in a hall. " * n)) for n in (1, 9, 20, 4)]
    more = tuple(local.tokenizer.encode(" An exit to the east."))
    for sampling in (Sampling(temperature=0.0, max_new_tokens=6), Sampling(0.7, 0.9, 5, 6)):
        caches = [PrefixCache() for _ in starts]
        first = generate(
            local,
            [GenerationRequest(p, 5 + i, sampling, c) for i, (p, c) in enumerate(zip(starts, caches, strict=True))],
        )
        nexts = [(*p, *reply.ids, *more) for p, reply in zip(starts, first, strict=True)]
        # rows 0 and 2 reuse their caches, rows 1 and 3 read everything: in one batch, then alone
        mixed = [GenerationRequest(p, 9 + i, sampling, caches[i] if i % 2 == 0 else None) for i, p in enumerate(nexts)]
        cached_copies = [PrefixCache(c.ids, c.layers) for c in caches]
        together = generate(local, mixed)
        plain = [generate(local, [GenerationRequest(p, 9 + i, sampling)])[0] for i, p in enumerate(nexts)]
        alone = [
            generate(local, [GenerationRequest(p, 9 + i, sampling, c)])[0]
            for i, (p, c) in enumerate(zip(nexts, cached_copies, strict=True))
        ]
        assert [r.ids for r in together] == [r.ids for r in plain] == [r.ids for r in alone]
        assert [r.cached_tokens > 0 for r in together] == [True, False, True, False]
        assert all(r.cached_tokens >= len(p) for r, p in zip(alone, starts, strict=True))


def _play(spec: str, seeds: list[int], *, concurrently: bool) -> list[list[str]]:
    ref = EnvRef.parse(*ENV)
    tasks = ref.task_ids()

    async def one(seed: int) -> list[str]:
        from agentgym_budget.runner.rollout import play_episode

        env = ref.make(())
        try:
            result = await play_episode(env, parse_agent(spec).build(), task_id=tasks[seed % 2], budget=3, seed=seed)
            return result.actions
        finally:
            env.close()

    async def run() -> list[list[str]]:
        if concurrently:
            return list(await asyncio.gather(*(one(seed) for seed in seeds)))
        return [await one(seed) for seed in seeds]

    return asyncio.run(run())


@pytest.mark.slow
def test_episodes_are_seeded_and_independent_of_the_batch(checkpoint: Path) -> None:
    spec = f"hf:{checkpoint}:max_new_tokens=10"
    seeds = [0, 1, 2, 3]
    batched = _play(spec + ",batch_size=4", seeds, concurrently=True)
    singles = _play(spec + ",batch_size=1", seeds, concurrently=False)
    assert batched == singles
    assert len({tuple(actions) for actions in batched}) > 1  # different seeds, different episodes
    assert _play(spec, [2], concurrently=False) == [batched[2]]


def test_concurrent_episodes_share_batches(checkpoint: Path) -> None:
    local = load_local_model(checkpoint)
    prompts = [tuple(local.tokenizer.encode("A hall. " * n)) for n in (2, 5, 8, 3)]

    async def run() -> tuple[list[Generation], int]:
        batcher = Batcher(local, 4)
        sampling = Sampling(max_new_tokens=4)
        replies = await asyncio.gather(*(batcher.generate(GenerationRequest(p, 7, sampling)) for p in prompts))
        return list(replies), batcher.batches

    replies, batches = asyncio.run(run())
    assert batches == 1 and [len(r.ids) for r in replies] == [4, 4, 4, 4]


def test_same_seed_same_episode(checkpoint: Path) -> None:
    ref = EnvRef.parse(*ENV)
    env = ref.make(())
    try:
        runs = []
        for _ in range(2):
            agent = parse_agent(f"hf:{checkpoint}:max_new_tokens=10").build()
            result = run_episode(env, agent, task_id=ref.task_ids()[0], budget=3, seed=11)
            runs.append((result.actions, agent.token_ids, agent.stats()))
    finally:
        env.close()
    assert runs[0] == runs[1] and runs[0][2]["replies"] == 3


def test_the_fallback_parser_reads_replies_like_trl(checkpoint: Path) -> None:
    import dataclasses

    from agentgym_budget.chat.tool import act_commands

    local = load_local_model(checkpoint)
    assert local.parser == "trl"
    fallback = dataclasses.replace(local, parser="tool_call_tags")
    replies = [_call("go east") + _call("take coin"), "Action: look", '<tool_call>\n{"name": "act"}\n</tool_call>']
    for text in replies:
        ids = _reply_ids(local, text)
        assert act_commands(fallback.parse(ids, []), "act") == act_commands(local.parse(ids, []), "act")
    assert act_commands(local.parse(_reply_ids(local, replies[0]), []), "act") == (["go east", "take coin"], "")


def test_training_reads_every_reply_as_the_agent_plays_it(checkpoint: Path) -> None:
    """GRPO rollouts (play_free_text) and the hf: agent turn the same reply into the same commands."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, parse_response

    from agentgym_budget.chat.format import ConversationTokens
    from agentgym_budget.chat.tool import act_commands
    from agentgym_budget.integrations.trl import play_free_text

    local = load_local_model(checkpoint)
    caller = add_response_schema(AutoTokenizer.from_pretrained(checkpoint))  # what GRPOTrainer does
    caller_parse = caller.parse_response
    training = play_free_text(caller)
    assert play_free_text(training) is training  # idempotent
    assert type(training) is type(caller) and caller.parse_response == caller_parse  # the caller's is untouched
    assert "parse_response" not in vars(caller)
    running = ConversationTokens(local.tokenizer, local.chat_format, "A hall.")
    over = ConversationTokens(local.tokenizer, local.chat_format, "A hall.")
    over.add_call("take coin")
    over.add_tool_answer("You win.\n\n[Episode over: task completed in 1 turn.]")
    other = '<tool_call>\n{"name": "look", "arguments": {}}\n</tool_call>'
    replies = {
        _call("go east") + _call("take coin"): ["go east", "take coin"],
        "I think.\nAction: Look.": ["I think.\nAction: Look."],
        other + _call("go west"): ["go west"],  # the agent ignores calls to other tools: so does training
        '<tool_call>\n{"name": "act"}\n</tool_call>': None,  # malformed: its text is the command
        "": [""],
    }
    for text, expected in replies.items():
        ids = list(_reply_ids(local, text))
        played = [
            c["function"]["arguments"]["command"]
            for c in parse_response(training, ids, prefix=running.ids)["tool_calls"]
        ]
        commands, rest = act_commands(local.parse(ids, running.ids), "act")
        assert played == (commands or [rest])  # the agent's turns
        if expected is not None:
            assert played == expected
        after = parse_response(training, ids, prefix=over.ids)
        assert act_commands(after, "act")[0] == act_commands(local.parse(ids, over.ids), "act")[0]
    assert "tool_calls" not in parse_response(training, list(_reply_ids(local, "Done.")), prefix=over.ids)
