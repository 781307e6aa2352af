"""Peak resident memory of SFT and GRPO for the training's base models on CPU: the tiny model and SmolLM2-135M.

Each measurement runs in its own process (``--child``: load the base, train, exit) and reports that
process's peak resident set size (``ru_maxrss`` of the finished child, from ``os.wait4``) beside the
estimate :func:`agentgym_budget.train.memory.estimate_peak_bytes` makes before training starts, so the
estimate's calibration can be read off the results:

* SFT: ``run_sft`` for ``--sft-steps`` steps of ``batch`` conversations that all reach ``max_length``
  tokens (a Coin Collector level 3 expert conversation whose tool answers are repeated until
  truncation: every batch is exactly ``batch x max_length`` tokens, the worst case a setting allows);
* GRPO: ``run_grpo`` (KL to a reference model, TRL's rollouts, one optimiser step) on Coin Collector
  level 3 at budget ``budget`` with ``episodes`` rollouts a step (groups of 2) and ``tokens_per_turn``;
  the longest completion TRL logged (``completions/max_length``) is recorded beside the bound the
  estimate assumes (``tokens_per_turn x (budget + 1)``).

Results go to ``benchmarks/results/train_memory.json``; ``--smoke`` measures one tiny SFT and one tiny
GRPO configuration at toy sizes.

Usage::

    python benchmarks/train_memory.py [--models tiny,smollm2] [--sft-steps 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

FULL = {
    "tiny": [("sft", 8, 2048), ("sft", 4, 1024), ("grpo", 8, 160), ("grpo", 4, 64)],
    "smollm2": [("sft", 2, 512), ("sft", 4, 1024), ("grpo", 4, 64), ("grpo", 4, 160)],
}
"""Per base: ``(phase, batch or episodes a step, max_length or tokens per turn)``."""
SMOKE = {"tiny": [("sft", 1, 768), ("grpo", 2, 16)]}
BUDGET = 3


def _base(name: str, config: Any, directory: Path) -> tuple[Any, Any]:
    from agentgym_budget.agents.hf_model import load_causal_lm

    if name == "smollm2":
        from agentgym_budget.agents.pretrained import resolve_model

        return load_causal_lm(resolve_model("smollm2-135m"))
    from agentgym_budget.chat.format import ChatFormat
    from agentgym_budget.integrations.trl import expert_conversations
    from agentgym_budget.train.base_model import TinyModelSpec, build_base_model, save_model

    chat_format = ChatFormat(env=config.ref.label)
    model, tokenizer = build_base_model(
        expert_conversations(config, range(4)), TinyModelSpec(), chat_format=chat_format
    )
    return load_causal_lm(save_model(model, tokenizer, directory / "tiny", chat_format))


def _long_conversations(config: Any, count: int, length: int) -> list[list[dict[str, Any]]]:
    """Expert conversations whose tool answers repeat until each is longer than ``length`` tokens of any tokenizer
    (every token of a text is at least one character)."""
    from agentgym_budget.integrations.trl import expert_conversations

    conversations = []
    for conversation in expert_conversations(config, range(count)):
        answers = [m for m in conversation if m["role"] == "tool"]
        for message in answers:
            message["content"] = (message["content"] + " ") * (1 + length // max(1, len(message["content"])))
        conversations.append(conversation)
    return conversations


def child(name: str, phase: str, batch: int, size: int, steps: int) -> dict[str, Any]:
    """One measurement, in this process: load ``name``, train ``phase``; the sizes and TRL's logged lengths."""
    import torch

    from agentgym_budget.integrations.session_config import SessionConfig
    from agentgym_budget.train.grpo import GRPOSettings, run_grpo
    from agentgym_budget.train.sft import SFTSettings, run_sft

    torch.set_num_threads(1)
    config = SessionConfig("TextWorld-CoinCollector-v0", env_kwargs="level=3", max_turns=BUDGET, split="train")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        model, tokenizer = _base(name, config, Path(tmp))
        loaded = time.perf_counter() - began
        model.train()
        out = Path(tmp) / "run"
        if phase == "sft":
            settings = SFTSettings(steps=steps, batch_size=batch, max_length=size, learning_rate=1e-5, save_steps=10**6)
            run_sft(
                model, tokenizer, _long_conversations(config, batch * steps, size), settings, out=out, progress=False
            )
        else:
            settings = GRPOSettings(
                steps=1, episodes_per_step=batch, num_generations=2, tokens_per_turn=size, learning_rate=1e-6
            )
            run_grpo(model, tokenizer, config, settings, tasks=range(batch), out=out, progress=False)
        logged = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    lengths = [r["completions/max_length"] for r in logged if "completions/max_length" in r]
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab": model.config.vocab_size,
        "hidden": model.config.hidden_size,
        "layers": model.config.num_hidden_layers,
        "heads": model.config.num_attention_heads,
        "load_s": round(loaded, 1),
        "train_s": round(time.perf_counter() - began - loaded, 1),
        "completion_max_length": max(lengths) if lengths else None,
    }


def measure(name: str, phase: str, batch: int, size: int, steps: int) -> dict[str, Any]:
    """Run :func:`child` in its own process; its result with its peak RSS, CPU and wall seconds, and the estimate."""
    from agentgym_budget.train.memory import ModelSize, estimate_peak_bytes

    began = time.perf_counter()
    command = [sys.executable, __file__, "--child", json.dumps([name, phase, batch, size, steps])]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    output = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"{name} {phase} {batch}x{size} failed (status {status})")
    result = json.loads(output.strip().splitlines()[-1])
    model = ModelSize(*(result[k] for k in ("parameters", "vocab", "hidden", "layers", "heads")))
    length = size if phase == "sft" else size * (BUDGET + 1)
    estimate = estimate_peak_bytes(model, phase, batch, length)
    return {
        "model": name,
        "phase": phase,
        "batch": batch,
        "max_length" if phase == "sft" else "tokens_per_turn": size,
        "steps": steps if phase == "sft" else 1,
        **result,
        "peak_rss_gb": round(usage.ru_maxrss / 2**20, 2),
        "estimate_gb": round(estimate / 2**30, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "wall_s": round(time.perf_counter() - began, 1),
    }


def rows_of(result: dict[str, Any], command: str) -> list[list[str]]:
    """README rows: one per base model."""
    rows = []
    for name in dict.fromkeys(m["model"] for m in result["measurements"]):
        cells = []
        for m in (m for m in result["measurements"] if m["model"] == name):
            what = (
                f"SFT {m['batch']}x{m['max_length']}"
                if m["phase"] == "sft"
                else f"GRPO {m['batch']} rollouts x {m['tokens_per_turn']} tokens/turn"
            )
            cells.append(f"{what}: **{m['peak_rss_gb']:.1f}** GB (est. {m['estimate_gb']:.1f}; {m['wall_s']:.0f} s)")
        rows.append(
            [f"Peak RSS of training, {name} (load {result['load'][0]:.1f})", "; ".join(cells), "", f"`{command}`"]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", default="tiny,smollm2")
    parser.add_argument("--sft-steps", type=int, default=2)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*json.loads(args.child))), flush=True)
        return
    recording = _harness.start("train_memory", args.smoke)
    plan = SMOKE if args.smoke else {name: FULL[name] for name in args.models.split(",")}
    steps = 1 if args.smoke else args.sft_steps
    measurements = []
    for name, sizes in plan.items():
        for phase, batch, size in sizes:
            measurements.append(measure(name, phase, batch, size, steps))
            print(json.dumps(measurements[-1]), flush=True)
    result = {"budget": BUDGET, "load": [recording.load_before[0], os.getloadavg()[0]], "measurements": measurements}
    command = " ".join(["python benchmarks/train_memory.py", *sys.argv[1:]])
    recording.finish(result, rows_of(result, command))


if __name__ == "__main__":
    main()
