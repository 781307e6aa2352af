"""Run a small ``fixed`` training in this process, optionally dying (``os._exit``) right after one checkpoint.

``python -m tests.resume_worker OUT VARIANT [PHASE STEP]``: VARIANT is ``turn`` (TRL's rollouts, turn-level
credit) or ``dynamic`` (the package's cached rollouts with dynamic sampling, episode credit); PHASE is ``sft``
or ``rl``; the process exits with status 9 as soon as that phase's ``checkpoint-STEP`` is written, as a kill
would leave it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from tests.train_support import tiny_config

KILLED = 9


VARIANTS = {
    "turn": {"credit": "turn", "gamma": 0.9},
    "dynamic": {"dynamic_sampling": True, "resample_rounds": 2},
}
"""GRPO settings of each variant over the tiny defaults."""


def config(variant: str = "turn"):
    """SFT 12 steps (checkpoints every 5), GRPO 4 steps (every 2), with the ``variant``'s GRPO settings."""
    from agentgym_budget.train.sft import SFTSettings

    base = tiny_config("fixed", train_tasks=5)
    return replace(
        base,
        sft=SFTSettings(steps=12, batch_size=2, learning_rate=3e-3, save_steps=5),
        grpo=replace(base.grpo, steps=4, save_steps=2, **VARIANTS[variant]),
    )


def main(argv: list[str]) -> None:
    import torch
    from transformers import TrainerCallback

    from agentgym_budget.train import recipe

    torch.set_num_threads(1)
    out, variant, kill = argv[0], argv[1], argv[2:]

    class Kill(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if kill and os.sep + kill[0] + os.sep in args.output_dir and state.global_step == int(kill[1]):
                os._exit(KILLED)

    recipe._plot_on_save = lambda out, plots: [Kill()]
    recipe.run_training(config(variant), out, progress=False, plots=False)


if __name__ == "__main__":
    main(sys.argv[1:])
