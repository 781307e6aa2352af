"""The scoring policy's sanity gate (issue 48): does fixed-budget RL raise held-out greedy success over its SFT base?

SmolLM2-135M as a scoring policy on TextWorld Coin Collector level 3, its top 2 blocks trained, both phases run
by ``run_training`` as ``train --policy score`` runs them:

* **SFT**: cross-entropy over the candidates on the noisy expert's won episodes (100 train tasks,
  ``--sft-steps`` steps of 8), the base the RL starts from;
* **RL**: the fixed recipe at T = ``--budget`` (``--steps`` steps of ``--episodes`` episodes in groups of
  ``--group``, learning rate ``--lr``, PPO clip 0.2, 2 epochs, temperature 1, no KL);
* **held-out evaluation**: both checkpoints play one greedy episode (``temperature=0``) on each of the first
  ``--tasks`` test tasks at budget 9 (seed = the task's index); success at T = 3, 4 and 9 counts the episodes
  won within T turns. The gain is the per-task paired difference (RL - SFT) with its 95% Student-t interval
  (:func:`~agentgym_budget.eval.estimator.paired_ci`), and the tasks that went up and down.

The result holds the learning curve (training success per RL step), every phase's CPU and wall seconds and the
load. ``--work DIR`` keeps the runs and the per-task outcomes, so a rerun resumes where it stopped; ``--sft`` and
``--rl`` read finished runs instead of training. Greedy play is deterministic, so a task's outcome, once recorded,
is reused.

Usage::

    python benchmarks/scoring_gate.py --work /tmp/gate [--tasks 200] [--steps 40] [--lr 1e-4]
    python benchmarks/scoring_gate.py --sft RUN --rl RUN --work DIR   # evaluate finished runs
    python benchmarks/scoring_gate.py --smoke       # a tiny random model, seconds
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import _harness

from agentgym_budget.agents import parse_agent
from agentgym_budget.eval.estimator import paired_ci
from agentgym_budget.runner.rollout import EnvRef, play_episode

ENV = ("TextWorld-CoinCollector-v0", "level=3")
HORIZONS = (3, 4, 9)


def _configs(args: argparse.Namespace, sft_final: Path | None) -> tuple[Any, Any]:
    """The SFT and RL configs of the gate (the RL one starts from ``sft_final``)."""
    from agentgym_budget.train.base_model import TinyModelSpec
    from agentgym_budget.train.config import TrainConfig
    from agentgym_budget.train.grpo import GRPOSettings
    from agentgym_budget.train.scoring.settings import ScoreSettings
    from agentgym_budget.train.sft import SFTSettings

    common = {"budget": args.budget, "policy": "score", "train_tasks": args.train_tasks, "seed": args.seed,
              "score": ScoreSettings(train_blocks=1 if args.smoke else 2)}  # fmt: skip
    if args.smoke:
        common["tiny"] = TinyModelSpec(vocab_size=400, hidden_size=32, layers=2, heads=2, max_positions=2048)
    sft = TrainConfig(*ENV, recipe="sft", model=None if args.smoke else "smollm2-135m", **common,
                      sft=SFTSettings(steps=args.sft_steps, batch_size=8, learning_rate=1e-4, save_steps=10))  # fmt: skip
    grpo = GRPOSettings(steps=args.steps, episodes_per_step=args.episodes, num_generations=args.group,
                        learning_rate=args.lr, beta=0.0, save_steps=5, temperature=1.0)  # fmt: skip
    rl = replace(sft, recipe="fixed", model=None, init=str(sft_final) if sft_final else None, grpo=grpo)
    return sft, rl


def _train(config: Any, out: Path) -> dict[str, Any]:
    """Run (or resume) ``config`` into ``out``; its summary with the CPU seconds of this invocation."""
    from agentgym_budget.train.recipe import run_training

    began = time.process_time()
    summary = run_training(config, out, progress=False, plots=False)
    return summary | {"cpu_s_last_invocation": round(time.process_time() - began, 1)}


async def _play(model: Path, tasks: list[tuple[int, str]], budget: int) -> list[int | None]:
    """Greedy episodes of ``score:model`` on ``tasks`` (index, task id); the turn each was won at, or ``None``."""
    ref = EnvRef.parse(*ENV, split="test")
    slots = asyncio.Semaphore(8)

    async def one(index: int, task: str) -> int | None:
        async with slots:
            env = ref.make(())
            try:
                agent = parse_agent(f"score:{model}:temperature=0").build()
                result = await play_episode(env, agent, task_id=task, budget=budget, seed=index)
            finally:
                env.close()
            return result.success_turn if result.won else None

    return list(await asyncio.gather(*(one(index, task) for index, task in tasks)))


def evaluate(model: Path, tasks: int, record: Path) -> dict[str, Any]:
    """Outcomes of ``model`` on the first ``tasks`` test tasks, resumed from and saved to ``record``."""
    done = json.loads(record.read_text()) if record.is_file() else {"outcomes": {}, "cpu_s": 0.0, "wall_s": 0.0}
    ids = EnvRef.parse(*ENV, split="test").task_ids()[:tasks]
    missing = [(index, task) for index, task in enumerate(ids) if str(index) not in done["outcomes"]]
    if missing:
        wall, cpu = time.perf_counter(), time.process_time()
        outcomes = asyncio.run(_play(model, missing, max(HORIZONS)))
        done["outcomes"] |= {str(index): turn for (index, _), turn in zip(missing, outcomes, strict=True)}
        done["cpu_s"] += time.process_time() - cpu
        done["wall_s"] += time.perf_counter() - wall
        done["played"] = done.get("played", 0) + len(missing)
        record.write_text(json.dumps(done, indent=1) + "\n")
    return done | {"outcomes": [done["outcomes"][str(index)] for index in range(len(ids))]}


def compare(base: list[int | None], trained: list[int | None]) -> dict[str, Any]:
    """Success at each horizon of both, the paired 95% interval of the gain and the tasks up and down.

    Example:
        >>> compare([3, None, None, 5], [3, 3, 4, None])["T4"]["up"]
        2
    """
    result = {}
    for horizon in HORIZONS:
        before = [float(turn is not None and turn <= horizon) for turn in base]
        after = [float(turn is not None and turn <= horizon) for turn in trained]
        low, high = paired_ci(after, before, confidence=0.95)
        result[f"T{horizon}"] = {
            "sft": sum(before) / len(before), "rl": sum(after) / len(after),
            "gain": (sum(after) - sum(before)) / len(after), "ci95": [low, high],
            "up": sum(a > b for a, b in zip(after, before, strict=True)), "down": sum(a < b for a, b in zip(after, before, strict=True)),
        }  # fmt: skip
    return result


def learning_curve(run: Path) -> list[dict[str, float]]:
    """Per RL step: training success, entropy and seconds of the run in ``run``."""
    rows = [json.loads(line) for line in (run / "rl" / "metrics.jsonl").read_text().splitlines()]
    keys = ("step", "success", "entropy", "signal_groups", "elapsed_s")
    return [{key: round(row[key], 4) for key in keys} | {"cpu_s": round(row["rollout_cpu_s"] + row["update_cpu_s"], 2)}
            for row in rows]  # fmt: skip


def _rows(result: dict[str, Any]) -> list[list[str]]:
    at = result["held_out"][f"T{result['budget']}"]
    low, high = at["ci95"]
    return [
        [
            f"Scoring policy sanity gate: held-out greedy success at T={result['budget']}, RL over its SFT base "
            f"(SmolLM2-135M, Coin Collector level 3, {result['tasks']} tasks, {result['rl_episodes']} RL episodes)",
            f"**{at['gain']:+.3f}** ({at['sft']:.3f} -> {at['rl']:.3f}), paired 95% [{low:+.3f}, {high:+.3f}], "
            f"{at['up']} tasks up, {at['down']} down; RL {result['rl_cpu_s']:.0f} s CPU",
            "interval above 0",
            "`python benchmarks/scoring_gate.py`",
        ]
    ]


def _run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    sft_run = Path(args.sft) if args.sft else work / "sft"
    if not args.sft:
        sft_summary = _train(_configs(args, None)[0], sft_run)
    else:
        sft_summary = json.loads((sft_run / "summary.json").read_text())
    rl_run = Path(args.rl) if args.rl else work / "rl"
    if not args.rl:
        rl_summary = _train(_configs(args, sft_run / "final")[1], rl_run)
    else:
        rl_summary = json.loads((rl_run / "summary.json").read_text())
    curve = learning_curve(rl_run)
    evaluations = {name: evaluate(run / "final", args.tasks, work / f"eval-{name}.json")
                   for name, run in (("sft", sft_run), ("rl", rl_run))}  # fmt: skip
    rl_config = json.loads((rl_run / "run.json").read_text())
    return {
        "env": " ".join(ENV), "budget": rl_config["budget"], "tasks": args.tasks, "seed": rl_config["seed"],
        "sft_config": json.loads((sft_run / "run.json").read_text()), "rl_config": rl_config,
        "sft_summary": sft_summary, "rl_summary": rl_summary, "rl_episodes": rl_summary["rl"]["episodes"],
        "rl_cpu_s": sum(row["cpu_s"] for row in curve), "rl_wall_s": rl_summary["rl"]["elapsed_s"],
        "learning_curve": curve,
        "held_out": compare(evaluations["sft"]["outcomes"], evaluations["rl"]["outcomes"]),
        "evaluation": {name: {key: value for key, value in record.items()} for name, record in evaluations.items()},
        "load": list(os.getloadavg()),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", help="keep the runs and outcomes here (resumable; default: a temporary dir)")
    parser.add_argument("--sft", help="a finished SFT run to start from (skips SFT)")
    parser.add_argument("--rl", help="a finished RL run to evaluate (skips RL)")
    parser.add_argument("--tasks", type=int, default=200, help="held-out tasks evaluated (the test split's first)")
    parser.add_argument("--sft-steps", type=int, default=20)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--episodes", type=int, default=32, help="episodes per RL step")
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--train-tasks", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.sft_steps, args.steps, args.episodes, args.group, args.train_tasks = 2, 2, 1, 4, 2, 2
    recording = _harness.start("scoring_gate", args.smoke)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(args.work or temporary)
        work.mkdir(parents=True, exist_ok=True)
        result = _run(args, work)
    print(json.dumps({k: v for k, v in result.items() if k in ("held_out", "rl_cpu_s", "rl_wall_s")}, indent=2))
    recording.finish(result, _rows(result))


if __name__ == "__main__":
    main()
