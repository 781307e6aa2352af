"""The scoring policy (score:) vs generation (hf:, generate + parse): per turn, per evaluation and per training episode.

Side by side in one process, on SmolLM2-135M (fp32, ``--threads`` torch threads) and TextWorld Coin Collector
level 3:

* **per turn, same states**: the states of the expert's trajectories on ``--tasks`` train tasks; at each one a
  fresh agent of each kind is primed with the turns before it (as ``probe`` primes agents) and asked for one
  command (``score:...:temperature=0`` scores every admissible command; ``hf:...:temperature=0`` generates a
  reply of at most ``--max-new-tokens`` tokens and parses it). CPU and wall seconds per turn, prompt tokens and
  candidates per turn.
* **per evaluation episode**: greedy episodes at ``--budget`` on held-out (test) tasks, played as ``passkt``
  plays them (``concurrency`` episodes of a worker at once): ``--eval-episodes`` of the scoring agent,
  ``--hf-episodes`` of the generating one (it is far slower).
* **per training episode**: ``--train-steps`` RL steps of ``train --policy score --recipe fixed`` (groups of
  ``--group``, top 2 blocks, rollout and update) and one GRPO step of the generation path (``--generation
  cached`` rollouts, groups of 2), each from the raw base; CPU and wall seconds per episode.

Targets (issue 48): scoring >= 10x cheaper per turn than generate + parse; a training episode <= 0.5 s CPU and a
greedy evaluation episode <= 1.5 s CPU at T <= 9. The load average is recorded before and after (2 cores shared).

Usage::

    python benchmarks/scoring_speed.py [--tasks 4] [--eval-episodes 16] [--hf-episodes 4] [--train-steps 3]
    python benchmarks/scoring_speed.py --smoke      # a tiny random model, a few seconds
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness

from agentgym_budget.agents import parse_agent
from agentgym_budget.agents.base import observe_turn
from agentgym_budget.runner.rollout import EnvRef, play_episode

ENV = ("TextWorld-CoinCollector-v0", "level=3")


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(began: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - began[0], cpu - began[1]


async def per_turn(spec: str, tasks: int) -> dict[str, Any]:
    """One command from each state of the expert's trajectories, by a fresh agent primed with the turns before."""
    ref = EnvRef.parse(*ENV, split="train")
    env = ref.make({"expert_action"})
    wall = cpu = 0.0
    turns, prompt_tokens, candidates = 0, 0, 0
    try:
        for task in ref.task_ids()[:tasks]:
            observation, info = env.reset(seed=0, options={"task": task, "max_turns": 20})
            first = (observation, {k: v for k, v in info.items() if k != "expert_action"})
            history: list[tuple[str, dict[str, Any], str]] = []
            done = False
            while not done:
                agent = parse_agent(spec).build()
                view = {k: v for k, v in info.items() if k != "expert_action"}
                began = _clock()
                await agent.reset(info["goal"], *first, seed=0)
                for past_observation, past_info, action in history:
                    await observe_turn(agent, past_observation, past_info, action)
                await agent.act(observation, view)
                w, c = _since(began)
                wall, cpu, turns = wall + w, cpu + c, turns + 1
                stats = agent.stats()
                prompt_tokens += stats.get("prompt_tokens", 0)
                candidates += len(info["admissible_actions"])
                history.append((observation, view, info["expert_action"]))
                observation, _, terminated, truncated, info = env.step(info["expert_action"])
                done = terminated or truncated
    finally:
        env.close()
    return {"turns": turns, "wall_s": wall / turns, "cpu_s": cpu / turns, "prompt_tokens": prompt_tokens / turns,
            "candidates": candidates / turns}  # fmt: skip


async def per_episode(spec: str, episodes: int, budget: int, concurrency: int) -> dict[str, Any]:
    """Greedy episodes on held-out tasks, ``concurrency`` at a time (as a passkt worker plays them)."""
    ref = EnvRef.parse(*ENV, split="test")
    ids = ref.task_ids()[:episodes]
    slots = asyncio.Semaphore(concurrency)

    async def one(i: int, task: str) -> Any:
        async with slots:
            env = ref.make(())
            try:
                return await play_episode(env, parse_agent(spec).build(), task_id=task, budget=budget, seed=i)
            finally:
                env.close()

    began = _clock()
    results = await asyncio.gather(*(one(i, task) for i, task in enumerate(ids)))
    wall, cpu = _since(began)
    turns = sum(r.turns for r in results)
    return {"episodes": len(results), "wall_s": wall / len(results), "cpu_s": cpu / len(results),
            "turns": turns / len(results), "won": sum(r.won for r in results) / len(results)}  # fmt: skip


def train_score(model: str, steps: int, group: int, out: Path, tiny: bool) -> dict[str, Any]:
    """``steps`` RL steps of the scoring policy (fixed recipe, budget 4) from ``model``; per-episode costs."""
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.recipe import run_training
    from agentgym_budget.train.scoring.settings import ScoreSettings

    grpo = GRPOSettings(steps=steps, episodes_per_step=2 * group, num_generations=group, learning_rate=1e-4,
                        beta=0.0, save_steps=steps)  # fmt: skip
    config = TrainConfig(*ENV, recipe="fixed", budget=4, init=model, policy="score", train_tasks=20, grpo=grpo,
                         score=ScoreSettings(train_blocks=1 if tiny else 2))  # fmt: skip
    run_training(config, out, progress=False, plots=False)
    rows = [json.loads(line) for line in (out / "rl" / "metrics.jsonl").read_text().splitlines()]
    episodes = steps * 2 * group
    rollout = sum(r["rollout_cpu_s"] for r in rows)
    update = sum(r["update_cpu_s"] for r in rows)
    wall = sum(r["rollout_s"] + r["update_s"] for r in rows)
    return {"episodes": episodes, "cpu_s": (rollout + update) / episodes, "wall_s": wall / episodes,
            "rollout_cpu_s": rollout / episodes, "update_cpu_s": update / episodes,
            "turns": sum(r["turns"] for r in rows) / len(rows), "success": sum(r["success"] for r in rows) / len(rows)}  # fmt: skip


def train_generate(model: str, out: Path, tokens: int) -> dict[str, Any]:
    """One GRPO step of the generation path (cached rollouts, groups of 2, 4 episodes at budget 4) from ``model``."""
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.recipe import run_training

    grpo = GRPOSettings(steps=1, episodes_per_step=4, num_generations=2, learning_rate=1e-6, beta=0.0,
                        save_steps=1, generation="cached", tokens_per_turn=tokens)  # fmt: skip
    config = TrainConfig(*ENV, recipe="fixed", budget=4, init=model, train_tasks=20, grpo=grpo)
    began = _clock()
    run_training(config, out, progress=False, plots=False)
    wall, cpu = _since(began)
    return {"episodes": 4, "cpu_s": cpu / 4, "wall_s": wall / 4}


def _tiny_model(directory: Path) -> str:
    import sys

    sys.path.insert(0, str(Path(__file__).parent.parent))
    from tests.hf_support import save_tiny_checkpoint

    return str(save_tiny_checkpoint(directory))


def _rows(result: dict[str, Any]) -> list[list[str]]:
    turn, evaluation, training = result["per_turn"], result["per_eval_episode"], result["per_train_episode"]
    ratio = turn["ratio_cpu"]
    return [
        [
            "SmolLM2-135M per turn: score: (all candidates, shared prompt) vs hf: (generate + parse), same states",
            f"{turn['score']['cpu_s']:.2f} vs {turn['hf']['cpu_s']:.2f} s CPU ({ratio:.0f}x)",
            ">= 10x",
            "`python benchmarks/scoring_speed.py`",
        ],
        [
            "SmolLM2-135M greedy evaluation episode (Coin Collector level 3, T=9): score: vs hf:",
            f"{evaluation['score']['cpu_s']:.2f} vs {evaluation['hf']['cpu_s']:.1f} s CPU",
            "score: <= 1.5 s",
            "`python benchmarks/scoring_speed.py`",
        ],
        [
            "SmolLM2-135M training episode (rollout + update, T=4): train --policy score vs generation GRPO",
            f"{training['score']['cpu_s']:.2f} vs {training['hf']['cpu_s']:.1f} s CPU",
            "score: <= 0.5 s",
            "`python benchmarks/scoring_speed.py`",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4, help="train tasks whose expert states are scored")
    parser.add_argument("--eval-episodes", type=int, default=16)
    parser.add_argument("--hf-episodes", type=int, default=4)
    parser.add_argument("--budget", type=int, default=9)
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default="smollm2-135m")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.eval_episodes, args.hf_episodes, args.train_steps, args.group = 1, 2, 1, 1, 2
        args.max_new_tokens, args.budget = 8, 3
    recording = _harness.start("scoring_speed", args.smoke)
    with tempfile.TemporaryDirectory() as tmp:
        model = _tiny_model(Path(tmp) / "tiny") if args.smoke else args.model
        if not args.smoke:
            from agentgym_budget.agents.pretrained import resolve_model

            model = str(resolve_model(model))
        common = f"temperature=0,threads={args.threads}"
        score = f"score:{model}:{common}"
        hf = f"hf:{model}:{common},max_new_tokens={args.max_new_tokens}"
        asyncio.run(per_turn(score, 1))  # load both models before timing
        asyncio.run(per_turn(hf, 1))
        turn = {"score": asyncio.run(per_turn(score, args.tasks)), "hf": asyncio.run(per_turn(hf, args.tasks))}
        turn["ratio_cpu"] = turn["hf"]["cpu_s"] / turn["score"]["cpu_s"]
        turn["ratio_wall"] = turn["hf"]["wall_s"] / turn["score"]["wall_s"]
        evaluation = {
            "score": asyncio.run(per_episode(score, args.eval_episodes, args.budget, 8)),
            "hf": asyncio.run(per_episode(hf, args.hf_episodes, args.budget, 8)),
        }
        training = {
            "score": train_score(model, args.train_steps, args.group, Path(tmp) / "score", args.smoke),
            "hf": train_generate(model, Path(tmp) / "generate", args.max_new_tokens),
        }
    result = {"model": args.model if not args.smoke else "tiny random Qwen2", "threads": args.threads,
              "per_turn": turn, "per_eval_episode": evaluation, "per_train_episode": training,
              "load": list(os.getloadavg())}  # fmt: skip
    print(json.dumps(result, indent=2))
    recording.finish(result, _rows(result))


if __name__ == "__main__":
    main()
