"""The hf: agent's batched generation vs one reply at a time, side by side in one process.

A random tiny Qwen2 (the size of the training's default base model, ``TinyModelSpec()``: 128 wide,
2 layers) and its tokenizer are built locally and saved with ``save_pretrained`` into a temporary
directory. ``--episodes`` episodes of TextWorld Coin Collector (level 1, budget ``--budget``) are
played at once in one event loop, as a passkt worker plays them (``concurrency`` = episodes), by
``hf:DIR:batch_size=B`` for B = ``--batch`` and B = 1, alternating over ``--rounds`` rounds so both
see the same machine load. Replies have a fixed length (``max_new_tokens``, the random model rarely
ends one early). Reported: median wall time per round and the ratio (target: batching faster, ratio
> 1), and whether both played exactly the same actions (they must: sampling is seeded per episode
and reply). Results go to ``benchmarks/results/hf_agent_batching.json``.

Usage::

    python benchmarks/hf_agent_batching.py [--episodes 8] [--batch 8] [--budget 4] [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import _harness
from tqdm import tqdm

from agentgym_budget.agents import parse_agent
from agentgym_budget.chat.format import ChatFormat
from agentgym_budget.integrations.session_config import SessionConfig
from agentgym_budget.integrations.trl import expert_conversations
from agentgym_budget.runner.rollout import EnvRef, play_episode
from agentgym_budget.train.base_model import TinyModelSpec, build_base_model


def build(directory: Path) -> None:
    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=1")
    chat_format = ChatFormat(env=config.ref.label)
    model, tokenizer = build_base_model(
        expert_conversations(config, range(4)), TinyModelSpec(), chat_format=chat_format
    )
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    chat_format.save(directory)


async def play_all(spec: str, episodes: int, budget: int) -> list[list[str]]:
    ref = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1")
    tasks = ref.task_ids()
    envs = [ref.make(()) for _ in range(episodes)]
    try:
        results = await asyncio.gather(
            *(
                play_episode(env, parse_agent(spec).build(), task_id=tasks[i % len(tasks)], budget=budget, seed=i)
                for i, env in enumerate(envs)
            )
        )
    finally:
        for env in envs:
            env.close()
    return [result.actions for result in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.batch, args.rounds, args.max_new_tokens = 2, 2, 1, 4
    recording = _harness.start("hf_agent_batching", args.smoke)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "model"
        build(directory)
        base = f"hf:{directory}:max_new_tokens={args.max_new_tokens},threads={args.threads},concurrency={args.episodes}"
        specs = {"batched": f"{base},batch_size={args.batch}", "one_at_a_time": f"{base},batch_size=1"}
        asyncio.run(play_all(specs["batched"], 1, 1))  # load the model and warm up before timing
        times: dict[str, list[float]] = {name: [] for name in specs}
        actions: dict[str, list[list[str]]] = {}
        for _ in tqdm(range(args.rounds), desc="rounds"):
            for name, spec in specs.items():
                began = time.perf_counter()
                actions[name] = asyncio.run(play_all(spec, args.episodes, args.budget))
                times[name].append(time.perf_counter() - began)
    medians = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "episodes": args.episodes,
        "batch_size": args.batch,
        "budget": args.budget,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "median_s": medians,
        "speedup": medians["one_at_a_time"] / medians["batched"],
        "same_actions": actions["batched"] == actions["one_at_a_time"],
    }
    print(json.dumps(result, indent=2))
    recording.finish(result)


if __name__ == "__main__":
    main()
