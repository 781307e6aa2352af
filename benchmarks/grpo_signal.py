"""How often GRPO groups carry reward signal from one base policy: chain, tree, and dynamic sampling.

A GRPO group whose rollouts all have the same return (all won or all lost) has zero advantage: it
trains nothing. From one policy (``--model DIR``: a training run's checkpoint, e.g. an SFT base; the
smoke run builds the tiny base), this plays ``--groups`` groups of ``--group`` rollouts on the first
``--groups`` training tasks of ``--env`` at ``--budget`` (no weight changes), once per lever:

* ``chain``: the group's rollouts start at the task's start (TRL-style GRPO);
* ``tree``: one rollout is played, the others branch from an exact fork of one of its states
  (:mod:`agentgym_budget.train.rollouts`);
* ``chain+dynamic`` and ``tree+dynamic``: groups without signal are played again on other tasks, up to
  ``--resample-rounds`` times (:mod:`agentgym_budget.train.rollout_trainer`).

It reports per lever the share of groups with disagreeing returns (a 95% Wilson interval over groups),
the win rate, the generated tokens per second of the batched, key/value-cached rollouts, and CPU and
wall time. Results go to ``benchmarks/results/grpo_signal.json``.

Usage::

    python benchmarks/grpo_signal.py --model runs/sft/final [--env TextWorld-CoinCollector-v0]
        [--env-args level=3] [--budget 6] [--groups 16] [--group 4] [--resample-rounds 2] [--threads 1] [--batch 16]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import _harness
import torch

from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.train.metrics import JsonlLog
from agentgym_budget.train.rollout_trainer import RolloutOptions, RolloutSource
from agentgym_budget.train.rollouts import GroupSpec, rollout_seed

LEVERS = {"chain": ("chain", False), "tree": ("tree", False), "chain+dynamic": ("chain", True)}
LEVERS["tree+dynamic"] = ("tree", True)


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion.

    Example:
        >>> [round(x, 3) for x in wilson(8, 16)]
        [0.28, 0.72]
    """
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return (centre - half, centre + half)


def tiny_base(config: SessionConfig, directory: Path) -> Path:
    """A tiny base policy trained on a few expert conversations (the smoke run's model)."""
    from agentgym_budget.chat.format import ChatFormat
    from agentgym_budget.integrations.trl import expert_conversations
    from agentgym_budget.train.base_model import TinyModelSpec, build_base_model, save_model

    chat_format = ChatFormat(env=config.ref.label)
    spec = TinyModelSpec(vocab_size=400, hidden_size=32, layers=1, heads=2, max_positions=2048)
    model, tokenizer = build_base_model(expert_conversations(config, range(2)), spec, chat_format=chat_format)
    return save_model(model, tokenizer, directory / "tiny", chat_format)


def measure(local: Any, config: SessionConfig, lever: str, args: argparse.Namespace, log: JsonlLog) -> dict[str, Any]:
    """Play the groups of one lever; signal share, win rate, tokens/s and time."""
    mode, dynamic = LEVERS[lever]
    options = RolloutOptions(mode, dynamic, args.resample_rounds, args.max_new_tokens, args.temperature, args.batch)
    tasks = list(range(args.groups * (args.resample_rounds + 1)))
    source = RolloutSource(config, options, tasks=tasks, chat_format=local.chat_format, episodes=log, seed=args.seed)
    specs = [GroupSpec({"task": g, "seed": g}, args.group, rollout_seed(args.seed, g)) for g in range(args.groups)]
    began = _harness.Clock.now()
    groups, metrics = source.play_step(local, specs, step=1)
    timing = _harness.Clock.now().since(began)
    source.close()
    rollouts = [r for group in groups for r in group]
    signal = round(metrics["signal_groups"] * len(groups))
    generated = sum(sum(r.model_mask) for r in rollouts)
    return {
        "signal_groups": metrics["signal_groups"],
        "signal_groups_first": metrics["signal_groups_first"],
        "signal_interval": wilson(signal, len(groups)),
        "groups_resampled": metrics["groups_resampled"],
        "win_rate": sum(r.record["won"] for r in rollouts) / len(rollouts),
        "mean_start_turn": sum(r.start_turn for r in rollouts) / len(rollouts),
        "generated_tokens": generated,
        "generated_tokens_per_s": generated / timing["wall_s"],
        **timing,
    }


def rows_of(result: dict[str, Any], command: str) -> list[list[str]]:
    """README rows: one per lever."""
    rows = []
    for lever, figures in result["levers"].items():
        low, high = figures["signal_interval"]
        rows.append(
            [
                f"GRPO groups with signal, {lever} ({result['model_label']}, {result['env']}, groups of {result['group']})",
                f"**{figures['signal_groups']:.2f}** [{low:.2f}, {high:.2f}] of {result['groups']} groups "
                f"(first play {figures['signal_groups_first']:.2f}; win rate {figures['win_rate']:.2f}; "
                f"{figures['generated_tokens_per_s']:.1f} generated tokens/s; CPU {figures['process_cpu_s']:.0f} s / "
                f"wall {figures['wall_s']:.0f} s; load {result['load'][0]:.1f})",
                "",
                f"`{command}`",
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default=None, help="the policy's directory (default: a tiny base, smoke only)")
    parser.add_argument("--env", default="TextWorld-CoinCollector-v0")
    parser.add_argument("--env-args", default="level=3")
    parser.add_argument("--budget", type=int, default=6)
    parser.add_argument("--groups", type=int, default=16)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--resample-rounds", type=int, default=2)
    parser.add_argument("--levers", default=",".join(LEVERS))
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16, help="most replies in one forward batch (bounds memory)")
    parser.add_argument("--seed", type=int, default=0)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.env_args, args.budget, args.groups, args.group, args.resample_rounds = "level=1", 2, 2, 2, 1
        args.max_new_tokens = 8
    recording = _harness.start("grpo_signal", args.smoke)
    torch.set_num_threads(args.threads)
    config = SessionConfig(args.env, env_kwargs=args.env_args, max_turns=args.budget)
    from agentgym_budget.agents.hf_model import load_local_model

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(tiny_base(config, Path(tmp)))
        local = load_local_model(model, threads=args.threads)
        log = JsonlLog(Path(tmp) / "episodes.jsonl")
        levers = {lever: measure(local, config, lever, args, log) for lever in args.levers.split(",")}
    for lever, figures in levers.items():
        print(lever, {k: v for k, v in figures.items() if not isinstance(v, (list, tuple))}, flush=True)
    result = {
        "model_label": Path(args.model).name if args.model else "tiny (smoke)",
        "model": args.model,
        "env": config.ref.label,
        "budget": args.budget,
        "groups": args.groups,
        "group": args.group,
        "resample_rounds": args.resample_rounds,
        "threads": args.threads,
        "load": [recording.load_before[0], os.getloadavg()[0]],
        "levers": levers,
    }
    command = " ".join(["python benchmarks/grpo_signal.py", *sys.argv[1:]])
    recording.finish(result, rows_of(result, command))


if __name__ == "__main__":
    main()
